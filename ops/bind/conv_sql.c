/* ops/bind/conv_sql.c — the conversion rules of the Table (SQL) kinds
 * that both sources share (conv.h): DECIMAL (BIG_DEC) from a number or
 * its text, rounded to the type's scale; TIMESTAMP / TIMESTAMP_LTZ
 * (SQL_TIMESTAMP / LOCAL_ZONED_TIMESTAMP) from epoch milliseconds or
 * ISO-8601 text (tstext.h). */
#include "ops/bind/conv_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "codecs/decimal.h"
#include "ops/bind/tstext.h"
#include "ops/bind/vtext.h"

#define OOM "out of memory (the batch's arena limit)"

int fnw_conv_is_sql_kind(fnw_kind k)
{
    return k == FNW_BIG_DEC || k == FNW_SQL_TIMESTAMP || k == FNW_LOCAL_ZONED_TIMESTAMP;
}

/* A DECIMAL from its text: checked, rounded HALF_UP to the scale when the
 * type has one (the encoder would, and the value then reads as it will
 * arrive), copied into the arena. */
static const char *decimal_text(const fnw_type *t, const char *p, size_t n, fnw_arena *a, fnw_value *out)
{
    char q[FNW_DECIMAL_TEXT_MAX];
    if (!fnw_decimal_valid(p, n))
        return "not a decimal number";
    if (t->precision) {
        if (fnw_decimal_quantize(p, n, t->precision, t->scale, FNW_DECIMAL_HALF_UP, q, sizeof q, &n, NULL) < 0)
            return "it needs more digits than the type's precision";
        p = q;
    }
    if (n > INT32_MAX)
        return "too long";
    const void *copy = fnw_arena_memdup(a, p, n);
    if (!copy)
        return OOM;
    *out = fnw_value_bytes(FNW_BIG_DEC, copy, (uint32_t)n);
    return NULL;
}

const char *fnw_conv_set_sql_text(const fnw_type *t, const char *p, size_t n, fnw_arena *a, fnw_value *out)
{
    if (t->kind == FNW_BIG_DEC)
        return decimal_text(t, p, n, a, out);
    int64_t ms;
    uint32_t nanos;
    if (fnw_tstext_parse(t, p, n, &ms, &nanos) != 0)
        return "a timestamp is ISO-8601 text (2024-01-31T12:00:00.123456, years 0000-9999) or epoch "
               "milliseconds";
    *out = fnw_value_timestamp(t->kind, ms, nanos);
    return NULL;
}

const char *fnw_conv_set_sql_i64(const fnw_type *t, int64_t v, fnw_arena *a, fnw_value *out)
{
    if (t->kind != FNW_BIG_DEC) {
        *out = fnw_value_timestamp(t->kind, v, 0); /* epoch milliseconds */
        return NULL;
    }
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%" PRId64, v);
    return decimal_text(t, tmp, (size_t)n, a, out);
}

const char *fnw_conv_set_sql_f64(const fnw_type *t, double d, fnw_arena *a, fnw_value *out)
{
    if (t->kind != FNW_BIG_DEC)
        return "a timestamp is epoch milliseconds (a whole number) or ISO-8601 text";
    if (!isfinite(d))
        return "not a finite number";
    char tmp[40];
    size_t n = fnw_vtext_double(tmp, sizeof tmp, d); /* the shortest text that reads back to d */
    return decimal_text(t, tmp, n, a, out);
}
