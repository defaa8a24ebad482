/* tests/unit/codecs/test_ser_field.c — one field of an encoded ROW found
 * without decoding (fnw_ser_field): the value of PyFlink's key_by row
 * Row(f0=<key>, f1=<value>) with the key present or null and the value null,
 * a middle field of three (measured by its own skip program), and what is
 * refused: a type that is not a ROW, an index past its fields, bytes that
 * are not a value of the row. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdint.h>
#include <string.h>

#include "codecs/ser.h"

static size_t hex(const char *s, uint8_t *out)
{
    size_t n = 0;
    int hi = -1;
    for (; *s; s++) {
        int d;
        if (*s >= '0' && *s <= '9') d = *s - '0';
        else if (*s >= 'a' && *s <= 'f') d = *s - 'a' + 10;
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

/* ROW<f0 PICKLED_BYTES, f1 ROW<name STRING, n INT>> */
static fnw_type *keyed_row(void)
{
    fnw_type *v = fnw_type_new(FNW_ROW);
    add(v, fnw_type_new(FNW_STRING), "name");
    add(v, fnw_type_new(FNW_INT), "n");
    fnw_type *t = fnw_type_new(FNW_ROW);
    add(t, fnw_type_new(FNW_PICKLED_BYTES), "f0");
    return add(t, v, "f1");
}

/* The field's bytes of the value in hex text p (which the row's skip program must accept). */
static int get(const fnw_ser_field *f, const fnw_type *row, const char *text, const uint8_t **fp, size_t *flen,
               uint8_t *buf)
{
    size_t n = hex(text, buf), used = 0;
    fnw_error err;
    fnw_skip_program *sp = fnw_skip_program_new(row, &err);
    ck_assert_int_eq(fnw_skip_program_run(sp, buf, n, &used, &err), 0);
    ck_assert_uint_eq(used, n);
    fnw_skip_program_free(sp);
    return fnw_ser_field_get(f, buf, n, fp, flen, &err);
}

START_TEST(value_of_a_keyed_row)
{
    fnw_type *t = keyed_row();
    fnw_error err;
    fnw_ser_field *f = fnw_ser_field_new(t, 1, &err);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_eq(fnw_ser_field_type(f), t->children[1]);
    uint8_t buf[64], want[64];
    const uint8_t *fp;
    size_t flen;
    size_t wn = hex("00 00000002 6162 00000005", want);

    /* key b"k1", value Row("ab", 5) */
    ck_assert_int_eq(get(f, t, "00 00000002 6b31  00 00000002 6162 00000005", &fp, &flen, buf), 0);
    ck_assert_ptr_eq(fp, buf + 7);
    ck_assert_uint_eq(flen, wn);
    ck_assert(memcmp(fp, want, wn) == 0);

    /* a null key: the value follows the mask */
    ck_assert_int_eq(get(f, t, "20  00 00000002 6162 00000005", &fp, &flen, buf), 0);
    ck_assert_ptr_eq(fp, buf + 1);
    ck_assert_uint_eq(flen, wn);

    /* a null value */
    ck_assert_int_eq(get(f, t, "10 00000002 6b31", &fp, &flen, buf), 0);
    ck_assert_ptr_null(fp);
    ck_assert_uint_eq(flen, 0);

    /* the key itself (not the last field: measured) */
    fnw_ser_field *k = fnw_ser_field_new(t, 0, &err);
    ck_assert_ptr_nonnull(k);
    ck_assert_int_eq(get(k, t, "00 00000002 6b31  00 00000002 6162 00000005", &fp, &flen, buf), 0);
    ck_assert_ptr_eq(fp, buf + 1);
    ck_assert_uint_eq(flen, 6);
    fnw_ser_field_free(k);
    fnw_ser_field_free(f);
    fnw_type_free(t);
}
END_TEST

START_TEST(middle_field_of_three)
{
    fnw_type *t = fnw_type_new(FNW_ROW);
    add(t, fnw_type_new(FNW_STRING), "a");
    add(t, fnw_type_new(FNW_INT), "b");
    add(t, fnw_type_new(FNW_LONG), "c");
    fnw_error err;
    fnw_ser_field *f = fnw_ser_field_new(t, 1, &err);
    ck_assert_ptr_nonnull(f);
    uint8_t buf[64];
    const uint8_t *fp;
    size_t flen;
    ck_assert_int_eq(get(f, t, "00 00000003 78797a 00000007 0000000000000009", &fp, &flen, buf), 0);
    ck_assert_ptr_eq(fp, buf + 8);
    ck_assert_uint_eq(flen, 4);
    ck_assert_uint_eq(fp[3], 7);
    /* a null a and a null c */
    ck_assert_int_eq(get(f, t, "28 00000007", &fp, &flen, buf), 0);
    ck_assert_ptr_eq(fp, buf + 1);
    ck_assert_uint_eq(flen, 4);
    fnw_ser_field_free(f);
    fnw_type_free(t);
}
END_TEST

START_TEST(refusals)
{
    fnw_error err;
    fnw_type *i = fnw_type_new(FNW_INT);
    ck_assert_ptr_null(fnw_ser_field_new(i, 0, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "not a ROW"));
    fnw_type_free(i);
    fnw_type *t = keyed_row();
    ck_assert_ptr_null(fnw_ser_field_new(t, 2, &err));
    ck_assert_ptr_null(fnw_ser_field_new(NULL, 0, &err));

    fnw_ser_field *f = fnw_ser_field_new(t, 1, &err);
    uint8_t buf[16];
    const uint8_t *fp = buf;
    size_t flen = 9;
    /* no mask byte; a key whose length runs past the end */
    ck_assert_int_eq(fnw_ser_field_get(f, buf, 0, &fp, &flen, &err), -1);
    ck_assert_ptr_null(fp);
    ck_assert_ptr_nonnull(strstr(err.msg, "null mask"));
    size_t n = hex("00 7fffffff 6162", buf);
    ck_assert_int_eq(fnw_ser_field_get(f, buf, n, &fp, &flen, &err), -1);
    ck_assert_msg(strstr(err.msg, "ROW field 0") != NULL, "%s", err.msg);
    fnw_ser_field_free(f);
    fnw_ser_field_free(NULL);
    fnw_type_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ser_field");
    TCase *tc = tcase_create("field");
    tcase_add_test(tc, value_of_a_keyed_row);
    tcase_add_test(tc, middle_field_of_three);
    tcase_add_test(tc, refusals);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
