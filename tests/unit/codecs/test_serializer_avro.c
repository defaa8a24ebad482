/* tests/unit/codecs/test_serializer_avro.c — AVRO values in Flink's encoding (its
 * AvroSerializer's DataOutputEncoder): fixed-width big-endian ints, longs,
 * floats, doubles and indexes, 4-byte lengths, unsigned varint item counts
 * closed by a 0 byte, no length prefix around the value. Every datum here
 * is worked out by hand in the comment above it; the worker must measure it
 * exactly, pass the bytes through unchanged, and reject truncated, corrupt
 * and hostile datums with a message naming what was wrong. Also: schemas
 * that define a name twice are refused before libavro sees them. */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/skip_once.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/avro_program.h"
#include "codecs/avro_names.h"
#include "codecs/ser.h"

static fnw_type *avro_type(const char *schema)
{
    fnw_type *t = fnw_type_new(FNW_AVRO);
    fnw_error err = { "" };
    ck_assert_msg(fnw_type_set_avro_schema(t, schema, &err) == 0, "schema: %s", err.msg);
    return t;
}

/* "00 0A ff" -> bytes; returns the count. */
static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    while (*hex) {
        if (*hex == ' ' || *hex == '|') {
            hex++;
            continue;
        }
        unsigned b;
        ck_assert_int_eq(sscanf(hex, "%2x", &b), 1);
        ck_assert_uint_lt(n, cap);
        out[n++] = (uint8_t)b;
        hex += 2;
    }
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

static void expect_fail_hex(const fnw_type *t, const char *hex, const char *want)
{
    uint8_t b[256];
    expect_fail(t, b, unhex(hex, b, sizeof b), want);
}

/* p[0..n) is exactly one datum of t: skip and decode measure n with bytes
 * after it, decode points into the input, encode writes the same n bytes
 * with no prefix, and every shorter prefix fails. */
static void datum_ok(const fnw_type *t, const uint8_t *p, size_t n)
{
    uint8_t *in = malloc(n + 8);
    ck_assert_ptr_nonnull(in);
    memcpy(in, p, n);
    memset(in + n, 0x55, 8);   /* whatever follows is not part of the datum */
    size_t used = 0;
    fnw_error err = { "" };
    ck_assert_msg(skip_once(t, in, n + 8, &used, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(used, n);
    ck_assert_msg(fnw_ser_skip_generic(t, in, n + 8, &used, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(used, n);

    fnw_arena a;
    fnw_arena_init(&a, 256, 0);
    fnw_value v;
    ck_assert_msg(fnw_ser_decode(t, in, n + 8, &a, &v, &used, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(used, n);
    ck_assert_int_eq(v.kind, FNW_AVRO);
    ck_assert_uint_eq(v.count, n);
    if (n)
        ck_assert_ptr_eq(v.u.bytes, in);   /* opaque bytes, pointing into the input */

    fnw_buf out;
    fnw_buf_init(&out, 0);
    ck_assert_msg(fnw_ser_encode(t, &v, &out, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(out.len, n);
    if (n)
        ck_assert_mem_eq(out.p, p, n);
    fnw_buf_free(&out);
    fnw_arena_free(&a);

    for (size_t k = 0; k < n; k++)
        expect_fail(t, in, k, NULL);
    free(in);
}

static void datum_ok_hex(const fnw_type *t, const char *hex, size_t want_len)
{
    uint8_t b[1024];
    size_t n = unhex(hex, b, sizeof b);
    ck_assert_uint_eq(n, want_len);
    datum_ok(t, b, n);
}

/* ---- every primitive, hand-worked --------------------------------------------- */

static const char *ALL_SCHEMA =
    "{\"type\":\"record\",\"name\":\"All\",\"fields\":["
    "{\"name\":\"b\",\"type\":\"boolean\"},{\"name\":\"i\",\"type\":\"int\"},"
    "{\"name\":\"l\",\"type\":\"long\"},{\"name\":\"f\",\"type\":\"float\"},"
    "{\"name\":\"d\",\"type\":\"double\"},{\"name\":\"s\",\"type\":\"string\"},"
    "{\"name\":\"y\",\"type\":\"bytes\"},"
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"Color\",\"symbols\":[\"R\",\"G\",\"B\"]}},"
    "{\"name\":\"x\",\"type\":{\"type\":\"fixed\",\"name\":\"F3\",\"size\":3}},"
    "{\"name\":\"n\",\"type\":\"null\"},{\"name\":\"c\",\"type\":\"Color\"}]}";

/* All{b=true, i=-2, l=-3, f=1.5, d=-2.25, s="hé", y=[1,2], e=B, x="abc", n=null, c=R} */
static const char *ALL_DATUM =
    "01"                        /* boolean: one byte */
    "| FF FF FF FE"             /* int -2: 4 bytes big-endian (Avro binary: zigzag 03) */
    "| FF FF FF FF FF FF FF FD" /* long -3: 8 bytes big-endian (Avro binary: 05) */
    "| 3F C0 00 00"             /* float 1.5 big-endian (Avro binary: little-endian 00 00 C0 3F) */
    "| C0 02 00 00 00 00 00 00" /* double -2.25 = -1.125 * 2^1 big-endian */
    "| 00 00 00 03 68 C3 A9"    /* string: 4-byte length 3, then UTF-8 h, é */
    "| 00 00 00 02 01 02"       /* bytes: 4-byte length 2, then the bytes */
    "| 00 00 00 02"             /* enum B: symbol index 2 as a 4-byte int */
    "| 61 62 63"                /* fixed(3): the raw bytes */
    /* null: nothing */
    "| 00 00 00 00";            /* enum R by reference to Color */

START_TEST(every_primitive)
{
    fnw_type *t = avro_type(ALL_SCHEMA);
    ck_assert_uint_eq(fnw_avro_program_min_size(t->avro_program), 1 + 4 + 8 + 4 + 8 + 4 + 4 + 4 + 3 + 4);
    datum_ok_hex(t, ALL_DATUM, 49);
    uint8_t b[64];
    size_t n = unhex(ALL_DATUM, b, sizeof b);
    /* enum e is at 1+4+8+4+8+7+6 = 38: index 3 of 3, then -1 */
    ck_assert_int_eq(b[41], 2);
    b[41] = 3;
    expect_fail(t, b, n, "AVRO enum at offset 38: symbol index 3 not in [0, 3)");
    memset(b + 38, 0xff, 4);
    expect_fail(t, b, n, "symbol index -1 not in [0, 3)");
    fnw_type_free(t);
}
END_TEST

START_TEST(negative_and_extreme_numbers)
{
    fnw_type *t = avro_type("\"int\"");
    datum_ok_hex(t, "FF FF FF FF", 4);          /* -1 */
    datum_ok_hex(t, "80 00 00 00", 4);          /* INT_MIN */
    fnw_type_free(t);
    t = avro_type("{\"type\":\"long\"}");
    datum_ok_hex(t, "80 00 00 00 00 00 00 00", 8);   /* LONG_MIN */
    datum_ok_hex(t, "00 00 00 00 00 00 00 01", 8);   /* 1: no varint, so no shorter form */
    fnw_type_free(t);
    t = avro_type("\"double\"");
    datum_ok_hex(t, "7F F8 00 00 00 00 00 00", 8);   /* NaN */
    fnw_type_free(t);
    t = avro_type("\"boolean\"");
    datum_ok_hex(t, "00", 1);
    fnw_type_free(t);
}
END_TEST

START_TEST(standard_avro_binary_is_not_this_encoding)
{
    /* Ev{a=42, s="hi", u=-3 (branch 1), arr=[1,2,3]} as Avro binary (zigzag
     * varints) is 54 04 68 69 02 05 06 02 04 06 00. Read as Flink's encoding
     * a is 54 04 68 69 and the string length 02 05 06 02 runs past the end. */
    fnw_type *t = avro_type("{\"type\":\"record\",\"name\":\"Ev\",\"fields\":["
                            "{\"name\":\"a\",\"type\":\"int\"},{\"name\":\"s\",\"type\":\"string\"},"
                            "{\"name\":\"u\",\"type\":[\"null\",\"long\"]},"
                            "{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"items\":\"int\"}}]}");
    expect_fail_hex(t, "54 04 68 69 02 05 06 02 04 06 00",
                    "AVRO string at offset 4: length 33883650 exceeds the 3 bytes left");
    /* the same value in Flink's encoding */
    datum_ok_hex(t, "00 00 00 2A | 00 00 00 02 68 69 | 00 00 00 01 FF FF FF FF FF FF FF FD"
                    "| 03 00 00 00 01 00 00 00 02 00 00 00 03 00", 4 + 6 + 12 + 14);
    fnw_type_free(t);
}
END_TEST

/* ---- strings ---------------------------------------------------------------- */

START_TEST(long_strings)
{
    fnw_type *t = avro_type("\"string\"");
    uint8_t b[4 + 300];
    /* 200 bytes: length 00 00 00 C8 (a varint would need two bytes, C8 01) */
    memcpy(b, "\x00\x00\x00\xc8", 4);
    memset(b + 4, 'x', 200);
    datum_ok(t, b, 204);
    /* 128 and 300 (01 2C) */
    memcpy(b, "\x00\x00\x00\x80", 4);
    datum_ok(t, b, 132);
    memcpy(b, "\x00\x00\x01\x2c", 4);
    memset(b + 4, 'y', 300);
    datum_ok(t, b, 304);
    datum_ok_hex(t, "00 00 00 00", 4);   /* "" */
    fnw_type_free(t);
}
END_TEST

/* ---- unions ----------------------------------------------------------------- */

START_TEST(unions)
{
    fnw_type *t = avro_type("[\"null\",\"string\",\"long\"]");
    ck_assert_uint_eq(fnw_avro_program_min_size(t->avro_program), 4);
    datum_ok_hex(t, "00 00 00 00", 4);                                 /* null: the index alone */
    datum_ok_hex(t, "00 00 00 01 | 00 00 00 02 61 62", 10);            /* "ab" */
    datum_ok_hex(t, "00 00 00 02 | FF FF FF FF FF FF FF FB", 12);      /* -5L */
    expect_fail_hex(t, "00 00 00 03", "AVRO union at offset 0: branch index 3 not in [0, 3)");
    expect_fail_hex(t, "FF FF FF FF 00 00 00 00", "branch index -1 not in [0, 3)");
    expect_fail_hex(t, "00 00 00", "needs 4 bytes for the branch index, 3 left");
    fnw_type_free(t);
}
END_TEST

/* ---- arrays and maps -------------------------------------------------------- */

static const char *INT_ARRAY = "{\"type\":\"array\",\"items\":\"int\"}";

START_TEST(arrays)
{
    fnw_type *t = avro_type(INT_ARRAY);
    ck_assert_uint_eq(fnw_avro_program_min_size(t->avro_program), 1);
    datum_ok_hex(t, "00", 1);                                           /* []: no count, just the end */
    datum_ok_hex(t, "02 | 00 00 00 01 FF FF FF FF | 00", 10);           /* [1, -1] */
    /* two blocks, [1] and [2, 3], as a reader must accept */
    datum_ok_hex(t, "01 00 00 00 01 | 02 00 00 00 02 00 00 00 03 | 00", 15);
    /* 200 items: count 200 = 0xC8 is 48|80 then 01 (unsigned, low group first) */
    uint8_t b[2 + 800 + 1];
    b[0] = 0xc8;
    b[1] = 0x01;
    for (int i = 0; i < 200; i++)
        memcpy(b + 2 + 4 * i, "\xff\xff\xff\xf6", 4);   /* -10 */
    b[802] = 0x00;
    datum_ok(t, b, sizeof b);
    /* read as zigzag, C8 01 would be 100 items */
    expect_fail(t, b, 2 + 400 + 1, "item count 200 exceeds what the 401 bytes left can hold");
    fnw_type_free(t);
}
END_TEST

START_TEST(maps_and_nesting)
{
    /* map<array<long>>: {"k": [7], "": []} */
    fnw_type *t = avro_type("{\"type\":\"map\",\"values\":{\"type\":\"array\",\"items\":\"long\"}}");
    datum_ok_hex(t, "02"                                   /* 2 entries */
                    "| 00 00 00 01 6B"                     /* key "k": a string (4-byte length) */
                    "| 01 00 00 00 00 00 00 00 07 00"      /* [7] */
                    "| 00 00 00 00"                        /* key "" */
                    "| 00"                                 /* [] */
                    "| 00", 22);                           /* end of the map */
    datum_ok_hex(t, "00", 1);
    expect_fail_hex(t, "01 7F FF FF FF 00",
                    "AVRO map at offset 1: map key length 2147483647 exceeds the 1 bytes left");
    expect_fail_hex(t, "01 FF FF FF FE 00", "negative map key length -2");
    fnw_type_free(t);

    /* array<array<boolean>>: [[true], []] */
    t = avro_type("{\"type\":\"array\",\"items\":{\"type\":\"array\",\"items\":\"boolean\"}}");
    datum_ok_hex(t, "02 | 01 01 00 | 00 | 00", 6);
    fnw_type_free(t);

    /* record with a map of records: R{m: map<P{x:int}>} = {m: {"a": {x: 1}}} */
    t = avro_type("{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"m\",\"type\":{\"type\":\"map\","
                  "\"values\":{\"type\":\"record\",\"name\":\"P\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"}]}}}]}");
    datum_ok_hex(t, "01 | 00 00 00 01 61 | 00 00 00 01 | 00", 11);
    fnw_type_free(t);
}
END_TEST

/* ---- hostile input ---------------------------------------------------------- */

START_TEST(hostile_lengths_and_counts)
{
    fnw_type *s = avro_type("\"bytes\"");
    expect_fail_hex(s, "7F FF FF FF 61 62", "AVRO bytes at offset 0: length 2147483647 exceeds the 2 bytes left");
    expect_fail_hex(s, "FF FF FF FF", "negative length -1");
    expect_fail_hex(s, "00 00", "needs 4 bytes for the length, 2 left (input truncated)");
    fnw_type_free(s);

    fnw_type *t = avro_type(INT_ARRAY);
    /* 2^62 items in a few bytes */
    expect_fail_hex(t, "80 80 80 80 80 80 80 80 40 00 00 00 01",
                    "item count 4611686018427387904 exceeds what the 4 bytes left can hold");
    /* 2^63 does not fit in a Java long */
    expect_fail_hex(t, "80 80 80 80 80 80 80 80 80 01", "does not fit in a Java long");
    /* a tenth byte beyond 64 bits */
    expect_fail_hex(t, "FF FF FF FF FF FF FF FF FF 7F", "item count does not fit in 64 bits");
    expect_fail_hex(t, "80", "input ends inside an item count");
    /* a block's items, then no closing count */
    expect_fail_hex(t, "01 00 00 00 01", "AVRO array at offset 5: input ends inside an item count");
    fnw_type_free(t);
}
END_TEST

START_TEST(zero_width_items)
{
    fnw_type *t = avro_type("\"null\"");
    size_t used = 9;
    fnw_error err;
    ck_assert_int_eq(skip_once(t, NULL, 0, &used, &err), 0);
    ck_assert_uint_eq(used, 0);
    fnw_type_free(t);
    t = avro_type("{\"type\":\"array\",\"items\":\"null\"}");
    datum_ok_hex(t, "05 00", 2);                        /* five nulls */
    datum_ok_hex(t, "05 03 00", 3);                     /* five, then three more */
    expect_fail_hex(t, "80 80 80 01 00", "2097152 zero-width items in one block (limit 1048576)");
    fnw_type_free(t);
    /* LIST<AVRO "null"> elements take zero bytes: bounded too */
    fnw_type *l = fnw_type_new(FNW_LIST);
    ck_assert_int_eq(fnw_type_add_child(l, avro_type("\"null\""), NULL, &err), 0);
    expect_fail_hex(l, "7F FF FF FF", "zero-width");
    fnw_type_free(l);
}
END_TEST

/* A datum of no bytes decodes to an empty value and encodes to nothing, also
 * into a buffer that has no memory yet (found by tests/fuzz/fuzz_avro.c:
 * the encoder used to offset the buffer's NULL pointer, which UBSan flags). */
START_TEST(zero_byte_datum_encodes_to_nothing)
{
    static const char *const schemas[] = {
        "\"null\"",
        "{\"type\":\"record\",\"name\":\"E\",\"fields\":[]}",
        ("{\"type\":\"record\",\"name\":\"O\",\"fields\":[{\"name\":\"f\",\"type\":"
         "{\"type\":\"fixed\",\"name\":\"N\",\"size\":0}}]}"),
    };
    for (size_t i = 0; i < sizeof schemas / sizeof *schemas; i++) {
        fnw_type *t = avro_type(schemas[i]);
        static const uint8_t in[1] = { 0x07 };
        fnw_value v;
        size_t used = 9;
        fnw_error err = { "" };
        ck_assert_int_eq(fnw_ser_decode(t, in, sizeof in, NULL, &v, &used, &err), 0);
        ck_assert_uint_eq(used, 0);
        ck_assert_uint_eq(v.count, 0);
        fnw_buf out;
        fnw_buf_init(&out, 0);
        ck_assert_msg(fnw_ser_encode(t, &v, &out, &err) == 0, "%s: %s", schemas[i], err.msg);
        ck_assert_uint_eq(out.len, 0);
        ck_assert_int_eq(fnw_buf_append(&out, "ab", 2), 0);
        ck_assert_int_eq(fnw_ser_encode(t, &v, &out, &err), 0);
        ck_assert_uint_eq(out.len, 2);
        fnw_buf_free(&out);
        fnw_type_free(t);
    }
}
END_TEST

static const char *LIST_SCHEMA =
    "{\"type\":\"record\",\"name\":\"Node\",\"fields\":["
    "{\"name\":\"v\",\"type\":\"int\"},{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}";

START_TEST(recursive_schema_and_depth)
{
    fnw_type *t = avro_type(LIST_SCHEMA);
    /* 1 -> 2 -> null: v, branch 1, v, branch 0 */
    datum_ok_hex(t, "00 00 00 01 00 00 00 01 | 00 00 00 02 00 00 00 00", 16);
    /* a chain deeper than the walk allows fails instead of exhausting the stack */
    enum { N = 1000 };
    uint8_t *deep = calloc(N, 8);
    ck_assert_ptr_nonnull(deep);
    for (int i = 0; i < N - 1; i++)
        deep[8 * i + 7] = 1;   /* v = 0, branch 1 */
    expect_fail(t, deep, (size_t)N * 8, "deeper than 256 levels");
    free(deep);
    fnw_type_free(t);

    /* a record that contains itself with no way out can have no datum */
    fnw_error err;
    fnw_type *r = fnw_type_new(FNW_AVRO);
    ck_assert_int_eq(fnw_type_set_avro_schema(r,
        "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"r\",\"type\":\"R\"}]}", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "contains itself"));
    /* ...but through a union further down it is fine: A{u: [null, B{a: A}]} */
    ck_assert_int_eq(fnw_type_set_avro_schema(r,
        "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"u\",\"type\":[\"null\","
        "{\"type\":\"record\",\"name\":\"B\",\"fields\":[{\"name\":\"a\",\"type\":\"A\"}]}]}]}", &err), 0);
    datum_ok_hex(r, "00 00 00 01 | 00 00 00 00", 8);   /* A{u: B{a: A{u: null}}} */
    fnw_type_free(r);

    /* a schema nested 300 arrays deep is refused when the type is built */
    char *json = malloc(300 * 32 + 16);
    ck_assert_ptr_nonnull(json);
    size_t n = 0;
    for (int i = 0; i < 300; i++)
        n += (size_t)sprintf(json + n, "{\"type\":\"array\",\"items\":");
    n += (size_t)sprintf(json + n, "\"int\"");
    for (int i = 0; i < 300; i++)
        json[n++] = '}';
    json[n] = '\0';
    fnw_type *d = fnw_type_new(FNW_AVRO);
    ck_assert_int_eq(fnw_type_set_avro_schema(d, json, &err), -1);
    ck_assert_msg(strstr(err.msg, "deeper than 256 levels"), "%s", err.msg);
    fnw_type_free(d);
    free(json);
}
END_TEST

/* ---- inside a Flink row ------------------------------------------------------- */

START_TEST(avro_inside_a_row)
{
    /* Row(ev: AVRO Ev{a:int, s:string}, n: INT): the AVRO field has no length prefix */
    fnw_type *row = fnw_type_new(FNW_ROW);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(row, avro_type("{\"type\":\"record\",\"name\":\"Ev\",\"fields\":["
        "{\"name\":\"a\",\"type\":\"int\"},{\"name\":\"s\",\"type\":\"string\"}]}"), "ev", &err), 0);
    ck_assert_int_eq(fnw_type_add_child(row, fnw_type_new(FNW_INT), "n", &err), 0);
    uint8_t rec[32];
    size_t n = unhex("00 | 00 00 00 2A 00 00 00 02 68 69 | 00 00 00 07", rec, sizeof rec);
    size_t used;
    ck_assert_int_eq(skip_once(row, rec, n, &used, &err), 0);
    ck_assert_uint_eq(used, n);
    fnw_arena a;
    fnw_arena_init(&a, 256, 0);
    fnw_value v;
    ck_assert_int_eq(fnw_ser_decode(row, rec, n, &a, &v, &used, &err), 0);
    ck_assert_uint_eq(v.u.items[0].count, 10);
    ck_assert_ptr_eq(v.u.items[0].u.bytes, rec + 1);
    ck_assert_int_eq(v.u.items[1].u.i, 7);
    fnw_buf out;
    fnw_buf_init(&out, 0);
    ck_assert_int_eq(fnw_ser_encode(row, &v, &out, &err), 0);
    ck_assert_uint_eq(out.len, n);
    ck_assert_mem_eq(out.p, rec, n);

    /* encode refuses bytes that are not exactly one datum of the schema */
    fnw_value bad = fnw_value_bytes(FNW_AVRO, rec + 1, 9);
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(row->children[0], &bad, &out, &err), -1);
    ck_assert_uint_eq(out.len, 0);
    bad = fnw_value_bytes(FNW_AVRO, rec + 1, 11);
    ck_assert_int_eq(fnw_ser_encode(row->children[0], &bad, &out, &err), -1);
    ck_assert_msg(strstr(err.msg, "ends after 10 of its 11 bytes"), "%s", err.msg);

    /* null AVRO field (bit 0x20) */
    n = unhex("20 00 00 00 07", rec, sizeof rec);
    ck_assert_int_eq(skip_once(row, rec, n, &used, &err), 0);
    ck_assert_uint_eq(used, n);
    fnw_buf_free(&out);
    fnw_arena_free(&a);
    fnw_type_free(row);
}
END_TEST

/* ---- names defined twice ------------------------------------------------------- */

static void names_refused(const char *schema, const char *want)
{
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_avro_names_check(schema, strlen(schema), &err), -1);
    ck_assert_msg(strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
    fnw_type *t = fnw_type_new(FNW_AVRO);
    ck_assert_int_eq(fnw_type_set_avro_schema(t, schema, &err), -1);
    ck_assert_msg(strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
    ck_assert_ptr_null(t->avro_program);
    fnw_type_free(t);
}

static void names_accepted(const char *schema)
{
    fnw_error err = { "" };
    ck_assert_msg(fnw_avro_names_check(schema, strlen(schema), &err) == 0, "%s", err.msg);
    fnw_type_free(avro_type(schema));
}

START_TEST(duplicate_names)
{
    /* a record N holding a fixed N: libavro would fail and leak */
    names_refused("{\"type\":\"record\",\"name\":\"N\",\"fields\":[{\"name\":\"f\","
                  "\"type\":{\"type\":\"fixed\",\"name\":\"N\",\"size\":2}}]}",
                  "the name \"N\" is defined twice (first as a record, then as a fixed)");
    /* one record defined twice: libavro would accept it and leak */
    names_refused("{\"type\":\"record\",\"name\":\"R\",\"fields\":["
                  "{\"name\":\"f\",\"type\":{\"type\":\"record\",\"name\":\"S\",\"fields\":[]}},"
                  "{\"name\":\"g\",\"type\":{\"type\":\"record\",\"name\":\"S\",\"fields\":[]}}]}",
                  "\"S\" is defined twice (first as a record, then as a record)");
    /* two enums in a union */
    names_refused("[{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"]},"
                  "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"B\"]}]",
                  "\"E\" is defined twice (first as an enum, then as an enum)");
    /* a nested name takes the enclosing namespace: a.R holds R = a.R */
    names_refused("{\"type\":\"record\",\"name\":\"a.R\",\"fields\":[{\"name\":\"f\","
                  "\"type\":{\"type\":\"fixed\",\"name\":\"R\",\"size\":2}}]}",
                  "\"a.R\" is defined twice");
    /* namespace attribute and dotted name spell the same full name */
    names_refused("{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"a\",\"fields\":["
                  "{\"name\":\"f\",\"type\":{\"type\":\"record\",\"name\":\"b.S\",\"fields\":[]}},"
                  "{\"name\":\"g\",\"type\":{\"type\":\"enum\",\"name\":\"S\",\"namespace\":\"b\",\"symbols\":[\"X\"]}}]}",
                  "\"b.S\" is defined twice (first as a record, then as an enum)");
    /* inside an array and a map too */
    names_refused("{\"type\":\"record\",\"name\":\"R\",\"fields\":["
                  "{\"name\":\"f\",\"type\":{\"type\":\"array\",\"items\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":1}}},"
                  "{\"name\":\"g\",\"type\":{\"type\":\"map\",\"values\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":1}}}]}",
                  "\"F\" is defined twice");
    names_refused("{\"type\":", "not valid JSON");

    /* the same short name in different namespaces is two names */
    names_accepted("{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"a\",\"fields\":[{\"name\":\"f\","
                   "\"type\":{\"type\":\"fixed\",\"name\":\"R\",\"namespace\":\"b\",\"size\":2}}]}");
    /* an empty namespace is none: a.R and R */
    names_accepted("{\"type\":\"record\",\"name\":\"a.R\",\"fields\":[{\"name\":\"f\","
                   "\"type\":{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"\",\"fields\":[]}}]}");
    /* using a name again is a reference, not a definition */
    names_accepted(ALL_SCHEMA);
    names_accepted(LIST_SCHEMA);
    names_accepted("\"long\"");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("avro");
    TCase *tc = tcase_create("avro");
    tcase_add_test(tc, every_primitive);
    tcase_add_test(tc, negative_and_extreme_numbers);
    tcase_add_test(tc, standard_avro_binary_is_not_this_encoding);
    tcase_add_test(tc, long_strings);
    tcase_add_test(tc, unions);
    tcase_add_test(tc, arrays);
    tcase_add_test(tc, maps_and_nesting);
    tcase_add_test(tc, hostile_lengths_and_counts);
    tcase_add_test(tc, zero_width_items);
    tcase_add_test(tc, zero_byte_datum_encodes_to_nothing);
    tcase_add_test(tc, recursive_schema_and_depth);
    tcase_add_test(tc, avro_inside_a_row);
    tcase_add_test(tc, duplicate_names);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
