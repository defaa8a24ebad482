/* tests/unit/ops/test_tensor_pack.c — stacking rows into ModelInfer input
 * tensors: the exact raw_input_contents bytes a server reads (little-endian
 * FP32/INT8/INT64/UINT8 elements, BYTES as a 4-byte length and the bytes,
 * raw PRIMITIVE_ARRAY<BYTE> rows), the shapes with the batch dimension
 * first, the requested outputs, a request that survives protobuf encoding,
 * and each row-level error naming the row, the field and the tensor. */
#include <check.h>
#include <string.h>

#include "ops/kserve/tensor/tensor.h"
#include "tests/unit/check_run.h"
#include "tests/unit/tensor_build.h"

/* ROW<id LONG, features PRIMITIVE_ARRAY<FLOAT>, text STRING, n INT, img PRIMITIVE_ARRAY<BYTE>> */
static fnw_type *in_type(void)
{
    return R(5, "id", T(FNW_LONG), "features", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT)), "text", T(FNW_STRING), "n",
             T(FNW_INT), "img", C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)));
}

static fnw_type *out_type(void)
{
    return R(2, "id", T(FNW_LONG), "score", T(FNW_FLOAT));
}

typedef struct rows {
    fnw_value f[2][5];
    fnw_value feat[2][2];
    fnw_value row[2];
} rows;

static const uint8_t IMG[2][3] = { { 1, 2, 3 }, { 4, 5, 250 } };

static void make_rows(rows *r)
{
    static const float fv[2][2] = { { 1.0f, -2.5f }, { 0.5f, 3.0f } };
    static const char *text[2] = { "ab", "" };
    static const int n[2] = { 7, -3 };
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++)
            r->feat[i][j] = fnw_value_float(fv[i][j]);
        r->f[i][0] = fnw_value_int(FNW_LONG, 10 + i);
        r->f[i][1] = fnw_value_items(FNW_PRIMITIVE_ARRAY, r->feat[i], 2);
        r->f[i][2] = fnw_value_str(text[i]);
        r->f[i][3] = fnw_value_int(FNW_INT, n[i]);
        r->f[i][4] = fnw_value_bytes(FNW_PRIMITIVE_ARRAY, IMG[i], 3);
        r->row[i] = fnw_value_row(FNW_INSERT, r->f[i], 5);
    }
}

static void expect_raw(const Inference__ModelInferRequest *req, size_t k, const char *name, const char *dtype,
                       const int64_t *shape, size_t rank, const uint8_t *bytes, size_t n)
{
    const Inference__ModelInferRequest__InferInputTensor *t = req->inputs[k];
    ck_assert_str_eq(t->name, name);
    ck_assert_str_eq(t->datatype, dtype);
    ck_assert_uint_eq(t->n_shape, rank);
    for (size_t d = 0; d < rank; d++)
        ck_assert_int_eq(t->shape[d], shape[d]);
    ck_assert_ptr_null(t->contents);
    ck_assert_uint_eq(req->raw_input_contents[k].len, n);
    ck_assert_mem_eq(req->raw_input_contents[k].data, bytes, n);
}

START_TEST(test_pack_bytes)
{
    fnw_type *in = in_type(), *out = out_type();
    fnw_tensor_plan *p = tb_plan(in, out, "x:FP32[2]=features, t=text, n:INT8[1]=n, pix:UINT8[3]=img, id=id, "
                                          "d:FP64=n, blob=img", "score=score");
    rows r;
    make_rows(&r);
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    Inference__ModelInferRequest req = INFERENCE__MODEL_INFER_REQUEST__INIT;
    fnw_error err;
    ck_assert_msg(fnw_tensor_pack(p, r.row, 2, &a, &req, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(req.n_inputs, 7);
    ck_assert_uint_eq(req.n_raw_input_contents, 7);

    uint8_t x[16];
    lef32(x, 1.0f), lef32(x + 4, -2.5f), lef32(x + 8, 0.5f), lef32(x + 12, 3.0f);
    expect_raw(&req, 0, "x", "FP32", (int64_t[]){ 2, 2 }, 2, x, 16);
    static const uint8_t t[] = { 2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0 };
    expect_raw(&req, 1, "t", "BYTES", (int64_t[]){ 2 }, 1, t, sizeof t);
    expect_raw(&req, 2, "n", "INT8", (int64_t[]){ 2, 1 }, 2, (const uint8_t[]){ 7, 0xfd }, 2);
    expect_raw(&req, 3, "pix", "UINT8", (int64_t[]){ 2, 3 }, 2, (const uint8_t[]){ 1, 2, 3, 4, 5, 250 }, 6);
    expect_raw(&req, 4, "id", "INT64", (int64_t[]){ 2 }, 1,
               (const uint8_t[]){ 10, 0, 0, 0, 0, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0 }, 16);
    double d[2] = { 7.0, -3.0 };   /* little-endian host: the bytes are the doubles */
    expect_raw(&req, 5, "d", "FP64", (int64_t[]){ 2 }, 1, (const uint8_t *)d, 16);
    static const uint8_t blob[] = { 3, 0, 0, 0, 1, 2, 3, 3, 0, 0, 0, 4, 5, 250 };
    expect_raw(&req, 6, "blob", "BYTES", (int64_t[]){ 2 }, 1, blob, sizeof blob);
    ck_assert_uint_eq(req.n_outputs, 1);
    ck_assert_str_eq(req.outputs[0]->name, "score");

    /* the request is a valid protobuf message and reads back the same */
    req.model_name = "m";
    size_t len = inference__model_infer_request__get_packed_size(&req);
    uint8_t *wire = fnw_arena_alloc(&a, len);
    ck_assert_uint_eq(inference__model_infer_request__pack(&req, wire), len);
    Inference__ModelInferRequest *back = inference__model_infer_request__unpack(NULL, len, wire);
    ck_assert_ptr_nonnull(back);
    ck_assert_uint_eq(back->n_raw_input_contents, 7);
    ck_assert_mem_eq(back->raw_input_contents[0].data, x, 16);
    ck_assert_int_eq(back->inputs[3]->shape[1], 3);
    inference__model_infer_request__free_unpacked(back, NULL);
    /* the same through an arena allocator; an arena too small for it refuses it */
    fnw_arena pa;
    fnw_arena_init(&pa, 0, 0);
    ProtobufCAllocator al;
    fnw_tensor_alloc_init(&al, &pa);
    back = inference__model_infer_request__unpack(&al, len, wire);
    ck_assert_ptr_nonnull(back);
    ck_assert_mem_eq(back->raw_input_contents[6].data, blob, sizeof blob);
    fnw_arena_free(&pa);
    fnw_arena_init(&pa, 64, 128);
    ck_assert_ptr_null(inference__model_infer_request__unpack(&al, len, wire));
    fnw_arena_free(&pa);

    fnw_arena_free(&a);
    fnw_tensor_plan_free(p);
    fnw_type_free(in);
    fnw_type_free(out);
}
END_TEST

static void expect_pack_error(const char *inputs, rows *r, const char *want)
{
    fnw_type *in = in_type(), *out = out_type();
    fnw_tensor_plan *p = tb_plan(in, out, inputs, "score=score");
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    Inference__ModelInferRequest req = INFERENCE__MODEL_INFER_REQUEST__INIT;
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_tensor_pack(p, r->row, 2, &a, &req, &err), -1);
    ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'", err.msg, want);
    fnw_arena_free(&a);
    fnw_tensor_plan_free(p);
    fnw_type_free(in);
    fnw_type_free(out);
}

START_TEST(test_pack_errors)
{
    rows r;
    make_rows(&r);
    r.f[1][3] = fnw_value_int(FNW_INT, 200);
    expect_pack_error("n:INT8=n", &r, "row 1: field 'n' (tensor 'n'): the value 200 is out of INT8's range");
    make_rows(&r);
    expect_pack_error("u:UINT16=n", &r, "row 1: field 'n' (tensor 'u'): the value -3 is out of UINT16's range");
    r.f[0][2] = fnw_value_null(FNW_STRING);
    expect_pack_error("t=text", &r, "row 0: field 'text' is null; tensor 't' takes no nulls");
    make_rows(&r);
    r.f[1][1].count = 1;
    expect_pack_error("x:FP32[2]=features", &r, "row 1: field 'features' has 1 elements; tensor 'x' takes 2 per row");
    make_rows(&r);
    r.feat[0][1] = fnw_value_null(FNW_FLOAT);
    expect_pack_error("x:FP32[2]=features", &r, "row 0: field 'features' has a null element");
    make_rows(&r);
    r.f[0][4].count = 2;
    expect_pack_error("pix:UINT8[3]=img", &r, "row 0: field 'img' has 2 bytes; tensor 'pix' takes 3 UINT8 elements");
    make_rows(&r);
    r.row[1] = fnw_value_null(FNW_ROW);
    expect_pack_error("id=id", &r, "row 1 of the batch is null");
}
END_TEST

START_TEST(test_pack_limits)
{
    fnw_type *in = in_type(), *out = out_type();
    fnw_tensor_plan *p = tb_plan(in, out, "id=id", "score=score");
    rows r;
    make_rows(&r);
    fnw_error err = { "" };
    Inference__ModelInferRequest req = INFERENCE__MODEL_INFER_REQUEST__INIT;
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    ck_assert_int_eq(fnw_tensor_pack(p, r.row, 0, &a, &req, &err), -1);
    ck_assert_str_eq(err.msg, "an inference request needs at least one row");
    fnw_arena_free(&a);
    fnw_arena small;   /* an arena at its limit fails the batch, it does not grow */
    fnw_arena_init(&small, 64, 64);
    ck_assert_int_eq(fnw_tensor_pack(p, r.row, 2, &small, &req, &err), -1);
    ck_assert_msg(strstr(err.msg, "out of memory"), "%s", err.msg);
    fnw_arena_free(&small);
    fnw_tensor_plan_free(p);
    fnw_type_free(in);
    fnw_type_free(out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tensor_pack");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_pack_bytes);
    tcase_add_test(tc, test_pack_errors);
    tcase_add_test(tc, test_pack_limits);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
