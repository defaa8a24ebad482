/* tests/unit/ops/test_conv_reply.c — Redis-style replies into typed
 * fields: numeric text (strict digits, range, floats with inf but not nan or
 * hex), booleans from 1/0/true/false, integers, doubles and booleans into
 * every scalar they fit, nil and where it is refused, arrays into arrays,
 * ROW by position (HMGET) and MAP from pairs (HGETALL), binary strings, and
 * messages with an escaped excerpt of the reply. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/bind/conv.h"
#include "tests/unit/binding_build.h"
#include "tests/unit/check_run.h"

static fnw_arena arena;

static void setup(void)
{
    fnw_arena_init(&arena, 0, 0);
}

static void teardown(void)
{
    fnw_arena_free(&arena);
}

static fnw_reply S(const char *s)
{
    return (fnw_reply){ .kind = FNW_REPLY_STRING, .len = strlen(s), .u.str = s };
}
static fnw_reply I(int64_t i)
{
    return (fnw_reply){ .kind = FNW_REPLY_INTEGER, .u.i = i };
}
static fnw_reply D(double d)
{
    return (fnw_reply){ .kind = FNW_REPLY_DOUBLE, .u.d = d };
}
static fnw_reply B(int b)
{
    return (fnw_reply){ .kind = FNW_REPLY_BOOL, .u.b = b };
}
static fnw_reply A(const fnw_reply *items, size_t n)
{
    return (fnw_reply){ .kind = FNW_REPLY_ARRAY, .len = n, .u.items = items };
}
static const fnw_reply NIL = { .kind = FNW_REPLY_NIL };

/* Converts r into t (adopted); asserts success. */
static fnw_value conv_ok(fnw_type *t, fnw_reply r)
{
    fnw_error err;
    ck_assert_msg(fnw_conv_check_type(t, "v", &err) == 0, "%s", err.msg);
    fnw_value v;
    ck_assert_msg(fnw_conv_reply(t, &r, "v", &arena, &v, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(v.kind, t->kind);
    fnw_type_free(t);
    return v;
}

static void conv_fails(fnw_type *t, fnw_reply r, const char *want)
{
    fnw_error err = { "" };
    fnw_value v;
    ck_assert_int_eq(fnw_conv_reply(t, &r, "v", &arena, &v, &err), -1);
    ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'", err.msg, want);
    fnw_type_free(t);
}

START_TEST(test_numeric_strings)
{
    ck_assert_int_eq(conv_ok(T(FNW_INT), S("42")).u.i, 42);
    ck_assert_int_eq(conv_ok(T(FNW_INT), S("-7")).u.i, -7);
    ck_assert_int_eq(conv_ok(T(FNW_INT), S("007")).u.i, 7);
    ck_assert_int_eq(conv_ok(T(FNW_LONG), S("2147483648")).u.i, 2147483648LL);
    ck_assert_int_eq(conv_ok(T(FNW_LONG), S("-9223372036854775808")).u.i, INT64_MIN);
    ck_assert_int_eq(conv_ok(T(FNW_LONG), S("9223372036854775807")).u.i, INT64_MAX);
    ck_assert_int_eq(conv_ok(T(FNW_BYTE), S("-128")).u.i, -128);
    conv_fails(T(FNW_INT), S("2147483648"), "field 'v': cannot convert Redis string \"2147483648\" to INT: out of "
               "range");
    conv_fails(T(FNW_SHORT), S("40000"), "to SHORT: out of range");
    conv_fails(T(FNW_LONG), S("9223372036854775808"), "not a whole number");
    conv_fails(T(FNW_LONG), S("-9223372036854775809"), "not a whole number");
    conv_fails(T(FNW_LONG), S("99999999999999999999999999"), "not a whole number");
    static const char *const bad[] = { "", "-", "+1", " 1", "1 ", "1.0", "1e3", "0x10", "abc", "1-", NULL };
    for (int i = 0; bad[i]; i++)
        conv_fails(T(FNW_INT), S(bad[i]), "to INT: not a whole number");
}
END_TEST

START_TEST(test_float_strings)
{
    ck_assert(conv_ok(T(FNW_DOUBLE), S("1.5")).u.d == 1.5);
    ck_assert(conv_ok(T(FNW_DOUBLE), S("-2e-3")).u.d == -2e-3);
    ck_assert(conv_ok(T(FNW_DOUBLE), S(".5")).u.d == 0.5);
    ck_assert(conv_ok(T(FNW_DOUBLE), S("42")).u.d == 42.0);
    ck_assert(isinf(conv_ok(T(FNW_DOUBLE), S("inf")).u.d));
    ck_assert(conv_ok(T(FNW_DOUBLE), S("-INF")).u.d == -INFINITY);
    ck_assert(conv_ok(T(FNW_DOUBLE), S("+inf")).u.d == INFINITY);
    ck_assert(conv_ok(T(FNW_FLOAT), S("3.4e38")).u.f == 3.4e38f);
    ck_assert(isinf(conv_ok(T(FNW_FLOAT), S("inf")).u.f));
    conv_fails(T(FNW_FLOAT), S("3.5e38"), "to FLOAT: out of range");
    static const char *const bad[] = { "nan", "NaN", "0x1p3", "infinity", "1e999", "", "e5", "1.5 ", " 1.5",
                                       "1..5", "--1", NULL };
    for (int i = 0; bad[i]; i++)
        conv_fails(T(FNW_DOUBLE), S(bad[i]), "to DOUBLE: not a decimal number");
    char longnum[100];
    memset(longnum, '1', 64);
    longnum[64] = '\0';
    conv_fails(T(FNW_DOUBLE), S(longnum), "not a decimal number");
    longnum[63] = '\0';
    ck_assert(conv_ok(T(FNW_DOUBLE), S(longnum)).u.d > 1e62);
}
END_TEST

START_TEST(test_booleans)
{
    ck_assert_int_eq(conv_ok(T(FNW_BOOLEAN), S("1")).u.i, 1);
    ck_assert_int_eq(conv_ok(T(FNW_BOOLEAN), S("true")).u.i, 1);
    ck_assert_int_eq(conv_ok(T(FNW_BOOLEAN), S("0")).u.i, 0);
    ck_assert_int_eq(conv_ok(T(FNW_BOOLEAN), S("false")).u.i, 0);
    ck_assert_int_eq(conv_ok(T(FNW_BOOLEAN), I(1)).u.i, 1);
    ck_assert_int_eq(conv_ok(T(FNW_BOOLEAN), I(0)).u.i, 0);
    ck_assert_int_eq(conv_ok(T(FNW_BOOLEAN), B(1)).u.i, 1);
    conv_fails(T(FNW_BOOLEAN), S("yes"), "a boolean is 1, 0, true or false");
    conv_fails(T(FNW_BOOLEAN), S("TRUE"), "a boolean is");
    conv_fails(T(FNW_BOOLEAN), I(2), "Redis integer 2 to BOOLEAN: only 0 and 1 are booleans");
    conv_fails(T(FNW_BOOLEAN), D(1.0), "Redis double 1 to BOOLEAN");
    conv_fails(T(FNW_INT), B(1), "Redis boolean true to INT");
}
END_TEST

START_TEST(test_integers_doubles_to_scalars)
{
    ck_assert_int_eq(conv_ok(T(FNW_SHORT), I(-32768)).u.i, -32768);
    conv_fails(T(FNW_INT), I(INT64_MAX), "Redis integer 9223372036854775807 to INT: out of range");
    ck_assert(conv_ok(T(FNW_DOUBLE), I(3)).u.d == 3.0);
    ck_assert(conv_ok(T(FNW_FLOAT), I(INT64_MAX)).u.f == (float)INT64_MAX);
    ck_assert_int_eq(conv_ok(T(FNW_INT), D(3.0)).u.i, 3);
    conv_fails(T(FNW_INT), D(3.5), "Redis double 3.5 to INT: not a whole number");
    conv_fails(T(FNW_LONG), D(INFINITY), "Redis double inf to LONG: not a whole number");
    conv_fails(T(FNW_FLOAT), D(1e300), "to FLOAT: out of range");
    ck_assert(conv_ok(T(FNW_FLOAT), D(0.25)).u.f == 0.25f);
    fnw_value s = conv_ok(T(FNW_STRING), I(-123));
    ck_assert(s.count == 4 && memcmp(s.u.bytes, "-123", 4) == 0);
    s = conv_ok(T(FNW_STRING), D(0.1));
    ck_assert(s.count == 3 && memcmp(s.u.bytes, "0.1", 3) == 0);
    s = conv_ok(T(FNW_STRING), D(-INFINITY));
    ck_assert(s.count == 4 && memcmp(s.u.bytes, "-inf", 4) == 0);
    s = conv_ok(T(FNW_STRING), B(0));
    ck_assert(s.count == 5 && memcmp(s.u.bytes, "false", 5) == 0);
}
END_TEST

START_TEST(test_binary_strings_and_excerpt)
{
    const char bin[] = { 'a', '\0', '\xff', '"', '\\', 'z' };
    fnw_reply r = { .kind = FNW_REPLY_STRING, .len = sizeof bin, .u.str = bin };
    fnw_value s = conv_ok(T(FNW_STRING), r);
    ck_assert_uint_eq(s.count, sizeof bin);
    ck_assert_int_eq(memcmp(s.u.bytes, bin, sizeof bin), 0);
    ck_assert_ptr_ne(s.u.bytes, bin);   /* copied into the arena */
    fnw_error err;
    fnw_value v;
    fnw_type *t = T(FNW_INT);
    ck_assert_int_eq(fnw_conv_reply(t, &r, "count", &arena, &v, &err), -1);
    ck_assert_str_eq(err.msg, "field 'count': cannot convert Redis string \"a\\x00\\xff\\\"\\\\z\" to INT: not a "
                     "whole number (optional '-' and decimal digits) that fits 64 bits");
    char big[1000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ck_assert_int_eq(fnw_conv_reply(t, &(fnw_reply){ .kind = FNW_REPLY_STRING, .len = 999, .u.str = big },
                                    "count", &arena, &v, &err), -1);
    ck_assert_msg(strstr(err.msg, "\"qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq\"... to INT"),
                  "%s", err.msg);
    fnw_type_free(t);
}
END_TEST

START_TEST(test_nil)
{
    ck_assert(conv_ok(T(FNW_STRING), NIL).is_null);
    ck_assert(conv_ok(R(1, "a", T(FNW_INT)), NIL).is_null);
    fnw_reply items[] = { S("a"), NIL };
    fnw_value v = conv_ok(C(FNW_BASIC_ARRAY, T(FNW_STRING)), A(items, 2));
    ck_assert(v.u.items[1].is_null && !v.u.items[0].is_null);
    conv_fails(C(FNW_LIST, T(FNW_STRING)), A(items, 2), "field 'v[1]': cannot convert Redis nil to STRING: this "
               "container cannot hold nulls");
    fnw_error err;
    fnw_value out;
    fnw_type *t = T(FNW_INT);
    ck_assert_int_eq(fnw_conv_reply(t, NULL, "v", &arena, &out, &err), 0);   /* absent is nil */
    ck_assert(out.is_null);
    fnw_type_free(t);
}
END_TEST

START_TEST(test_arrays_rows_maps)
{
    fnw_reply nums[] = { S("1"), I(2), D(3.0) };
    fnw_value v = conv_ok(C(FNW_LIST, T(FNW_LONG)), A(nums, 3));
    ck_assert(v.count == 3 && v.u.items[0].u.i == 1 && v.u.items[2].u.i == 3);
    v = conv_ok(C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)), A(nums, 3));
    ck_assert(v.count == 3 && memcmp(v.u.bytes, "\x01\x02\x03", 3) == 0);
    v = conv_ok(C(FNW_PRIMITIVE_ARRAY, T(FNW_DOUBLE)), A(nums, 3));
    ck_assert(v.u.items[1].u.d == 2.0);
    /* HMGET user name email age */
    fnw_reply hmget[] = { S("bob"), NIL, S("42") };
    v = conv_ok(R(3, "name", T(FNW_STRING), "email", T(FNW_STRING), "age", T(FNW_INT)), A(hmget, 3));
    ck_assert(v.count == 3 && v.u.items[1].is_null && v.u.items[2].u.i == 42);
    conv_fails(R(2, "name", T(FNW_STRING), "age", T(FNW_INT)), A(hmget, 3),
               "a ROW of 2 fields is read from an array of as many elements");
    hmget[2] = S("old");
    conv_fails(R(3, "name", T(FNW_STRING), "email", T(FNW_STRING), "age", T(FNW_INT)), A(hmget, 3),
               "field 'v.age': cannot convert Redis string \"old\" to INT");
    /* HGETALL */
    fnw_reply pairs[] = { S("b"), S("2"), S("a"), NIL, I(7), S("3") };
    v = conv_ok(M(T(FNW_STRING), T(FNW_INT)), A(pairs, 6));
    ck_assert_uint_eq(v.count, 3);
    ck_assert(v.u.items[0].count == 1 && v.u.items[0].u.bytes[0] == 'b' && v.u.items[1].u.i == 2);
    ck_assert(v.u.items[3].is_null);
    ck_assert(v.u.items[4].count == 1 && v.u.items[4].u.bytes[0] == '7' && v.u.items[5].u.i == 3);
    conv_fails(M(T(FNW_STRING), T(FNW_INT)), A(pairs, 5), "an even count");
    fnw_reply nil_key[] = { NIL, S("1") };
    conv_fails(M(T(FNW_STRING), T(FNW_INT)), A(nil_key, 2), "field 'v[0]': cannot convert Redis nil to STRING: a "
               "MAP key must be a string or number");
    conv_fails(C(FNW_LIST, T(FNW_INT)), S("1,2"), "a container is read from a Redis array");
    conv_fails(T(FNW_STRING), A(nums, 3), "a Redis array (3 elements) to STRING");
    fnw_reply nested[] = { A(nums, 3), S("x") };
    conv_fails(C(FNW_LIST, C(FNW_LIST, T(FNW_INT))), A(nested, 2), "field 'v[1]': cannot convert Redis string "
               "\"x\" to LIST<INT>");
}
END_TEST

START_TEST(test_hostile_replies)
{
    /* a reply nested far deeper than the type stops where the type does */
    enum { DEPTH = 10000 };
    fnw_reply *chain = calloc(DEPTH + 1, sizeof *chain);
    for (int i = 0; i < DEPTH; i++)
        chain[i] = A(&chain[i + 1], 1);
    chain[DEPTH] = I(1);
    conv_fails(C(FNW_LIST, T(FNW_INT)), chain[0], "field 'v[0]': cannot convert a Redis array (1 elements) to INT");
    free(chain);
    /* an unknown kind (a bad adapter) fails instead of being guessed */
    fnw_reply odd = { .kind = (fnw_reply_kind)99 };
    conv_fails(T(FNW_INT), odd, "unknown kind 99");
    /* an arena at its limit fails cleanly */
    fnw_arena small;
    fnw_arena_init(&small, 64, 64);
    fnw_reply many[10];
    for (int i = 0; i < 10; i++)
        many[i] = I(i);
    fnw_type *t = C(FNW_LIST, T(FNW_INT));
    fnw_value v;
    fnw_error err;
    ck_assert_int_eq(fnw_conv_reply(t, &(fnw_reply){ .kind = FNW_REPLY_ARRAY, .len = 10, .u.items = many },
                                    "v", &small, &v, &err), -1);
    ck_assert_msg(strstr(err.msg, "out of memory"), "%s", err.msg);
    fnw_type_free(t);
    fnw_arena_free(&small);
}
END_TEST

/* A Table type: kind k with precision p and scale s. */
static fnw_type *P(fnw_kind k, int p, int s)
{
    fnw_type *t = T(k);
    fnw_error err;
    ck_assert_msg(fnw_type_set_precision(t, p, s, &err) == 0, "%s", err.msg);
    return t;
}

START_TEST(test_table_kinds)
{
    fnw_value v = conv_ok(P(FNW_BIG_DEC, 4, 1), S("1.25"));
    ck_assert_uint_eq(v.count, 3);
    ck_assert_int_eq(memcmp(v.u.bytes, "1.3", 3), 0);
    v = conv_ok(P(FNW_BIG_DEC, 10, 2), I(-4));
    ck_assert_uint_eq(v.count, 5);
    ck_assert_int_eq(memcmp(v.u.bytes, "-4.00", 5), 0);
    v = conv_ok(P(FNW_BIG_DEC, 10, 2), D(0.125));
    ck_assert_int_eq(memcmp(v.u.bytes, "0.13", 4), 0);
    conv_fails(P(FNW_BIG_DEC, 2, 1), S("9.95"), "to DECIMAL(2, 1): it needs more digits than the type's precision");
    conv_fails(P(FNW_BIG_DEC, 4, 1), B(1), "a reply of another kind");
    v = conv_ok(P(FNW_SQL_TIMESTAMP, 6, 0), S("2023-11-14T22:13:20.123456"));
    ck_assert_int_eq(v.u.i, INT64_C(1700000000123));
    ck_assert_uint_eq(v.count, 456000);
    v = conv_ok(P(FNW_LOCAL_ZONED_TIMESTAMP, 3, 0), I(42));
    ck_assert_int_eq(v.u.i, 42);
    conv_fails(P(FNW_SQL_TIMESTAMP, 3, 0), S("yesterday"), "a timestamp is ISO-8601 text");
    conv_fails(P(FNW_SQL_TIMESTAMP, 3, 0), D(1.5), "a timestamp is epoch milliseconds");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("conv_reply");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_numeric_strings);
    tcase_add_test(tc, test_float_strings);
    tcase_add_test(tc, test_booleans);
    tcase_add_test(tc, test_integers_doubles_to_scalars);
    tcase_add_test(tc, test_binary_strings_and_excerpt);
    tcase_add_test(tc, test_nil);
    tcase_add_test(tc, test_arrays_rows_maps);
    tcase_add_test(tc, test_hostile_replies);
    tcase_add_test(tc, test_table_kinds);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
