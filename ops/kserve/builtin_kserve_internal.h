/* ops/kserve/builtin_kserve_internal.h — names shared by the files of the
 * `kserve` operation (internal to them, not an interface):
 *   builtin_kserve.c       open and close, the operation table
 *   builtin_kserve_grpc.c  channels, the completion queue and its pump
 *                          thread, unary calls (asynchronous on the loop,
 *                          and the blocking ones open makes)
 *   builtin_kserve_ready.c readiness and the metadata check at open
 *   builtin_kserve_call.c  a call: start, completion, cancel
 *   builtin_kserve_gate.c  the open checks on a thread of their own; calls
 *                          wait (invoke) until they pass
 *
 * Threads: the loop thread does everything except grpc_completion_queue_next,
 * which the operation's one pump thread blocks in; it hands every completion
 * to the loop through a handoff (one coalescing ev_async). The rpc records
 * belong to the operation, not to the engine's calls, because gRPC may still
 * write into one after its call was cancelled: a late completion finds
 * rpc->call NULL and only returns the record to the pool.
 */
#ifndef FNW_BUILTIN_KSERVE_INTERNAL_H
#define FNW_BUILTIN_KSERVE_INTERNAL_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stddef.h>

#include "fnworker.h"
#include "base/handoff.h"
#include "ops/kserve/kserve_config.h"
#include "ops/secrets/secret_mask.h"

#define KSERVE_OP "kserve"
#define KSERVE_MAX_CHANNELS 16
#define KSERVE_DEADLINE_GRACE_MS 1000   /* a ModelInfer's deadline: the spec's timeout plus this */

/* One ModelInfer in flight (or a free record in the pool). */
typedef struct kserve_rpc {
    fnw_handoff_item item;            /* first: the pump hands the record over by it */
    struct kserve_rpc *prev, *next;   /* the in-flight list, or the free list (next) */
    struct kserve_op *op;
    fnw_call *call;                   /* NULL once cancelled (or at close) */
    grpc_call *gc;
    grpc_byte_buffer *send, *recv;
    grpc_metadata_array initial, trailing;
    grpc_status_code status;
    grpc_slice details;
    int ok;                           /* the completion's success flag (set by the pump) */
    fnw_value *rows;                  /* the decoded inputs (the call's arena) */
    size_t n;
} kserve_rpc;

typedef struct kserve_op {
    fnw_kserve_config cfg;
    struct ev_loop *loop;
    int64_t timeout_ms;
    size_t batch_size;
    grpc_channel *channels[KSERVE_MAX_CHANNELS];
    int n_channels;
    unsigned next_channel;
    grpc_slice method;                /* /inference.GRPCInferenceService/ModelInfer */
    grpc_completion_queue *cq;
    pthread_t pump;
    int pump_started, grpc_started;
    fnw_handoff done;                 /* completions, drained on the loop */
    int done_init, wake_on;
    kserve_rpc *active;               /* in flight, newest first */
    size_t n_active;
    kserve_rpc *free_rpcs;
    /* the open checks (builtin_kserve_gate.c); gate, closing, unary and
     * gate_error are shared with the checker thread, under gate_mu */
    pthread_mutex_t gate_mu;
    int gate_init, checker_started, gate, closing;
    pthread_t checker;
    grpc_call *unary;                 /* the check in flight, for close to cancel */
    char gate_error[FNW_ERROR_MAX];
    ev_async gate_wake;
    fnw_call **waiting;               /* calls that came before the checks passed */
    size_t n_waiting, cap_waiting;
} kserve_op;

/* Masks the auth header's value (the secret read from auth_header_env) in
 * text quoted from the server (a status's details) before it goes into a
 * message. */
static inline void fnw_kserve_mask(const kserve_op *op, char *text)
{
    const char *secret[2] = { op->cfg.auth_header,
                              op->cfg.auth_header ? fnw_secret_mask_credential(op->cfg.auth_header) : NULL };
    fnw_secret_mask_str(text, secret, 2);
}

/* builtin_kserve_grpc.c */
int fnw_kserve_channels_start(kserve_op *op, fnw_error *err);
void fnw_kserve_channels_stop(kserve_op *op);
/* Starts the completion queue's pump thread and the loop's wake-up. */
int fnw_kserve_pump_start(kserve_op *op, fnw_error *err);
/* Cancels everything in flight, shuts the queue down, joins the pump and
 * frees every record. */
void fnw_kserve_pump_stop(kserve_op *op);
kserve_rpc *fnw_kserve_rpc_get(kserve_op *op);
void fnw_kserve_rpc_put(kserve_op *op, kserve_rpc *r);
/* Starts ModelInfer for r (r->send set); the completion reaches
 * fnw_kserve_call_done on the loop. -1 with a message when gRPC refuses. */
int fnw_kserve_rpc_start(kserve_op *op, kserve_rpc *r, fnw_error *err);
/* A blocking unary call of method (open only): the status, details in
 * details; *resp the answer on OK (free with protobuf_c_message_free_unpacked). */
int fnw_kserve_unary(kserve_op *op, const char *method, const ProtobufCMessage *req,
                     const ProtobufCMessageDescriptor *rd, ProtobufCMessage **resp, char *details, size_t dn);

/* builtin_kserve_ready.c: the server and the model ready, the mapping
 * checked against the model's metadata (when check_metadata). */
int fnw_kserve_check_ready(kserve_op *op, fnw_error *err);

/* builtin_kserve_gate.c */
int fnw_kserve_gate_start(kserve_op *op, fnw_error *err);
/* Cancels the check in flight, joins the thread, frees the waiting list. */
void fnw_kserve_gate_stop(kserve_op *op);
/* Waits for the checks (the unit tests): 0 when they passed, else -1 with
 * their message. */
int fnw_kserve_gate_wait(kserve_op *op, fnw_error *err);
/* The checker's unary call c is in flight (NULL: done); -1 when closing. */
int fnw_kserve_gate_track(kserve_op *op, grpc_call *c);
/* The operation's invoke: starts the call, or parks it until the checks end. */
void fnw_kserve_invoke(void *state, fnw_call *call);
/* 1 when call was waiting for the checks (it no longer is). */
int fnw_kserve_gate_cancel(kserve_op *op, fnw_call *call);

/* builtin_kserve_call.c */
void fnw_kserve_invoke_now(kserve_op *op, fnw_call *call);
void fnw_kserve_cancel(void *state, fnw_call *call);
/* A completion on the loop: settles r's call (if any), frees r. */
void fnw_kserve_call_done(kserve_op *op, kserve_rpc *r);

#endif
