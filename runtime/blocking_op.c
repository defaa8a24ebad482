/* runtime/blocking_op.c — a blocking operation's instance seen as an
 * asynchronous one (blocking_op.h). Everything here runs on the loop thread
 * except run_on_thread(), which touches only its blocking call and puts it
 * into the loop's hand-off. */
#include <ev.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/blocking_internal.h"
#include "runtime/blocking_op.h"
#include "base/handoff.h"

struct fnw_blocking_op {
    fnw_operation table;     /* what the calls see; its state is this wrapper */
    const fnw_operation *op; /* the blocking operation */
    void *op_state;
    fnw_blocking_pool *pool;
    const fnw_type *input_type, *output_type;
    fnw_handoff *results;                     /* the loop's: blocking calls back from their threads */
    int held;                                 /* results is held while calls are out */
    size_t limit;                             /* calls on the pool at once */
    size_t out;                               /* submitted, not yet taken back */
    fnw_blocking_call *wait_head, *wait_tail; /* over the limit, in order */
    int draining, free_pending;
};

/* ---- pool thread ------------------------------------------------------------------ */

static void run_on_thread(fnw_blocking_job *job)
{
    fnw_blocking_call *bc = (fnw_blocking_call *)job;
    fnw_blocking_op *b = (fnw_blocking_op *)job->owner;
    if (!atomic_load(&bc->cancelled) && b->op->invoke_blocking(b->op_state, bc) != 0 && !bc->failed)
        fnw_blocking_fail(bc, "(no message)");
    fnw_handoff_put(b->results, &job->link, 1);
}

/* ---- results, on the loop ------------------------------------------------------- */

/* Emits bc's outputs into its call and ends the attempt. A refused emit
 * means the call has ended (it timed out: the fail only lets it go) or
 * fnworker could not keep the output (it has failed the bundle already). */
static void apply(fnw_blocking_call *bc)
{
    fnw_call *call = bc->call;
    static const uint8_t empty[1];
    fnw_call_set_op_data(call, NULL);
    if (bc->failed) {
        fnw_call_fail(call, "%s", bc->msg);
        return;
    }
    for (size_t off = 0; off < bc->out.len;) {
        fnw_blocking_out h;
        memcpy(&h, bc->out.p + off, sizeof h);
        off += sizeof h;
        const uint8_t *data = h.is_null ? NULL : h.len ? bc->out.p + off : empty;
        off += h.len;
        if (fnw_call_emit(call, h.input, data, h.len) != 0) {
            fnw_call_fail(call, "an output could not be kept");
            return;
        }
    }
    fnw_call_complete(call);
}

static void release_if_idle(fnw_blocking_op *b)
{
    if (b->out == 0 && b->held) {
        fnw_handoff_release(b->results);
        b->held = 0;
    }
}

static void submit(fnw_blocking_op *b, fnw_blocking_call *bc)
{
    if (!b->held) {
        fnw_handoff_hold(b->results);
        b->held = 1;
    }
    b->out++;
    bc->submitted = 1;
    if (fnw_blocking_pool_submit(b->pool, &bc->job) != 0) {
        b->out--;
        bc->submitted = 0;
        release_if_idle(b);
        fnw_call *call = bc->call;
        fnw_call_set_op_data(call, NULL);
        fnw_blocking_call_free(bc);
        fnw_call_fail(call, "no thread could be started for blocking operation '%s'", b->op->name);
    }
}

static void wait_unlink(fnw_blocking_op *b, fnw_blocking_call *bc)
{
    if (bc->wait_prev)
        bc->wait_prev->wait_next = bc->wait_next;
    else
        b->wait_head = bc->wait_next;
    if (bc->wait_next)
        bc->wait_next->wait_prev = bc->wait_prev;
    else
        b->wait_tail = bc->wait_prev;
    bc->wait_next = bc->wait_prev = NULL;
}

/* Submits waiting calls while there is room; drops those given up. */
static void admit(fnw_blocking_op *b)
{
    while (b->wait_head && b->out < b->limit) {
        fnw_blocking_call *bc = b->wait_head;
        wait_unlink(b, bc);
        if (bc->call)
            submit(b, bc);
        else
            fnw_blocking_call_free(bc);
    }
}

/* A blocking call back from its thread, on the loop. */
static void result_done(fnw_handoff_item *it, int ok)
{
    (void)ok;
    fnw_blocking_call *bc = (fnw_blocking_call *)it;
    fnw_blocking_op *b = (fnw_blocking_op *)bc->job.owner;
    b->out--;
    b->draining = 1;
    if (bc->call)
        apply(bc); /* may free the engine, and so this wrapper (deferred) */
    fnw_blocking_call_free(bc);
    b->draining = 0;
    if (b->free_pending) {
        free(b);
        return;
    }
    admit(b);
    release_if_idle(b);
}

static int is_result_of(const fnw_handoff_item *it, void *owner)
{
    return it->done == result_done && ((const fnw_blocking_call *)it)->job.owner == owner;
}

/* ---- the wrapper's operation table ------------------------------------------------ */

static void wrap_invoke(void *state, fnw_call *call)
{
    fnw_blocking_op *b = state;
    fnw_blocking_call *bc = fnw_blocking_call_new(b, call, b->input_type, b->output_type, run_on_thread);
    if (!bc) {
        fnw_call_fail(call, "out of memory copying the inputs of blocking operation '%s'", b->op->name);
        return;
    }
    bc->job.link.done = result_done;
    fnw_call_set_op_data(call, bc);
    if (b->out < b->limit && !b->wait_head) {
        submit(b, bc);
        return;
    }
    bc->wait_prev = b->wait_tail;
    if (b->wait_tail)
        b->wait_tail->wait_next = bc;
    else
        b->wait_head = bc;
    b->wait_tail = bc;
}

/* The call is given up: its blocking call is dropped when it comes back
 * (or skipped by the thread), or at once if it is still waiting for room:
 * calls that time out behind hung threads must not pile up there. */
static void wrap_cancel(void *state, fnw_call *call)
{
    fnw_blocking_op *b = state;
    fnw_blocking_call *bc = fnw_call_op_data(call);
    if (!bc)
        return;
    fnw_call_set_op_data(call, NULL);
    if (!bc->submitted) {
        wait_unlink(b, bc);
        fnw_blocking_call_free(bc);
        return;
    }
    bc->call = NULL;
    atomic_store(&bc->cancelled, 1);
}

static int wrap_on_timeout(void *state, fnw_call *call, fnw_error *err)
{
    fnw_blocking_op *b = state;
    return b->op->on_timeout(b->op_state, call, err);
}

/* ---- lifecycle ------------------------------------------------------------------- */

fnw_blocking_op *fnw_blocking_op_new(struct ev_loop *loop, const fnw_operation *op, void *op_state,
                                     const fnw_type *input_type, const fnw_type *output_type, size_t limit,
                                     fnw_blocking_pool *pool, fnw_error *err)
{
    fnw_blocking_op *b = pool ? calloc(1, sizeof *b) : NULL;
    if (!b || !(b->results = fnw_handoff_of(loop))) {
        free(b);
        return fnw_error_set(err, "out of memory starting blocking operation '%s'", op->name), NULL;
    }
    b->table = *op;
    b->table.invoke = wrap_invoke;
    b->table.invoke_blocking = NULL;
    b->table.cancel = wrap_cancel;
    b->table.on_timeout = op->on_timeout ? wrap_on_timeout : NULL;
    b->table.open = NULL;
    b->table.close = NULL;
    b->op = op;
    b->op_state = op_state;
    b->pool = pool;
    b->input_type = input_type;
    b->output_type = output_type;
    b->limit = limit ? limit : 1;
    return b;
}

const fnw_operation *fnw_blocking_op_table(const fnw_blocking_op *b)
{
    return &b->table;
}

void fnw_blocking_op_free(fnw_blocking_op *b)
{
    if (!b)
        return;
    fnw_blocking_job *j = fnw_blocking_pool_withdraw(b->pool, b);
    while (j) {
        fnw_blocking_job *next = (fnw_blocking_job *)j->link.next;
        b->out--;
        fnw_blocking_call_free((fnw_blocking_call *)j);
        j = next;
    }
    /* The rest are on threads (or back, not yet run): wait for each. */
    for (; b->out > 0; b->out--)
        fnw_blocking_call_free((fnw_blocking_call *)fnw_handoff_take_if(b->results, is_result_of, b));
    release_if_idle(b);
    while (b->wait_head) {
        fnw_blocking_call *bc = b->wait_head;
        b->wait_head = bc->wait_next;
        fnw_blocking_call_free(bc);
    }
    b->wait_tail = NULL;
    if (b->draining)
        b->free_pending = 1;
    else
        free(b);
}
