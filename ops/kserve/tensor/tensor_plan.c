/* ops/kserve/tensor/tensor_plan.c — the kserve operation's tensor mapping planned
 * once at open: each parsed item (tensor_spec.c) meets its row field's type,
 * which fixes its datatype, its form (scalar, array or raw bytes) and its
 * per-row element count; output fields get the output row assembly. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kserve/tensor/tensor_internal.h"

static int is_array_kind(fnw_kind k)
{
    return k == FNW_PRIMITIVE_ARRAY || k == FNW_BASIC_ARRAY || k == FNW_LIST;
}

static int blob_dtype(int d)
{
    return d == FNW_DT_INT8 || d == FNW_DT_UINT8 || d == FNW_DT_FP16 || d == FNW_DT_BF16;
}

/* Form and element kind of a PRIMITIVE_ARRAY<BYTE> field: one BYTES element
 * (the default) or raw elements. */
static int plan_byte_array(fnw_tensor_map *m, const fnw_tensor_item *it, const char *option, fnw_error *err)
{
    m->dtype = it->dtype < 0 ? FNW_DT_BYTES : (fnw_dtype)it->dtype;
    if (m->dtype == FNW_DT_BYTES) {
        m->form = FNW_TFORM_SCALAR;
        m->elem_kind = FNW_PRIMITIVE_ARRAY;
        return 0;
    }
    if (!blob_dtype((int)m->dtype))
        return fnw_error_set(err,
                             "option '%s': tensor '%s' is %s, which field '%s' (PRIMITIVE_ARRAY<BYTE>) cannot "
                             "carry; it carries BYTES, or INT8, UINT8, FP16, BF16 as raw bytes",
                             option, m->tensor, fnw_dtype_name(m->dtype), m->field);
    m->form = FNW_TFORM_BLOB;
    m->elem_kind = FNW_BYTE;
    return 0;
}

static int plan_form(fnw_tensor_map *m, const fnw_tensor_item *it, const fnw_type *ft, int is_input,
                     const char *option, fnw_error *err)
{
    char tname[128];
    fnw_type_format(ft, tname, sizeof tname);
    m->field_kind = fnw_type_kind(ft);
    fnw_kind ek = m->field_kind;
    m->form = FNW_TFORM_SCALAR;
    if (is_array_kind(m->field_kind)) {
        ek = fnw_type_kind(fnw_type_child(ft, 0));
        if (m->field_kind == FNW_PRIMITIVE_ARRAY && ek == FNW_BYTE)
            return plan_byte_array(m, it, option, err);
        m->form = FNW_TFORM_ARRAY;
    }
    m->elem_kind = ek;
    int d = it->dtype >= 0 ? it->dtype : fnw_dtype_default_for(ek);
    if (d < 0)
        return fnw_error_set(err,
                             "option '%s': tensor '%s' maps field '%s' of type %s, which holds no tensor "
                             "datatype",
                             option, m->tensor, m->field, tname);
    m->dtype = (fnw_dtype)d;
    if (fnw_dtype_is_raw_only(m->dtype))
        return fnw_error_set(err,
                             "option '%s': tensor '%s' is %s, which only a PRIMITIVE_ARRAY<BYTE> field carries "
                             "(field '%s' is %s)",
                             option, m->tensor, fnw_dtype_name(m->dtype), m->field, tname);
    if (!fnw_dtype_fits_kind(m->dtype, ek, is_input) ||
        (ek == FNW_PRIMITIVE_ARRAY && m->form == FNW_TFORM_ARRAY))
        return fnw_error_set(err, "option '%s': tensor '%s' is %s, which field '%s' of type %s cannot %s",
                             option, m->tensor, fnw_dtype_name(m->dtype), m->field, tname,
                             is_input ? "give" : "hold");
    return 0;
}

static int plan_dims(fnw_tensor_map *m, const fnw_tensor_item *it, int is_input, const char *option,
                     fnw_error *err)
{
    m->rank = it->rank;
    memcpy(m->dims, it->dims, sizeof m->dims);
    if (!it->has_dims && m->form != FNW_TFORM_SCALAR) {
        if (is_input)
            return fnw_error_set(err,
                                 "option '%s': tensor '%s' takes field '%s', an array: give one row's shape, "
                                 "e.g. %s[4]=%s",
                                 option, m->tensor, m->field, m->tensor, m->field);
        m->rank = 1;
        m->dims[0] = -1;
    }
    m->inner = -1;
    for (uint32_t i = 0; i < m->rank; i++)
        if (m->dims[i] < 0)
            return m->form == FNW_TFORM_SCALAR
                       ? fnw_error_set(err,
                                       "option '%s': tensor '%s' has a -1 dimension but field '%s' holds "
                                       "one element per row",
                                       option, m->tensor, m->field)
                       : 0;
    if (fnw_tensor_spec_product(m->dims, m->rank, FNW_TENSOR_MAX_ELEMS, &m->inner) != 0)
        return fnw_error_set(err, "option '%s': tensor '%s' has more than %" PRId64 " elements per row",
                             option, m->tensor, FNW_TENSOR_MAX_ELEMS);
    if (m->form == FNW_TFORM_SCALAR && m->inner != 1)
        return fnw_error_set(err,
                             "option '%s': tensor '%s' has %lld elements per row but field '%s' holds one",
                             option, m->tensor, (long long)m->inner, m->field);
    return 0;
}

static int plan_one(fnw_tensor_map *m, fnw_tensor_item *it, const fnw_type *row, int is_input,
                    const char *option, fnw_error *err)
{
    m->tensor = it->tensor;
    m->field = it->field;
    it->tensor = it->field = NULL; /* the map owns them now */
    int64_t fi = fnw_type_find_field(row, m->field, strlen(m->field));
    if (fi < 0) {
        char tname[256];
        fnw_type_format(row, tname, sizeof tname);
        return fnw_error_set(err,
                             "option '%s': tensor '%s' names field '%s', which the %s row %s does not have",
                             option, m->tensor, m->field, is_input ? "input" : "output", tname);
    }
    m->field_index = (uint32_t)fi;
    if (plan_form(m, it, fnw_type_child(row, (size_t)fi), is_input, option, err) != 0)
        return -1;
    return plan_dims(m, it, is_input, option, err);
}

static int plan_list(fnw_tensor_map *maps, size_t *count, const char *text, const fnw_type *row, int is_input,
                     fnw_error *err)
{
    const char *option = is_input ? "inputs" : "outputs";
    fnw_tensor_item *items = calloc(FNW_TENSOR_MAX, sizeof *items);
    size_t n;
    if (!items)
        return fnw_error_set(err, "out of memory");
    if (fnw_tensor_spec_parse(text, option, !is_input, items, &n, err) != 0) {
        free(items);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) {
            rc = plan_one(&maps[i], &items[i], row, is_input, option, err);
            *count = i + 1;
        }
        for (size_t j = 0; rc == 0 && j < i; j++)
            if (strcmp(maps[j].tensor, maps[i].tensor) == 0)
                rc = fnw_error_set(err, "option '%s' lists tensor '%s' twice", option, maps[i].tensor);
        free(items[i].tensor);
        free(items[i].field);
    }
    free(items);
    return rc;
}

fnw_tensor_plan *fnw_tensor_plan_new(const fnw_type *in, const fnw_type *out, const char *inputs,
                                     const char *outputs, const char *op, fnw_error *err)
{
    if (fnw_type_kind(in) != FNW_ROW || fnw_type_kind(out) != FNW_ROW) {
        fnw_error_set(err,
                      "operation '%s' maps row fields to tensors: its input and output types must be ROWs",
                      op);
        return NULL;
    }
    fnw_tensor_plan *p = calloc(1, sizeof *p);
    if (!p) {
        fnw_error_set(err, "out of memory");
        return NULL;
    }
    p->in_type = in;
    const char *names[FNW_TENSOR_MAX];
    if (plan_list(p->in, &p->nin, inputs ? inputs : "", in, 1, err) != 0 ||
        plan_list(p->out, &p->nout, outputs ? outputs : "", out, 0, err) != 0) {
        fnw_error_prefix(err, "operation '%s'", op);
        fnw_tensor_plan_free(p);
        return NULL;
    }
    for (size_t k = 0; k < p->nout; k++)
        names[k] = p->out[k].field;
    if (!(p->outrow = fnw_outrow_new(in, out, names, p->nout, op, err))) {
        fnw_tensor_plan_free(p);
        return NULL;
    }
    return p;
}

void fnw_tensor_plan_free(fnw_tensor_plan *p)
{
    if (!p)
        return;
    for (size_t k = 0; k < p->nin; k++) {
        free(p->in[k].tensor);
        free(p->in[k].field);
    }
    for (size_t k = 0; k < p->nout; k++) {
        free(p->out[k].tensor);
        free(p->out[k].field);
    }
    fnw_outrow_free(p->outrow);
    free(p);
}

size_t fnw_tensor_plan_inputs(const fnw_tensor_plan *p)
{
    return p->nin;
}

size_t fnw_tensor_plan_outputs(const fnw_tensor_plan *p)
{
    return p->nout;
}

const fnw_tensor_map *fnw_tensor_plan_input(const fnw_tensor_plan *p, size_t k)
{
    return k < p->nin ? &p->in[k] : NULL;
}

const fnw_tensor_map *fnw_tensor_plan_output(const fnw_tensor_plan *p, size_t k)
{
    return k < p->nout ? &p->out[k] : NULL;
}
