/* tests/unit/codecs/test_ser_skip.c — skip (and decode, which accepts exactly the
 * same) against hostile input: negative and huge lengths and counts fail
 * before anything is allocated, zero-width elements and type depth are
 * bounded, skip and decode agree on random input, and the generic walk on
 * its own measures a value, refuses a malformed type and never reads past
 * what it was given. */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/ser_vectors.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/ser.h"

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
    fnw_skip_program *programs[4];
    for (int i = 0; i < 4; i++)
        ck_assert_ptr_nonnull(programs[i] = fnw_skip_program_new(types[i], NULL));
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
        int a = fnw_skip_program_run(programs[iter % 4], buf, n, &used1, &e1);
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
        fnw_skip_program_free(programs[i]);
        fnw_type_free(types[i]);
    }
}
END_TEST

/* ---- the generic walk ------------------------------------------------------------ */

START_TEST(skip_generic_measures_one_value)
{
    fnw_type *t = TN(FNW_ROW, 3, T(FNW_STRING), T1(FNW_LIST, T(FNW_INT)), T(FNW_BIG_INT));
    uint8_t b[64];
    size_t n = hex("00 | 00 00 00 02 68 69 | 00 00 00 01 00 00 00 07 | 00 00 00 02 | ee ee", b), used = 0;
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_ser_skip_generic(t, b, n, &used, &err), 0);
    ck_assert_uint_eq(used, n - 2);   /* the value, not the bytes after it */
    /* a null field's bytes are absent */
    n = hex("20 | 00 00 00 00 | 00 00 00 00", b);
    ck_assert_int_eq(fnw_ser_skip_generic(t, b, n, &used, &err), 0);
    ck_assert_uint_eq(used, n);
    fnw_type_free(t);
    /* no input is an empty one */
    fnw_type *e = T(FNW_TUPLE);
    ck_assert_int_eq(fnw_ser_skip_generic(e, NULL, 0, &used, &err), 0);
    ck_assert_uint_eq(used, 0);
    fnw_type_free(e);
}
END_TEST

START_TEST(skip_generic_refuses_what_it_cannot_walk)
{
    size_t used = 5;
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_ser_skip_generic(NULL, (const uint8_t *)"x", 1, &used, &err), -1);
    ck_assert_str_eq(err.msg, "no type to skip a value of");
    fnw_type *bad = T(FNW_MAP);   /* no key or value type */
    uint8_t b[8] = { 0 };
    ck_assert_int_eq(fnw_ser_skip_generic(bad, b, sizeof b, &used, &err), -1);
    ck_assert_str_eq(err.msg, "MAP at offset 0: malformed type (missing element types or Avro schema)");
    fnw_type_free(bad);
    /* the bytes it is given are all it reads: a truncated field fails at its offset */
    fnw_type *t = TN(FNW_TUPLE, 2, T(FNW_LONG), T(FNW_STRING));
    ck_assert_int_eq(fnw_ser_skip_generic(t, b, 8, &used, &err), -1);
    ck_assert_str_eq(err.msg, "STRING at offset 8: needs a 4-byte length, 0 bytes left (input truncated)");
    ck_assert_int_eq(fnw_ser_skip_generic(t, NULL, 0, &used, &err), -1);
    ck_assert_str_eq(err.msg, "LONG at offset 0: needs 8 bytes, 0 left (input truncated)");
    ck_assert_uint_eq(used, 5);   /* untouched on failure */
    fnw_type_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ser_skip");
    TCase *tc0 = tcase_create("hostile");
    tcase_add_checked_fixture(tc0, setup, teardown);
    tcase_add_test(tc0, huge_and_negative_lengths);
    tcase_add_test(tc0, huge_count_with_few_bytes_fails_fast);
    tcase_add_test(tc0, zero_width_elements_are_bounded);
    tcase_add_test(tc0, type_depth_is_bounded);
    tcase_add_test(tc0, random_input_skip_and_decode_agree);
    suite_add_tcase(s, tc0);
    TCase *tc1 = tcase_create("generic");
    tcase_add_checked_fixture(tc1, setup, teardown);
    tcase_add_test(tc1, skip_generic_measures_one_value);
    tcase_add_test(tc1, skip_generic_refuses_what_it_cannot_walk);
    suite_add_tcase(s, tc1);
    return fnw_check_run(s);
}
