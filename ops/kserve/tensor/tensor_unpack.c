/* ops/kserve/tensor/tensor_unpack.c — splitting a ModelInfer response back into rows:
 * each configured output tensor is found by name, its datatype and shape
 * checked against the plan and the batch (dimension 0 = rows), its contents
 * (raw_output_contents or the typed lists, whichever the server sent)
 * checked to be exactly as large as the shape before anything is allocated,
 * then cut into one value per row. A hostile response fails with a message
 * naming the tensor; it never makes us read past its bytes or allocate
 * more than its contents justify. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops/kserve/tensor/tensor_internal.h"

/* Where one output's elements are. */
typedef struct src {
    const fnw_tensor_map *m;
    const ProtobufCBinaryData *raw;          /* raw contents, or NULL */
    const Inference__InferTensorContents *c; /* typed contents, or NULL */
    const uint8_t **blob;                    /* BYTES raw: element starts (arena) */
    uint32_t *blob_len;
} src;

static const Inference__ModelInferResponse__InferOutputTensor *find_output(
    const Inference__ModelInferResponse *r, const char *name, size_t *j)
{
    for (size_t i = 0; i < r->n_outputs; i++)
        if (r->outputs[i] && r->outputs[i]->name && strcmp(r->outputs[i]->name, name) == 0) {
            *j = i;
            return r->outputs[i];
        }
    return NULL;
}

/* Checks o's shape against m and n; *count = the elements of the whole tensor. */
static int check_shape(const fnw_tensor_map *m, const Inference__ModelInferResponse__InferOutputTensor *o,
                       size_t n, int64_t *count, fnw_error *err)
{
    char have[160];
    fnw_tensor_spec_format_shape(o->shape, o->n_shape, have, sizeof have);
    if (o->n_shape != 1 + (size_t)m->rank)
        return fnw_error_set(err,
                             "output tensor '%s' has shape %s: %zu dimensions, expected %u (the batch, then "
                             "one row's)",
                             m->tensor, have, o->n_shape, 1 + m->rank);
    if (o->shape[0] != (int64_t)n)
        return fnw_error_set(err,
                             "output tensor '%s' has shape %s: dimension 0 is %" PRId64 " but the batch has "
                             "%zu rows",
                             m->tensor, have, o->shape[0], n);
    for (uint32_t d = 0; d < m->rank; d++)
        if (o->shape[d + 1] < 0 || (m->dims[d] >= 0 && o->shape[d + 1] != m->dims[d])) {
            char want[160];
            fnw_tensor_spec_format_shape(m->dims, m->rank, want, sizeof want);
            return fnw_error_set(err, "output tensor '%s' has shape %s; one row's shape must be %s",
                                 m->tensor, have, want);
        }
    if (fnw_tensor_spec_product(o->shape, o->n_shape, INT64_MAX / 16, count) != 0)
        return fnw_error_set(err, "output tensor '%s' has shape %s, too large to be real", m->tensor, have);
    return 0;
}

/* For BYTES raw contents: the start and length of each of count elements,
 * which must fill raw exactly. */
static int index_bytes(src *s, int64_t count, fnw_arena *a, fnw_error *err)
{
    /* protobuf-c leaves data NULL for empty contents: no arithmetic on it */
    const uint8_t *p = s->raw->len ? s->raw->data : (const uint8_t *)"", *end = p + s->raw->len;
    if ((uint64_t)count > s->raw->len / 4)
        return fnw_error_set(err,
                             "output tensor '%s': raw contents are %zu bytes, too short for %" PRId64
                             " BYTES elements",
                             s->m->tensor, s->raw->len, count);
    s->blob = fnw_arena_alloc(a, (size_t)count * sizeof *s->blob + 1);
    s->blob_len = fnw_arena_alloc(a, (size_t)count * sizeof *s->blob_len + 1);
    if (!s->blob || !s->blob_len)
        return fnw_error_set(err, "out of memory for output tensor '%s'", s->m->tensor);
    for (int64_t e = 0; e < count; e++) {
        if (end - p < 4)
            return fnw_error_set(err,
                                 "output tensor '%s': raw contents end inside element %" PRId64 "'s length",
                                 s->m->tensor, e);
        uint32_t len = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        if ((size_t)(end - p - 4) < len)
            return fnw_error_set(err,
                                 "output tensor '%s': BYTES element %" PRId64
                                 " says %u bytes, past the end of "
                                 "the raw contents",
                                 s->m->tensor, e, len);
        s->blob[e] = p + 4;
        s->blob_len[e] = len;
        p += 4 + (size_t)len;
    }
    if (p != end)
        return fnw_error_set(err,
                             "output tensor '%s': raw contents have %zu bytes after its %" PRId64 " elements",
                             s->m->tensor, (size_t)(end - p), count);
    return 0;
}

/* The typed list for m's datatype and its length. */
static size_t typed_len(const fnw_tensor_map *m, const Inference__InferTensorContents *c)
{
    switch (m->dtype) {
    case FNW_DT_BOOL:
        return c->n_bool_contents;
    case FNW_DT_INT8:
    case FNW_DT_INT16:
    case FNW_DT_INT32:
        return c->n_int_contents;
    case FNW_DT_INT64:
        return c->n_int64_contents;
    case FNW_DT_UINT8:
    case FNW_DT_UINT16:
    case FNW_DT_UINT32:
        return c->n_uint_contents;
    case FNW_DT_UINT64:
        return c->n_uint64_contents;
    case FNW_DT_FP32:
        return c->n_fp32_contents;
    case FNW_DT_FP64:
        return c->n_fp64_contents;
    case FNW_DT_BYTES:
        return c->n_bytes_contents;
    default:
        return 0;
    }
}

static int locate(src *s, const Inference__ModelInferResponse *r, size_t j,
                  const Inference__ModelInferResponse__InferOutputTensor *o, int64_t count, fnw_arena *a,
                  fnw_error *err)
{
    const fnw_tensor_map *m = s->m;
    if (r->n_raw_output_contents > 0) {
        if (j >= r->n_raw_output_contents)
            return fnw_error_set(err,
                                 "output tensor '%s' has no raw contents (the response has %zu for %zu outputs)",
                                 m->tensor, r->n_raw_output_contents, r->n_outputs);
        s->raw = &r->raw_output_contents[j];
        if (m->dtype == FNW_DT_BYTES)
            return index_bytes(s, count, a, err);
        size_t esz = fnw_dtype_size(m->dtype);
        if ((uint64_t)count > SIZE_MAX / esz || s->raw->len != (size_t)count * esz)
            return fnw_error_set(err,
                                 "output tensor '%s': raw contents are %zu bytes but %" PRId64 " %s elements "
                                 "need %" PRIu64,
                                 m->tensor, s->raw->len, count, fnw_dtype_name(m->dtype),
                                 (uint64_t)count * esz);
        return 0;
    }
    if (fnw_dtype_is_raw_only(m->dtype))
        return fnw_error_set(err,
                             "output tensor '%s' is %s, which only raw contents carry; the response has none",
                             m->tensor, fnw_dtype_name(m->dtype));
    size_t have = o->contents ? typed_len(m, o->contents) : 0;
    if ((uint64_t)count != have)
        return fnw_error_set(err,
                             "output tensor '%s': its contents have %zu %s elements but its shape needs %" PRId64,
                             m->tensor, have, fnw_dtype_name(m->dtype), count);
    s->c = o->contents;
    return 0;
}

/* Typed INT8/INT16/UINT8/UINT16 lists are wider than their datatype. */
static int check_narrow(const fnw_tensor_map *m, int64_t x, int64_t e, fnw_error *err)
{
    static const int64_t lo[FNW_DT_COUNT] = { [FNW_DT_INT8] = INT8_MIN, [FNW_DT_INT16] = INT16_MIN };
    static const int64_t hi[FNW_DT_COUNT] = {
        [FNW_DT_INT8] = INT8_MAX, [FNW_DT_INT16] = INT16_MAX, [FNW_DT_UINT8] = UINT8_MAX, [FNW_DT_UINT16] = UINT16_MAX
    };
    if (hi[m->dtype] && (x < lo[m->dtype] || x > hi[m->dtype]))
        return fnw_error_set(err, "output tensor '%s': element %" PRId64 " (%" PRId64 ") is out of %s's range",
                             m->tensor, e, x, fnw_dtype_name(m->dtype));
    return 0;
}

static int typed_elem(const src *s, int64_t e, fnw_elem *out, fnw_error *err)
{
    const Inference__InferTensorContents *c = s->c;
    switch (s->m->dtype) {
    case FNW_DT_BOOL:
        out->tag = FNW_ELEM_INT, out->v.i = c->bool_contents[e] != 0;
        return 0;
    case FNW_DT_INT8:
    case FNW_DT_INT16:
    case FNW_DT_INT32:
        out->tag = FNW_ELEM_INT, out->v.i = c->int_contents[e];
        return check_narrow(s->m, out->v.i, e, err);
    case FNW_DT_INT64:
        out->tag = FNW_ELEM_INT, out->v.i = c->int64_contents[e];
        return 0;
    case FNW_DT_UINT8:
    case FNW_DT_UINT16:
    case FNW_DT_UINT32:
        out->tag = FNW_ELEM_UINT, out->v.u = c->uint_contents[e];
        return check_narrow(s->m, (int64_t)out->v.u, e, err);
    case FNW_DT_UINT64:
        out->tag = FNW_ELEM_UINT, out->v.u = c->uint64_contents[e];
        return 0;
    case FNW_DT_FP32:
        out->tag = FNW_ELEM_FLOAT, out->v.d = c->fp32_contents[e];
        return 0;
    case FNW_DT_FP64:
        out->tag = FNW_ELEM_FLOAT, out->v.d = c->fp64_contents[e];
        return 0;
    default:
        return fnw_error_set(err, "output tensor '%s' has no typed contents", s->m->tensor);
    }
}

static int elem_at(const src *s, int64_t e, fnw_elem *out, fnw_error *err)
{
    const fnw_tensor_map *m = s->m;
    if (m->dtype == FNW_DT_BYTES) {
        out->tag = FNW_ELEM_BYTES;
        if (s->raw) {
            out->v.b.p = s->blob[e];
            out->v.b.n = s->blob_len[e];
            return 0;
        }
        const ProtobufCBinaryData *b = &s->c->bytes_contents[e];
        if (b->len > UINT32_MAX)
            return fnw_error_set(err, "output tensor '%s': element %" PRId64 " is over 4 GiB", m->tensor, e);
        out->v.b.p = b->len ? b->data : (const uint8_t *)""; /* never NULL, as raw elements */
        out->v.b.n = (uint32_t)b->len;
        return 0;
    }
    if (s->raw) {
        *out = fnw_dtype_read(m->dtype, s->raw->data + (size_t)e * fnw_dtype_size(m->dtype));
        return 0;
    }
    return typed_elem(s, e, out, err);
}

static int elem_value(const src *s, int64_t e, fnw_value *out, fnw_error *err)
{
    fnw_elem el;
    if (elem_at(s, e, &el, err) != 0)
        return -1;
    if (fnw_dtype_to_value(s->m->dtype, &el, s->m->elem_kind, out, err) != 0)
        return fnw_error_prefix(err, "output tensor '%s', element %" PRId64, s->m->tensor, e);
    return 0;
}

/* BLOB form: one row's raw elements as PRIMITIVE_ARRAY<BYTE> bytes. Typed
 * contents (INT8, UINT8) are narrowed into an arena buffer first. */
static int fill_blob(const src *s, size_t n, int64_t inner, fnw_arena *a, fnw_value *vals, fnw_error *err)
{
    size_t esz = fnw_dtype_size(s->m->dtype), row = (size_t)inner * esz;
    const uint8_t *base = s->raw ? s->raw->data : NULL;
    if (!base) {
        uint8_t *buf = fnw_arena_alloc(a, n * row + 1);
        if (!buf)
            return fnw_error_set(err, "out of memory for output tensor '%s'", s->m->tensor);
        for (size_t e = 0; e < n * row; e++) {
            fnw_elem el;
            if (typed_elem(s, (int64_t)e, &el, err) != 0)
                return -1;
            buf[e] = (uint8_t)(el.tag == FNW_ELEM_UINT ? el.v.u : (uint64_t)el.v.i);
        }
        base = buf;
    }
    for (size_t i = 0; i < n; i++)
        vals[i] = fnw_value_bytes(FNW_PRIMITIVE_ARRAY, base + i * row, (uint32_t)row);
    return 0;
}

static int fill(const src *s, size_t n, int64_t count, fnw_arena *a, fnw_value *vals, fnw_error *err)
{
    const fnw_tensor_map *m = s->m;
    int64_t inner = count / (int64_t)n;
    if (inner > FNW_TENSOR_MAX_ELEMS ||
        (m->form == FNW_TFORM_BLOB && inner * (int64_t)fnw_dtype_size(m->dtype) > (int64_t)UINT32_MAX))
        return fnw_error_set(err,
                             "output tensor '%s' has %" PRId64 " elements per row, more than a field holds",
                             m->tensor, inner);
    if (m->form == FNW_TFORM_BLOB)
        return fill_blob(s, n, inner, a, vals, err);
    if (m->form == FNW_TFORM_SCALAR) {
        for (size_t i = 0; i < n; i++)
            if (elem_value(s, (int64_t)i, &vals[i], err) != 0)
                return -1;
        return 0;
    }
    fnw_value *items = fnw_arena_alloc(a, (size_t)count * sizeof *items + 1);
    if (!items)
        return fnw_error_set(err, "out of memory for output tensor '%s' (%" PRId64 " elements)", m->tensor,
                             count);
    for (int64_t e = 0; e < count; e++)
        if (elem_value(s, e, &items[e], err) != 0)
            return -1;
    for (size_t i = 0; i < n; i++)
        vals[i] = fnw_value_items(m->field_kind, items + (size_t)inner * i, (uint32_t)inner);
    return 0;
}

static int unpack_one(const fnw_tensor_map *m, const Inference__ModelInferResponse *r, size_t n, fnw_arena *a,
                      fnw_value *vals, fnw_error *err)
{
    size_t j = 0;
    const Inference__ModelInferResponse__InferOutputTensor *o = find_output(r, m->tensor, &j);
    if (!o)
        return fnw_error_set(err, "the response has no output tensor '%s' (it has %zu outputs)", m->tensor,
                             r->n_outputs);
    const char *dt = fnw_dtype_name(m->dtype);
    if (!o->datatype || strcmp(o->datatype, dt) != 0)
        return fnw_error_set(err, "output tensor '%s' is %.32s; the option 'outputs' says %s", m->tensor,
                             o->datatype ? o->datatype : "(none)", dt);
    int64_t count;
    src s = { .m = m };
    if (check_shape(m, o, n, &count, err) != 0 || locate(&s, r, j, o, count, a, err) != 0)
        return -1;
    return fill(&s, n, count, a, vals, err);
}

int fnw_tensor_unpack(const fnw_tensor_plan *p, const Inference__ModelInferResponse *resp, size_t n,
                      fnw_arena *a, fnw_value *values, fnw_error *err)
{
    if (n == 0)
        return fnw_error_set(err, "a response for no rows");
    for (size_t k = 0; k < p->nout; k++)
        if (unpack_one(&p->out[k], resp, n, a, values + k * n, err) != 0)
            return -1;
    return 0;
}

int fnw_tensor_unpack_row(const fnw_tensor_plan *p, const fnw_value *in_row, const fnw_value *values,
                          size_t n, size_t i, fnw_arena *a, fnw_value *row, fnw_error *err)
{
    if (fnw_outrow_assemble(p->outrow, in_row, a, row, err) != 0)
        return -1;
    for (size_t k = 0; k < p->nout; k++)
        row->u.items[fnw_outrow_slot(p->outrow, k)] = values[k * n + i];
    return 0;
}
