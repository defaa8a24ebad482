/* ops/kserve/tensor/dtype.c — the Open Inference Protocol's tensor datatypes:
 * names, sizes, which Flink kinds carry them, and one element's checked
 * conversion between its little-endian wire form and an fnw_value. */
#include "ops/kserve/tensor/dtype.h"

#include <inttypes.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} DT[FNW_DT_COUNT] = {
    [FNW_DT_BOOL] = { "BOOL", 1 },     [FNW_DT_INT8] = { "INT8", 1 },     [FNW_DT_INT16] = { "INT16", 2 },
    [FNW_DT_INT32] = { "INT32", 4 },   [FNW_DT_INT64] = { "INT64", 8 },   [FNW_DT_UINT8] = { "UINT8", 1 },
    [FNW_DT_UINT16] = { "UINT16", 2 }, [FNW_DT_UINT32] = { "UINT32", 4 }, [FNW_DT_UINT64] = { "UINT64", 8 },
    [FNW_DT_FP16] = { "FP16", 2 },     [FNW_DT_BF16] = { "BF16", 2 },     [FNW_DT_FP32] = { "FP32", 4 },
    [FNW_DT_FP64] = { "FP64", 8 },     [FNW_DT_BYTES] = { "BYTES", 0 },
};

const char *fnw_dtype_name(fnw_dtype d)
{
    return (unsigned)d < FNW_DT_COUNT ? DT[d].name : "UNKNOWN";
}

int fnw_dtype_parse(const char *s, size_t len)
{
    for (int d = 0; d < FNW_DT_COUNT; d++)
        if (strlen(DT[d].name) == len && memcmp(DT[d].name, s, len) == 0)
            return d;
    return -1;
}

size_t fnw_dtype_size(fnw_dtype d)
{
    return DT[d].size;
}

int fnw_dtype_is_raw_only(fnw_dtype d)
{
    return d == FNW_DT_FP16 || d == FNW_DT_BF16;
}

static int is_int_kind(fnw_kind k)
{
    return k == FNW_BYTE || k == FNW_SHORT || k == FNW_INT || k == FNW_LONG;
}

static int is_int_dtype(fnw_dtype d)
{
    return d >= FNW_DT_INT8 && d <= FNW_DT_UINT64;
}

int fnw_dtype_fits_kind(fnw_dtype d, fnw_kind k, int to_wire)
{
    if (d == FNW_DT_BOOL)
        return k == FNW_BOOLEAN;
    if (is_int_dtype(d))
        return is_int_kind(k);
    if (d == FNW_DT_FP32 || d == FNW_DT_FP64)
        return k == FNW_FLOAT || k == FNW_DOUBLE || (to_wire && is_int_kind(k));
    if (d == FNW_DT_BYTES)
        return k == FNW_STRING || k == FNW_PRIMITIVE_ARRAY;
    return 0;
}

int fnw_dtype_default_for(fnw_kind k)
{
    switch (k) {
    case FNW_BOOLEAN:
        return FNW_DT_BOOL;
    case FNW_BYTE:
        return FNW_DT_INT8;
    case FNW_SHORT:
        return FNW_DT_INT16;
    case FNW_INT:
        return FNW_DT_INT32;
    case FNW_LONG:
        return FNW_DT_INT64;
    case FNW_FLOAT:
        return FNW_DT_FP32;
    case FNW_DOUBLE:
        return FNW_DT_FP64;
    case FNW_STRING:
        return FNW_DT_BYTES;
    default:
        return -1;
    }
}

static void put_le(uint8_t *out, uint64_t x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t)(x >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        x |= (uint64_t)p[i] << (8 * i);
    return x;
}

/* The range of the integer datatype d, as int64 bounds (UINT64's upper bound
 * is beyond; no Flink integer kind reaches it). */
static void int_range(fnw_dtype d, int64_t *lo, int64_t *hi)
{
    size_t bits = 8 * DT[d].size;
    if (d >= FNW_DT_UINT8) {
        *lo = 0;
        *hi = bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << bits) - 1);
    } else {
        *lo = bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
        *hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
    }
}

int fnw_dtype_write(fnw_dtype d, const fnw_value *v, uint8_t *out, fnw_error *err)
{
    if (d == FNW_DT_BOOL) {
        out[0] = v->u.i ? 1 : 0;
        return 0;
    }
    if (is_int_dtype(d)) {
        int64_t lo, hi;
        int_range(d, &lo, &hi);
        if (v->u.i < lo || v->u.i > hi)
            return fnw_error_set(err, "the value %" PRId64 " is out of %s's range", v->u.i, DT[d].name);
        put_le(out, (uint64_t)v->u.i, DT[d].size);
        return 0;
    }
    double x = v->kind == FNW_FLOAT ? (double)v->u.f : v->kind == FNW_DOUBLE ? v->u.d : (double)v->u.i;
    if (d == FNW_DT_FP32) {
        float f = (float)x;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        put_le(out, bits, 4);
        return 0;
    }
    if (d == FNW_DT_FP64) {
        uint64_t bits;
        memcpy(&bits, &x, 8);
        put_le(out, bits, 8);
        return 0;
    }
    return fnw_error_set(err, "%s elements are not written from values", DT[d].name);
}

fnw_elem fnw_dtype_read(fnw_dtype d, const uint8_t *p)
{
    fnw_elem e = { .tag = FNW_ELEM_INT };
    size_t n = DT[d].size;
    uint64_t x = get_le(p, n);
    if (d == FNW_DT_BOOL) {
        e.v.i = x != 0;
    } else if (d >= FNW_DT_INT8 && d <= FNW_DT_INT64) {
        unsigned shift = (unsigned)(64 - 8 * n); /* sign-extend */
        e.v.i = (int64_t)(x << shift) >> shift;
    } else if (d >= FNW_DT_UINT8 && d <= FNW_DT_UINT64) {
        e.tag = FNW_ELEM_UINT;
        e.v.u = x;
    } else if (d == FNW_DT_FP32) {
        uint32_t b = (uint32_t)x;
        float f;
        memcpy(&f, &b, 4);
        e.tag = FNW_ELEM_FLOAT;
        e.v.d = f;
    } else if (d == FNW_DT_FP64) {
        e.tag = FNW_ELEM_FLOAT;
        memcpy(&e.v.d, &x, 8);
    }
    return e;
}

static int int_to_value(const fnw_elem *e, fnw_dtype d, fnw_kind k, fnw_value *out, fnw_error *err)
{
    static const int64_t lo[] = {
        [FNW_BYTE] = INT8_MIN, [FNW_SHORT] = INT16_MIN, [FNW_INT] = INT32_MIN, [FNW_LONG] = INT64_MIN
    };
    static const int64_t hi[] = {
        [FNW_BYTE] = INT8_MAX, [FNW_SHORT] = INT16_MAX, [FNW_INT] = INT32_MAX, [FNW_LONG] = INT64_MAX
    };
    if (e->tag == FNW_ELEM_UINT && e->v.u > (uint64_t)hi[k])
        return fnw_error_set(err, "the %s value %" PRIu64 " does not fit %s", DT[d].name, e->v.u,
                             fnw_kind_name(k));
    int64_t x = e->tag == FNW_ELEM_UINT ? (int64_t)e->v.u : e->v.i;
    if (x < lo[k] || x > hi[k])
        return fnw_error_set(err, "the %s value %" PRId64 " does not fit %s", DT[d].name, x, fnw_kind_name(k));
    *out = fnw_value_int(k, x);
    return 0;
}

int fnw_dtype_to_value(fnw_dtype d, const fnw_elem *e, fnw_kind k, fnw_value *out, fnw_error *err)
{
    if (e->tag == FNW_ELEM_BYTES) {
        if (k != FNW_STRING && k != FNW_PRIMITIVE_ARRAY)
            return fnw_error_set(err, "a %s element does not fit %s", DT[d].name, fnw_kind_name(k));
        *out = fnw_value_bytes(k, e->v.b.p, e->v.b.n);
        return 0;
    }
    if (k == FNW_BOOLEAN) {
        *out = fnw_value_int(FNW_BOOLEAN, e->v.i != 0);
        return 0;
    }
    if (k == FNW_FLOAT || k == FNW_DOUBLE) {
        double x = e->tag == FNW_ELEM_FLOAT  ? e->v.d
                   : e->tag == FNW_ELEM_UINT ? (double)e->v.u
                                             : (double)e->v.i;
        *out = k == FNW_FLOAT ? fnw_value_float((float)x) : fnw_value_double(x);
        return 0;
    }
    if (is_int_kind(k) && e->tag != FNW_ELEM_FLOAT)
        return int_to_value(e, d, k, out, err);
    return fnw_error_set(err, "a %s element does not fit %s", DT[d].name, fnw_kind_name(k));
}
