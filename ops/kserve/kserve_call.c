/* ops/kserve/kserve_call.c — one `kserve` call: start decodes the
 * call's rows, packs them into one ModelInferRequest (the tensor codec,
 * memory from the call's arena), serializes it and starts ModelInfer as a
 * unary call (base/rpc.h) on the next channel; the answer (on the loop)
 * checks the gRPC status, unpacks the response into the call's arena and
 * emits one output row per input; a retryable status fails the call for
 * the spec's retry strategy, any other fails it for good with the server's
 * message. cancel cancels the gRPC call without its callback.
 */
#include <stdio.h>
#include <string.h>

#include "codecs/error.h"
#include "ops/kserve/kserve_internal.h"
#include "ops/kserve/tensor/tensor.h"

/* A ModelInfer in flight, in the call's arena (the call's op data). */
typedef struct kserve_pending {
    kserve_op *op;
    fnw_call *call;
    fnw_value *rows; /* the decoded inputs */
    size_t n;
    fnw_rpc_unary_call *u;
} kserve_pending;

static const char *status_name(grpc_status_code st)
{
    static const char *const names[] = {
        "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
        "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
        "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
        "DATA_LOSS", "UNAUTHENTICATED"
    };
    return (unsigned)st < sizeof names / sizeof *names ? names[st] : "UNKNOWN";
}

/* The statuses a later attempt may not get again. */
static int retryable(grpc_status_code st)
{
    return st == GRPC_STATUS_UNAVAILABLE || st == GRPC_STATUS_DEADLINE_EXCEEDED ||
           st == GRPC_STATUS_RESOURCE_EXHAUSTED || st == GRPC_STATUS_ABORTED;
}

static int build_request(kserve_op *op, fnw_call *call, fnw_value *rows, size_t n, grpc_slice *out,
                         fnw_error *err)
{
    fnw_arena *a = fnw_call_arena(call);
    Inference__ModelInferRequest req = INFERENCE__MODEL_INFER_REQUEST__INIT;
    if (fnw_tensor_pack(op->cfg.plan, rows, n, a, &req, err) != 0)
        return -1;
    req.model_name = op->cfg.model_name;
    req.model_version = op->cfg.model_version;
    fnw_tensor_params_attach(op->cfg.params, &req);
    size_t len = protobuf_c_message_get_packed_size(&req.base);
    if ((int64_t)len > op->cfg.max_message_bytes)
        return fnw_error_set(err,
                             "the request for %zu rows is %zu bytes, more than option 'max_message_bytes' "
                             "(%lld)",
                             n, len, (long long)op->cfg.max_message_bytes);
    *out = grpc_slice_malloc(len);
    protobuf_c_message_pack(&req.base, GRPC_SLICE_START_PTR(*out));
    return 0;
}

/* The answer, unpacked into the call's arena; NULL when it is not one. */
static Inference__ModelInferResponse *unpack_response(grpc_slice response, fnw_arena *a)
{
    ProtobufCAllocator al;
    fnw_tensor_alloc_init(&al, a);
    return (Inference__ModelInferResponse *)
        protobuf_c_message_unpack(&inference__model_infer_response__descriptor, &al,
                                  GRPC_SLICE_LENGTH(response), GRPC_SLICE_START_PTR(response));
}

static int emit_rows(kserve_op *op, const kserve_pending *p, grpc_slice response, fnw_error *err)
{
    fnw_arena *a = fnw_call_arena(p->call);
    Inference__ModelInferResponse *resp = unpack_response(response, a);
    if (!resp)
        return fnw_error_set(err,
                             "the answer of model '%s' is not a ModelInferResponse (or does not fit the "
                             "call's memory)",
                             op->cfg.model_name);
    size_t outs = fnw_tensor_plan_outputs(op->cfg.plan);
    fnw_value *vals = fnw_arena_alloc(a, (outs * p->n + 1) * sizeof *vals);
    if (!vals)
        return fnw_error_set(err, "out of memory for the answer of model '%s'", op->cfg.model_name);
    if (fnw_tensor_unpack(op->cfg.plan, resp, p->n, a, vals, err) != 0)
        return -1;
    for (size_t i = 0; i < p->n; i++) {
        fnw_value row;
        if (fnw_tensor_unpack_row(op->cfg.plan, &p->rows[i], vals, p->n, i, a, &row, err) != 0 ||
            fnw_call_emit_value(p->call, i, &row, err) != 0)
            return fnw_error_prefix(err, "output row %zu", i);
    }
    return 0;
}

/* The answer, on the loop (rpc.c runs this unless the call was given up). */
static void on_answer(void *user, grpc_status_code code, const char *details, grpc_slice response)
{
    kserve_pending *p = user;
    kserve_op *op = p->op;
    fnw_call *c = p->call;
    fnw_call_set_op_data(c, NULL);
    fnw_kserve_op_idle(op);
    fnw_error err = { "" };
    if (code == GRPC_STATUS_OK) {
        if (emit_rows(op, p, response, &err) == 0)
            fnw_call_complete(c);
        else
            fnw_call_fail_after(c, FNW_CALL_NO_RETRY, "operation '%s': %s", KSERVE_OP, err.msg);
        return;
    }
    char quoted[512];
    snprintf(quoted, sizeof quoted, "%s", details ? details : "");
    fnw_kserve_op_mask(op, quoted);
    if (code == GRPC_STATUS_RESOURCE_EXHAUSTED) {
        /* refused for load: adaptive concurrency (docs/resilience.md). UNAVAILABLE stays a
         * (retryable) failure: it is what a server that is down answers, which the circuit
         * breaker must see. */
        fnw_call_fail_overloaded(c, 0, "operation '%s': model '%s' at '%s' answered status %s: %.500s",
                                 KSERVE_OP, op->cfg.model_name, op->cfg.target, status_name(code), quoted);
        return;
    }
    fnw_call_fail_after(c, retryable(code) ? 0 : FNW_CALL_NO_RETRY,
                        "operation '%s': model '%s' at '%s' answered status %s: %.500s", KSERVE_OP,
                        op->cfg.model_name, op->cfg.target, status_name(code), quoted);
}

void fnw_kserve_call_start(kserve_op *op, fnw_call *call)
{
    size_t n = fnw_call_size(call);
    fnw_arena *a = fnw_call_arena(call);
    kserve_pending *p = fnw_arena_alloc(a, sizeof *p);
    fnw_value *rows = fnw_arena_alloc(a, n * sizeof *rows);
    if (!p || !rows) {
        fnw_call_fail(call, "out of memory for the call");
        return;
    }
    fnw_error err = { "" };
    for (size_t i = 0; i < n; i++) {
        if (fnw_call_decode(call, i, &rows[i], &err) != 0) {
            fnw_call_fail_after(call, FNW_CALL_NO_RETRY, "input %zu: %s", i, err.msg);
            return;
        }
    }
    grpc_slice request;
    if (build_request(op, call, rows, n, &request, &err) != 0) {
        fnw_call_fail_after(call, FNW_CALL_NO_RETRY, "operation '%s': %s", KSERVE_OP, err.msg);
        return;
    }
    *p = (kserve_pending){ op, call, rows, n, NULL };
    /* The spec's timeout (and its timeout action) decides first; the deadline,
     * a grace later, ends the server's work on a call given up. */
    double deadline_s = op->timeout_ms > 0 ? (double)(op->timeout_ms + KSERVE_DEADLINE_GRACE_MS) / 1000.0 : 0;
    if (fnw_rpc_unary(&op->rpc, fnw_kserve_channels_next(op), KSERVE_SERVICE "ModelInfer", request,
                      deadline_s, 0, on_answer, p, &p->u) != 0) {
        fnw_call_fail(call, "operation '%s': gRPC refused the call to '%s'", KSERVE_OP, op->cfg.target);
        return;
    }
    fnw_kserve_op_busy(op);
    fnw_call_set_op_data(call, p);
}

void fnw_kserve_call_cancel(kserve_op *op, fnw_call *call)
{
    kserve_pending *p = fnw_call_op_data(call);
    if (!p)
        return;
    fnw_call_set_op_data(call, NULL);
    fnw_rpc_unary_cancel(p->u); /* its completion still comes: rpc.c then only frees the record */
    fnw_kserve_op_idle(op);
}
