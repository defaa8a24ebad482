/* tests/unit/codecs/test_row.c — the runner rows around every element: an input row
 * Row(LONG, LONG, Row(STRING, INT)) for Row(1000, MIN, Row("ab", 5)), with
 * the inner and the outer null variants, and an output row Row(LONG, INT)
 * for a result 7, byte for byte as Flink frames them, plus truncated and
 * over-long records and the coder type checks. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdint.h>
#include <string.h>

#include "codecs/row.h"
#include "codecs/ser.h"
#include "codecs/varint.h"

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
    return n;
}

static fnw_type *add(fnw_type *t, fnw_type *c, const char *name)
{
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(t, c, name, &err), 0);
    return t;
}

/* ROW<name STRING, n INT> */
static fnw_type *data_type(void)
{
    fnw_type *t = fnw_type_new(FNW_ROW);
    add(t, fnw_type_new(FNW_STRING), "name");
    add(t, fnw_type_new(FNW_INT), "n");
    return t;
}

/* ROW<LONG, LONG, d> */
static fnw_type *input_type(fnw_type *d)
{
    fnw_type *t = fnw_type_new(FNW_ROW);
    add(t, fnw_type_new(FNW_LONG), "ts");
    add(t, fnw_type_new(FNW_LONG), "wm");
    return add(t, d, "data");
}

/* That input row as it appears on the wire (varint length first) */
static const char *EX46 = "1C | 00 | 00 00 00 00 00 00 03 E8 | 80 00 00 00 00 00 00 00 | 00 | "
                          "00 00 00 02 61 62 | 00 00 00 05";
static const char *EX46_INNER_NULL = "16 | 00 | 00 00 00 00 00 00 03 E8 | 80 00 00 00 00 00 00 00 | 20 | "
                                     "00 00 00 05";
static const char *EX46_OUTER_NULL = "11 | 08 | 00 00 00 00 00 00 03 E8 | 80 00 00 00 00 00 00 00";

/* fnw_row_split_input with d's skip program compiled for the one call. */
static int split_input(const fnw_type *d, const uint8_t *p, size_t n, fnw_input_row *row, fnw_error *err)
{
    fnw_skip_program *sp = fnw_skip_program_new(d, err);
    ck_assert_ptr_nonnull(sp);
    int rc = fnw_row_split_input(sp, p, n, row, err);
    fnw_skip_program_free(sp);
    return rc;
}

/* Reads the varint prefix and splits the payload. */
static void split_wire(const fnw_type *d, const char *hx, uint8_t *b, size_t *plen, fnw_input_row *row)
{
    size_t n = hex(hx, b);
    uint64_t len;
    int k = fnw_varint_read(b, n, &len);
    ck_assert_int_eq(k, 1);
    ck_assert_uint_eq(len, n - 1);
    fnw_error err = { "" };
    ck_assert_msg(split_input(d, b + 1, (size_t)len, row, &err) == 0, "split: %s", err.msg);
    *plen = (size_t)len;
}

START_TEST(example_4_6_split)
{
    fnw_type *d = data_type();
    uint8_t b[64];
    size_t n;
    fnw_input_row row;
    split_wire(d, EX46, b, &n, &row);
    ck_assert_uint_eq(n, 28);
    ck_assert_int_eq(row.timestamp, 1000);
    ck_assert_int_eq(row.watermark, INT64_MIN);
    ck_assert_ptr_eq(row.data, b + 1 + 17);
    ck_assert_uint_eq(row.len, 11);
    /* the data bytes decode to Row("ab", 5) */
    fnw_arena a;
    fnw_arena_init(&a, 256, 0);
    fnw_value v;
    size_t used;
    fnw_error err;
    ck_assert_int_eq(fnw_ser_decode(d, row.data, row.len, &a, &v, &used, &err), 0);
    ck_assert_uint_eq(used, 11);
    ck_assert_uint_eq(v.count, 2);
    ck_assert_int_eq(v.row_kind, FNW_INSERT);
    ck_assert_uint_eq(v.u.items[0].count, 2);
    ck_assert_mem_eq(v.u.items[0].u.bytes, "ab", 2);
    ck_assert_int_eq(v.u.items[1].u.i, 5);
    fnw_arena_free(&a);
    fnw_type_free(d);
}
END_TEST

START_TEST(example_4_6_inner_and_outer_null)
{
    fnw_type *d = data_type();
    uint8_t b[64];
    size_t n;
    fnw_input_row row;
    split_wire(d, EX46_INNER_NULL, b, &n, &row);
    ck_assert_uint_eq(n, 22);
    ck_assert_int_eq(row.timestamp, 1000);
    ck_assert_uint_eq(row.len, 5);
    ck_assert_int_eq(row.data[0], 0x20);
    split_wire(d, EX46_OUTER_NULL, b, &n, &row);
    ck_assert_uint_eq(n, 17);
    ck_assert_ptr_null(row.data);
    ck_assert_uint_eq(row.len, 0);
    ck_assert_int_eq(row.watermark, INT64_MIN);
    fnw_type_free(d);
}
END_TEST

START_TEST(example_4_6_encodes_from_values)
{
    /* the whole input row encoded by the generic serializer gives the same bytes */
    fnw_type *raw = input_type(data_type());
    fnw_value inner[2] = { fnw_value_str("ab"), fnw_value_int(FNW_INT, 5) };
    fnw_value outer[3] = { fnw_value_int(FNW_LONG, 1000), fnw_value_int(FNW_LONG, INT64_MIN),
                           fnw_value_row(FNW_INSERT, inner, 2) };
    fnw_value v = fnw_value_row(FNW_INSERT, outer, 3);
    fnw_buf out;
    fnw_buf_init(&out, 0);
    fnw_error err;
    uint8_t b[64];
    size_t n = hex(EX46, b);
    ck_assert_int_eq(fnw_buf_put_varint(&out, 28), 0);
    ck_assert_int_eq(fnw_ser_encode(raw, &v, &out, &err), 0);
    ck_assert_uint_eq(out.len, n);
    ck_assert_mem_eq(out.p, b, n);

    inner[0] = fnw_value_null(FNW_STRING);
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(raw, &v, &out, &err), 0);
    n = hex(EX46_INNER_NULL, b);
    ck_assert_uint_eq(out.len, n - 1);
    ck_assert_mem_eq(out.p, b + 1, n - 1);

    outer[2] = fnw_value_null(FNW_ROW);
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(raw, &v, &out, &err), 0);
    n = hex(EX46_OUTER_NULL, b);
    ck_assert_uint_eq(out.len, n - 1);
    ck_assert_mem_eq(out.p, b + 1, n - 1);
    fnw_buf_free(&out);
    fnw_type_free(raw);
}
END_TEST

START_TEST(input_null_timestamp_and_watermark_bits)
{
    fnw_type *d = fnw_type_new(FNW_INT);
    uint8_t b[32];
    fnw_input_row row;
    fnw_error err;
    /* ts null (0x20): no ts bytes */
    size_t n = hex("20 | 00 00 00 00 00 00 00 07 | 00 00 00 09", b);
    ck_assert_int_eq(split_input(d, b, n, &row, &err), 0);
    ck_assert_int_eq(row.timestamp, INT64_MIN);
    ck_assert_int_eq(row.watermark, 7);
    ck_assert_uint_eq(row.len, 4);
    /* wm null (0x10) */
    n = hex("10 | 00 00 00 00 00 00 00 06 | 00 00 00 09", b);
    ck_assert_int_eq(split_input(d, b, n, &row, &err), 0);
    ck_assert_int_eq(row.timestamp, 6);
    ck_assert_int_eq(row.watermark, INT64_MIN);
    /* all three null */
    n = hex("38", b);
    ck_assert_int_eq(split_input(d, b, n, &row, &err), 0);
    ck_assert_int_eq(row.timestamp, INT64_MIN);
    ck_assert_int_eq(row.watermark, INT64_MIN);
    ck_assert_ptr_null(row.data);
    fnw_type_free(d);
}
END_TEST

START_TEST(input_truncated_and_left_over)
{
    fnw_type *d = data_type();
    uint8_t b[64];
    size_t n = hex(EX46, b) - 1;
    const uint8_t *p = b + 1;
    fnw_input_row row;
    for (size_t k = 0; k < n; k++) {
        fnw_error err = { "" };
        ck_assert_msg(split_input(d, p, k, &row, &err) == -1, "prefix %zu accepted", k);
        ck_assert(err.msg[0] != '\0');
    }
    b[1 + n] = 0x00;
    fnw_error err;
    ck_assert_int_eq(split_input(d, p, n + 1, &row, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "1 bytes left over"));
    /* an error inside the data names the record offset and the inner offset */
    b[1 + 18] = 0x7f;   /* STRING length 0x7f000002 */
    ck_assert_int_eq(split_input(d, p, n, &row, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "input row data (record byte 17 on): STRING at offset 1"));
    fnw_type_free(d);
}
END_TEST

START_TEST(example_4_7_output)
{
    /* Row(1000, 7) as Row(LONG, INT): 0D | 00 | 00 00 00 00 00 00 03 E8 | 00 00 00 07 */
    fnw_type *it = fnw_type_new(FNW_INT);
    fnw_value seven = fnw_value_int(FNW_INT, 7);
    fnw_buf data, out;
    fnw_buf_init(&data, 0);
    fnw_buf_init(&out, 0);
    fnw_error err;
    ck_assert_int_eq(fnw_ser_encode(it, &seven, &data, &err), 0);
    ck_assert_uint_eq(fnw_row_output_size(data.len, 0), 13);
    ck_assert_int_eq(fnw_buf_put_varint(&out, fnw_row_output_size(data.len, 0)), 0);
    ck_assert_int_eq(fnw_row_put_output(&out, 1000, data.p, data.len), 0);
    uint8_t b[32];
    size_t n = hex("0D | 00 | 00 00 00 00 00 00 03 E8 | 00 00 00 07", b);
    ck_assert_uint_eq(out.len, n);
    ck_assert_mem_eq(out.p, b, n);

    /* same bytes as the generic serializer on ROW<LONG, INT> */
    fnw_type *raw = fnw_type_new(FNW_ROW);
    add(raw, fnw_type_new(FNW_LONG), "ts");
    add(raw, fnw_type_new(FNW_INT), "data");
    fnw_value f[2] = { fnw_value_int(FNW_LONG, 1000), seven };
    fnw_value row = fnw_value_row(FNW_INSERT, f, 2);
    fnw_buf_clear(&data);
    ck_assert_int_eq(fnw_ser_encode(raw, &row, &data, &err), 0);
    ck_assert_uint_eq(data.len, 13);
    ck_assert_mem_eq(data.p, b + 1, 13);

    /* null data: mask 0x10 (field 1), no data bytes; Long.MIN_VALUE ts written as a value */
    fnw_buf_clear(&out);
    ck_assert_uint_eq(fnw_row_output_size(0, 1), 9);
    ck_assert_int_eq(fnw_row_put_output(&out, INT64_MIN, NULL, 0), 0);
    n = hex("10 80 00 00 00 00 00 00 00", b);
    ck_assert_uint_eq(out.len, n);
    ck_assert_mem_eq(out.p, b, n);
    f[0] = fnw_value_int(FNW_LONG, INT64_MIN);
    f[1] = fnw_value_null(FNW_INT);
    fnw_buf_clear(&data);
    ck_assert_int_eq(fnw_ser_encode(raw, &row, &data, &err), 0);
    ck_assert_mem_eq(data.p, b, n);

    /* appends: two records back to back */
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_row_put_output(&out, 1, (const uint8_t *)"\0\0\0\1", 4), 0);
    ck_assert_int_eq(fnw_row_put_output(&out, 2, (const uint8_t *)"\0\0\0\2", 4), 0);
    ck_assert_uint_eq(out.len, 26);
    ck_assert_int_eq(out.p[13 + 8], 2);
    fnw_buf_free(&data);
    fnw_buf_free(&out);
    fnw_type_free(raw);
    fnw_type_free(it);
}
END_TEST

START_TEST(output_respects_buffer_limit)
{
    fnw_buf out;
    fnw_buf_init(&out, 16);
    ck_assert_int_eq(fnw_row_put_output(&out, 1, (const uint8_t *)"1234", 4), 0);
    ck_assert_int_eq(fnw_row_put_output(&out, 1, (const uint8_t *)"1234", 4), -1);
    ck_assert_uint_eq(out.len, 13);
    fnw_buf_free(&out);
}
END_TEST

START_TEST(unwrap_types)
{
    fnw_type *raw = input_type(data_type());
    const fnw_type *d = NULL;
    fnw_error err;
    ck_assert_int_eq(fnw_row_unwrap_input_type(raw, &d, &err), 0);
    ck_assert_ptr_eq(d, raw->children[2]);
    ck_assert_int_eq(fnw_row_unwrap_output_type(raw, &d, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "ROW<LONG, T>"));
    ck_assert_ptr_nonnull(strstr(err.msg, "ROW<ts LONG, wm LONG, data ROW<name STRING, n INT>>"));
    fnw_type_free(raw);

    fnw_type *o = fnw_type_new(FNW_ROW);
    add(o, fnw_type_new(FNW_LONG), "");
    add(o, fnw_type_new(FNW_PICKLED_BYTES), "");
    ck_assert_int_eq(fnw_row_unwrap_output_type(o, &d, &err), 0);
    ck_assert_int_eq(d->kind, FNW_PICKLED_BYTES);
    ck_assert_int_eq(fnw_row_unwrap_input_type(o, &d, &err), -1);
    fnw_type_free(o);

    fnw_type *bad = fnw_type_new(FNW_ROW);
    add(bad, fnw_type_new(FNW_INT), "");
    add(bad, fnw_type_new(FNW_LONG), "");
    add(bad, fnw_type_new(FNW_INT), "");
    ck_assert_int_eq(fnw_row_unwrap_input_type(bad, &d, &err), -1);
    ck_assert_int_eq(fnw_row_unwrap_input_type(NULL, &d, &err), -1);
    fnw_type_free(bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("row");
    TCase *tc = tcase_create("runner rows");
    tcase_add_test(tc, example_4_6_split);
    tcase_add_test(tc, example_4_6_inner_and_outer_null);
    tcase_add_test(tc, example_4_6_encodes_from_values);
    tcase_add_test(tc, input_null_timestamp_and_watermark_bits);
    tcase_add_test(tc, input_truncated_and_left_over);
    tcase_add_test(tc, example_4_7_output);
    tcase_add_test(tc, output_respects_buffer_limit);
    tcase_add_test(tc, unwrap_types);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
