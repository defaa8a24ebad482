/* tests/unit/codecs/test_varint.c — Beam varint framing and the output buffer:
 * exact bytes for boundary values, truncated and over-long varints, buffer
 * limits (a failed append leaves the buffer as it was). */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/buf.h"
#include "codecs/varint.h"

typedef struct { uint64_t v; int n; uint8_t b[10]; } vcase;

static const vcase cases[] = {
    { 0, 1, { 0x00 } },
    { 1, 1, { 0x01 } },
    { 127, 1, { 0x7f } },
    { 128, 2, { 0x80, 0x01 } },
    { 300, 2, { 0xac, 0x02 } },
    { 16383, 2, { 0xff, 0x7f } },
    { 16384, 3, { 0x80, 0x80, 0x01 } },
    { 28, 1, { 0x1c } },
    { (uint64_t)INT64_MAX, 9, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f } },
    { UINT64_MAX, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },   /* -1 */
};

START_TEST(varint_exact_bytes)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t out[FNW_VARINT_MAX];
        int n = fnw_varint_write(out, cases[i].v);
        ck_assert_int_eq(n, cases[i].n);
        ck_assert_int_eq(fnw_varint_size(cases[i].v), cases[i].n);
        ck_assert_mem_eq(out, cases[i].b, (size_t)n);
        uint64_t got = 12345;
        ck_assert_int_eq(fnw_varint_read(cases[i].b, (size_t)cases[i].n, &got), cases[i].n);
        ck_assert_uint_eq(got, cases[i].v);
        /* trailing bytes are not consumed */
        uint8_t more[12];
        memcpy(more, cases[i].b, (size_t)cases[i].n);
        more[cases[i].n] = 0x55;
        ck_assert_int_eq(fnw_varint_read(more, (size_t)cases[i].n + 1, &got), cases[i].n);
        ck_assert_uint_eq(got, cases[i].v);
    }
}
END_TEST

START_TEST(varint_truncated_and_too_long)
{
    uint64_t got;
    ck_assert_int_eq(fnw_varint_read((const uint8_t *)"", 0, &got), 0);
    const uint8_t part[] = { 0x80, 0x80 };
    ck_assert_int_eq(fnw_varint_read(part, 2, &got), 0);
    const uint8_t nine[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    ck_assert_int_eq(fnw_varint_read(nine, 9, &got), 0);
    const uint8_t eleven[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
    ck_assert_int_eq(fnw_varint_read(eleven, 11, &got), -1);
    ck_assert_int_eq(fnw_varint_read(eleven, 10, &got), -1);
}
END_TEST

START_TEST(buf_big_endian_puts)
{
    fnw_buf b;
    fnw_buf_init(&b, 0);
    ck_assert_int_eq(fnw_buf_put_u8(&b, 0xab), 0);
    ck_assert_int_eq(fnw_buf_put_be16(&b, 0x0102), 0);
    ck_assert_int_eq(fnw_buf_put_be32(&b, 0x03040506), 0);
    ck_assert_int_eq(fnw_buf_put_be64(&b, 0x0708090a0b0c0d0eULL), 0);
    ck_assert_int_eq(fnw_buf_put_varint(&b, 300), 0);
    ck_assert_int_eq(fnw_buf_append(&b, "xy", 2), 0);
    const uint8_t want[] = { 0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xac, 0x02, 'x', 'y' };
    ck_assert_uint_eq(b.len, sizeof want);
    ck_assert_mem_eq(b.p, want, sizeof want);
    fnw_buf_clear(&b);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_ptr_nonnull(b.p);   /* memory kept for reuse */
    fnw_buf_free(&b);
}
END_TEST

START_TEST(buf_grows_and_steals)
{
    fnw_buf b;
    fnw_buf_init(&b, 0);
    for (int i = 0; i < 100000; i++)
        ck_assert_int_eq(fnw_buf_put_be32(&b, (uint32_t)i), 0);
    ck_assert_uint_eq(b.len, 400000);
    ck_assert_uint_eq(b.p[399999], (uint8_t)99999);
    size_t len = 0;
    uint8_t *p = fnw_buf_steal(&b, &len);
    ck_assert_uint_eq(len, 400000);
    ck_assert_ptr_null(b.p);
    ck_assert_uint_eq(b.len, 0);
    free(p);
    ck_assert_int_eq(fnw_buf_put_u8(&b, 1), 0);   /* usable after steal */
    fnw_buf_free(&b);
}
END_TEST

START_TEST(buf_limit_leaves_buffer_unchanged)
{
    fnw_buf b;
    fnw_buf_init(&b, 10);
    ck_assert_int_eq(fnw_buf_append(&b, "12345678", 8), 0);
    ck_assert_int_eq(fnw_buf_put_be32(&b, 7), -1);
    ck_assert_uint_eq(b.len, 8);
    ck_assert_int_eq(fnw_buf_put_be16(&b, 7), 0);
    ck_assert_uint_eq(b.len, 10);
    ck_assert_int_eq(fnw_buf_put_u8(&b, 1), -1);
    ck_assert_int_eq(fnw_buf_reserve(&b, SIZE_MAX), -1);
    ck_assert_mem_eq(b.p, "12345678\0\7", 10);
    fnw_buf_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("varint");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, varint_exact_bytes);
    tcase_add_test(tc, varint_truncated_and_too_long);
    tcase_add_test(tc, buf_big_endian_puts);
    tcase_add_test(tc, buf_grows_and_steals);
    tcase_add_test(tc, buf_limit_leaves_buffer_unchanged);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
