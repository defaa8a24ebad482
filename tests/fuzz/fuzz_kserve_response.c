/* tests/fuzz/fuzz_kserve_response.c — fuzz target for what a KServe v2
 * (Open Inference Protocol) server's answer becomes in rows: the
 * ModelInferResponse bytes through protobuf-c, the kserve operation's
 * tensor splitter (ops/kserve/tensor/tensor_unpack.c) for a batch of 1 to 4 rows and
 * the output rows it assembles, for three output configurations (an FP32
 * vector, an INT64 scalar and a BYTES string; a fixed-shape FP32 array and
 * an INT64 scalar into LONG; an FP16 blob and a BYTES array); and the same
 * bytes read as a ModelMetadataResponse through the metadata check
 * (ops/kserve/tensor/tensor_meta.c).
 *
 * The first input byte picks the batch size (bits 0-1: 1 to 4 rows), the
 * configuration (bits 2-3) and the metadata check's max batch (bit 4: 1,
 * else the batch size); the rest is the message.
 *
 * Properties (abort() on violation):
 * - the response unpacked with malloc (every bytes field an exact-size heap
 *   block, so ASan sees any read past raw_output_contents or a typed list)
 *   and into an arena (as the operation does) splits the same way: equal
 *   values and rows, or the same non-empty message;
 * - a response that splits has, for every configured output, a tensor of
 *   that name whose dimension 0 is the batch size: any other is refused;
 * - the metadata check is deterministic and fails with a message;
 * - nothing leaks (LSan: the malloc'd message is freed).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/arena.h"
#include "codecs/type.h"
#include "codecs/value.h"
#include "ops/kserve/tensor/tensor.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NPLANS 3
#define MAX_ROWS 4

static fnw_type *in_type, *out_type[NPLANS];
static fnw_tensor_plan *plans[NPLANS];

static fnw_type *of(fnw_kind container, fnw_kind elem)
{
    return fuzz_with(fuzz_leaf(container), fuzz_leaf(elem), NULL);
}

static void plan(int k, fnw_type *out, const char *outputs)
{
    fnw_error err;
    out_type[k] = out;
    plans[k] = fnw_tensor_plan_new(in_type, out, "id=id", outputs, "kserve", &err);
    if (!plans[k]) {
        fprintf(stderr, "fuzz_kserve_response: %s\n", err.msg);
        abort();
    }
}

static void setup(void)
{
    in_type = fuzz_with(fuzz_leaf(FNW_ROW), fuzz_leaf(FNW_LONG), "id");
    fnw_type *o0 = fuzz_with(fuzz_leaf(FNW_ROW), fuzz_leaf(FNW_LONG), "id");
    fuzz_with(fuzz_with(fuzz_with(o0, of(FNW_LIST, FNW_FLOAT), "y"), fuzz_leaf(FNW_STRING), "label"), fuzz_leaf(FNW_INT), "n");
    plan(0, o0, "y=y, label:BYTES=label, n:INT64=n");
    fnw_type *o1 = fuzz_with(fuzz_leaf(FNW_ROW), fuzz_leaf(FNW_LONG), "id");
    fuzz_with(fuzz_with(o1, of(FNW_PRIMITIVE_ARRAY, FNW_FLOAT), "y"), fuzz_leaf(FNW_LONG), "n");
    plan(1, o1, "y:FP32[2]=y, n=n");
    fnw_type *o2 = fuzz_with(fuzz_leaf(FNW_ROW), fuzz_leaf(FNW_LONG), "id");
    fuzz_with(fuzz_with(o2, of(FNW_PRIMITIVE_ARRAY, FNW_BYTE), "h"), of(FNW_BASIC_ARRAY, FNW_STRING), "b");
    plan(2, o2, "h:FP16[-1]=h, b:BYTES[2]=b");
}

/* 1 if resp has an output named name with dimension 0 equal to n. */
static int has_batch_dim(const Inference__ModelInferResponse *resp, const char *name, size_t n)
{
    for (size_t j = 0; j < resp->n_outputs; j++) {
        const Inference__ModelInferResponse__InferOutputTensor *t = resp->outputs[j];
        if (t && t->name && strcmp(t->name, name) == 0 && t->n_shape >= 1 && t->shape[0] == (int64_t)n)
            return 1;
    }
    return 0;
}

/* Splits resp into n output rows (rows[i]); 0, or -1 with err set. */
static int split(const fnw_tensor_plan *p, const Inference__ModelInferResponse *resp, size_t n, fnw_arena *a,
                 fnw_value *rows, fnw_error *err)
{
    fnw_value vals[FNW_TENSOR_MAX * MAX_ROWS], in_f[MAX_ROWS], in_rows[MAX_ROWS];
    if (fnw_tensor_unpack(p, resp, n, a, vals, err) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        in_f[i] = fnw_value_int(FNW_LONG, (int64_t)i);
        in_rows[i] = fnw_value_row(FNW_INSERT, &in_f[i], 1);
        if (fnw_tensor_unpack_row(p, &in_rows[i], vals, n, i, a, &rows[i], err) != 0)
            return -1;
    }
    return 0;
}

static void check_response(int k, size_t n, const uint8_t *msg, size_t len)
{
    const fnw_tensor_plan *p = plans[k];
    Inference__ModelInferResponse *heap = inference__model_infer_response__unpack(NULL, len, msg);
    fnw_arena a1, a2;
    fnw_arena_init(&a1, 4096, 0);
    fnw_arena_init(&a2, 4096, 0);
    ProtobufCAllocator al;
    fnw_tensor_alloc_init(&al, &a2);
    Inference__ModelInferResponse *in_arena = inference__model_infer_response__unpack(&al, len, msg);
    if ((heap == NULL) != (in_arena == NULL))
        abort();
    if (heap) {
        fnw_value r1[MAX_ROWS], r2[MAX_ROWS];
        fnw_error e1 = { "" }, e2 = { "" };
        int rc1 = split(p, heap, n, &a1, r1, &e1);
        int rc2 = split(p, in_arena, n, &a2, r2, &e2);
        if (rc1 != rc2 || (rc1 != 0 && !fuzz_same_message(&e1, &e2)))
            abort();
        for (size_t i = 0; rc1 == 0 && i < n; i++)
            if (!fnw_value_equal(out_type[k], &r1[i], &r2[i]))
                abort();
        for (size_t o = 0; rc1 == 0 && o < fnw_tensor_plan_outputs(p); o++)
            if (!has_batch_dim(heap, fnw_tensor_plan_output(p, o)->tensor, n))
                abort();
        inference__model_infer_response__free_unpacked(heap, NULL);
    }
    fnw_arena_free(&a1);
    fnw_arena_free(&a2);
}

static void check_metadata(int k, int64_t max_batch, const uint8_t *msg, size_t len)
{
    Inference__ModelMetadataResponse *md = inference__model_metadata_response__unpack(NULL, len, msg);
    if (!md)
        return;
    fnw_error e1 = { "" }, e2 = { "" };
    int rc1 = fnw_tensor_meta_check(plans[k], md, max_batch, &e1);
    int rc2 = fnw_tensor_meta_check(plans[k], md, max_batch, &e2);
    if (rc1 != rc2 || (rc1 != 0 && (rc1 != -1 || !fuzz_same_message(&e1, &e2))))
        abort();
    inference__model_metadata_response__free_unpacked(md, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!plans[0])
        setup();
    if (size < 1)
        return 0;
    size_t n = 1 + (data[0] & 3);
    int k = (data[0] >> 2) & 3;
    if (k >= NPLANS)
        k = 0;
    check_response(k, n, data + 1, size - 1);
    check_metadata(k, (data[0] & 0x10) ? 1 : (int64_t)n, data + 1, size - 1);
    return 0;
}
