/* tests/unit/codecs/test_ser_decode.c — decode of ROW, TUPLE and the containers (and
 * the same vectors through encode and skip): null masks and row kinds,
 * presence flags, wire order of MAP entries, item arrays from the arena
 * and what happens without one or when it is full, and values that are
 * copied out so they outlive their input. */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/ser_vectors.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/ser.h"

/* ---- containers ------------------------------------------------------------------ */

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

/* ---- what decode alone decides --------------------------------------------------- */

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

/* A count the input can hold but the arena cannot: refused with the count,
 * the type and the offset, nothing half-built. */
START_TEST(decode_arena_limit_fails_with_the_count)
{
    fnw_type *t = TN(FNW_ROW, 1, T1(FNW_LIST, T(FNW_INT)));
    uint8_t b[1 + 4 + 4 * 100] = { 0 };
    b[4] = 100;   /* 100 INTs, all there */
    fnw_arena small;
    fnw_arena_init(&small, 64, 512);
    fnw_value v;
    size_t used = 7;
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_ser_decode(t, b, sizeof b, &small, &v, &used, &err), -1);
    ck_assert_msg(strstr(err.msg, "LIST at offset 1") && strstr(err.msg, "arena limit reached allocating 100"),
                  "message: %s", err.msg);
    ck_assert_uint_eq(used, 7);   /* untouched on failure */
    fnw_arena_free(&small);
    /* the fixture's 1 MiB arena holds it */
    ck_assert_int_eq(fnw_ser_decode(t, b, sizeof b, &arena, &v, &used, &err), 0);
    ck_assert_uint_eq(used, sizeof b);
    ck_assert_uint_eq(v.u.items[0].count, 100);
    fnw_type_free(t);
}
END_TEST

/* Zero-width elements cost no input: 164 bytes of LIST<LIST<TUPLE<>>> (40
 * lists of 2^20 empty tuples) pass skip at once, and decode must refuse
 * them at once, within its budget, rather than build a gigabyte of values;
 * the arena's own limit is back as it was afterwards. */
START_TEST(decode_budget_bounds_zero_width_amplification)
{
    fnw_type *t = T1(FNW_LIST, T1(FNW_LIST, TN(FNW_TUPLE, 0)));
    uint8_t b[4 + 40 * 4] = { 0, 0, 0, 40 };
    for (int i = 0; i < 40; i++)
        b[4 + 4 * i + 1] = 0x10;   /* 00 10 00 00 = 1,048,576 */
    fnw_error perr;
    fnw_skip_program *sp = fnw_skip_program_new(t, &perr);
    ck_assert_ptr_nonnull(sp);
    size_t used = 0;
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_skip_program_run(sp, b, sizeof b, &used, &err), 0);
    ck_assert_uint_eq(used, sizeof b);
    fnw_arena big;
    fnw_arena_init(&big, 4096, 0);
    size_t limit = big.limit;
    fnw_value v;
    ck_assert_int_eq(fnw_ser_decode(t, b, sizeof b, &big, &v, &used, &err), -1);
    ck_assert_msg(strstr(err.msg, "arena limit reached allocating 1048576 values") &&
                  strstr(err.msg, "64 KiB plus 256 per input byte"), "message: %s", err.msg);
    ck_assert_uint_le(big.used_total, fnw_ser_decode_budget(sizeof b));
    ck_assert_uint_eq(big.limit, limit);
    /* a value within the budget still decodes: 1,000 empty tuples */
    uint8_t ok[4 + 4] = { 0, 0, 0, 1, 0, 0, 0x03, 0xe8 };
    ck_assert_int_eq(fnw_ser_decode(t, ok, sizeof ok, &big, &v, &used, &err), 0);
    ck_assert_uint_eq(v.u.items[0].count, 1000);
    fnw_arena_free(&big);
    fnw_skip_program_free(sp);
    fnw_type_free(t);
}
END_TEST

START_TEST(decode_needs_a_type)
{
    fnw_value v;
    size_t used;
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_ser_decode(NULL, (const uint8_t *)"x", 1, &arena, &v, &used, &err), -1);
    ck_assert_str_eq(err.msg, "no type to decode a value of");
    /* no input is an empty one: a zero-byte value decodes, anything else is short */
    fnw_type *e = T(FNW_TUPLE), *i = T(FNW_INT);
    ck_assert_int_eq(fnw_ser_decode(e, NULL, 0, &arena, &v, &used, &err), 0);
    ck_assert_uint_eq(used, 0);
    ck_assert_int_eq(fnw_ser_decode(i, NULL, 0, &arena, &v, NULL, &err), -1);
    ck_assert_str_eq(err.msg, "INT at offset 0: needs 4 bytes, 0 left (input truncated)");
    fnw_type_free(e);
    fnw_type_free(i);
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
    Suite *s = suite_create("ser_decode");
    TCase *tc0 = tcase_create("containers");
    tcase_add_checked_fixture(tc0, setup, teardown);
    tcase_add_test(tc0, primitive_array_vectors);
    tcase_add_test(tc0, basic_and_object_array_vectors);
    tcase_add_test(tc0, list_vectors);
    tcase_add_test(tc0, map_vectors_keep_wire_order);
    tcase_add_test(tc0, tuple_vectors);
    tcase_add_test(tc0, row_vectors);
    tcase_add_test(tc0, nested_row_with_containers);
    suite_add_tcase(s, tc0);
    TCase *tc1 = tcase_create("decode");
    tcase_add_checked_fixture(tc1, setup, teardown);
    tcase_add_test(tc1, boolean_any_nonzero_is_true);
    tcase_add_test(tc1, decode_without_arena_fails_for_containers);
    tcase_add_test(tc1, decode_arena_limit_fails_with_the_count);
    tcase_add_test(tc1, decode_budget_bounds_zero_width_amplification);
    tcase_add_test(tc1, decode_needs_a_type);
    tcase_add_test(tc1, value_copy_outlives_input);
    suite_add_tcase(s, tc1);
    return fnw_check_run(s);
}
