/* ops/kserve/tensor/tensor_internal.h — shared by the tensor codec's files
 * (tensor_spec.c, tensor_plan.c, tensor_pack.c, tensor_unpack.c,
 * tensor_meta.c) and not part of its interface (ops/kserve/tensor/tensor.h): the
 * plan's layout and the option-text parser. */
#ifndef FNW_TENSOR_INTERNAL_H
#define FNW_TENSOR_INTERNAL_H

#include "ops/kserve/tensor/tensor.h"

struct fnw_tensor_plan {
    fnw_tensor_map in[FNW_TENSOR_MAX];
    fnw_tensor_map out[FNW_TENSOR_MAX];
    size_t nin, nout;
    const fnw_type *in_type;
    fnw_outrow *outrow;
};

/* One parsed list item before it meets a type: dtype -1 and has_dims 0
 * when the text gives none. */
typedef struct fnw_tensor_item {
    char *tensor;
    char *field;
    int dtype;
    int has_dims;
    uint32_t rank;
    int64_t dims[FNW_TENSOR_MAX_RANK];
} fnw_tensor_item;

/* Parses option text (named option in messages) into items (malloc'd
 * strings, at most FNW_TENSOR_MAX); *n the count. On failure, items already
 * parsed are freed. Dimensions are >= 1, or -1 when allow_any. */
int fnw_tensor_spec_parse(const char *text, const char *option, int allow_any, fnw_tensor_item *items,
                          size_t *n, fnw_error *err);

/* "[4,-1]" into buf (the row shape of m, or with a leading batch dim). */
void fnw_tensor_spec_format_shape(const int64_t *dims, size_t rank, char *buf, size_t n);

/* *out = the product of dims[0..rank), each >= 0; -1 when it exceeds limit. */
int fnw_tensor_spec_product(const int64_t *dims, size_t rank, int64_t limit, int64_t *out);

#endif
