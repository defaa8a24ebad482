/* base/rpc.h — the gRPC client plumbing every gRPC user on a loop is built
 * on (the worker's planes, the kserve operation): channels, readiness
 * waits and unary calls, all driven from the loop thread, with completions
 * arriving through the loop's hand-off (base/handoff.h) from its
 * completion-queue thread (base/pump.h). Bidi streams are in base/stream.h.
 *
 * Rules this module keeps: RECV_STATUS is posted with the call; a call's
 * record is freed (or kept for the next call) only after its completion
 * came back. Every call carries the context's one header (the worker's
 * worker_id, kserve's authorization), if it has one.
 *
 * Dependencies run one way: the logger (worker/log.h) sends over these
 * calls, and this module reports its own failures through the
 * fnw_rpc_log_sink given to fnw_rpc_init, never by calling the logger.
 */
#ifndef FNW_RPC_H
#define FNW_RPC_H

#include <grpc/grpc.h>
#include <stddef.h>

#include "base/handoff.h"

typedef struct fnw_rpc_unary_call fnw_rpc_unary_call;

/* Where this module reports a failure it cannot hand to a caller (a batch
 * gRPC refused to start). error NULL: the message goes to stderr. */
typedef struct fnw_rpc_log_sink {
    void *user;
    void (*error)(void *user, const char *message);
} fnw_rpc_log_sink;

/* Embedded by its owner; the fields are private to rpc.c and stream.c (use
 * the functions below). */
typedef struct fnw_rpc {
    grpc_completion_queue *cq;
    const char *header, *value; /* the header every call carries (NULL: none) */
    fnw_rpc_log_sink log;
    int live_calls;            /* calls whose completions are not all back */
    fnw_rpc_unary_call *unary; /* unary calls in flight (for cancel_unary, free) */
    fnw_rpc_unary_call *spare; /* finished records kept for the next calls */
    unsigned n_spare;
} fnw_rpc;

/* Every call is created on cq (drained by the loop's pump, base/pump.h)
 * and carries the metadata header: value (both borrowed for rpc's lifetime;
 * header NULL: no metadata). log may be NULL (stderr). */
void fnw_rpc_init(fnw_rpc *rpc, grpc_completion_queue *cq, const char *header, const char *value,
                  const fnw_rpc_log_sink *log);
/* The owner is done with rpc (its streams are freed): every unary call
 * still in flight is cancelled without its callback (its record goes when
 * its completion comes back), the kept records are freed. */
void fnw_rpc_free(fnw_rpc *rpc);
/* Calls (streams and unary) whose completions are not all back yet: the
 * completion queue may be shut down once this is 0. */
int fnw_rpc_live_calls(const fnw_rpc *rpc);
/* Cancels every unary call in flight (their callbacks still run). */
void fnw_rpc_cancel_unary(fnw_rpc *rpc);
/* Reports message through the log sink (for stream.c). */
void fnw_rpc_report(fnw_rpc *rpc, const char *message);
/* Fills md with the context's header (an empty key without one; the caller
 * unrefs md->value when the call is freed) and op with the SEND_INITIAL_METADATA
 * that carries it, flagged wait-for-ready when asked (for rpc.c and stream.c). */
void fnw_rpc_initial_metadata(const fnw_rpc *rpc, grpc_metadata *md, int wait_for_ready, grpc_op *op);

grpc_channel *fnw_rpc_channel(const char *url);
/* The channel's connectivity state in words, for a message about a channel
 * that did not become READY ("connecting fails (refused, unreachable or
 * unknown host)", "still connecting", ...). */
const char *fnw_rpc_channel_state(grpc_channel *ch);

/* ---- waiting for a channel to be READY, bounded -------------------------- */
typedef void (*fnw_ready_cb)(void *user, int ready);
typedef struct fnw_ready_wait fnw_ready_wait;

/* Calls cb(user, 1) once ch is READY, or cb(user, 0) at the deadline. The
 * wait frees itself after its callback; fnw_rpc_ready_cancel() before that
 * means no callback (the memory goes when gRPC returns the watch, at the
 * latest when the channel is destroyed). */
fnw_ready_wait *fnw_rpc_wait_ready(fnw_rpc *rpc, grpc_channel *ch, double timeout_s, fnw_ready_cb cb,
                                   void *user);
void fnw_rpc_ready_cancel(fnw_ready_wait *w);

/* ---- unary calls ----------------------------------------------------------- */
/* response is borrowed for the callback; empty unless code is OK. A call
 * whose completion failed (ok 0) reports UNAVAILABLE. */
typedef void (*fnw_unary_cb)(void *user, grpc_status_code code, const char *details, grpc_slice response);
/* Calls method (a string that outlives the call) on ch with request (taken).
 * timeout_s <= 0: no deadline. wait_for_ready: the call waits (up to its
 * deadline) for the channel to connect instead of failing at once while the
 * server is not up yet. 0: cb runs exactly once, later, on the loop (unless
 * cancelled with fnw_rpc_unary_cancel); *handle (if handle is not NULL) is
 * the call until then. -1: the call could not start and cb is never
 * called. */
int fnw_rpc_unary(fnw_rpc *rpc, grpc_channel *ch, const char *method, grpc_slice request, double timeout_s,
                  int wait_for_ready, fnw_unary_cb cb, void *user, fnw_rpc_unary_call **handle);
/* The caller gives the call up before its callback ran: it is cancelled,
 * its callback never runs, its record goes when the completion comes back. */
void fnw_rpc_unary_cancel(fnw_rpc_unary_call *u);

#endif
