/* ops/kserve/kserve_op.c — the `kserve` operation: rows scored by a model
 * server speaking the Open Inference Protocol (KServe v2 / Triton) over
 * gRPC, one ModelInfer request per call (a batch's rows stacked along
 * dimension 0 by the tensor codec). This file owns the operation table and
 * the instance's life: open reads every option (kserve_config.c), connects
 * the channels (kserve_channels.c), sets up the gRPC calls on the
 * loop's completion queue and starts the checks that the server and the
 * model are ready and match the mapping (kserve_ready.c); open does
 * not wait for them. It owns the gate too: calls that arrive before the
 * checks end wait here (no request is sent) and are started, or failed for
 * good with the checks' message, when the verdict comes. close cancels what
 * is in flight and takes it all down again. The calls themselves are in
 * kserve_call.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pump.h"
#include "codecs/error.h"
#include "ops/builtins.h"
#include "ops/kserve/kserve_internal.h"

/* ---- the gate ------------------------------------------------------------------ */

/* The checks' verdict, on the loop: start or fail the calls that waited. */
static void on_checked(kserve_op *op, const fnw_error *err)
{
    op->gate = err ? KSERVE_FAILED : KSERVE_OPEN;
    if (err)
        snprintf(op->gate_error, sizeof op->gate_error, "%s", err->msg);
    /* a failed call may make the engine send the next one at once: it finds the gate decided */
    for (size_t i = 0; i < op->n_waiting; i++) {
        fnw_call *c = op->waiting[i];
        op->waiting[i] = NULL;
        if (!c)
            continue;
        if (op->gate == KSERVE_OPEN)
            fnw_kserve_call_start(op, c);
        else
            fnw_call_fail_after(c, FNW_CALL_NO_RETRY, "%s", op->gate_error);
    }
    op->n_waiting = 0;
}

static void kserve_invoke(void *state, fnw_call *call)
{
    kserve_op *op = state;
    if (op->gate == KSERVE_OPEN) {
        fnw_kserve_call_start(op, call);
        return;
    }
    if (op->gate == KSERVE_FAILED) {
        fnw_call_fail_after(call, FNW_CALL_NO_RETRY, "%s", op->gate_error);
        return;
    }
    if (op->n_waiting == op->cap_waiting) {
        size_t cap = op->cap_waiting ? 2 * op->cap_waiting : 16;
        fnw_call **w = realloc(op->waiting, cap * sizeof *w);
        if (!w) {
            fnw_call_fail(call, "operation '%s': out of memory", KSERVE_OP);
            return;
        }
        op->waiting = w;
        op->cap_waiting = cap;
    }
    op->waiting[op->n_waiting++] = call;
}

static void kserve_cancel(void *state, fnw_call *call)
{
    kserve_op *op = state;
    for (size_t i = 0; i < op->n_waiting; i++)
        if (op->waiting[i] == call) {
            op->waiting[i] = NULL;
            return;
        }
    fnw_kserve_call_cancel(op, call);
}

/* ---- open and close ------------------------------------------------------------ */

static void kserve_close(void *state)
{
    kserve_op *op = state;
    if (!op)
        return;
    fnw_kserve_ready_stop(op);
    if (op->rpc_init)
        fnw_rpc_free(&op->rpc); /* the engine has given its calls up: rpc.c frees their records later */
    if (op->in_flight)
        fnw_handoff_release(op->handoff);
    op->in_flight = 0;
    free(op->waiting);
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

/* The gRPC calls go on the loop's one completion queue. */
static int calls_start(kserve_op *op, fnw_error *err)
{
    fnw_pump *pump = fnw_pump_of(op->loop);
    if (!pump || !(op->handoff = fnw_handoff_of(op->loop)))
        return fnw_error_set(err, "operation '%s': cannot start the loop's gRPC thread", KSERVE_OP);
    fnw_rpc_init(&op->rpc, fnw_pump_cq(pump), op->cfg.auth_header ? "authorization" : NULL,
                 op->cfg.auth_header, NULL);
    op->rpc_init = 1;
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
    if (fnw_kserve_channels_start(op, err) != 0 || calls_start(op, err) != 0 ||
        fnw_kserve_ready_start(op, on_checked, err) != 0) {
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
    .invoke = kserve_invoke,
    .cancel = kserve_cancel,
};
