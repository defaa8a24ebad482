/* codecs/value.c — operations on decoded values that need their type:
 * BIG_INT conversion, deep equality and deep copy into an arena. */
#include "codecs/value.h"

#include <string.h>

uint32_t fnw_value_bigint_from_i64(int64_t v, uint8_t out[8])
{
    uint8_t tmp[8];
    uint64_t u = (uint64_t)v;
    for (int i = 7; i >= 0; i--) {
        tmp[i] = (uint8_t)u;
        u >>= 8;
    }
    int start = 0;
    while (start < 7 && ((tmp[start] == 0x00 && !(tmp[start + 1] & 0x80)) ||
                         (tmp[start] == 0xff && (tmp[start + 1] & 0x80))))
        start++;
    uint32_t n = (uint32_t)(8 - start);
    memcpy(out, tmp + start, n);
    return n;
}

/* Skips redundant sign bytes. */
static void bigint_trim(const uint8_t **b, uint32_t *n)
{
    while (*n > 1 && (((*b)[0] == 0x00 && !((*b)[1] & 0x80)) || ((*b)[0] == 0xff && ((*b)[1] & 0x80)))) {
        (*b)++;
        (*n)--;
    }
}

int fnw_value_bigint_to_i64(const uint8_t *bytes, uint32_t n, int64_t *out)
{
    if (n == 0 || !bytes)
        return -1;
    bigint_trim(&bytes, &n);
    if (n > 8)
        return -1;
    uint64_t u = (bytes[0] & 0x80) ? UINT64_MAX : 0;
    for (uint32_t i = 0; i < n; i++)
        u = (u << 8) | bytes[i];
    *out = (int64_t)u;
    return 0;
}

static int bytes_equal(const fnw_value *a, const fnw_value *b)
{
    return a->count == b->count && (a->count == 0 || memcmp(a->u.bytes, b->u.bytes, a->count) == 0);
}

static int bigint_equal(const fnw_value *a, const fnw_value *b)
{
    const uint8_t *pa = a->u.bytes, *pb = b->u.bytes;
    uint32_t na = a->count, nb = b->count;
    if (!pa || !pb || !na || !nb)
        return na == nb;
    bigint_trim(&pa, &na);
    bigint_trim(&pb, &nb);
    return na == nb && memcmp(pa, pb, na) == 0;
}

static int child_equal(const fnw_type *t, const fnw_value *a, const fnw_value *b)
{
    /* items of containers; MAP alternates key and value types */
    uint32_t n = t->kind == FNW_MAP ? 2 * a->count : a->count;
    if ((t->kind == FNW_ROW || t->kind == FNW_TUPLE) ? n != t->nchildren
                                                     : t->nchildren < (t->kind == FNW_MAP ? 2u : 1u))
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        const fnw_type *ct;
        if (t->kind == FNW_ROW || t->kind == FNW_TUPLE)
            ct = t->children[i];
        else if (t->kind == FNW_MAP)
            ct = t->children[i & 1];
        else
            ct = t->children[0];
        if (!fnw_value_equal(ct, &a->u.items[i], &b->u.items[i]))
            return 0;
    }
    return 1;
}

int fnw_value_equal(const fnw_type *t, const fnw_value *a, const fnw_value *b)
{
    if (a->kind != b->kind || a->is_null != b->is_null)
        return 0;
    if (a->is_null)
        return 1;
    switch (t->kind) {
    case FNW_FLOAT:
        return memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0;
    case FNW_DOUBLE:
        return memcmp(&a->u.d, &b->u.d, sizeof a->u.d) == 0;
    case FNW_STRING:
    case FNW_BIG_DEC:
    case FNW_PICKLED_BYTES:
    case FNW_AVRO:
        return bytes_equal(a, b);
    case FNW_BIG_INT:
        return bigint_equal(a, b);
    case FNW_SQL_TIMESTAMP:
    case FNW_LOCAL_ZONED_TIMESTAMP:
        return a->u.i == b->u.i && a->count == b->count;
    case FNW_INSTANT:
        return a->u.instant.seconds == b->u.instant.seconds && a->u.instant.nanos == b->u.instant.nanos;
    case FNW_LOCAL_DATE:
    case FNW_LOCAL_TIME:
    case FNW_LOCAL_DATETIME: {
        int date = t->kind != FNW_LOCAL_TIME, time = t->kind != FNW_LOCAL_DATE;
        if (date && (a->u.local.year != b->u.local.year || a->u.local.month != b->u.local.month ||
                     a->u.local.day != b->u.local.day))
            return 0;
        if (time && (a->u.local.hour != b->u.local.hour || a->u.local.minute != b->u.local.minute ||
                     a->u.local.second != b->u.local.second || a->u.local.nano != b->u.local.nano))
            return 0;
        return 1;
    }
    case FNW_PRIMITIVE_ARRAY:
        if (t->nchildren && t->children[0]->kind == FNW_BYTE)
            return bytes_equal(a, b);
        /* fall through */
    case FNW_BASIC_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
    case FNW_MAP:
    case FNW_TUPLE:
        return a->count == b->count && child_equal(t, a, b);
    case FNW_ROW:
        return a->count == b->count && a->row_kind == b->row_kind && child_equal(t, a, b);
    default:
        return a->u.i == b->u.i;
    }
}

int fnw_value_copy(const fnw_type *t, const fnw_value *src, fnw_arena *a, fnw_value *dst, fnw_error *err)
{
    *dst = *src;
    if (src->is_null)
        return 0;
    int blob = 0;
    switch (t->kind) {
    case FNW_STRING:
    case FNW_BIG_DEC:
    case FNW_PICKLED_BYTES:
    case FNW_AVRO:
    case FNW_BIG_INT:
        blob = 1;
        break;
    case FNW_PRIMITIVE_ARRAY:
        blob = t->nchildren && t->children[0]->kind == FNW_BYTE;
        break;
    case FNW_ROW:
    case FNW_TUPLE:
    case FNW_BASIC_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
    case FNW_MAP:
        break;
    default:
        return 0;
    }
    if (blob) {
        if (src->count == 0)
            return 0;
        dst->u.bytes = fnw_arena_memdup(a, src->u.bytes, src->count);
        if (!dst->u.bytes)
            return fnw_error_set(err, "out of arena memory copying a %u-byte %s", src->count,
                                 fnw_kind_name(t->kind));
        return 0;
    }
    uint64_t n = t->kind == FNW_MAP ? 2 * (uint64_t)src->count : src->count;
    if (n == 0)
        return 0;
    fnw_value *items = fnw_arena_alloc(a, (size_t)n * sizeof *items);
    if (!items)
        return fnw_error_set(err, "out of arena memory copying %llu %s items", (unsigned long long)n,
                             fnw_kind_name(t->kind));
    for (uint64_t i = 0; i < n; i++) {
        const fnw_type *ct;
        if (t->kind == FNW_ROW || t->kind == FNW_TUPLE)
            ct = i < t->nchildren ? t->children[i] : NULL;
        else if (t->kind == FNW_MAP)
            ct = t->nchildren == 2 ? t->children[i & 1] : NULL;
        else
            ct = t->nchildren ? t->children[0] : NULL;
        if (!ct)
            return fnw_error_set(err, "%s value does not match its type", fnw_kind_name(t->kind));
        if (fnw_value_copy(ct, &src->u.items[i], a, &items[i], err) < 0)
            return -1;
    }
    dst->u.items = items;
    return 0;
}
