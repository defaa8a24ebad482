/* ops/kserve/builtin_kserve_gate.c — the `kserve` open checks, off the loop.
 * ServerReady, ModelReady and ModelMetadata (builtin_kserve_ready.c) are
 * blocking gRPC calls that may each wait connect_timeout_ms; made on the
 * loop they stalled every other bundle of the worker. open starts them on a
 * thread of their own and returns; calls that arrive before they finish
 * wait here (no request is sent), and are started, or failed for good with
 * the checks' message, when the thread reports back through an ev_async.
 * close cancels the check in flight (grpc_call_cancel) and joins the thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/error.h"
#include "ops/kserve/builtin_kserve_internal.h"

enum { GATE_CHECKING = 0, GATE_OPEN, GATE_FAILED };

static void *checker_main(void *arg)
{
    kserve_op *op = arg;
    fnw_error err = { "" };
    int rc = fnw_kserve_check_ready(op, &err);
    pthread_mutex_lock(&op->gate_mu);
    op->gate = rc == 0 ? GATE_OPEN : GATE_FAILED;
    if (rc != 0)
        snprintf(op->gate_error, sizeof op->gate_error, "%s", err.msg);
    pthread_mutex_unlock(&op->gate_mu);
    ev_async_send(op->loop, &op->gate_wake);
    return NULL;
}

static int gate_state(kserve_op *op)
{
    pthread_mutex_lock(&op->gate_mu);
    int g = op->gate;
    pthread_mutex_unlock(&op->gate_mu);
    return g;
}

/* On the loop: the checks are done; start or fail the calls that waited. */
static void on_gate(struct ev_loop *loop, ev_async *w, int revents)
{
    kserve_op *op = w->data;
    int g = gate_state(op);
    if (g == GATE_CHECKING)
        return;
    ev_async_stop(loop, w);
    /* a failed call may make the engine send the next one at once: it finds the gate decided */
    for (size_t i = 0; i < op->n_waiting; i++) {
        fnw_call *c = op->waiting[i];
        op->waiting[i] = NULL;
        if (!c)
            continue;
        if (g == GATE_OPEN)
            fnw_kserve_invoke_now(op, c);
        else
            fnw_call_fail_after(c, FNW_CALL_NO_RETRY, "%s", op->gate_error);
    }
    op->n_waiting = 0;
}

int fnw_kserve_gate_start(kserve_op *op, fnw_error *err)
{
    pthread_mutex_init(&op->gate_mu, NULL);
    op->gate_init = 1;
    ev_async_init(&op->gate_wake, on_gate);
    op->gate_wake.data = op;
    ev_async_start(op->loop, &op->gate_wake);
    if (pthread_create(&op->checker, NULL, checker_main, op) != 0) {
        ev_async_stop(op->loop, &op->gate_wake);
        return fnw_error_set(err, "operation '%s': cannot start the thread of its open checks", KSERVE_OP);
    }
    op->checker_started = 1;
    return 0;
}

void fnw_kserve_gate_stop(kserve_op *op)
{
    if (!op->gate_init)
        return;
    if (op->checker_started) {
        pthread_mutex_lock(&op->gate_mu);
        op->closing = 1;
        if (op->unary)
            grpc_call_cancel(op->unary, NULL);   /* the check in flight ends now */
        pthread_mutex_unlock(&op->gate_mu);
        pthread_join(op->checker, NULL);
        op->checker_started = 0;
    }
    ev_async_stop(op->loop, &op->gate_wake);
    free(op->waiting);   /* the engine has given its calls up before close */
    op->waiting = NULL;
    op->n_waiting = op->cap_waiting = 0;
    pthread_mutex_destroy(&op->gate_mu);
    op->gate_init = 0;
}

int fnw_kserve_gate_wait(kserve_op *op, fnw_error *err)
{
    if (op->checker_started) {
        pthread_join(op->checker, NULL);
        op->checker_started = 0;
    }
    if (gate_state(op) == GATE_OPEN)
        return 0;
    return fnw_error_set(err, "%s", op->gate_error);
}

int fnw_kserve_gate_track(kserve_op *op, grpc_call *c)
{
    pthread_mutex_lock(&op->gate_mu);
    int closing = op->closing;
    op->unary = closing ? NULL : c;
    pthread_mutex_unlock(&op->gate_mu);
    return closing ? -1 : 0;
}

void fnw_kserve_invoke(void *state, fnw_call *call)
{
    kserve_op *op = state;
    int g = gate_state(op);
    if (g == GATE_OPEN) {
        fnw_kserve_invoke_now(op, call);
        return;
    }
    if (g == GATE_FAILED) {
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

int fnw_kserve_gate_cancel(kserve_op *op, fnw_call *call)
{
    for (size_t i = 0; i < op->n_waiting; i++)
        if (op->waiting[i] == call) {
            op->waiting[i] = NULL;
            return 1;
        }
    return 0;
}
