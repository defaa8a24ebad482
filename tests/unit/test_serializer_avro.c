/* tests/unit/test_serializer_avro.c — AVRO values: Flink writes one Avro
 * binary datum with no length prefix, so the worker delimits it by walking
 * it with the schema. Datums here are written by libavro's own writer; the
 * walk must measure exactly what libavro wrote, pass the bytes through
 * unchanged, and reject corrupt or hostile datums cleanly. */
#include <avro.h>
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/skip_once.h"
#include <string.h>

#include "codecs/avro_datum.h"
#include "codecs/serializer.h"

static const char *EV_SCHEMA =
    "{\"type\":\"record\",\"name\":\"Ev\",\"fields\":["
    "{\"name\":\"a\",\"type\":\"int\"},"
    "{\"name\":\"s\",\"type\":\"string\"},"
    "{\"name\":\"u\",\"type\":[\"null\",\"long\"]},"
    "{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"items\":\"int\"}}]}";

static fnw_type *avro_type(const char *schema)
{
    fnw_type *t = fnw_type_new(FNW_AVRO);
    fnw_error err = { "" };
    ck_assert_msg(fnw_type_set_avro_schema(t, schema, &err) == 0, "schema: %s", err.msg);
    return t;
}

typedef struct ev { int32_t a; const char *s; int has_u; int64_t u; int narr; const int32_t *arr; } ev;

/* Writes one Ev datum with libavro; returns its length. */
static size_t write_ev(const ev *e, char *buf, size_t cap)
{
    avro_schema_t schema;
    ck_assert_int_eq(avro_schema_from_json_length(EV_SCHEMA, strlen(EV_SCHEMA), &schema), 0);
    avro_value_iface_t *iface = avro_generic_class_from_schema(schema);
    avro_value_t rec, f, br, el;
    ck_assert_int_eq(avro_generic_value_new(iface, &rec), 0);
    ck_assert_int_eq(avro_value_get_by_name(&rec, "a", &f, NULL), 0);
    ck_assert_int_eq(avro_value_set_int(&f, e->a), 0);
    ck_assert_int_eq(avro_value_get_by_name(&rec, "s", &f, NULL), 0);
    ck_assert_int_eq(avro_value_set_string(&f, e->s), 0);
    ck_assert_int_eq(avro_value_get_by_name(&rec, "u", &f, NULL), 0);
    ck_assert_int_eq(avro_value_set_branch(&f, e->has_u ? 1 : 0, &br), 0);
    if (e->has_u)
        ck_assert_int_eq(avro_value_set_long(&br, e->u), 0);
    else
        ck_assert_int_eq(avro_value_set_null(&br), 0);
    ck_assert_int_eq(avro_value_get_by_name(&rec, "arr", &f, NULL), 0);
    for (int i = 0; i < e->narr; i++) {
        size_t idx;
        ck_assert_int_eq(avro_value_append(&f, &el, &idx), 0);
        ck_assert_int_eq(avro_value_set_int(&el, e->arr[i]), 0);
    }
    avro_writer_t w = avro_writer_memory(buf, (int64_t)cap);
    ck_assert_int_eq(avro_value_write(w, &rec), 0);
    size_t n = (size_t)avro_writer_tell(w);
    avro_writer_free(w);
    avro_value_decref(&rec);
    avro_value_iface_decref(iface);
    avro_schema_decref(schema);
    return n;
}

static void expect_fail(const fnw_type *t, const uint8_t *p, size_t n, const char *want)
{
    fnw_error err = { "" };
    size_t used;
    ck_assert_msg(skip_once(t, p, n, &used, &err) == -1, "accepted %zu bytes", n);
    if (want)
        ck_assert_msg(strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
    else
        ck_assert(err.msg[0] != '\0');
}

START_TEST(record_written_by_libavro)
{
    fnw_type *t = avro_type(EV_SCHEMA);
    const int32_t arr[] = { 1, 2, 3 };
    ev e = { 42, "hi", 1, -3, 3, arr };
    char buf[256];
    size_t n = write_ev(&e, buf, sizeof buf);
    /* a=42 -> 54, "hi" -> 04 68 69, branch 1 -> 02, -3 -> 05, [1,2,3] -> 06 02 04 06 00 */
    const uint8_t want[] = { 0x54, 0x04, 'h', 'i', 0x02, 0x05, 0x06, 0x02, 0x04, 0x06, 0x00 };
    ck_assert_uint_eq(n, sizeof want);
    ck_assert_mem_eq(buf, want, n);

    uint8_t in[300];
    memcpy(in, buf, n);
    memset(in + n, 0x55, 8);   /* whatever follows is not part of the datum */
    size_t used = 0;
    fnw_error err = { "" };
    ck_assert_msg(skip_once(t, in, n + 8, &used, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(used, n);

    fnw_arena a;
    fnw_arena_init(&a, 256, 0);
    fnw_value v;
    ck_assert_int_eq(fnw_ser_decode(t, in, n + 8, &a, &v, &used, &err), 0);
    ck_assert_uint_eq(used, n);
    ck_assert_int_eq(v.kind, FNW_AVRO);
    ck_assert_ptr_eq(v.u.bytes, in);   /* opaque bytes, pointing into the input */
    ck_assert_uint_eq(v.count, n);

    fnw_buf out;
    fnw_buf_init(&out, 0);
    ck_assert_int_eq(fnw_ser_encode(t, &v, &out, &err), 0);   /* no length prefix */
    ck_assert_uint_eq(out.len, n);
    ck_assert_mem_eq(out.p, want, n);

    for (size_t k = 0; k < n; k++)
        expect_fail(t, in, k, NULL);

    /* encode refuses bytes that are not one datum of the schema */
    fnw_value bad = fnw_value_bytes(FNW_AVRO, want, (uint32_t)n - 1);
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(t, &bad, &out, &err), -1);
    ck_assert_uint_eq(out.len, 0);
    uint8_t longer[16];
    memcpy(longer, want, n);
    longer[n] = 0;
    bad = fnw_value_bytes(FNW_AVRO, longer, (uint32_t)n + 1);
    ck_assert_int_eq(fnw_ser_encode(t, &bad, &out, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "ends after 11 of its 12 bytes"));
    fnw_buf_free(&out);
    fnw_arena_free(&a);
    fnw_type_free(t);
}
END_TEST

START_TEST(many_datums_measured_like_libavro)
{
    fnw_type *t = avro_type(EV_SCHEMA);
    int32_t arr[300];
    char s[400];
    for (int i = 0; i < 300; i++) {
        arr[i] = (int32_t)(i * 2654435761u);
        s[i] = (char)('a' + i % 26);
    }
    for (int i = 0; i < 300; i += 7) {
        s[i] = '\0';
        ev e = { (int32_t)(i * 40503u) - 7000000, s, i % 2, (int64_t)i * -123456789012LL, i, arr };
        char buf[4096];
        size_t n = write_ev(&e, buf, sizeof buf);
        size_t used;
        fnw_error err;
        ck_assert_int_eq(skip_once(t, (const uint8_t *)buf, n, &used, &err), 0);
        ck_assert_uint_eq(used, n);
        s[i] = (char)('a' + i % 26);
    }
    fnw_type_free(t);
}
END_TEST

START_TEST(null_branch_and_empty_array)
{
    fnw_type *t = avro_type(EV_SCHEMA);
    ev e = { 0, "", 0, 0, 0, NULL };
    char buf[64];
    size_t n = write_ev(&e, buf, sizeof buf);
    ck_assert_uint_eq(n, 4);
    ck_assert_mem_eq(buf, "\0\0\0\0", 4);
    size_t used;
    fnw_error err;
    ck_assert_int_eq(skip_once(t, (const uint8_t *)buf, n, &used, &err), 0);
    ck_assert_uint_eq(used, 4);
    fnw_type_free(t);
}
END_TEST

START_TEST(corrupt_datums)
{
    fnw_type *t = avro_type(EV_SCHEMA);
    /* union branch 2 of 2 */
    const uint8_t br[] = { 0x54, 0x00, 0x04, 0x00 };
    expect_fail(t, br, sizeof br, "branch index 2 not in [0, 2)");
    /* negative string length (-1 = zigzag 01) */
    const uint8_t neg[] = { 0x54, 0x01, 0x00, 0x00 };
    expect_fail(t, neg, sizeof neg, "negative length");
    /* string length beyond the input */
    const uint8_t big[] = { 0x54, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x00 };
    expect_fail(t, big, sizeof big, "exceeds");
    /* an int varint of 6 bytes */
    const uint8_t vi[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00 };
    expect_fail(t, vi, sizeof vi, "varint longer than 5 bytes");
    /* array claiming 2^62 items in a few bytes */
    const uint8_t cnt[] = { 0x00, 0x00, 0x00, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x02 };
    expect_fail(t, cnt, sizeof cnt, "block count");
    /* offsets count from the start of the value */
    expect_fail(t, br, sizeof br, "AVRO union at offset 2");
    fnw_type_free(t);
}
END_TEST

START_TEST(array_blocks_with_sizes)
{
    fnw_type *t = avro_type("{\"type\":\"array\",\"items\":\"int\"}");
    /* count -2 (zigzag 03), byte size 2 (04), items 1, 2, then a second block of 1, end */
    const uint8_t ok[] = { 0x03, 0x04, 0x02, 0x04, 0x02, 0x06, 0x00 };
    size_t used;
    fnw_error err;
    ck_assert_int_eq(skip_once(t, ok, sizeof ok, &used, &err), 0);
    ck_assert_uint_eq(used, sizeof ok);
    const uint8_t wrong[] = { 0x03, 0x06, 0x02, 0x04, 0x00, 0x00 };
    expect_fail(t, wrong, sizeof wrong, "does not match");
    const uint8_t over[] = { 0x03, 0x7e, 0x02, 0x04, 0x00 };
    expect_fail(t, over, sizeof over, "block size 63 exceeds");
    fnw_type_free(t);
}
END_TEST

START_TEST(every_avro_type)
{
    const char *schema =
        "{\"type\":\"record\",\"name\":\"All\",\"fields\":["
        "{\"name\":\"b\",\"type\":\"boolean\"},{\"name\":\"f\",\"type\":\"float\"},"
        "{\"name\":\"d\",\"type\":\"double\"},{\"name\":\"y\",\"type\":\"bytes\"},"
        "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"Color\",\"symbols\":[\"R\",\"G\",\"B\"]}},"
        "{\"name\":\"x\",\"type\":{\"type\":\"fixed\",\"name\":\"F3\",\"size\":3}},"
        "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"long\"}},"
        "{\"name\":\"c\",\"type\":\"Color\"},{\"name\":\"n\",\"type\":\"null\"}]}";
    fnw_type *t = avro_type(schema);
    avro_schema_t s;
    ck_assert_int_eq(avro_schema_from_json_length(schema, strlen(schema), &s), 0);
    avro_value_iface_t *iface = avro_generic_class_from_schema(s);
    avro_value_t rec, f, el;
    ck_assert_int_eq(avro_generic_value_new(iface, &rec), 0);
    avro_value_get_by_name(&rec, "b", &f, NULL);
    avro_value_set_boolean(&f, 1);
    avro_value_get_by_name(&rec, "f", &f, NULL);
    avro_value_set_float(&f, 1.5f);
    avro_value_get_by_name(&rec, "d", &f, NULL);
    avro_value_set_double(&f, -2.25);
    avro_value_get_by_name(&rec, "y", &f, NULL);
    avro_value_set_bytes(&f, (void *)"\x01\x02", 2);
    avro_value_get_by_name(&rec, "e", &f, NULL);
    avro_value_set_enum(&f, 2);
    avro_value_get_by_name(&rec, "x", &f, NULL);
    avro_value_set_fixed(&f, (void *)"abc", 3);
    avro_value_get_by_name(&rec, "m", &f, NULL);
    size_t idx;
    int is_new;
    avro_value_add(&f, "k1", &el, &idx, &is_new);
    avro_value_set_long(&el, 1);
    avro_value_add(&f, "k2", &el, &idx, &is_new);
    avro_value_set_long(&el, -1000000);
    avro_value_get_by_name(&rec, "c", &f, NULL);
    avro_value_set_enum(&f, 1);
    char buf[256];
    avro_writer_t w = avro_writer_memory(buf, sizeof buf);
    ck_assert_int_eq(avro_value_write(w, &rec), 0);
    size_t n = (size_t)avro_writer_tell(w);
    avro_writer_free(w);
    size_t used;
    fnw_error err = { "" };
    ck_assert_msg(skip_once(t, (const uint8_t *)buf, n, &used, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(used, n);
    for (size_t k = 0; k < n; k++)
        expect_fail(t, (const uint8_t *)buf, k, NULL);
    /* enum index 3 of 3: the enum is the 5th field, after 1+4+8+3 bytes */
    ck_assert_int_eq(buf[16], 0x04);
    buf[16] = 0x06;
    expect_fail(t, (const uint8_t *)buf, n, "symbol index 3 not in [0, 3)");
    avro_value_decref(&rec);
    avro_value_iface_decref(iface);
    avro_schema_decref(s);
    fnw_type_free(t);
}
END_TEST

static const char *LIST_SCHEMA =
    "{\"type\":\"record\",\"name\":\"Node\",\"fields\":["
    "{\"name\":\"v\",\"type\":\"int\"},{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}";

START_TEST(recursive_schema)
{
    fnw_type *t = avro_type(LIST_SCHEMA);
    /* 1 -> 2 -> 3 -> null */
    const uint8_t three[] = { 0x02, 0x02, 0x04, 0x02, 0x06, 0x00 };
    size_t used;
    fnw_error err;
    ck_assert_int_eq(skip_once(t, three, sizeof three, &used, &err), 0);
    ck_assert_uint_eq(used, sizeof three);
    /* a chain deeper than the walk allows fails instead of exhausting the stack */
    uint8_t deep[2 * 1000 + 2];
    for (int i = 0; i < 1000; i++) {
        deep[2 * i] = 0x02;
        deep[2 * i + 1] = 0x02;
    }
    deep[2000] = 0x02;
    deep[2001] = 0x00;
    expect_fail(t, deep, sizeof deep, "deeper than");
    fnw_type_free(t);

    /* a record that contains itself with no way out can have no datum */
    fnw_type *r = fnw_type_new(FNW_AVRO);
    ck_assert_int_eq(fnw_type_set_avro_schema(r,
        "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"r\",\"type\":\"R\"}]}", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "contains itself"));
    /* ...but through a union further down it is fine: A{u: [null, B{a: A}]} */
    ck_assert_int_eq(fnw_type_set_avro_schema(r,
        "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"u\",\"type\":[\"null\","
        "{\"type\":\"record\",\"name\":\"B\",\"fields\":[{\"name\":\"a\",\"type\":\"A\"}]}]}]}", &err), 0);
    const uint8_t ab[] = { 0x02, 0x02, 0x00 };   /* A{u: B{a: A{u: null}}} */
    ck_assert_int_eq(skip_once(r, ab, sizeof ab, &used, &err), 0);
    ck_assert_uint_eq(used, 3);
    fnw_type_free(r);
}
END_TEST

START_TEST(zero_width_datums)
{
    fnw_type *t = avro_type("\"null\"");
    size_t used = 9;
    fnw_error err;
    ck_assert_int_eq(skip_once(t, NULL, 0, &used, &err), 0);
    ck_assert_uint_eq(used, 0);
    fnw_type_free(t);
    t = avro_type("{\"type\":\"array\",\"items\":\"null\"}");
    const uint8_t five[] = { 0x0a, 0x00 };
    ck_assert_int_eq(skip_once(t, five, 2, &used, &err), 0);
    ck_assert_uint_eq(used, 2);
    const uint8_t huge[] = { 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00 };
    expect_fail(t, huge, sizeof huge, "zero-width");
    /* LIST<AVRO "null"> elements take zero bytes: bounded too */
    fnw_type *l = fnw_type_new(FNW_LIST);
    fnw_type *n = avro_type("\"null\"");
    ck_assert_int_eq(fnw_type_add_child(l, n, NULL, &err), 0);
    const uint8_t cnt[] = { 0x7f, 0xff, 0xff, 0xff };
    expect_fail(l, cnt, sizeof cnt, "zero-width");
    fnw_type_free(l);
    fnw_type_free(t);
}
END_TEST

START_TEST(avro_inside_a_row)
{
    fnw_type *row = fnw_type_new(FNW_ROW);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(row, avro_type(EV_SCHEMA), "ev", &err), 0);
    ck_assert_int_eq(fnw_type_add_child(row, fnw_type_new(FNW_INT), "n", &err), 0);
    const uint8_t rec[] = { 0x00, 0x54, 0x04, 'h', 'i', 0x00, 0x00, 0x00, 0x00, 0x00, 0x07 };
    size_t used;
    ck_assert_int_eq(skip_once(row, rec, sizeof rec, &used, &err), 0);
    ck_assert_uint_eq(used, sizeof rec);
    fnw_arena a;
    fnw_arena_init(&a, 256, 0);
    fnw_value v;
    ck_assert_int_eq(fnw_ser_decode(row, rec, sizeof rec, &a, &v, &used, &err), 0);
    ck_assert_uint_eq(v.u.items[0].count, 6);
    ck_assert_ptr_eq(v.u.items[0].u.bytes, rec + 1);
    ck_assert_int_eq(v.u.items[1].u.i, 7);
    /* null AVRO field (bit 0x20) */
    const uint8_t nul[] = { 0x20, 0x00, 0x00, 0x00, 0x07 };
    ck_assert_int_eq(skip_once(row, nul, sizeof nul, &used, &err), 0);
    ck_assert_uint_eq(used, sizeof nul);
    fnw_buf out;
    fnw_buf_init(&out, 0);
    ck_assert_int_eq(fnw_ser_encode(row, &v, &out, &err), 0);
    ck_assert_uint_eq(out.len, sizeof rec);
    ck_assert_mem_eq(out.p, rec, sizeof rec);
    fnw_buf_free(&out);
    fnw_arena_free(&a);
    fnw_type_free(row);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("avro");
    TCase *tc = tcase_create("avro");
    tcase_add_test(tc, record_written_by_libavro);
    tcase_add_test(tc, many_datums_measured_like_libavro);
    tcase_add_test(tc, null_branch_and_empty_array);
    tcase_add_test(tc, corrupt_datums);
    tcase_add_test(tc, array_blocks_with_sizes);
    tcase_add_test(tc, every_avro_type);
    tcase_add_test(tc, recursive_schema);
    tcase_add_test(tc, zero_width_datums);
    tcase_add_test(tc, avro_inside_a_row);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
