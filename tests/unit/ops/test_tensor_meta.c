/* tests/unit/ops/test_tensor_meta.c — the tensor mapping checked against a
 * model's ModelMetadata: a matching model passes (-1 dimensions on either
 * side match), and a missing tensor (the message lists the model's),
 * another datatype, another rank, a fixed batch dimension and another fixed
 * dimension each fail naming the model and the tensor. */
#include <check.h>
#include <string.h>

#include "ops/kserve/tensor/tensor.h"
#include "tests/unit/check_run.h"
#include "tests/unit/tensor_build.h"

typedef struct meta {
    Inference__ModelMetadataResponse md;
    Inference__ModelMetadataResponse__TensorMetadata t[4];
    Inference__ModelMetadataResponse__TensorMetadata *in[2], *out[2];
    int64_t shape[4][3];
} meta;

static void tensor(meta *m, int k, const char *name, const char *dtype, int rank, const int64_t *shape)
{
    inference__model_metadata_response__tensor_metadata__init(&m->t[k]);
    m->t[k].name = (char *)name;
    m->t[k].datatype = (char *)dtype;
    memcpy(m->shape[k], shape, (size_t)rank * sizeof *shape);
    m->t[k].shape = m->shape[k];
    m->t[k].n_shape = (size_t)rank;
}

/* "linear": x FP32 [-1,4], t BYTES [-1] in; y FP32 [-1,2], n INT64 [-1,-1] out */
static void linear(meta *m)
{
    memset(m, 0, sizeof *m);
    inference__model_metadata_response__init(&m->md);
    m->md.name = "linear";
    tensor(m, 0, "x", "FP32", 2, (int64_t[]){ -1, 4 });
    tensor(m, 1, "t", "BYTES", 1, (int64_t[]){ -1 });
    tensor(m, 2, "y", "FP32", 2, (int64_t[]){ -1, 2 });
    tensor(m, 3, "n", "INT64", 2, (int64_t[]){ -1, -1 });
    m->in[0] = &m->t[0], m->in[1] = &m->t[1], m->out[0] = &m->t[2], m->out[1] = &m->t[3];
    m->md.inputs = m->in;
    m->md.n_inputs = 2;
    m->md.outputs = m->out;
    m->md.n_outputs = 2;
}

static fnw_type *in_type(void)
{
    return R(2, "f", C(FNW_LIST, T(FNW_FLOAT)), "s", T(FNW_STRING));
}

static fnw_type *out_type(void)
{
    return R(2, "y", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT)), "n", C(FNW_LIST, T(FNW_LONG)));
}

static const char *INS = "x:FP32[4]=f, t=s";

static void expect(const meta *m, const char *inputs, const char *outputs, int64_t max_batch, const char *want)
{
    fnw_type *in = in_type(), *out = out_type();
    fnw_tensor_plan *p = tb_plan(in, out, inputs, outputs);
    fnw_error err = { "" };
    int rc = fnw_tensor_meta_check(p, &m->md, max_batch, &err);
    if (!want)
        ck_assert_msg(rc == 0, "%s", err.msg);
    else
        ck_assert_msg(rc == -1 && strstr(err.msg, want), "'%s' lacks '%s'", err.msg, want);
    fnw_tensor_plan_free(p);
    fnw_type_free(in);
    fnw_type_free(out);
}

START_TEST(test_metadata)
{
    meta m;
    linear(&m);
    expect(&m, INS, "y:FP32[2]=y, n=n", 64, NULL);
    expect(&m, INS, "y=y, n:INT64[3]=n", 64, NULL);   /* -1 on either side matches */
    expect(&m, "x:FP32[4]=f, z=s", "y=y, n=n", 64,
           "model 'linear' has no input tensor 'z' (its inputs: 'x', 't')");
    expect(&m, INS, "y:FP32[3]=y, n=n", 64, "model 'linear': output tensor 'y' has shape [-1,2]; the option gives one "
                                            "row's shape [3]");
    expect(&m, "x:FP32[2,2]=f, t=s", "y=y, n=n", 64, "input tensor 'x' has shape [-1,4], but the option gives one "
                                                     "row's shape [2,2]");
    expect(&m, "x:FP64[4]=f, t=s", "y=y, n=n", 64, "model 'linear': input tensor 'x' is FP32; the option says FP64");
    m.shape[0][0] = 8;
    expect(&m, INS, "y=y, n=n", 64, "input tensor 'x' has shape [8,4]: dimension 0 is fixed at 8; batches of up to "
                                    "64 rows need a model with a variable batch dimension (-1)");
    m.shape[0][0] = 1;
    expect(&m, INS, "y=y, n=n", 1, NULL);   /* a model without batching, called one row at a time */
    m.md.n_outputs = 1;
    expect(&m, INS, "y=y, n=n", 1, "model 'linear' has no output tensor 'n' (its outputs: 'y')");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tensor_meta");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_metadata);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
