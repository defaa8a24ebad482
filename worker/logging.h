/* worker/logging.h — the worker's log: every entry goes to stderr (which the
 * launcher script tees into Flink's boot log) and, once the Logging stream
 * is open, to the runner as LogEntry batches, where the TaskManager log
 * shows them. Entries are queued (bounded; overflow is counted and
 * reported, never blocks) and sent at most every few milliseconds.
 *
 * Loop thread only.
 */
#ifndef FNW_LOGGING_H
#define FNW_LOGGING_H

#include <ev.h>
#include <stddef.h>

#include "worker/log_level.h"
#include "worker/rpc.h"

typedef struct fnw_log_item fnw_log_item;

typedef struct fnw_logger {
    struct ev_loop *loop;
    fnw_level level;            /* entries below it are dropped; may change at any time */
    fnw_rpc *rpc;
    grpc_channel *channel;      /* not owned */
    fnw_stream *stream;
    fnw_log_item *head, *tail;
    size_t queued;
    size_t dropped;
    ev_timer flush_timer;
    ev_timer reopen_timer;
    int stopping;
    int flushing;
} fnw_logger;

void fnw_log_init(fnw_logger *lg, struct ev_loop *loop, fnw_level level);
/* Starts sending to the runner's Logging service over ch. */
void fnw_log_connect(fnw_logger *lg, fnw_rpc *rpc, grpc_channel *ch);
/* Logs one entry; ERROR entries are sent at once, so a failure's message
 * reaches the runner before the response that reports it. With lg NULL
 * (a module used without a worker) the entry goes to stderr only, from
 * INFO up. */
void fnw_log_at(fnw_logger *lg, const char *file, int line, fnw_level level,
                const char *instruction_id, const char *transform_id, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
#define fnw_log(lg, level, iid, tid, ...) \
    fnw_log_at((lg), __FILE__, __LINE__, (level), (iid), (tid), __VA_ARGS__)
/* Sends what is queued and half-closes the stream. */
void fnw_log_shutdown(fnw_logger *lg);
void fnw_log_free(fnw_logger *lg);

#define fnw_info(lg, ...) fnw_log((lg), FNW_LOG_INFO, NULL, NULL, __VA_ARGS__)
#define fnw_warn(lg, ...) fnw_log((lg), FNW_LOG_WARN, NULL, NULL, __VA_ARGS__)
#define fnw_err(lg, ...) fnw_log((lg), FNW_LOG_ERROR, NULL, NULL, __VA_ARGS__)
#define fnw_debug(lg, ...) fnw_log((lg), FNW_LOG_DEBUG, NULL, NULL, __VA_ARGS__)

#endif
