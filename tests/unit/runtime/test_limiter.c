/* tests/unit/runtime/test_limiter.c — the adaptive concurrency limit and
 * the Retry-After pause (runtime/limiter.h): AIMD arithmetic, one decrease
 * per burst, the bounds, the pause; times are given, not measured. */
#include <check.h>

#include "runtime/limiter.h"
#include "tests/unit/check_run.h"

START_TEST(starts_at_max_and_allows_up_to_it)
{
    fnw_limiter l;
    fnw_limiter_init(&l, 1, 1, 100);
    ck_assert_int_eq(fnw_limiter_limit(&l), 100);
    ck_assert(fnw_limiter_allows(&l, 99, 0));
    ck_assert(!fnw_limiter_allows(&l, 100, 0));
}
END_TEST

START_TEST(a_burst_halves_once)
{
    fnw_limiter l;
    fnw_limiter_init(&l, 1, 1, 100);
    /* 50 calls started at t=1 all come back refused at t=2 */
    ck_assert_int_eq(fnw_limiter_on_overload(&l, 1.0, 2.0), 1);
    for (int i = 0; i < 49; i++)
        ck_assert_int_eq(fnw_limiter_on_overload(&l, 1.0, 2.0 + i * 0.001), 0);
    ck_assert_int_eq(fnw_limiter_limit(&l), 50);
    /* a call started after the decrease and refused halves again */
    ck_assert_int_eq(fnw_limiter_on_overload(&l, 2.5, 3.0), 1);
    ck_assert_int_eq(fnw_limiter_limit(&l), 25);
    ck_assert_int_eq(l.decreases, 2);
}
END_TEST

START_TEST(never_below_min)
{
    fnw_limiter l;
    fnw_limiter_init(&l, 1, 8, 100);
    for (int i = 0; i < 20; i++)
        fnw_limiter_on_overload(&l, (double)i, (double)i + 0.5);
    ck_assert_int_eq(fnw_limiter_limit(&l), 8);
    ck_assert(fnw_limiter_allows(&l, 7, 100));
    ck_assert(!fnw_limiter_allows(&l, 8, 100));
}
END_TEST

START_TEST(successes_add_one_per_limit)
{
    fnw_limiter l;
    fnw_limiter_init(&l, 1, 1, 100);
    fnw_limiter_on_overload(&l, 0, 1); /* 50 */
    fnw_limiter_on_overload(&l, 2, 3); /* 25 */
    ck_assert_int_eq(fnw_limiter_limit(&l), 25);
    for (int i = 0; i < 26; i++)
        fnw_limiter_on_success(&l);
    ck_assert_int_eq(fnw_limiter_limit(&l), 26);
    for (int i = 0; i < 100000; i++)
        fnw_limiter_on_success(&l);
    ck_assert_int_eq(fnw_limiter_limit(&l), 100); /* capped at max */
}
END_TEST

START_TEST(off_keeps_the_limit)
{
    fnw_limiter l;
    fnw_limiter_init(&l, 0, 1, 100);
    ck_assert_int_eq(fnw_limiter_on_overload(&l, 0, 1), 0);
    ck_assert_int_eq(fnw_limiter_limit(&l), 100);
}
END_TEST

START_TEST(pause_holds_every_start_until_it_ends)
{
    fnw_limiter l;
    fnw_limiter_init(&l, 1, 1, 100);
    fnw_limiter_pause(&l, 1.0, 9.9, 10.0);
    ck_assert(!fnw_limiter_allows(&l, 0, 10.5));
    ck_assert(fnw_limiter_pause_left(&l, 10.5) > 0.49);
    fnw_limiter_pause(&l, 0.2, 10.2, 10.5); /* shorter: the later end wins */
    ck_assert(!fnw_limiter_allows(&l, 0, 10.9));
    ck_assert(fnw_limiter_allows(&l, 0, 11.0));
    ck_assert(fnw_limiter_pause_left(&l, 11.0) == 0);
    fnw_limiter_pause(&l, 1e9, 19.9, 20.0); /* a hostile Retry-After is capped */
    ck_assert(fnw_limiter_allows(&l, 0, 20.0 + FNW_LIMITER_MAX_PAUSE_S));
}
END_TEST

START_TEST(a_burst_of_refusals_pauses_from_its_first)
{
    fnw_limiter l;
    fnw_limiter_init(&l, 1, 1, 100);
    fnw_limiter_pause(&l, 1.0, 4.0, 5.0);
    /* more refusals of calls started before the pause: not extended */
    fnw_limiter_pause(&l, 1.0, 4.5, 5.3);
    ck_assert(fnw_limiter_allows(&l, 0, 6.0));
    /* a call started after the pause was set (a later burst) extends it */
    fnw_limiter_pause(&l, 1.0, 5.5, 5.8);
    ck_assert(!fnw_limiter_allows(&l, 0, 6.5));
    ck_assert(fnw_limiter_allows(&l, 0, 6.8));
}
END_TEST

START_TEST(a_rate_limit_keeps_what_the_service_accepted)
{
    fnw_limiter l;
    fnw_limiter_init(&l, 1, 1, 1000);
    for (int i = 0; i < 100; i++)
        fnw_limiter_on_success(&l);
    /* a burst refused with Retry-After: halve, but not below the 100 accepted */
    ck_assert_int_eq(fnw_limiter_on_paused_overload(&l, 1, 2), 1);
    ck_assert_int_eq(fnw_limiter_limit(&l), 500);
    ck_assert_int_eq(fnw_limiter_on_paused_overload(&l, 1.5, 2.1), 0); /* same burst */
    for (int cycle = 0; cycle < 10; cycle++) {
        for (int i = 0; i < 100; i++)
            fnw_limiter_on_success(&l);
        fnw_limiter_on_paused_overload(&l, 3.0 + cycle, 3.5 + cycle);
    }
    ck_assert_int_ge(fnw_limiter_limit(&l), 100);
    ck_assert_int_le(fnw_limiter_limit(&l), 110);
    /* nothing accepted since the last cut: plain halving, never below min */
    ck_assert_int_eq(fnw_limiter_on_paused_overload(&l, 20, 21), 1);
    ck_assert_int_le(fnw_limiter_limit(&l), 55);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("limiter");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, starts_at_max_and_allows_up_to_it);
    tcase_add_test(tc, a_burst_halves_once);
    tcase_add_test(tc, never_below_min);
    tcase_add_test(tc, successes_add_one_per_limit);
    tcase_add_test(tc, off_keeps_the_limit);
    tcase_add_test(tc, pause_holds_every_start_until_it_ends);
    tcase_add_test(tc, a_rate_limit_keeps_what_the_service_accepted);
    tcase_add_test(tc, a_burst_of_refusals_pauses_from_its_first);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
