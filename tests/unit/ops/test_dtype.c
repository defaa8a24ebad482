/* tests/unit/ops/test_dtype.c — one element of each Open Inference
 * Protocol datatype: names and sizes, little-endian writing with range
 * checks, reading back with sign extension, conversion into each Flink kind
 * with range checks, and which kinds carry which datatypes. */
#include <check.h>
#include <string.h>

#include "ops/kserve/tensor/dtype.h"
#include "tests/unit/check_run.h"

START_TEST(test_names_and_sizes)
{
    static const char *names[] = { "BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32",
                                   "UINT64", "FP16", "BF16", "FP32", "FP64", "BYTES" };
    static const size_t sizes[] = { 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 0 };
    for (int d = 0; d < FNW_DT_COUNT; d++) {
        ck_assert_str_eq(fnw_dtype_name((fnw_dtype)d), names[d]);
        ck_assert_int_eq(fnw_dtype_parse(names[d], strlen(names[d])), d);
        ck_assert_uint_eq(fnw_dtype_size((fnw_dtype)d), sizes[d]);
    }
    ck_assert_int_eq(fnw_dtype_parse("fp32", 4), -1);
    ck_assert_int_eq(fnw_dtype_parse("FP3", 3), -1);
    ck_assert_int_eq(fnw_dtype_parse("FP32X", 4), FNW_DT_FP32);   /* len bytes only */
    ck_assert_int_eq(fnw_dtype_default_for(FNW_SHORT), FNW_DT_INT16);
    ck_assert_int_eq(fnw_dtype_default_for(FNW_SQL_DATE), -1);
    ck_assert(fnw_dtype_fits_kind(FNW_DT_FP32, FNW_INT, 1));
    ck_assert(!fnw_dtype_fits_kind(FNW_DT_FP32, FNW_INT, 0));
    ck_assert(!fnw_dtype_fits_kind(FNW_DT_FP16, FNW_FLOAT, 1));
    ck_assert(!fnw_dtype_fits_kind(FNW_DT_BOOL, FNW_INT, 1));
}
END_TEST

START_TEST(test_write_read)
{
    uint8_t b[8];
    fnw_error err;
    fnw_value v = fnw_value_int(FNW_INT, -2);
    ck_assert_int_eq(fnw_dtype_write(FNW_DT_INT16, &v, b, &err), 0);
    ck_assert(b[0] == 0xfe && b[1] == 0xff);
    fnw_elem e = fnw_dtype_read(FNW_DT_INT16, b);
    ck_assert(e.tag == FNW_ELEM_INT && e.v.i == -2);
    e = fnw_dtype_read(FNW_DT_UINT16, b);
    ck_assert(e.tag == FNW_ELEM_UINT && e.v.u == 65534);
    v = fnw_value_int(FNW_LONG, 65536);
    ck_assert_int_eq(fnw_dtype_write(FNW_DT_UINT16, &v, b, &err), -1);
    ck_assert_str_eq(err.msg, "the value 65536 is out of UINT16's range");
    v = fnw_value_int(FNW_LONG, -1);
    ck_assert_int_eq(fnw_dtype_write(FNW_DT_UINT64, &v, b, &err), -1);
    v = fnw_value_int(FNW_LONG, INT64_MIN);
    ck_assert_int_eq(fnw_dtype_write(FNW_DT_INT64, &v, b, &err), 0);
    ck_assert_int_eq(fnw_dtype_read(FNW_DT_INT64, b).v.i, INT64_MIN);
    v = fnw_value_double(0.1);   /* FP32 rounds like a Java cast */
    ck_assert_int_eq(fnw_dtype_write(FNW_DT_FP32, &v, b, &err), 0);
    e = fnw_dtype_read(FNW_DT_FP32, b);
    ck_assert(e.tag == FNW_ELEM_FLOAT && e.v.d == (double)0.1f);
    v = fnw_value_int(FNW_BOOLEAN, 1);
    ck_assert_int_eq(fnw_dtype_write(FNW_DT_BOOL, &v, b, &err), 0);
    ck_assert_int_eq(b[0], 1);
}
END_TEST

START_TEST(test_to_value)
{
    fnw_error err;
    fnw_value out;
    fnw_elem e = { .tag = FNW_ELEM_UINT, .v.u = 255 };
    ck_assert_int_eq(fnw_dtype_to_value(FNW_DT_UINT8, &e, FNW_SHORT, &out, &err), 0);
    ck_assert(out.kind == FNW_SHORT && out.u.i == 255);
    ck_assert_int_eq(fnw_dtype_to_value(FNW_DT_UINT8, &e, FNW_BYTE, &out, &err), -1);
    ck_assert_str_eq(err.msg, "the UINT8 value 255 does not fit BYTE");
    e = (fnw_elem){ .tag = FNW_ELEM_INT, .v.i = INT32_MIN - INT64_C(1) };
    ck_assert_int_eq(fnw_dtype_to_value(FNW_DT_INT64, &e, FNW_INT, &out, &err), -1);
    e = (fnw_elem){ .tag = FNW_ELEM_FLOAT, .v.d = 1.5 };
    ck_assert_int_eq(fnw_dtype_to_value(FNW_DT_FP64, &e, FNW_FLOAT, &out, &err), 0);
    ck_assert(out.kind == FNW_FLOAT && out.u.f == 1.5f);
    ck_assert_int_eq(fnw_dtype_to_value(FNW_DT_FP64, &e, FNW_LONG, &out, &err), -1);
    ck_assert_str_eq(err.msg, "a FP64 element does not fit LONG");
    e = (fnw_elem){ .tag = FNW_ELEM_BYTES, .v.b = { (const uint8_t *)"hi", 2 } };
    ck_assert_int_eq(fnw_dtype_to_value(FNW_DT_BYTES, &e, FNW_STRING, &out, &err), 0);
    ck_assert(out.kind == FNW_STRING && out.count == 2);
    ck_assert_int_eq(fnw_dtype_to_value(FNW_DT_BYTES, &e, FNW_INT, &out, &err), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("dtype");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_names_and_sizes);
    tcase_add_test(tc, test_write_read);
    tcase_add_test(tc, test_to_value);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
