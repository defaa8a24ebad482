/* tests/unit/worker/test_limits.c — the limits a hostile descriptor runs into
 * where they are not tested with their own unit: the fields-per-row cap
 * (Flink ROW and TUPLE types, Avro records), and the type nesting limit on
 * the paths a type takes besides a coder's TypeInfo: an Avro schema's JSON,
 * and an OperationSpec output_type inside the Python package's pickle. Each
 * fails with a message naming the limit, never by exhausting the stack or
 * the memory. */
#include <check.h>

#include "ops/builtins.h"
#include "tests/unit/check_run.h"
#include "tests/unit/wire_build.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/avro_names.h"
#include "codecs/type.h"
#include "runtime/registry.h"
#include "worker/step.h"

typedef Org__Apache__Flink__FnExecution__V1__TypeInfo pb_TI;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo pb_Row;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo__Field pb_Field;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__TupleTypeInfo pb_Tuple;
#define TI_INIT ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__INIT

/* ---- fields per row ------------------------------------------------------------ */

/* ROW<f INT, f INT, ...> of n fields (or TUPLE of n INT), converted. */
static int convert_wide(int tuple, size_t n, fnw_type **out, fnw_error *err)
{
    pb_TI intt = TI_INIT;
    intt.type_name = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_NAME__INT;
    pb_Field *fields = calloc(n, sizeof *fields);
    pb_Field **fp = calloc(n, sizeof *fp);
    pb_TI **tp = calloc(n, sizeof *tp);
    ck_assert(fields && fp && tp);
    pb_Field finit = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__ROW_TYPE_INFO__FIELD__INIT;
    for (size_t i = 0; i < n; i++) {
        fields[i] = finit;
        fields[i].field_name = "f";
        fields[i].field_type = &intt;
        fp[i] = &fields[i];
        tp[i] = &intt;
    }
    pb_Row row = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__ROW_TYPE_INFO__INIT;
    row.n_fields = n;
    row.fields = fp;
    pb_Tuple tup = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TUPLE_TYPE_INFO__INIT;
    tup.n_field_types = n;
    tup.field_types = tp;
    pb_TI t = TI_INIT;
    if (tuple) {
        t.type_name = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_NAME__TUPLE;
        t.type_info_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_TUPLE_TYPE_INFO;
        t.tuple_type_info = &tup;
    } else {
        t.type_name = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_NAME__ROW;
        t.type_info_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_ROW_TYPE_INFO;
        t.row_type_info = &row;
    }
    int rc = fnw_typeinfo_to_type(&t, out, err);
    free(fields);
    free(fp);
    free(tp);
    return rc;
}

START_TEST(a_row_may_have_65535_fields_and_no_more)
{
    fnw_type *t = NULL;
    fnw_error err;
    ck_assert_int_eq(convert_wide(0, FNW_TYPE_MAX_FIELDS, &t, &err), 0);
    ck_assert_int_eq((int)fnw_type_child_count(t), 65535);
    fnw_type_free(t);
    t = NULL;
    ck_assert_int_eq(convert_wide(0, FNW_TYPE_MAX_FIELDS + 1, &t, &err), -1);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(err.msg, "ROW type has 65536 fields; fnworker accepts at most 65535 fields per ROW");
    ck_assert_int_eq(convert_wide(1, FNW_TYPE_MAX_FIELDS + 1, &t, &err), -1);
    ck_assert_str_eq(err.msg, "TUPLE type has 65536 fields; fnworker accepts at most 65535 fields per TUPLE");
}
END_TEST

/* {"type":"record","name":"R","fields":[{"name":"f0","type":"int"},...]} */
static char *avro_record(size_t n)
{
    size_t cap = 64 + n * 40;
    char *s = malloc(cap);
    ck_assert_ptr_nonnull(s);
    size_t at = (size_t)snprintf(s, cap, "{\"type\":\"record\",\"name\":\"R\",\"fields\":[");
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(s + at, cap - at, "%s{\"name\":\"f%zu\",\"type\":\"int\"}", i ? "," : "", i);
    snprintf(s + at, cap - at, "]}");
    return s;
}

START_TEST(an_avro_record_over_the_field_cap_is_refused)
{
    fnw_error err;
    char *ok = avro_record(1000), *wide = avro_record(FNW_TYPE_MAX_FIELDS + 1);
    ck_assert_int_eq(fnw_avro_names_check(ok, strlen(ok), &err), 0);
    ck_assert_int_eq(fnw_avro_names_check(wide, strlen(wide), &err), -1);
    ck_assert_str_eq(err.msg, "invalid Avro schema: record \"R\" has 65536 fields; fnworker accepts at most "
                              "65535 fields per record");
    free(ok);
    free(wide);
}
END_TEST

/* ---- nesting on the other paths -------------------------------------------------- */

START_TEST(an_avro_schema_nested_10000_deep_is_refused)
{
    enum { LEVELS = 10000 };
    static const char open[] = "{\"type\":\"array\",\"items\":";
    size_t n = LEVELS * (sizeof open - 1) + 5 + LEVELS + 1;
    char *s = malloc(n), *p = s;
    ck_assert_ptr_nonnull(s);
    for (int i = 0; i < LEVELS; i++, p += sizeof open - 1)
        memcpy(p, open, sizeof open - 1);
    memcpy(p, "\"int\"", 5);
    p += 5;
    memset(p, '}', LEVELS);
    p[LEVELS] = '\0';
    fnw_type *t = fnw_type_new(FNW_AVRO);
    fnw_error err;
    ck_assert_int_eq(fnw_type_set_avro_schema(t, s, &err), -1);
    ck_assert_msg(strstr(err.msg, "invalid Avro schema: ") == err.msg && strstr(err.msg, "depth"), "%s", err.msg);
    fnw_type_free(t);
    free(s);
}
END_TEST

/* A protocol 3 pickle of fnworker._payload.run_in_fnworker(<spec>), as
 * CPython writes it for bytes over 255 long. */
static uint8_t *pickle_spec(const uint8_t *spec, size_t n, size_t *out_len)
{
    static const char head[] = "\x80\x03" "cfnworker._payload\nrun_in_fnworker\n" "q\x00" "B";
    static const char tail[] = "q\x01\x85q\x02Rq\x03.";
    size_t hn = sizeof head - 1, tn = sizeof tail - 1;
    uint8_t *p = malloc(hn + 4 + n + tn);
    ck_assert_ptr_nonnull(p);
    memcpy(p, head, hn);
    for (int i = 0; i < 4; i++)
        p[hn + (size_t)i] = (uint8_t)(n >> (8 * i));
    memcpy(p + hn + 4, spec, n);
    memcpy(p + hn + 4 + n, tail, tn);
    *out_len = hn + 4 + n + tn;
    return p;
}

static int step_from_pickled(const wire *spec, fnw_plan_step *st, fnw_error *err)
{
    size_t n = 0;
    uint8_t *pk = pickle_spec(bytes(spec), len(spec), &n);
    pb_UDSF f = ORG__APACHE__FLINK__FN_EXECUTION__V1__USER_DEFINED_DATA_STREAM_FUNCTION__INIT;
    f.payload.data = pk;
    f.payload.len = n;
    fnw_registry reg;
    fnw_registry_init(&reg);
    fnw_builtins_register(&reg);
    memset(st, 0, sizeof *st);
    int rc = fnw_step_build(&f, "transform-0", &reg, st, err);
    free(pk);
    return rc;
}

START_TEST(a_pickled_output_type_nested_10000_deep_is_refused)
{
    fnw_plan_step st;
    fnw_error err;
    wire w = wire_new(1 << 20);
    front_string(&w, 1, "identity");
    ck_assert_int_eq(step_from_pickled(&w, &st, &err), 0);   /* the pickle itself is read */
    fnw_step_free(&st);
    w.start = w.cap;
    deep_list(&w, 10000);
    wrap(&w, 11);              /* OperationSpec.output_type */
    front_string(&w, 1, "identity");
    ck_assert_int_eq(step_from_pickled(&w, &st, &err), -1);
    ck_assert_msg(strstr(err.msg, "transform 'transform-0': OperationSpec: TypeInfo nests deeper than 64 levels"),
                  "%s", err.msg);
    fnw_step_free(&st);
    free(w.buf);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("hostile descriptors");
    tcase_add_test(tc, a_row_may_have_65535_fields_and_no_more);
    tcase_add_test(tc, an_avro_record_over_the_field_cap_is_refused);
    tcase_add_test(tc, an_avro_schema_nested_10000_deep_is_refused);
    tcase_add_test(tc, a_pickled_output_type_nested_10000_deep_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
