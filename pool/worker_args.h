/* pool/worker_args.h — which worker flags a start request may carry.
 *
 * A launcher client (anyone who can reach the pool's launcher port) names
 * the worker's extra flags (`arg=` fields, pool/wire.h). The pool passes
 * --id and --provision_endpoint itself, from the request's own fields; of
 * the rest only a short allowlist goes through: the flags Flink's process
 * environment passes (--semi_persist_dir) and the log level. The operator
 * may allow more of fnworker's tuning flags (`fnworker pool
 * --allow-worker-flag`), but never a flag that would let a client choose
 * what the worker loads or where it connects: --plugins-dir, --id,
 * --worker_id, --provision_endpoint, any --*_endpoint and --connect-timeout
 * (a client could hold a slot for as long as it likes), nor --relay-fd and
 * --relay, which the pool sets from the launcher's protocol version. Allowed flags take
 * the form --name=value, so a value can never be read as another flag. */
#ifndef FNW_POOL_WORKER_ARGS_H
#define FNW_POOL_WORKER_ARGS_H

#include <stddef.h>

#include "codecs/error.h"

#define FNW_WORKER_ARGS_EXTRA_MAX 16

typedef struct fnw_worker_args_allow {
    const char *extra[FNW_WORKER_ARGS_EXTRA_MAX]; /* "--name", from the operator */
    size_t n_extra;
} fnw_worker_args_allow;

/* Adds an operator-allowed flag ("--name"); fails naming it when it is one
 * no client may ever set, is not a --flag, or there are too many. */
int fnw_worker_args_allow_add(fnw_worker_args_allow *a, const char *name, fnw_error *err);

/* 0 when every arg may be passed to a worker; else -1 with a message for
 * the launcher naming the first refused arg and why. */
int fnw_worker_args_check(const fnw_worker_args_allow *a, const char *const *args, size_t n, fnw_error *err);

#endif
