/* codecs/ser_encode.c — encode: one fnw_value of a type appended to a buffer in
 * the byte format of Flink's Java serializer for that type, the inverse of
 * decode (ser_decode.c): what encode writes, decode reads back as the same value.
 *
 * The value is checked against the type as it is written (its kind, its
 * field count, the ranges of narrow integers, dates and times, that an
 * AVRO datum is exactly one datum of its schema); on any failure the
 * buffer is cut back to where it was, and the message names the path to
 * the offending part ("ROW field 2 'name': MAP value 0: ..."). One helper
 * per kind of encoding, dispatched by enc_value.
 */
#include "codecs/ser_internal.h"

#include "codecs/decimal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct wr {
    fnw_buf *out;
    fnw_error *err;
} wr;

__attribute__((format(printf, 3, 4), cold, noinline)) static int efail(const wr *w, const fnw_type *t,
                                                                       const char *fmt, ...)
{
    if (!w->err)
        return -1;
    char msg[FNW_ERROR_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fnw_error_set(w->err, "encoding %s: %s", fnw_kind_name(t->kind), msg);
}

static int enc_value(const fnw_type *t, const fnw_value *v, const wr *w, int depth);

/* Fails for n bytes the buffer would not take: past its limit, or no
 * memory to grow it. */
__attribute__((cold, noinline)) static int no_room(const wr *w, const fnw_type *t, size_t n)
{
    if (fnw_buf_within_limit(w->out, n))
        return efail(w, t, "out of memory growing the output buffer (%zu + %zu bytes)", w->out->len, n);
    return efail(w, t, "output buffer limit reached (%zu + %zu bytes)", w->out->len, n);
}

/* Space for n more bytes; returns where to write them. */
static inline uint8_t *room(const wr *w, const fnw_type *t, size_t n)
{
    if (fnw_buf_reserve(w->out, n) < 0) {
        no_room(w, t, n);
        return NULL;
    }
    uint8_t *q = w->out->p + w->out->len;
    w->out->len += n;
    return q;
}

static int put_blob(const wr *w, const fnw_type *t, const uint8_t *bytes, uint32_t n)
{
    if (n > INT32_MAX)
        return efail(w, t, "%u bytes exceed the int32 length", n);
    if (n && !bytes)
        return efail(w, t, "%u bytes but no data pointer", n);
    uint8_t *q = room(w, t, 4 + (size_t)n);
    if (!q)
        return -1;
    fnw_store_be32(q, n);
    if (n)
        memcpy(q + 4, bytes, n);
    return 0;
}

/* DECIMAL(p, s): the text rounded HALF_UP to the scale, as the JVM's
 * DecimalData.fromBigDecimal would round it; one that needs more than p
 * digits fails here rather than arrive as a null (see decimal.h). A
 * DataStream BIG_DEC (no precision) goes as it is. */
static int enc_decimal(const wr *w, const fnw_type *t, const fnw_value *v)
{
    if (!t->precision)
        return put_blob(w, t, v->u.bytes, v->count);
    if (v->count && !v->u.bytes)
        return efail(w, t, "%u bytes but no data pointer", v->count);
    char text[FNW_DECIMAL_TEXT_MAX];
    size_t n = 0;
    if (fnw_decimal_quantize((const char *)v->u.bytes, v->count, t->precision, t->scale, FNW_DECIMAL_HALF_UP,
                             text, sizeof text, &n, w->err) < 0)
        return fnw_error_prefix(w->err, "encoding DECIMAL");
    return put_blob(w, t, (const uint8_t *)text, (uint32_t)n);
}

static int range(const wr *w, const fnw_type *t, int64_t v, int64_t lo, int64_t hi)
{
    if (v < lo || v > hi)
        return efail(w, t, "value %lld out of range [%lld, %lld]", (long long)v, (long long)lo, (long long)hi);
    return 0;
}

/* Whether v fits t's encoding (narrow integers, an INSTANT's nanos). */
static int scalar_in_range(const fnw_type *t, const fnw_value *v, const wr *w)
{
    int64_t i = v->u.i;
    switch (t->kind) {
    case FNW_BYTE:
        if (range(w, t, i, INT8_MIN, INT8_MAX) < 0)
            return -1;
        break;
    case FNW_SHORT:
        if (range(w, t, i, INT16_MIN, INT16_MAX) < 0)
            return -1;
        break;
    case FNW_CHAR:
        if (range(w, t, i, 0, UINT16_MAX) < 0)
            return -1;
        break;
    case FNW_INT:
    case FNW_SQL_DATE:
    case FNW_SQL_TIME:
        if (range(w, t, i, INT32_MIN, INT32_MAX) < 0)
            return -1;
        break;
    case FNW_INSTANT:
        if (v->u.instant.nanos < 0 || v->u.instant.nanos > 999999999)
            return efail(w, t, "nanos %d not in [0, 999999999]", v->u.instant.nanos);
        break;
    case FNW_SQL_TIMESTAMP:
    case FNW_LOCAL_ZONED_TIMESTAMP:
        /* TimestampData.fromEpochMillis(ms, nanos) takes 0..999999 */
        if (v->count > 999999)
            return efail(w, t, "nanos within the millisecond %u not in [0, 999999]", v->count);
        break;
    default:
        break;
    }
    return 0;
}

static int enc_scalar(const fnw_type *t, const fnw_value *v, const wr *w)
{
    int64_t i = v->u.i;
    if (scalar_in_range(t, v, w) < 0)
        return -1;
    uint8_t *q = room(w, t, fnw_ser_width(t));
    if (!q)
        return -1;
    switch (t->kind) {
    case FNW_BYTE:
        q[0] = (uint8_t)i;
        break;
    case FNW_BOOLEAN:
        q[0] = i != 0;
        break;
    case FNW_SHORT:
    case FNW_CHAR:
        fnw_store_be16(q, (uint16_t)i);
        break;
    case FNW_INT:
    case FNW_SQL_DATE:
    case FNW_SQL_TIME:
        fnw_store_be32(q, (uint32_t)i);
        break;
    case FNW_LONG:
        fnw_store_be64(q, (uint64_t)i);
        break;
    case FNW_SQL_TIMESTAMP:
    case FNW_LOCAL_ZONED_TIMESTAMP:
        /* precision <= 3: ms only, the nanos (if any) dropped as PyFlink's
         * TimestampCoderImpl does */
        fnw_store_be64(q, (uint64_t)i);
        if (fnw_type_timestamp_has_nanos(t))
            fnw_store_be32(q + 8, v->count);
        break;
    case FNW_FLOAT: {
        uint32_t b;
        memcpy(&b, &v->u.f, 4);
        fnw_store_be32(q, b);
        break;
    }
    case FNW_DOUBLE: {
        uint64_t b;
        memcpy(&b, &v->u.d, 8);
        fnw_store_be64(q, b);
        break;
    }
    case FNW_INSTANT:
        fnw_store_be64(q, (uint64_t)v->u.instant.seconds);
        fnw_store_be32(q + 8, (uint32_t)v->u.instant.nanos);
        break;
    default:
        break;
    }
    return 0;
}

/* Java BigIntSerializer: the constants for 0, 1, 10, else L = n + 4 and the
 * minimal two's complement (BigInteger.toByteArray()). */
static int enc_bigint(const fnw_type *t, const fnw_value *v, const wr *w)
{
    const uint8_t *b = v->u.bytes;
    uint32_t n = v->count;
    if (n == 0 || !b)
        return efail(w, t, "no magnitude bytes (use is_null for null, {0x00} for zero)");
    while (n > 1 && ((b[0] == 0x00 && !(b[1] & 0x80)) || (b[0] == 0xff && (b[1] & 0x80)))) {
        b++;
        n--;
    }
    if (n == 1 && (b[0] == 0 || b[0] == 1 || b[0] == 10)) {
        uint8_t *q = room(w, t, 4);
        if (!q)
            return -1;
        fnw_store_be32(q, b[0] == 0 ? 1 : b[0] == 1 ? 2 : 3);
        return 0;
    }
    if (n > INT32_MAX - 4)
        return efail(w, t, "%u magnitude bytes exceed the int32 length", n);
    uint8_t *q = room(w, t, 4 + (size_t)n);
    if (!q)
        return -1;
    fnw_store_be32(q, n + 4);
    memcpy(q + 4, b, n);
    return 0;
}

static int enc_local(const fnw_type *t, const fnw_value *v, const wr *w)
{
    int date = t->kind != FNW_LOCAL_TIME, time = t->kind != FNW_LOCAL_DATE;
    int null = v->is_null;
    if (!null && date && !fnw_ser_valid_date(v->u.local.year, v->u.local.month, v->u.local.day))
        return efail(w, t, "invalid date %d-%d-%d", v->u.local.year, v->u.local.month, v->u.local.day);
    if (!null && time &&
        !fnw_ser_valid_time(v->u.local.hour, v->u.local.minute, v->u.local.second, v->u.local.nano))
        return efail(w, t, "invalid time %d:%d:%d.%09d", v->u.local.hour, v->u.local.minute,
                     v->u.local.second, v->u.local.nano);
    uint8_t *q = room(w, t, (date ? 6 : 0) + (time ? 7 : 0));
    if (!q)
        return -1;
    if (date) {
        if (null) {
            fnw_store_be32(q, (uint32_t)INT32_MIN);
            fnw_store_be16(q + 4, 0x8000);
        } else {
            fnw_store_be32(q, (uint32_t)v->u.local.year);
            q[4] = (uint8_t)v->u.local.month;
            q[5] = (uint8_t)v->u.local.day;
        }
        q += 6;
    }
    if (time) {
        if (null) {
            q[0] = 0x80;
            fnw_store_be16(q + 1, 0x8000);
            fnw_store_be32(q + 3, (uint32_t)INT32_MIN);
        } else {
            q[0] = (uint8_t)v->u.local.hour;
            q[1] = (uint8_t)v->u.local.minute;
            q[2] = (uint8_t)v->u.local.second;
            fnw_store_be32(q + 3, (uint32_t)v->u.local.nano);
        }
    }
    return 0;
}

static int enc_null(const fnw_type *t, const fnw_value *v, const wr *w)
{
    switch (t->kind) {
    case FNW_BIG_INT: {
        uint8_t *q = room(w, t, 4);
        if (!q)
            return -1;
        fnw_store_be32(q, 0);
        return 0;
    }
    case FNW_INSTANT: {
        uint8_t *q = room(w, t, 12);
        if (!q)
            return -1;
        fnw_store_be64(q, (uint64_t)INT64_MIN);
        fnw_store_be32(q + 8, (uint32_t)INT32_MIN);
        return 0;
    }
    case FNW_LOCAL_DATE:
    case FNW_LOCAL_TIME:
    case FNW_LOCAL_DATETIME:
        return enc_local(t, v, w);
    default:
        return efail(w, t,
                     "null here has no encoding (nulls are allowed in ROW fields, "
                     "BASIC/OBJECT_ARRAY elements and MAP values)");
    }
}

static int count_matches(const fnw_type *t, const fnw_value *v, const wr *w, uint32_t want)
{
    if (v->count != want)
        return efail(w, t, "value has %u fields, the type has %u", v->count, want);
    if (want && !v->u.items)
        return efail(w, t, "value has %u fields but no items", want);
    return 0;
}

static int enc_row(const fnw_type *t, const fnw_value *v, const wr *w, int depth)
{
    uint32_t n = t->nchildren;
    if (count_matches(t, v, w, n) < 0)
        return -1;
    if (v->row_kind > FNW_DELETE)
        return efail(w, t, "row kind %u is not one of 0..3", v->row_kind);
    size_t mb = FNW_SER_MASK_BYTES(n);
    uint8_t *q = room(w, t, mb);
    if (!q)
        return -1;
    size_t mask_at = (size_t)(q - w->out->p); /* q may move when the buffer grows */
    memset(q, 0, mb);
    q[0] = (uint8_t)(((v->row_kind & 1) << 7) | ((v->row_kind & 2) << 5));
    for (uint32_t i = 0; i < n; i++)
        if (v->u.items[i].is_null)
            w->out->p[mask_at + ((i + 2) >> 3)] |= (uint8_t)(0x80u >> ((i + 2) & 7));
    for (uint32_t i = 0; i < n; i++) {
        if (v->u.items[i].is_null)
            continue;
        if (enc_value(t->children[i], &v->u.items[i], w, depth + 1) < 0) {
            if (t->names && t->names[i][0])
                return fnw_error_prefix(w->err, "ROW field %u '%s'", i, t->names[i]);
            return fnw_error_prefix(w->err, "ROW field %u", i);
        }
    }
    return 0;
}

static int enc_items(const fnw_type *t, const fnw_value *v, const wr *w, int depth)
{
    if (v->count && !v->u.items)
        return efail(w, t, "%u elements but no items", v->count);
    if (v->count > INT32_MAX)
        return efail(w, t, "%u elements exceed the int32 count", v->count);
    uint8_t *q = room(w, t, 4);
    if (!q)
        return -1;
    fnw_store_be32(q, v->count);
    const fnw_type *e = t->children[0];
    for (uint32_t i = 0; i < v->count; i++) {
        const fnw_value *it = &v->u.items[i];
        if (t->kind == FNW_BASIC_ARRAY || t->kind == FNW_OBJECT_ARRAY) {
            if (fnw_buf_put_u8(w->out, it->is_null ? 0 : 1) < 0)
                return no_room(w, t, 1);
            if (it->is_null)
                continue;
        } else if (t->kind == FNW_MAP) {
            if (enc_value(t->children[0], &v->u.items[2 * i], w, depth + 1) < 0)
                return fnw_error_prefix(w->err, "MAP key %u", i);
            it = &v->u.items[2 * i + 1];
            if (fnw_buf_put_u8(w->out, it->is_null ? 1 : 0) < 0)
                return no_room(w, t, 1);
            if (it->is_null)
                continue;
            e = t->children[1];
        }
        if (enc_value(e, it, w, depth + 1) < 0)
            return fnw_error_prefix(w->err, "%s %s %u", fnw_kind_name(t->kind),
                                    t->kind == FNW_MAP ? "value" : "element", i);
    }
    return 0;
}

static int enc_tuple(const fnw_type *t, const fnw_value *v, const wr *w, int depth)
{
    if (count_matches(t, v, w, t->nchildren) < 0)
        return -1;
    for (uint32_t i = 0; i < t->nchildren; i++)
        if (enc_value(t->children[i], &v->u.items[i], w, depth + 1) < 0)
            return fnw_error_prefix(w->err, "TUPLE field %u", i);
    return 0;
}

/* The datum's bytes as they are, once the Avro program has checked that
 * they hold exactly one datum of the schema. */
static int enc_avro(const fnw_type *t, const fnw_value *v, const wr *w)
{
    if (v->count && !v->u.bytes)
        return efail(w, t, "%u bytes but no data pointer", v->count);
    size_t used;
    const uint8_t *b = v->count ? v->u.bytes : fnw_ser_empty_input;
    if (fnw_avro_program_skip(t->avro_program, b, v->count, &used, w->err) < 0)
        return fnw_error_prefix(w->err, "encoding AVRO: the datum does not match the schema");
    if (used != v->count)
        return efail(w, t, "the datum ends after %zu of its %u bytes", used, v->count);
    if (v->count == 0)
        return 0; /* a datum of no bytes ("null", an empty record): room() on an empty buffer has no pointer */
    uint8_t *q = room(w, t, v->count);
    if (!q)
        return -1;
    memcpy(q, b, v->count);
    return 0;
}

static int enc_value(const fnw_type *t, const fnw_value *v, const wr *w, int depth)
{
    if (v->kind != t->kind)
        return efail(w, t, "value is of kind %s", fnw_kind_name((fnw_kind)v->kind));
    if (depth > FNW_TYPE_MAX_DEPTH)
        return efail(w, t, "type nests deeper than %d levels", FNW_TYPE_MAX_DEPTH);
    if (!fnw_ser_check_shape(t))
        return efail(w, t, "malformed type (missing element types or Avro schema)");
    if (v->is_null)
        return enc_null(t, v, w);
    if (fnw_ser_width(t))
        return enc_scalar(t, v, w);
    switch (t->kind) {
    case FNW_ROW:
        return enc_row(t, v, w, depth);
    case FNW_STRING:
    case FNW_PICKLED_BYTES:
        return put_blob(w, t, v->u.bytes, v->count);
    case FNW_BIG_DEC:
        return enc_decimal(w, t, v);
    case FNW_BIG_INT:
        return enc_bigint(t, v, w);
    case FNW_LOCAL_DATE:
    case FNW_LOCAL_TIME:
    case FNW_LOCAL_DATETIME:
        return enc_local(t, v, w);
    case FNW_PRIMITIVE_ARRAY:
        if (!fnw_ser_width(t->children[0]))
            return efail(w, t, "elements of kind %s are not primitive", fnw_kind_name(t->children[0]->kind));
        if (t->children[0]->kind == FNW_BYTE)
            return put_blob(w, t, v->u.bytes, v->count);
        return enc_items(t, v, w, depth);
    case FNW_BASIC_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
    case FNW_MAP:
        return enc_items(t, v, w, depth);
    case FNW_TUPLE:
        return enc_tuple(t, v, w, depth);
    case FNW_AVRO:
        return enc_avro(t, v, w);
    default:
        return efail(w, t, "unsupported type kind %d", (int)t->kind);
    }
}

int fnw_ser_encode(const fnw_type *t, const fnw_value *v, fnw_buf *out, fnw_error *err)
{
    if (!t || !v)
        return fnw_error_set(err, "no %s to encode", t ? "value" : "type");
    size_t mark = out->len;
    wr w = { .out = out, .err = err };
    if (enc_value(t, v, &w, 1) < 0) {
        out->len = mark;
        return -1;
    }
    return 0;
}
