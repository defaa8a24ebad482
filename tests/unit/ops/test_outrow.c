/* tests/unit/ops/test_outrow.c — output row assembly and the missing-result
 * policy: copied fields by name and type, result fields null until filled,
 * row kind kept, null inputs, every open-time error naming the operation and
 * the field (and both types on a mismatch), and a whole element's path
 * (decode the input bytes, convert a JSON result into the result field,
 * encode the output with the codecs' encoder, decode it back) proving the
 * assembled value is well formed. */
#include <check.h>
#include <jansson.h>
#include <string.h>

#include "codecs/ser.h"
#include "ops/bind/conv.h"
#include "ops/bind/missing.h"
#include "ops/bind/outrow.h"
#include "tests/unit/binding_build.h"
#include "tests/unit/check_run.h"

/* ROW<id INT, name STRING, extra LONG> */
static fnw_type *in_type(void)
{
    return R(3, "id", T(FNW_INT), "name", T(FNW_STRING), "extra", T(FNW_LONG));
}

static void expect_plan_error(fnw_type *in, fnw_type *out, const char *const *results, size_t n,
                              const char *want)
{
    fnw_error err = { "" };
    ck_assert_ptr_null(fnw_outrow_new(in, out, results, n, "http_get", &err));
    ck_assert_msg(strstr(err.msg, want) && strstr(err.msg, "operation 'http_get'"), "'%s' lacks '%s'", err.msg,
                  want);
    fnw_type_free(in);
    fnw_type_free(out);
}

START_TEST(test_plan_and_assemble)
{
    fnw_type *in = in_type();
    fnw_type *out = R(4, "score", T(FNW_DOUBLE), "name", T(FNW_STRING), "id", T(FNW_INT), "hits", T(FNW_LONG));
    const char *results[] = { "hits", "score" };
    fnw_error err;
    fnw_outrow *r = fnw_outrow_new(in, out, results, 2, "op", &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    ck_assert_uint_eq(fnw_outrow_results(r), 2);
    ck_assert_uint_eq(fnw_outrow_slot(r, 0), 3);
    ck_assert_uint_eq(fnw_outrow_slot(r, 1), 0);
    ck_assert_int_eq(fnw_outrow_result_type(r, 1)->kind, FNW_DOUBLE);
    ck_assert_str_eq(fnw_outrow_result_name(r, 0), "hits");

    fnw_value f[3] = { fnw_value_int(FNW_INT, 5), fnw_value_str("bob"), fnw_value_int(FNW_LONG, 9) };
    fnw_value input = fnw_value_row(FNW_UPDATE_AFTER, f, 3);
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    fnw_value row;
    ck_assert_int_eq(fnw_outrow_assemble(r, &input, &a, &row, &err), 0);
    ck_assert_int_eq(row.row_kind, FNW_UPDATE_AFTER);
    ck_assert_uint_eq(row.count, 4);
    ck_assert(row.u.items[0].is_null && row.u.items[0].kind == FNW_DOUBLE);   /* a result, unfilled */
    ck_assert(row.u.items[3].is_null && row.u.items[3].kind == FNW_LONG);
    ck_assert_ptr_eq(row.u.items[1].u.bytes, f[1].u.bytes);                 /* borrowed from the input */
    ck_assert_int_eq(row.u.items[2].u.i, 5);
    /* a null input: copied fields are null too */
    fnw_value null_in = fnw_value_null(FNW_ROW);
    ck_assert_int_eq(fnw_outrow_assemble(r, &null_in, &a, &row, &err), 0);
    for (uint32_t i = 0; i < 4; i++)
        ck_assert(row.u.items[i].is_null);
    /* an input that does not match its type is refused, not read past */
    fnw_value short_in = fnw_value_row(FNW_INSERT, f, 2);
    ck_assert_int_eq(fnw_outrow_assemble(r, &short_in, &a, &row, &err), -1);
    ck_assert_str_eq(err.msg, "the input row does not match the input type");
    fnw_arena_free(&a);
    /* an arena at its limit */
    fnw_arena small;
    fnw_arena_init(&small, 16, 16);
    ck_assert_int_eq(fnw_outrow_assemble(r, &input, &small, &row, &err), -1);
    ck_assert_msg(strstr(err.msg, "out of memory"), "%s", err.msg);
    fnw_arena_free(&small);
    fnw_outrow_free(r);
    fnw_type_free(in);
    fnw_type_free(out);
}
END_TEST

START_TEST(test_result_overrides_input_field)
{
    /* a result may take the name of an input field (of any type): it wins */
    fnw_type *in = in_type(), *out = R(2, "id", T(FNW_INT), "name", T(FNW_LONG));
    const char *results[] = { "name" };
    fnw_error err;
    fnw_outrow *r = fnw_outrow_new(in, out, results, 1, "op", &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    ck_assert_uint_eq(fnw_outrow_slot(r, 0), 1);
    fnw_outrow_free(r);
    /* no results at all: a pure copy of selected fields */
    fnw_type *empty = R(0);
    r = fnw_outrow_new(in, empty, NULL, 0, "op", &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    ck_assert_uint_eq(fnw_outrow_results(r), 0);
    fnw_outrow_free(r);
    fnw_type_free(empty);
    fnw_type_free(in);
    fnw_type_free(out);
}
END_TEST

START_TEST(test_plan_errors)
{
    const char *score[] = { "score" };
    expect_plan_error(in_type(), R(2, "id", T(FNW_INT), "score", T(FNW_DOUBLE)), (const char *[]){ "scor" }, 1,
                      "fills result field 'scor', which the output type ROW<id INT, score DOUBLE> does not have");
    expect_plan_error(in_type(), R(2, "id", T(FNW_INT), "score", T(FNW_DOUBLE)),
                      (const char *[]){ "score", "score" }, 2, "result field 'score' is named twice");
    expect_plan_error(in_type(), R(2, "ids", T(FNW_INT), "score", T(FNW_DOUBLE)), score, 1,
                      "output field 'ids' is neither one of its results nor an input field (input type ROW<id INT, "
                      "name STRING, extra LONG>)");
    expect_plan_error(in_type(), R(2, "id", T(FNW_LONG), "score", T(FNW_DOUBLE)), score, 1,
                      "output field 'id' has type LONG but the input field it is copied from has type INT");
    expect_plan_error(in_type(), R(3, "id", T(FNW_INT), "id", T(FNW_INT), "score", T(FNW_DOUBLE)), score, 1,
                      "the output type names field 'id' twice");
    expect_plan_error(T(FNW_INT), R(1, "score", T(FNW_DOUBLE)), score, 1, "the input type is INT");
    expect_plan_error(in_type(), T(FNW_STRING), score, 1, "the output type is STRING");
    /* nested types compare with their field names */
    expect_plan_error(R(1, "u", R(1, "a", T(FNW_INT))), R(2, "u", R(1, "b", T(FNW_INT)), "score", T(FNW_DOUBLE)),
                      score, 1, "output field 'u' has type ROW<b INT> but the input field it is copied from has "
                      "type ROW<a INT>");
}
END_TEST

START_TEST(test_missing_policy)
{
    fnw_missing m;
    fnw_error err;
    ck_assert_int_eq(fnw_missing_parse("null", "on_missing", &m, &err), 0);
    ck_assert_int_eq(m, FNW_MISSING_NULL);
    ck_assert_int_eq(fnw_missing_parse("empty", "on_missing", &m, &err), 0);
    ck_assert_int_eq(m, FNW_MISSING_EMPTY);
    ck_assert_int_eq(fnw_missing_parse("fail", "on_missing", &m, &err), 0);
    ck_assert_int_eq(m, FNW_MISSING_FAIL);
    ck_assert_int_eq(fnw_missing_parse("NULL", "on_missing", &m, &err), -1);
    ck_assert_str_eq(err.msg, "option 'on_missing' must be one of null, empty, fail (what to do when the service "
                     "has no result); got 'NULL'");
    ck_assert_int_eq(fnw_missing_parse("", "on_missing", &m, &err), -1);
    ck_assert_int_eq(fnw_missing_parse(NULL, "on_missing", &m, &err), -1);
    ck_assert_str_eq(fnw_missing_name(FNW_MISSING_EMPTY), "empty");
    ck_assert_str_eq(fnw_missing_name((fnw_missing)7), "?");
    fnw_option o = { "on_missing", "fail" };
    fnw_options opts = { 1, &o };
    ck_assert_int_eq(fnw_missing_option(&opts, "on_missing", FNW_MISSING_NULL, &m, &err), 0);
    ck_assert_int_eq(m, FNW_MISSING_FAIL);
    ck_assert_int_eq(fnw_missing_option(&opts, "absent", FNW_MISSING_EMPTY, &m, &err), 0);
    ck_assert_int_eq(m, FNW_MISSING_EMPTY);
    o.value = "skip";
    ck_assert_int_eq(fnw_missing_option(&opts, "on_missing", FNW_MISSING_NULL, &m, &err), -1);
    ck_assert_msg(strstr(err.msg, "got 'skip'"), "%s", err.msg);
}
END_TEST

START_TEST(test_element_round_trip)
{
    fnw_type *in = in_type();
    fnw_type *out = R(3, "id", T(FNW_INT), "user",
                      R(3, "age", T(FNW_INT), "tags", C(FNW_LIST, T(FNW_STRING)), "m", M(T(FNW_STRING), T(FNW_DOUBLE))),
                      "name", T(FNW_STRING));
    const char *results[] = { "user" };
    fnw_error err;
    fnw_outrow *r = fnw_outrow_new(in, out, results, 1, "op", &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    ck_assert_msg(fnw_conv_check_type(fnw_outrow_result_type(r, 0), "user", &err) == 0, "%s", err.msg);

    /* the input as the operation gets it: decoded from its bytes */
    fnw_value f[3] = { fnw_value_int(FNW_INT, 5), fnw_value_str("b\xc3\xb6" "b"), fnw_value_int(FNW_LONG, 9) };
    fnw_value src = fnw_value_row(FNW_DELETE, f, 3);
    fnw_buf inbytes, outbytes;
    fnw_buf_init(&inbytes, 0);
    fnw_buf_init(&outbytes, 0);
    ck_assert_msg(fnw_ser_encode(in, &src, &inbytes, &err) == 0, "%s", err.msg);
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    fnw_value input;
    size_t used;
    ck_assert_msg(fnw_ser_decode(in, inbytes.p, inbytes.len, &a, &input, &used, &err) == 0, "%s", err.msg);

    /* the result, converted into the result field of the assembled row */
    json_error_t jerr;
    json_t *doc = json_loads("{\"age\": 31, \"tags\": [\"x\", \"y\"], \"m\": {\"k\": 1.5, \"n\": null}}", 0, &jerr);
    fnw_value row;
    ck_assert_int_eq(fnw_outrow_assemble(r, &input, &a, &row, &err), 0);
    ck_assert_msg(fnw_conv_json(fnw_outrow_result_type(r, 0), doc, "user", &a,
                                &row.u.items[fnw_outrow_slot(r, 0)], &err) == 0, "%s", err.msg);
    json_decref(doc);

    ck_assert_msg(fnw_ser_encode(out, &row, &outbytes, &err) == 0, "%s", err.msg);
    fnw_value back;
    ck_assert_msg(fnw_ser_decode(out, outbytes.p, outbytes.len, &a, &back, &used, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(used, outbytes.len);
    ck_assert(fnw_value_equal(out, &row, &back));
    ck_assert_int_eq(back.row_kind, FNW_DELETE);
    ck_assert_int_eq(back.u.items[1].u.items[0].u.i, 31);
    ck_assert(back.u.items[1].u.items[2].u.items[3].is_null);
    ck_assert_int_eq(memcmp(back.u.items[2].u.bytes, "b\xc3\xb6" "b", 4), 0);

    /* with the missing policy "null": the unfilled result encodes as a null field */
    ck_assert_int_eq(fnw_outrow_assemble(r, &input, &a, &row, &err), 0);
    fnw_buf_clear(&outbytes);
    ck_assert_msg(fnw_ser_encode(out, &row, &outbytes, &err) == 0, "%s", err.msg);
    ck_assert_msg(fnw_ser_decode(out, outbytes.p, outbytes.len, &a, &back, &used, &err) == 0, "%s", err.msg);
    ck_assert(back.u.items[1].is_null && !back.u.items[0].is_null);

    fnw_arena_free(&a);
    fnw_buf_free(&inbytes);
    fnw_buf_free(&outbytes);
    fnw_outrow_free(r);
    fnw_type_free(in);
    fnw_type_free(out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("outrow");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_plan_and_assemble);
    tcase_add_test(tc, test_result_overrides_input_field);
    tcase_add_test(tc, test_plan_errors);
    tcase_add_test(tc, test_missing_policy);
    tcase_add_test(tc, test_element_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
