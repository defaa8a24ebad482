/* tests/unit/codecs/test_ser_encode.c — what encode refuses, and how it says so: a
 * value out of its type's range, of another kind, null where the format has
 * no null, or shaped unlike its type fails with a message that names the
 * path to the offending part, and the buffer is left as it was. */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/ser_vectors.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/ser.h"

/* ---- refusals -------------------------------------------------------------------- */

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

START_TEST(encode_needs_a_type_and_a_value)
{
    fnw_type *t = T(FNW_INT);
    fnw_value v = fnw_value_int(FNW_INT, 1);
    fnw_error err = { "" };
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(NULL, &v, &out, &err), -1);
    ck_assert_str_eq(err.msg, "no type to encode");
    ck_assert_int_eq(fnw_ser_encode(t, NULL, &out, &err), -1);
    ck_assert_str_eq(err.msg, "no value to encode");
    ck_assert_uint_eq(out.len, 0);
    fnw_type_free(t);
}
END_TEST

/* Values whose own fields contradict the type are refused before a byte is
 * kept. */
START_TEST(encode_refuses_values_shaped_unlike_the_type)
{
    fnw_type *row = TN(FNW_ROW, 2, T(FNW_INT), T(FNW_INT));
    fnw_value f[2] = { fnw_value_int(FNW_INT, 1), fnw_value_int(FNW_INT, 2) };
    fnw_value v = fnw_value_row(FNW_INSERT, f, 1);
    expect_encode_fail(row, &v, "value has 1 fields, the type has 2");
    v = fnw_value_row(FNW_INSERT, NULL, 2);
    expect_encode_fail(row, &v, "value has 2 fields but no items");
    fnw_type_free(row);

    fnw_type *s = T(FNW_STRING);
    v = fnw_value_bytes(FNW_STRING, NULL, 3);
    expect_encode_fail(s, &v, "3 bytes but no data pointer");
    fnw_type_free(s);

    fnw_type *list = T1(FNW_LIST, T(FNW_INT));
    v = fnw_value_items(FNW_LIST, NULL, 2);
    expect_encode_fail(list, &v, "2 elements but no items");
    fnw_type_free(list);

    fnw_type *pa = T1(FNW_PRIMITIVE_ARRAY, T(FNW_STRING));
    v = fnw_value_items(FNW_PRIMITIVE_ARRAY, NULL, 0);
    expect_encode_fail(pa, &v, "elements of kind STRING are not primitive");
    fnw_type_free(pa);

    fnw_type *bad = T(FNW_LIST);   /* no element type */
    v = fnw_value_items(FNW_LIST, NULL, 0);
    expect_encode_fail(bad, &v, "malformed type");
    fnw_type_free(bad);
}
END_TEST

/* Every container on the way to a failing value adds itself to the message. */
START_TEST(encode_error_path_through_containers)
{
    fnw_type *m = T2(FNW_MAP, T(FNW_STRING), T1(FNW_BASIC_ARRAY, T(FNW_SHORT)));
    fnw_value shorts[2] = { fnw_value_int(FNW_SHORT, 1), fnw_value_int(FNW_SHORT, 70000) };
    fnw_value kv[2] = { fnw_value_str("k"), fnw_value_items(FNW_BASIC_ARRAY, shorts, 2) };
    fnw_value v = fnw_value_items(FNW_MAP, kv, 1);
    expect_encode_fail(m, &v, "MAP value 0: BASIC_ARRAY element 1: encoding SHORT: value 70000 out of range");
    shorts[1] = fnw_value_null(FNW_SHORT);   /* a null element has its flag */
    fnw_buf_clear(&out);
    fnw_error err;
    ck_assert_int_eq(fnw_ser_encode(m, &v, &out, &err), 0);
    ck_assert_uint_eq(out.len, 4 + 5 + 1 + 4 + 3 + 1);
    kv[1] = fnw_value_null(FNW_BASIC_ARRAY);   /* a null MAP value has its flag too */
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(m, &v, &out, &err), 0);
    ck_assert_uint_eq(out.len, 4 + 5 + 1);
    ck_assert_int_eq(out.p[9], 1);
    fnw_type_free(m);

    fnw_type *t = TN(FNW_TUPLE, 2, T(FNW_INT), TN(FNW_TUPLE, 1, T(FNW_BYTE)));
    fnw_value in[1] = { fnw_value_int(FNW_BYTE, 300) };
    fnw_value tf[2] = { fnw_value_int(FNW_INT, 1), fnw_value_items(FNW_TUPLE, in, 1) };
    v = fnw_value_items(FNW_TUPLE, tf, 2);
    expect_encode_fail(t, &v, "TUPLE field 1: TUPLE field 0: encoding BYTE: value 300 out of range");
    fnw_type_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ser_encode");
    TCase *tc0 = tcase_create("refusals");
    tcase_add_checked_fixture(tc0, setup, teardown);
    tcase_add_test(tc0, scalar_ranges_on_encode);
    tcase_add_test(tc0, encode_error_names_the_field);
    tcase_add_test(tc0, encode_needs_a_type_and_a_value);
    tcase_add_test(tc0, encode_refuses_values_shaped_unlike_the_type);
    tcase_add_test(tc0, encode_error_path_through_containers);
    suite_add_tcase(s, tc0);
    return fnw_check_run(s);
}
