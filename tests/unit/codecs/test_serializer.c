/* tests/unit/codecs/test_serializer.c — the byte formats of the scalar kinds, one
 * at a time, held against the whole serializer at once: encode gives
 * exactly the bytes Flink's JVM writes, decode of those bytes gives the
 * value back, skip measures them, and every strict prefix fails cleanly.
 * Also the java.time ranges the shared readers (ser.c) apply
 * to LOCAL_DATE/TIME on both decode and encode. Containers are in
 * test_ser_decode.c, hostile input in test_ser_skip.c. */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/ser_vectors.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/ser.h"

/* ---- scalars --------------------------------------------------------------------- */

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

/* ---- strings and blobs ----------------------------------------------------------- */

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

/* ---- BIG_INT --------------------------------------------------------------------- */

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

/* ---- time types ------------------------------------------------------------------ */

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

/* The Gregorian leap rule and java.time's field ranges hold on both sides. */
START_TEST(java_time_ranges)
{
    fnw_type *d = T(FNW_LOCAL_DATE), *tm = T(FNW_LOCAL_TIME);
    fnw_value v = fnw_value_local_date(2000, 2, 29);   /* divisible by 400: leap */
    check_vector(d, &v, "00 00 07 d0 02 1d");
    v = fnw_value_local_date(1900, 2, 29);             /* divisible by 100 only: not leap */
    expect_encode_fail(d, &v, "invalid date");
    uint8_t b[16];
    size_t n = hex("00 00 07 6c 02 1d", b);            /* 1900-02-29 */
    expect_fail(d, b, n, "invalid date 1900-2-29");
    n = hex("00 00 07 e8 04 1f", b);                   /* April 31 */
    expect_fail(d, b, n, "invalid date");
    n = hex("3b 9a ca 00 01 01", b);                   /* year 1e9: beyond java.time's range */
    expect_fail(d, b, n, "invalid date");
    v = fnw_value_local_time(23, 59, 59, 999999999);
    check_vector(tm, &v, "17 3b 3b 3b 9a c9 ff");
    n = hex("00 00 00 3b 9a ca 00", b);                /* 1e9 nanoseconds */
    expect_fail(tm, b, n, "invalid time");
    n = hex("00 00 3c 00 00 00 00", b);                /* second 60 */
    expect_fail(tm, b, n, "invalid time");
    v = fnw_value_local_time(0, 0, 0, -1);
    expect_encode_fail(tm, &v, "invalid time");
    fnw_type_free(d);
    fnw_type_free(tm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serializer");
    TCase *tc0 = tcase_create("formats");
    tcase_add_checked_fixture(tc0, setup, teardown);
    tcase_add_test(tc0, scalar_vectors);
    tcase_add_test(tc0, float_double_vectors);
    tcase_add_test(tc0, string_vectors);
    tcase_add_test(tc0, big_dec_and_pickled_vectors);
    tcase_add_test(tc0, big_int_constants_and_general_form);
    tcase_add_test(tc0, instant_vectors);
    tcase_add_test(tc0, local_date_time_vectors);
    tcase_add_test(tc0, java_time_ranges);
    suite_add_tcase(s, tc0);
    return fnw_check_run(s);
}
