/* codecs/ser.c — the out-of-line half of the serializer's shared
 * readers (the inline half is ser_internal.h): the failure reporters,
 * which are cold and so kept out of the hot loops, the smallest size of a
 * type's encoding, and the java.time kinds, whose validation skip, decode
 * and encode all apply the same way.
 */
#include "codecs/ser_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) const uint8_t *fnw_ser_fail(const fnw_ser_rd *r, const uint8_t *at,
                                                      const fnw_type *t, const char *fmt, ...)
{
    if (!r->err)
        return NULL;
    char msg[FNW_ERROR_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fnw_error_set(r->err, "%s at offset %td: %s", fnw_kind_name(t->kind), at - r->base, msg);
    return NULL;
}

__attribute__((noinline)) const uint8_t *fnw_ser_fail_short(const fnw_ser_rd *r, const uint8_t *at,
                                                            const fnw_type *t, size_t need)
{
    return fnw_ser_fail(r, at, t, "needs %zu bytes, %zu left (input truncated)", need, FNW_SER_LEFT(r, at));
}

size_t fnw_ser_min_size(const fnw_type *t, int depth)
{
    size_t w = fnw_ser_width(t);
    if (w)
        return w;
    switch (t->kind) {
    case FNW_ROW:
        return FNW_SER_MASK_BYTES(t->nchildren);
    case FNW_LOCAL_DATE:
        return 6;
    case FNW_LOCAL_TIME:
        return 7;
    case FNW_LOCAL_DATETIME:
        return 13;
    case FNW_AVRO:
        return t->avro_program ? fnw_avro_program_min_size(t->avro_program) : 1;
    case FNW_TUPLE: {
        size_t sum = 0;
        if (depth > FNW_TYPE_MAX_DEPTH)
            return 1;
        for (uint32_t i = 0; i < t->nchildren; i++) {
            size_t m = fnw_ser_min_size(t->children[i], depth + 1);
            sum = m > SIZE_MAX - sum ? SIZE_MAX : sum + m;
        }
        return sum;
    }
    default:
        return 4; /* a length or a count */
    }
}

int fnw_ser_valid_date(int32_t y, int m, int d)
{
    static const uint8_t dim[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    if (y < -999999999 || y > 999999999 || m < 1 || m > 12 || d < 1 || d > dim[m - 1])
        return 0;
    if (m == 2 && d == 29) {
        int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        return leap;
    }
    return 1;
}

int fnw_ser_valid_time(int h, int mi, int s, int32_t ns)
{
    return h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 59 && ns >= 0 && ns <= 999999999;
}

/* LOCAL_DATE: int32 year, int8 month, int8 day; null: year INT32_MIN, 2 more bytes. */
static const uint8_t *read_date(const fnw_ser_rd *r, const uint8_t *p, const fnw_type *t, fnw_ser_local *lp)
{
    lp->year = (int32_t)fnw_load_be32(p);
    lp->date_null = lp->year == INT32_MIN;
    lp->month = (int8_t)p[4];
    lp->day = (int8_t)p[5];
    if (lp->date_null)
        lp->year = lp->month = lp->day = 0;
    else if (!fnw_ser_valid_date(lp->year, lp->month, lp->day))
        return fnw_ser_fail(r, p, t, "invalid date %d-%d-%d", lp->year, lp->month, lp->day);
    return p + 6;
}

/* LOCAL_TIME: int8 hour, minute, second, int32 nano; null: hour -128, 6 more bytes. */
static const uint8_t *read_time(const fnw_ser_rd *r, const uint8_t *p, const fnw_type *t, fnw_ser_local *lp)
{
    lp->hour = (int8_t)p[0];
    lp->time_null = lp->hour == INT8_MIN;
    lp->minute = (int8_t)p[1];
    lp->second = (int8_t)p[2];
    lp->nano = (int32_t)fnw_load_be32(p + 3);
    if (lp->time_null)
        lp->hour = lp->minute = lp->second = 0, lp->nano = 0;
    else if (!fnw_ser_valid_time(lp->hour, lp->minute, lp->second, lp->nano))
        return fnw_ser_fail(r, p, t, "invalid time %d:%d:%d.%09d", lp->hour, lp->minute, lp->second, lp->nano);
    return p + 7;
}

/* LOCAL_DATETIME is a date then a time, both null or neither. */
const uint8_t *fnw_ser_read_local(const fnw_ser_rd *r, const uint8_t *p, const fnw_type *t, fnw_ser_local *lp)
{
    int date = t->kind != FNW_LOCAL_TIME, time = t->kind != FNW_LOCAL_DATE;
    size_t need = (date ? 6 : 0) + (time ? 7 : 0);
    if (FNW_SER_LEFT(r, p) < need)
        return fnw_ser_fail_short(r, p, t, need);
    memset(lp, 0, sizeof *lp);
    const uint8_t *at = p;
    if (date && !(p = read_date(r, p, t, lp)))
        return NULL;
    if (time && !(p = read_time(r, p, t, lp)))
        return NULL;
    if (date && time && lp->date_null != lp->time_null)
        return fnw_ser_fail(r, at, t, "exactly one of the date and the time is null");
    return p;
}
