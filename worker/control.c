/* worker/control.c — Control stream and descriptor fetches (see control.h). */
#include "worker/control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/pb_nesting.h"
#include "worker/logging.h"

struct fnw_control {
    fnw_rpc *rpc;
    grpc_channel *ch;
    fnw_stream *stream;
    fnw_control_handler h;
};

typedef struct fetch_ctx {
    fnw_descriptor_cb cb;
    void *user;
    char *id;
} fetch_ctx;

/* A request the nesting check refused: answered with the reason when its
 * instruction id can be read, so the runner does not wait for it. */
static void refuse_request(fnw_control *c, const uint8_t *p, size_t n, const char *why)
{
    char id[256];
    int have_id = fnw_pb_find_top_string(p, n, 1, id, sizeof id);   /* instruction_id */
    fnw_log(c->rpc->log, FNW_LOG_ERROR, have_id ? id : NULL, NULL,
            "refused a Control message of %zu bytes: %s", n, why);
    if (have_id)
        fnw_control_respond_error(c, id, why);
}

static void control_on_message(void *user, grpc_slice msg)
{
    fnw_control *c = user;
    fnw_error err;
    /* a register request carries descriptors, whose Triggers nest without a
     * limit of their own; protobuf-c would recurse through all of them */
    if (fnw_pb_check_nesting(&PB(instruction_request__descriptor), GRPC_SLICE_START_PTR(msg),
                             GRPC_SLICE_LENGTH(msg), &err) < 0) {
        refuse_request(c, GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), err.msg);
        return;
    }
    pb_InstructionRequest *req = PB(instruction_request__unpack)(NULL, GRPC_SLICE_LENGTH(msg),
                                                                GRPC_SLICE_START_PTR(msg));
    if (!req) {
        fnw_log(c->rpc->log, FNW_LOG_ERROR, NULL, NULL,
                "dropped a Control message that is not an InstructionRequest (%zu bytes); the runner "
                "will get no response to it", (size_t)GRPC_SLICE_LENGTH(msg));
        return;
    }
    c->h.on_request(c->h.user, req);
}

static void control_on_closed(void *user, grpc_status_code code, const char *details)
{
    fnw_control *c = user;
    c->h.on_closed(c->h.user, code, details);
}

fnw_control *fnw_control_open(fnw_rpc *rpc, grpc_channel *ch, const fnw_control_handler *h)
{
    fnw_control *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->rpc = rpc;
    c->ch = ch;
    c->h = *h;
    fnw_stream_handler sh = {c, control_on_message, NULL, control_on_closed};
    c->stream = fnw_stream_open(rpc, ch, FNW_METHOD_CONTROL, &sh, 0);
    return c;
}

void fnw_control_respond(fnw_control *c, const pb_InstructionResponse *resp)
{
    if (!c->stream)
        return;
    size_t n = PB(instruction_response__get_packed_size)(resp);
    grpc_slice s = grpc_slice_malloc(n);
    PB(instruction_response__pack)(resp, GRPC_SLICE_START_PTR(s));
    fnw_stream_send(c->stream, s, NULL, NULL);
}

void fnw_control_respond_error(fnw_control *c, const char *instruction_id, const char *error)
{
    pb_InstructionResponse r = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__INIT;
    r.instruction_id = (char *)instruction_id;
    r.error = (char *)error;
    fnw_control_respond(c, &r);
}

static void fetch_done(void *user, grpc_status_code code, const char *details, grpc_slice resp)
{
    fetch_ctx *f = user;
    fnw_error err;
    if (code != GRPC_STATUS_OK) {
        char why[512];
        snprintf(why, sizeof why, "GetProcessBundleDescriptor('%s') failed with status %d: %s", f->id,
                 (int)code, details);
        f->cb(f->user, NULL, why);
    } else if (fnw_pb_check_nesting(&PB(process_bundle_descriptor__descriptor), GRPC_SLICE_START_PTR(resp),
                                    GRPC_SLICE_LENGTH(resp), &err) < 0) {
        char why[FNW_ERROR_MAX + 128];
        snprintf(why, sizeof why, "GetProcessBundleDescriptor('%s') returned bytes the worker cannot read: %s",
                 f->id, err.msg);
        f->cb(f->user, NULL, why);
    } else {
        pb_ProcessBundleDescriptor *d = PB(process_bundle_descriptor__unpack)(
            NULL, GRPC_SLICE_LENGTH(resp), GRPC_SLICE_START_PTR(resp));
        if (d)
            f->cb(f->user, d, NULL);
        else
            f->cb(f->user, NULL, "GetProcessBundleDescriptor returned bytes that are not a ProcessBundleDescriptor");
    }
    free(f->id);
    free(f);
}

int fnw_control_fetch_descriptor(fnw_control *c, const char *id, fnw_descriptor_cb cb, void *user)
{
    fetch_ctx *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->cb = cb;
    f->user = user;
    f->id = strdup(id);
    pb_GetDescriptorRequest req =
        ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__GET_PROCESS_BUNDLE_DESCRIPTOR_REQUEST__INIT;
    req.process_bundle_descriptor_id = (char *)id;
    size_t n = PB(get_process_bundle_descriptor_request__get_packed_size)(&req);
    grpc_slice s = grpc_slice_malloc(n);
    PB(get_process_bundle_descriptor_request__pack)(&req, GRPC_SLICE_START_PTR(s));
    return fnw_unary_call(c->rpc, c->ch, FNW_METHOD_GET_DESCRIPTOR, s, 30.0, 0, fetch_done, f);
}

void fnw_control_free_request(pb_InstructionRequest *req)
{
    PB(instruction_request__free_unpacked)(req, NULL);
}

void fnw_control_free_descriptor(pb_ProcessBundleDescriptor *d)
{
    PB(process_bundle_descriptor__free_unpacked)(d, NULL);
}

void fnw_control_shutdown(fnw_control *c)
{
    if (c->stream)
        fnw_stream_cancel(c->stream);
}

void fnw_control_free(fnw_control *c)
{
    if (!c)
        return;
    fnw_stream_release(c->stream);
    free(c);
}
