/* pool/launcher.h — the pool's launcher endpoint: accepts the connections of
 * scripts/pyflink-udf-runner.sh, reads each one's request (pool/wire.h),
 * starts its worker, streams the worker's output back and ends with its
 * exit code. A connection that closes stops its worker. Runs on the pool's
 * libev loop. */
#ifndef FNW_POOL_LAUNCHER_H
#define FNW_POOL_LAUNCHER_H

#include <ev.h>

#include "codecs/error.h"
#include "pool/children.h"
#include "pool/pool_token.h"
#include "pool/worker_args.h"

/* A request not complete this long after connecting is dropped. */
#define FNW_LAUNCHER_REQUEST_TIMEOUT_S 10.0
/* Output queued for a slow launcher beyond this pauses the worker's pipes. */
#define FNW_LAUNCHER_OUT_MAX (1u << 20)
/* A connection whose worker ended (or whose request was refused) is
 * dropped when its launcher has not read the last lines this much later. */
#define FNW_LAUNCHER_LINGER_S 10.0
/* Connections still sending their request, at most; one more is answered
 * with an ERROR line and closed (connections with a worker are bounded by
 * --max-workers). */
#define FNW_LAUNCHER_PENDING_MAX 64
/* Out of descriptors (EMFILE, ENFILE, ENOBUFS, ENOMEM at accept): the pool
 * stops accepting for this long instead of retrying at once. */
#define FNW_LAUNCHER_ACCEPT_PAUSE_S 1.0
/* A repeated problem (accept failing, connections refused) is logged at
 * most once per this many seconds, with how often it happened. */
#define FNW_LAUNCHER_LOG_INTERVAL_S 10.0

/* What a request must satisfy; both outlive the launcher. */
typedef struct fnw_launcher_policy {
    const fnw_pool_token *token;        /* the token a request must carry */
    const fnw_worker_args_allow *allow; /* the arg= flags it may carry */
} fnw_launcher_policy;

typedef struct fnw_launcher fnw_launcher;

/* Listens on fd (pool/listen.h); takes ownership of it. */
fnw_launcher *fnw_launcher_new(struct ev_loop *loop, fnw_children *children, int fd,
                               const fnw_launcher_policy *policy);
/* Stops accepting and drops connections that have not started a worker;
 * connections with a running worker carry on. */
void fnw_launcher_stop(fnw_launcher *l);
/* Closes every connection (their workers are stopped) and the listener. */
void fnw_launcher_free(fnw_launcher *l);
unsigned fnw_launcher_connections(const fnw_launcher *l);

#endif
