/* tests/unit/plugin/add_op.c — the `add` operation: INT inputs, each output
 * the input plus option `add` (default 1), null stays null. Asynchronous:
 * every attempt completes from a loop timer `delay_ms` later (0 = the next
 * loop iteration); `hang` = true leaves calls with the operation until the
 * engine cancels them. It reads its types through the accessors, decodes
 * and emits values, and takes scratch memory from the call arena: the parts
 * of fnworker.h an operation uses. */
#include <ev.h>
#include <stdlib.h>

#include "add_op.h"

int add_op_cancels;

typedef struct add_state {
    struct ev_loop *loop;
    int64_t add, delay_ms;
    int hang;
} add_state;

typedef struct add_timer {
    ev_timer w;
    add_state *st;
    fnw_call *call;
} add_timer;

static int add_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    static const char *const known[] = { "add", "delay_ms", "hang", NULL };
    char t[256] = "(none)";
    *state = NULL;
    if (fnw_options_check_known(env->options, known, "add", err) != 0)
        return -1;
    if (!env->input_type || fnw_type_kind(env->input_type) != FNW_INT) {
        if (env->input_type)
            fnw_type_format(env->input_type, t, sizeof t);
        return fnw_error_set(err, "operation 'add' takes INT inputs; the input type is %s", t);
    }
    if (!env->output_type || !fnw_type_equal(env->input_type, env->output_type))
        return fnw_error_set(err, "operation 'add' needs the output type to equal the input type");
    add_state *st = calloc(1, sizeof *st);
    if (!st)
        return fnw_error_set(err, "operation 'add': out of memory");
    st->loop = env->loop;
    if (fnw_options_int(env->options, "add", 1, INT32_MIN, INT32_MAX, &st->add, err) != 0 ||
        fnw_options_int(env->options, "delay_ms", 0, 0, 60000, &st->delay_ms, err) != 0 ||
        fnw_options_bool(env->options, "hang", 0, &st->hang, err) != 0) {
        free(st);
        return -1;
    }
    *state = st;
    return 0;
}

static void add_close(void *state)
{
    free(state);
}

/* The result of one call: every input plus st->add, encoded by fnworker. */
static void add_settle(add_state *st, fnw_call *call)
{
    size_t n = fnw_call_size(call);
    fnw_value *out = fnw_arena_alloc(fnw_call_arena(call), n * sizeof *out);
    if (!out) {
        fnw_call_fail(call, "add: out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        fnw_error err;
        if (fnw_call_decode(call, i, &out[i], &err) != 0) {
            fnw_call_fail(call, "add: %s", err.msg);
            return;
        }
        if (!out[i].is_null)
            out[i] = fnw_value_int(FNW_INT, (int32_t)(out[i].u.i + st->add));
        if (fnw_call_emit_value(call, i, &out[i], &err) != 0) {
            fnw_call_fail(call, "add: %s", err.msg);
            return;
        }
    }
    fnw_call_complete(call);
}

static void add_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    add_timer *t = w->data;
    add_state *st = t->st;
    fnw_call *call = t->call;
    fnw_call_set_op_data(call, NULL);
    free(t);
    add_settle(st, call);
}

static void add_invoke(void *state, fnw_call *call)
{
    add_state *st = state;
    if (st->hang)
        return;
    add_timer *t = malloc(sizeof *t);
    if (!t) {
        fnw_call_fail(call, "add: out of memory for a timer");
        return;
    }
    t->st = st;
    t->call = call;
    ev_timer_init(&t->w, add_timer_cb, (double)st->delay_ms / 1e3, 0.);
    t->w.data = t;
    fnw_call_set_op_data(call, t);
    ev_timer_start(fnw_call_loop(call), &t->w);
}

static void add_cancel(void *state, fnw_call *call)
{
    add_state *st = state;
    add_timer *t = fnw_call_op_data(call);
    add_op_cancels++;
    if (!t)
        return;
    ev_timer_stop(st->loop, &t->w);
    fnw_call_set_op_data(call, NULL);
    free(t);
}

static const fnw_operation add_op = {
    .name = "add",
    .summary = "adds option 'add' to every INT input (a test plugin)",
    .output_rule = FNW_OUTPUT_SAME_AS_INPUT,
    .sync = 0,
    .open = add_open,
    .close = add_close,
    .invoke = add_invoke,
    .on_timeout = NULL,
    .cancel = add_cancel,
};

int add_op_register(fnw_registry *r, fnw_error *err)
{
    return fnw_registry_add(r, &add_op, err);
}
