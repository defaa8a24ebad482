/* codecs/ser_decode.c — decode: one encoded value of a type into an fnw_value.
 *
 * Strings, blobs, BIG_INT magnitudes and AVRO datums point into the input
 * (the caller keeps it alive, or copies the value); the item arrays of
 * ROW, TUPLE and the containers come from the caller's arena, and only
 * after the count has been checked against the bytes left. Decode accepts
 * exactly what the generic skip (ser_skip.c) accepts, with the same messages,
 * so a record that passed skip decodes. One helper per kind of encoding,
 * dispatched by dec_value.
 */
#include "codecs/ser_internal.h"

#include <string.h>

static const uint8_t *dec_value(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, fnw_value *v,
                                int depth);

/* n items from the arena; NULL with a message when n > 0 and there is no
 * arena or it is full (NULL without one when n == 0). */
static fnw_value *alloc_items(const fnw_ser_rd *r, const uint8_t *at, const fnw_type *t, uint64_t n)
{
    if (n == 0)
        return NULL;
    if (!r->arena) {
        fnw_ser_fail(r, at, t, "decoding a container needs an arena");
        return NULL;
    }
    fnw_value *items = n > SIZE_MAX / sizeof *items ? NULL
                                                    : fnw_arena_alloc(r->arena, (size_t)n * sizeof *items);
    if (!items && n <= SIZE_MAX / sizeof *items && fnw_arena_within_limit(r->arena, (size_t)n * sizeof *items))
        fnw_ser_fail(r, at, t, "out of memory allocating %llu values", (unsigned long long)n);
    else if (!items)
        fnw_ser_fail(r, at, t,
                     "arena limit reached allocating %llu values (a value may take at most %zu "
                     "bytes of memory to decode, 64 KiB plus %u per input byte)",
                     (unsigned long long)n, fnw_ser_decode_budget(FNW_SER_LEFT(r, r->base)),
                     FNW_SER_DECODE_BYTES_PER_INPUT_BYTE);
    return items;
}

/* A null item of type t (a ROW field, array element or MAP value). */
static inline fnw_value null_of(const fnw_type *t)
{
    return (fnw_value){ .kind = (uint8_t)t->kind, .is_null = 1 };
}

static inline const uint8_t *dec_scalar(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, fnw_value *v)
{
    size_t w = fnw_ser_width(t);
    if (FNW_SER_LEFT(r, p) < w)
        return fnw_ser_fail_short(r, p, t, w);
    switch (t->kind) {
    case FNW_BYTE:
        v->u.i = (int8_t)p[0];
        break;
    case FNW_BOOLEAN:
        v->u.i = p[0] != 0;
        break;
    case FNW_SHORT:
        v->u.i = (int16_t)fnw_load_be16(p);
        break;
    case FNW_CHAR:
        v->u.i = fnw_load_be16(p);
        break;
    case FNW_INT:
    case FNW_SQL_DATE:
    case FNW_SQL_TIME:
        v->u.i = (int32_t)fnw_load_be32(p);
        break;
    case FNW_LONG:
        v->u.i = (int64_t)fnw_load_be64(p);
        break;
    case FNW_SQL_TIMESTAMP:
    case FNW_LOCAL_ZONED_TIMESTAMP:
        v->u.i = (int64_t)fnw_load_be64(p);
        if (w == 12)
            v->count = fnw_load_be32(p + 8); /* nanos of the ms, as the JVM wrote them */
        break;
    case FNW_FLOAT: {
        uint32_t b = fnw_load_be32(p);
        memcpy(&v->u.f, &b, 4);
        break;
    }
    case FNW_DOUBLE: {
        uint64_t b = fnw_load_be64(p);
        memcpy(&v->u.d, &b, 8);
        break;
    }
    case FNW_INSTANT:
        v->u.instant.seconds = (int64_t)fnw_load_be64(p);
        v->u.instant.nanos = (int32_t)fnw_load_be32(p + 8);
        if (v->u.instant.seconds == INT64_MIN && v->u.instant.nanos == INT32_MIN) {
            v->is_null = 1;
            v->u.instant.seconds = 0;
            v->u.instant.nanos = 0;
        }
        break;
    default:
        break;
    }
    return p + w;
}

/* The null mask (its first two bits are the row kind), then the fields. */
static const uint8_t *dec_row(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, fnw_value *v,
                              int depth)
{
    uint32_t n = t->nchildren;
    size_t mb = FNW_SER_MASK_BYTES(n);
    if (FNW_SER_LEFT(r, p) < mb)
        return fnw_ser_fail_short(r, p, t, mb);
    const uint8_t *mask = p;
    v->row_kind = (uint8_t)(((mask[0] >> 7) & 1) | (((mask[0] >> 6) & 1) << 1));
    v->count = n;
    fnw_value *items = alloc_items(r, p, t, n);
    if (n && !items)
        return NULL;
    v->u.items = items;
    p += mb;
    for (uint32_t i = 0; i < n; i++) {
        const fnw_type *c = t->children[i];
        if (FNW_SER_IS_NULL_BIT(mask, i)) {
            items[i] = null_of(c);
            continue;
        }
        if (!(p = dec_value(c, p, r, &items[i], depth + 1)))
            return NULL;
    }
    return p;
}

static const uint8_t *dec_big_int(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, fnw_value *v)
{
    int is_null = 0;
    p = fnw_ser_read_bigint(r, p, t, &is_null, &v->u.bytes, &v->count);
    v->is_null = (uint8_t)is_null;
    return p;
}

static const uint8_t *dec_local(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, fnw_value *v)
{
    fnw_ser_local lp;
    if (!(p = fnw_ser_read_local(r, p, t, &lp)))
        return NULL;
    v->is_null = (uint8_t)(t->kind == FNW_LOCAL_TIME ? lp.time_null : lp.date_null);
    v->u.local.year = lp.year;
    v->u.local.month = lp.month;
    v->u.local.day = lp.day;
    v->u.local.hour = lp.hour;
    v->u.local.minute = lp.minute;
    v->u.local.second = lp.second;
    v->u.local.nano = lp.nano;
    return p;
}

/* A count, then fixed-width elements (a byte array stays a blob). */
static const uint8_t *dec_primitive_array(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r,
                                          fnw_value *v)
{
    const fnw_type *e = t->children[0];
    size_t ew = fnw_ser_width(e);
    const uint8_t *at = p;
    uint32_t count = 0;
    if (!ew)
        return fnw_ser_fail(r, p, t, "elements of kind %s are not primitive", fnw_kind_name(e->kind));
    if (e->kind == FNW_BYTE)
        return fnw_ser_read_blob(r, p, t, &v->u.bytes, &v->count);
    if (!(p = fnw_ser_read_count(r, p, t, ew, &count)))
        return NULL;
    fnw_value *items = alloc_items(r, at, t, count);
    if (count && !items)
        return NULL;
    for (uint32_t i = 0; i < count; i++) {
        items[i] = (fnw_value){ .kind = (uint8_t)e->kind };
        p = dec_scalar(e, p, r, &items[i]); /* bytes were checked by fnw_ser_read_count */
    }
    v->count = count;
    v->u.items = items;
    return p;
}

/* BASIC_ARRAY, OBJECT_ARRAY (a flag byte before each element, 0: null) and
 * LIST (no flags, no nulls): a count, then the elements. */
static const uint8_t *dec_array(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, fnw_value *v,
                                int depth)
{
    const fnw_type *e = t->children[0];
    int flagged = t->kind != FNW_LIST;
    size_t per = flagged ? 1 : fnw_ser_min_size(e, depth + 1);
    const uint8_t *at = p;
    uint32_t count = 0;
    if (!(p = fnw_ser_read_count(r, p, t, per, &count)))
        return NULL;
    fnw_value *items = alloc_items(r, at, t, count);
    if (count && !items)
        return NULL;
    for (uint32_t i = 0; i < count; i++) {
        if (flagged) {
            if (p == r->end)
                return fnw_ser_fail_short(r, p, t, 1);
            if (*p++ == 0) {
                items[i] = null_of(e);
                continue;
            }
        }
        if (!(p = dec_value(e, p, r, &items[i], depth + 1)))
            return NULL;
    }
    v->count = count;
    v->u.items = items;
    return p;
}

/* A count, then per entry the key, a flag byte (non-zero: null value) and
 * the value; items hold key, value, key, value... in wire order. */
static const uint8_t *dec_map(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, fnw_value *v,
                              int depth)
{
    const fnw_type *k = t->children[0], *val = t->children[1];
    const uint8_t *at = p;
    uint32_t count = 0;
    if (!(p = fnw_ser_read_count(r, p, t, fnw_ser_min_size(k, depth + 1) + 1, &count)))
        return NULL;
    fnw_value *items = alloc_items(r, at, t, 2 * (uint64_t)count);
    if (count && !items)
        return NULL;
    for (uint32_t i = 0; i < count; i++) {
        if (!(p = dec_value(k, p, r, &items[2 * i], depth + 1)))
            return NULL;
        if (p == r->end)
            return fnw_ser_fail_short(r, p, t, 1);
        if (*p++ != 0) {
            items[2 * i + 1] = null_of(val);
            continue;
        }
        if (!(p = dec_value(val, p, r, &items[2 * i + 1], depth + 1)))
            return NULL;
    }
    v->count = count;
    v->u.items = items;
    return p;
}

static const uint8_t *dec_tuple(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, fnw_value *v,
                                int depth)
{
    uint32_t n = t->nchildren;
    fnw_value *items = alloc_items(r, p, t, n);
    if (n && !items)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        if (!(p = dec_value(t->children[i], p, r, &items[i], depth + 1)))
            return NULL;
    v->count = n;
    v->u.items = items;
    return p;
}

/* The datum's bytes, delimited by the Avro program. */
static const uint8_t *dec_avro(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, fnw_value *v)
{
    const uint8_t *q = fnw_avro_program_walk(t->avro_program, p, r->end, r->base, r->err);
    if (!q)
        return NULL;
    v->u.bytes = p;
    v->count = (uint32_t)(q - p);
    return q;
}

static const uint8_t *dec_value(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, fnw_value *v,
                                int depth)
{
    *v = (fnw_value){ .kind = (uint8_t)t->kind };
    if (fnw_ser_width(t))
        return dec_scalar(t, p, r, v);
    if (depth > FNW_TYPE_MAX_DEPTH)
        return fnw_ser_fail(r, p, t, "type nests deeper than %d levels", FNW_TYPE_MAX_DEPTH);
    if (!fnw_ser_check_shape(t))
        return fnw_ser_fail(r, p, t, "malformed type (missing element types or Avro schema)");
    switch (t->kind) {
    case FNW_ROW:
        return dec_row(t, p, r, v, depth);
    case FNW_STRING:
    case FNW_BIG_DEC:
    case FNW_PICKLED_BYTES:
        return fnw_ser_read_blob(r, p, t, &v->u.bytes, &v->count);
    case FNW_BIG_INT:
        return dec_big_int(t, p, r, v);
    case FNW_LOCAL_DATE:
    case FNW_LOCAL_TIME:
    case FNW_LOCAL_DATETIME:
        return dec_local(t, p, r, v);
    case FNW_PRIMITIVE_ARRAY:
        return dec_primitive_array(t, p, r, v);
    case FNW_BASIC_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
        return dec_array(t, p, r, v, depth);
    case FNW_MAP:
        return dec_map(t, p, r, v, depth);
    case FNW_TUPLE:
        return dec_tuple(t, p, r, v, depth);
    case FNW_AVRO:
        return dec_avro(t, p, r, v);
    default:
        return fnw_ser_fail(r, p, t, "unsupported type kind %d", (int)t->kind);
    }
}

int fnw_ser_decode(const fnw_type *t, const uint8_t *p, size_t n, fnw_arena *a, fnw_value *out, size_t *used,
                   fnw_error *err)
{
    if (!t)
        return fnw_error_set(err, "no type to decode a value of");
    if (!p)
        p = fnw_ser_empty_input, n = 0;
    fnw_ser_rd r = { .base = p, .end = p + n, .arena = a, .err = err };
    /* the decode budget: the arena may not grow by more than this for one value */
    size_t limit = a ? a->limit : 0;
    if (a) {
        size_t budget = fnw_ser_decode_budget(n);
        if (budget < a->limit - a->used_total)
            a->limit = a->used_total + budget;
    }
    const uint8_t *q = dec_value(t, p, &r, out, 1);
    if (a)
        a->limit = limit;
    if (!q)
        return -1;
    if (used)
        *used = (size_t)(q - p);
    return 0;
}
