/* worker/flags.h — the command line, as Beam's process environment passes it
 * (--id, --provision_endpoint, --semi_persist_dir), the older five-flag form
 * (--logging_endpoint, --artifact_endpoint, --control_endpoint), and
 * fnworker's own tuning flags. Unknown --flags are kept so the caller can
 * warn about them, as beam_boot does (it ignores what it does not know).
 */
#ifndef FNW_FLAGS_H
#define FNW_FLAGS_H

#include <stddef.h>

#include "codecs/error.h"
#include "worker/log_level.h"

#define FNW_FLAGS_MAX_UNKNOWN 16

typedef struct fnw_flags {
    const char *id;
    const char *provision_endpoint;
    const char *semi_persist_dir;
    const char *logging_endpoint;
    const char *artifact_endpoint;
    const char *control_endpoint;
    const char *log_level;    /* as given; NULL when not given */
    fnw_level level;          /* --log-level parsed; info when not given */
    double connect_timeout_s; /* default 60 */
    size_t flush_bytes;       /* default 1,000,000 */
    double flush_ms;          /* default 5 */
    double early_data_ttl_s;  /* default 30: data before its process_bundle waits this long */
    const char *plugins_dir;  /* --plugins-dir; NULL when not given */
    size_t blocking_threads;  /* --blocking-threads, default 4 */
    double lull_seconds;      /* default 300: WARN about a bundle idle this long; 0 = off */
    int relay_fd;             /* --relay-fd: pool mode's socket for starting the Python worker; -1 */
    int relay;                /* --relay / FNW_RELAY: Python functions run in PyFlink's worker (default 1) */
    int help, version;
    const char *unknown[FNW_FLAGS_MAX_UNKNOWN];
    char control_buf[512], logging_buf[512]; /* urls read from the environment */
    size_t n_unknown;
} fnw_flags;

/* Parses argv (argv[0] skipped). Fails on a malformed value (including a
 * --log-level that names no level) or a missing required flag, naming it;
 * when a required flag is missing and unknown flags were given, the message
 * names the first unknown flag before it (a misspelt --id is the likely
 * cause). Falls back to WORKER_ID and CONTROL/LOGGING_API_SERVICE_DESCRIPTOR
 * from the environment. */
int fnw_flags_parse(fnw_flags *f, int argc, char **argv, fnw_error *err);
void fnw_flags_usage(const char *prog);

#endif
