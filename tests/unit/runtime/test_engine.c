/* tests/unit/runtime/test_engine.c — the async engine on a real ev_loop, the
 * element path: identity per element and batched, values through the call,
 * capacity and overflow, real concurrency, ordering, watermark segments,
 * bundles reusing an engine, and exact metrics. Timeouts, the bundle's end
 * and failures, and batch mode have files of their own (test_engine_*.c).
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

#include "tests/unit/test_engine_ops.h"

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

/* The pass-through (what the worker sets for the registry's identity)
 * forwards records without a call: the same outputs, metrics and order as
 * the call path, nulls included. */
START_TEST(test_identity_passthrough_same_as_call)
{
    fnw_engine_metrics m[2];
    int64_t wm_last[2];
    for (int pass = 0; pass < 2; pass++) {
        harness h;
        h_init(&h);
        fnw_spec s = h_spec();
        h_create(&h, "identity", &s, NO_OPTS);
        if (pass)
            fnw_engine_set_passthrough(h.e);
        h_inputs(&h, 1000);
        for (size_t i = 0; i < 1000; i++)
            h.wm[i] = (int64_t)i / 10;
        h_run_ok(&h, 5);
        assert_in_order(&h, 1000);
        wm_last[pass] = h.outs[999].wm;
        m[pass] = *h_m(&h);
        h_free(&h);
    }
    ck_assert_int_eq(wm_last[0], wm_last[1]);
    ck_assert_int_eq(m[1].records_in, m[0].records_in);
    ck_assert_int_eq(m[1].records_out, m[0].records_out);
    ck_assert_int_eq(m[1].calls, m[0].calls);
    ck_assert_int_eq(m[1].empty_results, m[0].empty_results);
    ck_assert_int_eq(m[1].inflight_high_water, m[0].inflight_high_water);
    ck_assert_int_eq(m[1].batch_size.count, m[0].batch_size.count);
    ck_assert_int_eq(m[1].batch_size.sum, m[0].batch_size.sum);
    ck_assert_int_eq(m[1].call_duration_ms.count, m[0].call_duration_ms.count);
    ck_assert_int_eq(m[1].records_in, 1000);

    harness h; /* a null value passes as a null */
    h_init(&h);
    fnw_spec s = h_spec();
    h_create(&h, "identity", &s, NO_OPTS);
    fnw_engine_set_passthrough(h.e);
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
    fnw_op_env env = { h.loop, &opts, h.type, lng, "t1", 0, 1, 0, NULL };
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
    fnw_op_env env2 = { h.loop, &opts, a, b, "t1", 0, 1, 0, NULL };
    ck_assert_int_eq(fnw_engine_new(h.loop, op, &s, &env2, &h.e, &h.err), -1);
    ck_assert_str_eq(h.err.msg, "operation 'identity' needs the output type to equal the input type: "
                                "input ROW<n INT>, output ROW<n STRING>");
    /* equal types are accepted */
    fnw_op_env env3 = { h.loop, &opts, a, a, "t1", 0, 1, 0, NULL };
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
    tcase_add_test(tc, test_identity_passthrough_same_as_call);
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
    tcase_add_test(tc, test_bundles_reuse_engine_and_reset_metrics);
    tcase_add_test(tc, test_metrics_exact);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(engine_suite());
}
