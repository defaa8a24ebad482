/* tests/unit/codecs/test_decimal.c — the launcher protocol's numbers. */
#include <check.h>
#include <limits.h>

#include "codecs/decimal.h"
#include "tests/unit/check_run.h"

static int read_one(const char *text, unsigned long long max, unsigned long long *v, const char **rest)
{
    const char *p = text;
    int r = fnw_decimal_read(&p, max, v);
    *rest = p;
    return r;
}

START_TEST(numbers_and_what_follows)
{
    unsigned long long v = 99;
    const char *rest;
    ck_assert_int_eq(read_one("0", 10, &v, &rest), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_str_eq(rest, "");
    ck_assert_int_eq(read_one("42 tail", 100, &v, &rest), 0);
    ck_assert_uint_eq(v, 42);
    ck_assert_str_eq(rest, "tail");
    ck_assert_int_eq(read_one("4294967295", UINT_MAX, &v, &rest), 0);
    ck_assert_uint_eq(v, 4294967295ULL);
}
END_TEST

START_TEST(what_is_refused)
{
    unsigned long long v = 7;
    const char *rest;
    const char *bad[] = { "", " 1", "-1", "+1", "01", "00", "1x", "1\t", "256" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(read_one(bad[i], 255, &v, &rest) == -1, "'%s' was read", bad[i]);
        ck_assert_ptr_eq(rest, bad[i]);
        ck_assert_uint_eq(v, 7);
    }
    ck_assert_int_eq(read_one("18446744073709551616", ULLONG_MAX, &v, &rest), -1); /* overflow */
    ck_assert_int_eq(read_one("18446744073709551615", ULLONG_MAX, &v, &rest), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("decimal");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, numbers_and_what_follows);
    tcase_add_test(tc, what_is_refused);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
