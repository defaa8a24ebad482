/* ops/kserve/builtin_kserve.c — the `kserve` operation: rows scored by a model
 * server speaking the Open Inference Protocol (KServe v2 / Triton) over
 * gRPC, one ModelInfer request per call (a batch's rows stacked along
 * dimension 0 by the tensor codec). This file owns the operation table and
 * the instance's life: open reads every option (kserve_config.c), connects
 * the channels, starts the completion queue's pump thread and the thread
 * that checks that the server and the model are ready and match the mapping
 * (builtin_kserve_gate.c: open does not wait for it); close cancels
 * what is in flight and takes it all down again. The calls themselves are
 * in builtin_kserve_call.c, the gRPC plumbing in builtin_kserve_grpc.c.
 */
#include <stdlib.h>
#include <string.h>

#include "codecs/error.h"
#include "ops/kserve/builtin_kserve_internal.h"
#include "ops/builtins.h"

static void kserve_close(void *state)
{
    kserve_op *op = state;
    if (!op)
        return;
    fnw_kserve_gate_stop(op);
    fnw_kserve_pump_stop(op);
    fnw_kserve_channels_stop(op);
    fnw_kserve_config_free(&op->cfg);
    free(op);
}

static int check_types(const fnw_op_env *env, fnw_error *err)
{
    if (fnw_type_kind(env->input_type) != FNW_ROW || fnw_type_kind(env->output_type) != FNW_ROW)
        return fnw_error_set(err, "operation '%s' needs ROW input and output types", KSERVE_OP);
    return 0;
}

static int kserve_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    if (check_types(env, err) != 0)
        return -1;
    kserve_op *op = calloc(1, sizeof *op);
    if (!op)
        return fnw_error_set(err, "out of memory");
    if (fnw_kserve_config_init(&op->cfg, env, KSERVE_OP, err) != 0) {
        free(op);
        return -1;
    }
    op->loop = env->loop;
    op->timeout_ms = env->timeout_ms;
    op->batch_size = env->batch_size ? env->batch_size : 1;
    if (!op->loop) {
        kserve_close(op);
        return fnw_error_set(err, "operation '%s' needs an event loop", KSERVE_OP);
    }
    if (fnw_kserve_channels_start(op, err) != 0 || fnw_kserve_pump_start(op, err) != 0 ||
        fnw_kserve_gate_start(op, err) != 0) {
        kserve_close(op);
        return -1;
    }
    *state = op;
    return 0;
}

const fnw_operation fnw_op_kserve = {
    .name = KSERVE_OP,
    .summary = "score rows with a KServe v2 / Triton model over gRPC (ModelInfer, batched along dimension 0)",
    .output_rule = FNW_OUTPUT_DECLARED,
    .open = kserve_open,
    .close = kserve_close,
    .invoke = fnw_kserve_invoke,
    .cancel = fnw_kserve_cancel,
};
