/* tests/unit/runtime/test_engine_timeout.c — per-call timeouts with each action
 * (fail, empty, the operation's handler), timed-out calls cancelled at once
 * (none pile up across bundles), and fast calls that never see their timer.
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
    /* an input dropped by its timeout is a timeout, not a success */
    ck_assert_int_eq(h_m(&h)->successes, 0);
    /* not before the timeout, and the ten timeouts ran side by side */
    ck_assert_msg(h.t_finished >= 0.019, "took %.3f s", h.t_finished);
    ck_assert_int_ge(h_m(&h)->call_duration_ms.min, 20);
    ck_assert_msg(h_concurrency(&h) >= 5, "%.1f calls at once", h_concurrency(&h));
    h_free(&h);   /* frees the engine, which cancels the hung calls */
}
END_TEST

/* inflight_calls is the calls out when the metrics are read: the hung
 * ones mid-bundle, none once they are cancelled and a new bundle starts. */
START_TEST(test_inflight_calls_gauge)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    timeout_spec(&s, FNW_TIMEOUT_EMPTY, 30000);
    static const char *const kv[] = { "hang=true", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 5);
    h_begin(&h, "b1");
    h_feed(&h);
    h_run_for(&h, 0.01);
    ck_assert(!h.finished);
    ck_assert_int_eq(h_m(&h)->inflight_calls, 5);
    fnw_engine_abort(h.e); /* cancels them */
    h_inputs(&h, 0);
    h_begin(&h, "b2");
    ck_assert_int_eq(h_m(&h)->inflight_calls, 0);
    h_free(&h);
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

/* A call that times out while the operation has it is cancelled then and
 * there: the bundle ends without waiting for it, and nothing of it is left
 * with the operation or the engine. */
static void gave_up_case(fnw_timeout_action a, size_t expect_out)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    timeout_spec(&s, a, 15);
    n_held = 0;
    h_create_op(&h, &hold_op, &s);
    h_inputs(&h, 5);
    h_run_ok(&h, 5);
    ck_assert_uint_eq(n_held, 5);
    ck_assert(none_held(&h));          /* each one cancelled at its timeout */
    fnw_engine_stats st;
    fnw_engine_stats_get(h.e, ev_now(h.loop), &st);
    ck_assert_uint_eq(st.calls, 0);
    ck_assert_uint_eq(h.n_out, expect_out);
    ck_assert_int_eq(h_m(&h)->timeouts, 5);
    ck_assert_int_eq(h_m(&h)->records_out, (int64_t)expect_out);
    ck_assert_int_eq(h_m(&h)->call_duration_ms.count, 5);
    ck_assert_int_ge(h_m(&h)->call_duration_ms.min, 15);
    ck_assert_int_eq(h_m(&h)->empty_results, 5 - (int64_t)expect_out);
    /* the engine is fine for the next bundle */
    n_held = 0;
    h_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, expect_out);
    ck_assert_int_eq(h_m(&h)->records_in, 5);
    ck_assert_int_eq(h_m(&h)->timeouts, 5);
    ck_assert(none_held(&h));
    h_free(&h);
}

static void gave_up_in_bundle_case(void)
{
    /* the calls time out while the bundle is still open: given up at once */
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
    ck_assert(none_held(&h));
    fnw_engine_stats st;
    fnw_engine_stats_get(h.e, ev_now(h.loop), &st);
    ck_assert_uint_eq(st.calls, 0);
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

START_TEST(test_timed_out_call_is_cancelled)
{
    gave_up_case(FNW_TIMEOUT_EMPTY, 0);
    gave_up_case(FNW_TIMEOUT_OPERATION, 5);
    gave_up_in_bundle_case();
}
END_TEST

/* A service that never answers, bundle after bundle: every bundle ends with
 * counted empty results and leaves no call behind (they used to pile up,
 * each holding its input, until the worker stopped). Counts only, no clock:
 * the calls in flight after each bundle, and echo's timers (a long delay
 * that the timeout cuts short) come back for reuse. */
static void hung_bundles_case(const char *const *kv)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    timeout_spec(&s, FNW_TIMEOUT_EMPTY, 2);
    s.capacity = 50;
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 200);
    for (int b = 0; b < 25; b++) {
        h_run_ok(&h, 30);
        ck_assert_uint_eq(h.n_out, 0);
        ck_assert_int_eq(h_m(&h)->timeouts, 200);
        ck_assert_int_eq(h_m(&h)->empty_results, 200);
        fnw_engine_stats st;
        fnw_engine_stats_get(h.e, ev_now(h.loop), &st);
        ck_assert_msg(st.calls == 0, "bundle %d left %zu call(s) in flight", b + 1, st.calls);
        ck_assert_uint_eq(st.queued, 0);
    }
    h_free(&h);
}

START_TEST(test_hung_calls_do_not_pile_up)
{
    static const char *const hang[] = { "hang=true", NULL };
    static const char *const slow[] = { "delay_ms=600000", NULL };
    hung_bundles_case(hang);
    hung_bundles_case(slow);
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

static Suite *engine_timeout_suite(void)
{
    Suite *s = suite_create("engine_timeout");
    TCase *tc = tcase_create("engine_timeout");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_timeout_fail);
    tcase_add_test(tc, test_timeout_empty);
    tcase_add_test(tc, test_inflight_calls_gauge);
    tcase_add_test(tc, test_timeout_operation_input);
    tcase_add_test(tc, test_timeout_operation_empty);
    tcase_add_test(tc, test_timeout_operation_without_handler);
    tcase_add_test(tc, test_timed_out_call_is_cancelled);
    tcase_add_test(tc, test_hung_calls_do_not_pile_up);
    tcase_add_test(tc, test_timeout_does_not_fire_for_fast_calls);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(engine_timeout_suite());
}
