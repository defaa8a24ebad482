/* base/server.h — a gRPC server on the loop: it accepts calls on the loop's
 * completion-queue thread (base/pump.h) and hands each to its owner on the
 * loop thread (base/handoff.h), which answers a unary call or turns the
 * call into a bidi stream (fnw_stream_accept, base/stream.h).
 *
 * The server knows no service: it gives the owner the method and the
 * client's metadata, and the owner decides. One call is requested from gRPC
 * at a time; when it arrives the next is requested. A unary call reads its
 * one message (at most max_message bytes: gRPC refuses a larger one),
 * then the owner answers it once with fnw_server_answer; the call is freed
 * when that batch is back. Loop thread only.
 */
#ifndef FNW_SERVER_H
#define FNW_SERVER_H

#include <ev.h>
#include <grpc/grpc.h>
#include <stddef.h>

#include "base/stream.h"

typedef struct fnw_server fnw_server;
typedef struct fnw_server_call fnw_server_call;

typedef struct fnw_server_events {
    void *user;
    /* A call arrived: answer it (fnw_server_read, then fnw_server_answer),
     * take it as a stream (fnw_server_take_stream) or refuse it
     * (fnw_server_answer with an error status), exactly once. */
    void (*on_call)(void *user, fnw_server_call *call);
} fnw_server_events;

/* Listens on addr ("127.0.0.1:0" picks a free port); *port is the port bound.
 * max_message caps every message a client sends. NULL with why (cap bytes)
 * set when the address cannot be bound. */
fnw_server *fnw_server_new(struct ev_loop *loop, const char *addr, size_t max_message,
                           const fnw_server_events *ev, int *port, char *why, size_t cap);
/* Stops accepting, cancels every call and waits (running the loop) until
 * gRPC has returned them all; streams taken from it must have been freed
 * first or be freed by their on_closed. */
void fnw_server_free(fnw_server *s);

/* The call's method ("/package.Service/Method"), NUL-terminated. */
const char *fnw_server_method(const fnw_server_call *c);
/* 1 when the client sent metadata key with exactly this value. */
int fnw_server_has_header(const fnw_server_call *c, const char *key, const char *value);

/* Reads the unary call's one request; cb runs on the loop with its bytes
 * (borrowed; empty when the client sent none), once. ok 0: the client went
 * away (the call is freed then; do not answer). */
typedef void (*fnw_server_read_cb)(void *user, fnw_server_call *c, int ok, grpc_slice request);
void fnw_server_read(fnw_server_call *c, fnw_server_read_cb cb, void *user);
/* Answers the call (response taken; ignored unless status is OK) and frees
 * it once gRPC is done with it. */
void fnw_server_answer(fnw_server_call *c, grpc_status_code status, const char *details, grpc_slice response);
/* The call becomes a server-side bidi stream on rpc (whose queue must be the
 * server's: the loop's pump); the call record is freed. NULL when out of
 * memory (the call is cancelled). */
fnw_stream *fnw_server_take_stream(fnw_server_call *c, fnw_rpc *rpc, const fnw_stream_handler *h);

#endif
