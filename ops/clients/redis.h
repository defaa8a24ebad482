/* ops/clients/redis.h — a pool of Redis connections on the worker's libev
 * loop, for operations that look keys up while thousands of calls are in
 * flight.
 *
 * How it works. The pool keeps `connections` hiredis asynchronous contexts
 * attached to the loop (hiredis's libev adapter: one ev_io pair each). A
 * command goes to the next usable connection (round robin, connected ones
 * first); hiredis appends it to that connection's output buffer and writes
 * everything buffered when the socket is writable, so commands sent in one
 * loop iteration leave in one write (pipelining). Redis answers each
 * connection's commands in order, and hiredis matches replies to commands
 * by that order.
 *
 * Connecting. Each connection connects without blocking (the host should be
 * an IP address: hiredis resolves a name with a blocking lookup), then sends
 * AUTH (when password_env is set) and SELECT (when db > 0) before any
 * command, so commands sent while it connects are queued behind them. A
 * connection that fails to connect, fails AUTH or SELECT, or breaks later is
 * reconnected after a delay that doubles from reconnect_min_ms up to
 * reconnect_max_ms with each failure in a row, and starts again at
 * reconnect_min_ms once a connection is ready.
 *
 * Failures. When a connection breaks, every command pending on it gets its
 * callback with an error (the command may or may not have run; the caller
 * decides whether to retry). While every connection is waiting to reconnect,
 * fnw_redis_send fails at once, without a callback.
 *
 * The password is read from the environment variable the caller names, once
 * at fnw_redis_new; it is never put into a message or log line.
 *
 * Threading: everything runs on the loop's thread; nothing is locked.
 */
#ifndef FNW_REDIS_H
#define FNW_REDIS_H

#include <stddef.h>
#include <stdint.h>

#include <ev.h>
#include <hiredis/hiredis.h>

#include "codecs/error.h"

typedef struct fnw_redis fnw_redis;         /* the pool */
typedef struct fnw_redis_cmd fnw_redis_cmd; /* one command awaiting its reply */

typedef struct fnw_redis_config {
    const char *host;         /* IP address; NULL = "127.0.0.1" */
    int port;                 /* 0 = 6379 */
    int connections;          /* pool size; 0 = 1 */
    const char *password_env; /* name of the variable holding the password; NULL = no AUTH */
    const char *username;     /* ACL user for AUTH; NULL = the default user */
    int db;                   /* SELECT this database at connect when > 0 */
    int64_t reconnect_min_ms; /* first reconnect delay; 0 = 100 */
    int64_t reconnect_max_ms; /* the delay's cap; 0 = 5000 */
    size_t max_reply_bytes;   /* largest reply; 0 = FNW_REDIS_DEFAULT_MAX_REPLY */
} fnw_redis_config;

/* Replies are bounded: a bulk string or array whose header announces more
 * than max_reply_bytes, a reply whose values add up to more, or unparsed
 * input growing past it, fails the connection before the bytes are
 * buffered: every command pending on it gets the error (naming the limit),
 * and the connection reconnects. */
#define FNW_REDIS_DEFAULT_MAX_REPLY ((size_t)4 << 20)

/* The reply (hiredis's tree: type, str/len, integer, element[]), valid
 * during the callback only. A Redis error reply (WRONGTYPE, ...) is a reply
 * of type REDIS_REPLY_ERROR with err NULL; err is set, and reply NULL, only
 * when there is no reply: the connection failed or broke. */
typedef void (*fnw_redis_reply_fn)(void *user, const redisReply *reply, const fnw_error *err);

/* Creates the pool and starts connecting every connection (returns before
 * any is connected). Returns NULL and fills err for a bad configuration or
 * an unset password variable. */
fnw_redis *fnw_redis_new(struct ev_loop *loop, const fnw_redis_config *cfg, fnw_error *err);

/* Closes every connection and frees the pool; callbacks of commands still
 * pending do not run. Not from inside one of its callbacks. */
void fnw_redis_free(fnw_redis *r);

/* Sends one command: argc arguments, argument i being argvlen[i] bytes at
 * argv[i] (binary safe; copied before returning). On success returns 0 and,
 * when out is not NULL, a handle to cancel it with (valid until its callback
 * is called or it is cancelled). Returns -1 and fills err, without calling
 * fn, when no connection can take it now. */
int fnw_redis_send(fnw_redis *r, int argc, const char *const *argv, const size_t *argvlen,
                   fnw_redis_reply_fn fn, void *user, fnw_redis_cmd **out, fnw_error *err);

/* Between fnw_redis_pin and fnw_redis_unpin every fnw_redis_send goes to
 * one connection (the one the next send would have picked), so commands
 * sent together in one loop iteration leave in one write and are answered
 * in order (a batch). When that connection stops taking commands, sends go
 * round robin again. */
void fnw_redis_pin(fnw_redis *r);
void fnw_redis_unpin(fnw_redis *r);

/* The command's callback will not run. Its reply, if it still comes, is
 * swallowed (Redis may still carry the command out). */
void fnw_redis_cancel(fnw_redis_cmd *c);

typedef struct fnw_redis_stats {
    uint64_t connects_started; /* connection attempts, the first ones included */
    uint64_t ready;            /* attempts that got connected, authenticated and selected */
    uint64_t lost;             /* ready connections that broke */
    size_t pending;            /* commands sent and not yet answered (cancelled ones too) */
    int up;                    /* connections ready now */
} fnw_redis_stats;

void fnw_redis_stats_get(const fnw_redis *r, fnw_redis_stats *out);

/* The password the pool authenticates with (NULL without one): text quoted
 * from Redis is masked with it before it leaves the operation. */
const char *fnw_redis_secret(const fnw_redis *r);

/* The delay before reconnect attempt number `failures` (1 after the first
 * failure): min doubled failures-1 times, capped at max (the config's
 * defaults apply for zeros). */
int64_t fnw_redis_backoff_ms(const fnw_redis_config *cfg, unsigned failures);

#endif
