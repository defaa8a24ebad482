/* tests/unit/ops/test_tensor_params.c — the kserve request parameters option:
 * values typed as int64, bool or string (quotes force a string and may hold
 * commas and doubled quotes), the entries attached to a request survive
 * protobuf encoding, and malformed text fails naming the option and key. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kserve/tensor/tensor_params.h"
#include "tests/unit/check_run.h"

START_TEST(test_parse_and_attach)
{
    fnw_error err;
    fnw_tensor_params *p =
        fnw_tensor_params_new(" priority = 3, binary_data=true, mode=fast lane , tag='42', note='a, b ''c''', "
                              "neg=-9223372036854775808, big=9223372036854775808, empty=''",
                              "parameters", &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(fnw_tensor_params_count(p), 8);
    Inference__ModelInferRequest req = INFERENCE__MODEL_INFER_REQUEST__INIT;
    req.model_name = "m";
    fnw_tensor_params_attach(p, &req);
    uint8_t buf[512];
    size_t len = inference__model_infer_request__get_packed_size(&req);
    ck_assert_uint_le(len, sizeof buf);
    inference__model_infer_request__pack(&req, buf);
    Inference__ModelInferRequest *back = inference__model_infer_request__unpack(NULL, len, buf);
    ck_assert_ptr_nonnull(back);
    ck_assert_uint_eq(back->n_parameters, 8);
    Inference__InferParameter **v = calloc(8, sizeof *v);
    static const char *keys[] = { "priority", "binary_data", "mode", "tag", "note", "neg", "big", "empty" };
    for (size_t i = 0; i < 8; i++) {
        ck_assert_str_eq(back->parameters[i]->key, keys[i]);
        v[i] = back->parameters[i]->value;
    }
    ck_assert(v[0]->parameter_choice_case == INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_INT64_PARAM &&
              v[0]->int64_param == 3);
    ck_assert(v[1]->parameter_choice_case == INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_BOOL_PARAM &&
              v[1]->bool_param);
    ck_assert_str_eq(v[2]->string_param, "fast lane");
    ck_assert(v[3]->parameter_choice_case == INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_STRING_PARAM);
    ck_assert_str_eq(v[3]->string_param, "42");
    ck_assert_str_eq(v[4]->string_param, "a, b 'c'");
    ck_assert_int_eq(v[5]->int64_param, INT64_MIN);
    ck_assert_str_eq(v[6]->string_param, "9223372036854775808");   /* out of int64: a string */
    ck_assert_str_eq(v[7]->string_param, "");
    free(v);
    inference__model_infer_request__free_unpacked(back, NULL);
    fnw_tensor_params_free(p);
    p = fnw_tensor_params_new("", "parameters", &err);
    ck_assert_uint_eq(fnw_tensor_params_count(p), 0);
    fnw_tensor_params_free(p);
}
END_TEST

static void expect_error(const char *text, const char *want)
{
    fnw_error err = { "" };
    ck_assert_ptr_null(fnw_tensor_params_new(text, "parameters", &err));
    ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'", err.msg, want);
}

START_TEST(test_errors)
{
    expect_error("a=1, a=2", "option 'parameters' gives 'a' twice");
    expect_error("a", "option 'parameters': expected key=value at 'a'");
    expect_error("=3", "expected key=value");
    expect_error("a b=3", "expected key=value at 'a b=3'");
    expect_error("a=", "option 'parameters': 'a' has no value");
    expect_error("a='x", "the value of 'a' has no closing quote");
    expect_error("a='x' y", "text after the quoted value of 'a'");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tensor_params");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse_and_attach);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
