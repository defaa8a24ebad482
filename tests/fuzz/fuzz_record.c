/* tests/fuzz/fuzz_record.c — fuzz target for one Flink record through the
 * serializers (codecs/ser.h): the compiled skip program, the generic
 * skip, decode and encode. The first input byte chooses the type (modulo
 * the shapes of record_shapes.h: a rich ROW, LIST<LIST<TUPLE<>>>, a
 * map-heavy TUPLE); the rest is the record.
 *
 * Properties (abort() on violation):
 *  1. the skip program and the generic skip give the same answer, length
 *     and message; an accepted length is at most the input;
 *  2. decode agrees with skip: when skip accepts n bytes, decode succeeds
 *     and consumes exactly n, or fails only with "arena limit reached";
 *     when skip refuses, decode refuses with the same message (or the arena
 *     limit, which it may reach before the bad byte);
 *  3. decode never takes more of its arena than fnw_ser_decode_budget of
 *     the input length;
 *  4. determinism: a second decode gives the same status, length, message
 *     and an equal value;
 *  5. round trip: for CANONICAL input, encode(decode(x)) is exactly the n
 *     bytes decode consumed. For any decoded input, encode either succeeds
 *     with bytes that are canonical, decode to an equal value and consume
 *     all of themselves, or (only for non-canonical input) fails with a
 *     message.
 *
 * Canonical (canon_value below) is what Flink's Java serializers write and
 * so what encode writes; decode also accepts these other spellings of a
 * value, which re-encode differently:
 *  - a BOOLEAN byte other than 0 or 1 (reads as true);
 *  - non-zero padding bits after a ROW's null mask bits;
 *  - a BASIC/OBJECT_ARRAY element flag or a MAP value flag other than 0/1;
 *  - a BIG_INT magnitude that is not minimal two's complement, or 0, 1 or
 *    10 in the long form (Java writes the short forms 1, 2, 3);
 *  - the null sentinel of BIG_INT (length 0), INSTANT or LOCAL_* in a place
 *    that has a null marker of its own (ROW field, array element, MAP
 *    value): encode marks such a null there instead;
 *  - a null LOCAL_DATE/TIME whose bytes after the sentinel are not the ones
 *    Java writes (0x80 0x00 after the year; 0x80 0x00 and INT32_MIN after
 *    the hour);
 *  - an INSTANT whose nanos are outside [0, 999999999] (not a null
 *    sentinel): Java normalizes them, encode refuses them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/bytes.h"
#include "codecs/ser_internal.h"
#include "codecs/value.h"
#include "tests/fuzz/record_shapes.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fnw_type *types[SHAPE_COUNT];
static fnw_skip_program *programs[SHAPE_COUNT];

static const uint8_t *canon_value(const fnw_type *t, const uint8_t *p, const uint8_t *end, int nullable);

#define NEED(k) do { if ((size_t)(end - p) < (size_t)(k)) return NULL; } while (0)

static int bigint_minimal(const uint8_t *b, uint32_t n)
{
    if (n == 1)
        return b[0] != 0 && b[0] != 1 && b[0] != 10;
    return !((b[0] == 0x00 && !(b[1] & 0x80)) || (b[0] == 0xff && (b[1] & 0x80)));
}

static const uint8_t *canon_scalar(const fnw_type *t, const uint8_t *p, const uint8_t *end, int nullable)
{
    size_t w = 0;
    switch (t->kind) {
    case FNW_BOOLEAN:
        NEED(1);
        return p[0] <= 1 ? p + 1 : NULL;
    case FNW_BYTE: w = 1; break;
    case FNW_SHORT: case FNW_CHAR: w = 2; break;
    case FNW_INT: case FNW_FLOAT: case FNW_SQL_DATE: case FNW_SQL_TIME: w = 4; break;
    case FNW_LONG: case FNW_DOUBLE: case FNW_SQL_TIMESTAMP: w = 8; break;
    case FNW_INSTANT: {
        NEED(12);
        int64_t s = (int64_t)fnw_load_be64(p);
        int32_t ns = (int32_t)fnw_load_be32(p + 8);
        if (s == INT64_MIN && ns == INT32_MIN)
            return nullable ? NULL : p + 12;
        return ns >= 0 && ns <= 999999999 ? p + 12 : NULL;
    }
    default:
        return NULL;
    }
    NEED(w);
    return p + w;
}

static const uint8_t *canon_local(const fnw_type *t, const uint8_t *p, const uint8_t *end, int nullable)
{
    int date = t->kind != FNW_LOCAL_TIME, time = t->kind != FNW_LOCAL_DATE;
    NEED((date ? 6 : 0) + (time ? 7 : 0));
    int null = date ? fnw_load_be32(p) == 0x80000000u : p[0] == 0x80;
    if (null && nullable)
        return NULL;
    if (date) {
        if (null && (p[4] != 0x80 || p[5] != 0))
            return NULL;
        p += 6;
    }
    if (time) {
        if (null && (p[0] != 0x80 || p[1] != 0x80 || p[2] != 0 || fnw_load_be32(p + 3) != 0x80000000u))
            return NULL;
        p += 7;
    }
    return p;
}

static const uint8_t *canon_row(const fnw_type *t, const uint8_t *p, const uint8_t *end)
{
    uint32_t n = t->nchildren;
    size_t mb = FNW_SER_MASK_BYTES(n);
    NEED(mb);
    const uint8_t *mask = p;
    for (size_t bit = 2 + n; bit < mb * 8; bit++)
        if (mask[bit >> 3] & (0x80u >> (bit & 7)))
            return NULL;
    p += mb;
    for (uint32_t i = 0; i < n && p; i++)
        if (!FNW_SER_IS_NULL_BIT(mask, i))
            p = canon_value(t->children[i], p, end, 1);
    return p;
}

/* A count, then per element: an optional flag byte (0/1), the element. */
static const uint8_t *canon_items(const fnw_type *t, const uint8_t *p, const uint8_t *end)
{
    NEED(4);
    uint32_t count = fnw_load_be32(p);
    p += 4;
    int flagged = t->kind == FNW_BASIC_ARRAY || t->kind == FNW_OBJECT_ARRAY;
    for (uint32_t i = 0; i < count && p; i++) {
        if (t->kind == FNW_MAP) {
            if (!(p = canon_value(t->children[0], p, end, 0)))
                return NULL;
            NEED(1);
            if (*p > 1)
                return NULL;
            if (*p++ == 1)
                continue;
            p = canon_value(t->children[1], p, end, 1);
            continue;
        }
        if (flagged) {
            NEED(1);
            if (*p > 1)
                return NULL;
            if (*p++ == 0)
                continue;
        }
        p = canon_value(t->children[0], p, end, flagged);
    }
    return p;
}

static const uint8_t *canon_value(const fnw_type *t, const uint8_t *p, const uint8_t *end, int nullable)
{
    switch (t->kind) {
    case FNW_ROW:
        return canon_row(t, p, end);
    case FNW_TUPLE:
        for (uint32_t i = 0; i < t->nchildren && p; i++)
            p = canon_value(t->children[i], p, end, 0);
        return p;
    case FNW_STRING: case FNW_BIG_DEC: case FNW_PICKLED_BYTES: {
        NEED(4);
        uint32_t len = fnw_load_be32(p);
        p += 4;
        NEED(len);
        return p + len;
    }
    case FNW_BIG_INT: {
        NEED(4);
        uint32_t l = fnw_load_be32(p);
        p += 4;
        if (l == 0)
            return nullable ? NULL : p;
        if (l <= 3)
            return p;
        NEED(l - 4);
        return l > 4 && bigint_minimal(p, l - 4) ? p + (l - 4) : NULL;
    }
    case FNW_LOCAL_DATE: case FNW_LOCAL_TIME: case FNW_LOCAL_DATETIME:
        return canon_local(t, p, end, nullable);
    case FNW_PRIMITIVE_ARRAY:
        if (t->children[0]->kind == FNW_BYTE)
            return canon_value(&(fnw_type){ .kind = FNW_STRING }, p, end, 0);
        /* a count then unflagged elements, as a LIST */
        /* fall through */
    case FNW_LIST: case FNW_BASIC_ARRAY: case FNW_OBJECT_ARRAY: case FNW_MAP:
        return canon_items(t, p, end);
    default:
        return canon_scalar(t, p, end, nullable);
    }
}

static void setup(void)
{
    for (int s = 0; s < SHAPE_COUNT; s++) {
        fnw_error err;
        types[s] = shape_new(s);
        CHECK(types[s]);
        programs[s] = fnw_skip_program_new(types[s], &err);
        CHECK(programs[s]);
    }
}

/* Properties 1: the two skips agree. Returns skip's status. */
static int check_skips(int s, const uint8_t *p, size_t n, size_t *used, fnw_error *err)
{
    size_t used2 = 0;
    fnw_error err2;
    *used = 0;
    int rc = fnw_skip_program_run(programs[s], p, n, used, err);
    int rc2 = fnw_ser_skip_generic(types[s], p, n, &used2, &err2);
    CHECK(rc == rc2);
    if (rc == 0)
        CHECK(*used == used2 && *used <= n);
    else
        CHECK(fuzz_same_message(err, &err2));
    return rc;
}

/* Properties 2 to 4 for one decode into a fresh arena. */
static int decode_once(const fnw_type *t, const uint8_t *p, size_t n, fnw_arena *a, fnw_value *v,
                       size_t *used, fnw_error *err)
{
    fnw_arena_init(a, 4096, 0);
    *used = 0;
    int rc = fnw_ser_decode(t, p, n, a, v, used, err);
    CHECK(a->used_total <= fnw_ser_decode_budget(n));
    if (rc != 0)
        CHECK(err->msg[0]);
    return rc;
}

static int arena_limit(const fnw_error *err)
{
    return strstr(err->msg, "arena limit reached") != NULL;
}

/* Property 5 for a decoded value v of the n bytes at p. */
static void check_round_trip(const fnw_type *t, const uint8_t *p, size_t n, const fnw_value *v)
{
    int canonical = canon_value(t, p, p + n, 0) == p + n;
    fnw_buf out;
    fnw_error err;
    fnw_buf_init(&out, 0);
    int rc = fnw_ser_encode(t, v, &out, &err);
    if (canonical)
        CHECK(rc == 0 && out.len == n && memcmp(out.p, p, n) == 0);
    if (rc != 0) {
        CHECK(err.msg[0]);
    } else if (!canonical) {
        fnw_arena a;
        fnw_value v2;
        size_t used = 0;
        CHECK(canon_value(t, out.p, out.p + out.len, 0) == out.p + out.len);
        CHECK(decode_once(t, out.p, out.len, &a, &v2, &used, &err) == 0);
        CHECK(used == out.len && fnw_value_equal(t, v, &v2));
        fnw_arena_free(&a);
    }
    fnw_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!types[0])
        setup();
    if (size == 0)
        return 0;
    int s = data[0] % SHAPE_COUNT;
    const uint8_t *p = data + 1;
    size_t n = size - 1, skipped, used, used2;
    fnw_error serr, err, err2;
    int rc_skip = check_skips(s, p, n, &skipped, &serr);

    fnw_arena a, b;
    fnw_value v, v2;
    int rc = decode_once(types[s], p, n, &a, &v, &used, &err);
    if (rc_skip == 0)
        CHECK(rc == 0 ? used == skipped : arena_limit(&err));
    else
        CHECK(rc != 0 && (strcmp(err.msg, serr.msg) == 0 || arena_limit(&err)));

    int rc2 = decode_once(types[s], p, n, &b, &v2, &used2, &err2);
    CHECK(rc == rc2);
    if (rc == 0)
        CHECK(used == used2 && fnw_value_equal(types[s], &v, &v2));
    else
        CHECK(strcmp(err.msg, err2.msg) == 0);
    fnw_arena_free(&b);

    if (rc == 0)
        check_round_trip(types[s], p, used, &v);
    fnw_arena_free(&a);
    return 0;
}
