/* tests/unit/test_engine.c — the async engine on a real ev_loop: ordering,
 * watermark segments, capacity, real concurrency, timeouts with each action,
 * late completions, the end-of-bundle drain, failures, abort/destroy from
 * callbacks, batching and metrics.
 *
 * No assertion depends on how fast a loaded machine wakes the loop: times
 * are checked from below, concurrency as the ratio of call time to bundle
 * time, and "did not wait" by order (what had happened when the bundle
 * ended), with generous guards against hangs. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <stdlib.h>
#include <string.h>

#include "test_engine_harness.h"

static const char *const NO_OPTS[] = { NULL };

static void late_in_bundle_case(void);

/* ---- a probe operation: hangs until cancelled, counts what happens ---------- */
static int probe_invokes, probe_cancels, probe_closes;

static void probe_invoke(void *state, fnw_call *call)
{
    probe_invokes++;
}

static void probe_cancel(void *state, fnw_call *call)
{
    probe_cancels++;
}

static void probe_close(void *state)
{
    probe_closes++;
}

static const fnw_operation probe_op = {
    .name = "probe", .summary = "hangs; no timeout handler", .sync = 0,
    .open = NULL, .close = probe_close, .invoke = probe_invoke,
    .on_timeout = NULL, .cancel = probe_cancel,
};

/* A "synchronous" operation that does not complete. */
static void liar_invoke(void *state, fnw_call *call)
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

static void hold_invoke(void *state, fnw_call *call)
{
    ck_assert_uint_lt(n_held, 16);
    held[n_held++] = call;
}

static void hold_cancel(void *state, fnw_call *call)
{
    for (size_t i = 0; i < n_held; i++)
        if (held[i] == call)
            held[i] = NULL;
}

static int hold_on_timeout(void *state, fnw_call *call, fnw_error *err)
{
    const fnw_record *in = fnw_call_input(call, 0);
    fnw_call_emit(call, 0, in->data, in->len);
    return 0;
}

static const fnw_operation hold_op = {
    .name = "hold", .invoke = hold_invoke, .on_timeout = hold_on_timeout, .cancel = hold_cancel,
};

/* The operation ends every call it holds: emits the input, completes. */
static void complete_held_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    for (size_t i = 0; i < n_held; i++) {
        fnw_call *c = held[i];
        if (!c)
            continue;
        held[i] = NULL;
        const fnw_record *in = fnw_call_input(c, 0);
        fnw_call_emit(c, 0, in->data, in->len);
        fnw_call_complete(c);
    }
}

static int none_held(const harness *h)
{
    for (size_t i = 0; i < n_held; i++)
        if (held[i])
            return 0;
    return 1;
}

/* Completes the held calls from a loop callback, as a late service would. */
static void complete_held_late(harness *h)
{
    ev_timer t;
    ev_timer_init(&t, complete_held_cb, 0., 0.);
    ev_timer_start(h->loop, &t);
    h_run_until(h, none_held, 5);
    ev_timer_stop(h->loop, &t);
}

static int three_outputs(const harness *h)
{
    return h->n_out >= 3;
}

static int three_timeouts(const harness *h)
{
    return fnw_engine_metrics_get(h->e)->timeouts >= 3;
}

/* Decodes each INT input and emits value + 1 through the value API. */
static void plus_one_invoke(void *state, fnw_call *call)
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

static void plus_one_cancel(void *state, fnw_call *call)
{
}

static const fnw_operation plus_one_op = {
    .name = "plus_one", .sync = 0, .invoke = plus_one_invoke, .cancel = plus_one_cancel,
};

static void h_create_op(harness *h, const fnw_operation *op, const fnw_spec *spec)
{
    fnw_options opts = { 0, NULL };
    fnw_op_env env = { h->loop, &opts, h->type, h->type, "t1", spec->batched };
    int rc = fnw_engine_new(h->loop, op, spec, &env, &h->e, &h->err);
    ck_assert_msg(rc == 0, "%s", h->err.msg);
}

static void assert_in_order(const harness *h, size_t n)
{
    ck_assert_uint_eq(h->n_out, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(h->outs[i].v, (int32_t)i);
        ck_assert_int_eq(h->outs[i].ts, 1000 + (int64_t)i);
    }
}

static void assert_each_once(const harness *h, size_t n)
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

static size_t inversions(const harness *h)
{
    size_t k = 0;
    for (size_t i = 1; i < h->n_out; i++)
        if (h->outs[i].v < h->outs[i - 1].v)
            k++;
    return k;
}

/* ---- identity ------------------------------------------------------------------ */

START_TEST(test_identity_per_element)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    h_create(&h, "identity", &s, NO_OPTS);
    h_inputs(&h, 1000);
    for (size_t i = 0; i < 1000; i++)
        h.wm[i] = (int64_t)i / 10;
    h_run_ok(&h, 5);
    assert_in_order(&h, 1000);
    ck_assert_int_eq(h.outs[999].wm, 99);
    const fnw_engine_metrics *m = h_m(&h);
    ck_assert_int_eq(m->records_in, 1000);
    ck_assert_int_eq(m->records_out, 1000);
    ck_assert_int_eq(m->calls, 1000);
    ck_assert_int_eq(m->batches, 0);
    ck_assert_int_eq(m->empty_results, 0);
    ck_assert_int_eq(m->failures, 0);
    ck_assert_int_eq(m->inflight_high_water, 1);
    h_free(&h);
}
END_TEST

START_TEST(test_identity_null_value)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    h_create(&h, "identity", &s, NO_OPTS);
    h_inputs(&h, 0);
    h_begin(&h, "b1");
    fnw_record r = { 5, 6, NULL, 0 };
    ck_assert_int_eq(fnw_engine_push(h.e, &r), 0);
    fnw_engine_finish(h.e);
    ck_assert(h.finished);
    ck_assert_uint_eq(h.n_out, 1);
    ck_assert(h.outs[0].is_null);
    ck_assert_int_eq(h.outs[0].ts, 5);
    h_free(&h);
}
END_TEST

START_TEST(test_identity_type_mismatch)
{
    harness h;
    h_init(&h);
    fnw_type *lng = fnw_type_new(FNW_LONG);
    fnw_options opts = { 0, NULL };
    fnw_op_env env = { h.loop, &opts, h.type, lng, "t1", 0 };
    fnw_spec s = h_spec();
    const fnw_operation *op = fnw_registry_find(&h.reg, "identity", &h.err);
    ck_assert_int_eq(fnw_engine_new(h.loop, op, &s, &env, &h.e, &h.err), -1);
    ck_assert_ptr_null(h.e);
    ck_assert_str_eq(h.err.msg, "operation 'identity' needs the output type to equal the input type: "
                                "input INT, output LONG");

    /* rows are compared field by field, names included */
    fnw_type *a = fnw_type_new(FNW_ROW), *b = fnw_type_new(FNW_ROW);
    ck_assert_int_eq(fnw_type_add_child(a, fnw_type_new(FNW_INT), "n", &h.err), 0);
    ck_assert_int_eq(fnw_type_add_child(b, fnw_type_new(FNW_STRING), "n", &h.err), 0);
    fnw_op_env env2 = { h.loop, &opts, a, b, "t1", 0 };
    ck_assert_int_eq(fnw_engine_new(h.loop, op, &s, &env2, &h.e, &h.err), -1);
    ck_assert_str_eq(h.err.msg, "operation 'identity' needs the output type to equal the input type: "
                                "input ROW<n INT>, output ROW<n STRING>");
    /* equal types are accepted */
    fnw_op_env env3 = { h.loop, &opts, a, a, "t1", 0 };
    ck_assert_int_eq(fnw_engine_new(h.loop, op, &s, &env3, &h.e, &h.err), 0);
    fnw_type_free(a);
    fnw_type_free(b);
    fnw_type_free(lng);
    h_free(&h);
}
END_TEST

START_TEST(test_identity_rejects_options)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "delay_ms=5", NULL };
    ck_assert_int_eq(h_create_opts(&h, "identity", &s, kv), -1);
    ck_assert_str_eq(h.err.msg, "unknown option 'delay_ms' for operation 'identity': it takes no options");
    h_free(&h);
}
END_TEST

START_TEST(test_identity_batched)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.batched = 1;
    s.batch_size = 7;
    s.timeout_ms = 1000;
    h_create(&h, "identity", &s, NO_OPTS);
    h_inputs(&h, 20);
    h_run_ok(&h, 5);
    assert_in_order(&h, 20);
    ck_assert_int_eq(h_m(&h)->batches, 3);
    ck_assert_int_eq(h_m(&h)->batch_size.max, 7);
    ck_assert_int_eq(h_m(&h)->batch_size.min, 6);
    h_free(&h);
}
END_TEST

START_TEST(test_decode_and_emit_value)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.batched = 1;
    s.batch_size = 3;
    s.timeout_ms = 1000;
    h_create_op(&h, &plus_one_op, &s);
    h_inputs(&h, 7);
    h.vals[6] = -1;
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    fnw_record null_rec = { 1, 1, NULL, 0 };
    ck_assert_int_eq(fnw_engine_push(h.e, &null_rec), 0);
    fnw_engine_finish(h.e);
    h_loop(&h, 5);
    ck_assert_msg(h.finished, "%s", h.fail_msg);
    ck_assert_uint_eq(h.n_out, 8);
    for (size_t i = 0; i < 6; i++)
        ck_assert_int_eq(h.outs[i].v, (int32_t)i + 1);
    ck_assert_int_eq(h.outs[6].v, 0);
    ck_assert(h.outs[7].is_null);
    h_free(&h);
}
END_TEST

/* ---- capacity, concurrency, ordering --------------------------------------------- */

START_TEST(test_capacity_high_water)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.capacity = 8;
    static const char *const kv[] = { "delay_ms=5", "jitter_ms=5", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 300);
    h_run_ok(&h, 10);
    assert_in_order(&h, 300);
    ck_assert_int_eq(h_m(&h)->inflight_high_water, 8);
    ck_assert_int_gt(h.ready_calls, 0);
    h_free(&h);
}
END_TEST

START_TEST(test_default_capacity_is_100)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.unordered = 1;
    static const char *const kv[] = { "delay_ms=10", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 500);
    h_run_ok(&h, 10);
    assert_each_once(&h, 500);
    ck_assert_int_eq(h_m(&h)->inflight_high_water, 100);
    h_free(&h);
}
END_TEST

static void concurrency_case(int unordered)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.capacity = 10;
    s.unordered = unordered;
    static const char *const kv[] = { "delay_ms=50", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 100);
    h_run_ok(&h, 10);
    assert_each_once(&h, 100);
    /* 10 waves of 10 concurrent 50 ms calls: >= 0.5 s, with ~10 calls
     * running at once (serial would be 1, and 5 s) */
    ck_assert_msg(h.t_finished >= 0.49, "took %.3f s", h.t_finished);
    ck_assert_msg(h_concurrency(&h) >= 5, "%.1f calls at once", h_concurrency(&h));
    ck_assert_int_eq(h_m(&h)->inflight_high_water, 10);
    ck_assert_int_eq(h_m(&h)->call_duration_ms.min >= 49, 1);
    h_free(&h);
}

START_TEST(test_concurrency_is_real_ordered)
{
    concurrency_case(0);
}
END_TEST

START_TEST(test_concurrency_is_real_unordered)
{
    concurrency_case(1);
}
END_TEST

START_TEST(test_ordered_with_jitter_keeps_order)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.capacity = 50;
    static const char *const kv[] = { "jitter_ms=4", "seed=7", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 3000);
    h_run_ok(&h, 20);
    assert_in_order(&h, 3000);
    h_free(&h);
}
END_TEST

START_TEST(test_unordered_jitter_exactly_once_100k)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.unordered = 1;
    static const char *const kv[] = { "jitter_ms=2", "seed=42", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 100000);
    h_run_ok(&h, 60);
    assert_each_once(&h, 100000);
    ck_assert_msg(inversions(&h) > 100, "unordered mode emitted (almost) in input order");
    ck_assert_int_eq(h_m(&h)->records_out, 100000);
    ck_assert_int_le(h_m(&h)->inflight_high_water, 100);
    h_free(&h);
}
END_TEST

START_TEST(test_unordered_never_crosses_a_watermark)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.unordered = 1;
    s.capacity = 50;
    static const char *const kv[] = { "jitter_ms=3", "seed=3", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 1200);
    for (size_t i = 0; i < 1200; i++)
        h.wm[i] = (int64_t)(i / 20) * 10;   /* advances every 20 elements */
    h_run_ok(&h, 20);
    assert_each_once(&h, 1200);
    int32_t group = 0;
    for (size_t i = 0; i < h.n_out; i++) {
        int32_t g = h.outs[i].v / 20;
        ck_assert_msg(g >= group, "output %d (group %d) after group %d", h.outs[i].v, g, group);
        group = g;
        ck_assert_int_eq(h.outs[i].wm, (int64_t)g * 10);
    }
    ck_assert_msg(inversions(&h) > 10, "no reordering inside segments");
    h_free(&h);
}
END_TEST

START_TEST(test_overflow_push_without_space)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.capacity = 4;
    static const char *const kv[] = { "delay_ms=3", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 20);
    h_begin(&h, "b1");
    for (size_t i = 0; i < 20; i++)
        h_push_one(&h);       /* ignores has_space, like a chained upstream */
    ck_assert(!fnw_engine_has_space(h.e));
    h.finish_called = 1;
    fnw_engine_finish(h.e);
    h_loop(&h, 5);
    ck_assert(h.finished);
    assert_in_order(&h, 20);
    ck_assert_int_eq(h_m(&h)->inflight_high_water, 4);
    ck_assert_int_eq(h_m(&h)->records_in, 20);
    h_free(&h);
}
END_TEST

START_TEST(test_has_space_exactly_until_capacity)
{
    harness h;
    h_init(&h);
    probe_invokes = probe_cancels = probe_closes = 0;
    fnw_spec s = h_spec();
    s.capacity = 5;
    h_create_op(&h, &probe_op, &s);
    h_inputs(&h, 100);
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    ck_assert_uint_eq(h.next, 5);          /* five pushes, then no space */
    ck_assert_int_eq(probe_invokes, 5);
    ck_assert(!fnw_engine_has_space(h.e));
    h_push_one(&h);                         /* accepted into overflow, not invoked */
    ck_assert_int_eq(probe_invokes, 5);
    ck_assert_int_eq(h_m(&h)->inflight_high_water, 5);
    fnw_engine_abort(h.e);
    ck_assert_int_eq(probe_cancels, 5);
    h_free(&h);
}
END_TEST

/* ---- timeouts ------------------------------------------------------------------------ */

static void timeout_spec(fnw_spec *s, fnw_timeout_action a, int64_t ms)
{
    *s = h_spec();
    s->timeout_ms = ms;
    s->on_timeout = a;
}

START_TEST(test_timeout_fail)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    timeout_spec(&s, FNW_TIMEOUT_FAIL, 30);
    static const char *const kv[] = { "hang=true", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 1);
    h_run(&h, 5);
    ck_assert(h.failed);
    ck_assert(!h.finished);
    ck_assert_str_eq(h.fail_msg, "operation 'echo' timed out after 30 ms on input 0 (timestamp 1000) "
                                 "in transform 't1' of bundle 'b1'");
    ck_assert_int_eq(h_m(&h)->timeouts, 1);
    /* the failed bundle refuses input */
    fnw_record r = { 1, 1, NULL, 0 };
    ck_assert_int_eq(fnw_engine_push(h.e, &r), -1);
    h_free(&h);
}
END_TEST

START_TEST(test_timeout_empty)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    timeout_spec(&s, FNW_TIMEOUT_EMPTY, 20);
    static const char *const kv[] = { "hang=1", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, 0);
    ck_assert_int_eq(h_m(&h)->timeouts, 10);
    ck_assert_int_eq(h_m(&h)->empty_results, 10);
    ck_assert_int_eq(h_m(&h)->calls, 10);
    /* not before the timeout, and the ten timeouts ran side by side */
    ck_assert_msg(h.t_finished >= 0.019, "took %.3f s", h.t_finished);
    ck_assert_int_ge(h_m(&h)->call_duration_ms.min, 20);
    ck_assert_msg(h_concurrency(&h) >= 5, "%.1f calls at once", h_concurrency(&h));
    h_free(&h);   /* cancels the hung calls (ASan checks nothing leaks) */
}
END_TEST

START_TEST(test_timeout_operation_input)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    timeout_spec(&s, FNW_TIMEOUT_OPERATION, 20);
    static const char *const kv[] = { "hang=true", "timeout_result=input", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    assert_in_order(&h, 10);
    ck_assert_int_eq(h_m(&h)->timeouts, 10);
    ck_assert_int_eq(h_m(&h)->empty_results, 0);
    h_free(&h);
}
END_TEST

START_TEST(test_timeout_operation_empty)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    timeout_spec(&s, FNW_TIMEOUT_OPERATION, 20);
    static const char *const kv[] = { "hang=true", "timeout_result=empty", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, 0);
    ck_assert_int_eq(h_m(&h)->empty_results, 10);
    h_free(&h);
}
END_TEST

START_TEST(test_timeout_operation_without_handler)
{
    harness h;
    h_init(&h);
    probe_invokes = probe_cancels = probe_closes = 0;
    fnw_spec s;
    timeout_spec(&s, FNW_TIMEOUT_OPERATION, 20);
    h_create_op(&h, &probe_op, &s);
    h_inputs(&h, 1);
    h_run(&h, 5);
    ck_assert(h.failed);
    ck_assert_str_eq(h.fail_msg, "operation 'probe' timed out after 20 ms on input 0 (timestamp 1000) "
                                 "in transform 't1' of bundle 'b1': on_timeout is TIMEOUT_OPERATION "
                                 "but the operation has no timeout handler");
    /* the bundle failed: the call still with the operation was cancelled */
    ck_assert_int_eq(probe_cancels, 1);
    h_free(&h);
    ck_assert_int_eq(probe_closes, 1);
}
END_TEST

static void late_case(fnw_timeout_action a, size_t expect_out)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    timeout_spec(&s, a, 15);
    n_held = 0;
    h_create_op(&h, &hold_op, &s);
    h_inputs(&h, 5);
    h_run_ok(&h, 5);
    /* finish did not wait for the late calls: the operation still has them */
    ck_assert_uint_eq(n_held, 5);
    ck_assert(!none_held(&h));
    ck_assert_uint_eq(h.n_out, expect_out);
    complete_held_late(&h);   /* the operation completes the timed-out calls now */
    ck_assert_uint_eq(h.n_out, expect_out);
    ck_assert_int_eq(h_m(&h)->timeouts, 5);
    ck_assert_int_eq(h_m(&h)->records_out, (int64_t)expect_out);
    ck_assert_int_eq(h_m(&h)->call_duration_ms.count, 5);
    ck_assert_int_ge(h_m(&h)->call_duration_ms.min, 15);
    ck_assert_int_eq(h_m(&h)->empty_results, 5 - (int64_t)expect_out);
    /* the engine is fine for the next bundle */
    h_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, expect_out);
    ck_assert_int_eq(h_m(&h)->records_in, 5);
    ck_assert_int_eq(h_m(&h)->timeouts, 5);
    h_free(&h);   /* cancels the second bundle's held calls */
    ck_assert(none_held(&h));
}

START_TEST(test_late_completion_after_timeout_ignored)
{
    late_case(FNW_TIMEOUT_EMPTY, 0);
    late_case(FNW_TIMEOUT_OPERATION, 5);
    late_in_bundle_case();
}
END_TEST

START_TEST(test_timeout_does_not_fire_for_fast_calls)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    timeout_spec(&s, FNW_TIMEOUT_FAIL, 200);
    static const char *const kv[] = { "delay_ms=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 50);
    h_run_ok(&h, 5);
    assert_in_order(&h, 50);
    ck_assert_int_eq(h_m(&h)->timeouts, 0);
    h_free(&h);
}
END_TEST

/* ---- finish, failures, abort ---------------------------------------------------------- */

START_TEST(test_drain_at_finish)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "delay_ms=80", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 5);
    h_run_ok(&h, 5);
    assert_in_order(&h, 5);
    /* finish waited for the calls, which ran side by side, and ended in the
     * loop iteration of the last output */
    ck_assert_msg(h.t_finished >= 0.079, "drain took %.3f s", h.t_finished);
    ck_assert_msg(h_concurrency(&h) >= 2.5, "%.1f calls at once", h_concurrency(&h));
    ck_assert_uint_eq(h.finished_iter, h.outs[4].iter);
    h_free(&h);
}
END_TEST

START_TEST(test_finish_empty_bundle)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    h_create(&h, "echo", &s, NO_OPTS);
    h_inputs(&h, 0);
    h_begin(&h, "b1");
    fnw_engine_finish(h.e);
    ck_assert(h.finished);
    ck_assert_int_eq(h_m(&h)->records_in, 0);
    h_free(&h);
}
END_TEST

START_TEST(test_operation_error_message)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.capacity = 1;
    static const char *const kv[] = { "fail_every=3", "fail_message=boom: service said no", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run(&h, 5);
    ck_assert(h.failed);
    ck_assert_str_eq(h.fail_msg, "operation 'echo' failed on input 2 (timestamp 1002) in transform 't1' "
                                 "of bundle 'b1': boom: service said no");
    ck_assert_int_eq(h_m(&h)->failures, 1);
    ck_assert_uint_eq(h.n_out, 2);
    h_free(&h);
}
END_TEST

START_TEST(test_sync_operation_must_complete)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    h_create_op(&h, &liar_op, &s);
    h_inputs(&h, 3);
    h_run(&h, 5);
    ck_assert(h.failed);
    ck_assert_str_eq(h.fail_msg, "operation 'liar' is synchronous but returned without completing its call "
                                 "on input 0 (timestamp 1000) in transform 't1' of bundle 'b1'");
    h_free(&h);
}
END_TEST

START_TEST(test_abort_cancels_and_engine_is_reusable)
{
    harness h;
    h_init(&h);
    probe_invokes = probe_cancels = probe_closes = 0;
    fnw_spec s = h_spec();
    h_create_op(&h, &probe_op, &s);
    h_inputs(&h, 5);
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    ck_assert_int_eq(probe_invokes, 5);
    fnw_engine_abort(h.e);
    ck_assert_int_eq(probe_cancels, 5);
    ck_assert(!h.failed && !h.finished);
    /* a new bundle starts clean */
    h_begin(&h, "b2");
    ck_assert(fnw_engine_has_space(h.e));
    fnw_engine_finish(h.e);
    ck_assert(h.finished);
    h_free(&h);
    ck_assert_int_eq(probe_closes, 1);
}
END_TEST

static void abort_after_three(harness *h, const fnw_record *out)
{
    if (h->n_out == 3)
        fnw_engine_abort(h->e);
}

START_TEST(test_abort_from_emit_callback)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.capacity = 10;
    static const char *const kv[] = { "delay_ms=5", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h.on_emit = abort_after_three;
    h_begin(&h, "b1");
    h_feed(&h);
    h_run_until(&h, three_outputs, 5);
    h_run_for(&h, 0.03);   /* nothing more comes after the abort */
    ck_assert_uint_eq(h.n_out, 3);
    ck_assert(!h.failed && !h.finished);
    h.on_emit = NULL;
    h_run_ok(&h, 5);
    assert_in_order(&h, 10);
    h_free(&h);
}
END_TEST

static void destroy_on_finished(void *user)
{
    harness *h = user;
    h->finished = 1;
    fnw_engine_free(h->e);
    h->e = NULL;
    ev_break(h->loop, EVBREAK_ALL);
}

START_TEST(test_destroy_from_finished_callback)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "delay_ms=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    fnw_engine_sink sink = h_sink(&h);
    sink.finished = destroy_on_finished;
    fnw_engine_start(h.e, &sink, "b1");
    h_feed(&h);
    h_loop(&h, 5);
    ck_assert(h.finished);
    ck_assert_ptr_null(h.e);
    ck_assert_uint_eq(h.n_out, 10);
    h_free(&h);
}
END_TEST

static void destroy_after_two(harness *h, const fnw_record *out)
{
    if (h->n_out == 2) {
        fnw_engine_free(h->e);
        h->e = NULL;
        ev_break(h->loop, EVBREAK_ALL);
    }
}

START_TEST(test_destroy_from_emit_callback)
{
    /* unordered, delayed: the destroy happens inside an echo timer callback */
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.unordered = 1;
    s.timeout_ms = 500;
    static const char *const kv[] = { "delay_ms=3", "jitter_ms=3", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 50);
    h.on_emit = destroy_after_two;
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    h_loop(&h, 5);
    ck_assert_ptr_null(h.e);
    ck_assert_uint_eq(h.n_out, 2);
    h_run_for(&h, 0.05);   /* no timer of the engine or echo fires after */
    ck_assert_uint_eq(h.n_out, 2);
    h_free(&h);
}
END_TEST

static void restart_on_failed(void *user, const char *message)
{
    harness *h = user;
    h->failed++;
    snprintf(h->fail_msg, sizeof h->fail_msg, "%s", message);
    fnw_engine_abort(h->e);
    ev_break(h->loop, EVBREAK_ALL);
}

START_TEST(test_abort_from_failed_callback)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "fail_every=4", "delay_ms=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    fnw_engine_sink sink = h_sink(&h);
    sink.failed = restart_on_failed;
    fnw_engine_start(h.e, &sink, "b1");
    h_feed(&h);
    h_loop(&h, 5);
    ck_assert_int_eq(h.failed, 1);   /* reported once */
    h_run_for(&h, 0.03);
    ck_assert_int_eq(h.failed, 1);
    ck_assert(!h.finished);
    h_free(&h);
}
END_TEST

START_TEST(test_destroy_with_calls_in_flight)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.timeout_ms = 1000;
    s.retry.kind = FNW_RETRY_FIXED_DELAY;
    s.retry.max_attempts = 5;
    s.retry.delay_ms = 50;
    s.retry.on_error = 1;
    static const char *const kv[] = { "delay_ms=30", "fail_attempts=1", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 20);
    h_begin(&h, "b1");
    h_feed(&h);
    h_run_for(&h, 0.04);   /* some calls wait for a retry, some are with echo */
    h_free(&h);            /* ASan: nothing leaks, no timer fires later */
}
END_TEST

START_TEST(test_bundles_reuse_engine_and_reset_metrics)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.unordered = 1;
    static const char *const kv[] = { "jitter_ms=1", NULL };
    h_create(&h, "echo", &s, kv);
    for (int b = 0; b < 3; b++) {
        h_inputs(&h, 200);
        h_run_ok(&h, 5);
        assert_each_once(&h, 200);
        ck_assert_int_eq(h_m(&h)->records_in, 200);
        ck_assert_int_eq(h_m(&h)->calls, 200);
    }
    h_free(&h);
}
END_TEST

/* ---- per element and batch mode through echo ------------------------------------ */

START_TEST(test_repeat_outputs)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "repeat=3", "delay_ms=1", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, 30);
    for (size_t i = 0; i < 30; i++)
        ck_assert_int_eq(h.outs[i].v, (int32_t)(i / 3));
    ck_assert_int_eq(h_m(&h)->records_out, 30);
    h_free(&h);

    h_init(&h);
    static const char *const kv0[] = { "repeat=0", NULL };
    h_create(&h, "echo", &s, kv0);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, 0);
    ck_assert_int_eq(h_m(&h)->empty_results, 10);
    h_free(&h);
}
END_TEST

static void batch_spec(fnw_spec *s, int32_t size, int64_t batch_timeout)
{
    *s = h_spec();
    s->batched = 1;
    s->batch_size = size;
    s->timeout_ms = 2000;
    s->batch_timeout_ms = batch_timeout;
}

START_TEST(test_batch_mode)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 4, 0);
    static const char *const kv[] = { "delay_ms=5", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    assert_in_order(&h, 10);
    const fnw_engine_metrics *m = h_m(&h);
    ck_assert_int_eq(m->batches, 3);
    ck_assert_int_eq(m->calls, 3);
    ck_assert_int_eq(m->batch_size.count, 3);
    ck_assert_int_eq(m->batch_size.sum, 10);
    ck_assert_int_eq(m->batch_size.min, 2);
    ck_assert_int_eq(m->batch_size.max, 4);
    ck_assert_int_eq(m->records_out, 10);
    h_free(&h);
}
END_TEST

START_TEST(test_batch_short_result)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 4, 0);
    static const char *const kv[] = { "short_result=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    static const int32_t want[] = { 0, 1, 4, 5, 8, 9 };
    ck_assert_uint_eq(h.n_out, 6);
    for (size_t i = 0; i < 6; i++)
        ck_assert_int_eq(h.outs[i].v, want[i]);
    ck_assert_int_eq(h_m(&h)->empty_results, 4);
    h_free(&h);
}
END_TEST

START_TEST(test_batch_timeout_flushes_partial_batch)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 10, 30);
    h_create(&h, "echo", &s, NO_OPTS);
    h_inputs(&h, 3);
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    /* the batch timer sends the partial batch: the bundle is still open */
    h_run_until(&h, three_outputs, 5);
    ck_assert(!h.finish_called && !h.finished);
    assert_in_order(&h, 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_msg(h.outs[i].at >= 0.029, "output at %.3f s", h.outs[i].at);
    ck_assert_int_eq(h_m(&h)->batches, 1);
    h.finish_called = 1;
    fnw_engine_finish(h.e);
    ck_assert(h.finished);
    ck_assert_int_eq(h_m(&h)->batches, 1);
    h_free(&h);
}
END_TEST

START_TEST(test_batch_larger_than_capacity_does_not_deadlock)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 10, 0);
    s.capacity = 4;
    static const char *const kv[] = { "delay_ms=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 20);
    h_run_ok(&h, 5);
    assert_in_order(&h, 20);
    ck_assert_int_eq(h_m(&h)->batches, 5);
    ck_assert_int_eq(h_m(&h)->batch_size.max, 4);
    ck_assert_int_eq(h_m(&h)->inflight_high_water, 4);
    h_free(&h);
}
END_TEST

START_TEST(test_batch_keeps_full_batches_under_capacity)
{
    /* capacity 6, batches of 4: the 2 elements left when the queue is full
     * wait for the batch to fill rather than go as a short batch */
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 4, 0);
    s.capacity = 6;
    static const char *const kv[] = { "delay_ms=5", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 40);
    h_run_ok(&h, 5);
    assert_in_order(&h, 40);
    ck_assert_int_eq(h_m(&h)->batches, 10);
    ck_assert_int_eq(h_m(&h)->batch_size.min, 4);
    ck_assert_int_eq(h_m(&h)->inflight_high_water, 6);
    h_free(&h);
}
END_TEST

static void late_in_bundle_case(void)
{
    /* the late completions arrive while the bundle is still open */
    harness h;
    h_init(&h);
    fnw_spec s;
    timeout_spec(&s, FNW_TIMEOUT_EMPTY, 15);
    n_held = 0;
    h_create_op(&h, &hold_op, &s);
    h_inputs(&h, 3);
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    h_run_until(&h, three_timeouts, 5);
    complete_held_late(&h);
    ck_assert(!h.finished && !h.failed);
    ck_assert_uint_eq(h.n_out, 0);
    h.finish_called = 1;
    fnw_engine_finish(h.e);
    ck_assert(h.finished);
    ck_assert_uint_eq(h.n_out, 0);
    ck_assert_int_eq(h_m(&h)->timeouts, 3);
    ck_assert_int_eq(h_m(&h)->empty_results, 3);
    ck_assert_int_eq(h_m(&h)->call_duration_ms.count, 3);
    h_free(&h);
}

START_TEST(test_batch_timeout_fail_names_inputs)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 4, 0);
    s.timeout_ms = 20;
    static const char *const kv[] = { "hang=yes", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 3);
    h_run(&h, 5);
    ck_assert(h.failed);
    ck_assert_str_eq(h.fail_msg, "operation 'echo' timed out after 20 ms on inputs 0..2 "
                                 "(timestamps 1000, 1001, 1002) in transform 't1' of bundle 'b1'");
    h_free(&h);
}
END_TEST

START_TEST(test_batch_error_message)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 2, 0);
    static const char *const kv[] = { "fail_every=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 4);
    h.ts[3] = INT64_MIN;
    h_run(&h, 5);
    ck_assert(h.failed);
    ck_assert_str_eq(h.fail_msg, "operation 'echo' failed on inputs 2..3 (timestamps 1002, none) "
                                 "in transform 't1' of bundle 'b1': echo: injected failure");
    h_free(&h);
}
END_TEST

START_TEST(test_batch_unordered_with_watermarks)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 5, 0);
    s.unordered = 1;
    s.capacity = 40;
    static const char *const kv[] = { "jitter_ms=4", "seed=9", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 400);
    for (size_t i = 0; i < 400; i++)
        h.wm[i] = (int64_t)(i / 50);
    h_run_ok(&h, 10);
    assert_each_once(&h, 400);
    int32_t group = 0;
    for (size_t i = 0; i < h.n_out; i++) {
        ck_assert_int_ge(h.outs[i].v / 50, group);
        group = h.outs[i].v / 50;
    }
    h_free(&h);
}
END_TEST

START_TEST(test_metrics_exact)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.timeout_ms = 5000;
    s.retry.kind = FNW_RETRY_FIXED_DELAY;
    s.retry.max_attempts = 3;
    s.retry.delay_ms = 2;
    s.retry.on_error = 1;
    s.retry.on_empty = 1;
    /* attempt 1 fails, attempt 2 is empty, attempt 3 succeeds with 2 outputs */
    static const char *const kv[] = { "fail_attempts=1", "empty_attempts=2", "repeat=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 25);
    h_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, 50);
    const fnw_engine_metrics *m = h_m(&h);
    ck_assert_int_eq(m->records_in, 25);
    ck_assert_int_eq(m->records_out, 50);
    ck_assert_int_eq(m->calls, 25);
    ck_assert_int_eq(m->retries, 50);
    ck_assert_int_eq(m->failures, 0);
    ck_assert_int_eq(m->timeouts, 0);
    ck_assert_int_eq(m->empty_results, 0);
    ck_assert_int_eq(m->batches, 0);
    ck_assert_int_eq(m->call_duration_ms.count, 25);
    ck_assert_int_ge(m->call_duration_ms.min, 4);
    h_free(&h);
}
END_TEST

static Suite *engine_suite(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("engine");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_identity_per_element);
    tcase_add_test(tc, test_identity_null_value);
    tcase_add_test(tc, test_identity_type_mismatch);
    tcase_add_test(tc, test_identity_rejects_options);
    tcase_add_test(tc, test_identity_batched);
    tcase_add_test(tc, test_decode_and_emit_value);
    tcase_add_test(tc, test_capacity_high_water);
    tcase_add_test(tc, test_default_capacity_is_100);
    tcase_add_test(tc, test_concurrency_is_real_ordered);
    tcase_add_test(tc, test_concurrency_is_real_unordered);
    tcase_add_test(tc, test_ordered_with_jitter_keeps_order);
    tcase_add_test(tc, test_unordered_jitter_exactly_once_100k);
    tcase_add_test(tc, test_unordered_never_crosses_a_watermark);
    tcase_add_test(tc, test_overflow_push_without_space);
    tcase_add_test(tc, test_has_space_exactly_until_capacity);
    tcase_add_test(tc, test_timeout_fail);
    tcase_add_test(tc, test_timeout_empty);
    tcase_add_test(tc, test_timeout_operation_input);
    tcase_add_test(tc, test_timeout_operation_empty);
    tcase_add_test(tc, test_timeout_operation_without_handler);
    tcase_add_test(tc, test_late_completion_after_timeout_ignored);
    tcase_add_test(tc, test_timeout_does_not_fire_for_fast_calls);
    tcase_add_test(tc, test_drain_at_finish);
    tcase_add_test(tc, test_finish_empty_bundle);
    tcase_add_test(tc, test_operation_error_message);
    tcase_add_test(tc, test_sync_operation_must_complete);
    tcase_add_test(tc, test_abort_cancels_and_engine_is_reusable);
    tcase_add_test(tc, test_abort_from_emit_callback);
    tcase_add_test(tc, test_destroy_from_finished_callback);
    tcase_add_test(tc, test_destroy_with_calls_in_flight);
    tcase_add_test(tc, test_destroy_from_emit_callback);
    tcase_add_test(tc, test_abort_from_failed_callback);
    tcase_add_test(tc, test_bundles_reuse_engine_and_reset_metrics);
    tcase_add_test(tc, test_repeat_outputs);
    tcase_add_test(tc, test_batch_mode);
    tcase_add_test(tc, test_batch_short_result);
    tcase_add_test(tc, test_batch_timeout_flushes_partial_batch);
    tcase_add_test(tc, test_batch_larger_than_capacity_does_not_deadlock);
    tcase_add_test(tc, test_batch_keeps_full_batches_under_capacity);
    tcase_add_test(tc, test_batch_timeout_fail_names_inputs);
    tcase_add_test(tc, test_batch_error_message);
    tcase_add_test(tc, test_batch_unordered_with_watermarks);
    tcase_add_test(tc, test_metrics_exact);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(engine_suite());
}
