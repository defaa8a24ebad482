/* worker/worker.h — the worker process once its flags are parsed: it sets
 * up its units (boot, control, the descriptor cache and its processor
 * pools, the data plane, the logger), dispatches the instructions the
 * runner sends, and stops in order.
 *
 * Boot, as Flink's ProcessEnvironment expects: GetProvisionInfo with the
 * worker_id header (retried until --connect-timeout), then the Control
 * stream, then Logging. Exit codes: 0 when the runner closes the Control
 * stream or on SIGTERM/SIGINT; 1 when an endpoint cannot be reached in time
 * or the Control stream breaks. SIGQUIT logs every bundle in progress, its
 * queues and calls, and the worker carries on; each bundle is watched for
 * --lull-seconds without progress (worker/bundle.h).
 */
#ifndef FNW_WORKER_H
#define FNW_WORKER_H

#include "runtime/registry.h"
#include "worker/flags.h"

/* The release, from the top-level VERSION file: the Makefile passes
 * -DFNW_VERSION (fnworker --version prints it; tests/shell/test_version.sh). */
#ifndef FNW_VERSION
#error "FNW_VERSION is not defined: build with make, which passes -DFNW_VERSION from the VERSION file"
#endif

/* Runs until the worker stops with the operations of ops (copied);
 * returns the process exit code. */
int fnw_worker_run(const fnw_flags *flags, const fnw_registry *ops);

#endif
