/* tests/unit/runtime/test_breaker.c — the circuit breaker's state machine
 * (runtime/breaker.h): opening by count and by rate, the cool-down, one
 * probe, closing and re-opening; times are given, not measured. */
#include <check.h>
#include <string.h>

#include "runtime/breaker.h"
#include "tests/unit/check_run.h"

static void init(fnw_breaker *b, int32_t failures, double rate, int32_t window, int64_t cooldown_ms)
{
    fnw_spec s = { 0 };
    s.capacity = 10;
    s.breaker.failures = failures;
    s.breaker.failure_rate = rate;
    s.breaker.window = window;
    s.breaker.cooldown_ms = cooldown_ms;
    fnw_error err;
    ck_assert_msg(fnw_spec_validate(&s, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(fnw_breaker_init(b, &s.breaker, &err), 0);
}

START_TEST(opens_after_n_consecutive_failures)
{
    fnw_breaker b;
    int ch;
    init(&b, 3, 0, 0, 1000);
    ck_assert_int_eq(fnw_breaker_record(&b, 0, 0, 1), 0);
    ck_assert_int_eq(fnw_breaker_record(&b, 0, 0, 1), 0);
    ck_assert_int_eq(fnw_breaker_record(&b, 1, 0, 1), 0); /* a success resets the count */
    ck_assert_int_eq(fnw_breaker_record(&b, 0, 0, 1), 0);
    ck_assert_int_eq(fnw_breaker_record(&b, 0, 0, 1), 0);
    ck_assert_int_eq(fnw_breaker_admit(&b, 1, &ch), FNW_BREAKER_GO);
    ck_assert_int_eq(fnw_breaker_record(&b, 0, 0, 2), 1);
    ck_assert_int_eq(b.state, FNW_BREAKER_OPEN);
    ck_assert_int_eq(fnw_breaker_admit(&b, 2.5, &ch), FNW_BREAKER_REJECT);
    ck_assert_int_eq(ch, 0);
    fnw_breaker_free(&b);
}
END_TEST

START_TEST(half_open_lets_one_probe_and_closes_on_success)
{
    fnw_breaker b;
    int ch;
    init(&b, 1, 0, 0, 1000);
    ck_assert_int_eq(fnw_breaker_record(&b, 0, 0, 10), 1);
    ck_assert_int_eq(fnw_breaker_admit(&b, 10.999, &ch), FNW_BREAKER_REJECT);
    ck_assert_int_eq(fnw_breaker_admit(&b, 11.0, &ch), FNW_BREAKER_PROBE);
    ck_assert_int_eq(ch, 1);
    ck_assert_int_eq(b.state, FNW_BREAKER_HALF_OPEN);
    ck_assert_int_eq(fnw_breaker_admit(&b, 11.0, &ch), FNW_BREAKER_REJECT); /* one probe only */
    /* a late answer of a call started before the breaker opened changes nothing */
    ck_assert_int_eq(fnw_breaker_record(&b, 0, 0, 11.1), 0);
    ck_assert_int_eq(fnw_breaker_record(&b, 1, 1, 11.2), 1);
    ck_assert_int_eq(b.state, FNW_BREAKER_CLOSED);
    ck_assert_int_eq(fnw_breaker_admit(&b, 11.2, &ch), FNW_BREAKER_GO);
    fnw_breaker_free(&b);
}
END_TEST

START_TEST(a_failed_probe_reopens_for_another_cooldown)
{
    fnw_breaker b;
    int ch;
    init(&b, 1, 0, 0, 1000);
    fnw_breaker_record(&b, 0, 0, 0);
    ck_assert_int_eq(fnw_breaker_admit(&b, 1.0, &ch), FNW_BREAKER_PROBE);
    ck_assert_int_eq(fnw_breaker_record(&b, 0, 1, 1.5), 1);
    ck_assert_int_eq(b.state, FNW_BREAKER_OPEN);
    ck_assert_int_eq(fnw_breaker_admit(&b, 2.4, &ch), FNW_BREAKER_REJECT);
    ck_assert_int_eq(fnw_breaker_admit(&b, 2.5, &ch), FNW_BREAKER_PROBE);
    /* a probe given up without a result: the next attempt probes */
    fnw_breaker_probe_lost(&b);
    ck_assert_int_eq(fnw_breaker_admit(&b, 2.6, &ch), FNW_BREAKER_PROBE);
    fnw_breaker_free(&b);
}
END_TEST

START_TEST(opens_on_the_failure_rate_over_a_full_window)
{
    fnw_breaker b;
    init(&b, 0, 0.5, 10, 1000);
    /* alternating: never 2 in a row, 5 of 10 failed once the window is full */
    int opened = 0, at = -1;
    for (int i = 0; i < 10 && !opened; i++) {
        opened = fnw_breaker_record(&b, i % 2, 0, 1);
        at = i;
    }
    ck_assert_int_eq(opened, 1);
    ck_assert_int_eq(at, 9); /* not before the window is full */
    ck_assert_int_eq(b.state, FNW_BREAKER_OPEN);
    ck_assert_ptr_nonnull(strstr(b.why, "5 of the last 10"));
    fnw_breaker_free(&b);
}
END_TEST

START_TEST(below_the_rate_stays_closed)
{
    fnw_breaker b;
    init(&b, 0, 0.5, 10, 1000);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(fnw_breaker_record(&b, i % 3 != 0, 0, 1), 0); /* 1 in 3 fails */
    ck_assert_int_eq(b.state, FNW_BREAKER_CLOSED);
    fnw_breaker_free(&b);
}
END_TEST

START_TEST(spec_checks_name_the_setting)
{
    fnw_spec s = { 0 };
    fnw_error err;
    s.breaker.failure_rate = 1.5;
    ck_assert_int_eq(fnw_spec_validate(&s, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "failure_rate"));
    memset(&s, 0, sizeof s);
    s.breaker.failures = -1;
    ck_assert_int_eq(fnw_spec_validate(&s, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "circuit_breaker failures"));
    memset(&s, 0, sizeof s);
    s.concurrency.min = 500; /* capacity 100 */
    ck_assert_int_eq(fnw_spec_validate(&s, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "concurrency min"));
    memset(&s, 0, sizeof s);
    s.fallback_json = "1";
    ck_assert_int_eq(fnw_spec_validate(&s, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "on_failure is not DEFAULT"));
    memset(&s, 0, sizeof s);
    s.on_failure = (fnw_failure_action)7;
    ck_assert_int_eq(fnw_spec_validate(&s, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "on_failure"));
    memset(&s, 0, sizeof s);
    s.breaker.failures = 5;
    ck_assert_int_eq(fnw_spec_validate(&s, &err), 0);
    ck_assert_int_eq(s.breaker.cooldown_ms, 5000);
    ck_assert_int_eq(s.breaker.window, 100);
    ck_assert_int_eq(s.concurrency.min, 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("breaker");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, opens_after_n_consecutive_failures);
    tcase_add_test(tc, half_open_lets_one_probe_and_closes_on_success);
    tcase_add_test(tc, a_failed_probe_reopens_for_another_cooldown);
    tcase_add_test(tc, opens_on_the_failure_rate_over_a_full_window);
    tcase_add_test(tc, below_the_rate_stays_closed);
    tcase_add_test(tc, spec_checks_name_the_setting);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
