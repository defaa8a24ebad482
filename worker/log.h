/* worker/log.h — the worker's log: every entry goes to stderr (which the
 * launcher script tees into Flink's boot log) and, once the Logging stream
 * is open, to the runner as LogEntry batches, where the TaskManager log
 * shows them. Entries are queued (bounded; overflow is counted and
 * reported, never blocks) and sent at most every few milliseconds.
 *
 * Until fnw_log_start() (or while the stream is down) entries wait in the
 * queue; at most a fixed number wait, the rest are counted as dropped and
 * the count is reported once the stream takes entries again.
 *
 * Loop thread only. The logger uses base/rpc.h for its stream; rpc
 * reports its own failures back through fnw_log_rpc_sink(), a callback
 * fixed at rpc's init, so the two never call each other in a circle. The
 * stream is reached through a fnw_log_transport: gRPC for fnw_log_start,
 * a fake one in tests (fnw_log_start_on).
 */
#ifndef FNW_LOG_H
#define FNW_LOG_H

#include <ev.h>
#include <stddef.h>

#include "worker/log_level.h"
#include "base/stream.h"

typedef struct fnw_log_item fnw_log_item;

/* What the logger needs of its stream; ctx is the transport's own. */
typedef struct fnw_log_transport {
    void *(*start)(void *ctx, const fnw_stream_handler *h); /* NULL on failure */
    void (*send)(void *stream, grpc_slice msg);             /* takes msg */
    void (*close_send)(void *stream);
    void (*free)(void *stream);
} fnw_log_transport;

/* The most entries that wait to be sent; more are dropped and counted. */
#define FNW_LOG_QUEUE_MAX 10000

/* Embedded by its owner; the fields are private to log.c (use the
 * functions below). */
typedef struct fnw_logger {
    struct ev_loop *loop;
    fnw_level level;       /* entries below it are dropped; may change at any time */
    fnw_rpc *rpc;          /* the gRPC transport's */
    grpc_channel *channel; /* not owned */
    const fnw_log_transport *t;
    void *t_ctx;
    void *stream;
    fnw_log_item *head, *tail;
    size_t queued;
    size_t dropped;
    ev_timer flush_timer;
    ev_timer reopen_timer;
    int stopping;
    int flushing;
} fnw_logger;

void fnw_log_init(fnw_logger *lg, struct ev_loop *loop, fnw_level level);
/* Starts sending to the runner's Logging service over ch (reopening the
 * stream half a second after it closes, until fnw_log_stop). */
void fnw_log_start(fnw_logger *lg, fnw_rpc *rpc, grpc_channel *ch);
/* The same over another transport (t borrowed for the logger's life). */
void fnw_log_start_on(fnw_logger *lg, const fnw_log_transport *t, void *ctx);
fnw_level fnw_log_get_level(const fnw_logger *lg);
/* Entries below level are dropped from now on (not counted as dropped). */
void fnw_log_set_level(fnw_logger *lg, fnw_level level);
/* Entries waiting to be sent. */
size_t fnw_log_queued(const fnw_logger *lg);
/* Entries lost since the last report (queue full or out of memory). */
size_t fnw_log_dropped(const fnw_logger *lg);
/* 1 while the Logging stream is open (after fnw_log_stop: until the runner
 * closes it, or fnw_log_free cancels it). */
int fnw_log_streaming(const fnw_logger *lg);
/* The sink base/rpc.h reports its failures to: ERROR entries of lg. */
fnw_rpc_log_sink fnw_log_rpc_sink(fnw_logger *lg);
/* Logs one entry; ERROR entries are sent at once, so a failure's message
 * reaches the runner before the response that reports it. With lg NULL
 * (a module used without a worker) the entry goes to stderr only, from
 * INFO up. */
void fnw_log_at(fnw_logger *lg, const char *file, int line, fnw_level level, const char *instruction_id,
                const char *transform_id, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
#define fnw_log(lg, level, iid, tid, ...) \
    fnw_log_at((lg), __FILE__, __LINE__, (level), (iid), (tid), __VA_ARGS__)
/* Sends what is queued and half-closes the stream; later entries go to
 * stderr only. */
void fnw_log_stop(fnw_logger *lg);
void fnw_log_free(fnw_logger *lg);

#define fnw_info(lg, ...) fnw_log((lg), FNW_LOG_INFO, NULL, NULL, __VA_ARGS__)
#define fnw_warn(lg, ...) fnw_log((lg), FNW_LOG_WARN, NULL, NULL, __VA_ARGS__)
#define fnw_err(lg, ...) fnw_log((lg), FNW_LOG_ERROR, NULL, NULL, __VA_ARGS__)
#define fnw_debug(lg, ...) fnw_log((lg), FNW_LOG_DEBUG, NULL, NULL, __VA_ARGS__)

#endif
