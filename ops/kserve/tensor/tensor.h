/* ops/kserve/tensor/tensor.h — the tensor codec of the kserve operation: how rows of a
 * Flink job become the input tensors of one Open Inference Protocol
 * (KServe v2 / Triton) ModelInfer request, and how the response's output
 * tensors become fields of the output rows. Pure: no I/O, no gRPC calls;
 * the messages are the protobuf-c structs of proto/inference.
 *
 * The mapping (fnw_tensor_plan_new, once at open) comes from two option
 * texts, each a comma-separated list of
 *     TENSOR[:DATATYPE][[D1,D2,...]]=FIELD
 * e.g. "x:FP32[4]=features, ids:INT64=user_id, text:BYTES=comment".
 * TENSOR is the model's tensor name (it may itself contain ':', as
 * TensorFlow's "dense/BiasAdd:0" does: only a known datatype after the last
 * ':' is taken as one). DATATYPE defaults from the field's kind (BOOLEAN
 * BOOL, BYTE INT8, SHORT INT16, INT INT32, LONG INT64, FLOAT FP32, DOUBLE
 * FP64, STRING BYTES; for arrays, their element's kind). The dimensions are
 * one row's shape, without the batch dimension, which is always first in
 * the tensor and equals the number of rows. A field is one of:
 *   - a scalar (or a STRING, or a PRIMITIVE_ARRAY<BYTE> as one BYTES
 *     element): one element per row; shape [] (the default) or all ones;
 *   - a PRIMITIVE_ARRAY, BASIC_ARRAY or LIST: prod(D) elements per row,
 *     flattened row-major; inputs must give D, outputs default to [-1];
 *   - a PRIMITIVE_ARRAY<BYTE> with INT8, UINT8, FP16 or BF16: the row's raw
 *     little-endian elements (2 bytes each for FP16/BF16).
 * Outputs may use -1 for a dimension the response decides (array fields).
 * An input field feeds any number of tensors; each output tensor fills one
 * output field, and the other output fields are copied from the input row
 * by name (outrow.h). Every failure names the option, the tensor and
 * the field.
 *
 * Per batch: fnw_tensor_pack stacks the rows along dimension 0 into
 * raw_input_contents; fnw_tensor_unpack checks the response (every output
 * present with the configured datatype, dimension 0 equal to the batch size,
 * the other dimensions as configured, contents exactly as large as the
 * shape says, from raw_output_contents or the typed contents, whichever the
 * server sent) and splits it back into one value per row and output;
 * fnw_tensor_unpack_row assembles one output row. Everything is allocated
 * from the caller's arena, per tensor rather than per row; output values may
 * borrow bytes from the response, which must outlive their encoding.
 */
#ifndef FNW_TENSOR_H
#define FNW_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/arena.h"
#include "codecs/error.h"
#include "codecs/type.h"
#include "codecs/value.h"
#include "inference/grpc_predict_v2.pb-c.h"
#include "ops/bind/outrow.h"
#include "ops/kserve/tensor/dtype.h"

#define FNW_TENSOR_MAX_RANK 8                   /* dimensions per row (the batch dimension not counted) */
#define FNW_TENSOR_MAX 64                       /* tensors per direction */
#define FNW_TENSOR_MAX_ELEMS (INT64_C(1) << 31) /* elements per row, per tensor */

/* How a field holds one row's part of a tensor. */
typedef enum fnw_tensor_form {
    FNW_TFORM_SCALAR, /* the field is one element */
    FNW_TFORM_ARRAY,  /* the field's items are the elements */
    FNW_TFORM_BLOB,   /* the field's bytes are the raw elements */
} fnw_tensor_form;

/* One tensor and the field it comes from or goes to. */
typedef struct fnw_tensor_map {
    char *tensor;
    char *field;
    fnw_dtype dtype;
    uint32_t rank;
    int64_t dims[FNW_TENSOR_MAX_RANK]; /* one row's shape; -1 = any (outputs) */
    int64_t inner;                     /* elements per row; -1 when a dim is -1 */
    uint32_t field_index;              /* input row field (inputs) */
    fnw_tensor_form form;
    fnw_kind field_kind; /* the field's kind */
    fnw_kind elem_kind;  /* each element's kind (SCALAR: field_kind) */
} fnw_tensor_map;

typedef struct fnw_tensor_plan fnw_tensor_plan;

/* inputs and outputs are the option texts (option names 'inputs' and
 * 'outputs' in messages); in and out the row types (borrowed: they must
 * outlive the plan); op names the operation. NULL with a message on failure. */
fnw_tensor_plan *fnw_tensor_plan_new(const fnw_type *in, const fnw_type *out, const char *inputs,
                                     const char *outputs, const char *op, fnw_error *err);
void fnw_tensor_plan_free(fnw_tensor_plan *p);
size_t fnw_tensor_plan_inputs(const fnw_tensor_plan *p);
size_t fnw_tensor_plan_outputs(const fnw_tensor_plan *p);
const fnw_tensor_map *fnw_tensor_plan_input(const fnw_tensor_plan *p, size_t k);
const fnw_tensor_map *fnw_tensor_plan_output(const fnw_tensor_plan *p, size_t k);

/* Fills req's inputs, raw_input_contents and (requested) outputs from the
 * n decoded input rows; the caller sets model_name, model_version, id and
 * parameters. req's arrays and bytes come from a. -1 naming the row, field
 * and tensor when a row cannot be stacked (a null row or field, an array of
 * the wrong length, a value out of the datatype's range). */
int fnw_tensor_pack(const fnw_tensor_plan *p, const fnw_value *rows, size_t n, fnw_arena *a,
                    Inference__ModelInferRequest *req, fnw_error *err);

/* Splits resp (the answer to a request of n rows) into values[k * n + i]:
 * output k of row i (values has outputs * n entries). -1 naming the tensor
 * when the response is not what the plan and the batch need. */
int fnw_tensor_unpack(const fnw_tensor_plan *p, const Inference__ModelInferResponse *resp, size_t n,
                      fnw_arena *a, fnw_value *values, fnw_error *err);

/* Output row i of the batch: in_row's copied fields and its results from
 * values (as fnw_tensor_unpack filled it for n rows). */
int fnw_tensor_unpack_row(const fnw_tensor_plan *p, const fnw_value *in_row, const fnw_value *values,
                          size_t n, size_t i, fnw_arena *a, fnw_value *row, fnw_error *err);

/* A protobuf-c allocator taking memory from a (for unpacking a response
 * into the batch's arena; protobuf_c_message_free_unpacked is then not
 * needed, and a response larger than the arena's limit fails to unpack). */
void fnw_tensor_alloc_init(ProtobufCAllocator *al, fnw_arena *a);

/* Checks every configured tensor against the model's metadata: present
 * (by name), the same datatype, the same rank (the batch dimension
 * included), a batch dimension that is -1 (or fixed at 1 when max_batch is
 * 1), and every fixed dimension equal (-1 on either side matches). The
 * message names the model, the tensor and what differs. */
int fnw_tensor_meta_check(const fnw_tensor_plan *p, const Inference__ModelMetadataResponse *md,
                          int64_t max_batch, fnw_error *err);

#endif
