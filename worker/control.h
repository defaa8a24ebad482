/* worker/control.h — the control plane: the Control stream (runner ->
 * InstructionRequest, worker -> InstructionResponse) and the
 * GetProcessBundleDescriptor calls on the same channel.
 *
 * This unit only moves messages: it unpacks requests and hands them to its
 * handler, packs responses, and fetches descriptors. What a request means
 * is decided by worker/worker.c. Loop thread only.
 */
#ifndef FNW_CONTROL_H
#define FNW_CONTROL_H

#include "worker/pb.h"
#include "worker/rpc.h"

typedef struct fnw_control fnw_control;

typedef struct fnw_control_handler {
    void *user;
    /* req is owned by the callee: free with fnw_control_free_request(). */
    void (*on_request)(void *user, pb_InstructionRequest *req);
    void (*on_closed)(void *user, grpc_status_code code, const char *details);
} fnw_control_handler;

/* d is owned by the callee (free with fnw_control_free_descriptor) or NULL
 * with why set. */
typedef void (*fnw_descriptor_cb)(void *user, pb_ProcessBundleDescriptor *d, const char *why);

fnw_control *fnw_control_open(fnw_rpc *rpc, grpc_channel *ch, const fnw_control_handler *h);
void fnw_control_respond(fnw_control *c, const pb_InstructionResponse *resp);
void fnw_control_respond_error(fnw_control *c, const char *instruction_id, const char *error);
int fnw_control_fetch_descriptor(fnw_control *c, const char *id, fnw_descriptor_cb cb, void *user);
void fnw_control_free_request(pb_InstructionRequest *req);
void fnw_control_free_descriptor(pb_ProcessBundleDescriptor *d);
void fnw_control_shutdown(fnw_control *c);   /* cancel the stream */
void fnw_control_free(fnw_control *c);

#endif
