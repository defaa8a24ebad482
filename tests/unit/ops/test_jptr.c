/* tests/unit/ops/test_jptr.c — RFC 6901 JSON pointers: compile errors,
 * ~0/~1 unescaping (in that order), object members and array indexes,
 * "not found" kept apart from errors ('-', non-index tokens on arrays), an
 * existing null found as null, and hostile pointers (huge indexes, long
 * pointers, deep documents). */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ops/bind/jptr.h"
#include "tests/unit/check_run.h"

static const char *DOC =
    "{\"a\":{\"b\":[1,{\"c~/d\":5}]},\"n\":null,\"\":\"empty\",\"~1\":\"tilde-one\",\"x/y\":2,"
    "\"arr\":[10,20,30]}";

static json_t *doc(void)
{
    json_error_t jerr;
    json_t *d = json_loads(DOC, 0, &jerr);
    ck_assert_msg(d != NULL, "%s", jerr.text);
    return d;
}

/* Evaluates ptr on DOC: the result code, and *out. */
static int get(const char *ptr, json_t **out, fnw_error *err)
{
    fnw_jptr *p = fnw_jptr_new(ptr, "path", err);
    ck_assert_msg(p != NULL, "%s", err->msg);
    json_t *d = doc();
    int rc = fnw_jptr_get(p, d, out, err);
    if (rc == FNW_JPTR_FOUND)
        json_incref(*out);
    json_decref(d);
    fnw_jptr_free(p);
    return rc;
}

static void expect_int(const char *ptr, json_int_t want)
{
    fnw_error err;
    json_t *v = NULL;
    ck_assert_msg(get(ptr, &v, &err) == FNW_JPTR_FOUND, "%s: %s", ptr, err.msg);
    ck_assert_msg(json_is_integer(v) && json_integer_value(v) == want, "%s", ptr);
    json_decref(v);
}

static void expect_string(const char *ptr, const char *want)
{
    fnw_error err;
    json_t *v = NULL;
    ck_assert_msg(get(ptr, &v, &err) == FNW_JPTR_FOUND, "%s: %s", ptr, err.msg);
    ck_assert_str_eq(json_string_value(v), want);
    json_decref(v);
}

static void expect_not_found(const char *ptr)
{
    fnw_error err;
    json_t *v = (json_t *)1;
    ck_assert_msg(get(ptr, &v, &err) == FNW_JPTR_NOT_FOUND, "%s", ptr);
    ck_assert_ptr_null(v);
}

static void expect_eval_error(const char *ptr, const char *want)
{
    fnw_error err = { "" };
    json_t *v = NULL;
    ck_assert_int_eq(get(ptr, &v, &err), -1);
    ck_assert_msg(strstr(err.msg, want) && strstr(err.msg, "option 'path'"), "%s lacks %s", err.msg, want);
}

static void expect_compile_error(const char *ptr, const char *want)
{
    fnw_error err = { "" };
    ck_assert_ptr_null(fnw_jptr_new(ptr, "path", &err));
    ck_assert_msg(strstr(err.msg, want) && strstr(err.msg, "option 'path'"), "%s lacks %s", err.msg, want);
}

START_TEST(test_members_and_indexes)
{
    expect_int("/a/b/0", 1);
    expect_int("/a/b/1/c~0~1d", 5);
    expect_int("/x~1y", 2);
    expect_int("/arr/2", 30);
    expect_string("/", "empty");
    expect_string("/~01", "tilde-one");   /* ~01 is "~1", not "/" */
    fnw_error err;
    json_t *v = NULL;
    ck_assert_int_eq(get("", &v, &err), FNW_JPTR_FOUND);   /* the whole document */
    ck_assert(json_is_object(v));
    json_decref(v);
    ck_assert_int_eq(get("/n", &v, &err), FNW_JPTR_FOUND);  /* an existing null is found */
    ck_assert(json_is_null(v));
    json_decref(v);
    fnw_jptr *p = fnw_jptr_new("/a/b/1", "path", &err);
    ck_assert_uint_eq(fnw_jptr_depth(p), 3);
    fnw_jptr_free(p);
}
END_TEST

START_TEST(test_not_found)
{
    expect_not_found("/nope");
    expect_not_found("/a/x");
    expect_not_found("/arr/3");
    expect_not_found("/arr/99999999999999999999999999");   /* larger than any size_t */
    expect_not_found("/a/b/0/deeper");                       /* below a scalar */
    expect_not_found("/n/x");                                /* below null */
    expect_not_found("/a/b/1/c~0~1d/e");
    fnw_error err;
    fnw_jptr *p = fnw_jptr_new("/a", "path", &err);
    json_t *v;
    ck_assert_int_eq(fnw_jptr_get(p, NULL, &v, &err), FNW_JPTR_NOT_FOUND);
    fnw_jptr_free(p);
}
END_TEST

START_TEST(test_errors)
{
    expect_eval_error("/arr/-", "uses '-'");
    expect_eval_error("/arr/01", "token '01' is applied to an array but is not an index");
    expect_eval_error("/arr/x", "token 'x'");
    expect_eval_error("/arr/-1", "token '-1'");
    expect_eval_error("/arr/", "token ''");
    expect_eval_error("/arr/ 1", "token ' 1'");
    /* '-' on an object is a plain member name */
    expect_not_found("/a/-");
    expect_compile_error("a/b", "must be empty or start with '/'");
    expect_compile_error("/a~2", "'~' not followed by 0 or 1");
    expect_compile_error("/a~", "'~' not followed by 0 or 1");
    expect_compile_error("/~/b", "'~' not followed by 0 or 1");
    char *big = malloc(FNW_JPTR_MAX_TEXT + 2);
    memset(big, '/', FNW_JPTR_MAX_TEXT + 1);
    big[FNW_JPTR_MAX_TEXT + 1] = '\0';
    expect_compile_error(big, "at most 4096 bytes");
    big[FNW_JPTR_MAX_TEXT] = '\0';   /* 4096 empty tokens: allowed, and simply not found */
    fnw_error err;
    fnw_jptr *p = fnw_jptr_new(big, "path", &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(fnw_jptr_depth(p), FNW_JPTR_MAX_TEXT);
    json_t *d = doc(), *v;
    ck_assert_int_eq(fnw_jptr_get(p, d, &v, &err), FNW_JPTR_NOT_FOUND);
    json_decref(d);
    fnw_jptr_free(p);
    free(big);
}
END_TEST

START_TEST(test_deep_document)
{
    /* 2000 nested arrays (built directly: the parser's own limit is lower) */
    enum { DEPTH = 2000 };
    json_t *root = json_array(), *cur = root;
    for (int i = 0; i < DEPTH; i++) {
        json_t *next = json_array();
        json_array_append_new(cur, next);
        cur = next;
    }
    json_array_append_new(cur, json_integer(9));
    size_t len = 2 * (DEPTH + 1);
    char *ptr = malloc(len + 1);
    for (int i = 0; i <= DEPTH; i++)
        memcpy(ptr + 2 * i, "/0", 2);
    ptr[len] = '\0';
    fnw_error err;
    fnw_jptr *p = fnw_jptr_new(ptr, "path", &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    json_t *v = NULL;
    ck_assert_int_eq(fnw_jptr_get(p, root, &v, &err), FNW_JPTR_FOUND);
    ck_assert_int_eq(json_integer_value(v), 9);
    fnw_jptr_free(p);
    free(ptr);
    json_decref(root);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("jptr");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_members_and_indexes);
    tcase_add_test(tc, test_not_found);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_deep_document);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
