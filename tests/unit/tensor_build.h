/* tests/unit/tensor_build.h — for the tensor codec's tests: one plan over a
 * fixed pair of row types, and builders for ModelInfer responses (output
 * tensors with raw or typed contents) so a test can hand the codec exactly
 * the bytes a server, or a hostile one, would send. Everything lives in
 * static storage or the test's arena; tests run one at a time. */
#ifndef FNW_TENSOR_BUILD_H
#define FNW_TENSOR_BUILD_H

#include <check.h>
#include <string.h>

#include "ops/kserve/tensor/tensor.h"
#include "tests/unit/binding_build.h"

#define TB_MAX 8

typedef struct tb_resp {
    Inference__ModelInferResponse r;
    Inference__ModelInferResponse__InferOutputTensor t[TB_MAX];
    Inference__ModelInferResponse__InferOutputTensor *tp[TB_MAX];
    ProtobufCBinaryData raw[TB_MAX];
    int64_t shape[TB_MAX][TB_MAX];
    Inference__InferTensorContents c[TB_MAX];
} tb_resp;

static inline void tb_init(tb_resp *b)
{
    memset(b, 0, sizeof *b);
    inference__model_infer_response__init(&b->r);
    b->r.outputs = b->tp;
    b->r.raw_output_contents = b->raw;
}

/* Adds an output tensor; raw bytes (n_raw of them) when raw is not NULL. */
static inline Inference__ModelInferResponse__InferOutputTensor *
tb_add(tb_resp *b, const char *name, const char *dtype, int rank, const int64_t *shape, const void *raw,
       size_t n_raw)
{
    size_t k = b->r.n_outputs++;
    ck_assert_uint_lt(k, TB_MAX);
    Inference__ModelInferResponse__InferOutputTensor *t = &b->t[k];
    inference__model_infer_response__infer_output_tensor__init(t);
    t->name = (char *)name;
    t->datatype = (char *)dtype;
    memcpy(b->shape[k], shape, (size_t)rank * sizeof *shape);
    t->shape = b->shape[k];
    t->n_shape = (size_t)rank;
    b->tp[k] = t;
    if (raw) {
        b->raw[k].data = (uint8_t *)raw;
        b->raw[k].len = n_raw;
        b->r.n_raw_output_contents = k + 1;
    } else {
        inference__infer_tensor_contents__init(&b->c[k]);
        t->contents = &b->c[k];
    }
    return t;
}

static inline void le32(uint8_t *p, uint32_t x)
{
    p[0] = (uint8_t)x, p[1] = (uint8_t)(x >> 8), p[2] = (uint8_t)(x >> 16), p[3] = (uint8_t)(x >> 24);
}

static inline void lef32(uint8_t *p, float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    le32(p, x);
}

static inline fnw_tensor_plan *tb_plan(const fnw_type *in, const fnw_type *out, const char *inputs,
                                       const char *outputs)
{
    fnw_error err;
    fnw_tensor_plan *p = fnw_tensor_plan_new(in, out, inputs, outputs, "kserve", &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    return p;
}

#endif
