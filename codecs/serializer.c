/* codecs/serializer.c — Flink's Java DataStream serializers, byte for byte
 * (flink-protocol.md §4.4-4.5): skip (validate and measure), decode and
 * encode one value of an fnw_type.
 *
 * All three walk the type recursively; depth is bounded by the type
 * (FNW_TYPE_MAX_DEPTH). Every length and element count is checked against
 * the bytes that remain before anything is read or allocated: a count of
 * elements that each need at least one byte cannot exceed the bytes left,
 * and zero-width elements are capped at FNW_SER_MAX_EMPTY_ELEMENTS. Error
 * messages name the type and the byte offset from the start of the value.
 *
 * Skip, once per record on the pass-through path, first runs a program
 * compiled from the type beforehand ("skip plans" below, built with
 * fnw_skip_plan_new and passed in), and the walk only when that fails, so
 * the walk's answer and message always stand. Skip allocates nothing;
 * decode allocates item arrays only from its arena.
 */
#include "codecs/serializer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/avro_datum.h"
#include "codecs/bytes.h"

typedef struct rd {
    const uint8_t *base;   /* offsets in messages count from here */
    const uint8_t *end;
    fnw_arena *arena;      /* decode only */
    fnw_error *err;
} rd;

/* Kinds whose encoding is always this many bytes and needs no validation. */
static const uint8_t fixed_width[FNW_KIND_COUNT] = {
    [FNW_BYTE] = 1, [FNW_BOOLEAN] = 1, [FNW_SHORT] = 2, [FNW_INT] = 4, [FNW_LONG] = 8,
    [FNW_FLOAT] = 4, [FNW_DOUBLE] = 8, [FNW_CHAR] = 2, [FNW_SQL_DATE] = 4, [FNW_SQL_TIME] = 4,
    [FNW_SQL_TIMESTAMP] = 8, [FNW_INSTANT] = 12,
};

#define LEFT(r, p) ((size_t)((r)->end - (p)))
#define MASK_BYTES(arity) (((size_t)(arity) + 2 + 7) / 8)
#define IS_NULL_BIT(mask, i) ((mask)[((i) + 2) >> 3] & (0x80u >> (((i) + 2) & 7)))

__attribute__((format(printf, 4, 5), cold, noinline))
static const uint8_t *fail(const rd *r, const uint8_t *at, const fnw_type *t, const char *fmt, ...)
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

__attribute__((cold, noinline))
static const uint8_t *fail_short(const rd *r, const uint8_t *at, const fnw_type *t, size_t need)
{
    return fail(r, at, t, "needs %zu bytes, %zu left (input truncated)", need, LEFT(r, at));
}

/* ---- shared pieces ---------------------------------------------------------- */

static int check_shape(const fnw_type *t)
{
    switch (t->kind) {
    case FNW_BASIC_ARRAY: case FNW_PRIMITIVE_ARRAY: case FNW_OBJECT_ARRAY: case FNW_LIST:
        return t->nchildren == 1 && t->children[0];
    case FNW_MAP:
        return t->nchildren == 2 && t->children[0] && t->children[1];
    case FNW_AVRO:
        return t->avro_plan != NULL;
    default:
        return 1;
    }
}

/* Fewest bytes any encoding of t takes (saturating). */
static size_t min_size(const fnw_type *t, int depth)
{
    size_t w = fixed_width[t->kind];
    if (w)
        return w;
    switch (t->kind) {
    case FNW_ROW:
        return MASK_BYTES(t->nchildren);
    case FNW_LOCAL_DATE:
        return 6;
    case FNW_LOCAL_TIME:
        return 7;
    case FNW_LOCAL_DATETIME:
        return 13;
    case FNW_AVRO:
        return t->avro_plan ? fnw_avro_plan_min_size(t->avro_plan) : 1;
    case FNW_TUPLE: {
        size_t sum = 0;
        if (depth > FNW_TYPE_MAX_DEPTH)
            return 1;
        for (uint32_t i = 0; i < t->nchildren; i++) {
            size_t m = min_size(t->children[i], depth + 1);
            sum = m > SIZE_MAX - sum ? SIZE_MAX : sum + m;
        }
        return sum;
    }
    default:
        return 4;   /* a length or a count */
    }
}

/* A non-negative int32 length or count at p. */
static inline const uint8_t *read_len(const rd *r, const uint8_t *p, const fnw_type *t, uint32_t *len)
{
    if (LEFT(r, p) < 4)
        return fail(r, p, t, "needs a 4-byte length, %zu bytes left (input truncated)", LEFT(r, p));
    int32_t l = (int32_t)fnw_load_be32(p);
    if (l < 0)
        return fail(r, p, t, "negative length %d", l);
    *len = (uint32_t)l;
    return p + 4;
}

/* int32 length + that many bytes (STRING, BIG_DEC, PICKLED_BYTES, byte arrays). */
static inline const uint8_t *read_blob(const rd *r, const uint8_t *p, const fnw_type *t,
                                       const uint8_t **bytes, uint32_t *len)
{
    const uint8_t *at = p;
    if (!(p = read_len(r, p, t, len)))
        return NULL;
    if (*len > LEFT(r, p))
        return fail(r, at, t, "length %u exceeds the %zu bytes left", *len, LEFT(r, p));
    *bytes = p;
    return p + *len;
}

/* A count of elements that each take at least per_elem bytes. */
static const uint8_t *read_count(const rd *r, const uint8_t *p, const fnw_type *t, size_t per_elem,
                                 uint32_t *count)
{
    const uint8_t *at = p;
    if (!(p = read_len(r, p, t, count)))
        return NULL;
    if (per_elem == 0) {
        if (*count > FNW_SER_MAX_EMPTY_ELEMENTS)
            return fail(r, at, t, "%u zero-width elements (limit %u)", *count, FNW_SER_MAX_EMPTY_ELEMENTS);
    } else if (*count > LEFT(r, p) / per_elem) {
        return fail(r, at, t, "%u elements need at least %zu bytes each, %zu bytes left", *count,
                    per_elem, LEFT(r, p));
    }
    return p;
}

/* BIG_INT: int32 L; 0 null, 1 ZERO, 2 ONE, 3 TEN, else L-4 magnitude bytes. */
static const uint8_t big_zero[1] = { 0 }, big_one[1] = { 1 }, big_ten[1] = { 10 };

static const uint8_t *read_bigint(const rd *r, const uint8_t *p, const fnw_type *t, int *is_null,
                                  const uint8_t **bytes, uint32_t *len)
{
    if (LEFT(r, p) < 4)
        return fail_short(r, p, t, 4);
    int32_t l = (int32_t)fnw_load_be32(p);
    *is_null = 0;
    switch (l) {
    case 0: *is_null = 1; *bytes = NULL; *len = 0; return p + 4;
    case 1: *bytes = big_zero; *len = 1; return p + 4;
    case 2: *bytes = big_one; *len = 1; return p + 4;
    case 3: *bytes = big_ten; *len = 1; return p + 4;
    case 4: return fail(r, p, t, "length 4 means a zero-byte magnitude, which Java rejects");
    default:
        break;
    }
    if (l < 0)
        return fail(r, p, t, "negative length %d", l);
    uint32_t n = (uint32_t)l - 4;
    if (n > LEFT(r, p + 4))
        return fail(r, p, t, "magnitude of %u bytes exceeds the %zu bytes left", n, LEFT(r, p + 4));
    *bytes = p + 4;
    *len = n;
    return p + 4 + n;
}

/* java.time ranges (LocalDate.of / LocalTime.of reject anything else). */
static int valid_date(int32_t y, int m, int d)
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

static int valid_time(int h, int mi, int s, int32_t ns)
{
    return h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 59 && ns >= 0 && ns <= 999999999;
}

typedef struct local_parts {
    int date_null, time_null;
    int32_t year; int8_t month, day;
    int8_t hour, minute, second; int32_t nano;
} local_parts;

/* LOCAL_DATE (int32 year, int8 month, int8 day; null: year = INT32_MIN + 2 bytes),
 * LOCAL_TIME (int8 h, m, s, int32 nano; null: h = -128 + 6 bytes), or both. */
static const uint8_t *read_local(const rd *r, const uint8_t *p, const fnw_type *t, local_parts *lp)
{
    int date = t->kind != FNW_LOCAL_TIME, time = t->kind != FNW_LOCAL_DATE;
    size_t need = (date ? 6 : 0) + (time ? 7 : 0);
    if (LEFT(r, p) < need)
        return fail_short(r, p, t, need);
    memset(lp, 0, sizeof *lp);
    const uint8_t *at = p;
    if (date) {
        lp->year = (int32_t)fnw_load_be32(p);
        lp->date_null = lp->year == INT32_MIN;
        lp->month = (int8_t)p[4];
        lp->day = (int8_t)p[5];
        if (lp->date_null)
            lp->year = lp->month = lp->day = 0;
        else if (!valid_date(lp->year, lp->month, lp->day))
            return fail(r, at, t, "invalid date %d-%d-%d", lp->year, lp->month, lp->day);
        p += 6;
    }
    if (time) {
        lp->hour = (int8_t)p[0];
        lp->time_null = lp->hour == INT8_MIN;
        lp->minute = (int8_t)p[1];
        lp->second = (int8_t)p[2];
        lp->nano = (int32_t)fnw_load_be32(p + 3);
        if (lp->time_null)
            lp->hour = lp->minute = lp->second = 0, lp->nano = 0;
        else if (!valid_time(lp->hour, lp->minute, lp->second, lp->nano))
            return fail(r, p, t, "invalid time %d:%d:%d.%09d", lp->hour, lp->minute, lp->second, lp->nano);
        p += 7;
    }
    if (date && time && lp->date_null != lp->time_null)
        return fail(r, at, t, "exactly one of the date and the time is null");
    return p;
}

/* ---- skip ------------------------------------------------------------------- */

static const uint8_t *skip_v(const fnw_type *t, const uint8_t *p, const rd *r, int depth);

static inline const uint8_t *skip_elem(const fnw_type *t, const uint8_t *p, const rd *r, int depth)
{
    size_t w = fixed_width[t->kind];
    if (w) {
        if (LEFT(r, p) < w)
            return fail_short(r, p, t, w);
        return p + w;
    }
    return skip_v(t, p, r, depth);
}

static const uint8_t *skip_row(const fnw_type *t, const uint8_t *p, const rd *r, int depth)
{
    uint32_t n = t->nchildren;
    size_t mb = MASK_BYTES(n);
    if (LEFT(r, p) < mb)
        return fail_short(r, p, t, mb);
    const uint8_t *mask = p;
    p += mb;
    for (uint32_t i = 0; i < n; i++) {
        if (IS_NULL_BIT(mask, i))
            continue;
        if (!(p = skip_elem(t->children[i], p, r, depth + 1)))
            return NULL;
    }
    return p;
}

static const uint8_t *skip_v(const fnw_type *t, const uint8_t *p, const rd *r, int depth)
{
    size_t w = fixed_width[t->kind];
    if (w) {
        if (LEFT(r, p) < w)
            return fail_short(r, p, t, w);
        return p + w;
    }
    if (depth > FNW_TYPE_MAX_DEPTH)
        return fail(r, p, t, "type nests deeper than %d levels", FNW_TYPE_MAX_DEPTH);
    if (!check_shape(t))
        return fail(r, p, t, "malformed type (missing element types or Avro schema)");
    const uint8_t *bytes = NULL;
    uint32_t len = 0, count = 0;
    int is_null = 0;
    local_parts lp;
    switch (t->kind) {
    case FNW_ROW:
        return skip_row(t, p, r, depth);
    case FNW_STRING:
    case FNW_BIG_DEC:
    case FNW_PICKLED_BYTES:
        return read_blob(r, p, t, &bytes, &len);
    case FNW_BIG_INT:
        return read_bigint(r, p, t, &is_null, &bytes, &len);
    case FNW_LOCAL_DATE:
    case FNW_LOCAL_TIME:
    case FNW_LOCAL_DATETIME:
        return read_local(r, p, t, &lp);
    case FNW_PRIMITIVE_ARRAY: {
        const fnw_type *e = t->children[0];
        size_t ew = fixed_width[e->kind];
        if (!ew)
            return fail(r, p, t, "elements of kind %s are not primitive", fnw_kind_name(e->kind));
        if (e->kind == FNW_BYTE)
            return read_blob(r, p, t, &bytes, &len);
        if (!(p = read_count(r, p, t, ew, &count)))
            return NULL;
        return p + (size_t)count * ew;
    }
    case FNW_BASIC_ARRAY:
    case FNW_OBJECT_ARRAY: {
        const fnw_type *e = t->children[0];
        if (!(p = read_count(r, p, t, 1, &count)))
            return NULL;
        for (uint32_t i = 0; i < count; i++) {
            if (p == r->end)
                return fail_short(r, p, t, 1);
            if (*p++ == 0)
                continue;   /* null element */
            if (!(p = skip_elem(e, p, r, depth + 1)))
                return NULL;
        }
        return p;
    }
    case FNW_LIST: {
        const fnw_type *e = t->children[0];
        size_t per = min_size(e, depth + 1);
        if (!(p = read_count(r, p, t, per, &count)))
            return NULL;
        size_t ew = fixed_width[e->kind];
        if (ew)
            return p + (size_t)count * ew;   /* count <= left / ew was checked */
        if (per == 0)
            return p;                        /* zero-width elements: nothing to read */
        for (uint32_t i = 0; i < count; i++)
            if (!(p = skip_v(e, p, r, depth + 1)))
                return NULL;
        return p;
    }
    case FNW_MAP: {
        const fnw_type *k = t->children[0], *v = t->children[1];
        if (!(p = read_count(r, p, t, min_size(k, depth + 1) + 1, &count)))
            return NULL;
        for (uint32_t i = 0; i < count; i++) {
            if (!(p = skip_elem(k, p, r, depth + 1)))
                return NULL;
            if (p == r->end)
                return fail_short(r, p, t, 1);
            if (*p++ != 0)
                continue;   /* null value */
            if (!(p = skip_elem(v, p, r, depth + 1)))
                return NULL;
        }
        return p;
    }
    case FNW_TUPLE:
        for (uint32_t i = 0; i < t->nchildren; i++)
            if (!(p = skip_elem(t->children[i], p, r, depth + 1)))
                return NULL;
        return p;
    case FNW_AVRO:
        return fnw_avro_walk(t->avro_plan, p, r->end, r->base, r->err);
    default:
        return fail(r, p, t, "unsupported type kind %d", (int)t->kind);
    }
}

static const uint8_t empty_input[1];

int fnw_ser_skip_generic(const fnw_type *t, const uint8_t *p, size_t n, size_t *used, fnw_error *err)
{
    if (!t)
        return fnw_error_set(err, "no type to skip a value of");
    if (!p)
        p = empty_input, n = 0;
    rd r = { .base = p, .end = p + n, .err = err };
    const uint8_t *q = skip_v(t, p, &r, 1);
    if (!q)
        return -1;
    *used = (size_t)(q - p);
    return 0;
}

/* ---- skip plans --------------------------------------------------------------
 * The pass-through path skips the same type once per record, so the type is
 * compiled once (fnw_skip_plan_new, when its descriptor is planned) into two
 * programs:
 *
 *  - a tree of ops, one per value followed by the ops of its parts, each
 *    ROW field's op naming its null bit (span steps over a null field).
 *    ROW, TUPLE and leaves whose only check is a length have ops of their
 *    own; any other subtree is one SK_GENERIC op that runs skip_v on it;
 *  - straight-line programs for the same tree, usually one or two ops per
 *    record: each op tests a mask byte for nulls, takes a run of fixed
 *    bytes, reads one length (or hands one value to skip_v) and takes
 *    another run of fixed bytes. They assume no null field, except that a
 *    top-level ROW of up to SK_PATTERN_FIELDS fields has one program per
 *    combination of null fields, picked by its mask byte. A record with a
 *    null where its program assumes none goes to the tree.
 *
 * Both only detect failure: whenever one fails, fnw_ser_skip falls back to
 * the next and finally to the generic walk, whose answer and message stand.
 * So a plan must accept exactly what skip_v accepts, with the same length
 * (tests/unit/test_serializer_plan.c compares them on hostile input). */

enum {
    SK_FIXED,     /* w bytes */
    SK_COUNTED,   /* int32 count >= 0, then count * w bytes (strings: w = 1) */
    SK_BIG_INT,   /* BIG_INT's length forms */
    SK_ROW,       /* w mask bytes, then n fields, each unless its null bit is set */
    SK_SEQ,       /* n parts, one after another (TUPLE) */
    SK_GENERIC,   /* skip_v(t) at depth n */
};

typedef struct sk_op {
    uint8_t code;
    uint8_t null_bit;     /* a ROW field: null if its ROW's mask byte null_byte has this bit */
    uint32_t null_byte;
    uint32_t span;        /* ops of this value, itself included */
    uint32_t n;
    uint64_t w;
    const fnw_type *t;
} sk_op;

/* The variable part of a straight-line op. */
enum { SL_NONE, SL_COUNTED, SL_BIG_INT, SL_GENERIC };

/* [mask byte with none of `bits` set] [fixed bytes] [var] [tail fixed bytes] */
typedef struct sk_lin {
    uint8_t bits;     /* 0: no mask byte to test */
    uint8_t var;
    uint8_t last;     /* the value ends after this op */
    uint32_t w;       /* SL_COUNTED: bytes per element; SL_GENERIC: the tree op's index */
    uint64_t pre;     /* the mask byte and the fixed bytes */
    uint64_t need;    /* pre + the length field of SL_COUNTED / SL_BIG_INT */
    uint64_t tail;
} sk_lin;

#define SK_PATTERN_FIELDS 6     /* the fields one mask byte holds */
#define SK_PATTERN_MAX_OPS 2048 /* beyond this, one program (wide nested rows) */

/* One malloc block (fnw_skip_plan_free frees it): this, the tree ops, then
 * the straight ops. nops == 0: no better than the generic walk; nlin == 0:
 * no straight programs. The program for a record starts at
 * lin[start[(mask byte >> pat_shift) & pat_mask]]. */
typedef struct fnw_skip_plan {
    uint32_t nops, nlin;
    const sk_lin *lin;
    uint8_t pat_shift, pat_mask;
    uint32_t start[1u << SK_PATTERN_FIELDS];
    const fnw_type *t;   /* borrowed: what the generic walk falls back to */
    sk_op ops[];
} sk_plan;   /* serializer.h's fnw_skip_plan */

typedef struct sk_builder {
    sk_op *ops;
    uint32_t nops, cap;
    sk_lin *lin;
    uint32_t nlin, lincap;
    uint32_t prog;    /* where the program being built starts in lin */
} sk_builder;

/* Fixed-byte runs stay far from wrapping uint64_t sums (absurd types lose
 * their straight programs, nothing else). */
#define SK_MAX_RUN (UINT64_C(1) << 48)

/* Bytes every encoding of t takes when that is the only possibility and
 * skip_v checks nothing else (fixed scalars, TUPLEs of them); else -1. */
static int64_t exact_size(const fnw_type *t, int depth)
{
    if (fixed_width[t->kind])
        return fixed_width[t->kind];
    if (t->kind != FNW_TUPLE || depth > FNW_TYPE_MAX_DEPTH)
        return -1;
    int64_t sum = 0;
    for (uint32_t i = 0; i < t->nchildren; i++) {
        int64_t c = t->children[i] ? exact_size(t->children[i], depth + 1) : -1;
        if (c < 0 || c > UINT32_MAX - sum)
            return -1;
        sum += c;
    }
    return sum;
}

/* Room for one more element of *arr (n used of *cap, each size bytes). */
static int grow(void **arr, uint32_t n, uint32_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    if (*cap > (UINT32_MAX >> 2))
        return -1;
    uint32_t c = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, (size_t)c * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

/* The tree ops of one value of t at depth (skip_v's depth). */
static int tree_value(sk_builder *b, const fnw_type *t, int depth)
{
    if (grow((void **)&b->ops, b->nops, &b->cap, sizeof *b->ops) < 0)
        return -1;
    uint32_t at = b->nops++;
    sk_op o = { .code = SK_GENERIC };
    int64_t size = exact_size(t, depth);
    const fnw_type *e = t->nchildren == 1 ? t->children[0] : NULL;
    if (size >= 0) {
        o.code = SK_FIXED;
        o.w = (uint64_t)size;
    } else if (depth > FNW_TYPE_MAX_DEPTH || !check_shape(t)) {
        o.code = SK_GENERIC;   /* fails there, unless the value is never reached */
    } else if (t->kind == FNW_STRING || t->kind == FNW_BIG_DEC || t->kind == FNW_PICKLED_BYTES) {
        o.code = SK_COUNTED;
        o.w = 1;
    } else if (t->kind == FNW_BIG_INT) {
        o.code = SK_BIG_INT;
    } else if (t->kind == FNW_PRIMITIVE_ARRAY && fixed_width[e->kind]) {
        o.code = SK_COUNTED;   /* read_blob for BYTE is read_count with 1 */
        o.w = fixed_width[e->kind];
    } else if (t->kind == FNW_LIST && exact_size(e, depth + 1) > 0) {
        o.code = SK_COUNTED;   /* read_count(min_size) admits exactly count * size bytes */
        o.w = (uint64_t)exact_size(e, depth + 1);
    } else if (t->kind == FNW_ROW || t->kind == FNW_TUPLE) {
        o.code = t->kind == FNW_ROW ? SK_ROW : SK_SEQ;
        o.n = t->nchildren;
        o.w = t->kind == FNW_ROW ? MASK_BYTES(t->nchildren) : 0;
        for (uint32_t i = 0; i < t->nchildren; i++) {
            uint32_t f = b->nops;
            if (!t->children[i] || tree_value(b, t->children[i], depth + 1) < 0)
                return -1;
            if (t->kind == FNW_ROW) {
                b->ops[f].null_byte = (i + 2) >> 3;
                b->ops[f].null_bit = (uint8_t)(0x80u >> ((i + 2) & 7));
            }
        }
    }
    if (o.code == SK_GENERIC) {
        o.t = t;
        o.n = (uint32_t)depth;
    }
    o.span = b->nops - at;
    b->ops[at] = o;
    return 0;
}

static sk_lin *lin_new(sk_builder *b)
{
    if (grow((void **)&b->lin, b->nlin, &b->lincap, sizeof *b->lin) < 0)
        return NULL;
    sk_lin *l = &b->lin[b->nlin++];
    memset(l, 0, sizeof *l);
    return l;
}

/* The op being filled (NULL when the program has none yet). */
static sk_lin *lin_cur(sk_builder *b)
{
    return b->nlin > b->prog ? &b->lin[b->nlin - 1] : NULL;
}

/* n fixed bytes: onto the current op, before its var or in its tail. */
static int lin_fixed(sk_builder *b, uint64_t n)
{
    if (n == 0)
        return 0;
    sk_lin *l = lin_cur(b);
    if (!l && !(l = lin_new(b)))
        return -1;
    uint64_t *run = l->var ? &l->tail : &l->pre;
    if (n > SK_MAX_RUN || *run > SK_MAX_RUN)
        return -1;
    *run += n;
    return 0;
}

/* A mask byte to test opens an op (unless the current one is still empty). */
static int lin_mask(sk_builder *b, uint8_t bits)
{
    if (!bits)
        return lin_fixed(b, 1);   /* no field bits in it: just a byte */
    sk_lin *l = lin_cur(b);
    if (!l || l->bits || l->pre || l->var)
        l = lin_new(b);
    if (!l)
        return -1;
    l->bits = bits;
    l->pre = 1;
    return 0;
}

static int lin_var(sk_builder *b, uint8_t var, uint64_t w)
{
    sk_lin *l = lin_cur(b);
    if (!l || l->var)
        l = lin_new(b);
    if (!l || w > UINT32_MAX)
        return -1;
    l->var = var;
    l->w = (uint32_t)w;
    return 0;
}

static int lin_value(sk_builder *b, uint32_t i);

/* The fields of ROW / TUPLE op i, but not those whose bit is in nulls. */
static int lin_parts(sk_builder *b, uint32_t i, uint8_t nulls)
{
    uint32_t c = i + 1;
    for (uint32_t k = 0; k < b->ops[i].n; k++, c += b->ops[c].span)
        if (!(b->ops[c].null_bit & nulls) && lin_value(b, c) < 0)
            return -1;
    return 0;
}

/* The straight-line ops of tree op i, assuming no ROW field is null. */
static int lin_value(sk_builder *b, uint32_t i)
{
    const sk_op o = b->ops[i];
    switch (o.code) {
    case SK_FIXED:
        return lin_fixed(b, o.w);
    case SK_COUNTED:
        return lin_var(b, SL_COUNTED, o.w);
    case SK_BIG_INT:
        return lin_var(b, SL_BIG_INT, 0);
    case SK_GENERIC:
        return lin_var(b, SL_GENERIC, i);
    case SK_ROW:
        for (uint64_t k = 0; k < o.w; k++) {
            uint8_t bits = 0;   /* the field bits of mask byte k (not kind or padding) */
            for (uint64_t f = k ? 8 * k - 2 : 0; f < o.n && f + 2 < 8 * (k + 1); f++)
                bits |= (uint8_t)(0x80u >> ((f + 2) & 7));
            if (lin_mask(b, bits) < 0)
                return -1;
        }
        return lin_parts(b, i, 0);
    case SK_SEQ:
        return lin_parts(b, i, 0);
    default:
        return -1;
    }
}

/* Closes the program begun at b->prog: its ops' need, its last op. */
static int lin_end(sk_builder *b)
{
    if (!lin_cur(b) && !lin_new(b))
        return -1;
    for (uint32_t i = b->prog; i < b->nlin; i++) {
        sk_lin *l = &b->lin[i];
        l->need = l->pre + (l->var == SL_COUNTED || l->var == SL_BIG_INT ? 4 : 0);
    }
    b->lin[b->nlin - 1].last = 1;
    b->prog = b->nlin;
    return 0;
}

/* The straight programs: one per null pattern of a top-level ROW with one
 * mask byte (index bit k - 1 - i: field i is null), else just one. */
static int lin_programs(sk_builder *b, sk_plan *pl)
{
    const sk_op *root = &b->ops[0];
    uint32_t k = root->n;
    if (root->code == SK_ROW && k > 0 && k <= SK_PATTERN_FIELDS) {
        pl->pat_shift = (uint8_t)(SK_PATTERN_FIELDS - k);
        pl->pat_mask = (uint8_t)((1u << k) - 1);
        uint32_t m = 0;
        for (; m < (1u << k) && b->nlin <= SK_PATTERN_MAX_OPS; m++) {
            pl->start[m] = b->nlin;
            /* the mask byte is read by the index; its null bits are m's */
            if (lin_fixed(b, 1) < 0 || lin_parts(b, 0, (uint8_t)(m << pl->pat_shift)) < 0 || lin_end(b) < 0)
                return -1;
        }
        if (m == (1u << k))
            return 0;
        b->nlin = b->prog = 0;   /* too many ops: one program instead */
    }
    pl->pat_shift = 0;
    pl->pat_mask = 0;
    pl->start[0] = 0;
    return lin_value(b, 0) < 0 || lin_end(b) < 0 ? -1 : 0;
}

/* NULL if out of memory. */
static sk_plan *plan_compile(const fnw_type *t)
{
    sk_builder b = { 0 };
    sk_plan head = { 0 }, *pl = NULL;
    if (tree_value(&b, t, 1) < 0)
        goto out;
    if (b.ops[0].code == SK_GENERIC)
        b.nops = 0;   /* nothing to gain */
    if (b.nops && lin_programs(&b, &head) < 0)
        b.nlin = 0;   /* the tree alone still helps */
    size_t tree_bytes = (size_t)b.nops * sizeof b.ops[0];
    pl = malloc(sizeof *pl + tree_bytes + (size_t)b.nlin * sizeof b.lin[0]);
    if (!pl)
        goto out;
    *pl = head;
    pl->t = t;
    pl->nops = b.nops;
    pl->nlin = b.nlin;
    if (b.nops)
        memcpy(pl->ops, b.ops, tree_bytes);
    sk_lin *lin = (sk_lin *)((char *)pl->ops + tree_bytes);
    if (b.nlin)
        memcpy(lin, b.lin, (size_t)b.nlin * sizeof b.lin[0]);
    pl->lin = lin;
out:
    free(b.ops);
    free(b.lin);
    return pl;
}

fnw_skip_plan *fnw_skip_plan_new(const fnw_type *t, fnw_error *err)
{
    if (!t) {
        fnw_error_set(err, "no type to compile a skip program for");
        return NULL;
    }
    sk_plan *pl = plan_compile(t);
    if (!pl)
        fnw_error_set(err, "out of memory compiling the skip program of a %s type", fnw_kind_name(t->kind));
    return pl;
}

void fnw_skip_plan_free(fnw_skip_plan *pl)
{
    free(pl);
}

/* End of a BIG_INT at p (read_bigint's checks), NULL if it fails them. */
static inline const uint8_t *big_int_end(const uint8_t *p, const uint8_t *end)
{
    size_t left = (size_t)(end - p);
    if (left < 4)
        return NULL;
    int32_t l = (int32_t)fnw_load_be32(p);
    if (l >= 0 && l <= 3)
        return p + 4;
    if (l <= 4 || (uint32_t)l > left)
        return NULL;
    return p + (uint32_t)l;   /* the length field and l - 4 magnitude bytes */
}

static const uint8_t *generic_end(const sk_op *o, const uint8_t *p, const uint8_t *end)
{
    rd r = { .base = p, .end = end, .err = NULL };
    return skip_v(o->t, p, &r, (int)o->n);
}

static const uint8_t *tree_run(const sk_op *o, const uint8_t *p, const uint8_t *end);

/* One value of the tree: leaves inline, composites through tree_run. NULL
 * on any failure. */
static inline const uint8_t *tree_step(const sk_op *o, const uint8_t *p, const uint8_t *end)
{
    size_t left = (size_t)(end - p);
    switch (o->code) {
    case SK_FIXED:
        return left < o->w ? NULL : p + o->w;
    case SK_COUNTED: {
        if (left < 4)
            return NULL;
        int32_t l = (int32_t)fnw_load_be32(p);
        uint64_t bytes = (uint64_t)(uint32_t)l * o->w;   /* no wrap: w < 2^32 */
        if (l < 0 || bytes > left - 4)
            return NULL;
        return p + 4 + bytes;
    }
    default:
        return tree_run(o, p, end);
    }
}

static const uint8_t *tree_run(const sk_op *o, const uint8_t *p, const uint8_t *end)
{
    switch (o->code) {
    case SK_ROW: {
        if ((size_t)(end - p) < o->w)
            return NULL;
        const uint8_t *mask = p;
        p += o->w;
        const sk_op *f = o + 1;
        for (uint32_t i = 0; i < o->n; i++, f += f->span) {
            if (mask[f->null_byte] & f->null_bit)
                continue;
            if (!(p = tree_step(f, p, end)))
                return NULL;
        }
        return p;
    }
    case SK_SEQ: {
        const sk_op *f = o + 1;
        for (uint32_t i = 0; i < o->n; i++, f += f->span)
            if (!(p = tree_step(f, p, end)))
                return NULL;
        return p;
    }
    case SK_BIG_INT:
        return big_int_end(p, end);
    case SK_GENERIC:
        return generic_end(o, p, end);
    default:
        return tree_step(o, p, end);
    }
}

/* The straight program for the record at p[0..n). */
static inline const sk_lin *lin_start(const sk_plan *pl, const uint8_t *p, size_t n)
{
    return pl->lin + pl->start[n ? (p[0] >> pl->pat_shift) & pl->pat_mask : 0];
}

/* Straight ops from o on, to the end of the value (*stop = NULL) or to the
 * variable part of an SL_BIG_INT / SL_GENERIC op (*stop = that op, left to
 * the caller so that this loop makes no calls). NULL on any failure or on
 * a null field it does not expect. */
static inline const uint8_t *lin_run(const sk_lin *o, const uint8_t *p, const uint8_t *end,
                                     const sk_lin **stop)
{
    for (;; o++) {
        if ((size_t)(end - p) < o->need)
            return NULL;
        if (o->bits && (p[0] & o->bits))
            return NULL;
        p += o->pre;
        if (o->var == SL_COUNTED) {
            int32_t l = (int32_t)fnw_load_be32(p);
            uint64_t bytes = (uint64_t)(uint32_t)l * o->w;   /* no wrap: w < 2^32 */
            if (l < 0 || bytes > (size_t)(end - p) - 4)
                return NULL;
            p += 4 + bytes;
        } else if (o->var != SL_NONE) {
            *stop = o;
            return p;
        }
        if ((size_t)(end - p) < o->tail)
            return NULL;
        p += o->tail;
        if (o->last) {
            *stop = NULL;
            return p;
        }
    }
}

/* A straight program with its BIG_INT and skip_v parts. */
static const uint8_t *lin_full(const sk_plan *pl, const sk_lin *o, const uint8_t *p, const uint8_t *end)
{
    const sk_lin *stop = NULL;
    const uint8_t *q = lin_run(o, p, end, &stop);
    while (q && stop) {
        const uint8_t *v = stop->var == SL_BIG_INT ? big_int_end(q, end) : generic_end(&pl->ops[stop->w], q, end);
        if (!v || stop->tail > (size_t)(end - v))
            return NULL;
        if (stop->last)
            return v + stop->tail;
        q = lin_run(stop + 1, v + stop->tail, end, &stop);
    }
    return q;
}

/* fnw_ser_skip when its inline loop failed (an unexpected null, or an
 * error): the tree, else the generic walk, whose answer and message stand. */
__attribute__((noinline))
static int skip_tree(const uint8_t *p, size_t n, size_t *used, fnw_error *err, const sk_plan *pl)
{
    const uint8_t *q = tree_run(pl->ops, p, p + n);
    if (!q)
        return fnw_ser_skip_generic(pl->t, p, n, used, err);
    *used = (size_t)(q - p);
    return 0;
}

/* ... or stopped at an op's BIG_INT or skip_v part: the program again with
 * those, else as skip_tree. */
__attribute__((noinline))
static int skip_stopped(const uint8_t *p, size_t n, size_t *used, fnw_error *err, const sk_plan *pl)
{
    const uint8_t *q = lin_full(pl, lin_start(pl, p, n), p, p + n);
    if (!q)
        return skip_tree(p, n, used, err, pl);
    *used = (size_t)(q - p);
    return 0;
}

int fnw_ser_skip(const fnw_skip_plan *pl, const uint8_t *p, size_t n, size_t *used, fnw_error *err)
{
    if (!pl)
        return fnw_error_set(err, "no skip program to validate a value with");
    if (!p)
        return fnw_ser_skip_generic(pl->t, p, n, used, err);
    if (!pl->nlin)
        return pl->nops ? skip_tree(p, n, used, err, pl) : fnw_ser_skip_generic(pl->t, p, n, used, err);
    const sk_lin *stop = NULL;
    const uint8_t *q = lin_run(lin_start(pl, p, n), p, p + n, &stop);
    if (!q)
        return skip_tree(p, n, used, err, pl);
    if (stop)
        return skip_stopped(p, n, used, err, pl);
    *used = (size_t)(q - p);
    return 0;
}

/* ---- decode ----------------------------------------------------------------- */

static const uint8_t *dec_v(const fnw_type *t, const uint8_t *p, const rd *r, fnw_value *v, int depth);

static fnw_value *alloc_items(const rd *r, const uint8_t *at, const fnw_type *t, uint64_t n)
{
    if (n == 0)
        return NULL;
    if (!r->arena) {
        fail(r, at, t, "decoding a container needs an arena");
        return NULL;
    }
    fnw_value *items = n > SIZE_MAX / sizeof *items ? NULL : fnw_arena_alloc(r->arena, (size_t)n * sizeof *items);
    if (!items)
        fail(r, at, t, "arena limit reached allocating %llu values", (unsigned long long)n);
    return items;
}

static inline const uint8_t *dec_scalar(const fnw_type *t, const uint8_t *p, const rd *r, fnw_value *v)
{
    size_t w = fixed_width[t->kind];
    if (LEFT(r, p) < w)
        return fail_short(r, p, t, w);
    switch (t->kind) {
    case FNW_BYTE:    v->u.i = (int8_t)p[0]; break;
    case FNW_BOOLEAN: v->u.i = p[0] != 0; break;
    case FNW_SHORT:   v->u.i = (int16_t)fnw_load_be16(p); break;
    case FNW_CHAR:    v->u.i = fnw_load_be16(p); break;
    case FNW_INT: case FNW_SQL_DATE: case FNW_SQL_TIME:
        v->u.i = (int32_t)fnw_load_be32(p);
        break;
    case FNW_LONG: case FNW_SQL_TIMESTAMP:
        v->u.i = (int64_t)fnw_load_be64(p);
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

static const uint8_t *dec_row(const fnw_type *t, const uint8_t *p, const rd *r, fnw_value *v, int depth)
{
    uint32_t n = t->nchildren;
    size_t mb = MASK_BYTES(n);
    if (LEFT(r, p) < mb)
        return fail_short(r, p, t, mb);
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
        if (IS_NULL_BIT(mask, i)) {
            items[i] = (fnw_value){ .kind = (uint8_t)c->kind, .is_null = 1 };
            continue;
        }
        if (!(p = dec_v(c, p, r, &items[i], depth + 1)))
            return NULL;
    }
    return p;
}

static const uint8_t *dec_v(const fnw_type *t, const uint8_t *p, const rd *r, fnw_value *v, int depth)
{
    *v = (fnw_value){ .kind = (uint8_t)t->kind };
    if (fixed_width[t->kind])
        return dec_scalar(t, p, r, v);
    if (depth > FNW_TYPE_MAX_DEPTH)
        return fail(r, p, t, "type nests deeper than %d levels", FNW_TYPE_MAX_DEPTH);
    if (!check_shape(t))
        return fail(r, p, t, "malformed type (missing element types or Avro schema)");
    const uint8_t *at = p;
    uint32_t count = 0;
    switch (t->kind) {
    case FNW_ROW:
        return dec_row(t, p, r, v, depth);
    case FNW_STRING:
    case FNW_BIG_DEC:
    case FNW_PICKLED_BYTES:
        return read_blob(r, p, t, &v->u.bytes, &v->count);
    case FNW_BIG_INT: {
        int is_null = 0;
        p = read_bigint(r, p, t, &is_null, &v->u.bytes, &v->count);
        v->is_null = (uint8_t)is_null;
        return p;
    }
    case FNW_LOCAL_DATE:
    case FNW_LOCAL_TIME:
    case FNW_LOCAL_DATETIME: {
        local_parts lp;
        if (!(p = read_local(r, p, t, &lp)))
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
    case FNW_PRIMITIVE_ARRAY: {
        const fnw_type *e = t->children[0];
        size_t ew = fixed_width[e->kind];
        if (!ew)
            return fail(r, p, t, "elements of kind %s are not primitive", fnw_kind_name(e->kind));
        if (e->kind == FNW_BYTE)
            return read_blob(r, p, t, &v->u.bytes, &v->count);
        if (!(p = read_count(r, p, t, ew, &count)))
            return NULL;
        fnw_value *items = alloc_items(r, at, t, count);
        if (count && !items)
            return NULL;
        for (uint32_t i = 0; i < count; i++) {
            items[i] = (fnw_value){ .kind = (uint8_t)e->kind };
            p = dec_scalar(e, p, r, &items[i]);   /* bytes were checked by read_count */
        }
        v->count = count;
        v->u.items = items;
        return p;
    }
    case FNW_BASIC_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST: {
        const fnw_type *e = t->children[0];
        int flagged = t->kind != FNW_LIST;
        size_t per = flagged ? 1 : min_size(e, depth + 1);
        if (!(p = read_count(r, p, t, per, &count)))
            return NULL;
        fnw_value *items = alloc_items(r, at, t, count);
        if (count && !items)
            return NULL;
        for (uint32_t i = 0; i < count; i++) {
            if (flagged) {
                if (p == r->end)
                    return fail_short(r, p, t, 1);
                if (*p++ == 0) {
                    items[i] = (fnw_value){ .kind = (uint8_t)e->kind, .is_null = 1 };
                    continue;
                }
            }
            if (!(p = dec_v(e, p, r, &items[i], depth + 1)))
                return NULL;
        }
        v->count = count;
        v->u.items = items;
        return p;
    }
    case FNW_MAP: {
        const fnw_type *k = t->children[0], *val = t->children[1];
        if (!(p = read_count(r, p, t, min_size(k, depth + 1) + 1, &count)))
            return NULL;
        fnw_value *items = alloc_items(r, at, t, 2 * (uint64_t)count);
        if (count && !items)
            return NULL;
        for (uint32_t i = 0; i < count; i++) {
            if (!(p = dec_v(k, p, r, &items[2 * i], depth + 1)))
                return NULL;
            if (p == r->end)
                return fail_short(r, p, t, 1);
            if (*p++ != 0) {
                items[2 * i + 1] = (fnw_value){ .kind = (uint8_t)val->kind, .is_null = 1 };
                continue;
            }
            if (!(p = dec_v(val, p, r, &items[2 * i + 1], depth + 1)))
                return NULL;
        }
        v->count = count;
        v->u.items = items;
        return p;
    }
    case FNW_TUPLE: {
        uint32_t n = t->nchildren;
        fnw_value *items = alloc_items(r, at, t, n);
        if (n && !items)
            return NULL;
        for (uint32_t i = 0; i < n; i++)
            if (!(p = dec_v(t->children[i], p, r, &items[i], depth + 1)))
                return NULL;
        v->count = n;
        v->u.items = items;
        return p;
    }
    case FNW_AVRO: {
        const uint8_t *q = fnw_avro_walk(t->avro_plan, p, r->end, r->base, r->err);
        if (!q)
            return NULL;
        v->u.bytes = p;
        v->count = (uint32_t)(q - p);
        return q;
    }
    default:
        return fail(r, p, t, "unsupported type kind %d", (int)t->kind);
    }
}

int fnw_ser_decode(const fnw_type *t, const uint8_t *p, size_t n, fnw_arena *a,
                   fnw_value *out, size_t *used, fnw_error *err)
{
    if (!t)
        return fnw_error_set(err, "no type to decode a value of");
    if (!p)
        p = empty_input, n = 0;
    rd r = { .base = p, .end = p + n, .arena = a, .err = err };
    const uint8_t *q = dec_v(t, p, &r, out, 1);
    if (!q)
        return -1;
    if (used)
        *used = (size_t)(q - p);
    return 0;
}

/* ---- encode ----------------------------------------------------------------- */

typedef struct wr {
    fnw_buf *out;
    fnw_error *err;
} wr;

__attribute__((format(printf, 3, 4), cold, noinline))
static int efail(const wr *w, const fnw_type *t, const char *fmt, ...)
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

static int enc_v(const fnw_type *t, const fnw_value *v, const wr *w, int depth);

/* Space for n more bytes; returns where to write them. */
static inline uint8_t *room(const wr *w, const fnw_type *t, size_t n)
{
    if (fnw_buf_reserve(w->out, n) < 0) {
        efail(w, t, "output buffer limit reached (%zu + %zu bytes)", w->out->len, n);
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

static int range(const wr *w, const fnw_type *t, int64_t v, int64_t lo, int64_t hi)
{
    if (v < lo || v > hi)
        return efail(w, t, "value %lld out of range [%lld, %lld]", (long long)v, (long long)lo, (long long)hi);
    return 0;
}

static int enc_scalar(const fnw_type *t, const fnw_value *v, const wr *w)
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
    case FNW_INT: case FNW_SQL_DATE: case FNW_SQL_TIME:
        if (range(w, t, i, INT32_MIN, INT32_MAX) < 0)
            return -1;
        break;
    case FNW_INSTANT:
        if (v->u.instant.nanos < 0 || v->u.instant.nanos > 999999999)
            return efail(w, t, "nanos %d not in [0, 999999999]", v->u.instant.nanos);
        break;
    default:
        break;
    }
    uint8_t *q = room(w, t, fixed_width[t->kind]);
    if (!q)
        return -1;
    switch (t->kind) {
    case FNW_BYTE:    q[0] = (uint8_t)i; break;
    case FNW_BOOLEAN: q[0] = i != 0; break;
    case FNW_SHORT: case FNW_CHAR:
        fnw_store_be16(q, (uint16_t)i);
        break;
    case FNW_INT: case FNW_SQL_DATE: case FNW_SQL_TIME:
        fnw_store_be32(q, (uint32_t)i);
        break;
    case FNW_LONG: case FNW_SQL_TIMESTAMP:
        fnw_store_be64(q, (uint64_t)i);
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
    if (!null && date && !valid_date(v->u.local.year, v->u.local.month, v->u.local.day))
        return efail(w, t, "invalid date %d-%d-%d", v->u.local.year, v->u.local.month, v->u.local.day);
    if (!null && time && !valid_time(v->u.local.hour, v->u.local.minute, v->u.local.second, v->u.local.nano))
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
        return efail(w, t, "null here has no encoding (nulls are allowed in ROW fields, "
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
    size_t mb = MASK_BYTES(n);
    uint8_t *q = room(w, t, mb);
    if (!q)
        return -1;
    size_t mask_at = (size_t)(q - w->out->p);   /* q may move when the buffer grows */
    memset(q, 0, mb);
    q[0] = (uint8_t)(((v->row_kind & 1) << 7) | ((v->row_kind & 2) << 5));
    for (uint32_t i = 0; i < n; i++)
        if (v->u.items[i].is_null)
            w->out->p[mask_at + ((i + 2) >> 3)] |= (uint8_t)(0x80u >> ((i + 2) & 7));
    for (uint32_t i = 0; i < n; i++) {
        if (v->u.items[i].is_null)
            continue;
        if (enc_v(t->children[i], &v->u.items[i], w, depth + 1) < 0) {
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
                return efail(w, t, "output buffer limit reached");
            if (it->is_null)
                continue;
        } else if (t->kind == FNW_MAP) {
            if (enc_v(t->children[0], &v->u.items[2 * i], w, depth + 1) < 0)
                return fnw_error_prefix(w->err, "MAP key %u", i);
            it = &v->u.items[2 * i + 1];
            if (fnw_buf_put_u8(w->out, it->is_null ? 1 : 0) < 0)
                return efail(w, t, "output buffer limit reached");
            if (it->is_null)
                continue;
            e = t->children[1];
        }
        if (enc_v(e, it, w, depth + 1) < 0)
            return fnw_error_prefix(w->err, "%s %s %u", fnw_kind_name(t->kind),
                                    t->kind == FNW_MAP ? "value" : "element", i);
    }
    return 0;
}

static int enc_v(const fnw_type *t, const fnw_value *v, const wr *w, int depth)
{
    if (v->kind != t->kind)
        return efail(w, t, "value is of kind %s", fnw_kind_name((fnw_kind)v->kind));
    if (depth > FNW_TYPE_MAX_DEPTH)
        return efail(w, t, "type nests deeper than %d levels", FNW_TYPE_MAX_DEPTH);
    if (!check_shape(t))
        return efail(w, t, "malformed type (missing element types or Avro schema)");
    if (v->is_null)
        return enc_null(t, v, w);
    if (fixed_width[t->kind])
        return enc_scalar(t, v, w);
    switch (t->kind) {
    case FNW_ROW:
        return enc_row(t, v, w, depth);
    case FNW_STRING:
    case FNW_BIG_DEC:
    case FNW_PICKLED_BYTES:
        return put_blob(w, t, v->u.bytes, v->count);
    case FNW_BIG_INT:
        return enc_bigint(t, v, w);
    case FNW_LOCAL_DATE:
    case FNW_LOCAL_TIME:
    case FNW_LOCAL_DATETIME:
        return enc_local(t, v, w);
    case FNW_PRIMITIVE_ARRAY:
        if (!fixed_width[t->children[0]->kind])
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
        if (count_matches(t, v, w, t->nchildren) < 0)
            return -1;
        for (uint32_t i = 0; i < t->nchildren; i++)
            if (enc_v(t->children[i], &v->u.items[i], w, depth + 1) < 0)
                return fnw_error_prefix(w->err, "TUPLE field %u", i);
        return 0;
    case FNW_AVRO: {
        if (v->count && !v->u.bytes)
            return efail(w, t, "%u bytes but no data pointer", v->count);
        size_t used;
        const uint8_t *b = v->count ? v->u.bytes : empty_input;
        if (fnw_avro_skip(t->avro_plan, b, v->count, &used, w->err) < 0)
            return fnw_error_prefix(w->err, "encoding AVRO: the datum does not match the schema");
        if (used != v->count)
            return efail(w, t, "the datum ends after %zu of its %u bytes", used, v->count);
        uint8_t *q = room(w, t, v->count);
        if (!q)
            return -1;
        if (v->count)
            memcpy(q, b, v->count);
        return 0;
    }
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
    if (enc_v(t, v, &w, 1) < 0) {
        out->len = mark;
        return -1;
    }
    return 0;
}
