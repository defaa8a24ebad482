/* tests/unit/test_serializer.c — the Java serializer byte formats, one type
 * at a time: encode gives exactly the bytes Flink's JVM writes, decode of
 * those bytes gives the value back, skip measures them, and every strict
 * prefix fails cleanly. Then hostile input: negative and huge lengths and
 * counts fail before anything is allocated, and skip and decode agree on
 * random input. */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/skip_once.h"
#include "tests/unit/type_build.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/serializer.h"

/* ---- helpers ---------------------------------------------------------------- */

static size_t hex(const char *s, uint8_t *out)
{
    size_t n = 0;
    int hi = -1;
    for (; *s; s++) {
        int d;
        if (*s >= '0' && *s <= '9') d = *s - '0';
        else if (*s >= 'a' && *s <= 'f') d = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F') d = *s - 'A' + 10;
        else continue;
        if (hi < 0) {
            hi = d;
        } else {
            out[n++] = (uint8_t)(hi << 4 | d);
            hi = -1;
        }
    }
    ck_assert_msg(hi < 0, "odd hex string %s", s);
    return n;
}

static char *tohex(const uint8_t *p, size_t n)
{
    static char buf[8192];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 4 < sizeof buf; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%02x ", p[i]);
    buf[o] = '\0';
    return buf;
}


static fnw_type *T1(fnw_kind k, fnw_type *c)
{
    fnw_type *t = T(k);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(t, c, NULL, &err), 0);
    return t;
}

static fnw_type *T2(fnw_kind k, fnw_type *a, fnw_type *b)
{
    fnw_type *t = T1(k, a);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(t, b, NULL, &err), 0);
    return t;
}


static fnw_arena arena;
static fnw_buf out;

static void setup(void)
{
    fnw_arena_init(&arena, 1024, 1 << 20);
    fnw_buf_init(&out, 0);
}

static void teardown(void)
{
    fnw_arena_free(&arena);
    fnw_buf_free(&out);
}

/* Skip and decode of bytes[0..n) must both fail with a message. */
static void expect_fail(const fnw_type *t, const uint8_t *b, size_t n, const char *want_in_msg)
{
    fnw_error err = { "" };
    size_t used = 0;
    ck_assert_msg(skip_once(t, b, n, &used, &err) == -1, "skip accepted %s", tohex(b, n));
    ck_assert_msg(err.msg[0] != '\0', "skip failed without a message");
    if (want_in_msg)
        ck_assert_msg(strstr(err.msg, want_in_msg), "skip message '%s' lacks '%s'", err.msg, want_in_msg);
    fnw_error err2 = { "" };
    fnw_value v;
    ck_assert_msg(fnw_ser_decode(t, b, n, &arena, &v, &used, &err2) == -1, "decode accepted %s", tohex(b, n));
    ck_assert_msg(err2.msg[0] != '\0', "decode failed without a message");
    if (want_in_msg)
        ck_assert_msg(strstr(err2.msg, want_in_msg), "decode message '%s' lacks '%s'", err2.msg, want_in_msg);
    fnw_arena_reset(&arena);
}

/* Decode and skip of the hex bytes accept exactly them and give v. */
static void check_decodes(const fnw_type *t, const char *hx, const fnw_value *v)
{
    uint8_t b[4096];
    size_t n = hex(hx, b);
    b[n] = 0xee;   /* a following byte must not be consumed */
    fnw_error err = { "" };
    size_t used = 999;
    ck_assert_msg(skip_once(t, b, n + 1, &used, &err) == 0, "skip %s: %s", hx, err.msg);
    ck_assert_uint_eq(used, n);
    used = 999;
    ck_assert_msg(skip_once(t, b, n, &used, &err) == 0, "skip %s: %s", hx, err.msg);
    ck_assert_uint_eq(used, n);
    fnw_value got;
    used = 999;
    ck_assert_msg(fnw_ser_decode(t, b, n + 1, &arena, &got, &used, &err) == 0, "decode %s: %s", hx, err.msg);
    ck_assert_uint_eq(used, n);
    ck_assert_msg(fnw_value_equal(t, &got, v), "decoded value of %s differs", hx);
    for (size_t k = 0; k < n; k++)
        expect_fail(t, b, k, NULL);
    fnw_arena_reset(&arena);
}

/* The full contract for a canonical encoding: encode(v) == hx, plus
 * check_decodes, plus decode-then-encode reproduces the bytes. */
static void check_vector(const fnw_type *t, const fnw_value *v, const char *hx)
{
    uint8_t b[4096];
    size_t n = hex(hx, b);
    fnw_error err = { "" };
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_buf_put_u8(&out, 0x99), 0);   /* encode appends */
    ck_assert_msg(fnw_ser_encode(t, v, &out, &err) == 0, "encode: %s", err.msg);
    ck_assert_msg(out.len == n + 1 && memcmp(out.p + 1, b, n) == 0, "encoded %s, want %s",
                  tohex(out.p + 1, out.len - 1), hx);
    check_decodes(t, hx, v);
    fnw_value got;
    size_t used;
    ck_assert_int_eq(fnw_ser_decode(t, b, n, &arena, &got, &used, &err), 0);
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(t, &got, &out, &err), 0);
    ck_assert_msg(out.len == n && memcmp(out.p, b, n) == 0, "re-encoded %s", tohex(out.p, out.len));
    fnw_arena_reset(&arena);
}

static void expect_encode_fail(const fnw_type *t, const fnw_value *v, const char *want_in_msg)
{
    fnw_error err = { "" };
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_buf_append(&out, "ab", 2), 0);
    ck_assert_int_eq(fnw_ser_encode(t, v, &out, &err), -1);
    ck_assert_uint_eq(out.len, 2);   /* left as it was */
    ck_assert_msg(strstr(err.msg, want_in_msg), "encode message '%s' lacks '%s'", err.msg, want_in_msg);
}

/* ---- scalars ------------------------------------------------------------------ */

START_TEST(scalar_vectors)
{
    struct { fnw_kind k; int64_t i; const char *hx; } c[] = {
        { FNW_BYTE, -1, "ff" }, { FNW_BYTE, 127, "7f" }, { FNW_BYTE, -128, "80" },
        { FNW_BOOLEAN, 1, "01" }, { FNW_BOOLEAN, 0, "00" },
        { FNW_SHORT, -2, "ff fe" }, { FNW_SHORT, 0x1234, "12 34" },
        { FNW_INT, 5, "00 00 00 05" }, { FNW_INT, INT32_MIN, "80 00 00 00" }, { FNW_INT, -1, "ff ff ff ff" },
        { FNW_LONG, 1000, "00 00 00 00 00 00 03 e8" },
        { FNW_LONG, INT64_MIN, "80 00 00 00 00 00 00 00" },
        { FNW_CHAR, 'A', "00 41" }, { FNW_CHAR, 0x20ac, "20 ac" }, { FNW_CHAR, 0xd83d, "d8 3d" },
        { FNW_SQL_DATE, 19000, "00 00 4a 38" }, { FNW_SQL_DATE, -1, "ff ff ff ff" },
        { FNW_SQL_TIME, 45296789, "02 b3 2c 95" },
        { FNW_SQL_TIMESTAMP, 1700000000123LL, "00 00 01 8b cf e5 68 7b" },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        fnw_type *t = T(c[i].k);
        fnw_value v = fnw_value_int(c[i].k, c[i].i);
        check_vector(t, &v, c[i].hx);
        fnw_type_free(t);
    }
}
END_TEST

START_TEST(float_double_vectors)
{
    fnw_type *f = T(FNW_FLOAT), *d = T(FNW_DOUBLE);
    fnw_value v = fnw_value_float(1.5f);
    check_vector(f, &v, "3f c0 00 00");
    v = fnw_value_float(-0.0f);
    check_vector(f, &v, "80 00 00 00");
    v = fnw_value_double(1.5);
    check_vector(d, &v, "3f f8 00 00 00 00 00 00");
    v = fnw_value_double(-2.0);
    check_vector(d, &v, "c0 00 00 00 00 00 00 00");
    fnw_type_free(f);
    fnw_type_free(d);
}
END_TEST

START_TEST(boolean_any_nonzero_is_true)
{
    /* Java's readBoolean() is "byte != 0" */
    fnw_type *t = T(FNW_BOOLEAN);
    fnw_value v = fnw_value_int(FNW_BOOLEAN, 1);
    check_decodes(t, "02", &v);
    check_decodes(t, "ff", &v);
    fnw_type_free(t);
}
END_TEST

START_TEST(scalar_ranges_on_encode)
{
    fnw_type *b = T(FNW_BYTE), *s = T(FNW_SHORT), *c = T(FNW_CHAR), *i = T(FNW_INT);
    fnw_value v = fnw_value_int(FNW_BYTE, 128);
    expect_encode_fail(b, &v, "out of range");
    v = fnw_value_int(FNW_SHORT, 40000);
    expect_encode_fail(s, &v, "out of range");
    v = fnw_value_int(FNW_CHAR, -1);
    expect_encode_fail(c, &v, "out of range");
    v = fnw_value_int(FNW_INT, 1LL << 31);
    expect_encode_fail(i, &v, "out of range");
    v = fnw_value_int(FNW_LONG, 1);   /* kind mismatch */
    expect_encode_fail(i, &v, "kind LONG");
    v = fnw_value_null(FNW_INT);      /* INT has no null encoding of its own */
    expect_encode_fail(i, &v, "null");
    fnw_type_free(b);
    fnw_type_free(s);
    fnw_type_free(c);
    fnw_type_free(i);
}
END_TEST

/* ---- strings and blobs ---------------------------------------------------------- */

START_TEST(string_vectors)
{
    fnw_type *t = T(FNW_STRING);
    fnw_value v = fnw_value_str("ab");
    check_vector(t, &v, "00 00 00 02 61 62");
    v = fnw_value_str("");
    check_vector(t, &v, "00 00 00 00");
    v = fnw_value_str("\xc3\xa9\xe2\x82\xac");   /* é€ */
    check_vector(t, &v, "00 00 00 05 c3 a9 e2 82 ac");
    v = fnw_value_null(FNW_STRING);
    expect_encode_fail(t, &v, "null");
    fnw_type_free(t);
}
END_TEST

START_TEST(big_dec_and_pickled_vectors)
{
    fnw_type *t = T(FNW_BIG_DEC);
    fnw_value v = fnw_value_bytes(FNW_BIG_DEC, "1.50", 4);
    check_vector(t, &v, "00 00 00 04 31 2e 35 30");
    v = fnw_value_bytes(FNW_BIG_DEC, "-1E+3", 5);
    check_vector(t, &v, "00 00 00 05 2d 31 45 2b 33");
    fnw_type_free(t);
    t = T(FNW_PICKLED_BYTES);
    const uint8_t pk[] = { 0x80, 0x04, 0x4b, 0x07, 0x2e };
    v = fnw_value_bytes(FNW_PICKLED_BYTES, pk, sizeof pk);
    check_vector(t, &v, "00 00 00 05 80 04 4b 07 2e");
    v = fnw_value_bytes(FNW_PICKLED_BYTES, NULL, 0);
    check_vector(t, &v, "00 00 00 00");
    fnw_type_free(t);
}
END_TEST

/* ---- BIG_INT ---------------------------------------------------------------------- */

static void check_bigint(int64_t x, const char *hx)
{
    fnw_type *t = T(FNW_BIG_INT);
    uint8_t mag[8];
    uint32_t n = fnw_value_bigint_from_i64(x, mag);
    fnw_value v = fnw_value_bytes(FNW_BIG_INT, mag, n);
    check_vector(t, &v, hx);
    int64_t back = 0;
    ck_assert_int_eq(fnw_value_bigint_to_i64(mag, n, &back), 0);
    ck_assert_int_eq(back, x);
    fnw_type_free(t);
}

START_TEST(big_int_constants_and_general_form)
{
    check_bigint(0, "00 00 00 01");
    check_bigint(1, "00 00 00 02");
    check_bigint(10, "00 00 00 03");
    check_bigint(-1, "00 00 00 05 ff");
    check_bigint(2, "00 00 00 05 02");
    check_bigint(127, "00 00 00 05 7f");
    check_bigint(128, "00 00 00 06 00 80");
    check_bigint(-128, "00 00 00 05 80");
    check_bigint(-129, "00 00 00 06 ff 7f");
    check_bigint(255, "00 00 00 06 00 ff");
    check_bigint(11, "00 00 00 05 0b");
    check_bigint(INT64_MAX, "00 00 00 0c 7f ff ff ff ff ff ff ff");
    check_bigint(INT64_MIN, "00 00 00 0c 80 00 00 00 00 00 00 00");

    fnw_type *t = T(FNW_BIG_INT);
    /* null */
    fnw_value nul = fnw_value_null(FNW_BIG_INT);
    check_vector(t, &nul, "00 00 00 00");
    /* the general form of the constants decodes to the same numbers */
    const uint8_t zero = 0, one = 1, ten = 10;
    fnw_value z = fnw_value_bytes(FNW_BIG_INT, &zero, 1);
    check_decodes(t, "00 00 00 05 00", &z);
    fnw_value o = fnw_value_bytes(FNW_BIG_INT, &one, 1);
    check_decodes(t, "00 00 00 05 01", &o);
    fnw_value te = fnw_value_bytes(FNW_BIG_INT, &ten, 1);
    check_decodes(t, "00 00 00 06 00 0a", &te);
    /* non-minimal magnitudes encode minimally (and as constants) */
    const uint8_t five[] = { 0x00, 0x00, 0x05 }, mone[] = { 0xff, 0xff }, ten2[] = { 0x00, 0x0a };
    fnw_value v = fnw_value_bytes(FNW_BIG_INT, five, 3);
    fnw_buf_clear(&out);
    fnw_error err;
    ck_assert_int_eq(fnw_ser_encode(t, &v, &out, &err), 0);
    ck_assert_uint_eq(out.len, 5);
    ck_assert_mem_eq(out.p, "\x00\x00\x00\x05\x05", 5);
    v = fnw_value_bytes(FNW_BIG_INT, mone, 2);
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(t, &v, &out, &err), 0);
    ck_assert_mem_eq(out.p, "\x00\x00\x00\x05\xff", 5);
    v = fnw_value_bytes(FNW_BIG_INT, ten2, 2);
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(t, &v, &out, &err), 0);
    ck_assert_uint_eq(out.len, 4);
    ck_assert_mem_eq(out.p, "\x00\x00\x00\x03", 4);
    /* length 4 (zero-byte magnitude) and negative lengths are invalid */
    uint8_t b[16];
    size_t n = hex("00 00 00 04", b);
    expect_fail(t, b, n, "zero-byte");
    n = hex("ff ff ff fb 01", b);
    expect_fail(t, b, n, "negative");
    n = hex("7f ff ff ff 01 02", b);
    expect_fail(t, b, n, "exceeds");
    v = fnw_value_bytes(FNW_BIG_INT, NULL, 0);
    expect_encode_fail(t, &v, "magnitude");
    /* a 9-byte number does not fit int64 */
    const uint8_t big[] = { 0x01, 0, 0, 0, 0, 0, 0, 0, 0 };
    int64_t x;
    ck_assert_int_eq(fnw_value_bigint_to_i64(big, 9, &x), -1);
    const uint8_t padded[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80 };
    ck_assert_int_eq(fnw_value_bigint_to_i64(padded, 10, &x), 0);
    ck_assert_int_eq(x, -128);
    fnw_type_free(t);
}
END_TEST

/* ---- time types --------------------------------------------------------------- */

START_TEST(instant_vectors)
{
    fnw_type *t = T(FNW_INSTANT);
    fnw_value v = fnw_value_instant(1, 500);
    check_vector(t, &v, "00 00 00 00 00 00 00 01 00 00 01 f4");
    v = fnw_value_instant(-1, 999999999);
    check_vector(t, &v, "ff ff ff ff ff ff ff ff 3b 9a c9 ff");
    fnw_value nul = fnw_value_null(FNW_INSTANT);
    check_vector(t, &nul, "80 00 00 00 00 00 00 00 80 00 00 00");
    /* only both sentinels together mean null */
    v = fnw_value_instant(INT64_MIN, 0);
    check_vector(t, &v, "80 00 00 00 00 00 00 00 00 00 00 00");
    v = fnw_value_instant(0, 1000000000);
    expect_encode_fail(t, &v, "nanos");
    fnw_type_free(t);
}
END_TEST

START_TEST(local_date_time_vectors)
{
    fnw_type *d = T(FNW_LOCAL_DATE), *tm = T(FNW_LOCAL_TIME), *dt = T(FNW_LOCAL_DATETIME);
    fnw_value v = fnw_value_local_date(2024, 2, 29);
    check_vector(d, &v, "00 00 07 e8 02 1d");
    v = fnw_value_local_date(-5, 12, 31);
    check_vector(d, &v, "ff ff ff fb 0c 1f");
    fnw_value nul = fnw_value_null(FNW_LOCAL_DATE);
    check_vector(d, &nul, "80 00 00 00 80 00");
    v = fnw_value_local_time(13, 45, 30, 123456789);
    check_vector(tm, &v, "0d 2d 1e 07 5b cd 15");
    v = fnw_value_local_time(0, 0, 0, 0);
    check_vector(tm, &v, "00 00 00 00 00 00 00");
    nul = fnw_value_null(FNW_LOCAL_TIME);
    check_vector(tm, &nul, "80 80 00 80 00 00 00");
    v = fnw_value_local_datetime(1970, 1, 1, 23, 59, 59, 999999999);
    check_vector(dt, &v, "00 00 07 b2 01 01 17 3b 3b 3b 9a c9 ff");
    nul = fnw_value_null(FNW_LOCAL_DATETIME);
    check_vector(dt, &nul, "80 00 00 00 80 00 80 80 00 80 00 00 00");

    uint8_t b[32];
    size_t n = hex("00 00 07 e7 02 1d", b);   /* 2023-02-29 */
    expect_fail(d, b, n, "invalid date");
    n = hex("00 00 07 e8 0d 01", b);          /* month 13 */
    expect_fail(d, b, n, "invalid date");
    n = hex("18 00 00 00 00 00 00", b);       /* 24:00 */
    expect_fail(tm, b, n, "invalid time");
    n = hex("00 00 07 b2 01 01 80 80 00 80 00 00 00", b);   /* date set, time null */
    expect_fail(dt, b, n, "exactly one");
    v = fnw_value_local_date(2023, 2, 29);
    expect_encode_fail(d, &v, "invalid date");
    v = fnw_value_local_time(1, 60, 0, 0);
    expect_encode_fail(tm, &v, "invalid time");
    fnw_type_free(d);
    fnw_type_free(tm);
    fnw_type_free(dt);
}
END_TEST

/* ---- containers ---------------------------------------------------------------- */

START_TEST(primitive_array_vectors)
{
    fnw_type *bt = T1(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE));
    const uint8_t raw[] = { 1, 2, 0xff };
    fnw_value v = fnw_value_bytes(FNW_PRIMITIVE_ARRAY, raw, 3);
    check_vector(bt, &v, "00 00 00 03 01 02 ff");
    v = fnw_value_bytes(FNW_PRIMITIVE_ARRAY, NULL, 0);
    check_vector(bt, &v, "00 00 00 00");
    fnw_type_free(bt);

    fnw_type *it = T1(FNW_PRIMITIVE_ARRAY, T(FNW_INT));
    fnw_value e[3] = { fnw_value_int(FNW_INT, 1), fnw_value_int(FNW_INT, -1), fnw_value_int(FNW_INT, 256) };
    v = fnw_value_items(FNW_PRIMITIVE_ARRAY, e, 3);
    check_vector(it, &v, "00 00 00 03 00 00 00 01 ff ff ff ff 00 00 01 00");
    e[1] = fnw_value_null(FNW_INT);   /* no null flags: a null element cannot be written */
    expect_encode_fail(it, &v, "null");
    fnw_type_free(it);

    fnw_type *zt = T1(FNW_PRIMITIVE_ARRAY, T(FNW_BOOLEAN));
    fnw_value z[2] = { fnw_value_int(FNW_BOOLEAN, 1), fnw_value_int(FNW_BOOLEAN, 0) };
    v = fnw_value_items(FNW_PRIMITIVE_ARRAY, z, 2);
    check_vector(zt, &v, "00 00 00 02 01 00");
    fnw_type_free(zt);

    fnw_type *dt = T1(FNW_PRIMITIVE_ARRAY, T(FNW_DOUBLE));
    fnw_value dd[1] = { fnw_value_double(1.5) };
    v = fnw_value_items(FNW_PRIMITIVE_ARRAY, dd, 1);
    check_vector(dt, &v, "00 00 00 01 3f f8 00 00 00 00 00 00");
    fnw_type_free(dt);

    fnw_type *ct = T1(FNW_PRIMITIVE_ARRAY, T(FNW_CHAR));
    fnw_value cc[2] = { fnw_value_int(FNW_CHAR, 'h'), fnw_value_int(FNW_CHAR, 'i') };
    v = fnw_value_items(FNW_PRIMITIVE_ARRAY, cc, 2);
    check_vector(ct, &v, "00 00 00 02 00 68 00 69");
    fnw_type_free(ct);
}
END_TEST

START_TEST(basic_and_object_array_vectors)
{
    fnw_type *t = T1(FNW_BASIC_ARRAY, T(FNW_STRING));
    fnw_value e[3] = { fnw_value_str("a"), fnw_value_null(FNW_STRING), fnw_value_str("bc") };
    fnw_value v = fnw_value_items(FNW_BASIC_ARRAY, e, 3);
    check_vector(t, &v, "00 00 00 03 | 01 00 00 00 01 61 | 00 | 01 00 00 00 02 62 63");
    v = fnw_value_items(FNW_BASIC_ARRAY, NULL, 0);
    check_vector(t, &v, "00 00 00 00");
    /* any non-zero presence byte means present (Java readBoolean) */
    v = fnw_value_items(FNW_BASIC_ARRAY, e, 1);
    check_decodes(t, "00 00 00 01 07 00 00 00 01 61", &v);
    fnw_type_free(t);

    fnw_type *o = T1(FNW_OBJECT_ARRAY, TN(FNW_ROW, 1, T(FNW_INT)));
    fnw_value f1[1] = { fnw_value_int(FNW_INT, 1) };
    fnw_value rows[2] = { fnw_value_row(FNW_INSERT, f1, 1), fnw_value_null(FNW_ROW) };
    v = fnw_value_items(FNW_OBJECT_ARRAY, rows, 2);
    check_vector(o, &v, "00 00 00 02 | 01 00 00 00 00 01 | 00");
    fnw_type_free(o);
}
END_TEST

START_TEST(list_vectors)
{
    fnw_type *t = T1(FNW_LIST, T(FNW_STRING));
    fnw_value e[2] = { fnw_value_str("x"), fnw_value_str("yz") };
    fnw_value v = fnw_value_items(FNW_LIST, e, 2);
    check_vector(t, &v, "00 00 00 02 00 00 00 01 78 00 00 00 02 79 7a");
    v = fnw_value_items(FNW_LIST, NULL, 0);
    check_vector(t, &v, "00 00 00 00");
    e[0] = fnw_value_null(FNW_STRING);   /* LIST has no null flags */
    v = fnw_value_items(FNW_LIST, e, 2);
    expect_encode_fail(t, &v, "null");
    fnw_type_free(t);

    /* element types with a null encoding of their own may be null */
    fnw_type *bt = T1(FNW_LIST, T(FNW_BIG_INT));
    const uint8_t m5 = 5;
    fnw_value be[2] = { fnw_value_null(FNW_BIG_INT), fnw_value_bytes(FNW_BIG_INT, &m5, 1) };
    v = fnw_value_items(FNW_LIST, be, 2);
    check_vector(bt, &v, "00 00 00 02 00 00 00 00 00 00 00 05 05");
    fnw_type_free(bt);

    /* nested, with an empty inner list */
    fnw_type *nt = T1(FNW_LIST, T1(FNW_LIST, T(FNW_INT)));
    fnw_value in0[2] = { fnw_value_int(FNW_INT, 1), fnw_value_int(FNW_INT, 2) };
    fnw_value outer[2] = { fnw_value_items(FNW_LIST, in0, 2), fnw_value_items(FNW_LIST, NULL, 0) };
    v = fnw_value_items(FNW_LIST, outer, 2);
    check_vector(nt, &v, "00 00 00 02 | 00 00 00 02 00 00 00 01 00 00 00 02 | 00 00 00 00");
    fnw_type_free(nt);
}
END_TEST

START_TEST(map_vectors_keep_wire_order)
{
    fnw_type *t = T2(FNW_MAP, T(FNW_STRING), T(FNW_INT));
    fnw_value kv[6] = {
        fnw_value_str("b"), fnw_value_int(FNW_INT, 1),
        fnw_value_str("a"), fnw_value_null(FNW_INT),
        fnw_value_str("c"), fnw_value_int(FNW_INT, 3),
    };
    fnw_value v = fnw_value_items(FNW_MAP, kv, 3);
    const char *hx = "00 00 00 03 | 00 00 00 01 62 00 00 00 00 01 | 00 00 00 01 61 01 | "
                     "00 00 00 01 63 00 00 00 00 03";
    check_vector(t, &v, hx);
    /* decoded entries keep the wire order b, a, c */
    uint8_t b[64];
    size_t n = hex(hx, b), used;
    fnw_value got;
    fnw_error err;
    ck_assert_int_eq(fnw_ser_decode(t, b, n, &arena, &got, &used, &err), 0);
    ck_assert_uint_eq(got.count, 3);
    ck_assert_int_eq(got.u.items[0].u.bytes[0], 'b');
    ck_assert_int_eq(got.u.items[2].u.bytes[0], 'a');
    ck_assert_int_eq(got.u.items[3].is_null, 1);
    ck_assert_int_eq(got.u.items[4].u.bytes[0], 'c');
    ck_assert_int_eq(got.u.items[5].u.i, 3);
    v = fnw_value_items(FNW_MAP, NULL, 0);
    check_vector(t, &v, "00 00 00 00");
    /* a null key of a type without a null encoding cannot be written */
    kv[0] = fnw_value_null(FNW_STRING);
    v = fnw_value_items(FNW_MAP, kv, 1);
    expect_encode_fail(t, &v, "MAP key 0");
    fnw_type_free(t);
}
END_TEST

START_TEST(tuple_vectors)
{
    fnw_type *t = TN(FNW_TUPLE, 2, T(FNW_INT), T(FNW_STRING));
    fnw_value f[2] = { fnw_value_int(FNW_INT, 1), fnw_value_str("a") };
    fnw_value v = fnw_value_items(FNW_TUPLE, f, 2);
    check_vector(t, &v, "00 00 00 01 00 00 00 01 61");
    f[1] = fnw_value_null(FNW_STRING);
    expect_encode_fail(t, &v, "TUPLE field 1");
    v = fnw_value_items(FNW_TUPLE, f, 1);
    expect_encode_fail(t, &v, "1 fields");
    fnw_type_free(t);

    fnw_type *e = T(FNW_TUPLE);   /* Tuple0: zero bytes */
    fnw_value ev = fnw_value_items(FNW_TUPLE, NULL, 0);
    fnw_buf_clear(&out);
    fnw_error err;
    ck_assert_int_eq(fnw_ser_encode(e, &ev, &out, &err), 0);
    ck_assert_uint_eq(out.len, 0);
    size_t used = 9;
    ck_assert_int_eq(skip_once(e, NULL, 0, &used, &err), 0);
    ck_assert_uint_eq(used, 0);
    fnw_type_free(e);
}
END_TEST

START_TEST(row_vectors)
{
    fnw_type *t = TN(FNW_ROW, 2, T(FNW_STRING), T(FNW_INT));
    fnw_value f[2] = { fnw_value_str("ab"), fnw_value_int(FNW_INT, 5) };
    fnw_value v = fnw_value_row(FNW_INSERT, f, 2);
    check_vector(t, &v, "00 | 00 00 00 02 61 62 | 00 00 00 05");
    /* row kinds live in the two high bits */
    v.row_kind = FNW_UPDATE_BEFORE;
    check_vector(t, &v, "80 00 00 00 02 61 62 00 00 00 05");
    v.row_kind = FNW_UPDATE_AFTER;
    check_vector(t, &v, "40 00 00 00 02 61 62 00 00 00 05");
    v.row_kind = FNW_DELETE;
    check_vector(t, &v, "c0 00 00 00 02 61 62 00 00 00 05");
    /* null fields: bit i+2, bytes omitted */
    v.row_kind = FNW_INSERT;
    f[0] = fnw_value_null(FNW_STRING);
    check_vector(t, &v, "20 00 00 00 05");
    f[1] = fnw_value_null(FNW_INT);
    check_vector(t, &v, "30");
    v.row_kind = 4;
    expect_encode_fail(t, &v, "row kind");
    fnw_type_free(t);

    /* 7 fields = 9 mask bits = 2 bytes; field 6 null = bit 8 = byte 1, 0x80 */
    fnw_type *w = TN(FNW_ROW, 7, T(FNW_BYTE), T(FNW_BYTE), T(FNW_BYTE), T(FNW_BYTE), T(FNW_BYTE),
                     T(FNW_BYTE), T(FNW_BYTE));
    fnw_value g[7];
    for (int i = 0; i < 7; i++)
        g[i] = fnw_value_int(FNW_BYTE, i);
    g[6] = fnw_value_null(FNW_BYTE);
    v = fnw_value_row(FNW_INSERT, g, 7);
    check_vector(w, &v, "00 80 00 01 02 03 04 05");
    g[0] = fnw_value_null(FNW_BYTE);
    g[6] = fnw_value_int(FNW_BYTE, 6);
    v.row_kind = FNW_DELETE;
    check_vector(w, &v, "e0 00 01 02 03 04 05 06");
    fnw_type_free(w);

    /* 6 fields = 8 bits: still one byte; the last field is bit 0x01 */
    fnw_type *s = TN(FNW_ROW, 6, T(FNW_BYTE), T(FNW_BYTE), T(FNW_BYTE), T(FNW_BYTE), T(FNW_BYTE), T(FNW_BYTE));
    for (int i = 0; i < 6; i++)
        g[i] = fnw_value_int(FNW_BYTE, i);
    g[5] = fnw_value_null(FNW_BYTE);
    v = fnw_value_row(FNW_INSERT, g, 6);
    check_vector(s, &v, "01 00 01 02 03 04");
    fnw_type_free(s);

    /* empty row: just the mask */
    fnw_type *e = T(FNW_ROW);
    v = fnw_value_row(FNW_UPDATE_AFTER, NULL, 0);
    check_vector(e, &v, "40");
    fnw_type_free(e);
}
END_TEST

START_TEST(nested_row_with_containers)
{
    /* ROW<id LONG, tags LIST<STRING>, attrs MAP<STRING, BIG_INT>, inner ROW<x DOUBLE>> */
    fnw_type *t = TN(FNW_ROW, 4, T(FNW_LONG), T1(FNW_LIST, T(FNW_STRING)),
                     T2(FNW_MAP, T(FNW_STRING), T(FNW_BIG_INT)), TN(FNW_ROW, 1, T(FNW_DOUBLE)));
    fnw_value tags[1] = { fnw_value_str("t") };
    const uint8_t m = 0x80;
    fnw_value kv[2] = { fnw_value_str("k"), fnw_value_bytes(FNW_BIG_INT, &m, 1) };
    fnw_value x[1] = { fnw_value_null(FNW_DOUBLE) };
    fnw_value f[4] = {
        fnw_value_int(FNW_LONG, 7), fnw_value_items(FNW_LIST, tags, 1), fnw_value_items(FNW_MAP, kv, 1),
        fnw_value_row(FNW_INSERT, x, 1),
    };
    fnw_value v = fnw_value_row(FNW_INSERT, f, 4);
    check_vector(t, &v, "00 | 00 00 00 00 00 00 00 07 | 00 00 00 01 00 00 00 01 74 | "
                        "00 00 00 01 00 00 00 01 6b 00 00 00 00 05 80 | 20");
    fnw_type_free(t);
}
END_TEST

START_TEST(encode_error_names_the_field)
{
    fnw_type *t = T(FNW_ROW);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(t, T(FNW_INT), "id", &err), 0);
    ck_assert_int_eq(fnw_type_add_child(t, T1(FNW_LIST, T(FNW_STRING)), "tags", &err), 0);
    fnw_value tags[2] = { fnw_value_str("a"), fnw_value_int(FNW_INT, 1) };
    fnw_value f[2] = { fnw_value_int(FNW_INT, 1), fnw_value_items(FNW_LIST, tags, 2) };
    fnw_value v = fnw_value_row(FNW_INSERT, f, 2);
    expect_encode_fail(t, &v, "ROW field 1 'tags': LIST element 1: encoding STRING: value is of kind INT");
    fnw_type_free(t);
}
END_TEST

/* ---- hostile input --------------------------------------------------------------- */

START_TEST(huge_and_negative_lengths)
{
    fnw_arena small;
    fnw_arena_init(&small, 256, 4096);
    uint8_t b[64];
    size_t n;
    fnw_type *kinds[] = {
        T(FNW_STRING), T(FNW_BIG_DEC), T(FNW_PICKLED_BYTES), T1(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)),
        T1(FNW_PRIMITIVE_ARRAY, T(FNW_LONG)), T1(FNW_LIST, T(FNW_INT)), T1(FNW_LIST, T(FNW_STRING)),
        T1(FNW_BASIC_ARRAY, T(FNW_INT)), T1(FNW_OBJECT_ARRAY, T(FNW_STRING)),
        T2(FNW_MAP, T(FNW_INT), T(FNW_INT)), T(FNW_BIG_INT),
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        n = hex("7f ff ff ff 00 00 00 01 02 03", b);
        expect_fail(kinds[i], b, n, "at offset 0");
        fnw_error err;
        fnw_value v;
        size_t used;
        ck_assert_int_eq(fnw_ser_decode(kinds[i], b, n, &small, &v, &used, &err), -1);
        ck_assert_uint_eq(small.used_total, 0);   /* nothing was allocated */
        n = hex("ff ff ff ff 00 00 00 00", b);
        expect_fail(kinds[i], b, n, "negative");
        n = hex("80 00 00 00", b);
        expect_fail(kinds[i], b, n, "negative");
        fnw_type_free(kinds[i]);
    }
    fnw_arena_free(&small);
}
END_TEST

START_TEST(huge_count_with_few_bytes_fails_fast)
{
    /* 2^31-1 one-byte elements claimed in a 12-byte input */
    fnw_type *t = T1(FNW_LIST, T1(FNW_LIST, T(FNW_BYTE)));
    uint8_t b[32] = { 0x7f, 0xff, 0xff, 0xff };
    expect_fail(t, b, 12, "elements need at least 4 bytes each");
    fnw_type_free(t);
    /* inner position: the offset is that of the inner count */
    t = TN(FNW_ROW, 2, T(FNW_INT), T1(FNW_BASIC_ARRAY, T(FNW_STRING)));
    size_t n = hex("00 00 00 00 09 7f ff ff f0 01", b);
    expect_fail(t, b, n, "BASIC_ARRAY at offset 5");
    fnw_type_free(t);
    t = T2(FNW_MAP, T(FNW_LONG), T(FNW_LONG));
    n = hex("00 00 00 02 00 00 00 00 00 00 00 01 00", b);   /* 2 entries need >= 18 bytes */
    expect_fail(t, b, n, "elements need at least 9 bytes each");
    fnw_type_free(t);
}
END_TEST

START_TEST(zero_width_elements_are_bounded)
{
    fnw_type *t = T1(FNW_LIST, T(FNW_TUPLE));
    uint8_t b[8];
    size_t n = hex("7f ff ff ff", b);
    expect_fail(t, b, n, "zero-width");
    n = hex("00 00 00 03", b);
    fnw_value e[3] = { fnw_value_items(FNW_TUPLE, NULL, 0), fnw_value_items(FNW_TUPLE, NULL, 0),
                       fnw_value_items(FNW_TUPLE, NULL, 0) };
    fnw_value v = fnw_value_items(FNW_LIST, e, 3);
    check_vector(t, &v, "00 00 00 03");
    /* exactly at the limit is accepted without reading anything */
    b[0] = (uint8_t)(FNW_SER_MAX_EMPTY_ELEMENTS >> 24);
    b[1] = (uint8_t)(FNW_SER_MAX_EMPTY_ELEMENTS >> 16);
    b[2] = (uint8_t)(FNW_SER_MAX_EMPTY_ELEMENTS >> 8);
    b[3] = (uint8_t)FNW_SER_MAX_EMPTY_ELEMENTS;
    size_t used;
    fnw_error err;
    ck_assert_int_eq(skip_once(t, b, 4, &used, &err), 0);
    ck_assert_uint_eq(used, 4);
    b[3]++;
    ck_assert_int_eq(skip_once(t, b, 4, &used, &err), -1);
    fnw_type_free(t);
}
END_TEST

START_TEST(type_depth_is_bounded)
{
    fnw_type *t = T(FNW_INT);
    for (int i = 0; i < FNW_TYPE_MAX_DEPTH + 1; i++)
        t = T1(FNW_LIST, t);   /* 65 LISTs around an INT */
    uint8_t b[4 * 66];
    for (int i = 0; i < 66; i++)
        memcpy(b + 4 * i, "\0\0\0\1", 4);
    expect_fail(t, b, sizeof b, "deeper than 64");
    /* one level less is fine */
    fnw_type *inner = t->children[0];
    size_t used;
    fnw_error err;
    ck_assert_int_eq(skip_once(inner, b, 4 * 65, &used, &err), 0);
    ck_assert_uint_eq(used, 4 * 65);
    fnw_type_free(t);
}
END_TEST

START_TEST(decode_without_arena_fails_for_containers)
{
    fnw_type *t = T1(FNW_LIST, T(FNW_INT));
    uint8_t b[8] = { 0, 0, 0, 1, 0, 0, 0, 9 };
    fnw_value v;
    size_t used;
    fnw_error err;
    ck_assert_int_eq(fnw_ser_decode(t, b, 8, NULL, &v, &used, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "arena"));
    fnw_type *i = T(FNW_INT);
    ck_assert_int_eq(fnw_ser_decode(i, b + 4, 4, NULL, &v, &used, &err), 0);
    ck_assert_int_eq(v.u.i, 9);
    fnw_type_free(t);
    fnw_type_free(i);
}
END_TEST

/* Skip and decode agree on arbitrary bytes (ASan checks the reads). */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

START_TEST(random_input_skip_and_decode_agree)
{
    fnw_type *types[] = {
        TN(FNW_ROW, 3, T(FNW_LONG), T(FNW_LONG),
           TN(FNW_ROW, 4, T(FNW_STRING), T1(FNW_LIST, T(FNW_SHORT)), T2(FNW_MAP, T(FNW_BYTE), T(FNW_BIG_INT)),
              T1(FNW_BASIC_ARRAY, T(FNW_LOCAL_DATE)))),
        T1(FNW_OBJECT_ARRAY, TN(FNW_TUPLE, 2, T(FNW_CHAR), T(FNW_INSTANT))),
        T2(FNW_MAP, T(FNW_BOOLEAN), T1(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE))),
        T1(FNW_LIST, T(FNW_TUPLE)),
    };
    fnw_skip_program *plans[4];
    for (int i = 0; i < 4; i++)
        ck_assert_ptr_nonnull(plans[i] = fnw_skip_program_new(types[i], NULL));
    uint8_t buf[64];
    int accepted = 0;
    for (int iter = 0; iter < 200000; iter++) {
        size_t n = next_rand() % sizeof buf;
        for (size_t i = 0; i < n; i++) {
            uint32_t r = next_rand();
            /* small numbers are more interesting than uniform bytes */
            buf[i] = (r & 3) ? (uint8_t)((r >> 8) % 4) : (uint8_t)(r >> 8);
        }
        fnw_type *t = types[iter % 4];
        size_t used1 = 0, used2 = 0;
        fnw_error e1, e2;
        fnw_value v;
        int a = fnw_ser_skip(plans[iter % 4], buf, n, &used1, &e1);
        int b = fnw_ser_decode(t, buf, n, &arena, &v, &used2, &e2);
        if (a == 0 && b == -1 && strstr(e2.msg, "arena limit"))
            continue;   /* the one documented difference: decode's memory bound */
        ck_assert_msg(a == b, "skip %d (%s) decode %d (%s) on %s", a, a ? e1.msg : "", b, b ? e2.msg : "",
                      tohex(buf, n));
        if (a == 0) {
            accepted++;
            ck_assert_uint_eq(used1, used2);
            ck_assert_uint_le(used1, n);
        } else {
            ck_assert_str_eq(e1.msg, e2.msg);
        }
        fnw_arena_reset(&arena);
    }
    ck_assert_int_gt(accepted, 100);
    for (int i = 0; i < 4; i++) {
        fnw_skip_program_free(plans[i]);
        fnw_type_free(types[i]);
    }
}
END_TEST

START_TEST(value_copy_outlives_input)
{
    fnw_type *t = TN(FNW_ROW, 2, T(FNW_STRING), T1(FNW_LIST, T(FNW_STRING)));
    uint8_t b[64];
    size_t n = hex("00 00 00 00 02 68 69 00 00 00 01 00 00 00 01 7a", b), used;
    fnw_value v, c;
    fnw_error err;
    ck_assert_int_eq(fnw_ser_decode(t, b, n, &arena, &v, &used, &err), 0);
    fnw_arena other;
    fnw_arena_init(&other, 64, 0);
    ck_assert_int_eq(fnw_value_copy(t, &v, &other, &c, &err), 0);
    memset(b, 0xaa, sizeof b);
    fnw_arena_reset(&arena);
    ck_assert_mem_eq(c.u.items[0].u.bytes, "hi", 2);
    ck_assert_mem_eq(c.u.items[1].u.items[0].u.bytes, "z", 1);
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(t, &c, &out, &err), 0);
    ck_assert_uint_eq(out.len, n);
    fnw_arena_free(&other);
    fnw_type_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serializer");
    TCase *tc = tcase_create("formats");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, scalar_vectors);
    tcase_add_test(tc, float_double_vectors);
    tcase_add_test(tc, boolean_any_nonzero_is_true);
    tcase_add_test(tc, scalar_ranges_on_encode);
    tcase_add_test(tc, string_vectors);
    tcase_add_test(tc, big_dec_and_pickled_vectors);
    tcase_add_test(tc, big_int_constants_and_general_form);
    tcase_add_test(tc, instant_vectors);
    tcase_add_test(tc, local_date_time_vectors);
    tcase_add_test(tc, primitive_array_vectors);
    tcase_add_test(tc, basic_and_object_array_vectors);
    tcase_add_test(tc, list_vectors);
    tcase_add_test(tc, map_vectors_keep_wire_order);
    tcase_add_test(tc, tuple_vectors);
    tcase_add_test(tc, row_vectors);
    tcase_add_test(tc, nested_row_with_containers);
    tcase_add_test(tc, encode_error_names_the_field);
    tcase_add_test(tc, value_copy_outlives_input);
    suite_add_tcase(s, tc);
    TCase *th = tcase_create("hostile");
    tcase_add_checked_fixture(th, setup, teardown);
    tcase_add_test(th, huge_and_negative_lengths);
    tcase_add_test(th, huge_count_with_few_bytes_fails_fast);
    tcase_add_test(th, zero_width_elements_are_bounded);
    tcase_add_test(th, type_depth_is_bounded);
    tcase_add_test(th, decode_without_arena_fails_for_containers);
    tcase_add_test(th, random_input_skip_and_decode_agree);
    suite_add_tcase(s, th);
    return fnw_check_run(s);
}
