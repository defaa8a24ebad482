/* tests/unit/ops/test_httpop.c — the `http` operation without a server:
 * its option texts split as documented (the URL at its query, batch_body at
 * {items}, a result pointer at its {i} token), header names, what each
 * status means for a call, error excerpts (escaped, cut, secrets masked,
 * also a secret cut off at the end), and open: a valid configuration opens,
 * every invalid one fails naming the option and the field, header values
 * from the environment. */
#include <check.h>
#include <ev.h>
#include <stdlib.h>
#include <string.h>

#include "ops/http/httpop_internal.h"
#include "ops/builtins.h"
#include "tests/unit/binding_build.h"
#include "tests/unit/check_run.h"

START_TEST(test_query_start)
{
    ck_assert_uint_eq(fnw_httpop_text_query_start("http://h/a/{x}?q={y}"), 14);
    ck_assert_uint_eq(fnw_httpop_text_query_start("http://h/a"), 10);
    /* a '?' inside a placeholder is part of its name, not the query */
    ck_assert_uint_eq(fnw_httpop_text_query_start("http://h/{a?b}"), 14);
    ck_assert_uint_eq(fnw_httpop_text_query_start("http://h/{{?}}"), 11);
    ck_assert_uint_eq(fnw_httpop_text_authority_end("http://{h}:80/a"), 13);
    ck_assert_uint_eq(fnw_httpop_text_authority_end("https://h:1?x"), 11);
    ck_assert_uint_eq(fnw_httpop_text_authority_end("http://h"), 8);
    size_t n = 0;
    ck_assert_ptr_null(fnw_httpop_text_dot_segment("http://h/a/.b/c..?x=/../", &n));
    ck_assert_str_eq(fnw_httpop_text_dot_segment("http://h/a/../b", &n), "../b");
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(fnw_httpop_text_dot_segment("http://h/a/.", &n), ".");
    ck_assert_uint_eq(n, 1);
    ck_assert_ptr_null(fnw_httpop_text_dot_segment("http://h/.../", &n));
    ck_assert_ptr_nonnull(fnw_httpop_text_dot_segment("http://h/a/..?q", &n));
}
END_TEST

START_TEST(test_batch_body)
{
    char *p, *s;
    fnw_error err;
    ck_assert_int_eq(fnw_httpop_text_split_batch_body("{\"inputs\": {items}, \"n\": 1}", &p, &s, &err), 0);
    ck_assert_str_eq(p, "{\"inputs\": ");
    ck_assert_str_eq(s, ", \"n\": 1}");
    free(p);
    free(s);
    ck_assert_int_eq(fnw_httpop_text_split_batch_body("{items}", &p, &s, &err), 0);
    ck_assert_str_eq(p, "");
    ck_assert_str_eq(s, "");
    free(p);
    free(s);
    ck_assert_int_eq(fnw_httpop_text_split_batch_body("{\"a\": 1}", &p, &s, &err), -1);
    ck_assert_msg(strstr(err.msg, "'batch_body'") && strstr(err.msg, "exactly once"), "%s", err.msg);
    ck_assert_int_eq(fnw_httpop_text_split_batch_body("[{items}, {items}]", &p, &s, &err), -1);
    ck_assert_msg(strstr(err.msg, "exactly once"), "%s", err.msg);
    ck_assert_int_eq(fnw_httpop_text_split_batch_body("{\"inputs\": {items}", &p, &s, &err), -1);
    ck_assert_msg(strstr(err.msg, "is not JSON"), "%s", err.msg);
}
END_TEST

START_TEST(test_split_index)
{
    char *a, *b;
    fnw_error err;
    ck_assert_int_eq(fnw_httpop_text_split_index("/outputs/{i}/embedding", "result.e", &a, &b, &err), 1);
    ck_assert_str_eq(a, "/outputs");
    ck_assert_str_eq(b, "/embedding");
    free(a);
    free(b);
    ck_assert_int_eq(fnw_httpop_text_split_index("/{i}", "result.e", &a, &b, &err), 1);
    ck_assert_str_eq(a, "");
    ck_assert_str_eq(b, "");
    free(a);
    free(b);
    /* only a whole reference token counts */
    ck_assert_int_eq(fnw_httpop_text_split_index("/a/{i}x/b", "result.e", &a, &b, &err), 0);
    ck_assert_ptr_null(a);
    ck_assert_int_eq(fnw_httpop_text_split_index("/a/b", "result.e", &a, &b, &err), 0);
    ck_assert_int_eq(fnw_httpop_text_split_index("/{i}/x/{i}", "result.e", &a, &b, &err), -1);
    ck_assert_msg(strstr(err.msg, "result.e") && strstr(err.msg, "more than one"), "%s", err.msg);
}
END_TEST

START_TEST(test_header_names_and_status)
{
    ck_assert(fnw_httpop_text_header_name_ok("X-Api-Key"));
    ck_assert(fnw_httpop_text_header_name_ok("Authorization"));
    ck_assert(!fnw_httpop_text_header_name_ok(""));
    ck_assert(!fnw_httpop_text_header_name_ok("Bad Name"));
    ck_assert(!fnw_httpop_text_header_name_ok("A:B"));
    ck_assert_int_eq(fnw_httpop_text_classify(200), HTTPOP_OK);
    ck_assert_int_eq(fnw_httpop_text_classify(204), HTTPOP_OK);
    ck_assert_int_eq(fnw_httpop_text_classify(404), HTTPOP_MISSING);
    ck_assert_int_eq(fnw_httpop_text_classify(408), HTTPOP_RETRY);
    ck_assert_int_eq(fnw_httpop_text_classify(429), HTTPOP_OVERLOADED);
    ck_assert_int_eq(fnw_httpop_text_classify(500), HTTPOP_RETRY);
    ck_assert_int_eq(fnw_httpop_text_classify(503), HTTPOP_OVERLOADED);
    ck_assert_int_eq(fnw_httpop_text_classify(502), HTTPOP_RETRY);
    ck_assert_int_eq(fnw_httpop_text_classify(400), HTTPOP_REFUSED);
    ck_assert_int_eq(fnw_httpop_text_classify(401), HTTPOP_REFUSED);
    ck_assert_int_eq(fnw_httpop_text_classify(302), HTTPOP_REFUSED);
}
END_TEST

START_TEST(test_excerpt)
{
    char out[1024];
    const char *secrets[] = { "hunter2", NULL };
    const char body[] = "bad key \"hunter2\"\n";
    fnw_httpop_text_excerpt(body, strlen(body), secrets, 2, out, sizeof out);
    ck_assert_str_eq(out, "\"bad key \\\"*******\\\"\\x0a\"");
    /* longer than the excerpt: cut with "...", and a secret cut off at the end is masked */
    char big[400];
    memset(big, 'a', sizeof big);
    memcpy(big + HTTPOP_EXCERPT - 3, "hunter2", 7);
    fnw_httpop_text_excerpt(big, sizeof big, secrets, 1, out, sizeof out);
    ck_assert_uint_eq(strlen(out), HTTPOP_EXCERPT + 5);
    ck_assert_msg(!strstr(out, "hun") && strstr(out, "aaa***\"..."), "%s", out);
}
END_TEST

/* ---- open ----------------------------------------------------------------------- */

static struct ev_loop *loop;
static fnw_type *in_t, *out_t;

static int try_open(int batched, const char *const *kv, void **state, fnw_error *err)
{
    fnw_option items[32];
    size_t n = 0;
    for (; kv[2 * n]; n++)
        items[n] = (fnw_option){ kv[2 * n], kv[2 * n + 1] };
    fnw_options o = { n, items };
    fnw_op_env env = { .loop = loop, .options = &o, .input_type = in_t, .output_type = out_t,
                       .transform_id = "t", .batched = batched };
    return fnw_op_http.open(&env, state, err);
}

static void setup(void)
{
    loop = ev_loop_new(EVFLAG_AUTO);
    in_t = R(2, "id", T(FNW_LONG), "text", T(FNW_STRING));
    out_t = R(3, "id", T(FNW_LONG), "text", T(FNW_STRING), "vec", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT)));
}

static void teardown(void)
{
    fnw_type_free(in_t);
    fnw_type_free(out_t);
    ev_loop_destroy(loop);
}

static void expect_open_error(int batched, const char *const *kv, const char *want1, const char *want2)
{
    void *st = NULL;
    fnw_error err = { "" };
    ck_assert_int_eq(try_open(batched, kv, &st, &err), -1);
    ck_assert_ptr_null(st);
    ck_assert_msg(strstr(err.msg, "operation 'http'") && strstr(err.msg, want1) &&
                  (!want2 || strstr(err.msg, want2)), "'%s' lacks '%s' / '%s'", err.msg, want1,
                  want2 ? want2 : "");
}

START_TEST(test_open_valid)
{
    setenv("FNW_SECRET_TEST_HTTP_KEY", "k-123", 1);
    const char *kv[] = { "url", "http://127.0.0.1:9/v1/embeddings", "body", "{text}",
                         "batch_body", "{\"model\": \"m\", \"input\": {items}}",
                         "header.Authorization", "Bearer {env:FNW_SECRET_TEST_HTTP_KEY}",
                         "result.vec", "/data/{i}/embedding", "on_missing", "fail", NULL };
    void *st = NULL;
    fnw_error err = { "" };
    ck_assert_msg(try_open(1, kv, &st, &err) == 0, "%s", err.msg);
    httpop_state *h = st;
    ck_assert_str_eq(h->method, "POST");            /* a body and no method: POST */
    ck_assert_str_eq(h->headers[0].line, "Authorization: Bearer k-123");
    ck_assert_uint_eq(h->n_secrets, 1);
    ck_assert_str_eq(h->secrets[0], "k-123");
    ck_assert(h->add_content_type);
    ck_assert_ptr_nonnull(h->results[0].items);
    fnw_op_http.close(st);
    /* per element: GET, a URL with fields in path and query */
    const char *get[] = { "url", "http://h/items/{id}?q={text}", "result.vec", "/vec", NULL };
    ck_assert_msg(try_open(0, get, &st, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(((httpop_state *)st)->method, "GET");
    ck_assert_ptr_nonnull(((httpop_state *)st)->url_query);
    fnw_op_http.close(st);
}
END_TEST

START_TEST(test_open_errors)
{
    const char *u = "http://h/x";
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "colour", "red", NULL },
                      "unknown option 'colour'", NULL);
    expect_open_error(0, (const char *[]){ "result.vec", "/v", NULL }, "'url' is required", NULL);
    expect_open_error(0, (const char *[]){ "url", "ftp://h/x", "result.vec", "/v", NULL }, "'url'", "http://");
    expect_open_error(0, (const char *[]){ "url", "http://h/{nope}", "result.vec", "/v", NULL }, "'url'", "nope");
    expect_open_error(0, (const char *[]){ "url", u, NULL }, "vec", NULL);          /* nothing fills it */
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "result.other", "/o", NULL }, "other",
                      NULL);
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "v", NULL }, "result.vec", NULL);
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v/{i}", NULL }, "result.vec", "batch mode");
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "body", "{\"a\": {id}}", NULL }, "'body'",
                      "'{{'");
    /* a template that compiles but does not give JSON */
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "body", "{{\"a\": {id}", NULL },
                      "'body'", "does not give JSON");
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "method", "get", NULL }, "'method'", NULL);
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "on_missing", "skip", NULL },
                      "'on_missing'", NULL);
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "max_connections", "0", NULL },
                      "max_connections", NULL);
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "tls_ca_file", "/no/such", NULL },
                      "tls_ca_file", NULL);
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "header.A B", "x", NULL }, "header.A B",
                      NULL);
    expect_open_error(0, (const char *[]){ "url", "http://{k}:8080/x", "result.vec", "/v", NULL },
                      "placeholder before the path", "may not choose the scheme, host or port");
    expect_open_error(0, (const char *[]){ "url", "http://127.0.0.1:{id}/x", "result.vec", "/v", NULL },
                      "placeholder before the path", NULL);
    expect_open_error(0, (const char *[]){ "url", "http://127.0.0.1:1/a/../x/{k}", "result.vec", "/v", NULL },
                      "'.' or '..' segment", NULL);
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "header.X", "a\x01" "b", NULL },
                      "header.X", "control character");
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "header.K", "env:FNW_SECRET_SURELY_UNSET", NULL },
                      "header.K", "'FNW_SECRET_SURELY_UNSET' is not set");
    /* a job may name only the variables the operator allows (FNW_SECRETS_PREFIX / FNW_SECRETS_ALLOW) */
    setenv("FNW_TEST_HTTP_NOT_ALLOWED", "db-password", 1);
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "header.K", "Bearer {env:FNW_TEST_HTTP_NOT_ALLOWED}",
                                           NULL }, "'FNW_TEST_HTTP_NOT_ALLOWED' is not one the operator allows",
                      "starting with 'FNW_SECRET_'");
    setenv("FNW_SECRETS_ALLOW", "OTHER, FNW_TEST_HTTP_NOT_ALLOWED", 1);
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "header.K", "env:HOME", NULL },
                      "'HOME' is not one the operator allows", "FNW_SECRETS_ALLOW (none matches)");
    unsetenv("FNW_SECRETS_ALLOW");
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "header.K", "{env:X} {id}", NULL },
                      "header.K", NULL);
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", "batch_body", "{items}", NULL },
                      "'batch_body'", "batch-mode");
    expect_open_error(1, (const char *[]){ "url", u, "result.vec", "/v/{i}", NULL }, "'body' is required", NULL);
    expect_open_error(1, (const char *[]){ "url", "http://h/{id}", "body", "{id}", "result.vec", "/v/{i}", NULL },
                      "'url'", "batch mode");
    expect_open_error(1, (const char *[]){ "url", u, "body", "{id}", "header.X", "{text}", "result.vec", "/v/{i}",
                                           NULL }, "header.X", "batch mode");
    /* a type the result cannot be converted into */
    fnw_type_free(out_t);
    out_t = R(3, "id", T(FNW_LONG), "text", T(FNW_STRING), "vec", T(FNW_LOCAL_DATE));
    expect_open_error(0, (const char *[]){ "url", u, "result.vec", "/v", NULL }, "vec", NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("httpop");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, test_query_start);
    tcase_add_test(tc, test_batch_body);
    tcase_add_test(tc, test_split_index);
    tcase_add_test(tc, test_header_names_and_status);
    tcase_add_test(tc, test_excerpt);
    suite_add_tcase(s, tc);
    TCase *op = tcase_create("open");
    tcase_add_checked_fixture(op, setup, teardown);
    tcase_add_test(op, test_open_valid);
    tcase_add_test(op, test_open_errors);
    suite_add_tcase(s, op);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
