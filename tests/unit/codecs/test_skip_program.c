/* tests/unit/codecs/test_skip_program.c — fnw_skip_program_run runs a program compiled
 * from the type beforehand (fnw_skip_program_new, skip_program.c)
 * instead of the recursive walk;
 * a user relies on it accepting exactly what the walk accepts, measuring
 * the same length and failing with the same message. So for a spread of
 * types (flat and nested rows with and without nulls, every leaf the programs
 * handle, subtrees they hand to the walk, malformed and too-deep types)
 * both run on valid encodings, truncated, mutated and extended ones, and
 * random bytes, and must agree every time. */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/type_build.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "codecs/ser.h"

/* ---- types ---------------------------------------------------------------- */



static fnw_type *T1(fnw_kind k, fnw_type *c) { return TN(k, 1, c); }

static fnw_type *avro_long(void)
{
    fnw_type *t = T(FNW_AVRO);
    fnw_error err;
    ck_assert_msg(fnw_type_set_avro_schema(t, "\"long\"", &err) == 0, "%s", err.msg);
    return t;
}

/* ROW of n fields of kind k. */
static fnw_type *wide_row(int n, fnw_kind k)
{
    fnw_type *t = T(FNW_ROW);
    fnw_error err;
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(fnw_type_add_child(t, T(k), NULL, &err), 0);
    return t;
}

/* levels ROWs around ROW<INT, STRING>, each ROW<STRING, inner>. */
static fnw_type *deep_rows(int levels)
{
    fnw_type *t = TN(FNW_ROW, 2, T(FNW_INT), T(FNW_STRING));
    for (int i = 0; i < levels; i++)
        t = TN(FNW_ROW, 2, T(FNW_STRING), t);
    return t;
}

#define NTYPES 34
static fnw_type *types[NTYPES];
static fnw_skip_program *programs[NTYPES];
static int walkable[NTYPES];   /* 0: the walk rejects some valid-looking encodings */
static int ntypes;

static void add(fnw_type *t, int ok)
{
    ck_assert_int_lt(ntypes, NTYPES);
    walkable[ntypes] = ok;
    types[ntypes++] = t;
}

static void make_types(void)
{
    ntypes = 0;
    add(TN(FNW_ROW, 2, T(FNW_STRING), T(FNW_INT)), 1);
    add(TN(FNW_ROW, 3, T(FNW_LONG), T(FNW_DOUBLE), T(FNW_STRING)), 1);
    add(TN(FNW_ROW, 2, T(FNW_INT), TN(FNW_ROW, 2, T(FNW_STRING), T(FNW_LONG))), 1);
    add(TN(FNW_ROW, 3, TN(FNW_ROW, 2, T(FNW_STRING), TN(FNW_ROW, 1, T(FNW_BOOLEAN))),
                    T(FNW_SHORT), TN(FNW_ROW, 0)), 1);
    add(wide_row(6, FNW_STRING), 1);   /* the widest ROW with one mask byte */
    add(wide_row(7, FNW_INT), 1);      /* two mask bytes */
    add(wide_row(14, FNW_STRING), 1);  /* two mask bytes, no padding */
    add(wide_row(17, FNW_CHAR), 1);
    add(TN(FNW_ROW, 6, T(FNW_BIG_INT), T(FNW_BIG_DEC), T(FNW_PICKLED_BYTES),
                    T1(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)), T1(FNW_PRIMITIVE_ARRAY, T(FNW_INT)),
                    T1(FNW_LIST, T(FNW_SHORT))), 1);
    add(TN(FNW_ROW, 5, TN(FNW_TUPLE, 2, T(FNW_INT), T(FNW_STRING)), TN(FNW_TUPLE, 0),
                    TN(FNW_TUPLE, 2, T(FNW_LONG), TN(FNW_TUPLE, 1, T(FNW_BYTE))),
                    T1(FNW_LIST, TN(FNW_TUPLE, 2, T(FNW_INT), T(FNW_CHAR))), T(FNW_INSTANT)), 1);
    add(TN(FNW_ROW, 6, T(FNW_STRING), T1(FNW_LIST, T(FNW_STRING)), TN(FNW_MAP, 2, T(FNW_INT), T(FNW_STRING)),
                    T(FNW_LOCAL_DATE), T1(FNW_BASIC_ARRAY, T(FNW_INT)), avro_long()), 1);
    add(TN(FNW_ROW, 4, T(FNW_LOCAL_TIME), T(FNW_LOCAL_DATETIME), T(FNW_BIG_INT),
                    T1(FNW_OBJECT_ARRAY, TN(FNW_ROW, 1, T(FNW_STRING)))), 1);
    add(TN(FNW_ROW, 2, T(FNW_INT), T1(FNW_LIST, TN(FNW_TUPLE, 0))), 1);   /* zero-width elements */
    add(TN(FNW_ROW, 2, T(FNW_INT), T(FNW_LIST)), 0);                   /* malformed: no element type */
    add(TN(FNW_ROW, 2, T1(FNW_PRIMITIVE_ARRAY, T(FNW_STRING)), T(FNW_INT)), 0);   /* not primitive */
    add(TN(FNW_ROW, 2, T(FNW_INT), T(FNW_AVRO)), 0);                   /* AVRO without a schema */
    add(T(FNW_STRING), 1);
    add(T(FNW_INT), 1);
    add(T(FNW_BIG_INT), 1);
    add(TN(FNW_TUPLE, 2, T(FNW_INT), T(FNW_STRING)), 1);
    add(TN(FNW_TUPLE, 0), 1);
    add(TN(FNW_ROW, 0), 1);
    add(T1(FNW_LIST, T(FNW_INT)), 1);
    add(T1(FNW_LIST, T(FNW_STRING)), 1);
    add(TN(FNW_TUPLE, 3, T(FNW_STRING), TN(FNW_ROW, 2, T(FNW_LONG), T(FNW_STRING)), T(FNW_BIG_INT)), 1);
    add(deep_rows(FNW_TYPE_MAX_DEPTH - 2), 1);   /* the innermost STRING at depth 64 */
    add(deep_rows(FNW_TYPE_MAX_DEPTH - 1), 0);   /* ... at 65: fails when reached */
    add(deep_rows(FNW_TYPE_MAX_DEPTH), 0);       /* an inner ROW at 65 */
    add(TN(FNW_ROW, 2, T(FNW_STRING), T1(FNW_PRIMITIVE_ARRAY, T(FNW_INSTANT))), 1);
    add(TN(FNW_ROW, 1, T1(FNW_LIST, TN(FNW_TUPLE, 2, T(FNW_LONG), TN(FNW_TUPLE, 0)))), 1);
    add(TN(FNW_ROW, 3, T(FNW_BIG_INT), T(FNW_BIG_INT), T(FNW_STRING)), 1);
    add(TN(FNW_ROW, 2, T1(FNW_LIST, T(FNW_STRING)), T(FNW_BIG_INT)), 1);   /* two walked parts */
    add(TN(FNW_ROW, 2, wide_row(9, FNW_STRING), TN(FNW_ROW, 2, T(FNW_DOUBLE), wide_row(3, FNW_BYTE))), 1);
    add(TN(FNW_TUPLE, 2, TN(FNW_ROW, 1, T(FNW_LONG)), TN(FNW_ROW, 1, T(FNW_LONG))), 1);
    ck_assert_int_eq(ntypes, NTYPES);
    for (int i = 0; i < NTYPES; i++)
        ck_assert_ptr_nonnull(programs[i] = fnw_skip_program_new(types[i], NULL));
}

static void free_types(void)
{
    for (int i = 0; i < NTYPES; i++) {
        fnw_skip_program_free(programs[i]);
        fnw_type_free(types[i]);
    }
}

/* ---- random encodings --------------------------------------------------------- */

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static uint32_t below(uint32_t n) { return rnd() % n; }

#define CAP 16384
typedef struct wbuf { uint8_t b[CAP]; size_t n; } wbuf;

static void put(wbuf *w, uint8_t v) { if (w->n < CAP) w->b[w->n++] = v; }
static void put32(wbuf *w, uint32_t v) { for (int s = 24; s >= 0; s -= 8) put(w, (uint8_t)(v >> s)); }
static void put_bytes(wbuf *w, size_t n) { while (n--) put(w, (uint8_t)rnd()); }

static size_t width(fnw_kind k)
{
    switch (k) {
    case FNW_BYTE: case FNW_BOOLEAN: return 1;
    case FNW_SHORT: case FNW_CHAR: return 2;
    case FNW_INT: case FNW_FLOAT: case FNW_SQL_DATE: case FNW_SQL_TIME: return 4;
    case FNW_LONG: case FNW_DOUBLE: case FNW_SQL_TIMESTAMP: return 8;
    case FNW_INSTANT: return 12;
    default: return 0;
    }
}

static void put_date(wbuf *w)
{
    put32(w, 1970 + below(100));
    put(w, (uint8_t)(1 + below(12)));
    put(w, (uint8_t)(1 + below(28)));
}

static void put_time(wbuf *w)
{
    put(w, (uint8_t)below(24));
    put(w, (uint8_t)below(60));
    put(w, (uint8_t)below(60));
    put32(w, below(1000000000));
}

/* A valid encoding of one value of t (as Flink's serializers write it),
 * with nulls in about a quarter of the nullable places. */
static void gen(const fnw_type *t, wbuf *w)
{
    size_t fw = width(t->kind);
    if (fw) {
        put_bytes(w, fw);
        return;
    }
    switch (t->kind) {
    case FNW_STRING: case FNW_BIG_DEC: case FNW_PICKLED_BYTES: {
        uint32_t n = below(10);
        put32(w, n);
        put_bytes(w, n);
        return;
    }
    case FNW_BIG_INT: {
        uint32_t form = below(6);
        if (form < 4) {
            put32(w, form);
        } else {
            uint32_t m = 1 + below(5);
            put32(w, m + 4);
            put_bytes(w, m);
        }
        return;
    }
    case FNW_PRIMITIVE_ARRAY: {
        uint32_t c = below(4);
        put32(w, c);
        put_bytes(w, c * width(t->children[0]->kind));
        return;
    }
    case FNW_LIST: {
        uint32_t c = below(4);
        put32(w, c);
        for (uint32_t i = 0; i < c && t->nchildren; i++)   /* (a malformed LIST has none) */
            gen(t->children[0], w);
        return;
    }
    case FNW_BASIC_ARRAY: case FNW_OBJECT_ARRAY: {
        uint32_t c = below(4);
        put32(w, c);
        for (uint32_t i = 0; i < c; i++) {
            int null = below(4) == 0;
            put(w, null ? 0 : 1);
            if (!null)
                gen(t->children[0], w);
        }
        return;
    }
    case FNW_MAP: {
        uint32_t c = below(4);
        put32(w, c);
        for (uint32_t i = 0; i < c; i++) {
            gen(t->children[0], w);
            int null = below(4) == 0;
            put(w, null ? 1 : 0);
            if (!null)
                gen(t->children[1], w);
        }
        return;
    }
    case FNW_TUPLE:
        for (uint32_t i = 0; i < t->nchildren; i++)
            gen(t->children[i], w);
        return;
    case FNW_ROW: {
        size_t mb = (t->nchildren + 2 + 7) / 8, at = w->n;
        put_bytes(w, mb);   /* row kind and padding bits: anything */
        for (uint32_t i = 0; i < t->nchildren; i++) {
            uint8_t bit = (uint8_t)(0x80u >> ((i + 2) & 7));
            if (at + mb > CAP)
                return;
            if (below(4) == 0) {
                w->b[at + ((i + 2) >> 3)] |= bit;
            } else {
                w->b[at + ((i + 2) >> 3)] &= (uint8_t)~bit;
                gen(t->children[i], w);
            }
        }
        return;
    }
    case FNW_LOCAL_DATE:
        put_date(w);
        return;
    case FNW_LOCAL_TIME:
        put_time(w);
        return;
    case FNW_LOCAL_DATETIME:
        put_date(w);
        put_time(w);
        return;
    case FNW_AVRO:
        put_bytes(w, 8);   /* an Avro "long" in Flink's encoding: 8 bytes big-endian */
        return;
    default:
        ck_abort_msg("no generator for kind %d", (int)t->kind);
    }
}

/* Small values and the edges of lengths are what parsers get wrong. */
static uint8_t nasty_byte(void)
{
    static const uint8_t v[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x7f, 0x80, 0xff, 0xfe, 0x20, 0x10 };
    return below(3) ? v[below(sizeof v)] : (uint8_t)rnd();
}

static void mutate(wbuf *w)
{
    switch (below(5)) {
    case 0:   /* truncate */
        if (w->n)
            w->n = below((uint32_t)w->n);
        break;
    case 1:   /* extend: the value must still end where it did */
        for (uint32_t k = below(4); k; k--)
            put(w, nasty_byte());
        break;
    case 2:   /* several bytes changed */
        for (uint32_t k = 1 + below(3); k && w->n; k--)
            w->b[below((uint32_t)w->n)] = nasty_byte();
        break;
    case 3:   /* a length or count field overwritten */
        if (w->n >= 4) {
            size_t at = below((uint32_t)w->n - 3);
            uint32_t v = below(2) ? 0x80000000u | rnd() : below(40);
            for (int s = 0; s < 4; s++)
                w->b[at + s] = (uint8_t)(v >> (24 - 8 * s));
        }
        break;
    default:  /* one byte changed */
        if (w->n)
            w->b[below((uint32_t)w->n)] = nasty_byte();
        break;
    }
}

/* ---- the comparison --------------------------------------------------------- */

typedef struct tally { long ok, failed; } tally;

/* fnw_skip_program_run and the generic walk agree on b[0..n). */
static void agree(int ti, const uint8_t *b, size_t n, tally *tl)
{
    const fnw_type *t = types[ti];
    fnw_error e1 = { "" }, e2 = { "" };
    size_t u1 = 12345, u2 = 54321;
    int a = fnw_skip_program_run(programs[ti], b, n, &u1, &e1);
    int g = fnw_ser_skip_generic(t, b, n, &u2, &e2);
    ck_assert_msg(a == g, "type %d: skip %d (%s), generic %d (%s) on %zu bytes", ti, a, e1.msg, g, e2.msg, n);
    if (a == 0) {
        ck_assert_msg(u1 == u2, "type %d: skip used %zu, generic %zu", ti, u1, u2);
        ck_assert_uint_le(u1, n);
        tl->ok++;
    } else {
        ck_assert_str_eq(e1.msg, e2.msg);
        ck_assert_msg(u1 == 12345, "skip set used on failure");
        tl->failed++;
    }
}

START_TEST(program_agrees_with_the_walk_on_valid_and_mutated_encodings)
{
    make_types();
    static wbuf w;
    for (int ti = 0; ti < NTYPES; ti++) {
        tally valid = { 0, 0 }, mutated = { 0, 0 };
        for (int iter = 0; iter < 2000; iter++) {
            w.n = 0;
            gen(types[ti], &w);
            agree(ti, w.b, w.n, &valid);
            agree(ti, w.b, w.n + (w.n < CAP), &valid);   /* one byte more */
            for (int m = 0; m < 4; m++) {
                mutate(&w);
                agree(ti, w.b, w.n, &mutated);
            }
        }
        /* the generator writes what the walk accepts, unless the type itself
         * cannot be walked; mutations produce both outcomes */
        if (walkable[ti])
            ck_assert_msg(valid.failed == 0, "type %d: %ld valid encodings rejected", ti, valid.failed);
        if (types[ti]->kind == FNW_TUPLE && types[ti]->nchildren == 0)
            ck_assert_int_eq(mutated.failed, 0);   /* zero bytes: nothing to get wrong */
        else
            ck_assert_msg(mutated.failed > 100, "type %d: only %ld mutants rejected", ti, mutated.failed);
    }
    free_types();
}
END_TEST

START_TEST(program_agrees_with_the_walk_on_random_bytes)
{
    make_types();
    static uint8_t b[96];
    long accepted = 0;
    for (int iter = 0; iter < 100000; iter++) {
        size_t n = below(sizeof b);
        for (size_t i = 0; i < n; i++)
            b[i] = (rnd() & 3) ? (uint8_t)below(4) : (uint8_t)rnd();
        int ti = iter % NTYPES;
        tally tl = { 0, 0 };
        agree(ti, b, n, &tl);
        accepted += tl.ok;
    }
    ck_assert_int_gt(accepted, 1000);
    free_types();
}
END_TEST

/* Every combination of nulls in a ROW whose null patterns each have their
 * own program, and in the wider ones that go to the tree. */
START_TEST(every_null_pattern_measures_right)
{
    for (int fields = 1; fields <= 8; fields++) {
        fnw_type *t = wide_row(fields, FNW_STRING);
        fnw_skip_program *pl = fnw_skip_program_new(t, NULL);
        ck_assert_ptr_nonnull(pl);
        size_t mb = ((size_t)fields + 2 + 7) / 8;
        for (uint32_t nulls = 0; nulls < (1u << fields); nulls++) {
            uint8_t b[128] = { 0 };
            b[0] = 0xc0;   /* row kind bits, ignored */
            size_t n = mb;
            for (int i = 0; i < fields; i++) {
                if (nulls & (1u << i)) {
                    b[(i + 2) >> 3] |= (uint8_t)(0x80u >> ((i + 2) & 7));
                    continue;
                }
                b[n + 3] = (uint8_t)i;   /* a string of i bytes */
                n += 4 + (size_t)i;
            }
            for (size_t j = (size_t)fields + 2; j < 8 * mb; j++)
                b[j >> 3] |= (uint8_t)(0x80u >> (j & 7));   /* padding bits, ignored */
            size_t used = 0;
            fnw_error err = { "" };
            ck_assert_msg(fnw_skip_program_run(pl, b, n + 3, &used, &err) == 0, "%d fields, nulls %x: %s", fields, nulls,
                          err.msg);
            ck_assert_uint_eq(used, n);
            ck_assert_int_eq(fnw_skip_program_run(pl, b, n - 1, &used, &err), -1);
            int all_null = nulls == (1u << fields) - 1;
            ck_assert_msg(strstr(err.msg, all_null ? "ROW at offset 0" : "STRING at offset"), "%s", err.msg);
        }
        fnw_skip_program_free(pl);
        fnw_type_free(t);
    }
}
END_TEST

/* A skip program is the type as it was compiled; a changed type needs a new program. */
START_TEST(each_program_follows_the_type_it_was_compiled_from)
{
    fnw_type *t = TN(FNW_ROW, 1, T(FNW_INT));
    uint8_t b[16] = { 0, 0, 0, 0, 7, 0, 0, 0, 2, 'h', 'i' };
    size_t used;
    fnw_error err;
    fnw_skip_program *one = fnw_skip_program_new(t, &err);
    ck_assert_int_eq(fnw_skip_program_run(one, b, 11, &used, &err), 0);
    ck_assert_uint_eq(used, 5);
    fnw_skip_program_free(one);
    ck_assert_int_eq(fnw_type_add_child(t, T(FNW_STRING), "s", &err), 0);
    fnw_skip_program *two = fnw_skip_program_new(t, &err);
    ck_assert_int_eq(fnw_skip_program_run(two, b, 11, &used, &err), 0);
    ck_assert_uint_eq(used, 11);
    ck_assert_int_eq(fnw_skip_program_run(two, b, 10, &used, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "STRING at offset 5: length 2 exceeds the 1 bytes left"));
    fnw_skip_program_free(two);
    fnw_type_free(t);
}
END_TEST

/* A skip program reads only the type it was compiled from: a clone's program works
 * after the original and its program are gone (ASan checks). */
START_TEST(a_clones_program_needs_only_the_clone)
{
    fnw_type *t = TN(FNW_ROW, 2, T(FNW_STRING), T(FNW_LONG));
    uint8_t b[] = { 0, 0, 0, 0, 1, 'x', 1, 2, 3, 4, 5, 6, 7, 8 };
    size_t used;
    fnw_error err;
    fnw_skip_program *pt = fnw_skip_program_new(t, &err);
    ck_assert_int_eq(fnw_skip_program_run(pt, b, sizeof b, &used, &err), 0);
    fnw_type *c = fnw_type_clone(t);
    ck_assert_ptr_nonnull(c);
    fnw_skip_program *pc = fnw_skip_program_new(c, &err);
    fnw_skip_program_free(pt);
    fnw_type_free(t);
    ck_assert_int_eq(fnw_skip_program_run(pc, b, sizeof b, &used, &err), 0);
    ck_assert_uint_eq(used, sizeof b);
    fnw_skip_program_free(pc);
    fnw_type_free(c);
}
END_TEST

/* Skipping, on the program's fast path and its fallbacks, leaves every node of
 * the type byte for byte as built, so bundles may share types. */
static void snapshot(const fnw_type *t, fnw_type *copy, int *n)
{
    copy[(*n)++] = *t;
    for (uint32_t i = 0; i < t->nchildren; i++)
        snapshot(t->children[i], copy, n);
}

START_TEST(skipping_leaves_the_type_untouched)
{
    fnw_type *t = TN(FNW_ROW, 3, T(FNW_STRING), T1(FNW_LIST, T(FNW_STRING)), T(FNW_BIG_INT));
    fnw_type before[8], after[8];
    int nb = 0, na = 0;
    snapshot(t, before, &nb);
    fnw_skip_program *pl = fnw_skip_program_new(t, NULL);
    ck_assert_ptr_nonnull(pl);
    uint8_t ok[] = { 0, 0, 0, 0, 1, 'x', 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1 };
    uint8_t nulls[] = { 0x30, 0, 0, 0, 1, 1 };
    uint8_t bad[] = { 0, 0, 0, 0, 9 };
    size_t used;
    fnw_error err;
    ck_assert_int_eq(fnw_skip_program_run(pl, ok, sizeof ok, &used, &err), 0);
    ck_assert_int_eq(fnw_skip_program_run(pl, nulls, sizeof nulls, &used, &err), 0);
    ck_assert_int_eq(fnw_skip_program_run(pl, bad, sizeof bad, &used, &err), -1);
    snapshot(t, after, &na);
    ck_assert_int_eq(na, nb);
    ck_assert_mem_eq(before, after, (size_t)nb * sizeof before[0]);
    fnw_skip_program_free(pl);
    fnw_type_free(t);
}
END_TEST

START_TEST(no_type_no_program)
{
    fnw_error err;
    size_t used;
    ck_assert_ptr_null(fnw_skip_program_new(NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "no type"));
    ck_assert_int_eq(fnw_skip_program_run(NULL, (const uint8_t *)"", 0, &used, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no skip program"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("skip_program");
    TCase *tc = tcase_create("program");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, program_agrees_with_the_walk_on_valid_and_mutated_encodings);
    tcase_add_test(tc, program_agrees_with_the_walk_on_random_bytes);
    tcase_add_test(tc, every_null_pattern_measures_right);
    tcase_add_test(tc, each_program_follows_the_type_it_was_compiled_from);
    tcase_add_test(tc, a_clones_program_needs_only_the_clone);
    tcase_add_test(tc, skipping_leaves_the_type_untouched);
    tcase_add_test(tc, no_type_no_program);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
