/* tests/unit/ops/test_secret_mask.c — masking secrets in outgoing text
 * (ops/secrets/secret_mask.c): every occurrence of every secret becomes '*'s of
 * the same length, a secret cut off at the end of the text is masked as far
 * as it goes, text without a secret is left alone, and empty or missing
 * secrets mask nothing. */
#include <check.h>
#include <string.h>

#include "ops/secrets/secret_mask.h"
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

/* a service may quote the secret escaped: JSON, percent-encoding, base64 */
START_TEST(escaped_forms)
{
    const char *secrets[] = { "tok/AbC+9 \"x\u00e9" };
    char j[] = "{\"error\": \"bad token tok\\/AbC+9 \\\"x\\u00e9\"}";
    fnw_secret_mask_str(j, secrets, 1);
    ck_assert_msg(!strstr(j, "AbC"), "%s", j);
    char u[] = "token \\u0074\\u006f\\u006B\\u002fAbC+9 \\u0022x\\u00E9 end";
    fnw_secret_mask_str(u, secrets, 1);
    ck_assert_str_eq(u, "token ******************************************* end");
    char p[] = "GET /x?t=tok%2FAbC%2B9+%22x%C3%A9&y=1";
    fnw_secret_mask_str(p, secrets, 1);
    ck_assert_str_eq(p, "GET /x?t=************************&y=1");
    /* UTF-16 surrogate pairs in JSON */
    const char *emoji[] = { "k\xf0\x9f\x94\x91y" };
    char e[] = "[k\\ud83d\\udd11y]";
    fnw_secret_mask_str(e, emoji, 1);
    ck_assert_str_eq(e, "[**************]");
}
END_TEST

START_TEST(base64_of_a_credential)
{
    const char *secrets[] = { "s3cret-Pw-77" };
    /* base64("alice:s3cret-Pw-77") = YWxpY2U6czNjcmV0LVB3LTc3, and for "bob:" Ym9iOnMzY3JldC1Qdy03Nw== */
    char a[] = "Authorization: Basic YWxpY2U6czNjcmV0LVB3LTc3 rejected";
    fnw_secret_mask_str(a, secrets, 1);
    ck_assert_msg(!strstr(a, "czNjcmV0LVB3") && strstr(a, "rejected"), "%s", a);
    char b[] = "Basic Ym9iOnMzY3JldC1Qdy03Nw==";
    fnw_secret_mask_str(b, secrets, 1);
    ck_assert_msg(!strstr(b, "MzY3JldC1Qdy"), "%s", b);
    /* a short secret's base64 is not matched (too many false hits) */
    const char *shrt[] = { "pw" };
    char c[] = "cHc= stays";
    fnw_secret_mask_str(c, shrt, 1);
    ck_assert_str_eq(c, "cHc= stays");
}
END_TEST

START_TEST(credential_of_an_authorization_value)
{
    ck_assert_str_eq(fnw_secret_mask_credential("Bearer tok-123"), "tok-123");
    ck_assert_str_eq(fnw_secret_mask_credential("Basic  dXNlcjpwdw=="), "dXNlcjpwdw==");
    ck_assert_ptr_null(fnw_secret_mask_credential("tok-123"));
    ck_assert_ptr_null(fnw_secret_mask_credential("Bearer x"));
    ck_assert_ptr_null(fnw_secret_mask_credential("Bearer "));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("secret_mask");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, every_occurrence);
    tcase_add_test(tc, cut_off_at_the_end);
    tcase_add_test(tc, nothing_to_mask);
    tcase_add_test(tc, escaped_forms);
    tcase_add_test(tc, base64_of_a_credential);
    tcase_add_test(tc, credential_of_an_authorization_value);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
