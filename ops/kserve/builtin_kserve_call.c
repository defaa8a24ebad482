/* ops/kserve/builtin_kserve_call.c — one `kserve` call: invoke decodes the
 * call's rows, packs them into one ModelInferRequest (the tensor codec,
 * memory from the call's arena), serializes it and starts ModelInfer on the
 * next channel; the completion (on the loop) checks the gRPC status, unpacks
 * the answer into the call's arena and emits one output row per input; a
 * retryable status fails the call for the spec's retry strategy, any other
 * fails it for good with the server's message. cancel cancels the gRPC call;
 * its late completion is then only freed.
 */
#include <grpc/byte_buffer_reader.h>
#include <grpc/support/alloc.h>
#include <string.h>

#include "codecs/error.h"
#include "ops/kserve/builtin_kserve_internal.h"
#include "ops/kserve/tensor/tensor.h"

static const char *status_name(grpc_status_code st)
{
    static const char *const names[] = { "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                                         "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
                                         "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                                         "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
                                         "UNAUTHENTICATED" };
    return (unsigned)st < sizeof names / sizeof *names ? names[st] : "UNKNOWN";
}

/* The statuses a later attempt may not get again. */
static int retryable(grpc_status_code st)
{
    return st == GRPC_STATUS_UNAVAILABLE || st == GRPC_STATUS_DEADLINE_EXCEEDED ||
           st == GRPC_STATUS_RESOURCE_EXHAUSTED || st == GRPC_STATUS_ABORTED;
}

static int build_request(kserve_op *op, fnw_call *call, fnw_value *rows, size_t n, grpc_byte_buffer **out,
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
        return fnw_error_set(err, "the request for %zu rows is %zu bytes, more than option 'max_message_bytes' "
                             "(%lld)", n, len, (long long)op->cfg.max_message_bytes);
    grpc_slice s = grpc_slice_malloc(len);
    protobuf_c_message_pack(&req.base, GRPC_SLICE_START_PTR(s));
    *out = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    return 0;
}

void fnw_kserve_invoke_now(kserve_op *op, fnw_call *call)
{
    size_t n = fnw_call_size(call);
    fnw_value *rows = fnw_arena_alloc(fnw_call_arena(call), n * sizeof *rows);
    if (!rows) {
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
    grpc_byte_buffer *send = NULL;
    if (build_request(op, call, rows, n, &send, &err) != 0) {
        fnw_call_fail_after(call, FNW_CALL_NO_RETRY, "operation '%s': %s", KSERVE_OP, err.msg);
        return;
    }
    kserve_rpc *r = fnw_kserve_rpc_get(op);
    if (!r) {
        grpc_byte_buffer_destroy(send);
        fnw_call_fail(call, "out of memory for the call");
        return;
    }
    r->send = send;
    r->call = call;
    r->rows = rows;
    r->n = n;
    if (fnw_kserve_rpc_start(op, r, &err) != 0) {
        fnw_kserve_rpc_put(op, r);
        fnw_call_fail(call, "operation '%s': %s", KSERVE_OP, err.msg);
        return;
    }
    fnw_call_set_op_data(call, r);
}

void fnw_kserve_cancel(void *state, fnw_call *call)
{
    if (fnw_kserve_gate_cancel(state, call))
        return;
    kserve_rpc *r = fnw_call_op_data(call);
    if (!r)
        return;
    fnw_call_set_op_data(call, NULL);
    r->call = NULL;   /* the completion still comes: it then only frees r */
    r->rows = NULL;
    grpc_call_cancel(r->gc, NULL);
}

/* The answer, unpacked into the call's arena; NULL when it is not one. */
static Inference__ModelInferResponse *unpack_response(kserve_rpc *r, fnw_arena *a)
{
    grpc_byte_buffer_reader rd;
    if (!r->recv || !grpc_byte_buffer_reader_init(&rd, r->recv))
        return NULL;
    grpc_slice all = grpc_byte_buffer_reader_readall(&rd);
    ProtobufCAllocator al;
    fnw_tensor_alloc_init(&al, a);
    ProtobufCMessage *m = protobuf_c_message_unpack(&inference__model_infer_response__descriptor, &al,
                                                    GRPC_SLICE_LENGTH(all), GRPC_SLICE_START_PTR(all));
    grpc_slice_unref(all);
    grpc_byte_buffer_reader_destroy(&rd);
    return (Inference__ModelInferResponse *)m;
}

static int emit_rows(kserve_op *op, kserve_rpc *r, fnw_call *c, fnw_error *err)
{
    fnw_arena *a = fnw_call_arena(c);
    Inference__ModelInferResponse *resp = unpack_response(r, a);
    if (!resp)
        return fnw_error_set(err, "the answer of model '%s' is not a ModelInferResponse (or does not fit the "
                             "call's memory)", op->cfg.model_name);
    size_t outs = fnw_tensor_plan_outputs(op->cfg.plan);
    fnw_value *vals = fnw_arena_alloc(a, (outs * r->n + 1) * sizeof *vals);
    if (!vals)
        return fnw_error_set(err, "out of memory for the answer of model '%s'", op->cfg.model_name);
    if (fnw_tensor_unpack(op->cfg.plan, resp, r->n, a, vals, err) != 0)
        return -1;
    for (size_t i = 0; i < r->n; i++) {
        fnw_value row;
        if (fnw_tensor_unpack_row(op->cfg.plan, &r->rows[i], vals, r->n, i, a, &row, err) != 0 ||
            fnw_call_emit_value(c, i, &row, err) != 0)
            return fnw_error_prefix(err, "output row %zu", i);
    }
    return 0;
}

static void settle(kserve_op *op, kserve_rpc *r, fnw_call *c)
{
    fnw_error err = { "" };
    if (!r->ok) {
        fnw_call_fail(c, "operation '%s': the gRPC call to '%s' failed", KSERVE_OP, op->cfg.target);
    } else if (r->status == GRPC_STATUS_OK) {
        if (emit_rows(op, r, c, &err) == 0)
            fnw_call_complete(c);
        else
            fnw_call_fail_after(c, FNW_CALL_NO_RETRY, "operation '%s': %s", KSERVE_OP, err.msg);
    } else {
        char *details = grpc_slice_to_c_string(r->details);
        if (details)
            fnw_kserve_mask(op, details);
        fnw_call_fail_after(c, retryable(r->status) ? 0 : FNW_CALL_NO_RETRY,
                            "operation '%s': model '%s' at '%s' answered status %s: %.500s", KSERVE_OP,
                            op->cfg.model_name, op->cfg.target, status_name(r->status), details ? details : "");
        gpr_free(details);
    }
}

void fnw_kserve_call_done(kserve_op *op, kserve_rpc *r)
{
    fnw_call *c = r->call;
    if (c) {
        fnw_call_set_op_data(c, NULL);
        settle(op, r, c);
    }
    fnw_kserve_rpc_put(op, r);
}
