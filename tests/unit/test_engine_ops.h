/* tests/unit/test_engine_ops.h — the fake operations and checks the engine
 * tests share (test_engine*.c): probe (hangs, counts invokes, cancels and
 * closes), liar (claims sync, never completes), hold (keeps its calls until
 * the test ends them), plus_one (decodes and emits values), and checks on
 * the outputs the harness recorded. */
#ifndef TEST_ENGINE_OPS_H
#define TEST_ENGINE_OPS_H

#include "tests/unit/test_engine_harness.h"

static const char *const NO_OPTS[] = { NULL };

/* ---- a probe operation: hangs until cancelled, counts what happens ---------- */
static int probe_invokes, probe_cancels, probe_closes;

static inline void probe_invoke(void *state, fnw_call *call)
{
    probe_invokes++;
}

static inline void probe_cancel(void *state, fnw_call *call)
{
    probe_cancels++;
}

static inline void probe_close(void *state)
{
    probe_closes++;
}

static const fnw_operation probe_op = {
    .name = "probe", .summary = "hangs; no timeout handler", .sync = 0,
    .open = NULL, .close = probe_close, .invoke = probe_invoke,
    .on_timeout = NULL, .cancel = probe_cancel,
};

/* A "synchronous" operation that does not complete. */
static inline void liar_invoke(void *state, fnw_call *call)
{
}

static const fnw_operation liar_op = {
    .name = "liar", .summary = "claims sync, never completes", .sync = 1,
    .invoke = liar_invoke,
};

/* An operation that keeps its calls until the test ends them, as a slow
 * service would; its timeout hook returns the input. */
static fnw_call *held[16];
static size_t n_held;

static inline void hold_invoke(void *state, fnw_call *call)
{
    ck_assert_uint_lt(n_held, 16);
    held[n_held++] = call;
}

static inline void hold_cancel(void *state, fnw_call *call)
{
    for (size_t i = 0; i < n_held; i++)
        if (held[i] == call)
            held[i] = NULL;
}

static inline int hold_on_timeout(void *state, fnw_call *call, fnw_error *err)
{
    const fnw_record *in = fnw_call_input(call, 0);
    fnw_call_emit(call, 0, in->data, in->len);
    return 0;
}

static const fnw_operation hold_op = {
    .name = "hold", .invoke = hold_invoke, .on_timeout = hold_on_timeout, .cancel = hold_cancel,
};

static inline int none_held(const harness *h)
{
    for (size_t i = 0; i < n_held; i++)
        if (held[i])
            return 0;
    return 1;
}

static inline int three_outputs(const harness *h)
{
    return h->n_out >= 3;
}

static inline int three_timeouts(const harness *h)
{
    return fnw_engine_metrics_get(h->e)->timeouts >= 3;
}

/* Decodes each INT input and emits value + 1 through the value API. */
static inline void plus_one_invoke(void *state, fnw_call *call)
{
    for (size_t i = 0; i < fnw_call_size(call); i++) {
        fnw_value v;
        fnw_error err;
        if (fnw_call_decode(call, i, &v, &err) != 0) {
            fnw_call_fail(call, "decode: %s", err.msg);
            return;
        }
        if (!v.is_null)
            v.u.i += 1;
        if (fnw_call_emit_value(call, i, &v, &err) != 0) {
            fnw_call_fail(call, "encode: %s", err.msg);
            return;
        }
    }
    fnw_call_complete(call);
}

static inline void plus_one_cancel(void *state, fnw_call *call)
{
}

static const fnw_operation plus_one_op = {
    .name = "plus_one", .sync = 0, .invoke = plus_one_invoke, .cancel = plus_one_cancel,
};

static inline void h_create_op(harness *h, const fnw_operation *op, const fnw_spec *spec)
{
    fnw_options opts = { 0, NULL };
    fnw_op_env env = { h->loop, &opts, h->type, h->type, "t1", spec->batched, 0, 0, NULL };
    int rc = fnw_engine_new(h->loop, op, spec, &env, &h->e, &h->err);
    ck_assert_msg(rc == 0, "%s", h->err.msg);
}

static inline void assert_in_order(const harness *h, size_t n)
{
    ck_assert_uint_eq(h->n_out, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(h->outs[i].v, (int32_t)i);
        ck_assert_int_eq(h->outs[i].ts, 1000 + (int64_t)i);
    }
}

static inline void assert_each_once(const harness *h, size_t n)
{
    ck_assert_uint_eq(h->n_out, n);
    unsigned char *seen = calloc(n, 1);
    for (size_t i = 0; i < h->n_out; i++) {
        int32_t v = h->outs[i].v;
        ck_assert(v >= 0 && (size_t)v < n);
        ck_assert_msg(!seen[v], "value %d emitted twice", v);
        seen[v] = 1;
        ck_assert_int_eq(h->outs[i].ts, 1000 + (int64_t)v);
    }
    free(seen);
}

static inline size_t inversions(const harness *h)
{
    size_t k = 0;
    for (size_t i = 1; i < h->n_out; i++)
        if (h->outs[i].v < h->outs[i - 1].v)
            k++;
    return k;
}


static inline void timeout_spec(fnw_spec *s, fnw_timeout_action a, int64_t ms)
{
    *s = h_spec();
    s->timeout_ms = ms;
    s->on_timeout = a;
}

#endif
