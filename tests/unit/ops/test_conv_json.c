/* tests/unit/ops/test_conv_json.c — JSON values into typed fields:
 * the strict numeric rules (integral and in range; FLOAT range), booleans,
 * strings (and other JSON kept as compact text), nulls and where they are
 * refused, containers, ROW by field name, MAP in document order, messages
 * naming the field path, an escaped excerpt and the type, the supported
 * target check, arena limits and hostile documents (deep nesting, integer
 * overflow), and the Table kinds: DECIMAL(p, s) rounded to its scale,
 * TIMESTAMP(p) / TIMESTAMP_LTZ(p) from epoch ms or ISO-8601 text. */
#include <check.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
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

static json_t *parse(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    ck_assert_msg(j != NULL, "%s: %s", text, jerr.text);
    return j;
}

/* Converts text into type t (adopted); asserts success. */
static fnw_value conv_ok(fnw_type *t, const char *text)
{
    fnw_error err;
    ck_assert_msg(fnw_conv_check_type(t, "r", &err) == 0, "%s", err.msg);
    json_t *j = parse(text);
    fnw_value v;
    ck_assert_msg(fnw_conv_json(t, j, "r", &arena, &v, &err) == 0, "%s: %s", text, err.msg);
    ck_assert_int_eq(v.kind, t->kind);
    json_decref(j);
    fnw_type_free(t);
    return v;
}

/* Converting text into t (adopted) fails with a message holding want. */
static void conv_fails(fnw_type *t, const char *text, const char *want)
{
    fnw_error err = { "" };
    json_t *j = parse(text);
    fnw_value v;
    ck_assert_int_eq(fnw_conv_json(t, j, "r", &arena, &v, &err), -1);
    ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'", err.msg, want);
    json_decref(j);
    fnw_type_free(t);
}

START_TEST(test_integers)
{
    ck_assert_int_eq(conv_ok(T(FNW_INT), "42").u.i, 42);
    ck_assert_int_eq(conv_ok(T(FNW_INT), "-2147483648").u.i, INT32_MIN);
    ck_assert_int_eq(conv_ok(T(FNW_INT), "42.0").u.i, 42);
    ck_assert_int_eq(conv_ok(T(FNW_INT), "1e3").u.i, 1000);
    ck_assert_int_eq(conv_ok(T(FNW_BYTE), "-128").u.i, -128);
    ck_assert_int_eq(conv_ok(T(FNW_SHORT), "32767").u.i, 32767);
    ck_assert_int_eq(conv_ok(T(FNW_LONG), "9223372036854775807").u.i, INT64_MAX);
    ck_assert_int_eq(conv_ok(T(FNW_LONG), "-9223372036854775808.0").u.i, INT64_MIN);
    conv_fails(T(FNW_INT), "2147483648", "field 'r': cannot convert JSON number 2147483648 to INT: out of range");
    conv_fails(T(FNW_BYTE), "128", "to BYTE: out of range");
    conv_fails(T(FNW_SHORT), "-32769", "to SHORT: out of range");
    conv_fails(T(FNW_LONG), "9.3e18", "to LONG: out of range");
    conv_fails(T(FNW_LONG), "9223372036854775808.0", "out of range");
    conv_fails(T(FNW_INT), "1.5", "JSON number 1.5 to INT: not a whole number");
    conv_fails(T(FNW_INT), "0.1", "JSON number 0.1 to INT: not a whole number");
    conv_fails(T(FNW_INT), "\"42\"", "JSON string \"42\" to INT: not a JSON number");
    conv_fails(T(FNW_INT), "true", "JSON true to INT");
    conv_fails(T(FNW_LONG), "[1]", "JSON array [1] to LONG");
    conv_fails(T(FNW_INT), "{}", "JSON object {} to INT");
}
END_TEST

START_TEST(test_floats)
{
    ck_assert(conv_ok(T(FNW_FLOAT), "3.5").u.f == 3.5f);
    ck_assert(conv_ok(T(FNW_FLOAT), "7").u.f == 7.0f);
    ck_assert(conv_ok(T(FNW_FLOAT), "3.4e38").u.f == 3.4e38f);
    ck_assert(conv_ok(T(FNW_DOUBLE), "1e308").u.d == 1e308);
    ck_assert(conv_ok(T(FNW_DOUBLE), "-0.1").u.d == -0.1);
    ck_assert(conv_ok(T(FNW_DOUBLE), "9007199254740993").u.d == 9007199254740992.0);
    conv_fails(T(FNW_FLOAT), "3.5e38", "JSON number 3.5e+38 to FLOAT: out of range");
    conv_fails(T(FNW_FLOAT), "-1e39", "to FLOAT: out of range");
    conv_fails(T(FNW_DOUBLE), "\"1.5\"", "not a JSON number");
}
END_TEST

START_TEST(test_booleans_and_strings)
{
    ck_assert_int_eq(conv_ok(T(FNW_BOOLEAN), "true").u.i, 1);
    ck_assert_int_eq(conv_ok(T(FNW_BOOLEAN), "false").u.i, 0);
    conv_fails(T(FNW_BOOLEAN), "1", "JSON number 1 to BOOLEAN");
    conv_fails(T(FNW_BOOLEAN), "\"true\"", "JSON string \"true\" to BOOLEAN");
    fnw_value s = conv_ok(T(FNW_STRING), "\"h\\u00e9\\\"llo\"");
    ck_assert_uint_eq(s.count, 7);
    ck_assert_int_eq(memcmp(s.u.bytes, "h\xc3\xa9\"llo", 7), 0);
    s = conv_ok(T(FNW_STRING), "\"a\\u0000b\"");   /* embedded NUL kept */
    ck_assert_uint_eq(s.count, 3);
    ck_assert_int_eq(memcmp(s.u.bytes, "a\0b", 3), 0);
    s = conv_ok(T(FNW_STRING), "42");
    ck_assert_int_eq(memcmp(s.u.bytes, "42", s.count), 0);
    ck_assert_uint_eq(s.count, 2);
    s = conv_ok(T(FNW_STRING), "{\"a\": [1, true, null], \"b\": \"x\"}");
    const char *want = "{\"a\":[1,true,null],\"b\":\"x\"}";
    ck_assert_uint_eq(s.count, strlen(want));
    ck_assert_int_eq(memcmp(s.u.bytes, want, s.count), 0);
}
END_TEST

START_TEST(test_string_is_copied_into_the_arena)
{
    json_t *j = json_string("borrowed?");
    fnw_type *t = T(FNW_STRING);
    fnw_value v;
    fnw_error err;
    ck_assert_int_eq(fnw_conv_json(t, j, "r", &arena, &v, &err), 0);
    ck_assert_ptr_ne(v.u.bytes, json_string_value(j));
    json_decref(j);   /* the value outlives the document */
    ck_assert_int_eq(memcmp(v.u.bytes, "borrowed?", 9), 0);
    fnw_type_free(t);
}
END_TEST

START_TEST(test_nulls)
{
    ck_assert(conv_ok(T(FNW_INT), "null").is_null);
    ck_assert(conv_ok(T(FNW_STRING), "null").is_null);
    fnw_error err;
    fnw_value v;
    fnw_type *t = R(1, "a", T(FNW_INT));
    ck_assert_int_eq(fnw_conv_json(t, NULL, "r", &arena, &v, &err), 0);   /* absent is null */
    ck_assert(v.is_null && v.kind == FNW_ROW);
    fnw_type_free(t);
    v = conv_ok(C(FNW_BASIC_ARRAY, T(FNW_STRING)), "[\"a\", null]");
    ck_assert(v.count == 2 && v.u.items[1].is_null && !v.u.items[0].is_null);
    v = conv_ok(C(FNW_OBJECT_ARRAY, T(FNW_INT)), "[null]");
    ck_assert(v.u.items[0].is_null);
    conv_fails(C(FNW_LIST, T(FNW_INT)), "[1, null]", "field 'r[1]': cannot convert JSON null to INT: this "
               "container cannot hold nulls");
    conv_fails(C(FNW_PRIMITIVE_ARRAY, T(FNW_INT)), "[null]", "cannot hold nulls");
    conv_fails(C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)), "[null]", "cannot hold nulls");
}
END_TEST

START_TEST(test_containers)
{
    fnw_value v = conv_ok(C(FNW_LIST, T(FNW_LONG)), "[1, 2.0, -3]");
    ck_assert_uint_eq(v.count, 3);
    ck_assert_int_eq(v.u.items[2].u.i, -3);
    ck_assert_int_eq(v.u.items[1].kind, FNW_LONG);
    v = conv_ok(C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)), "[1, -1, 127, -128]");
    ck_assert_uint_eq(v.count, 4);
    ck_assert_int_eq(memcmp(v.u.bytes, "\x01\xff\x7f\x80", 4), 0);
    v = conv_ok(C(FNW_PRIMITIVE_ARRAY, T(FNW_BOOLEAN)), "[true, false]");
    ck_assert_int_eq(v.u.items[0].u.i, 1);
    v = conv_ok(C(FNW_LIST, C(FNW_LIST, T(FNW_INT))), "[[], [1, 2]]");
    ck_assert(v.u.items[0].count == 0 && v.u.items[1].count == 2);
    v = conv_ok(C(FNW_LIST, T(FNW_INT)), "[]");
    ck_assert_uint_eq(v.count, 0);
    conv_fails(C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)), "[128]", "field 'r[0]': cannot convert JSON number 128 to BYTE");
    conv_fails(C(FNW_LIST, T(FNW_INT)), "{\"0\": 1}", "an array is read from a JSON array");
    conv_fails(C(FNW_LIST, T(FNW_INT)), "\"[1]\"", "JSON string \"[1]\" to LIST<INT>");
    conv_fails(T(FNW_INT), "{\"k\": \"\u00e9\\n\", \"z\": [true]}",
               "JSON object {\"k\":\"\\u00E9\\n\",\"z\":[true]} to INT");
}
END_TEST

START_TEST(test_rows_and_maps)
{
    fnw_value v = conv_ok(R(3, "id", T(FNW_INT), "name", T(FNW_STRING), "tags", C(FNW_LIST, T(FNW_STRING))),
                          "{\"name\": \"bob\", \"extra\": 1, \"id\": 7}");
    ck_assert_uint_eq(v.count, 3);
    ck_assert_int_eq(v.row_kind, FNW_INSERT);
    ck_assert_int_eq(v.u.items[0].u.i, 7);
    ck_assert_int_eq(memcmp(v.u.items[1].u.bytes, "bob", 3), 0);
    ck_assert(v.u.items[2].is_null && v.u.items[2].kind == FNW_LIST);   /* missing member */
    conv_fails(R(1, "a", T(FNW_INT)), "[1]", "a ROW is read from a JSON object");
    v = conv_ok(M(T(FNW_STRING), T(FNW_INT)), "{\"z\": 1, \"a\": null, \"m\": 3}");
    ck_assert_uint_eq(v.count, 3);
    ck_assert_int_eq(memcmp(v.u.items[0].u.bytes, "z", 1), 0);   /* document order */
    ck_assert_int_eq(memcmp(v.u.items[2].u.bytes, "a", 1), 0);
    ck_assert(v.u.items[3].is_null);
    ck_assert_int_eq(v.u.items[5].u.i, 3);
    conv_fails(M(T(FNW_STRING), T(FNW_INT)), "{\"k\": \"v\"}", "field 'r.k': cannot convert JSON string");
    conv_fails(M(T(FNW_STRING), T(FNW_INT)), "[]", "a MAP is read from a JSON object");
}
END_TEST

START_TEST(test_error_path_and_excerpt)
{
    fnw_type *t = R(1, "user", R(1, "tags", C(FNW_LIST, T(FNW_INT))));
    conv_fails(t, "{\"user\": {\"tags\": [1, \"x\"]}}",
               "field 'r.user.tags[1]': cannot convert JSON string \"x\" to INT: not a JSON number");
    /* a long hostile string: 60 characters shown, escaped, then "..." */
    char text[400] = "\"";
    strcat(text, "\\u0001\\\"");
    for (int i = 0; i < 100; i++)
        strcat(text, "ab");
    strcat(text, "\"");
    fnw_error err;
    json_t *j = parse(text);
    fnw_value v;
    fnw_type *it = T(FNW_INT);
    ck_assert_int_eq(fnw_conv_json(it, j, "count", &arena, &v, &err), -1);
    char want[200] = "field 'count': cannot convert JSON string \"\\x01\\\"";
    for (int i = 0; i < 29; i++)
        strcat(want, "ab");
    strcat(want, "\"... to INT: not a JSON number");
    ck_assert_str_eq(err.msg, want);
    json_decref(j);
    fnw_type_free(it);
}
END_TEST

static void check_rejects(fnw_type *t, const char *want)
{
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_conv_check_type(t, "out", &err), -1);
    ck_assert_msg(strstr(err.msg, "output field 'out'") && strstr(err.msg, want), "%s lacks %s", err.msg, want);
    fnw_type_free(t);
}

START_TEST(test_supported_targets)
{
    fnw_error err;
    fnw_type *ok = R(4, "a", C(FNW_BASIC_ARRAY, R(1, "x", M(T(FNW_STRING), C(FNW_LIST, T(FNW_DOUBLE))))),
                     "b", C(FNW_PRIMITIVE_ARRAY, T(FNW_SHORT)), "c", C(FNW_OBJECT_ARRAY, T(FNW_BOOLEAN)),
                     "d", T(FNW_STRING));
    ck_assert_msg(fnw_conv_check_type(ok, "out", &err) == 0, "%s", err.msg);
    fnw_type_free(ok);
    check_rejects(T(FNW_SQL_DATE), "SQL_DATE is not supported");
    check_rejects(R(1, "a", T(FNW_SQL_TIME)), "(SQL_TIME is not supported");
    check_rejects(M(T(FNW_INT), T(FNW_INT)), "MAP<INT, INT> is not supported");
    check_rejects(C(FNW_LIST, T(FNW_LOCAL_TIME)), "LOCAL_TIME is not supported");
    check_rejects(C(FNW_PRIMITIVE_ARRAY, T(FNW_CHAR)), "PRIMITIVE_ARRAY<CHAR> is not supported");
    check_rejects(T(FNW_CHAR), "CHAR is not supported");
}
END_TEST

START_TEST(test_arena_limit)
{
    fnw_arena small;
    fnw_arena_init(&small, 64, 64);
    char text[300];
    memset(text, 'x', sizeof text);
    text[0] = '"';
    text[sizeof text - 2] = '"';
    text[sizeof text - 1] = '\0';
    json_t *j = parse(text);
    fnw_type *t = T(FNW_STRING);
    fnw_value v;
    fnw_error err;
    ck_assert_int_eq(fnw_conv_json(t, j, "r", &small, &v, &err), -1);
    ck_assert_msg(strstr(err.msg, "out of memory"), "%s", err.msg);
    json_decref(j);
    fnw_type_free(t);
    fnw_arena_free(&small);
}
END_TEST

START_TEST(test_hostile_documents)
{
    /* a document far deeper than the type: conversion stops where the type does */
    json_t *root = json_array(), *cur = root;
    for (int i = 0; i < 5000; i++) {
        json_t *next = json_array();
        json_array_append_new(cur, next);
        cur = next;
    }
    fnw_type *t = C(FNW_LIST, C(FNW_LIST, T(FNW_INT)));
    fnw_value v;
    fnw_error err;
    ck_assert_int_eq(fnw_conv_json(t, root, "r", &arena, &v, &err), -1);
    /* the excerpt is the first 60 characters of the remaining 4998 levels */
    char want[200] = "field 'r[0][0]': cannot convert JSON array ";
    memset(want + strlen(want), '[', 60);
    strcpy(want + strlen("field 'r[0][0]': cannot convert JSON array ") + 60, "... to INT");
    ck_assert_msg(strstr(err.msg, want), "%s", err.msg);
    json_decref(root);
    fnw_type_free(t);
    /* the deepest type the codecs accept converts from a matching document */
    fnw_type *deep = T(FNW_INT);
    char text[256] = "";
    for (int i = 1; i < FNW_TYPE_MAX_DEPTH; i++) {
        deep = C(FNW_LIST, deep);
        strcat(text, "[");
    }
    strcat(text, "5");
    for (int i = 1; i < FNW_TYPE_MAX_DEPTH; i++)
        strcat(text, "]");
    v = conv_ok(deep, text);
    for (int i = 1; i < FNW_TYPE_MAX_DEPTH; i++)
        v = v.u.items[0];
    ck_assert_int_eq(v.u.i, 5);
    /* integers beyond int64: jansson refuses them when parsing; reals beyond
     * any range are refused by the conversion */
    json_error_t jerr;
    ck_assert_ptr_null(json_loads("99999999999999999999", JSON_DECODE_ANY, &jerr));
    conv_fails(T(FNW_LONG), "1e300", "out of range");
    conv_fails(T(FNW_INT), "-1e300", "out of range");
    /* invalid UTF-8 never reaches a conversion: jansson refuses it */
    ck_assert_ptr_null(json_loads("\"\xff\"", JSON_DECODE_ANY, &jerr));
    ck_assert_ptr_null(json_stringn("\xc0\xaf", 2));
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

static char *dec_text(fnw_value v)
{
    static char buf[80];
    ck_assert_int_eq(v.kind, FNW_BIG_DEC);
    snprintf(buf, sizeof buf, "%.*s", (int)v.count, (const char *)v.u.bytes);
    return buf;
}

START_TEST(test_decimals)
{
    ck_assert_str_eq(dec_text(conv_ok(P(FNW_BIG_DEC, 4, 1), "\"1.25\"")), "1.3");
    ck_assert_str_eq(dec_text(conv_ok(P(FNW_BIG_DEC, 4, 1), "-1.25")), "-1.3");
    ck_assert_str_eq(dec_text(conv_ok(P(FNW_BIG_DEC, 10, 2), "3")), "3.00");
    ck_assert_str_eq(dec_text(conv_ok(P(FNW_BIG_DEC, 10, 2), "0.1")), "0.10");
    ck_assert_str_eq(dec_text(conv_ok(P(FNW_BIG_DEC, 10, 0), "\"1E+3\"")), "1000");
    /* a DataStream BIG_DEC (no precision): the text as it is */
    ck_assert_str_eq(dec_text(conv_ok(T(FNW_BIG_DEC), "\"12.500\"")), "12.500");
    ck_assert_str_eq(dec_text(conv_ok(T(FNW_BIG_DEC), "1e20")), "1e+20");
    ck_assert_str_eq(dec_text(conv_ok(T(FNW_BIG_DEC), "-7")), "-7");
    conv_fails(P(FNW_BIG_DEC, 4, 1), "12345.67",
               "field 'r': cannot convert JSON number 12345.67 to DECIMAL(4, 1): it needs more digits than the "
               "type's precision");
    conv_fails(P(FNW_BIG_DEC, 4, 1), "\"1,5\"", "JSON string \"1,5\" to DECIMAL(4, 1): not a decimal number");
    conv_fails(T(FNW_BIG_DEC), "\"NaN\"", "not a decimal number");
    conv_fails(P(FNW_BIG_DEC, 4, 1), "true", "JSON true to DECIMAL(4, 1): a JSON value of another type");
    conv_fails(P(FNW_BIG_DEC, 4, 1), "[1]", "a JSON value of another type");
}
END_TEST

START_TEST(test_timestamps)
{
    /* 2023-11-14 22:13:20.123456789 = 1700000000123 ms + 456789 ns */
    fnw_value v = conv_ok(P(FNW_SQL_TIMESTAMP, 6, 0), "\"2023-11-14T22:13:20.123456\"");
    ck_assert_int_eq(v.u.i, INT64_C(1700000000123));
    ck_assert_uint_eq(v.count, 456000);
    v = conv_ok(P(FNW_SQL_TIMESTAMP, 9, 0), "\"2023-11-14 22:13:20.123456789Z\"");
    ck_assert_int_eq(v.u.i, INT64_C(1700000000123));
    ck_assert_uint_eq(v.count, 456789);
    /* digits beyond the precision are dropped */
    v = conv_ok(P(FNW_SQL_TIMESTAMP, 3, 0), "\"2023-11-14T22:13:20.123456789\"");
    ck_assert_int_eq(v.u.i, INT64_C(1700000000123));
    ck_assert_uint_eq(v.count, 0);
    v = conv_ok(P(FNW_SQL_TIMESTAMP, 1, 0), "\"2023-11-14T22:13:20.19\"");
    ck_assert_int_eq(v.u.i, INT64_C(1700000000100));
    v = conv_ok(T(FNW_SQL_TIMESTAMP), "\"1969-12-31T23:59:59.999\"");
    ck_assert_int_eq(v.u.i, -1);
    v = conv_ok(P(FNW_LOCAL_ZONED_TIMESTAMP, 3, 0), "\"0000-01-01T00:00:00\"");
    ck_assert_int_eq(v.u.i, INT64_C(-62167219200000));
    ck_assert_int_eq(v.kind, FNW_LOCAL_ZONED_TIMESTAMP);
    v = conv_ok(P(FNW_LOCAL_ZONED_TIMESTAMP, 6, 0), "1700000000123");
    ck_assert_int_eq(v.u.i, INT64_C(1700000000123));
    ck_assert_uint_eq(v.count, 0);
    const char *bad[] = { "\"2023-02-29T00:00:00\"", "\"2024-13-01T00:00:00\"", "\"2024-01-01T24:00:00\"",
                          "\"2024-01-01\"", "\"2024-01-01T00:00:00.\"", "\"2024-01-01T00:00:00.1234567891\"",
                          "\"2024-01-01T00:00:00+01:00\"", "\"-001-01-01T00:00:00\"" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        conv_fails(P(FNW_SQL_TIMESTAMP, 6, 0), bad[i], "a timestamp is ISO-8601 text");
    conv_ok(P(FNW_SQL_TIMESTAMP, 6, 0), "\"2024-02-29T00:00:00\""); /* a leap day */
    conv_fails(P(FNW_SQL_TIMESTAMP, 6, 0), "1.5", "to TIMESTAMP(6): a timestamp is epoch milliseconds");
    conv_fails(P(FNW_LOCAL_ZONED_TIMESTAMP, 3, 0), "false", "to TIMESTAMP_LTZ(3): a JSON value of another type");
    fnw_error err;
    fnw_type *ok = R(3, "d", P(FNW_BIG_DEC, 10, 2), "t", P(FNW_SQL_TIMESTAMP, 6, 0), "l",
                     P(FNW_LOCAL_ZONED_TIMESTAMP, 3, 0));
    ck_assert_msg(fnw_conv_check_type(ok, "out", &err) == 0, "%s", err.msg);
    fnw_type_free(ok);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("conv_json");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_integers);
    tcase_add_test(tc, test_floats);
    tcase_add_test(tc, test_booleans_and_strings);
    tcase_add_test(tc, test_string_is_copied_into_the_arena);
    tcase_add_test(tc, test_nulls);
    tcase_add_test(tc, test_containers);
    tcase_add_test(tc, test_rows_and_maps);
    tcase_add_test(tc, test_error_path_and_excerpt);
    tcase_add_test(tc, test_supported_targets);
    tcase_add_test(tc, test_arena_limit);
    tcase_add_test(tc, test_hostile_documents);
    tcase_add_test(tc, test_decimals);
    tcase_add_test(tc, test_timestamps);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
