/* tests/unit/runtime/test_retry.c — PyFlink's retry arithmetic (can_retry boundary,
 * fixed and exponential backoff with its clamp) and retries through the
 * engine: counted exactly, on error and on empty results, on loop timers,
 * never past the call's overall timeout.
 *
 * Waits are checked from below (in loop time, which the timers use) and by
 * order, never against a wall-clock window a loaded machine could miss. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdlib.h>
#include <string.h>

#include "tests/unit/test_engine_harness.h"

static fnw_retry fixed(int32_t max, int64_t delay)
{
    fnw_retry r;
    memset(&r, 0, sizeof r);
    r.kind = FNW_RETRY_FIXED_DELAY;
    r.max_attempts = max;
    r.delay_ms = delay;
    r.on_error = 1;
    return r;
}

static fnw_retry expo(int32_t max, int64_t delay, int64_t max_delay, double mult)
{
    fnw_retry r = fixed(max, delay);
    r.kind = FNW_RETRY_EXPONENTIAL;
    r.max_delay_ms = max_delay;
    r.multiplier = mult;
    return r;
}

START_TEST(test_can_retry_boundary)
{
    fnw_retry r = fixed(3, 10);
    ck_assert(fnw_spec_retry_can_retry(&r, 1));
    ck_assert(fnw_spec_retry_can_retry(&r, 3));
    ck_assert(!fnw_spec_retry_can_retry(&r, 4));
    fnw_retry none;
    memset(&none, 0, sizeof none);
    ck_assert(!fnw_spec_retry_can_retry(&none, 1));
    ck_assert_int_eq(fnw_spec_retry_backoff_ms(&none, 1, 0), -1);
}
END_TEST

START_TEST(test_fixed_backoff)
{
    fnw_retry r = fixed(5, 250);
    int64_t prev = 0;
    for (int a = 1; a <= 5; a++) {
        prev = fnw_spec_retry_backoff_ms(&r, a, prev);
        ck_assert_int_eq(prev, 250);
    }
}
END_TEST

START_TEST(test_exponential_backoff)
{
    fnw_retry r = expo(10, 100, 500, 2.0);
    static const int64_t want[] = { 100, 200, 400, 500, 500, 500 };
    int64_t prev = 0;
    for (int a = 1; a <= 6; a++) {
        prev = fnw_spec_retry_backoff_ms(&r, a, prev);
        ck_assert_int_eq(prev, want[a - 1]);
    }
    /* int(min(last * multiplier, max)) truncates */
    fnw_retry f = expo(10, 100, 100000, 1.5);
    static const int64_t want2[] = { 100, 150, 225, 337, 505 };
    prev = 0;
    for (int a = 1; a <= 5; a++) {
        prev = fnw_spec_retry_backoff_ms(&f, a, prev);
        ck_assert_int_eq(prev, want2[a - 1]);
    }
    /* attempt 1 is always the initial delay, whatever came before */
    ck_assert_int_eq(fnw_spec_retry_backoff_ms(&r, 1, 400), 100);
}
END_TEST

static void run_echo(harness *h, const fnw_spec *s, const char *const *kv, size_t n)
{
    h_init(h);
    h_create(h, "echo", s, kv);
    h_inputs(h, n);
    h_run(h, 10);
}

static fnw_spec retry_spec(fnw_retry r, int64_t timeout_ms)
{
    fnw_spec s;
    memset(&s, 0, sizeof s);
    s.retry = r;
    s.timeout_ms = timeout_ms;
    return s;
}

START_TEST(test_retry_on_error_counted)
{
    harness h;
    fnw_spec s = retry_spec(fixed(3, 5), 5000);
    static const char *const kv[] = { "fail_attempts=2", NULL };
    run_echo(&h, &s, kv, 30);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_uint_eq(h.n_out, 30);
    for (size_t i = 0; i < 30; i++)
        ck_assert_int_eq(h.outs[i].v, (int32_t)i);
    ck_assert_int_eq(h_m(&h)->retries, 60);
    ck_assert_int_eq(h_m(&h)->calls, 30);
    ck_assert_int_eq(h_m(&h)->failures, 0);
    /* one success per call, however many attempts it took */
    ck_assert_int_eq(h_m(&h)->successes, 30);
    ck_assert_int_eq(h_m(&h)->call_latency_us.count, 30);
    /* two back-offs of 5 ms each: the latency includes them */
    ck_assert_int_ge(h_m(&h)->call_latency_sum_us, 30 * 10000);
    ck_assert_int_eq(h_m(&h)->inflight_calls, 0);
    h_free(&h);
}
END_TEST

START_TEST(test_max_attempts_allows_n_plus_one_invocations)
{
    harness h;
    /* max_attempts=3: 4 invocations; 3 failing attempts then success */
    fnw_spec s = retry_spec(fixed(3, 2), 5000);
    static const char *const kv[] = { "fail_attempts=3", NULL };
    run_echo(&h, &s, kv, 1);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_uint_eq(h.n_out, 1);
    ck_assert_int_eq(h_m(&h)->retries, 3);
    h_free(&h);

    /* 4 failing attempts: the 4th failure is final */
    static const char *const kv4[] = { "fail_attempts=4", NULL };
    run_echo(&h, &s, kv4, 1);
    ck_assert(h.failed);
    ck_assert_int_eq(h_m(&h)->retries, 3);
    ck_assert_int_eq(h_m(&h)->failures, 1);
    ck_assert_str_eq(h.fail_msg, "operation 'echo' failed on input 0 (timestamp 1000) in transform 't1' "
                                 "of bundle 'b1': echo: injected failure");
    h_free(&h);
}
END_TEST

START_TEST(test_retry_on_empty_only)
{
    harness h;
    fnw_retry r = fixed(2, 3);
    r.on_error = 0;
    r.on_empty = 1;
    fnw_spec s = retry_spec(r, 5000);
    static const char *const kv[] = { "empty_attempts=1", NULL };
    run_echo(&h, &s, kv, 10);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_uint_eq(h.n_out, 10);
    ck_assert_int_eq(h_m(&h)->retries, 10);
    ck_assert_int_eq(h_m(&h)->empty_results, 0);
    h_free(&h);

    /* errors are not retried when only on_empty is set */
    static const char *const kvf[] = { "fail_attempts=1", NULL };
    run_echo(&h, &s, kvf, 1);
    ck_assert(h.failed);
    ck_assert_int_eq(h_m(&h)->retries, 0);
    h_free(&h);

    /* still empty after the last retry: a counted empty result */
    static const char *const kve[] = { "empty_attempts=10", NULL };
    run_echo(&h, &s, kve, 4);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_uint_eq(h.n_out, 0);
    ck_assert_int_eq(h_m(&h)->retries, 8);
    ck_assert_int_eq(h_m(&h)->empty_results, 4);
    h_free(&h);
}
END_TEST

/* Fails the first rec_fails attempts of every call at once, then emits its
 * input; records the loop time of every invocation. */
static int rec_fails, rec_n;
static double rec_at[64];

static void rec_invoke(void *state, fnw_call *call)
{
    if (rec_n < 64)
        rec_at[rec_n] = ev_now(fnw_call_loop(call));
    rec_n++;
    if (fnw_call_attempt(call) <= rec_fails) {
        fnw_call_fail(call, "recorder: attempt %d", fnw_call_attempt(call));
        return;
    }
    const fnw_record *in = fnw_call_input(call, 0);
    fnw_call_emit(call, 0, in->data, in->len);
    fnw_call_complete(call);
}

static void rec_cancel(void *state, fnw_call *call)
{
}

static const fnw_operation rec_op = {
    .name = "recorder", .sync = 0, .invoke = rec_invoke, .cancel = rec_cancel,
};

/* One input through rec_op, failing its first `fails` attempts. */
static void run_recorder(harness *h, const fnw_spec *s, int fails)
{
    rec_fails = fails;
    rec_n = 0;
    h_init(h);
    fnw_options opts = { 0, NULL };
    fnw_op_env env = { h->loop, &opts, h->type, h->type, "t1", 0, 1, 0, NULL };
    ck_assert_int_eq(fnw_engine_new(h->loop, &rec_op, s, &env, &h->e, &h->err), 0);
    h_inputs(h, 1);
    h_run(h, 10);
}

/* Timers never fire early: each wait is at least its backoff (half a
 * millisecond for the loop's real-time/monotonic bookkeeping). */
static void assert_waits(const double *backoff_s, int n)
{
    ck_assert_int_eq(rec_n, n + 1);
    for (int k = 0; k < n; k++)
        ck_assert_msg(rec_at[k + 1] - rec_at[k] >= backoff_s[k] - 0.0005,
                      "wait %d was %.4f s, backoff %.3f s", k + 1, rec_at[k + 1] - rec_at[k], backoff_s[k]);
}

START_TEST(test_exponential_timing)
{
    harness h;
    /* backoffs 10, 20, 40, 40: every wait at least its own, so at least 110 ms */
    fnw_spec s = retry_spec(expo(5, 10, 40, 2.0), 5000);
    run_recorder(&h, &s, 4);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_int_eq(h_m(&h)->retries, 4);
    static const double want[] = { 0.010, 0.020, 0.040, 0.040 };
    assert_waits(want, 4);
    ck_assert_msg(h.t_finished >= 0.109, "took %.3f s", h.t_finished);
    ck_assert_int_ge(h_m(&h)->call_duration_ms.max, 109);
    h_free(&h);

    /* the clamp: unclamped, the second backoff would be 10 s (and the 5 s
     * timeout would fail the bundle) */
    s = retry_spec(expo(5, 10, 40, 1000.0), 5000);
    run_recorder(&h, &s, 4);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    static const double clamped[] = { 0.010, 0.040, 0.040, 0.040 };
    assert_waits(clamped, 4);
    ck_assert_msg(h.t_finished < 4.0, "took %.3f s", h.t_finished);
    h_free(&h);
}
END_TEST

START_TEST(test_retries_stop_at_timeout)
{
    /* retries due at 100 and 200 ms, the timeout at 290: the retry before
     * the timeout has a 90 ms margin (a retry the loop wakes only after the
     * timeout fails the bundle instead, as the timeout has then passed) */
    harness h;
    fnw_spec s = retry_spec(fixed(1000, 100), 290);
    s.on_timeout = FNW_TIMEOUT_EMPTY;
    run_recorder(&h, &s, 1000);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert(h.finished);
    ck_assert_uint_eq(h.n_out, 0);
    ck_assert_int_eq(h_m(&h)->timeouts, 1);
    ck_assert_int_eq(h_m(&h)->empty_results, 1);
    /* at least one retry, at most one per 100 ms of the 290 ms */
    ck_assert_int_ge(h_m(&h)->retries, 1);
    ck_assert_int_le(h_m(&h)->retries, 2);
    ck_assert_int_eq(rec_n, h_m(&h)->retries + 1);
    static const double fixed_s[] = { 0.100, 0.100 };
    assert_waits(fixed_s, rec_n - 1);
    /* retried until the timeout: a retry due before it would have run first
     * (the loop runs due timers in order), so the last attempt started no
     * earlier than one backoff before the timeout */
    double last = rec_at[rec_n - 1] - rec_at[0];
    ck_assert_msg(last + 0.100 >= 0.290 - 0.0005, "last attempt at %.4f s", last);
    /* and stopped there: 1000 attempts would take 100 s */
    ck_assert_msg(h.t_finished >= 0.289 && h.t_finished < 4.0, "took %.3f s", h.t_finished);
    h_free(&h);
}
END_TEST

START_TEST(test_retry_in_batch_mode)
{
    harness h;
    fnw_spec s = retry_spec(fixed(2, 3), 5000);
    s.batched = 1;
    s.batch_size = 4;
    static const char *const kv[] = { "fail_attempts=1", NULL };
    run_echo(&h, &s, kv, 10);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_uint_eq(h.n_out, 10);
    ck_assert_int_eq(h_m(&h)->batches, 3);
    ck_assert_int_eq(h_m(&h)->retries, 3);
    h_free(&h);
}
END_TEST

/* Emits its input, then fails on the first attempt; succeeds after. */
static void flaky_invoke(void *state, fnw_call *call)
{
    const fnw_record *in = fnw_call_input(call, 0);
    fnw_call_emit(call, 0, in->data, in->len);
    if (fnw_call_attempt(call) == 1)
        fnw_call_fail(call, "flaky: attempt %d", fnw_call_attempt(call));
    else
        fnw_call_complete(call);
}

static void flaky_cancel(void *state, fnw_call *call)
{
}

static const fnw_operation flaky_op = {
    .name = "flaky", .sync = 0, .invoke = flaky_invoke, .cancel = flaky_cancel,
};

START_TEST(test_failed_attempt_outputs_are_discarded)
{
    harness h;
    h_init(&h);
    fnw_spec s = retry_spec(fixed(2, 3), 5000);
    fnw_options opts = { 0, NULL };
    fnw_op_env env = { h.loop, &opts, h.type, h.type, "t1", 0, 1, 0, NULL };
    ck_assert_int_eq(fnw_engine_new(h.loop, &flaky_op, &s, &env, &h.e, &h.err), 0);
    h_inputs(&h, 5);
    h_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, 5);
    for (size_t i = 0; i < 5; i++)
        ck_assert_int_eq(h.outs[i].v, (int32_t)i);
    ck_assert_int_eq(h_m(&h)->retries, 5);
    h_free(&h);
}
END_TEST

static Suite *retry_suite(void)
{
    Suite *s = suite_create("retry");
    TCase *tc = tcase_create("retry");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_can_retry_boundary);
    tcase_add_test(tc, test_fixed_backoff);
    tcase_add_test(tc, test_exponential_backoff);
    tcase_add_test(tc, test_retry_on_error_counted);
    tcase_add_test(tc, test_max_attempts_allows_n_plus_one_invocations);
    tcase_add_test(tc, test_retry_on_empty_only);
    tcase_add_test(tc, test_exponential_timing);
    tcase_add_test(tc, test_retries_stop_at_timeout);
    tcase_add_test(tc, test_retry_in_batch_mode);
    tcase_add_test(tc, test_failed_attempt_outputs_are_discarded);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(retry_suite());
}
