/* worker/control.c — Control stream and descriptor fetches (see control.h). */
#include "worker/control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/pb_nesting.h"
#include "worker/log.h"

struct fnw_control {
    const fnw_control_transport *t;
    void *ctx;
    fnw_rpc *rpc; /* the gRPC transport's (fnw_control_start) */
    grpc_channel *ch;
    void *stream;
    fnw_logger *log;
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
    int have_id = fnw_pb_nesting_find_top_string(p, n, 1, id, sizeof id); /* instruction_id */
    fnw_log(c->log, FNW_LOG_ERROR, have_id ? id : NULL, NULL, "refused a Control message of %zu bytes: %s", n,
            why);
    if (have_id)
        fnw_control_respond_error(c, id, why);
}

/* 0 if n bytes of desc's message may be unpacked: not over the size cap,
 * and (as a register request carries descriptors, whose Triggers nest
 * without a limit of their own, and protobuf-c would recurse through all of
 * them) not nested too deeply. */
static int check_readable(const ProtobufCMessageDescriptor *desc, const uint8_t *p, size_t n, fnw_error *err)
{
    if (n > FNW_CONTROL_MAX_MESSAGE)
        return fnw_error_set(err,
                             "%zu bytes is more than fnworker's limit of %zu bytes (%zu MiB) for one "
                             "Control message or descriptor",
                             n, FNW_CONTROL_MAX_MESSAGE, FNW_CONTROL_MAX_MESSAGE >> 20);
    return fnw_pb_nesting_check(desc, p, n, err);
}

static void control_on_message(void *user, grpc_slice msg)
{
    fnw_control *c = user;
    fnw_error err;
    if (check_readable(&PB(instruction_request__descriptor), GRPC_SLICE_START_PTR(msg),
                       GRPC_SLICE_LENGTH(msg), &err) < 0) {
        refuse_request(c, GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), err.msg);
        return;
    }
    pb_InstructionRequest *req = PB(instruction_request__unpack)(NULL, GRPC_SLICE_LENGTH(msg),
                                                                 GRPC_SLICE_START_PTR(msg));
    if (!req) {
        fnw_log(c->log, FNW_LOG_ERROR, NULL, NULL,
                "dropped a Control message that is not an InstructionRequest (%zu bytes); the runner "
                "will get no response to it",
                (size_t)GRPC_SLICE_LENGTH(msg));
        return;
    }
    c->h.on_request(c->h.user, req);
}

static void control_on_closed(void *user, grpc_status_code code, const char *details)
{
    fnw_control *c = user;
    c->h.on_closed(c->h.user, code, details);
}

/* ---- the gRPC transport: ctx is the fnw_control ------------------------------ */

static void *grpc_start(void *ctx, const fnw_stream_handler *h)
{
    fnw_control *c = ctx;
    return fnw_stream_start(c->rpc, c->ch, FNW_METHOD_CONTROL, h, 0);
}

static void grpc_send(void *stream, grpc_slice msg)
{
    fnw_stream_send(stream, msg, NULL, NULL);
}

static void grpc_cancel(void *stream)
{
    fnw_stream_cancel(stream);
}

static void grpc_free(void *stream)
{
    fnw_stream_free(stream);
}

static int grpc_unary(void *ctx, const char *method, grpc_slice request, double timeout_s, fnw_unary_cb cb,
                      void *user)
{
    fnw_control *c = ctx;
    return fnw_rpc_unary(c->rpc, c->ch, method, request, timeout_s, 0, cb, user, NULL);
}

static const fnw_control_transport grpc_transport = { grpc_start, grpc_send, grpc_cancel, grpc_free,
                                                      grpc_unary };

static fnw_control *control_new(const fnw_control_transport *t, void *ctx, fnw_logger *log,
                                const fnw_control_handler *h)
{
    fnw_control *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->t = t;
    c->ctx = ctx ? ctx : c;
    c->log = log;
    c->h = *h;
    return c;
}

static fnw_control *control_start_stream(fnw_control *c)
{
    fnw_stream_handler sh = { c, control_on_message, NULL, control_on_closed };
    c->stream = c->t->start(c->ctx, &sh);
    return c;
}

fnw_control *fnw_control_start(fnw_rpc *rpc, grpc_channel *ch, fnw_logger *log, const fnw_control_handler *h)
{
    fnw_control *c = control_new(&grpc_transport, NULL, log, h);
    if (!c)
        return NULL;
    c->rpc = rpc;
    c->ch = ch;
    return control_start_stream(c);
}

fnw_control *fnw_control_start_on(const fnw_control_transport *t, void *ctx, fnw_logger *log,
                                  const fnw_control_handler *h)
{
    fnw_control *c = control_new(t, ctx, log, h);
    return c ? control_start_stream(c) : NULL;
}

void fnw_control_respond(fnw_control *c, const pb_InstructionResponse *resp)
{
    if (!c->stream)
        return;
    size_t n = PB(instruction_response__get_packed_size)(resp);
    grpc_slice s = grpc_slice_malloc(n);
    PB(instruction_response__pack)(resp, GRPC_SLICE_START_PTR(s));
    c->t->send(c->stream, s);
}

void fnw_control_send_response(fnw_control *c, grpc_slice resp)
{
    if (!c->stream) {
        grpc_slice_unref(resp);
        return;
    }
    c->t->send(c->stream, resp);
}

void fnw_control_respond_error(fnw_control *c, const char *instruction_id, const char *error)
{
    pb_InstructionResponse r = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__INIT;
    r.instruction_id = (char *)instruction_id;
    r.error = (char *)error;
    fnw_control_respond(c, &r);
}

/* Copies the top-level id (1) and transforms (2) fields of a descriptor's
 * bytes to out (when not NULL); returns their size, or SIZE_MAX when the
 * top level is malformed. Nothing inside a field is read. */
static size_t copy_id_and_transforms(const uint8_t *p, size_t n, uint8_t *out)
{
    const uint8_t *at = p, *end = p + n, *body;
    size_t kept = 0, len;
    uint32_t num;
    int wt;
    while (at < end) {
        const uint8_t *field = at;
        if (fnw_pb_nesting_step_field(&at, end, &num, &wt, &body, &len) < 0)
            return SIZE_MAX;
        if (wt == 2 && (num == 1 || num == 2)) {
            if (out)
                memcpy(out + kept, field, (size_t)(at - field));
            kept += (size_t)(at - field);
        }
    }
    return kept;
}

/* What can be read of a descriptor refused as a whole (for its size, or
 * nesting outside its transforms): its id and transforms, which name the
 * data endpoint its bundles must still open. NULL when they cannot be read
 * either. */
static pb_ProcessBundleDescriptor *read_transforms(const uint8_t *p, size_t n)
{
    size_t kept = copy_id_and_transforms(p, n, NULL);
    if (kept == SIZE_MAX || kept == 0 || kept > FNW_CONTROL_MAX_MESSAGE)
        return NULL;
    uint8_t *part = malloc(kept);
    if (!part)
        return NULL;
    copy_id_and_transforms(p, n, part);
    fnw_error err;
    pb_ProcessBundleDescriptor *d = NULL;
    if (check_readable(&PB(process_bundle_descriptor__descriptor), part, kept, &err) == 0)
        d = PB(process_bundle_descriptor__unpack)(NULL, kept, part);
    free(part);
    return d;
}

static void fetch_done(void *user, grpc_status_code code, const char *details, grpc_slice resp)
{
    fetch_ctx *f = user;
    fnw_error err;
    const uint8_t *p = GRPC_SLICE_START_PTR(resp);
    size_t n = GRPC_SLICE_LENGTH(resp);
    if (code != GRPC_STATUS_OK) {
        char why[512];
        snprintf(why, sizeof why, "GetProcessBundleDescriptor('%s') failed with status %d: %s", f->id,
                 (int)code, details);
        f->cb(f->user, NULL, why);
    } else if (check_readable(&PB(process_bundle_descriptor__descriptor), p, n, &err) < 0) {
        char why[FNW_ERROR_MAX + 128];
        snprintf(why, sizeof why,
                 "GetProcessBundleDescriptor('%s') returned bytes the worker cannot read: %s", f->id, err.msg);
        f->cb(f->user, read_transforms(p, n), why);
    } else {
        pb_ProcessBundleDescriptor *d = PB(process_bundle_descriptor__unpack)(NULL, n, p);
        if (d)
            f->cb(f->user, d, NULL);
        else
            f->cb(f->user, NULL,
                  "GetProcessBundleDescriptor returned bytes that are not a ProcessBundleDescriptor");
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
    if (!f->id) {
        free(f);
        return -1;
    }
    pb_GetDescriptorRequest req =
        ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__GET_PROCESS_BUNDLE_DESCRIPTOR_REQUEST__INIT;
    req.process_bundle_descriptor_id = (char *)id;
    size_t n = PB(get_process_bundle_descriptor_request__get_packed_size)(&req);
    grpc_slice s = grpc_slice_malloc(n);
    PB(get_process_bundle_descriptor_request__pack)(&req, GRPC_SLICE_START_PTR(s));
    if (c->t->unary(c->ctx, FNW_METHOD_GET_DESCRIPTOR, s, 30.0, fetch_done, f) < 0) {
        free(f->id);
        free(f);
        return -1;
    }
    /* cppcheck-suppress memleak ; f is fetch_done's now: the transport calls it once */
    return 0;
}

void fnw_control_free_request(pb_InstructionRequest *req)
{
    PB(instruction_request__free_unpacked)(req, NULL);
}

void fnw_control_free_descriptor(pb_ProcessBundleDescriptor *d)
{
    PB(process_bundle_descriptor__free_unpacked)(d, NULL);
}

void fnw_control_stop(fnw_control *c)
{
    if (c->stream)
        c->t->cancel(c->stream);
}

void fnw_control_free(fnw_control *c)
{
    if (!c)
        return;
    if (c->stream)
        c->t->free(c->stream);
    free(c);
}

static const char *request_kind(int c)
{
    switch (c) {
    case REQ_CASE(PROCESS_BUNDLE_PROGRESS):
        return "process_bundle_progress";
    case REQ_CASE(PROCESS_BUNDLE_SPLIT):
        return "process_bundle_split";
    case REQ_CASE(FINALIZE_BUNDLE):
        return "finalize_bundle";
    case REQ_CASE(MONITORING_INFOS):
        return "monitoring_infos";
    case REQ_CASE(HARNESS_MONITORING_INFOS):
        return "harness_monitoring_infos";
    case REQ_CASE(SAMPLE_DATA):
        return "sample_data";
    }
    return NULL;
}

void fnw_control_describe_unsupported(const pb_InstructionRequest *req, char *msg, size_t cap)
{
    if (req->request_case == REQ_CASE(_NOT_SET)) {
        snprintf(msg, cap,
                 "instruction %s has no request set (or one this worker does not "
                 "know); fnworker handles process_bundle and register",
                 req->instruction_id);
        return;
    }
    const char *kind = request_kind(req->request_case);
    snprintf(msg, cap,
             "fnworker does not support %s requests (instruction %s); it "
             "handles process_bundle and register",
             kind ? kind : "this kind of", req->instruction_id);
}
