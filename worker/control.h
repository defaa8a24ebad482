/* worker/control.h — the control plane: the Control stream (runner ->
 * InstructionRequest, worker -> InstructionResponse) and the
 * GetProcessBundleDescriptor calls on the same channel.
 *
 * This unit only moves messages: it unpacks requests and hands them to its
 * handler, packs responses, and fetches descriptors. What a request means
 * is decided by worker/worker.c. A message that cannot be read safely (it
 * is larger than FNW_CONTROL_MAX_MESSAGE, or nests deeper than the worker
 * reads) is refused here and answered with the reason when its instruction
 * id can be read, so the runner does not wait for an answer that never
 * comes; the Control stream goes on. A fetched descriptor is held to the
 * same limits, and its bundles fail with the reason (what can be read of
 * its transforms still names the data endpoint: Beam's runner waits for
 * the worker's Data stream before it reads any bundle's response).
 *
 * The unit reaches gRPC only through a fnw_control_transport: the real one
 * (fnw_control_start) uses base/rpc.h; tests give a fake one
 * (fnw_control_start_on) and drive the handler without a network.
 *
 * Loop thread only.
 */
#ifndef FNW_CONTROL_H
#define FNW_CONTROL_H

#include "worker/log.h"
#include "base/pb.h"
#include "base/stream.h"

typedef struct fnw_control fnw_control;

/* The largest Control message (a register request carries every
 * ProcessBundleDescriptor it registers) and the largest fetched descriptor
 * the worker unpacks: 64 MiB, hundreds of times a real Flink descriptor. A
 * larger one is refused before protobuf-c sees it, so a hostile descriptor
 * cannot make the worker allocate a multiple of it again while planning. */
#define FNW_CONTROL_MAX_MESSAGE ((size_t)64 << 20)

typedef struct fnw_control_handler {
    void *user;
    /* req is owned by the callee: free with fnw_control_free_request(). */
    void (*on_request)(void *user, pb_InstructionRequest *req);
    void (*on_closed)(void *user, grpc_status_code code, const char *details);
} fnw_control_handler;

/* What the unit needs from gRPC; ctx is the transport's own. */
typedef struct fnw_control_transport {
    /* Starts the Control stream, delivering to h; NULL on failure. */
    void *(*start)(void *ctx, const fnw_stream_handler *h);
    void (*send)(void *stream, grpc_slice msg); /* takes msg */
    void (*cancel)(void *stream);
    void (*free)(void *stream);
    /* A unary call on the control channel; takes request; -1 if it could
     * not start (then cb is not called). */
    int (*unary)(void *ctx, const char *method, grpc_slice request, double timeout_s, fnw_unary_cb cb,
                 void *user);
} fnw_control_transport;

/* The fetched descriptor d, or why there is none. When why is set, d may
 * still be given: what could be read of a descriptor refused as a whole
 * (its id and transforms only), for the data endpoint its bundles must
 * open even though they fail. d is owned by the callee (free with
 * fnw_control_free_descriptor). */
typedef void (*fnw_descriptor_cb)(void *user, pb_ProcessBundleDescriptor *d, const char *why);

/* Opens the Control stream on ch. log receives what cannot be answered. */
fnw_control *fnw_control_start(fnw_rpc *rpc, grpc_channel *ch, fnw_logger *log, const fnw_control_handler *h);
/* The same over another transport (t is borrowed for the unit's life). */
fnw_control *fnw_control_start_on(const fnw_control_transport *t, void *ctx, fnw_logger *log,
                                  const fnw_control_handler *h);
void fnw_control_respond(fnw_control *c, const pb_InstructionResponse *resp);
/* Sends an InstructionResponse already packed (the relay's: the Python
 * worker's own bytes); resp is taken. */
void fnw_control_send_response(fnw_control *c, grpc_slice resp);
void fnw_control_respond_error(fnw_control *c, const char *instruction_id, const char *error);
int fnw_control_fetch_descriptor(fnw_control *c, const char *id, fnw_descriptor_cb cb, void *user);
void fnw_control_free_request(pb_InstructionRequest *req);
void fnw_control_free_descriptor(pb_ProcessBundleDescriptor *d);
/* Cancels the stream (on_closed still runs). */
void fnw_control_stop(fnw_control *c);
void fnw_control_free(fnw_control *c);

/* The answer to a request the worker does not handle: names its kind
 * when known, and what the worker does handle. */
void fnw_control_describe_unsupported(const pb_InstructionRequest *req, char *msg, size_t cap);

#endif
