/* ops/kserve/tensor/tensor_pack.c — stacking a batch of decoded rows along dimension 0
 * into the input tensors of one ModelInfer request, as raw_input_contents
 * (little-endian; BYTES elements as a 4-byte length and the bytes). Two
 * passes per tensor: check every row and size the contents, then write
 * them into one arena buffer. */
#include <string.h>

#include "ops/kserve/tensor/tensor_internal.h"

/* The field of row i that tensor m takes, checked for null and length. */
static int row_field(const fnw_tensor_plan *p, const fnw_tensor_map *m, const fnw_value *rows, size_t i,
                     const fnw_value **out, fnw_error *err)
{
    const fnw_value *r = &rows[i];
    if (r->is_null || r->kind != FNW_ROW || r->count != fnw_type_child_count(p->in_type))
        return fnw_error_set(err, "row %zu of the batch is null or not an input row", i);
    const fnw_value *f = &r->u.items[m->field_index];
    if (f->is_null)
        return fnw_error_set(err, "row %zu: field '%s' is null; tensor '%s' takes no nulls", i, m->field,
                             m->tensor);
    if (m->form == FNW_TFORM_ARRAY && f->count != (uint64_t)m->inner)
        return fnw_error_set(err, "row %zu: field '%s' has %u elements; tensor '%s' takes %lld per row", i,
                             m->field, f->count, m->tensor, (long long)m->inner);
    if (m->form == FNW_TFORM_BLOB && f->count != (uint64_t)m->inner * fnw_dtype_size(m->dtype))
        return fnw_error_set(err,
                             "row %zu: field '%s' has %u bytes; tensor '%s' takes %lld %s elements (%lld bytes) "
                             "per row",
                             i, m->field, f->count, m->tensor, (long long)m->inner, fnw_dtype_name(m->dtype),
                             (long long)(m->inner * (int64_t)fnw_dtype_size(m->dtype)));
    *out = f;
    return 0;
}

/* The elements of field f, as an array of values (SCALAR: f itself). */
static const fnw_value *elems(const fnw_tensor_map *m, const fnw_value *f)
{
    return m->form == FNW_TFORM_ARRAY ? f->u.items : f;
}

/* Pass 1: every row checked; the contents' byte size. */
static int size_tensor(const fnw_tensor_plan *p, const fnw_tensor_map *m, const fnw_value *rows, size_t n,
                       size_t *bytes, fnw_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const fnw_value *f = NULL;
        if (row_field(p, m, rows, i, &f, err) != 0)
            return -1;
        if (m->dtype != FNW_DT_BYTES)
            continue;
        const fnw_value *e = elems(m, f);
        for (int64_t j = 0; j < m->inner; j++) {
            if (e[j].is_null)
                return fnw_error_set(err, "row %zu: field '%s' has a null element; tensor '%s' takes no nulls",
                                     i, m->field, m->tensor);
            total += 4 + (size_t)e[j].count;
        }
    }
    if (m->dtype != FNW_DT_BYTES)
        total = n * (size_t)m->inner * fnw_dtype_size(m->dtype);
    *bytes = total;
    return 0;
}

static uint8_t *write_row(const fnw_tensor_map *m, const fnw_value *f, uint8_t *w, size_t i, fnw_error *err)
{
    size_t esz = fnw_dtype_size(m->dtype);
    if (m->form == FNW_TFORM_BLOB) {
        memcpy(w, f->u.bytes, f->count);
        return w + f->count;
    }
    const fnw_value *e = elems(m, f);
    for (int64_t j = 0; j < m->inner; j++) {
        if (m->dtype == FNW_DT_BYTES) {
            uint32_t len = e[j].count;
            w[0] = (uint8_t)len, w[1] = (uint8_t)(len >> 8), w[2] = (uint8_t)(len >> 16),
            w[3] = (uint8_t)(len >> 24);
            if (len)
                memcpy(w + 4, e[j].u.bytes, len);
            w += 4 + len;
            continue;
        }
        if (e[j].is_null) {
            fnw_error_set(err, "row %zu: field '%s' has a null element; tensor '%s' takes no nulls", i,
                          m->field, m->tensor);
            return NULL;
        }
        if (fnw_dtype_write(m->dtype, &e[j], w, err) != 0) {
            fnw_error_prefix(err, "row %zu: field '%s' (tensor '%s')", i, m->field, m->tensor);
            return NULL;
        }
        w += esz;
    }
    return w;
}

static int pack_tensor(const fnw_tensor_plan *p, const fnw_tensor_map *m, const fnw_value *rows, size_t n,
                       fnw_arena *a, Inference__ModelInferRequest__InferInputTensor *t,
                       ProtobufCBinaryData *raw, fnw_error *err)
{
    size_t bytes = 0;
    if (size_tensor(p, m, rows, n, &bytes, err) != 0)
        return -1;
    inference__model_infer_request__infer_input_tensor__init(t);
    t->name = m->tensor;
    t->datatype = (char *)fnw_dtype_name(m->dtype);
    t->n_shape = 1 + m->rank;
    uint8_t *buf = fnw_arena_alloc(a, bytes ? bytes : 1);
    if (!(t->shape = fnw_arena_alloc(a, t->n_shape * sizeof *t->shape)) || !buf)
        return fnw_error_set(err, "out of memory for tensor '%s' (%zu bytes)", m->tensor, bytes);
    t->shape[0] = (int64_t)n;
    memcpy(t->shape + 1, m->dims, m->rank * sizeof *t->shape);
    uint8_t *w = buf;
    for (size_t i = 0; i < n; i++)
        if (!(w = write_row(m, &rows[i].u.items[m->field_index], w, i, err)))
            return -1;
    raw->data = buf;
    raw->len = bytes;
    return 0;
}

static int add_outputs(const fnw_tensor_plan *p, fnw_arena *a, Inference__ModelInferRequest *req,
                       fnw_error *err)
{
    Inference__ModelInferRequest__InferRequestedOutputTensor *o = fnw_arena_alloc(a, p->nout * sizeof *o);
    req->outputs = fnw_arena_alloc(a, p->nout * sizeof *req->outputs);
    if (!o || !req->outputs)
        return fnw_error_set(err, "out of memory for the requested outputs");
    for (size_t k = 0; k < p->nout; k++) {
        inference__model_infer_request__infer_requested_output_tensor__init(&o[k]);
        o[k].name = p->out[k].tensor;
        req->outputs[k] = &o[k];
    }
    req->n_outputs = p->nout;
    return 0;
}

int fnw_tensor_pack(const fnw_tensor_plan *p, const fnw_value *rows, size_t n, fnw_arena *a,
                    Inference__ModelInferRequest *req, fnw_error *err)
{
    if (n == 0)
        return fnw_error_set(err, "an inference request needs at least one row");
    Inference__ModelInferRequest__InferInputTensor *t = fnw_arena_alloc(a, p->nin * sizeof *t);
    req->inputs = fnw_arena_alloc(a, p->nin * sizeof *req->inputs);
    req->raw_input_contents = fnw_arena_alloc(a, p->nin * sizeof *req->raw_input_contents);
    if (!t || !req->inputs || !req->raw_input_contents)
        return fnw_error_set(err, "out of memory for the input tensors");
    for (size_t k = 0; k < p->nin; k++) {
        if (pack_tensor(p, &p->in[k], rows, n, a, &t[k], &req->raw_input_contents[k], err) != 0)
            return -1;
        req->inputs[k] = &t[k];
    }
    req->n_inputs = p->nin;
    req->n_raw_input_contents = p->nin;
    return add_outputs(p, a, req, err);
}
