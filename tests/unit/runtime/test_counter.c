/* tests/unit/runtime/test_counter.c — operation counters (fnw_op_counter):
 * name rules with messages, the same name giving the same counter, the
 * per-instance limit, adds and the per-bundle reset (the engine path is
 * covered where operations use them). */
#include <stdio.h>
#include <check.h>
#include <string.h>

#include "runtime/counter.h"
#include "tests/unit/check_run.h"

START_TEST(test_names_and_limit)
{
    fnw_counter_set set = { 0 };
    fnw_op_env env = { 0 };
    env.counters = &set;
    fnw_error err = { { 0 } };
    ck_assert_ptr_null(fnw_op_counter(&env, "", &err));
    ck_assert_ptr_null(fnw_op_counter(&env, "Hits", &err));
    ck_assert(strstr(err.msg, "'Hits' is not valid") != NULL);
    ck_assert_ptr_null(fnw_op_counter(&env, "9lives", &err));
    ck_assert_ptr_null(fnw_op_counter(&env, "a-b", &err));
    ck_assert_ptr_null(fnw_op_counter(&env, "abcdefghijabcdefghijabcdefghijabc", &err)); /* 33 */
    fnw_counter *a = fnw_op_counter(&env, "cache_hits", &err);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_eq(fnw_op_counter(&env, "cache_hits", &err), a);
    char name[16];
    for (int i = 1; i < FNW_COUNTERS_MAX; i++) {
        snprintf(name, sizeof name, "c%d", i);
        ck_assert_ptr_nonnull(fnw_op_counter(&env, name, &err));
    }
    ck_assert_ptr_null(fnw_op_counter(&env, "one_more", &err));
    ck_assert(strstr(err.msg, "at most 16 counters") != NULL);
    fnw_counter_add(a, 3);
    fnw_counter_add(a, 4);
    fnw_counter_add(NULL, 1); /* ignored */
    ck_assert_int_eq(fnw_counter_value(a), 7);
    fnw_counter_set_reset(&set);
    ck_assert_int_eq(fnw_counter_value(a), 0);
    ck_assert_str_eq(a->name, "cache_hits");
}
END_TEST

START_TEST(test_needs_env)
{
    fnw_error err = { { 0 } };
    fnw_op_env env = { 0 };
    ck_assert_ptr_null(fnw_op_counter(&env, "hits", &err));
    ck_assert(strstr(err.msg, "registered in open()") != NULL);
}
END_TEST

static Suite *counter_suite(void)
{
    Suite *s = suite_create("counter");
    TCase *tc = tcase_create("counter");
    tcase_add_test(tc, test_names_and_limit);
    tcase_add_test(tc, test_needs_env);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(counter_suite());
}
