/* tests/unit/ops/test_echo.c — the built-in `echo` operation: option validation
 * (each message names the option), the same-type check, and the behaviour
 * of its knobs through the engine. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdlib.h>
#include <string.h>

#include "tests/unit/test_engine_harness.h"

static void expect_open_error(const char *const *kv, const char *msg)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    ck_assert_int_eq(h_create_opts(&h, "echo", &s, kv), -1);
    ck_assert_ptr_null(h.e);
    ck_assert_str_eq(h.err.msg, msg);
    h_free(&h);
}

START_TEST(test_option_errors_name_the_option)
{
    static const char *const a[] = { "delay_ms=fast", NULL };
    expect_open_error(a, "operation 'echo': option 'delay_ms' must be a whole number, got 'fast'");
    static const char *const b[] = { "jitter_ms=-1", NULL };
    expect_open_error(b, "operation 'echo': option 'jitter_ms' must be between 0 and 86400000, got -1");
    static const char *const c[] = { "hang=maybe", NULL };
    expect_open_error(c, "operation 'echo': option 'hang' must be true or false, got 'maybe'");
    static const char *const d[] = { "timeout_result=zero", NULL };
    expect_open_error(d, "operation 'echo': option 'timeout_result' must be one of input, empty; got 'zero'");
    static const char *const e[] = { "repeat=-2", NULL };
    expect_open_error(e, "operation 'echo': option 'repeat' must be between 0 and 1000000, got -2");
    static const char *const f[] = { "delay=5", NULL };
    expect_open_error(f, "unknown option 'delay' for operation 'echo'; known options: delay_ms, jitter_ms, "
                         "seed, repeat, fail_every, fail_message, fail_attempts, empty_attempts, hang, "
                         "short_result, timeout_result, delay_per_item_us");
    static const char *const g[] = { "short_result=-5", NULL };
    expect_open_error(g, "operation 'echo': option 'short_result' must be between -1 and 2147483647, got -5");
}
END_TEST

START_TEST(test_type_check)
{
    harness h;
    h_init(&h);
    fnw_type *str = fnw_type_new(FNW_STRING);
    fnw_options opts = { 0, NULL };
    fnw_op_env env = { h.loop, &opts, h.type, str, "t1", 0, 1, 0, NULL };
    fnw_spec s = h_spec();
    const fnw_operation *op = fnw_registry_find(&h.reg, "echo", &h.err);
    ck_assert_int_eq(fnw_engine_new(h.loop, op, &s, &env, &h.e, &h.err), -1);
    ck_assert_str_eq(h.err.msg, "operation 'echo' needs the output type to equal the input type: "
                                "input INT, output STRING");
    fnw_type_free(str);
    h_free(&h);
}
END_TEST

START_TEST(test_all_options_accepted)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.timeout_ms = 1000;
    s.on_timeout = FNW_TIMEOUT_OPERATION;
    static const char *const kv[] = {
        "delay_ms=1", "jitter_ms=1", "seed=-5", "repeat=1", "fail_every=0", "fail_message=x",
        "fail_attempts=0", "empty_attempts=0", "hang=false", "short_result=-1",
        "timeout_result=input", "delay_per_item_us=10", NULL,
    };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 20);
    h_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, 20);
    h_free(&h);
}
END_TEST

START_TEST(test_zero_delay_completes_at_once)
{
    /* no timer: the whole bundle finishes inside the pushes and finish */
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    h_create(&h, "echo", &s, NULL);
    h_inputs(&h, 5000);
    h_begin(&h, "b1");
    h_feed(&h);
    ck_assert(h.finished);
    ck_assert_uint_eq(h.n_out, 5000);
    ck_assert_int_eq(h_m(&h)->inflight_high_water, 1);
    h_free(&h);
}
END_TEST

static int mark_fired(const harness *h)
{
    return h->mark_n_out >= 0;
}

START_TEST(test_delay_per_item)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.batched = 1;
    s.batch_size = 10;
    s.timeout_ms = 5000;
    static const char *const kv[] = { "delay_per_item_us=6000", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    /* one call of 10 items waits 10 x 6 ms once: not before 60 ms (a lower
     * bound), and its timer is due before a mark at 90 ms (an order check
     * that a per-item delay applied item after item would fail) */
    h_begin(&h, "b1");
    h_mark(&h, 0.09);
    h_feed(&h);
    h_loop(&h, 5);
    ck_assert_msg(h.finished && !h.failed, "%s", h.fail_msg);
    ck_assert_uint_eq(h.n_out, 10);
    ck_assert_int_eq(h_m(&h)->calls, 1);
    ck_assert_msg(h.t_finished >= 0.059, "took %.3f s", h.t_finished);
    ck_assert_int_ge(h_m(&h)->call_duration_ms.min, 60);
    h_run_until(&h, mark_fired, 5);
    ck_assert_int_eq(h.mark_n_out, 10);
    h_free(&h);
}
END_TEST

START_TEST(test_jitter_bounds)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.unordered = 1;
    static const char *const kv[] = { "delay_ms=10", "jitter_ms=10", "seed=11", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 100);
    /* every delay is 10..20 ms: no call settles before 10 ms (a lower
     * bound), every call's timer is due before a mark at 21 ms (an order
     * check), and the delays differ (unordered outputs come in completion
     * order, which libev keeps however loaded the machine is) */
    h_begin(&h, "b1");
    h_mark(&h, 0.021);
    h_feed(&h);
    h_loop(&h, 5);
    ck_assert_msg(h.finished && !h.failed, "%s", h.fail_msg);
    ck_assert_uint_eq(h.n_out, 100);
    ck_assert_int_ge(h_m(&h)->call_duration_ms.min, 9);
    h_run_until(&h, mark_fired, 5);
    ck_assert_int_eq(h.mark_n_out, 100);
    size_t out_of_order = 0;
    for (size_t i = 0; i < 100; i++)
        out_of_order += h.outs[i].v != (int32_t)i;
    ck_assert_uint_gt(out_of_order, 50);
    h_free(&h);
}
END_TEST

START_TEST(test_fail_every_counts_invocations)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.capacity = 1;
    static const char *const kv[] = { "fail_every=5", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run(&h, 5);
    ck_assert(h.failed);
    ck_assert_uint_eq(h.n_out, 4);
    ck_assert_str_eq(h.fail_msg, "operation 'echo' failed on input 4 (timestamp 1004) in transform 't1' "
                                 "of bundle 'b1': echo: injected failure");
    h_free(&h);
}
END_TEST

START_TEST(test_hang_never_completes)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "hang=true", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 3);
    h_begin(&h, "b1");
    h_feed(&h);
    h_loop(&h, 0.1);   /* no timeout: the bundle never ends */
    ck_assert(h.guard_fired);
    ck_assert(!h.finished && !h.failed);
    ck_assert_uint_eq(h.n_out, 0);
    fnw_engine_abort(h.e);
    h_free(&h);
}
END_TEST

static Suite *echo_suite(void)
{
    Suite *s = suite_create("echo");
    TCase *tc = tcase_create("echo");
    tcase_add_test(tc, test_option_errors_name_the_option);
    tcase_add_test(tc, test_type_check);
    tcase_add_test(tc, test_all_options_accepted);
    tcase_add_test(tc, test_zero_delay_completes_at_once);
    tcase_add_test(tc, test_delay_per_item);
    tcase_add_test(tc, test_jitter_bounds);
    tcase_add_test(tc, test_fail_every_counts_invocations);
    tcase_add_test(tc, test_hang_never_completes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(echo_suite());
}
