/* tests/unit/codecs/test_utf8.c — UTF-8 encoding at every length boundary
 * (round-tripped through the validity check), and the validity check's
 * refusals: overlong forms, surrogates, code points past U+10FFFF,
 * truncated sequences and stray continuation bytes. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdint.h>
#include <string.h>

#include "codecs/utf8.h"

START_TEST(encode_boundaries)
{
    static const struct { uint32_t cp; size_t n; const char *bytes; } cases[] = {
        { 0x0, 1, "\x00" },           { 0x7f, 1, "\x7f" },
        { 0x80, 2, "\xc2\x80" },      { 0x7ff, 2, "\xdf\xbf" },
        { 0x800, 3, "\xe0\xa0\x80" }, { 0xfffd, 3, "\xef\xbf\xbd" },
        { 0xffff, 3, "\xef\xbf\xbf" }, { 0x10000, 4, "\xf0\x90\x80\x80" },
        { 0x10ffff, 4, "\xf4\x8f\xbf\xbf" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[4];
        size_t n = fnw_utf8_encode(cases[i].cp, out);
        ck_assert_uint_eq(n, cases[i].n);
        ck_assert_msg(memcmp(out, cases[i].bytes, n) == 0, "U+%04X", (unsigned)cases[i].cp);
        ck_assert_msg(fnw_utf8_valid((const uint8_t *)out, n), "U+%04X encodes as valid", (unsigned)cases[i].cp);
    }
}
END_TEST

START_TEST(valid_refuses_malformed)
{
    static const char *bad[] = {
        "\xc0\xaf",         /* overlong '/' */
        "\xe0\x80\xaf",     /* overlong, 3 bytes */
        "\xed\xa0\x80",     /* U+D800, a surrogate */
        "\xf4\x90\x80\x80", /* U+110000 */
        "\xe2\x82",         /* truncated */
        "\x80",             /* stray continuation */
        "\xff",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!fnw_utf8_valid((const uint8_t *)bad[i], strlen(bad[i])), "case %zu accepted", i);
    ck_assert(fnw_utf8_valid((const uint8_t *)"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10));
    ck_assert(fnw_utf8_valid((const uint8_t *)"", 0));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, encode_boundaries);
    tcase_add_test(tc, valid_refuses_malformed);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
