/* codecs/value.h — a decoded Flink value that operations read and build
 * without knowing the wire format.
 *
 * A value mirrors its type: v->kind == type->kind. Scalars are inline;
 * strings and byte blobs point at bytes (in the input buffer or an arena);
 * containers point at an array of child values. Decoding allocates only from
 * the arena it is given, so a whole batch of values is released at once.
 *
 * Field use by kind:
 *   BYTE BOOLEAN SHORT INT LONG CHAR(UTF-16 unit) SQL_DATE(days)
 *   SQL_TIME(ms of day) SQL_TIMESTAMP(ms)                 -> u.i
 *   FLOAT -> u.f, DOUBLE -> u.d
 *   STRING (UTF-8), BIG_DEC (decimal text), PICKLED_BYTES, AVRO (one Avro
 *   binary datum), BIG_INT (two's-complement big-endian magnitude, as Java's
 *   BigInteger.toByteArray()), PRIMITIVE_ARRAY<BYTE>       -> u.bytes, count = byte length
 *   INSTANT -> u.instant; LOCAL_DATE/TIME/DATETIME -> u.local
 *   ROW, TUPLE -> u.items[count] fields (ROW also row_kind)
 *   BASIC/PRIMITIVE(non-byte)/OBJECT_ARRAY, LIST -> u.items[count] elements
 *   MAP -> u.items[2*count]: key0, value0, key1, value1, ... (wire order kept)
 * is_null marks a null where the format allows one (row fields, basic/object
 * array elements, map values, the top-level data field) and, anywhere, for
 * the kinds with a null encoding of their own: BIG_INT (length 0), INSTANT
 * and LOCAL_DATE/TIME/DATETIME (Java's MIN_VALUE sentinels).
 */
#ifndef FNW_VALUE_H
#define FNW_VALUE_H

#include <stdint.h>

#include "codecs/arena.h"
#include "codecs/error.h"
#include "codecs/type.h"

typedef enum fnw_row_kind {
    FNW_INSERT = 0, FNW_UPDATE_BEFORE = 1, FNW_UPDATE_AFTER = 2, FNW_DELETE = 3,
} fnw_row_kind;

typedef struct fnw_value fnw_value;
struct fnw_value {
    uint8_t kind;       /* fnw_kind */
    uint8_t is_null;
    uint8_t row_kind;   /* ROW only */
    uint32_t count;
    union {
        int64_t i;
        float f;
        double d;
        const uint8_t *bytes;
        struct { int64_t seconds; int32_t nanos; } instant;
        struct {
            int32_t year; int8_t month, day;
            int8_t hour, minute, second; int32_t nano;
        } local;
        fnw_value *items;
    } u;
};

/* ---- builders (operations and tests build values with these) -------------
 * Containers take an items array the caller owns (an arena, the stack); MAP
 * takes 2*entries items (key0, value0, ...) and count = entries. */
static inline fnw_value fnw_value_null(fnw_kind k)
{
    return (fnw_value){ .kind = (uint8_t)k, .is_null = 1 };
}
/* BYTE BOOLEAN SHORT INT LONG CHAR SQL_DATE SQL_TIME SQL_TIMESTAMP */
static inline fnw_value fnw_value_int(fnw_kind k, int64_t i)
{
    return (fnw_value){ .kind = (uint8_t)k, .u.i = i };
}
static inline fnw_value fnw_value_float(float f)
{
    return (fnw_value){ .kind = FNW_FLOAT, .u.f = f };
}
static inline fnw_value fnw_value_double(double d)
{
    return (fnw_value){ .kind = FNW_DOUBLE, .u.d = d };
}
/* STRING BIG_DEC PICKLED_BYTES AVRO BIG_INT PRIMITIVE_ARRAY(BYTE): bytes are borrowed */
static inline fnw_value fnw_value_bytes(fnw_kind k, const void *p, uint32_t n)
{
    return (fnw_value){ .kind = (uint8_t)k, .count = n, .u.bytes = (const uint8_t *)p };
}
/* STRING from a NUL-terminated UTF-8 string (borrowed). */
static inline fnw_value fnw_value_str(const char *s)
{
    uint32_t n = 0;
    while (s[n])
        n++;
    return fnw_value_bytes(FNW_STRING, s, n);
}
/* ROW TUPLE BASIC/PRIMITIVE/OBJECT_ARRAY LIST MAP (see above for MAP). */
static inline fnw_value fnw_value_items(fnw_kind k, fnw_value *items, uint32_t count)
{
    return (fnw_value){ .kind = (uint8_t)k, .count = count, .u.items = items };
}
static inline fnw_value fnw_value_row(fnw_row_kind rk, fnw_value *items, uint32_t count)
{
    return (fnw_value){ .kind = FNW_ROW, .row_kind = (uint8_t)rk, .count = count, .u.items = items };
}
static inline fnw_value fnw_value_instant(int64_t seconds, int32_t nanos)
{
    fnw_value v = { .kind = FNW_INSTANT };
    v.u.instant.seconds = seconds;
    v.u.instant.nanos = nanos;
    return v;
}
static inline fnw_value fnw_value_local_date(int32_t year, int month, int day)
{
    fnw_value v = { .kind = FNW_LOCAL_DATE };
    v.u.local.year = year;
    v.u.local.month = (int8_t)month;
    v.u.local.day = (int8_t)day;
    return v;
}
static inline fnw_value fnw_value_local_time(int hour, int minute, int second, int32_t nano)
{
    fnw_value v = { .kind = FNW_LOCAL_TIME };
    v.u.local.hour = (int8_t)hour;
    v.u.local.minute = (int8_t)minute;
    v.u.local.second = (int8_t)second;
    v.u.local.nano = nano;
    return v;
}
static inline fnw_value fnw_value_local_datetime(int32_t year, int month, int day, int hour,
                                                 int minute, int second, int32_t nano)
{
    fnw_value v = fnw_value_local_date(year, month, day);
    v.kind = FNW_LOCAL_DATETIME;
    v.u.local.hour = (int8_t)hour;
    v.u.local.minute = (int8_t)minute;
    v.u.local.second = (int8_t)second;
    v.u.local.nano = nano;
    return v;
}

/* ---- BIG_INT helpers (value.c) ---------------------------------------------
 * BIG_INT bytes are two's complement big-endian, possibly not minimal. */
/* Writes the minimal two's complement of v into out; returns its length (1..8). */
uint32_t fnw_value_bigint_from_i64(int64_t v, uint8_t out[8]);
/* 0 and *out = the number if it fits an int64; -1 if it does not or n == 0. */
int fnw_value_bigint_to_i64(const uint8_t *bytes, uint32_t n, int64_t *out);

/* ---- deep operations (value.c) -------------------------------------------- */
/* 1 if a and b (both of type t) hold the same value: FLOAT/DOUBLE compare
 * bitwise, BIG_INT numerically, containers element by element in order. */
int fnw_value_equal(const fnw_type *t, const fnw_value *a, const fnw_value *b);
/* Copies src (of type t) into dst with every byte and item array in arena a,
 * so dst outlives the buffer src was decoded from. */
int fnw_value_copy(const fnw_type *t, const fnw_value *src, fnw_arena *a, fnw_value *dst,
                   fnw_error *err);

#endif
