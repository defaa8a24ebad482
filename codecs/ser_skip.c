/* codecs/ser_skip.c — the generic skip: validates one encoded value of a type
 * and measures it by walking the type recursively, building nothing and
 * allocating nothing.
 *
 * It accepts exactly what decode accepts, with the same messages, and is
 * the reference the compiled skip program (skip_program.c) must agree
 * with: that program runs first on the pass-through path and falls back to
 * this walk whenever it fails, so this walk's answer and message stand.
 * Depth is bounded by FNW_TYPE_MAX_DEPTH; every count is checked against
 * the bytes left before the elements are walked.
 */
#include "codecs/ser_internal.h"

/* A fixed-width value inline, anything else through the walk. */
static inline const uint8_t *skip_elem(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, int depth)
{
    size_t w = fnw_ser_width(t);
    if (w) {
        if (FNW_SER_LEFT(r, p) < w)
            return fnw_ser_fail_short(r, p, t, w);
        return p + w;
    }
    return fnw_ser_skip_value(t, p, r, depth);
}

/* The null mask, then each field whose null bit is clear. */
static const uint8_t *skip_row(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, int depth)
{
    uint32_t n = t->nchildren;
    size_t mb = FNW_SER_MASK_BYTES(n);
    if (FNW_SER_LEFT(r, p) < mb)
        return fnw_ser_fail_short(r, p, t, mb);
    const uint8_t *mask = p;
    p += mb;
    for (uint32_t i = 0; i < n; i++) {
        if (FNW_SER_IS_NULL_BIT(mask, i))
            continue;
        if (!(p = skip_elem(t->children[i], p, r, depth + 1)))
            return NULL;
    }
    return p;
}

/* A count, then that many fixed-width elements (a byte array is a blob). */
static const uint8_t *skip_primitive_array(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r)
{
    const fnw_type *e = t->children[0];
    size_t ew = fnw_ser_width(e);
    const uint8_t *bytes = NULL;
    uint32_t count = 0;
    if (!ew)
        return fnw_ser_fail(r, p, t, "elements of kind %s are not primitive", fnw_kind_name(e->kind));
    if (e->kind == FNW_BYTE)
        return fnw_ser_read_blob(r, p, t, &bytes, &count);
    if (!(p = fnw_ser_read_count(r, p, t, ew, &count)))
        return NULL;
    return p + (size_t)count * ew;
}

/* BASIC_ARRAY, OBJECT_ARRAY: a count, then per element a flag byte (0: null)
 * and the element unless it is null. */
static const uint8_t *skip_flagged_array(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, int depth)
{
    const fnw_type *e = t->children[0];
    uint32_t count = 0;
    if (!(p = fnw_ser_read_count(r, p, t, 1, &count)))
        return NULL;
    for (uint32_t i = 0; i < count; i++) {
        if (p == r->end)
            return fnw_ser_fail_short(r, p, t, 1);
        if (*p++ == 0)
            continue; /* null element */
        if (!(p = skip_elem(e, p, r, depth + 1)))
            return NULL;
    }
    return p;
}

/* LIST: a count, then that many elements, none null. */
static const uint8_t *skip_list(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, int depth)
{
    const fnw_type *e = t->children[0];
    size_t per = fnw_ser_min_size(e, depth + 1);
    uint32_t count = 0;
    if (!(p = fnw_ser_read_count(r, p, t, per, &count)))
        return NULL;
    size_t ew = fnw_ser_width(e);
    if (ew)
        return p + (size_t)count * ew; /* count <= left / ew was checked */
    if (per == 0)
        return p; /* zero-width elements: nothing to read */
    for (uint32_t i = 0; i < count; i++)
        if (!(p = fnw_ser_skip_value(e, p, r, depth + 1)))
            return NULL;
    return p;
}

/* MAP: a count, then per entry the key, a flag byte (non-zero: null value)
 * and the value unless it is null. */
static const uint8_t *skip_map(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, int depth)
{
    const fnw_type *k = t->children[0], *v = t->children[1];
    uint32_t count = 0;
    if (!(p = fnw_ser_read_count(r, p, t, fnw_ser_min_size(k, depth + 1) + 1, &count)))
        return NULL;
    for (uint32_t i = 0; i < count; i++) {
        if (!(p = skip_elem(k, p, r, depth + 1)))
            return NULL;
        if (p == r->end)
            return fnw_ser_fail_short(r, p, t, 1);
        if (*p++ != 0)
            continue; /* null value */
        if (!(p = skip_elem(v, p, r, depth + 1)))
            return NULL;
    }
    return p;
}

static const uint8_t *skip_tuple(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, int depth)
{
    for (uint32_t i = 0; i < t->nchildren; i++)
        if (!(p = skip_elem(t->children[i], p, r, depth + 1)))
            return NULL;
    return p;
}

const uint8_t *fnw_ser_skip_value(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, int depth)
{
    if (fnw_ser_width(t))
        return skip_elem(t, p, r, depth);
    if (depth > FNW_TYPE_MAX_DEPTH)
        return fnw_ser_fail(r, p, t, "type nests deeper than %d levels", FNW_TYPE_MAX_DEPTH);
    if (!fnw_ser_check_shape(t))
        return fnw_ser_fail(r, p, t, "malformed type (missing element types or Avro schema)");
    const uint8_t *bytes = NULL;
    uint32_t len = 0;
    int is_null = 0;
    fnw_ser_local lp;
    switch (t->kind) {
    case FNW_ROW:
        return skip_row(t, p, r, depth);
    case FNW_STRING:
    case FNW_BIG_DEC:
    case FNW_PICKLED_BYTES:
        return fnw_ser_read_blob(r, p, t, &bytes, &len);
    case FNW_BIG_INT:
        return fnw_ser_read_bigint(r, p, t, &is_null, &bytes, &len);
    case FNW_LOCAL_DATE:
    case FNW_LOCAL_TIME:
    case FNW_LOCAL_DATETIME:
        return fnw_ser_read_local(r, p, t, &lp);
    case FNW_PRIMITIVE_ARRAY:
        return skip_primitive_array(t, p, r);
    case FNW_BASIC_ARRAY:
    case FNW_OBJECT_ARRAY:
        return skip_flagged_array(t, p, r, depth);
    case FNW_LIST:
        return skip_list(t, p, r, depth);
    case FNW_MAP:
        return skip_map(t, p, r, depth);
    case FNW_TUPLE:
        return skip_tuple(t, p, r, depth);
    case FNW_AVRO:
        return fnw_avro_program_walk(t->avro_program, p, r->end, r->base, r->err);
    default:
        return fnw_ser_fail(r, p, t, "unsupported type kind %d", (int)t->kind);
    }
}

int fnw_ser_skip_generic(const fnw_type *t, const uint8_t *p, size_t n, size_t *used, fnw_error *err)
{
    if (!t)
        return fnw_error_set(err, "no type to skip a value of");
    if (!p)
        p = fnw_ser_empty_input, n = 0;
    fnw_ser_rd r = { .base = p, .end = p + n, .err = err };
    const uint8_t *q = fnw_ser_skip_value(t, p, &r, 1);
    if (!q)
        return -1;
    *used = (size_t)(q - p);
    return 0;
}
