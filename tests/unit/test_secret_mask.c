/* tests/unit/test_secret_mask.c — masking secrets in outgoing text
 * (runtime/secret_mask.c): every occurrence of every secret becomes '*'s of
 * the same length, a secret cut off at the end of the text is masked as far
 * as it goes, text without a secret is left alone, and empty or missing
 * secrets mask nothing. */
#include <check.h>
#include <string.h>

#include "runtime/secret_mask.h"
#include "tests/unit/check_run.h"

START_TEST(every_occurrence)
{
    const char *secrets[] = { "tok-42", "pw" };
    char s[] = "bad token 'tok-42' (again tok-42), pw=pw";
    fnw_secret_mask_str(s, secrets, 2);
    ck_assert_str_eq(s, "bad token '******' (again ******), **=**");
}
END_TEST

START_TEST(cut_off_at_the_end)
{
    const char *secrets[] = { "Bearer s3cr3t" };
    char s[] = "header was Bearer s3c";
    fnw_secret_mask_str(s, secrets, 1);
    ck_assert_str_eq(s, "header was **********");
    /* only the end: the same beginning elsewhere stays */
    char t[] = "Bearer of news";
    fnw_secret_mask_str(t, secrets, 1);
    ck_assert_str_eq(t, "Bearer of news");
    /* n bytes only: what follows is not looked at */
    char u[] = "xx s3cr3t";
    const char *one[] = { "s3cr3t" };
    fnw_secret_mask(u, 5, one, 1);
    ck_assert_str_eq(u, "xx **cr3t");
}
END_TEST

START_TEST(nothing_to_mask)
{
    const char *secrets[] = { NULL, "", "absent" };
    char s[] = "a message without it";
    fnw_secret_mask_str(s, secrets, 3);
    ck_assert_str_eq(s, "a message without it");
    char e[] = "";
    fnw_secret_mask_str(e, secrets, 3);
    ck_assert_str_eq(e, "");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("secret_mask");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, every_occurrence);
    tcase_add_test(tc, cut_off_at_the_end);
    tcase_add_test(tc, nothing_to_mask);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
