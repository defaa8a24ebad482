/* ops/kserve/builtin_kserve_ready.c — what the `kserve` operation checks at
 * open, before any call: the server answers ServerReady and ModelReady
 * (each waiting at most connect_timeout_ms for the connection), and, with
 * check_metadata, every configured tensor matches the model's
 * ModelMetadata. These calls block the loop for at most the connect
 * timeout each: they run once per operation instance, when a bundle's
 * operations open, and a job whose server cannot be reached fails there,
 * naming the endpoint.
 */
#include <string.h>

#include "codecs/error.h"
#include "ops/kserve/builtin_kserve_internal.h"
#include "ops/kserve/tensor/tensor.h"

static int unreachable(const kserve_op *op, int st, const char *what, const char *details, fnw_error *err)
{
    if (st == GRPC_STATUS_DEADLINE_EXCEEDED || st == GRPC_STATUS_UNAVAILABLE)
        return fnw_error_set(err, "operation '%s': the model server at '%s' did not answer %s within %lld ms "
                             "(status %d: %.300s)", KSERVE_OP, op->cfg.target, what,
                             (long long)op->cfg.connect_timeout_ms, st, details);
    return fnw_error_set(err, "operation '%s': the model server at '%s' answered %s with status %d: %.300s",
                         KSERVE_OP, op->cfg.target, what, st, details);
}

static int server_ready(kserve_op *op, fnw_error *err)
{
    Inference__ServerReadyRequest req = INFERENCE__SERVER_READY_REQUEST__INIT;
    Inference__ServerReadyResponse *resp;
    char details[512];
    int st = fnw_kserve_unary(op, "ServerReady", &req.base, &inference__server_ready_response__descriptor,
                              (ProtobufCMessage **)&resp, details, sizeof details);
    if (st != GRPC_STATUS_OK)
        return unreachable(op, st, "ServerReady", details, err);
    int ready = resp->ready;
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    if (!ready)
        return fnw_error_set(err, "operation '%s': the model server at '%s' is not ready", KSERVE_OP,
                             op->cfg.target);
    return 0;
}

static int model_ready(kserve_op *op, fnw_error *err)
{
    Inference__ModelReadyRequest req = INFERENCE__MODEL_READY_REQUEST__INIT;
    req.name = op->cfg.model_name;
    req.version = op->cfg.model_version;
    Inference__ModelReadyResponse *resp;
    char details[512];
    int st = fnw_kserve_unary(op, "ModelReady", &req.base, &inference__model_ready_response__descriptor,
                              (ProtobufCMessage **)&resp, details, sizeof details);
    if (st != GRPC_STATUS_OK)
        return unreachable(op, st, "ModelReady", details, err);
    int ready = resp->ready;
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    if (!ready)
        return fnw_error_set(err, "operation '%s': model '%s'%s%s%s is not ready on the server at '%s' "
                             "(options 'model_name', 'model_version')", KSERVE_OP, op->cfg.model_name,
                             *op->cfg.model_version ? " (version '" : "", op->cfg.model_version,
                             *op->cfg.model_version ? "')" : "", op->cfg.target);
    return 0;
}

static int metadata(kserve_op *op, fnw_error *err)
{
    Inference__ModelMetadataRequest req = INFERENCE__MODEL_METADATA_REQUEST__INIT;
    req.name = op->cfg.model_name;
    req.version = op->cfg.model_version;
    Inference__ModelMetadataResponse *md;
    char details[512];
    int st = fnw_kserve_unary(op, "ModelMetadata", &req.base, &inference__model_metadata_response__descriptor,
                              (ProtobufCMessage **)&md, details, sizeof details);
    if (st != GRPC_STATUS_OK)
        return unreachable(op, st, "ModelMetadata", details, err);
    int rc = fnw_tensor_meta_check(op->cfg.plan, md, (int64_t)op->batch_size, err);
    protobuf_c_message_free_unpacked(&md->base, NULL);
    if (rc != 0)
        fnw_error_prefix(err, "operation '%s' (option check_metadata)", KSERVE_OP);
    return rc;
}

int fnw_kserve_check_ready(kserve_op *op, fnw_error *err)
{
    if (server_ready(op, err) != 0 || model_ready(op, err) != 0)
        return -1;
    return op->cfg.check_metadata ? metadata(op, err) : 0;
}
