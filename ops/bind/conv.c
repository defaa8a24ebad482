/* ops/bind/conv.c — the parts of the conversion rules shared by
 * both sources (conv.h): which target types are supported, the
 * checked numeric and text rules, and failure messages that name the field
 * path, an excerpt of the value and the type. */
#include "ops/bind/conv_internal.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int primitive_element(fnw_kind k)
{
    switch (k) {
    case FNW_BYTE:
    case FNW_SHORT:
    case FNW_INT:
    case FNW_LONG:
    case FNW_FLOAT:
    case FNW_DOUBLE:
    case FNW_BOOLEAN:
        return 1;
    default:
        return 0;
    }
}

/* NULL if t is a supported target, else the offending type. */
static const fnw_type *unsupported(const fnw_type *t, int depth)
{
    if (!t || depth > FNW_TYPE_MAX_DEPTH)
        return t;
    switch (t->kind) {
    case FNW_STRING:
    case FNW_BIG_DEC:
    case FNW_SQL_TIMESTAMP:
    case FNW_LOCAL_ZONED_TIMESTAMP:
        return NULL;
    case FNW_ROW:
        for (uint32_t i = 0; i < t->nchildren; i++) {
            const fnw_type *bad = unsupported(t->children[i], depth + 1);
            if (bad)
                return bad;
        }
        return NULL;
    case FNW_BASIC_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
        return t->nchildren == 1 ? unsupported(t->children[0], depth + 1) : t;
    case FNW_PRIMITIVE_ARRAY:
        return t->nchildren == 1 && primitive_element(t->children[0]->kind) ? NULL : t;
    case FNW_MAP:
        if (t->nchildren != 2 || t->children[0]->kind != FNW_STRING)
            return t;
        return unsupported(t->children[1], depth + 1);
    default:
        return primitive_element(t->kind) ? NULL : t;
    }
}

int fnw_conv_check_type(const fnw_type *t, const char *field, fnw_error *err)
{
    const fnw_type *bad = unsupported(t, 1);
    if (!bad)
        return 0;
    char whole[256], part[256];
    fnw_type_format(t, whole, sizeof whole);
    fnw_type_format(bad, part, sizeof part);
    if (!t)
        return fnw_error_set(err, "output field '%s' has no type", field ? field : "?");
    return fnw_error_set(err,
                         "output field '%s' has type %s, which a result cannot be converted into (%s is "
                         "not supported; targets are STRING, BYTE, SHORT, INT, LONG, FLOAT, DOUBLE, BOOLEAN, "
                         "DECIMAL, TIMESTAMP, TIMESTAMP_LTZ, arrays and LIST of them, ROW, MAP with STRING "
                         "keys)",
                         field ? field : "?", whole, part);
}

/* Writes the path of at into out (cap bytes), root first. */
static size_t path_format(const fnw_conv_at *at, char *out, size_t cap)
{
    if (!at || cap == 0)
        return 0;
    size_t n = path_format(at->up, out, cap);
    if (n >= cap - 1)
        return n;
    int w;
    if (at->name)
        w = snprintf(out + n, cap - n, "%s%.80s", at->up ? "." : "", at->name);
    else
        w = snprintf(out + n, cap - n, "[%zu]", at->index);
    if (w < 0)
        return n;
    n += (size_t)w;
    return n < cap ? n : cap - 1;
}

int fnw_conv_fail(const fnw_conv_at *at, const fnw_type *t, const char *what, const char *why, fnw_error *err)
{
    char path[300] = "", ty[200];
    path_format(at, path, sizeof path);
    fnw_type_format(t, ty, sizeof ty);
    return fnw_error_set(err, "field '%s': cannot convert %s to %s%s%s", path, what, ty, why ? ": " : "",
                         why ? why : "");
}

void fnw_conv_excerpt(const uint8_t *p, size_t n, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t w = 0, shown = 0, i = 0;
    out[w++] = '"';
    for (; i < n && shown < FNW_CONV_EXCERPT && w + 8 < cap; i++, shown++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') {
            out[w++] = '\\';
            out[w++] = (char)c;
        } else if (c >= 0x20 && c < 0x7f) {
            out[w++] = (char)c;
        } else {
            out[w++] = '\\';
            out[w++] = 'x';
            out[w++] = hex[c >> 4];
            out[w++] = hex[c & 15];
        }
    }
    out[w++] = '"';
    if (i < n) {
        memcpy(out + w, "...", 3);
        w += 3;
    }
    out[w] = '\0';
}

int fnw_conv_null_element_ok(fnw_kind k)
{
    return k == FNW_BASIC_ARRAY || k == FNW_OBJECT_ARRAY || k == FNW_MAP || k == FNW_ROW;
}

fnw_value *fnw_conv_items(fnw_arena *a, fnw_kind k, size_t n)
{
    size_t count = k == FNW_MAP ? 2 * n : n;
    if (n > UINT32_MAX / 2 || count > SIZE_MAX / sizeof(fnw_value))
        return NULL;
    return fnw_arena_alloc(a, count ? count * sizeof(fnw_value) : 1);
}

const char *fnw_conv_set_i64(fnw_kind k, int64_t v, fnw_value *out)
{
    int64_t lo, hi;
    switch (k) {
    case FNW_BYTE:
        lo = INT8_MIN;
        hi = INT8_MAX;
        break;
    case FNW_SHORT:
        lo = INT16_MIN;
        hi = INT16_MAX;
        break;
    case FNW_INT:
        lo = INT32_MIN;
        hi = INT32_MAX;
        break;
    case FNW_LONG:
        lo = INT64_MIN;
        hi = INT64_MAX;
        break;
    case FNW_FLOAT:
        *out = fnw_value_float((float)v);
        return NULL;
    case FNW_DOUBLE:
        *out = fnw_value_double((double)v);
        return NULL;
    case FNW_BOOLEAN:
        if (v != 0 && v != 1)
            return "only 0 and 1 are booleans";
        *out = fnw_value_int(FNW_BOOLEAN, v);
        return NULL;
    default:
        return "not a numeric type";
    }
    if (v < lo || v > hi)
        return "out of range";
    *out = fnw_value_int(k, v);
    return NULL;
}

const char *fnw_conv_set_f64(fnw_kind k, double d, fnw_value *out)
{
    if (k == FNW_DOUBLE) {
        *out = fnw_value_double(d);
        return NULL;
    }
    if (k == FNW_FLOAT) {
        if (isfinite(d) && fabs(d) > FLT_MAX)
            return "out of range";
        *out = fnw_value_float((float)d);
        return NULL;
    }
    if (k == FNW_BOOLEAN)
        return "not a boolean";
    if (!isfinite(d) || d != trunc(d))
        return "not a whole number";
    /* [-2^63, 2^63): every double there converts to int64 exactly */
    if (d < -9223372036854775808.0 || d >= 9223372036854775808.0)
        return "out of range";
    return fnw_conv_set_i64(k, (int64_t)d, out);
}

int fnw_conv_parse_i64(const char *p, size_t n, int64_t *v)
{
    size_t i = 0;
    int neg = n > 0 && p[0] == '-';
    i = (size_t)neg;
    if (i == n)
        return -1;
    uint64_t u = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(p[i] - '0');
        if (u > (limit - d) / 10)
            return -1;
        u = u * 10 + d;
    }
    *v = neg ? (int64_t)(0 - u) : (int64_t)u;
    return 0;
}

int fnw_conv_parse_f64(const char *p, size_t n, double *d)
{
    char tmp[64];
    if (n == 0 || n >= sizeof tmp)
        return -1;
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    const char *body = tmp + (tmp[0] == '-' || tmp[0] == '+');
    if (strcasecmp(body, "inf") == 0) {
        *d = tmp[0] == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)tmp[i]) && !strchr("+-.eE", tmp[i]))
            return -1;
    char *end = NULL;
    double v = strtod(tmp, &end);
    if (end != tmp + n || (!isdigit((unsigned char)body[0]) && body[0] != '.') || isinf(v))
        return -1; /* isinf: an overflowing literal such as 1e999 */
    *d = v;
    return 0;
}

int fnw_conv_set_string(fnw_arena *a, const void *p, size_t n, fnw_value *out)
{
    if (n > INT32_MAX)
        return -1;
    const void *copy = fnw_arena_memdup(a, p, n);
    if (!copy)
        return -1;
    *out = fnw_value_bytes(FNW_STRING, copy, (uint32_t)n);
    return 0;
}
