/* ops/kserve/kserve_ready.c — what the `kserve` operation checks
 * after open, before any call is sent: the server answers ServerReady and
 * ModelReady (each waiting at most connect_timeout_ms for the connection),
 * and, with check_metadata, every configured tensor matches the model's
 * ModelMetadata. The checks are asynchronous unary calls (base/rpc.h),
 * one after the other, on the loop: none blocks the loop, none needs a
 * thread. The verdict goes to the callback fnw_kserve_ready_start was
 * given; a job whose server cannot be reached fails there, naming the
 * endpoint.
 */
#include <stdio.h>
#include <string.h>

#include "codecs/error.h"
#include "ops/kserve/kserve_internal.h"
#include "ops/kserve/tensor/tensor.h"

static int unreachable(const kserve_op *op, int st, const char *what, const char *details, fnw_error *err)
{
    if (st == GRPC_STATUS_DEADLINE_EXCEEDED || st == GRPC_STATUS_UNAVAILABLE)
        return fnw_error_set(err,
                             "operation '%s': the model server at '%s' did not answer %s within %lld ms "
                             "(status %d: %.300s)",
                             KSERVE_OP, op->cfg.target, what, (long long)op->cfg.connect_timeout_ms, st,
                             details);
    return fnw_error_set(err, "operation '%s': the model server at '%s' answered %s with status %d: %.300s",
                         KSERVE_OP, op->cfg.target, what, st, details);
}

enum { STEP_SERVER, STEP_MODEL, STEP_METADATA };
static const char *const step_name[] = { "ServerReady", "ModelReady", "ModelMetadata" };

static int check_server(kserve_op *op, const Inference__ServerReadyResponse *resp, fnw_error *err)
{
    if (!resp->ready)
        return fnw_error_set(err, "operation '%s': the model server at '%s' is not ready", KSERVE_OP,
                             op->cfg.target);
    return 0;
}

static int check_model(kserve_op *op, const Inference__ModelReadyResponse *resp, fnw_error *err)
{
    if (!resp->ready)
        return fnw_error_set(err,
                             "operation '%s': model '%s'%s%s%s is not ready on the server at '%s' "
                             "(options 'model_name', 'model_version')",
                             KSERVE_OP, op->cfg.model_name, *op->cfg.model_version ? " (version '" : "",
                             op->cfg.model_version, *op->cfg.model_version ? "')" : "", op->cfg.target);
    return 0;
}

static int check_metadata(kserve_op *op, const Inference__ModelMetadataResponse *md, fnw_error *err)
{
    int rc = fnw_tensor_meta_check(op->cfg.plan, md, (int64_t)op->batch_size, err);
    if (rc != 0)
        fnw_error_prefix(err, "operation '%s' (option check_metadata)", KSERVE_OP);
    return rc;
}

/* The request of step, packed. */
static grpc_slice request_of(kserve_op *op, int step)
{
    Inference__ServerReadyRequest server = INFERENCE__SERVER_READY_REQUEST__INIT;
    Inference__ModelReadyRequest model = INFERENCE__MODEL_READY_REQUEST__INIT;
    Inference__ModelMetadataRequest meta = INFERENCE__MODEL_METADATA_REQUEST__INIT;
    model.name = meta.name = op->cfg.model_name;
    model.version = meta.version = op->cfg.model_version;
    const ProtobufCMessage *m = step == STEP_SERVER  ? &server.base
                                : step == STEP_MODEL ? &model.base
                                                     : &meta.base;
    grpc_slice s = grpc_slice_malloc(protobuf_c_message_get_packed_size(m));
    protobuf_c_message_pack(m, GRPC_SLICE_START_PTR(s));
    return s;
}

static int start_step(kserve_op *op, int step, fnw_error *err);

/* The answer to the check in flight, on the loop. */
static void on_answer(void *user, grpc_status_code code, const char *details, grpc_slice response)
{
    kserve_op *op = user;
    int step = op->check_step;
    op->check = NULL;
    fnw_kserve_op_idle(op);
    fnw_error err = { "" };
    int rc;
    if (code != GRPC_STATUS_OK) {
        char quoted[512];
        snprintf(quoted, sizeof quoted, "%s", details ? details : "");
        fnw_kserve_op_mask(op, quoted);
        rc = unreachable(op, code, step_name[step], quoted, &err);
    } else {
        static const ProtobufCMessageDescriptor *const desc[] = {
            &inference__server_ready_response__descriptor, &inference__model_ready_response__descriptor,
            &inference__model_metadata_response__descriptor
        };
        ProtobufCMessage *m = protobuf_c_message_unpack(desc[step], NULL, GRPC_SLICE_LENGTH(response),
                                                        GRPC_SLICE_START_PTR(response));
        if (!m) {
            rc = fnw_error_set(&err,
                               "operation '%s': the answer of the model server at '%s' to %s is not a "
                               "valid message",
                               KSERVE_OP, op->cfg.target, step_name[step]);
        } else {
            rc = step == STEP_SERVER  ? check_server(op, (Inference__ServerReadyResponse *)m, &err)
                 : step == STEP_MODEL ? check_model(op, (Inference__ModelReadyResponse *)m, &err)
                                      : check_metadata(op, (Inference__ModelMetadataResponse *)m, &err);
            protobuf_c_message_free_unpacked(m, NULL);
        }
    }
    int next = step + 1;
    if (rc == 0 && (next == STEP_MODEL || (next == STEP_METADATA && op->cfg.check_metadata))) {
        if (start_step(op, next, &err) == 0)
            return;
        rc = -1;
    }
    op->checked(op, rc == 0 ? NULL : &err);
}

static int start_step(kserve_op *op, int step, fnw_error *err)
{
    static const char *const method[] = { KSERVE_SERVICE "ServerReady", KSERVE_SERVICE "ModelReady",
                                          KSERVE_SERVICE "ModelMetadata" };
    op->check_step = step;
    if (fnw_rpc_unary(&op->rpc, op->channels[0], method[step], request_of(op, step),
                      (double)op->cfg.connect_timeout_ms / 1000.0, 1, on_answer, op, &op->check) != 0)
        return fnw_error_set(err, "operation '%s': gRPC refused the %s call to '%s'", KSERVE_OP,
                             step_name[step], op->cfg.target);
    fnw_kserve_op_busy(op);
    return 0;
}

int fnw_kserve_ready_start(kserve_op *op, fnw_kserve_ready_cb done, fnw_error *err)
{
    op->checked = done;
    return start_step(op, STEP_SERVER, err);
}

void fnw_kserve_ready_stop(kserve_op *op)
{
    if (!op->check)
        return;
    fnw_rpc_unary_cancel(op->check); /* rpc.c frees its record when gRPC returns it */
    op->check = NULL;
    fnw_kserve_op_idle(op);
}
