/* tests/unit/ops/test_tmpl.c — request templates: placeholder
 * syntax and dotted paths, compile-time errors naming the option and the
 * field, the text of every scalar kind, nulls, the four escaping modes (URL
 * percent-encoding, CR/LF refused in headers, JSON values), Redis command
 * splitting, buffer limits and hostile inputs (huge placeholders, deep
 * nesting, invalid UTF-8). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/bind/tmpl.h"
#include "tests/unit/binding_build.h"
#include "tests/unit/check_run.h"

/* ROW<id INT, name STRING, user ROW<id LONG, tags LIST<STRING>>, score DOUBLE,
 *     ok BOOLEAN, m MAP<STRING, INT>, blob PRIMITIVE_ARRAY<BYTE>, when SQL_DATE> */
static fnw_type *in_type(void)
{
    return R(8, "id", T(FNW_INT), "name", T(FNW_STRING),
             "user", R(2, "id", T(FNW_LONG), "tags", C(FNW_LIST, T(FNW_STRING))),
             "score", T(FNW_DOUBLE), "ok", T(FNW_BOOLEAN), "m", M(T(FNW_STRING), T(FNW_INT)),
             "blob", C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)), "when", T(FNW_SQL_DATE));
}

typedef struct row_store {
    fnw_value f[8], user[2], tags[2], m[4], row;
    uint8_t blob[3];
} row_store;

static const fnw_value *make_row(row_store *s, const char *name)
{
    s->tags[0] = fnw_value_str("a");
    s->tags[1] = fnw_value_str("b\"c");
    s->user[0] = fnw_value_int(FNW_LONG, 7);
    s->user[1] = fnw_value_items(FNW_LIST, s->tags, 2);
    s->m[0] = fnw_value_str("k");
    s->m[1] = fnw_value_int(FNW_INT, 1);
    s->m[2] = fnw_value_str("z");
    s->m[3] = fnw_value_null(FNW_INT);
    s->blob[0] = 1;
    s->blob[1] = 0xff;
    s->blob[2] = 0x7f;
    s->f[0] = fnw_value_int(FNW_INT, 42);
    s->f[1] = name ? fnw_value_str(name) : fnw_value_null(FNW_STRING);
    s->f[2] = fnw_value_row(FNW_INSERT, s->user, 2);
    s->f[3] = fnw_value_double(0.1);
    s->f[4] = fnw_value_int(FNW_BOOLEAN, 1);
    s->f[5] = fnw_value_items(FNW_MAP, s->m, 2);
    s->f[6] = fnw_value_bytes(FNW_PRIMITIVE_ARRAY, s->blob, 3);
    s->f[7] = fnw_value_int(FNW_SQL_DATE, 3);
    s->row = fnw_value_row(FNW_INSERT, s->f, 8);
    return &s->row;
}

/* Renders text for row into a fresh string (freed by the caller). */
static char *render(const char *text, fnw_escape esc, const fnw_type *in, const fnw_value *row)
{
    fnw_error err;
    fnw_tmpl *t = fnw_tmpl_new(text, in, esc, "opt", &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    fnw_buf b;
    fnw_buf_init(&b, 0);
    ck_assert_msg(fnw_tmpl_render(t, row, &b, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(fnw_buf_put_u8(&b, 0), 0);
    fnw_tmpl_free(t);
    return (char *)b.p;
}

static void expect_render(const char *text, fnw_escape esc, const char *name, const char *want)
{
    fnw_type *in = in_type();
    row_store s;
    char *got = render(text, esc, in, make_row(&s, name));
    ck_assert_str_eq(got, want);
    free(got);
    fnw_type_free(in);
}

/* Compiling text fails with a message containing want (and the option). */
static void expect_compile_error(const fnw_type *in, const char *text, fnw_escape esc, const char *want)
{
    fnw_error err = { "" };
    fnw_tmpl *t = fnw_tmpl_new(text, in, esc, "url", &err);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'", err.msg, want);
    ck_assert_msg(strstr(err.msg, "option 'url'") != NULL, "'%s' does not name the option", err.msg);
}

START_TEST(test_placeholders_and_braces)
{
    expect_render("user:{id}:{name}", FNW_ESCAPE_RAW, "bob smith", "user:42:bob smith");
    expect_render("{{literal}} {id} }}{{", FNW_ESCAPE_RAW, "x", "{literal} 42 }{");
    expect_render("{user.id}/{id}", FNW_ESCAPE_RAW, "x", "7/42");
    expect_render("no fields", FNW_ESCAPE_RAW, "x", "no fields");
    expect_render("", FNW_ESCAPE_RAW, "x", "");
    expect_render("{id}{id}{name}", FNW_ESCAPE_RAW, "n", "4242n");
    fnw_error err;
    fnw_type *in = in_type();
    fnw_tmpl *t = fnw_tmpl_new("a{id}b{user.id}", in, FNW_ESCAPE_RAW, "k", &err);
    ck_assert_uint_eq(fnw_tmpl_fields(t), 2);
    fnw_tmpl_free(t);
    fnw_type_free(in);
}
END_TEST

/* One scalar of type k rendered in raw mode. */
static void expect_scalar(fnw_kind k, fnw_value v, const char *want)
{
    fnw_type *in = R(1, "x", T(k));
    fnw_value row = fnw_value_row(FNW_INSERT, &v, 1);
    char *got = render("{x}", FNW_ESCAPE_RAW, in, &row);
    ck_assert_str_eq(got, want);
    free(got);
    fnw_type_free(in);
}

/* A TIMESTAMP / TIMESTAMP_LTZ of precision p rendered with esc. */
static void expect_timestamp(fnw_kind k, int p, fnw_value v, fnw_escape esc, const char *want)
{
    fnw_type *t = T(k);
    fnw_error err;
    ck_assert_int_eq(fnw_type_set_precision(t, p, 0, &err), 0);
    fnw_type *in = R(1, "x", t);
    fnw_value row = fnw_value_row(FNW_INSERT, &v, 1);
    char *got = render("{x}", esc, in, &row);
    ck_assert_str_eq(got, want);
    free(got);
    fnw_type_free(in);
}

START_TEST(test_scalar_text)
{
    expect_scalar(FNW_BOOLEAN, fnw_value_int(FNW_BOOLEAN, 0), "false");
    expect_scalar(FNW_BYTE, fnw_value_int(FNW_BYTE, -5), "-5");
    expect_scalar(FNW_SHORT, fnw_value_int(FNW_SHORT, 32767), "32767");
    expect_scalar(FNW_LONG, fnw_value_int(FNW_LONG, INT64_MIN), "-9223372036854775808");
    expect_scalar(FNW_DOUBLE, fnw_value_double(0.1), "0.1");
    expect_scalar(FNW_DOUBLE, fnw_value_double(1e20), "1e+20");
    expect_scalar(FNW_DOUBLE, fnw_value_double(-0.0), "-0");
    expect_scalar(FNW_DOUBLE, fnw_value_double(1.0 / 3), "0.3333333333333333");
    expect_scalar(FNW_DOUBLE, fnw_value_double(NAN), "NaN");
    expect_scalar(FNW_DOUBLE, fnw_value_double(-INFINITY), "-Infinity");
    expect_scalar(FNW_FLOAT, fnw_value_float(0.1f), "0.1");
    expect_scalar(FNW_FLOAT, fnw_value_float(INFINITY), "Infinity");
    expect_scalar(FNW_CHAR, fnw_value_int(FNW_CHAR, 0xe9), "\xc3\xa9");
    expect_scalar(FNW_CHAR, fnw_value_int(FNW_CHAR, 0x20ac), "\xe2\x82\xac");
    expect_scalar(FNW_CHAR, fnw_value_int(FNW_CHAR, 0xd800), "\xef\xbf\xbd");
    expect_scalar(FNW_BIG_DEC, fnw_value_str("12.50"), "12.50");
    /* the Table timestamps: ISO-8601 with the precision's fraction digits */
    expect_timestamp(FNW_SQL_TIMESTAMP, 6, fnw_value_timestamp(FNW_SQL_TIMESTAMP, INT64_C(1700000000123), 456000),
                     FNW_ESCAPE_RAW, "2023-11-14T22:13:20.123456");
    expect_timestamp(FNW_SQL_TIMESTAMP, 9, fnw_value_timestamp(FNW_SQL_TIMESTAMP, -1, 999999),
                     FNW_ESCAPE_RAW, "1969-12-31T23:59:59.999999999");
    expect_timestamp(FNW_SQL_TIMESTAMP, 0, fnw_value_int(FNW_SQL_TIMESTAMP, 0), FNW_ESCAPE_RAW,
                     "1970-01-01T00:00:00.000");
    expect_timestamp(FNW_LOCAL_ZONED_TIMESTAMP, 3,
                     fnw_value_timestamp(FNW_LOCAL_ZONED_TIMESTAMP, INT64_C(-62167219200000), 0), FNW_ESCAPE_JSON,
                     "\"0000-01-01T00:00:00.000Z\"");
    expect_timestamp(FNW_SQL_TIMESTAMP, 1, fnw_value_timestamp(FNW_SQL_TIMESTAMP, INT64_C(1700000000199), 0),
                     FNW_ESCAPE_URL_QUERY, "2023-11-14T22%3A13%3A20.1");
    expect_scalar(FNW_STRING, fnw_value_bytes(FNW_STRING, NULL, 0), "");
    /* an empty (not null) string is "" in JSON, distinct from null */
    fnw_type *in = R(1, "x", T(FNW_STRING));
    fnw_value v = fnw_value_bytes(FNW_STRING, NULL, 0), row = fnw_value_row(FNW_INSERT, &v, 1);
    char *got = render("[{x}]", FNW_ESCAPE_JSON, in, &row);
    ck_assert_str_eq(got, "[\"\"]");
    free(got);
    got = render("/{x}/", FNW_ESCAPE_URL_PATH, in, &row);
    ck_assert_str_eq(got, "//");
    free(got);
    fnw_type_free(in);
}
END_TEST

START_TEST(test_nulls)
{
    expect_render("[{name}]", FNW_ESCAPE_RAW, NULL, "[]");
    expect_render("/{name}/", FNW_ESCAPE_URL_PATH, NULL, "//");
    expect_render("?q={name}", FNW_ESCAPE_URL_QUERY, NULL, "?q=");
    expect_render("X {name}", FNW_ESCAPE_HEADER, NULL, "X ");
    expect_render("{{\"n\":{name}}}", FNW_ESCAPE_JSON, NULL, "{\"n\":null}");
    /* a null ROW on the path renders as a null field */
    fnw_type *in = in_type();
    row_store s;
    fnw_value *row = (fnw_value *)make_row(&s, "x");
    s.f[2] = fnw_value_null(FNW_ROW);
    char *got = render("[{user.id}]", FNW_ESCAPE_RAW, in, row);
    ck_assert_str_eq(got, "[]");
    free(got);
    got = render("{user.tags}", FNW_ESCAPE_JSON, in, row);
    ck_assert_str_eq(got, "null");
    free(got);
    /* and so does a null top-level row */
    fnw_value null_row = fnw_value_null(FNW_ROW);
    got = render("<{id}>", FNW_ESCAPE_RAW, in, &null_row);
    ck_assert_str_eq(got, "<>");
    free(got);
    fnw_type_free(in);
}
END_TEST

START_TEST(test_url_escaping)
{
    const char *hostile = "a b/c?d&e=f+g%~._-#\xc3\xa9";
    expect_render("https://h/x/{name}", FNW_ESCAPE_URL_PATH, hostile,
                  "https://h/x/a%20b%2Fc%3Fd%26e%3Df%2Bg%25~._-%23%C3%A9");
    expect_render("https://h/?q={name}&n={id}", FNW_ESCAPE_URL_QUERY, hostile,
                  "https://h/?q=a%20b%2Fc%3Fd%26e%3Df%2Bg%25~._-%23%C3%A9&n=42");
    expect_render("{name}", FNW_ESCAPE_URL_PATH, "AZaz09", "AZaz09");
    expect_render("{name}", FNW_ESCAPE_URL_QUERY, "\x01\x7f\xff", "%01%7F%FF");
    /* literal text is the caller's URL: kept as written */
    expect_render("https://h/a b?{id}", FNW_ESCAPE_URL_QUERY, "x", "https://h/a b?42");
}
END_TEST

static void expect_header_refused(const char *value)
{
    fnw_error err;
    fnw_type *in = in_type();
    fnw_tmpl *t = fnw_tmpl_new("Bearer {name}", in, FNW_ESCAPE_HEADER, "header.Authorization", &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    row_store s;
    fnw_buf b;
    fnw_buf_init(&b, 0);
    ck_assert_int_eq(fnw_buf_append(&b, "keep", 4), 0);
    ck_assert_int_eq(fnw_tmpl_render(t, make_row(&s, value), &b, &err), -1);
    ck_assert_msg(strstr(err.msg, "option 'header.Authorization'") && strstr(err.msg, "field 'name'") &&
                  strstr(err.msg, "control character"), "%s", err.msg);
    ck_assert_uint_eq(b.len, 4);   /* nothing of the failed rendering is left */
    fnw_buf_free(&b);
    fnw_tmpl_free(t);
    fnw_type_free(in);
}

START_TEST(test_header_injection)
{
    expect_render("Bearer {name}", FNW_ESCAPE_HEADER, "tok en:\t1", "Bearer tok en:\t1");
    expect_header_refused("x\r\nX-Evil: 1");
    expect_header_refused("x\nX-Evil: 1");
    expect_header_refused("x\r");
    expect_header_refused("a\x01" "b");
    expect_header_refused("a\x7f");
    expect_header_refused("a\x1b[31m");
    fnw_type *in = in_type();
    expect_compile_error(in, "a\r\nb: {id}", FNW_ESCAPE_HEADER, "control character");
    expect_compile_error(in, "a\x01" "b: {id}", FNW_ESCAPE_HEADER, "byte 0x01");
    fnw_type_free(in);
    /* a NUL byte inside a STRING value */
    fnw_type *in1 = R(1, "x", T(FNW_STRING));
    fnw_value v = fnw_value_bytes(FNW_STRING, "a\0b", 3), row = fnw_value_row(FNW_INSERT, &v, 1);
    fnw_error err;
    fnw_tmpl *t = fnw_tmpl_new("{x}", in1, FNW_ESCAPE_HEADER, "h", &err);
    fnw_buf b;
    fnw_buf_init(&b, 0);
    ck_assert_int_eq(fnw_tmpl_render(t, &row, &b, &err), -1);
    fnw_buf_free(&b);
    fnw_tmpl_free(t);
    fnw_type_free(in1);
}
END_TEST

START_TEST(test_json_values)
{
    const char *tmpl = "{{\"id\":{id},\"name\":{name},\"user\":{user},\"score\":{score},\"ok\":{ok},"
                       "\"m\":{m},\"blob\":{blob}}}";
    const char *want = "{\"id\":42,\"name\":\"q\\\"\\\\\\n\\t\\u0001\xc3\xa9\",\"user\":{\"id\":7,\"tags\":"
                       "[\"a\",\"b\\\"c\"]},\"score\":0.1,\"ok\":true,\"m\":{\"k\":1,\"z\":null},"
                       "\"blob\":[1,-1,127]}";
    expect_render(tmpl, FNW_ESCAPE_JSON, "q\"\\\n\t\x01\xc3\xa9", want);
    /* the output is one well-formed JSON document */
    json_error_t jerr;
    json_t *doc = json_loads(want, 0, &jerr);
    ck_assert_msg(doc != NULL, "%s", jerr.text);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "name")), "q\"\\\n\t\x01\xc3\xa9");
    json_decref(doc);
    /* NaN and the infinities have no JSON spelling: null */
    fnw_type *in = R(2, "d", T(FNW_DOUBLE), "f", T(FNW_FLOAT));
    fnw_value f[2] = { fnw_value_double(INFINITY), fnw_value_float(NAN) };
    fnw_value row = fnw_value_row(FNW_INSERT, f, 2);
    char *got = render("[{d},{f}]", FNW_ESCAPE_JSON, in, &row);
    ck_assert_str_eq(got, "[null,null]");
    free(got);
    fnw_type_free(in);
}
END_TEST

START_TEST(test_json_invalid_utf8)
{
    static const char *const bad[] = {
        "\xff", "\xc3", "\xc0\xaf" /* overlong '/' */, "\xed\xa0\x80" /* surrogate */,
        "\xf4\x90\x80\x80" /* past U+10FFFF */, "ok\xe2\x82", NULL,
    };
    fnw_type *in = in_type();
    fnw_error err;
    fnw_tmpl *t = fnw_tmpl_new("{{\"n\":{name}}}", in, FNW_ESCAPE_JSON, "body", &err);
    fnw_buf b;
    fnw_buf_init(&b, 0);
    for (int i = 0; bad[i]; i++) {
        row_store s;
        ck_assert_int_eq(fnw_tmpl_render(t, make_row(&s, bad[i]), &b, &err), -1);
        ck_assert_msg(strstr(err.msg, "option 'body'") && strstr(err.msg, "field 'name'") &&
                      strstr(err.msg, "not valid UTF-8"), "%s", err.msg);
        ck_assert_uint_eq(b.len, 0);
    }
    /* raw mode is binary-safe: the same bytes pass unchanged */
    fnw_tmpl *raw = fnw_tmpl_new("{name}", in, FNW_ESCAPE_RAW, "key", &err);
    row_store s;
    ck_assert_int_eq(fnw_tmpl_render(raw, make_row(&s, "\xff\xc3"), &b, &err), 0);
    ck_assert_uint_eq(b.len, 2);
    ck_assert_int_eq(memcmp(b.p, "\xff\xc3", 2), 0);
    fnw_tmpl_free(raw);
    fnw_buf_free(&b);
    fnw_tmpl_free(t);
    fnw_type_free(in);
}
END_TEST

START_TEST(test_compile_errors)
{
    fnw_type *in = in_type();
    expect_compile_error(in, "/x/{nope}", FNW_ESCAPE_URL_PATH,
                         "placeholder {nope} names field 'nope', which the input type");
    expect_compile_error(in, "a{}b", FNW_ESCAPE_RAW, "empty placeholder");
    expect_compile_error(in, "a{id", FNW_ESCAPE_RAW, "is not closed");
    expect_compile_error(in, "a}b", FNW_ESCAPE_RAW, "lone '}' at byte 1");
    expect_compile_error(in, "{\"a\": {id}}", FNW_ESCAPE_JSON, "holds a '{'");
    expect_compile_error(in, "{user..id}", FNW_ESCAPE_RAW, "empty field name");
    expect_compile_error(in, "{.id}", FNW_ESCAPE_RAW, "empty field name");
    expect_compile_error(in, "{id.x}", FNW_ESCAPE_RAW, "'id' is INT, not a ROW");
    expect_compile_error(in, "{user.nope}", FNW_ESCAPE_RAW, "field 'nope' is not in ROW<");
    expect_compile_error(in, "{user}", FNW_ESCAPE_RAW, "field 'user' has type ROW<");
    expect_compile_error(in, "{user.tags}", FNW_ESCAPE_URL_QUERY, "cannot be written as URL query text");
    expect_compile_error(in, "{m}", FNW_ESCAPE_HEADER, "field 'm' has type MAP<");
    expect_compile_error(in, "{blob}", FNW_ESCAPE_RAW, "PRIMITIVE_ARRAY");
    expect_compile_error(in, "{when}", FNW_ESCAPE_JSON, "SQL_DATE");
    expect_compile_error(in, "{ id}", FNW_ESCAPE_RAW, "names field ' id'");
    fnw_type *nested_map = R(1, "m", M(T(FNW_INT), T(FNW_INT)));
    expect_compile_error(nested_map, "{m}", FNW_ESCAPE_JSON, "cannot be written as JSON text");
    fnw_type_free(nested_map);
    fnw_type *scalar = T(FNW_INT);
    expect_compile_error(scalar, "{x}", FNW_ESCAPE_RAW, "the input type is INT, not a ROW");
    fnw_type_free(scalar);
    fnw_type_free(in);
}
END_TEST

START_TEST(test_hostile_sizes)
{
    fnw_type *in = in_type();
    /* a placeholder longer than the limit: refused, the message quotes only its start */
    size_t n = 100000;
    char *big = malloc(n + 3);
    big[0] = '{';
    memset(big + 1, 'a', n);
    big[n + 1] = '}';
    big[n + 2] = '\0';
    expect_compile_error(in, big, FNW_ESCAPE_RAW, "bytes long; a template may have at most");
    big[FNW_TMPL_MAX_NAME + 2] = '}';
    big[FNW_TMPL_MAX_NAME + 3] = '\0';
    expect_compile_error(in, big, FNW_ESCAPE_RAW, "is 257 bytes long; at most 256");
    big[1000] = '\0';
    big[0] = 'x';
    memset(big, 'x', 1000);
    big[10] = '{';   /* unterminated after a long run */
    expect_compile_error(in, big, FNW_ESCAPE_RAW, "is not closed");
    free(big);
    /* many placeholders of the limit's maximum count render */
    char *many = malloc(FNW_TMPL_MAX_TEXT + 1);
    size_t len = 0;
    while (len + 4 <= FNW_TMPL_MAX_TEXT) {
        memcpy(many + len, "{id}", 4);
        len += 4;
    }
    many[len] = '\0';
    row_store s;
    char *got = render(many, FNW_ESCAPE_RAW, in, make_row(&s, "x"));
    ck_assert_uint_eq(strlen(got), len / 4 * 2);
    free(got);
    free(many);
    fnw_type_free(in);
}
END_TEST

/* ROW<r ROW<r ... ROW<x INT>>> depth deep, and its value with x = 5. */
static fnw_type *deep_type(int depth)
{
    fnw_type *t = R(1, "x", T(FNW_INT));
    for (int i = 1; i < depth; i++)
        t = R(1, "r", t);
    return t;
}

START_TEST(test_deep_nesting)
{
    enum { DEPTH = 60 };
    fnw_type *in = deep_type(DEPTH);
    fnw_value vals[DEPTH + 1];   /* DEPTH rows, then x */
    vals[DEPTH] = fnw_value_int(FNW_INT, 5);
    for (int i = DEPTH - 1; i >= 0; i--)
        vals[i] = fnw_value_row(FNW_INSERT, &vals[i + 1], 1);
    char path[3 * DEPTH] = "{";
    for (int i = 0; i < DEPTH - 1; i++)
        strcat(path, "r.");
    strcat(path, "x}");
    char *got = render(path, FNW_ESCAPE_RAW, in, &vals[0]);
    ck_assert_str_eq(got, "5");
    free(got);
    got = render("{r}", FNW_ESCAPE_JSON, in, &vals[0]);
    ck_assert_uint_eq(strlen(got), (DEPTH - 2) * strlen("{\"r\":}") + strlen("{\"x\":5}"));
    json_error_t jerr;
    json_t *doc = json_loads(got, 0, &jerr);
    ck_assert_msg(doc != NULL, "%s", jerr.text);
    json_decref(doc);
    free(got);
    fnw_type_free(in);
}
END_TEST

START_TEST(test_buffer_reuse_and_limit)
{
    fnw_type *in = in_type();
    fnw_error err;
    fnw_tmpl *t = fnw_tmpl_new("key:{name}", in, FNW_ESCAPE_RAW, "key", &err);
    row_store s;
    fnw_buf b;
    fnw_buf_init(&b, 0);
    ck_assert_int_eq(fnw_tmpl_render(t, make_row(&s, "abc"), &b, &err), 0);
    uint8_t *mem = b.p;
    size_t cap = b.cap;
    for (int i = 0; i < 100; i++) {   /* elements reuse the buffer's memory */
        fnw_buf_clear(&b);
        ck_assert_int_eq(fnw_tmpl_render(t, make_row(&s, "xyz"), &b, &err), 0);
    }
    ck_assert_ptr_eq(b.p, mem);
    ck_assert_uint_eq(b.cap, cap);
    ck_assert_int_eq(memcmp(b.p, "key:xyz", 7), 0);
    fnw_buf_free(&b);
    /* a buffer limit is an error, not an overrun, and leaves the buffer as it was */
    fnw_buf small;
    fnw_buf_init(&small, 8);
    ck_assert_int_eq(fnw_buf_append(&small, "ab", 2), 0);
    ck_assert_int_eq(fnw_tmpl_render(t, make_row(&s, "much too long"), &small, &err), -1);
    ck_assert_msg(strstr(err.msg, "does not fit"), "%s", err.msg);
    ck_assert_uint_eq(small.len, 2);
    fnw_buf_free(&small);
    fnw_tmpl_free(t);
    fnw_type_free(in);
}
END_TEST

/* Renders argv for name; checks the arguments against want (count n). */
static void expect_argv(const char *cmd, const char *name, size_t n, const char *const *want)
{
    fnw_error err;
    fnw_type *in = in_type();
    fnw_tmpl_argv *a = fnw_tmpl_argv_new(cmd, in, "command", &err);
    ck_assert_msg(a != NULL, "%s", err.msg);
    ck_assert_uint_eq(fnw_tmpl_argv_count(a), n);
    row_store s;
    fnw_buf b;
    fnw_buf_init(&b, 0);
    ck_assert_int_eq(fnw_buf_append(&b, "pre", 3), 0);
    size_t lens[8];
    ck_assert_msg(fnw_tmpl_argv_render(a, make_row(&s, name), &b, lens, &err) == 0, "%s", err.msg);
    size_t off = 3;
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(lens[i], strlen(want[i]));
        ck_assert_int_eq(memcmp(b.p + off, want[i], lens[i]), 0);
        off += lens[i];
    }
    ck_assert_uint_eq(off, b.len);
    fnw_buf_free(&b);
    fnw_tmpl_argv_free(a);
    fnw_type_free(in);
}

START_TEST(test_redis_argv)
{
    expect_argv("HSET user:{id} name {name}", "bob smith", 4,
                (const char *const[]){ "HSET", "user:42", "name", "bob smith" });
    expect_argv("  SET\t{name}  \r\n v ", "a b", 3, (const char *const[]){ "SET", "a b", "v" });
    expect_argv("GET {name}", NULL, 2, (const char *const[]){ "GET", "" });
    expect_argv("SET {{k}} x{id}y", "n", 3, (const char *const[]){ "SET", "{k}", "x42y" });
    /* whitespace inside a placeholder belongs to the field name */
    fnw_type *in = R(1, "first name", T(FNW_STRING));
    fnw_error err;
    fnw_tmpl_argv *a = fnw_tmpl_argv_new("GET {first name}", in, "command", &err);
    ck_assert_msg(a != NULL, "%s", err.msg);
    ck_assert_uint_eq(fnw_tmpl_argv_count(a), 2);
    fnw_tmpl_argv_free(a);
    fnw_type_free(in);
}
END_TEST

START_TEST(test_redis_argv_errors)
{
    fnw_type *in = in_type();
    fnw_error err;
    ck_assert_ptr_null(fnw_tmpl_argv_new(" \t ", in, "command", &err));
    ck_assert_str_eq(err.msg, "option 'command' is an empty command");
    ck_assert_ptr_null(fnw_tmpl_argv_new("GET {nope}", in, "command", &err));
    ck_assert_msg(strstr(err.msg, "option 'command'") && strstr(err.msg, "'nope'"), "%s", err.msg);
    ck_assert_ptr_null(fnw_tmpl_argv_new("GET {id", in, "command", &err));
    ck_assert_msg(strstr(err.msg, "not closed"), "%s", err.msg);
    char *many = malloc(2 * (FNW_TMPL_MAX_ARGS + 1) + 1);
    for (size_t i = 0; i <= FNW_TMPL_MAX_ARGS; i++)
        memcpy(many + 2 * i, "x ", 2);
    many[2 * (FNW_TMPL_MAX_ARGS + 1)] = '\0';
    ck_assert_ptr_null(fnw_tmpl_argv_new(many, in, "command", &err));
    ck_assert_msg(strstr(err.msg, "more than 1024 arguments"), "%s", err.msg);
    many[2 * FNW_TMPL_MAX_ARGS] = '\0';
    fnw_tmpl_argv *a = fnw_tmpl_argv_new(many, in, "command", &err);
    ck_assert_uint_eq(fnw_tmpl_argv_count(a), FNW_TMPL_MAX_ARGS);
    fnw_tmpl_argv_free(a);
    free(many);
    fnw_type_free(in);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tmpl");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_placeholders_and_braces);
    tcase_add_test(tc, test_scalar_text);
    tcase_add_test(tc, test_nulls);
    tcase_add_test(tc, test_url_escaping);
    tcase_add_test(tc, test_header_injection);
    tcase_add_test(tc, test_json_values);
    tcase_add_test(tc, test_json_invalid_utf8);
    tcase_add_test(tc, test_compile_errors);
    tcase_add_test(tc, test_hostile_sizes);
    tcase_add_test(tc, test_deep_nesting);
    tcase_add_test(tc, test_buffer_reuse_and_limit);
    tcase_add_test(tc, test_redis_argv);
    tcase_add_test(tc, test_redis_argv_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
