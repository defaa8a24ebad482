/* pool/pool_flags.h — the command line of `fnworker pool`. */
#ifndef FNW_POOL_FLAGS_H
#define FNW_POOL_FLAGS_H

#include "codecs/error.h"
#include "pool/worker_args.h"

typedef struct fnw_pool_flags {
    const char *listen;          /* the launcher protocol; NULL: off */
    const char *grpc_listen;     /* BeamFnExternalWorkerPool; NULL: off */
    const char *http_listen;     /* /metrics, /healthz, /debug/state; NULL: off */
    const char *worker_bin;      /* NULL: this binary */
    unsigned max_workers;        /* default 16 */
    double grace_period_s;       /* default 25 */
    double start_timeout_s;      /* a worker not connected by then is stopped; default 30, 0 off */
    const char *token_file;      /* --token-file; NULL: FNW_POOL_TOKEN_FILE / FNW_POOL_TOKEN */
    fnw_worker_args_allow allow; /* --allow-worker-flag, repeatable */
    int help;
} fnw_pool_flags;

/* argv[0] is "pool". Fails naming the flag on a malformed value, an unknown
 * flag, or when neither --listen nor --grpc-listen is given. */
int fnw_pool_flags_parse(fnw_pool_flags *f, int argc, char **argv, fnw_error *err);
void fnw_pool_flags_usage(const char *prog);

#endif
