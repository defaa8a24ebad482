/* ops/bind/outrow.c — mapping and assembling an operation's output ROW
 * from copied input fields and result fields (rules in outrow.h). */
#include "ops/bind/outrow.h"

#include <stdlib.h>
#include <string.h>

#define FROM_RESULT UINT32_MAX

struct fnw_outrow {
    const fnw_type *in, *out;
    size_t nresults;
    uint32_t *slot; /* [nresults] output index of each result */
    uint32_t *src;  /* [out fields] input index, or FROM_RESULT */
};

void fnw_outrow_free(fnw_outrow *r)
{
    if (!r)
        return;
    free(r->slot);
    free(r->src);
    free(r);
}

size_t fnw_outrow_results(const fnw_outrow *r)
{
    return r->nresults;
}

uint32_t fnw_outrow_slot(const fnw_outrow *r, size_t k)
{
    return r->slot[k];
}

const fnw_type *fnw_outrow_result_type(const fnw_outrow *r, size_t k)
{
    return r->out->children[r->slot[k]];
}

const char *fnw_outrow_result_name(const fnw_outrow *r, size_t k)
{
    return r->out->names[r->slot[k]];
}

static int64_t find(const fnw_type *row, const char *name)
{
    for (uint32_t i = 0; i < row->nchildren; i++)
        if (strcmp(row->names[i], name) == 0)
            return i;
    return -1;
}

static int map_results(fnw_outrow *r, const char *const *results, const char *op, fnw_error *err)
{
    for (size_t k = 0; k < r->nresults; k++) {
        const char *name = results[k] ? results[k] : "";
        int64_t i = find(r->out, name);
        if (i < 0) {
            char ty[384];
            fnw_type_format(r->out, ty, sizeof ty);
            return fnw_error_set(err,
                                 "operation '%s' fills result field '%.80s', which the output type %s does "
                                 "not have",
                                 op, name, ty);
        }
        if (r->src[i] == FROM_RESULT)
            return fnw_error_set(err, "operation '%s': result field '%.80s' is named twice", op, name);
        r->src[i] = FROM_RESULT;
        r->slot[k] = (uint32_t)i;
    }
    return 0;
}

/* Output field i (not a result) from the input field of its name. */
static int map_copy(fnw_outrow *r, uint32_t i, const char *op, fnw_error *err)
{
    const char *name = r->out->names[i];
    int64_t j = find(r->in, name);
    if (j < 0) {
        char ty[384];
        fnw_type_format(r->in, ty, sizeof ty);
        return fnw_error_set(err,
                             "operation '%s': output field '%.80s' is neither one of its results nor an "
                             "input field (input type %s)",
                             op, name, ty);
    }
    if (!fnw_type_equal(r->in->children[j], r->out->children[i])) {
        char a[256], b[256];
        fnw_type_format(r->out->children[i], a, sizeof a);
        fnw_type_format(r->in->children[j], b, sizeof b);
        return fnw_error_set(err,
                             "operation '%s': output field '%.80s' has type %s but the input field it is "
                             "copied from has type %s",
                             op, name, a, b);
    }
    r->src[i] = (uint32_t)j;
    return 0;
}

static int map_fields(fnw_outrow *r, const char *const *results, const char *op, fnw_error *err)
{
    const fnw_type *out = r->out;
    for (uint32_t i = 0; i < out->nchildren; i++)
        for (uint32_t k = 0; k < i; k++)
            if (strcmp(out->names[i], out->names[k]) == 0)
                return fnw_error_set(err, "operation '%s': the output type names field '%.80s' twice", op,
                                     out->names[i]);
    for (uint32_t i = 0; i < out->nchildren; i++)
        r->src[i] = 0;
    if (map_results(r, results, op, err) != 0)
        return -1;
    for (uint32_t i = 0; i < out->nchildren; i++)
        if (r->src[i] != FROM_RESULT && map_copy(r, i, op, err) != 0)
            return -1;
    return 0;
}

fnw_outrow *fnw_outrow_new(const fnw_type *in, const fnw_type *out, const char *const *results,
                           size_t nresults, const char *op, fnw_error *err)
{
    op = op ? op : "?";
    if (!in || in->kind != FNW_ROW || !out || out->kind != FNW_ROW) {
        fnw_error_set(err, "operation '%s' takes a ROW and gives a ROW; the %s type is %s", op,
                      (!in || in->kind != FNW_ROW) ? "input" : "output",
                      (!in || in->kind != FNW_ROW) ? (in ? fnw_kind_name(in->kind) : "missing")
                                                   : (out ? fnw_kind_name(out->kind) : "missing"));
        return NULL;
    }
    fnw_outrow *r = calloc(1, sizeof *r);
    if (r) {
        r->in = in;
        r->out = out;
        r->nresults = nresults;
        r->slot = calloc(nresults ? nresults : 1, sizeof *r->slot);
        r->src = calloc(out->nchildren ? out->nchildren : 1, sizeof *r->src);
    }
    if (!r || !r->slot || !r->src) {
        fnw_outrow_free(r);
        fnw_error_set(err, "operation '%s': out of memory", op);
        return NULL;
    }
    if (map_fields(r, results, op, err) != 0) {
        fnw_outrow_free(r);
        return NULL;
    }
    return r;
}

int fnw_outrow_assemble(const fnw_outrow *r, const fnw_value *in, fnw_arena *a, fnw_value *row, fnw_error *err)
{
    const fnw_type *out = r->out;
    uint32_t n = out->nchildren;
    if (!in->is_null && (in->kind != FNW_ROW || in->count != r->in->nchildren))
        return fnw_error_set(err, "the input row does not match the input type");
    fnw_value *items = fnw_arena_alloc(a, n ? n * sizeof *items : 1);
    if (!items)
        return fnw_error_set(err, "out of memory (the batch's arena limit) building an output row");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = r->src[i];
        if (s == FROM_RESULT || in->is_null)
            items[i] = fnw_value_null(out->children[i]->kind);
        else
            items[i] = in->u.items[s];
    }
    *row = fnw_value_row(in->is_null ? FNW_INSERT : (fnw_row_kind)in->row_kind, items, n);
    return 0;
}
