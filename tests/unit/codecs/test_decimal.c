/* tests/unit/codecs/test_decimal.c — the launcher protocol's numbers, and
 * DECIMAL(p, s) text: rounding to the scale, the precision check, Java's
 * BigDecimal.toString form. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

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

/* text quantized to DECIMAL(p, s) with mode: the text, or "!" + the error */
static const char *q(const char *text, int p, int s, fnw_decimal_rounding mode)
{
    static char out[FNW_DECIMAL_TEXT_MAX + FNW_ERROR_MAX];
    fnw_error err = { { 0 } };
    size_t len = 99;
    if (fnw_decimal_quantize(text, strlen(text), p, s, mode, out, FNW_DECIMAL_TEXT_MAX, &len, &err) < 0) {
        snprintf(out, sizeof out, "!%s", err.msg);
        return out;
    }
    ck_assert_uint_eq(len, strlen(out));
    return out;
}
#define UP FNW_DECIMAL_HALF_UP
#define EVEN FNW_DECIMAL_HALF_EVEN

START_TEST(quantize_rounds_half_up)
{
    ck_assert_str_eq(q("1.25", 4, 1, UP), "1.3");
    ck_assert_str_eq(q("-1.25", 4, 1, UP), "-1.3");
    ck_assert_str_eq(q("1.24999", 4, 1, UP), "1.2");
    ck_assert_str_eq(q("0.001", 4, 2, UP), "0.00");
    ck_assert_str_eq(q("-0.004", 4, 2, UP), "0.00"); /* no negative zero (Java has none) */
    ck_assert_str_eq(q("0.005", 4, 2, UP), "0.01");
    ck_assert_str_eq(q("0.0049999", 4, 2, UP), "0.00");
    ck_assert_str_eq(q("12.5", 10, 0, UP), "13");
    ck_assert_str_eq(q("99.95", 5, 1, UP), "100.0"); /* the carry adds a digit */
    ck_assert_str_eq(q("12", 10, 2, UP), "12.00");
    ck_assert_str_eq(q("+7", 3, 1, UP), "7.0");
    ck_assert_str_eq(q(".5", 3, 1, UP), "0.5");
    ck_assert_str_eq(q("5.", 3, 1, UP), "5.0");
    ck_assert_str_eq(q("007.10", 3, 1, UP), "7.1");
    ck_assert_str_eq(q("0", 10, 2, UP), "0.00");
    ck_assert_str_eq(q("-0", 10, 0, UP), "0");
}
END_TEST

START_TEST(quantize_rounds_half_even)
{
    ck_assert_str_eq(q("1.25", 4, 1, EVEN), "1.2");
    ck_assert_str_eq(q("-1.25", 4, 1, EVEN), "-1.2");
    ck_assert_str_eq(q("1.35", 4, 1, EVEN), "1.4");
    ck_assert_str_eq(q("1.2501", 4, 1, EVEN), "1.3");
    ck_assert_str_eq(q("2.5", 1, 0, EVEN), "2");
    ck_assert_str_eq(q("1.5", 1, 0, EVEN), "2");
    ck_assert_str_eq(q("0.5", 1, 0, EVEN), "0");
}
END_TEST

START_TEST(quantize_checks_precision)
{
    ck_assert_str_eq(q("9.95", 2, 1, UP), "!value 9.95 does not fit DECIMAL(2, 1)");
    ck_assert_str_eq(q("9.94", 2, 1, UP), "9.9");
    ck_assert_str_eq(q("12345.67", 4, 1, UP), "!value 12345.67 does not fit DECIMAL(4, 1)");
    ck_assert_str_eq(q("1E+3", 5, 2, UP), "!value 1E+3 does not fit DECIMAL(5, 2)");
    ck_assert_str_eq(q("1E+3", 3, 0, UP), "!value 1E+3 does not fit DECIMAL(3, 0)");
    ck_assert_str_eq(q("1e999999999", 38, 0, UP), "!value 1e999999999 does not fit DECIMAL(38, 0)");
    ck_assert_str_eq(q("99999999999999999999999999999999999999", 38, 0, UP),
                     "99999999999999999999999999999999999999");
    ck_assert(q("99999999999999999999999999999999999999.5", 38, 0, UP)[0] == '!');
    ck_assert(q("123456789012345678901234567890123456789012345678901234567890", 38, 0, UP)[0] == '!');
    /* a long text is cut in the message */
    ck_assert_str_eq(q("1234567890123456789012345678901234567890123", 2, 0, UP),
                     "!value 1234567890123456789012345678901234567890... does not fit DECIMAL(2, 0)");
}
END_TEST

START_TEST(quantize_exponents_and_java_text)
{
    ck_assert_str_eq(q("1E+3", 5, 0, UP), "1000");
    ck_assert_str_eq(q("1.5e2", 5, 1, UP), "150.0");
    ck_assert_str_eq(q("12e-2", 5, 2, UP), "0.12");
    ck_assert_str_eq(q("1E-1000", 5, 2, UP), "0.00");
    /* adjusted exponent below -6: Java's BigDecimal.toString writes E notation */
    ck_assert_str_eq(q("0.0000001", 10, 7, UP), "1E-7");
    ck_assert_str_eq(q("0.00000015", 10, 8, UP), "1.5E-7");
    ck_assert_str_eq(q("0", 10, 7, UP), "0E-7");
    ck_assert_str_eq(q("0.000001", 10, 6, UP), "0.000001");
    ck_assert_str_eq(q("-0.0000001", 10, 7, UP), "-1E-7");
    ck_assert_str_eq(q("0", 38, 38, UP), "0E-38");
    ck_assert_str_eq(q("0.5", 38, 38, UP), "0.50000000000000000000000000000000000000");
}
END_TEST

START_TEST(quantize_refuses_what_is_not_a_number)
{
    const char *bad[] = { "", "-", ".", "1.2.3", "1e", "1e+", "e5", " 1", "1 ", "0x10", "NaN", "Infinity", "1_000", "--1", "1e9999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *r = q(bad[i], 10, 2, UP);
        ck_assert_msg(strstr(r, "is not a decimal number") != NULL, "'%s' gave %s", bad[i], r);
        ck_assert(!fnw_decimal_valid(bad[i], strlen(bad[i])));
    }
    ck_assert(fnw_decimal_valid("-1.5E+3", 7));
    ck_assert_str_eq(q("1", 39, 0, UP), "!DECIMAL(39, 0) is not a valid decimal type");
    ck_assert_str_eq(q("1", 5, 6, UP), "!DECIMAL(5, 6) is not a valid decimal type");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("decimal");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, numbers_and_what_follows);
    tcase_add_test(tc, what_is_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("quantize");
    tcase_add_test(tc, quantize_rounds_half_up);
    tcase_add_test(tc, quantize_rounds_half_even);
    tcase_add_test(tc, quantize_checks_precision);
    tcase_add_test(tc, quantize_exponents_and_java_text);
    tcase_add_test(tc, quantize_refuses_what_is_not_a_number);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
