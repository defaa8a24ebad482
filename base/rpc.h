/* base/rpc.h — the gRPC client plumbing the planes are built on: channels,
 * readiness waits, bidi streams and unary calls, all driven from the loop
 * thread, with completions arriving through the mailbox (base/mailbox.h).
 *
 * Rules this module keeps: one op of each kind in flight per call, so sends
 * are chained (the next starts when the previous one completes);
 * RECV_STATUS is posted up front; a call is freed only after every one of
 * its tags came back. Every call carries the worker_id header.
 *
 * Ownership: a stream owns the slices queued on it; fnw_stream_free()
 * hands the stream back, and the memory goes once its last tag returns.
 *
 * Dependencies run one way: the logger (worker/log.h) sends over these
 * streams, and this module reports its own failures through the
 * fnw_rpc_log_sink given to fnw_rpc_init, never by calling the logger.
 */
#ifndef FNW_RPC_H
#define FNW_RPC_H

#include <grpc/grpc.h>
#include <stddef.h>

#include "base/mailbox.h"

struct unary_call;

/* Where this module reports a failure it cannot hand to a caller (a batch
 * gRPC refused to start). error NULL: the message goes to stderr. */
typedef struct fnw_rpc_log_sink {
    void *user;
    void (*error)(void *user, const char *message);
} fnw_rpc_log_sink;

/* Embedded by its owner; the fields are private to rpc.c (use the
 * functions below). */
typedef struct fnw_rpc {
    grpc_completion_queue *cq;
    const char *worker_id;
    fnw_rpc_log_sink log;
    int live_calls;           /* calls whose tags are not all back */
    struct unary_call *unary; /* unary calls in flight (for cancel_all) */
} fnw_rpc;

/* Every call is created on cq (drained by base/pump.h) and carries the
 * worker_id header; worker_id is borrowed for rpc's lifetime. log may be
 * NULL (stderr). */
void fnw_rpc_init(fnw_rpc *rpc, grpc_completion_queue *cq, const char *worker_id,
                  const fnw_rpc_log_sink *log);
/* Calls (streams and unary) whose completions are not all back yet: the
 * completion queue may be shut down once this is 0. */
int fnw_rpc_live_calls(const fnw_rpc *rpc);
/* Cancels every unary call in flight (their callbacks still run). */
void fnw_rpc_cancel_unary(fnw_rpc *rpc);

grpc_channel *fnw_rpc_channel(const char *url);
/* The channel's connectivity state in words, for a message about a channel
 * that did not become READY ("connecting fails (refused, unreachable or
 * unknown host)", "still connecting", ...). */
const char *fnw_rpc_channel_state(grpc_channel *ch);

/* ---- waiting for a channel to be READY, bounded -------------------------- */
typedef void (*fnw_ready_cb)(void *user, int ready);
typedef struct fnw_ready_wait fnw_ready_wait;

/* Calls cb(user, 1) once ch is READY, or cb(user, 0) at the deadline. The
 * wait frees itself after its callback; fnw_ready_cancel() before that
 * means no callback (the memory goes when gRPC returns the watch, at the
 * latest when the channel is destroyed). */
fnw_ready_wait *fnw_rpc_wait_ready(fnw_rpc *rpc, grpc_channel *ch, double timeout_s,
                                   fnw_ready_cb cb, void *user);
void fnw_ready_cancel(fnw_ready_wait *w);

/* ---- bidi streams ---------------------------------------------------------- */
typedef struct fnw_stream fnw_stream;
typedef void (*fnw_sent_cb)(void *arg, int ok);

typedef struct fnw_stream_handler {
    void *user;
    /* A message arrived; msg is borrowed (grpc_slice_ref it to keep it). */
    void (*on_message)(void *user, grpc_slice msg);
    /* The send queue went from >= high-water back below low-water. */
    void (*on_writable)(void *user);
    /* The call ended (status from the server, or a transport failure). */
    void (*on_closed)(void *user, grpc_status_code code, const char *details);
} fnw_stream_handler;

/* wait_for_ready: the call waits for the channel to connect instead of
 * failing at once (pair it with fnw_rpc_wait_ready to bound the wait). */
fnw_stream *fnw_stream_start(fnw_rpc *rpc, grpc_channel *ch, const char *method,
                            const fnw_stream_handler *h, int wait_for_ready);
/* Queues msg (ownership taken). done, if given, runs when it was written
 * (ok = 1) or could not be (ok = 0). */
void fnw_stream_send(fnw_stream *s, grpc_slice msg, fnw_sent_cb done, void *arg);
/* The same for a message made of n slices (all taken). */
void fnw_stream_send_slices(fnw_stream *s, grpc_slice *slices, size_t n, fnw_sent_cb done, void *arg);
int fnw_stream_congested(const fnw_stream *s);   /* queued >= high-water */
/* While paused no RECV_MESSAGE is posted: HTTP/2 flow control then slows
 * the server down. */
void fnw_stream_pause_recv(fnw_stream *s, int paused);
/* Half-close once the queued messages are written. */
void fnw_stream_close_send(fnw_stream *s);
void fnw_stream_cancel(fnw_stream *s);
/* The owner is done with s: no more callbacks; freed when its tags return. */
void fnw_stream_free(fnw_stream *s);

/* ---- unary calls ----------------------------------------------------------- */
/* response is borrowed for the callback; empty on failure. */
typedef void (*fnw_unary_cb)(void *user, grpc_status_code code, const char *details,
                             grpc_slice response);
/* wait_for_ready: the call waits (up to timeout_s) for the channel to connect
 * instead of failing at once while the server is not up yet. Takes request.
 * 0: cb runs exactly once, later; -1: the call could not start and cb is
 * never called. */
int fnw_unary_call(fnw_rpc *rpc, grpc_channel *ch, const char *method, grpc_slice request,
                   double timeout_s, int wait_for_ready, fnw_unary_cb cb, void *user);

#endif
