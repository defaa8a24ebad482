/* codecs/skip_program.c — the skip program: a type compiled once into a
 * form that validates and measures one value of it faster than the generic
 * walk (ser_skip.c), and the interpreter that runs it, fnw_skip_program_run.
 *
 * The pass-through path skips the same type once per record, so the type is
 * compiled once (fnw_skip_program_new, when the worker reads the bundle
 * descriptor, never on the data path) into two forms:
 *
 *  - a tree of ops, one per value followed by the ops of its parts, each
 *    ROW field's op naming its null bit (span steps over a null field).
 *    ROW, TUPLE and leaves whose only check is a length have ops of their
 *    own; any other subtree is one SK_GENERIC op that runs the generic walk
 *    (fnw_ser_skip_value) on it;
 *  - straight-line programs for the same tree, usually one or two ops per
 *    record: each op tests a mask byte for nulls, takes a run of fixed
 *    bytes, reads one length (or hands one value to the generic walk) and
 *    takes another run of fixed bytes. They assume no null field, except
 *    that a top-level ROW of up to SK_PATTERN_FIELDS fields has one program
 *    per combination of null fields, picked by its mask byte. A record with
 *    a null where its program assumes none goes to the tree.
 *
 * Both only detect failure: whenever one fails, fnw_skip_program_run falls back to
 * the next and finally to the generic walk, whose answer and message stand.
 * So a skip program must accept exactly what the generic walk accepts, with
 * the same length (tests/unit/codecs/test_skip_program.c compares them on hostile
 * input). A compiled program is read-only, so bundles may share it.
 */
#include "codecs/ser_internal.h"

#include <stdlib.h>
#include <string.h>

enum {
    SK_FIXED,   /* w bytes */
    SK_COUNTED, /* int32 count >= 0, then count * w bytes (strings: w = 1) */
    SK_BIG_INT, /* BIG_INT's length forms */
    SK_ROW,     /* w mask bytes, then n fields, each unless its null bit is set */
    SK_SEQ,     /* n parts, one after another (TUPLE) */
    SK_GENERIC, /* fnw_ser_skip_value(t) at depth n */
};

typedef struct sk_op {
    uint8_t code;
    uint8_t null_bit; /* a ROW field: null if its ROW's mask byte null_byte has this bit */
    uint32_t null_byte;
    uint32_t span; /* ops of this value, itself included */
    uint32_t n;
    uint64_t w;
    const fnw_type *t;
} sk_op;

/* The variable part of a straight-line op. */
enum { SL_NONE, SL_COUNTED, SL_BIG_INT, SL_GENERIC };

/* [mask byte with none of `bits` set] [fixed bytes] [var] [tail fixed bytes] */
typedef struct sk_lin {
    uint8_t bits; /* 0: no mask byte to test */
    uint8_t var;
    uint8_t last;  /* the value ends after this op */
    uint32_t w;    /* SL_COUNTED: bytes per element; SL_GENERIC: the tree op's index */
    uint64_t pre;  /* the mask byte and the fixed bytes */
    uint64_t need; /* pre + the length field of SL_COUNTED / SL_BIG_INT */
    uint64_t tail;
} sk_lin;

#define SK_PATTERN_FIELDS 6     /* the fields one mask byte holds */
#define SK_PATTERN_MAX_OPS 2048 /* beyond this, one program (wide nested rows) */

/* One malloc block (fnw_skip_program_free frees it): this, the tree ops, then
 * the straight ops. nops == 0: no better than the generic walk; nlin == 0:
 * no straight programs. The program for a record starts at
 * lin[start[(mask byte >> pat_shift) & pat_mask]]. */
typedef struct fnw_skip_program {
    uint32_t nops, nlin;
    const sk_lin *lin;
    uint8_t pat_shift, pat_mask;
    uint32_t start[1u << SK_PATTERN_FIELDS];
    const fnw_type *t; /* borrowed: what the generic walk falls back to */
    sk_op ops[];
} sk_program; /* ser.h's fnw_skip_program */

typedef struct sk_builder {
    sk_op *ops;
    uint32_t nops, cap;
    sk_lin *lin;
    uint32_t nlin, lincap;
    uint32_t prog; /* where the program being built starts in lin */
} sk_builder;

/* ---- compiling ------------------------------------------------------------ */

/* Fixed-byte runs stay far from wrapping uint64_t sums (absurd types lose
 * their straight programs, nothing else). */
#define SK_MAX_RUN (UINT64_C(1) << 48)

/* Bytes every encoding of t takes when that is the only possibility and
 * fnw_ser_skip_value checks nothing else (fixed scalars, TUPLEs of them); else -1. */
static int64_t exact_size(const fnw_type *t, int depth)
{
    if (fnw_ser_width(t))
        return fnw_ser_width(t);
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

/* The tree ops of one value of t at depth (fnw_ser_skip_value's depth). */
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
    } else if (depth > FNW_TYPE_MAX_DEPTH || !fnw_ser_check_shape(t)) {
        o.code = SK_GENERIC; /* fails there, unless the value is never reached */
    } else if (t->kind == FNW_STRING || t->kind == FNW_BIG_DEC || t->kind == FNW_PICKLED_BYTES) {
        o.code = SK_COUNTED;
        o.w = 1;
    } else if (t->kind == FNW_BIG_INT) {
        o.code = SK_BIG_INT;
    } else if (t->kind == FNW_PRIMITIVE_ARRAY && fnw_ser_width(e)) {
        o.code = SK_COUNTED; /* fnw_ser_read_blob for BYTE is fnw_ser_read_count with 1 */
        o.w = fnw_ser_width(e);
    } else if (t->kind == FNW_LIST && exact_size(e, depth + 1) > 0) {
        o.code = SK_COUNTED; /* fnw_ser_read_count(fnw_ser_min_size) admits exactly count * size bytes */
        o.w = (uint64_t)exact_size(e, depth + 1);
    } else if (t->kind == FNW_ROW || t->kind == FNW_TUPLE) {
        o.code = t->kind == FNW_ROW ? SK_ROW : SK_SEQ;
        o.n = t->nchildren;
        o.w = t->kind == FNW_ROW ? FNW_SER_MASK_BYTES(t->nchildren) : 0;
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
        return lin_fixed(b, 1); /* no field bits in it: just a byte */
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
            uint8_t bits = 0; /* the field bits of mask byte k (not kind or padding) */
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
static int lin_programs(sk_builder *b, sk_program *sp)
{
    const sk_op *root = &b->ops[0];
    uint32_t k = root->n;
    if (root->code == SK_ROW && k > 0 && k <= SK_PATTERN_FIELDS) {
        sp->pat_shift = (uint8_t)(SK_PATTERN_FIELDS - k);
        sp->pat_mask = (uint8_t)((1u << k) - 1);
        uint32_t m = 0;
        for (; m < (1u << k) && b->nlin <= SK_PATTERN_MAX_OPS; m++) {
            sp->start[m] = b->nlin;
            /* the mask byte is read by the index; its null bits are m's */
            if (lin_fixed(b, 1) < 0 || lin_parts(b, 0, (uint8_t)(m << sp->pat_shift)) < 0 || lin_end(b) < 0)
                return -1;
        }
        if (m == (1u << k))
            return 0;
        b->nlin = b->prog = 0; /* too many ops: one program instead */
    }
    sp->pat_shift = 0;
    sp->pat_mask = 0;
    sp->start[0] = 0;
    return lin_value(b, 0) < 0 || lin_end(b) < 0 ? -1 : 0;
}

/* NULL if out of memory. */
static sk_program *program_compile(const fnw_type *t)
{
    sk_builder b = { 0 };
    sk_program head = { 0 }, *sp = NULL;
    if (tree_value(&b, t, 1) < 0)
        goto out;
    if (b.ops[0].code == SK_GENERIC)
        b.nops = 0; /* nothing to gain */
    if (b.nops && lin_programs(&b, &head) < 0)
        b.nlin = 0; /* the tree alone still helps */
    size_t tree_bytes = (size_t)b.nops * sizeof b.ops[0];
    sp = malloc(sizeof *sp + tree_bytes + (size_t)b.nlin * sizeof b.lin[0]);
    if (!sp)
        goto out;
    *sp = head;
    sp->t = t;
    sp->nops = b.nops;
    sp->nlin = b.nlin;
    if (b.nops)
        memcpy(sp->ops, b.ops, tree_bytes);
    sk_lin *lin = (sk_lin *)((char *)sp->ops + tree_bytes);
    if (b.nlin)
        memcpy(lin, b.lin, (size_t)b.nlin * sizeof b.lin[0]);
    sp->lin = lin;
out:
    free(b.ops);
    free(b.lin);
    return sp;
}

fnw_skip_program *fnw_skip_program_new(const fnw_type *t, fnw_error *err)
{
    if (!t) {
        fnw_error_set(err, "no type to compile a skip program for");
        return NULL;
    }
    sk_program *sp = program_compile(t);
    if (!sp)
        fnw_error_set(err, "out of memory compiling the skip program of a %s type", fnw_kind_name(t->kind));
    return sp;
}

void fnw_skip_program_free(fnw_skip_program *sp)
{
    free(sp);
}

/* ---- running -------------------------------------------------------------- */

/* End of a BIG_INT at p (fnw_ser_read_bigint's checks), NULL if it fails them. */
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
    return p + (uint32_t)l; /* the length field and l - 4 magnitude bytes */
}

static const uint8_t *generic_end(const sk_op *o, const uint8_t *p, const uint8_t *end)
{
    fnw_ser_rd r = { .base = p, .end = end, .err = NULL };
    return fnw_ser_skip_value(o->t, p, &r, (int)o->n);
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
        uint64_t bytes = (uint64_t)(uint32_t)l * o->w; /* no wrap: w < 2^32 */
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
static inline const sk_lin *lin_start(const sk_program *sp, const uint8_t *p, size_t n)
{
    return sp->lin + sp->start[n ? (p[0] >> sp->pat_shift) & sp->pat_mask : 0];
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
            uint64_t bytes = (uint64_t)(uint32_t)l * o->w; /* no wrap: w < 2^32 */
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

/* A straight program with its BIG_INT and generic parts. */
static const uint8_t *lin_full(const sk_program *sp, const sk_lin *o, const uint8_t *p, const uint8_t *end)
{
    const sk_lin *stop = NULL;
    const uint8_t *q = lin_run(o, p, end, &stop);
    while (q && stop) {
        const uint8_t *v = stop->var == SL_BIG_INT ? big_int_end(q, end)
                                                   : generic_end(&sp->ops[stop->w], q, end);
        if (!v || stop->tail > (size_t)(end - v))
            return NULL;
        if (stop->last)
            return v + stop->tail;
        q = lin_run(stop + 1, v + stop->tail, end, &stop);
    }
    return q;
}

/* fnw_skip_program_run when its inline loop failed (an unexpected null, or an
 * error): the tree, else the generic walk, whose answer and message stand. */
__attribute__((noinline)) static int skip_tree(const uint8_t *p, size_t n, size_t *used, fnw_error *err,
                                               const sk_program *sp)
{
    const uint8_t *q = tree_run(sp->ops, p, p + n);
    if (!q)
        return fnw_ser_skip_generic(sp->t, p, n, used, err);
    *used = (size_t)(q - p);
    return 0;
}

/* ... or stopped at an op's BIG_INT or generic part: the program again
 * with those, else as skip_tree. */
__attribute__((noinline)) static int skip_stopped(const uint8_t *p, size_t n, size_t *used, fnw_error *err,
                                                  const sk_program *sp)
{
    const uint8_t *q = lin_full(sp, lin_start(sp, p, n), p, p + n);
    if (!q)
        return skip_tree(p, n, used, err, sp);
    *used = (size_t)(q - p);
    return 0;
}

int fnw_skip_program_run(const fnw_skip_program *sp, const uint8_t *p, size_t n, size_t *used, fnw_error *err)
{
    if (!sp)
        return fnw_error_set(err, "no skip program to validate a value with");
    if (!p)
        return fnw_ser_skip_generic(sp->t, p, n, used, err);
    if (!sp->nlin)
        return sp->nops ? skip_tree(p, n, used, err, sp) : fnw_ser_skip_generic(sp->t, p, n, used, err);
    const sk_lin *stop = NULL;
    const uint8_t *q = lin_run(lin_start(sp, p, n), p, p + n, &stop);
    if (!q)
        return skip_tree(p, n, used, err, sp);
    if (stop)
        return skip_stopped(p, n, used, err, sp);
    *used = (size_t)(q - p);
    return 0;
}
