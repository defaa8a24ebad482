/* tests/unit/ops/test_tensor_plan.c — the kserve operation's tensor mapping
 * options: the TENSOR[:DATATYPE][[DIMS]]=FIELD syntax (datatypes defaulted
 * from the field, TensorFlow-style names with ':', bracketed dimensions
 * inside a comma list), the form each field kind gives (scalar, array, raw
 * bytes), and every open-time error naming the option, the tensor and the
 * field. */
#include <check.h>
#include <string.h>

#include "ops/kserve/tensor/tensor.h"
#include "tests/unit/binding_build.h"
#include "tests/unit/check_run.h"

/* ROW<id LONG, features PRIMITIVE_ARRAY<FLOAT>, text STRING, img PRIMITIVE_ARRAY<BYTE>,
 *     tags LIST<STRING>, flag BOOLEAN, when SQL_DATE> */
static fnw_type *in_type(void)
{
    return R(7, "id", T(FNW_LONG), "features", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT)), "text", T(FNW_STRING),
             "img", C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)), "tags", C(FNW_LIST, T(FNW_STRING)), "flag",
             T(FNW_BOOLEAN), "when", T(FNW_SQL_DATE));
}

/* ROW<id LONG, score DOUBLE, probs BASIC_ARRAY<FLOAT>, label STRING, half PRIMITIVE_ARRAY<BYTE>> */
static fnw_type *out_type(void)
{
    return R(5, "id", T(FNW_LONG), "score", T(FNW_DOUBLE), "probs", C(FNW_BASIC_ARRAY, T(FNW_FLOAT)), "label",
             T(FNW_STRING), "half", C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)));
}

START_TEST(test_syntax_and_forms)
{
    fnw_type *in = in_type(), *out = out_type();
    fnw_error err;
    fnw_tensor_plan *p = fnw_tensor_plan_new(
        in, out, " x:FP32[2,2]=features, dense/BiasAdd:0=id ,t=text, pix:UINT8[2, 3]=img, raw=img, w:BYTES[3]=tags",
        "s:FP64[1]=score, p=probs, label:BYTES=label, h:FP16[4]=half", "kserve", &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(fnw_tensor_plan_inputs(p), 6);
    ck_assert_uint_eq(fnw_tensor_plan_outputs(p), 4);
    const fnw_tensor_map *m = fnw_tensor_plan_input(p, 0);
    ck_assert_str_eq(m->tensor, "x");
    ck_assert_int_eq(m->dtype, FNW_DT_FP32);
    ck_assert_int_eq(m->form, FNW_TFORM_ARRAY);
    ck_assert_uint_eq(m->rank, 2);
    ck_assert_int_eq(m->inner, 4);
    ck_assert_uint_eq(m->field_index, 1);
    m = fnw_tensor_plan_input(p, 1);   /* ':0' is not a datatype: part of the name; LONG -> INT64 */
    ck_assert_str_eq(m->tensor, "dense/BiasAdd:0");
    ck_assert_int_eq(m->dtype, FNW_DT_INT64);
    ck_assert_int_eq(m->form, FNW_TFORM_SCALAR);
    ck_assert_int_eq(m->inner, 1);
    ck_assert_int_eq(fnw_tensor_plan_input(p, 2)->dtype, FNW_DT_BYTES);   /* STRING -> BYTES */
    m = fnw_tensor_plan_input(p, 3);
    ck_assert_int_eq(m->form, FNW_TFORM_BLOB);
    ck_assert_int_eq(m->inner, 6);
    m = fnw_tensor_plan_input(p, 4);   /* PRIMITIVE_ARRAY<BYTE> alone: one BYTES element */
    ck_assert_int_eq(m->dtype, FNW_DT_BYTES);
    ck_assert_int_eq(m->form, FNW_TFORM_SCALAR);
    m = fnw_tensor_plan_input(p, 5);
    ck_assert_int_eq(m->form, FNW_TFORM_ARRAY);
    ck_assert_int_eq(m->elem_kind, FNW_STRING);
    m = fnw_tensor_plan_output(p, 1);   /* an output array defaults to [-1] and FLOAT -> FP32 */
    ck_assert_int_eq(m->dtype, FNW_DT_FP32);
    ck_assert_uint_eq(m->rank, 1);
    ck_assert_int_eq(m->dims[0], -1);
    ck_assert_int_eq(m->inner, -1);
    ck_assert_int_eq(fnw_tensor_plan_output(p, 3)->form, FNW_TFORM_BLOB);
    ck_assert_ptr_null(fnw_tensor_plan_output(p, 4));
    fnw_tensor_plan_free(p);
    fnw_type_free(in);
    fnw_type_free(out);
}
END_TEST

static void expect_error(const char *inputs, const char *outputs, const char *want)
{
    fnw_type *in = in_type(), *out = out_type();
    fnw_error err = { "" };
    fnw_tensor_plan *p = fnw_tensor_plan_new(in, out, inputs, outputs, "kserve", &err);
    ck_assert_msg(p == NULL, "'%s' / '%s' was accepted", inputs, outputs);
    ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'", err.msg, want);
    ck_assert_msg(strstr(err.msg, "operation 'kserve'") != NULL, "'%s' does not name the operation", err.msg);
    fnw_type_free(in);
    fnw_type_free(out);
}

START_TEST(test_errors)
{
    const char *outs = "s=score, p=probs, label=label, h:FP16[-1]=half";
    expect_error("", outs, "option 'inputs' lists no tensor");
    expect_error("x:FP32[4]", outs, "option 'inputs': 'x:FP32[4]' lacks '=FIELD'");
    expect_error("x=", outs, "names no field after '='");
    expect_error(":FP32=id", outs, "has no tensor name");
    expect_error("x=nope", outs, "tensor 'x' names field 'nope', which the input row ROW<id LONG");
    expect_error("x=features", outs, "tensor 'x' takes field 'features', an array: give one row's shape");
    expect_error("x:FP32[0]=features", outs, "tensor 'x' has dimension '0'");
    expect_error("x:FP32[-1]=features", outs, "tensor 'x' has dimension '-1'");
    expect_error("x:FP32[2,]=features", outs, "empty dimension");
    expect_error("x:FP32[1,2,3,4,5,6,7,8,9]=features", outs, "more than 8 dimensions");
    expect_error("x:FP32[65536,65536]=features", outs, "more than 2147483648 elements per row");
    expect_error("x:FP32]=features", outs, "has ']' without '['");
    expect_error("x=when", outs, "field 'when' of type SQL_DATE, which holds no tensor datatype");
    expect_error("x:BOOL=id", outs, "tensor 'x' is BOOL, which field 'id' of type LONG cannot give");
    expect_error("x:FP16[2]=features", outs, "only a PRIMITIVE_ARRAY<BYTE> field carries");
    expect_error("x:FP32[2]=img", outs, "field 'img' (PRIMITIVE_ARRAY<BYTE>) cannot carry");
    expect_error("x:INT64[2]=id", outs, "tensor 'x' has 2 elements per row but field 'id' holds one");
    expect_error("x=id, x=flag", outs, "option 'inputs' lists tensor 'x' twice");
    expect_error("x=id", "s:FP32[-1]=score", "tensor 's' has a -1 dimension but field 'score' holds one");
    expect_error("x=id", "s:BYTES=score", "tensor 's' is BYTES, which field 'score' of type DOUBLE cannot hold");
    expect_error("x=id", "s:INT64=score", "cannot hold");   /* integers do not land in DOUBLE fields */
    expect_error("x=id", "s=score, t=score, p=probs, label=label, h:FP16=half", "'score'");
    expect_error("x=id", "p=probs, label=label, h:FP16=half", "score");   /* nothing fills 'score' */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tensor_plan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_syntax_and_forms);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
