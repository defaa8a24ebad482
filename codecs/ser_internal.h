/* codecs/ser_internal.h — internal to the serializer unit (ser_skip.c,
 * skip_program.c, ser_decode.c, ser_encode.c, ser.c); not part of its
 * interface, which is codecs/ser.h.
 *
 * What the unit's files share: the input cursor (fnw_ser_rd), the table of
 * fixed-width kinds, the ROW null mask layout, and the bounded readers for
 * the formats that several kinds share (an int32 length, a length-prefixed
 * blob, an element count, BIG_INT's length forms). The readers are static
 * inline so that the per-record loops of skip and decode keep them inlined;
 * the cold failure reporters and the rarer readers live in
 * ser.c.
 *
 * Every reader checks the bytes that remain before it reads, returns the
 * first byte after what it read, and on failure returns NULL after filling
 * r->err (when it is not NULL) with "<KIND> at offset <n>: <why>", the
 * offset counted from r->base.
 */
#ifndef FNW_SER_INTERNAL_H
#define FNW_SER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/arena.h"
#include "codecs/avro_program.h"
#include "codecs/bytes.h"
#include "codecs/error.h"
#include "codecs/ser.h"
#include "codecs/type.h"

/* The input of one skip or decode. */
typedef struct fnw_ser_rd {
    const uint8_t *base; /* offsets in messages count from here */
    const uint8_t *end;
    fnw_arena *arena; /* decode only */
    fnw_error *err;   /* NULL: fail silently (the skip program's fallbacks) */
} fnw_ser_rd;

/* Kinds whose encoding is always this many bytes and needs no validation
 * (the timestamps at precision <= 3: see fnw_ser_width). */
static const uint8_t fnw_ser_fixed_width[FNW_KIND_COUNT] = {
    [FNW_BYTE] = 1,
    [FNW_BOOLEAN] = 1,
    [FNW_SHORT] = 2,
    [FNW_INT] = 4,
    [FNW_LONG] = 8,
    [FNW_FLOAT] = 4,
    [FNW_DOUBLE] = 8,
    [FNW_CHAR] = 2,
    [FNW_SQL_DATE] = 4,
    [FNW_SQL_TIME] = 4,
    [FNW_SQL_TIMESTAMP] = 8,
    [FNW_INSTANT] = 12,
    [FNW_LOCAL_ZONED_TIMESTAMP] = 8,
};

/* Bytes of every encoding of t when they are fixed (0 otherwise): a
 * TIMESTAMP / TIMESTAMP_LTZ of precision 4..9 is 12 (int64 ms, int32 nanos
 * of the ms: Flink's TimestampDataSerializer), not 8. */
static inline size_t fnw_ser_width(const fnw_type *t)
{
    return fnw_type_timestamp_has_nanos(t) ? 12 : fnw_ser_fixed_width[t->kind];
}

/* Where an empty input points, so that offsets never come from NULL. */
static const uint8_t fnw_ser_empty_input[1];

#define FNW_SER_LEFT(r, p) ((size_t)((r)->end - (p)))
/* A ROW's mask: two row-kind bits, then one null bit per field, high bit first. */
#define FNW_SER_MASK_BYTES(arity) (((size_t)(arity) + 2 + 7) / 8)
#define FNW_SER_IS_NULL_BIT(mask, i) ((mask)[((i) + 2) >> 3] & (0x80u >> (((i) + 2) & 7)))

/* Fills r->err with "<KIND of t> at offset <at - r->base>: <fmt...>" and
 * returns NULL. */
const uint8_t *fnw_ser_fail(const fnw_ser_rd *r, const uint8_t *at, const fnw_type *t, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), cold));
/* The same for a value that needs `need` bytes where fewer are left. */
const uint8_t *fnw_ser_fail_short(const fnw_ser_rd *r, const uint8_t *at, const fnw_type *t, size_t need)
    __attribute__((cold));

/* Fewest bytes any encoding of t takes (saturating); depth as the walks'. */
size_t fnw_ser_min_size(const fnw_type *t, int depth);

/* java.time's ranges: what LocalDate.of and LocalTime.of accept. */
int fnw_ser_valid_date(int32_t y, int m, int d);
int fnw_ser_valid_time(int h, int mi, int s, int32_t ns);

/* LOCAL_DATE, LOCAL_TIME or LOCAL_DATETIME, split into its parts; a null
 * part reads as zeros with its flag set. */
typedef struct fnw_ser_local {
    int date_null, time_null;
    int32_t year;
    int8_t month, day;
    int8_t hour, minute, second;
    int32_t nano;
} fnw_ser_local;
const uint8_t *fnw_ser_read_local(const fnw_ser_rd *r, const uint8_t *p, const fnw_type *t, fnw_ser_local *lp);

/* The generic walk over one value of t at depth (ser_skip.c): what decode
 * accepts, without building anything. The skip program falls back to it. */
const uint8_t *fnw_ser_skip_value(const fnw_type *t, const uint8_t *p, const fnw_ser_rd *r, int depth);

/* Whether t has the children (or the compiled Avro program) its kind needs. */
static inline int fnw_ser_check_shape(const fnw_type *t)
{
    switch (t->kind) {
    case FNW_BASIC_ARRAY:
    case FNW_PRIMITIVE_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
        return t->nchildren == 1 && t->children[0];
    case FNW_MAP:
        return t->nchildren == 2 && t->children[0] && t->children[1];
    case FNW_AVRO:
        return t->avro_program != NULL;
    default:
        return 1;
    }
}

/* A non-negative int32 length or count at p. */
static inline const uint8_t *fnw_ser_read_len(const fnw_ser_rd *r, const uint8_t *p, const fnw_type *t,
                                              uint32_t *len)
{
    if (FNW_SER_LEFT(r, p) < 4)
        return fnw_ser_fail(r, p, t, "needs a 4-byte length, %zu bytes left (input truncated)",
                            FNW_SER_LEFT(r, p));
    int32_t l = (int32_t)fnw_load_be32(p);
    if (l < 0)
        return fnw_ser_fail(r, p, t, "negative length %d", l);
    *len = (uint32_t)l;
    return p + 4;
}

/* int32 length + that many bytes (STRING, BIG_DEC, PICKLED_BYTES, byte arrays). */
static inline const uint8_t *fnw_ser_read_blob(const fnw_ser_rd *r, const uint8_t *p, const fnw_type *t,
                                               const uint8_t **bytes, uint32_t *len)
{
    const uint8_t *at = p;
    if (!(p = fnw_ser_read_len(r, p, t, len)))
        return NULL;
    if (*len > FNW_SER_LEFT(r, p))
        return fnw_ser_fail(r, at, t, "length %u exceeds the %zu bytes left", *len, FNW_SER_LEFT(r, p));
    *bytes = p;
    return p + *len;
}

/* A count of elements that each take at least per_elem bytes; zero-width
 * elements are capped at FNW_SER_MAX_EMPTY_ELEMENTS. */
static inline const uint8_t *fnw_ser_read_count(const fnw_ser_rd *r, const uint8_t *p, const fnw_type *t,
                                                size_t per_elem, uint32_t *count)
{
    const uint8_t *at = p;
    if (!(p = fnw_ser_read_len(r, p, t, count)))
        return NULL;
    if (per_elem == 0) {
        if (*count > FNW_SER_MAX_EMPTY_ELEMENTS)
            return fnw_ser_fail(r, at, t, "%u zero-width elements (limit %u)", *count,
                                FNW_SER_MAX_EMPTY_ELEMENTS);
    } else if (*count > FNW_SER_LEFT(r, p) / per_elem) {
        return fnw_ser_fail(r, at, t, "%u elements need at least %zu bytes each, %zu bytes left", *count,
                            per_elem, FNW_SER_LEFT(r, p));
    }
    return p;
}

/* The one-byte magnitudes BIG_INT's short forms stand for. */
static const uint8_t fnw_ser_big_zero[1] = { 0 }, fnw_ser_big_one[1] = { 1 }, fnw_ser_big_ten[1] = { 10 };

/* BIG_INT: int32 L; 0 null, 1 ZERO, 2 ONE, 3 TEN, else L-4 magnitude bytes. */
static inline const uint8_t *fnw_ser_read_bigint(const fnw_ser_rd *r, const uint8_t *p, const fnw_type *t,
                                                 int *is_null, const uint8_t **bytes, uint32_t *len)
{
    if (FNW_SER_LEFT(r, p) < 4)
        return fnw_ser_fail_short(r, p, t, 4);
    int32_t l = (int32_t)fnw_load_be32(p);
    *is_null = 0;
    switch (l) {
    case 0:
        *is_null = 1;
        *bytes = NULL;
        *len = 0;
        return p + 4;
    case 1:
        *bytes = fnw_ser_big_zero;
        *len = 1;
        return p + 4;
    case 2:
        *bytes = fnw_ser_big_one;
        *len = 1;
        return p + 4;
    case 3:
        *bytes = fnw_ser_big_ten;
        *len = 1;
        return p + 4;
    case 4:
        return fnw_ser_fail(r, p, t, "length 4 means a zero-byte magnitude, which Java rejects");
    default:
        break;
    }
    if (l < 0)
        return fnw_ser_fail(r, p, t, "negative length %d", l);
    uint32_t n = (uint32_t)l - 4;
    if (n > FNW_SER_LEFT(r, p + 4))
        return fnw_ser_fail(r, p, t, "magnitude of %u bytes exceeds the %zu bytes left", n,
                            FNW_SER_LEFT(r, p + 4));
    *bytes = p + 4;
    *len = n;
    return p + 4 + n;
}

#endif
