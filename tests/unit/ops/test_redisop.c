/* tests/unit/ops/test_redisop.c — the `redis` operation without a server: every
 * option checked at open with a message naming the option and the field,
 * the result mapping (one field, hash keys by name, array elements by
 * position), the missing-result policy and conversion failures, and the
 * hiredis reply adapter. The I/O half runs in the integration scenarios
 * (RedisScenarios.java) against a real redis-server. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ops/redis/redisop_internal.h"
#include "tests/unit/binding_build.h"
#include "tests/unit/check_run.h"

/* ROW<id INT, name STRING> */
static fnw_type *in_type(void)
{
    return R(2, "id", T(FNW_INT), "name", T(FNW_STRING));
}

/* Opens a plan for kv (NULL-terminated key, value pairs); frees the types
 * afterwards unless the plan holds them (then the caller frees both). */
static fnw_redisop_config *plan_for(fnw_type *in, fnw_type *out, const char *const *kv, fnw_error *err)
{
    fnw_option items[16];
    size_t n = 0;
    for (; kv[2 * n]; n++)
        items[n] = (fnw_option){ kv[2 * n], kv[2 * n + 1] };
    fnw_options o = { n, items };
    fnw_op_env env = { .options = &o, .input_type = in, .output_type = out, .transform_id = "t" };
    return fnw_redisop_config_new(&env, err);
}

/* The plan must fail with a message holding every string of want. */
static void expect_refused(fnw_type *out, const char *const *kv, const char *w1, const char *w2)
{
    fnw_type *in = in_type();
    fnw_error err = { "" };
    fnw_redisop_config *p = plan_for(in, out, kv, &err);
    ck_assert_msg(p == NULL, "accepted: %s", kv[1]);
    ck_assert_msg(strstr(err.msg, "operation 'redis'"), "'%s' does not name the operation", err.msg);
    ck_assert_msg(strstr(err.msg, w1), "'%s' lacks '%s'", err.msg, w1);
    ck_assert_msg(!w2 || strstr(err.msg, w2), "'%s' lacks '%s'", err.msg, w2);
    fnw_type_free(in);
    fnw_type_free(out);
}

START_TEST(test_defaults_and_shapes)
{
    fnw_type *in = in_type();
    fnw_type *out = R(3, "id", T(FNW_INT), "name", T(FNW_STRING), "city", T(FNW_STRING));
    fnw_error err;
    const char *kv[] = { "command", "get user:{id}", "result_field", "city", NULL };
    fnw_redisop_config *p = plan_for(in, out, kv, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_str_eq(p->host, "127.0.0.1");
    ck_assert_int_eq(p->port, 6379);
    ck_assert_int_eq(p->pool_size, 1);
    ck_assert_int_eq(p->db, 0);
    ck_assert_str_eq(p->name, "GET");             /* command names are case-insensitive */
    ck_assert_int_eq(p->shape, FNW_REDISOP_GET);
    ck_assert_int_eq(p->mapping, FNW_REDISOP_ONE);
    ck_assert_int_eq(p->on_missing, FNW_MISSING_NULL);
    fnw_redisop_config_free(p);

    /* HMGET without result_fields: its literal fields, in order */
    const char *kv2[] = { "command", "HMGET user:{id} city name", "address", "[::1]:7000", "pool_size", "4",
                          "on_missing", "empty", NULL };
    fnw_type *out2 = R(3, "id", T(FNW_INT), "city", T(FNW_STRING), "name", T(FNW_STRING));
    ck_assert_msg((p = plan_for(in, out2, kv2, &err)) != NULL, "%s", err.msg);
    ck_assert_int_eq(p->shape, FNW_REDISOP_HMGET);
    ck_assert_int_eq(p->mapping, FNW_REDISOP_BY_POS);
    ck_assert_str_eq(fnw_outrow_result_name(p->row, 0), "city");
    ck_assert_str_eq(fnw_outrow_result_name(p->row, 1), "name");
    ck_assert_str_eq(p->host, "::1");
    ck_assert_int_eq(p->port, 7000);
    ck_assert_int_eq(p->pool_size, 4);
    fnw_redisop_config_free(p);

    /* GET with two arguments is some other command: no MGET rewrite */
    const char *kv3[] = { "command", "GET a b", "result_field", "city", NULL };
    ck_assert_msg((p = plan_for(in, out, kv3, &err)) != NULL, "%s", err.msg);
    ck_assert_int_eq(p->shape, FNW_REDISOP_OTHER);
    fnw_redisop_config_free(p);
    fnw_type_free(in);
    fnw_type_free(out);
    fnw_type_free(out2);
}
END_TEST

START_TEST(test_address)
{
    char host[64];
    int port;
    fnw_error err;
    ck_assert_int_eq(fnw_redisop_config_parse_address("10.1.2.3:1", host, sizeof host, &port, &err), 0);
    ck_assert_str_eq(host, "10.1.2.3");
    ck_assert_int_eq(port, 1);
    ck_assert_int_eq(fnw_redisop_config_parse_address("localhost:6379", host, sizeof host, &port, &err), -1);
    ck_assert_msg(strstr(err.msg, "'address'") && strstr(err.msg, "'localhost' is not an IPv4 address"), "%s",
                  err.msg);
    ck_assert_int_eq(fnw_redisop_config_parse_address("127.0.0.1:70000", host, sizeof host, &port, &err), -1);
    ck_assert_msg(strstr(err.msg, "port '70000'"), "%s", err.msg);
    ck_assert_int_eq(fnw_redisop_config_parse_address("127.0.0.1", host, sizeof host, &port, &err), -1);
    ck_assert_msg(strstr(err.msg, "IP:PORT"), "%s", err.msg);
    ck_assert_int_eq(fnw_redisop_config_parse_address("[::1:6379", host, sizeof host, &port, &err), -1);
}
END_TEST

static fnw_type *out3(void)
{
    return R(3, "id", T(FNW_INT), "name", T(FNW_STRING), "city", T(FNW_STRING));
}

START_TEST(test_refusals)
{
    { const char *kv[] = { "command", "GET k", "result_field", "city", "ttl", "5", NULL };
      expect_refused(out3(), kv, "unknown option 'ttl'", NULL); }
    { const char *kv[] = { "result_field", "city", NULL };
      expect_refused(out3(), kv, "needs option 'command'", NULL); }
    { const char *kv[] = { "command", "GET user:{nope}", "result_field", "city", NULL };
      expect_refused(out3(), kv, "'command'", "nope"); }
    { const char *kv[] = { "command", "{name} k", "result_field", "city", NULL };
      expect_refused(out3(), kv, "'command'", "must be written out"); }
    { const char *kv[] = { "command", "GET k", "result_field", "town", NULL };
      expect_refused(out3(), kv, "'town'", "option 'result_field'"); }
    { const char *kv[] = { "command", "GET k", "result_field", "name", NULL };   /* city: nothing fills it */
      expect_refused(out3(), kv, "output field 'city'", "option 'result_field'"); }
    { const char *kv[] = { "command", "GET k", NULL };
      expect_refused(out3(), kv, "needs option 'result_field'", NULL); }
    { const char *kv[] = { "command", "GET k", "result_fields", "city", NULL };
      expect_refused(out3(), kv, "option 'result_fields'", "GET returns one value"); }
    { const char *kv[] = { "command", "GET k", "result_field", "city", "result_fields", "city", NULL };
      expect_refused(out3(), kv, "not both", NULL); }
    { const char *kv[] = { "command", "HMGET k a b", "result_fields", "city", NULL };
      expect_refused(out3(), kv, "names 1 field(s) but HMGET asks for 2", NULL); }
    { const char *kv[] = { "command", "HMGET k {name}", NULL };
      expect_refused(out3(), kv, "'result_fields'", "placeholder"); }
    { const char *kv[] = { "command", "HGETALL k", NULL };   /* every output field is an input field */
      expect_refused(R(2, "id", T(FNW_INT), "name", T(FNW_STRING)), kv, "HGETALL", "'result_field'"); }
    { const char *kv[] = { "command", "GET k", "result_field", "city", NULL };
      expect_refused(R(3, "id", T(FNW_INT), "name", T(FNW_STRING), "city", M(T(FNW_STRING), T(FNW_STRING))), kv,
                     "output field 'city'", "single string value"); }
    { const char *kv[] = { "command", "HGETALL k", "result_field", "city", NULL };
      expect_refused(out3(), kv, "output field 'city'", "MAP<STRING, STRING>"); }
    { const char *kv[] = { "command", "HGETALL k", NULL };
      expect_refused(R(3, "id", T(FNW_INT), "name", T(FNW_STRING), "tags", C(FNW_LIST, T(FNW_STRING))), kv,
                     "output field 'tags'", "one value"); }
    { const char *kv[] = { "command", "GET k", "result_field", "city", "on_missing", "skip", NULL };
      expect_refused(out3(), kv, "'on_missing'", "skip"); }
    { const char *kv[] = { "command", "GET k", "result_field", "city", "pool_size", "0", NULL };
      expect_refused(out3(), kv, "'pool_size'", NULL); }
    { const char *kv[] = { "command", "GET k", "result_field", "city", "address", "redis:6379", NULL };
      expect_refused(out3(), kv, "'address'", "not an IPv4"); }
    { const char *kv[] = { "command", "GET k", "result_field", "city", "password_env", "FNW_SECRET_NO_SUCH_VAR",
                           NULL };
      expect_refused(out3(), kv, "'password_env'", "'FNW_SECRET_NO_SUCH_VAR' is not set"); }
    { const char *kv[] = { "command", "GET k", "result_field", "city", "password_env", "HOME", NULL };
      expect_refused(out3(), kv, "'password_env'", "'HOME' is not one the operator allows"); }
    { const char *kv[] = { "command", "GET k", "result_field", "city", "username", "bob", NULL };
      expect_refused(out3(), kv, "'username'", "'password_env'"); }
    { const char *kv[] = { "command", "GET k", "result_field", "city", NULL };
      expect_refused(T(FNW_LONG), kv, "emits ROWs", NULL); }
}
END_TEST

/* ---- mapping -------------------------------------------------------------------- */

static fnw_reply str(const char *s)
{
    return (fnw_reply){ .kind = FNW_REPLY_STRING, .len = strlen(s), .u.str = s };
}

static fnw_reply arr(const fnw_reply *items, size_t n)
{
    return (fnw_reply){ .kind = FNW_REPLY_ARRAY, .len = n, .u.items = items };
}

static const fnw_reply nil = { .kind = FNW_REPLY_NIL };

typedef struct fixture {
    fnw_type *in, *out;
    fnw_redisop_config *p;
    fnw_arena a;
    fnw_value f[2], input;
} fixture;

static void fx_open(fixture *x, fnw_type *out, const char *const *kv)
{
    fnw_error err;
    x->in = in_type();
    x->out = out;
    x->p = plan_for(x->in, x->out, kv, &err);
    ck_assert_msg(x->p != NULL, "%s", err.msg);
    fnw_arena_init(&x->a, 0, 0);
    x->f[0] = fnw_value_int(FNW_INT, 42);
    x->f[1] = fnw_value_str("ann");
    x->input = fnw_value_row(FNW_UPDATE_AFTER, x->f, 2);
}

static void fx_close(fixture *x)
{
    fnw_redisop_config_free(x->p);
    fnw_arena_free(&x->a);
    fnw_type_free(x->in);
    fnw_type_free(x->out);
}

START_TEST(test_map_one)
{
    fixture x;
    const char *kv[] = { "command", "GET user:{id}", "result_field", "score", NULL };
    fx_open(&x, R(3, "name", T(FNW_STRING), "score", T(FNW_LONG), "id", T(FNW_INT)), kv);
    fnw_value row;
    fnw_error err;
    fnw_reply r = str("1234");
    ck_assert_int_eq(fnw_redisop_map(x.p, &x.input, &r, &x.a, &row, &err), FNW_REDISOP_ROW);
    ck_assert_int_eq(row.row_kind, FNW_UPDATE_AFTER);
    ck_assert_int_eq(row.u.items[1].u.i, 1234);
    ck_assert_int_eq(row.u.items[2].u.i, 42);           /* copied from the input */
    ck_assert_uint_eq(row.u.items[0].count, 3);
    /* nil under on_missing null: the row, with the result null */
    ck_assert_int_eq(fnw_redisop_map(x.p, &x.input, &nil, &x.a, &row, &err), FNW_REDISOP_ROW);
    ck_assert(row.u.items[1].is_null && !row.u.items[2].is_null);
    /* a conversion failure names the field, the value and the type */
    r = str("12x");
    ck_assert_int_eq(fnw_redisop_map(x.p, &x.input, &r, &x.a, &row, &err), -1);
    ck_assert_msg(strstr(err.msg, "score") && strstr(err.msg, "\"12x\"") && strstr(err.msg, "LONG"), "%s",
                  err.msg);
    fx_close(&x);
}
END_TEST

START_TEST(test_missing_policies)
{
    const char *modes[] = { "empty", "fail" };
    for (int m = 0; m < 2; m++) {
        fixture x;
        const char *kv[] = { "command", "HGETALL user:{id}", "on_missing", modes[m], NULL };
        fx_open(&x, R(3, "id", T(FNW_INT), "city", T(FNW_STRING), "age", T(FNW_INT)), kv);
        fnw_value row;
        fnw_error err;
        fnw_reply empty = arr(NULL, 0);          /* HGETALL of no hash: missing */
        int want = m == 0 ? FNW_REDISOP_SKIP : -1;
        ck_assert_int_eq(fnw_redisop_map(x.p, &x.input, &empty, &x.a, &row, &err), want);
        ck_assert_int_eq(fnw_redisop_map(x.p, &x.input, &nil, &x.a, &row, &err), want);
        if (m == 1)
            ck_assert_msg(strstr(err.msg, "on_missing is fail"), "%s", err.msg);
        fx_close(&x);
    }
}
END_TEST

START_TEST(test_map_by_name)
{
    fixture x;
    const char *kv[] = { "command", "HGETALL user:{id}", NULL };
    fx_open(&x, R(4, "id", T(FNW_INT), "city", T(FNW_STRING), "age", T(FNW_INT), "zip", T(FNW_STRING)), kv);
    ck_assert_int_eq(x.p->mapping, FNW_REDISOP_BY_NAME);
    fnw_reply kvs[] = { str("age"), str("37"), str("other"), str("x"), str("city"), str("Oslo") };
    fnw_reply r = arr(kvs, 6);
    fnw_value row;
    fnw_error err;
    ck_assert_int_eq(fnw_redisop_map(x.p, &x.input, &r, &x.a, &row, &err), FNW_REDISOP_ROW);
    ck_assert_int_eq(row.u.items[0].u.i, 42);
    ck_assert_int_eq(row.u.items[1].count, 4);
    ck_assert(memcmp(row.u.items[1].u.bytes, "Oslo", 4) == 0);
    ck_assert_int_eq(row.u.items[2].u.i, 37);
    ck_assert(row.u.items[3].is_null);                  /* no such key in the hash */
    kvs[1] = str("old");
    ck_assert_int_eq(fnw_redisop_map(x.p, &x.input, &r, &x.a, &row, &err), -1);
    ck_assert_msg(strstr(err.msg, "age") && strstr(err.msg, "\"old\"") && strstr(err.msg, "INT"), "%s", err.msg);
    fx_close(&x);
}
END_TEST

START_TEST(test_map_by_pos)
{
    fixture x;
    const char *kv[] = { "command", "HMGET user:{id} c a", "result_fields", "city,age", NULL };
    fx_open(&x, R(3, "age", T(FNW_SHORT), "city", T(FNW_STRING), "id", T(FNW_INT)), kv);
    fnw_reply two[] = { str("Rome"), nil };
    fnw_reply r = arr(two, 2);
    fnw_value row;
    fnw_error err;
    ck_assert_int_eq(fnw_redisop_map(x.p, &x.input, &r, &x.a, &row, &err), FNW_REDISOP_ROW);
    ck_assert(memcmp(row.u.items[1].u.bytes, "Rome", 4) == 0);
    ck_assert(row.u.items[0].is_null);
    ck_assert(!fnw_redisop_map_is_missing(x.p, &r));
    fnw_reply nils[] = { nil, nil };
    fnw_reply gone = arr(nils, 2);
    ck_assert(fnw_redisop_map_is_missing(x.p, &gone));      /* HMGET of no hash */
    fnw_reply one = arr(two, 1);
    ck_assert_int_eq(fnw_redisop_map(x.p, &x.input, &one, &x.a, &row, &err), -1);
    ck_assert_msg(strstr(err.msg, "1 element(s) for 2 result field(s)"), "%s", err.msg);
    fx_close(&x);
}
END_TEST

START_TEST(test_map_whole_reply)
{
    /* HGETALL into one MAP field, in the hash's order */
    fixture x;
    const char *kv[] = { "command", "HGETALL user:{id}", "result_field", "attrs", NULL };
    fx_open(&x, R(2, "id", T(FNW_INT), "attrs", M(T(FNW_STRING), T(FNW_STRING))), kv);
    fnw_reply kvs[] = { str("b"), str("2"), str("a"), str("1") };
    fnw_reply r = arr(kvs, 4);
    fnw_value row;
    fnw_error err;
    ck_assert_int_eq(fnw_redisop_map(x.p, &x.input, &r, &x.a, &row, &err), FNW_REDISOP_ROW);
    ck_assert_int_eq(row.u.items[1].kind, FNW_MAP);
    ck_assert_uint_eq(row.u.items[1].count, 2);
    ck_assert(memcmp(row.u.items[1].u.items[0].u.bytes, "b", 1) == 0);
    ck_assert(memcmp(row.u.items[1].u.items[3].u.bytes, "1", 1) == 0);
    fx_close(&x);

    /* any other command into any convertible type: LRANGE into LIST<LONG> */
    const char *kv2[] = { "command", "LRANGE hits:{id} 0 -1", "result_field", "hits", NULL };
    fx_open(&x, R(2, "id", T(FNW_INT), "hits", C(FNW_LIST, T(FNW_LONG))), kv2);
    ck_assert_int_eq(x.p->shape, FNW_REDISOP_OTHER);
    fnw_reply items[] = { str("5"), str("-6") };
    r = arr(items, 2);
    ck_assert_int_eq(fnw_redisop_map(x.p, &x.input, &r, &x.a, &row, &err), FNW_REDISOP_ROW);
    ck_assert_uint_eq(row.u.items[1].count, 2);
    ck_assert_int_eq(row.u.items[1].u.items[1].u.i, -6);
    fnw_reply none = arr(NULL, 0);                      /* an empty list is a value, not missing */
    ck_assert(!fnw_redisop_map_is_missing(x.p, &none));
    fx_close(&x);
}
END_TEST

START_TEST(test_adapt)
{
    redisReply s = { .type = REDIS_REPLY_STRING, .str = "a\0b", .len = 3 };
    redisReply i = { .type = REDIS_REPLY_INTEGER, .integer = -7 };
    redisReply n = { .type = REDIS_REPLY_NIL };
    redisReply st = { .type = REDIS_REPLY_STATUS, .str = "OK", .len = 2 };
    redisReply *inner_el[] = { &i };
    redisReply inner = { .type = REDIS_REPLY_ARRAY, .elements = 1, .element = inner_el };
    redisReply *el[] = { &s, &i, &n, &st, &inner };
    redisReply top = { .type = REDIS_REPLY_ARRAY, .elements = 5, .element = el };
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    fnw_reply r;
    fnw_error err;
    ck_assert_int_eq(fnw_redisop_map_adapt(&top, &a, &r, &err), 0);
    ck_assert_int_eq(r.kind, FNW_REPLY_ARRAY);
    ck_assert_uint_eq(r.len, 5);
    ck_assert_int_eq(r.u.items[0].kind, FNW_REPLY_STRING);
    ck_assert_uint_eq(r.u.items[0].len, 3);                 /* binary safe */
    ck_assert_int_eq(r.u.items[1].u.i, -7);
    ck_assert_int_eq(r.u.items[2].kind, FNW_REPLY_NIL);
    ck_assert_int_eq(r.u.items[3].kind, FNW_REPLY_STRING);
    ck_assert_int_eq(r.u.items[4].u.items[0].u.i, -7);
    redisReply e = { .type = REDIS_REPLY_ERROR, .str = "ERR", .len = 3 };
    ck_assert_int_eq(fnw_redisop_map_adapt(&e, &a, &r, &err), -1);
    /* the lookup cache's flat form gives back the same neutral reply */
    fnw_buf flat;
    fnw_buf_init(&flat, 0);
    ck_assert_int_eq(fnw_redisop_map_flatten(&top, &flat, &err), 0);
    fnw_reply back;
    ck_assert_msg(fnw_redisop_map_unflatten(flat.p, flat.len, &a, &back, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(back.kind, FNW_REPLY_ARRAY);
    ck_assert_uint_eq(back.len, 5);
    ck_assert_uint_eq(back.u.items[0].len, 3);
    ck_assert_int_eq(memcmp(back.u.items[0].u.str, "a\0b", 3), 0);
    ck_assert_int_eq(back.u.items[1].u.i, -7);
    ck_assert_int_eq(back.u.items[2].kind, FNW_REPLY_NIL);
    ck_assert_int_eq(back.u.items[3].kind, FNW_REPLY_STRING);
    ck_assert_int_eq(back.u.items[4].kind, FNW_REPLY_ARRAY);
    ck_assert_int_eq(back.u.items[4].u.items[0].u.i, -7);
    /* every cut of it, and a byte too many, is refused, not read past */
    for (size_t cut = 0; cut < flat.len; cut++)
        ck_assert_int_eq(fnw_redisop_map_unflatten(flat.p, cut, &a, &back, &err), -1);
    ck_assert_int_eq(fnw_buf_put_u8(&flat, 'N'), 0);
    ck_assert_int_eq(fnw_redisop_map_unflatten(flat.p, flat.len, &a, &back, &err), -1);
    ck_assert_int_eq(fnw_redisop_map_flatten(&e, &flat, &err), -1);
    fnw_buf_free(&flat);
    fnw_arena_free(&a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("redisop");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_defaults_and_shapes);
    tcase_add_test(tc, test_address);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_map_one);
    tcase_add_test(tc, test_missing_policies);
    tcase_add_test(tc, test_map_by_name);
    tcase_add_test(tc, test_map_by_pos);
    tcase_add_test(tc, test_map_whole_reply);
    tcase_add_test(tc, test_adapt);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
