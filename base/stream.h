/* base/stream.h — bidi gRPC streams on the loop thread (the worker's
 * control, data and logging planes as a client, the relay's as a server),
 * on a fnw_rpc context (base/rpc.h).
 *
 * One op of each kind in flight per call, so sends are chained (the next
 * starts when the previous one completes); RECV_STATUS is posted up front;
 * a stream is freed only after every one of its tags came back.
 *
 * Ownership: a stream owns the slices queued on it; fnw_stream_free()
 * hands the stream back, and the memory goes once its last tag returns.
 */
#ifndef FNW_STREAM_H
#define FNW_STREAM_H

#include <grpc/grpc.h>
#include <stddef.h>

#include "base/rpc.h"

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
fnw_stream *fnw_stream_start(fnw_rpc *rpc, grpc_channel *ch, const char *method, const fnw_stream_handler *h,
                             int wait_for_ready);
/* The server side of a bidi call a server accepted (base/server.h): call is
 * taken (its completions must arrive on rpc's queue). close_send ends it with
 * status OK; a client that half-closes gets that too; on_closed reports OK,
 * or CANCELLED when the client went away or the call was cancelled. NULL
 * when out of memory (the call is cancelled). */
fnw_stream *fnw_stream_accept(fnw_rpc *rpc, grpc_call *call, const fnw_stream_handler *h);
/* Queues msg (ownership taken). done, if given, runs when it was written
 * (ok = 1) or could not be (ok = 0). */
void fnw_stream_send(fnw_stream *s, grpc_slice msg, fnw_sent_cb done, void *arg);
/* The same for a message made of n slices (all taken). */
void fnw_stream_send_slices(fnw_stream *s, grpc_slice *slices, size_t n, fnw_sent_cb done, void *arg);
int fnw_stream_congested(const fnw_stream *s); /* queued >= high-water */
/* Messages queued and not yet written (the one being written included). */
size_t fnw_stream_send_queued(const fnw_stream *s);
/* While paused no RECV_MESSAGE is posted: HTTP/2 flow control then slows
 * the server down. */
void fnw_stream_pause_recv(fnw_stream *s, int paused);
/* Half-close once the queued messages are written. */
void fnw_stream_close_send(fnw_stream *s);
void fnw_stream_cancel(fnw_stream *s);
/* The owner is done with s: no more callbacks; freed when its tags return. */
void fnw_stream_free(fnw_stream *s);

#endif
