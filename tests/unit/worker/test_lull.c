/* tests/unit/worker/test_lull.c — when a bundle counts as hung (--lull-seconds):
 * the first warning once nothing moved for the whole lull, repeats every
 * lull while it stays still, none after progress until a new lull passes,
 * and never with 0. A fake clock: the times are the test's. */
#include <check.h>

#include "tests/unit/check_run.h"

#include "worker/lull.h"

START_TEST(warns_after_a_whole_lull_then_every_lull)
{
    fnw_lull l;
    double idle = -1;
    fnw_lull_init(&l, 10, 7, 100);
    ck_assert_int_eq(fnw_lull_check(&l, 7, 105, &idle), 0);
    ck_assert(idle == 5);
    ck_assert_int_eq(fnw_lull_check(&l, 7, 109.9, &idle), 0);
    ck_assert_int_eq(fnw_lull_check(&l, 7, 110, &idle), 1);
    ck_assert(idle == 10);
    ck_assert_int_eq(fnw_lull_check(&l, 7, 115, &idle), 0);   /* warned 5 s ago */
    ck_assert_int_eq(fnw_lull_check(&l, 7, 120, &idle), 1);   /* still stuck: again */
    ck_assert(idle == 20);
}
END_TEST

START_TEST(progress_starts_the_count_again)
{
    fnw_lull l;
    double idle;
    fnw_lull_init(&l, 10, 0, 0);
    ck_assert_int_eq(fnw_lull_check(&l, 0, 10, &idle), 1);
    ck_assert_int_eq(fnw_lull_check(&l, 1, 11, &idle), 0);    /* moved */
    ck_assert_int_eq(fnw_lull_check(&l, 1, 20, &idle), 0);
    ck_assert_int_eq(fnw_lull_check(&l, 1, 21, &idle), 1);
    ck_assert(idle == 10);
}
END_TEST

START_TEST(zero_is_off_and_the_sampling_interval)
{
    fnw_lull l;
    double idle;
    fnw_lull_init(&l, 0, 0, 0);
    ck_assert_int_eq(fnw_lull_check(&l, 0, 1e6, &idle), 0);
    ck_assert(fnw_lull_interval(300) == 10);
    ck_assert(fnw_lull_interval(20) == 5);
    ck_assert(fnw_lull_interval(0.5) == 0.25);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lull");
    TCase *tc = tcase_create("lull");
    tcase_add_test(tc, warns_after_a_whole_lull_then_every_lull);
    tcase_add_test(tc, progress_starts_the_count_again);
    tcase_add_test(tc, zero_is_off_and_the_sampling_interval);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
