/* ops/kserve/kserve_internal.h — the state of one `kserve` operation instance,
 * shared by the files of the operation (internal to them, not an
 * interface). Dependencies run one way, from the top:
 *   kserve_op.c        the operation table, open and close, and the gate:
 *                      calls that come before the open checks have passed
 *                      wait there
 *   kserve_ready.c     the open checks (ServerReady, ModelReady,
 *                      ModelMetadata), reporting through a callback
 *   kserve_call.c      a call: start, completion, cancel
 *   kserve_channels.c  the channels to the model server
 * and each of them uses only this header and the floors below ops/.
 *
 * Threads: none of the operation's own. Every gRPC call (the checks and
 * ModelInfer) is an asynchronous unary call of base/rpc.h on the loop's one
 * completion queue (base/pump.h), whose thread hands each completion to the
 * loop through the loop's hand-off (base/handoff.h); everything here runs on
 * the loop thread. A call given up (cancel, close) is cancelled without its
 * callback: rpc.c frees its record when gRPC returns it.
 */
#ifndef FNW_KSERVE_INTERNAL_H
#define FNW_KSERVE_INTERNAL_H

#include <grpc/grpc.h>
#include <stddef.h>

#include "fnworker.h"
#include "base/handoff.h"
#include "base/rpc.h"
#include "ops/kserve/kserve_config.h"
#include "ops/secrets/secret_mask.h"

#define KSERVE_OP "kserve"
#define KSERVE_MAX_CHANNELS 16
#define KSERVE_DEADLINE_GRACE_MS 1000 /* a ModelInfer's deadline: the spec's timeout plus this */
#define KSERVE_SERVICE "/inference.GRPCInferenceService/"

enum { KSERVE_CHECKING = 0, KSERVE_OPEN, KSERVE_FAILED };

typedef struct kserve_op kserve_op;
/* The open checks' verdict: err NULL when they passed. */
typedef void (*fnw_kserve_ready_cb)(kserve_op *op, const fnw_error *err);

struct kserve_op {
    fnw_kserve_config cfg;
    struct ev_loop *loop;
    int64_t timeout_ms;
    size_t batch_size;
    grpc_channel *channels[KSERVE_MAX_CHANNELS];
    int n_channels;
    unsigned next_channel;
    int grpc_started;
    fnw_rpc rpc; /* on the loop's completion queue */
    int rpc_init;
    fnw_handoff *handoff; /* the loop's: held while anything is in flight */
    size_t in_flight;     /* ModelInfer calls and the check in flight */
    /* the open checks (kserve_ready.c) */
    fnw_rpc_unary_call *check; /* the check in flight */
    int check_step;
    fnw_kserve_ready_cb checked;
    /* the gate (kserve_op.c) */
    int gate; /* KSERVE_CHECKING, _OPEN, _FAILED */
    char gate_error[FNW_ERROR_MAX];
    fnw_call **waiting; /* calls that came before the checks passed */
    size_t n_waiting, cap_waiting;
};

/* Masks the auth header's value (the secret read from auth_header_env) in
 * text quoted from the server (a status's details) before it goes into a
 * message. */
static inline void fnw_kserve_op_mask(const kserve_op *op, char *text)
{
    const char *secret[2] = { op->cfg.auth_header,
                              op->cfg.auth_header ? fnw_secret_mask_credential(op->cfg.auth_header) : NULL };
    fnw_secret_mask_str(text, secret, 2);
}

/* Something is in flight (a gRPC call whose completion the loop must see) /
 * no longer is: the loop's hand-off is held while anything is. */
static inline void fnw_kserve_op_busy(kserve_op *op)
{
    if (op->in_flight++ == 0)
        fnw_handoff_hold(op->handoff);
}

static inline void fnw_kserve_op_idle(kserve_op *op)
{
    if (op->in_flight && --op->in_flight == 0)
        fnw_handoff_release(op->handoff);
}

/* kserve_channels.c */
int fnw_kserve_channels_start(kserve_op *op, fnw_error *err);
void fnw_kserve_channels_stop(kserve_op *op);
/* The next channel, round robin. */
grpc_channel *fnw_kserve_channels_next(kserve_op *op);

/* kserve_ready.c: the server and the model ready, the mapping
 * checked against the model's metadata (when check_metadata); done runs on
 * the loop with the verdict, unless fnw_kserve_ready_stop came first. -1
 * with a message when the first check could not start. */
int fnw_kserve_ready_start(kserve_op *op, fnw_kserve_ready_cb done, fnw_error *err);
void fnw_kserve_ready_stop(kserve_op *op);

/* kserve_call.c */
/* Starts ModelInfer for call (or fails the call). */
void fnw_kserve_call_start(kserve_op *op, fnw_call *call);
/* Gives call up: its gRPC call is cancelled, its answer never looked at. */
void fnw_kserve_call_cancel(kserve_op *op, fnw_call *call);

#endif
