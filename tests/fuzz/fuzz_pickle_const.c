/* tests/fuzz/fuzz_pickle_const.c — fuzz target for the reader of the SQL
 * literal constants Flink's Table runner passes to Python functions
 * (codecs/pickle_const.c: UserDefinedFunction.inputs[].inputConstant, one
 * type byte and a razorvine pickle), and for what the Table plan does with
 * an accepted one (worker/table_plan.c add_const): convert it to a declared
 * argument type, encode it once.
 *
 * The input is the inputConstant's bytes. Properties (abort() on violation;
 * LeakSanitizer finds leaks):
 *  1. any input ends in a value or a message, the same twice: equal values
 *     and types, or the same message (starting "SQL constant"), and a
 *     refusal leaves no type;
 *  2. an accepted value is what pickle_const.h promises for its type byte:
 *     type byte 0 a LONG, DOUBLE, BOOLEAN (0 or 1), STRING (or a null
 *     STRING), BIG_DEC (Java BigDecimal text) or PRIMITIVE_ARRAY<BYTE>;
 *     1 a SQL_DATE within 32 bits, 2 a SQL_TIME within the day, 3 a
 *     SQL_TIMESTAMP; the type's kind is the value's;
 *  3. text and bytes live in the arena, NUL-terminated after count bytes,
 *     count at most the input; a STRING is valid UTF-8 of exactly count
 *     bytes; the arena takes at most the input's length (plus alignment)
 *     and never more than its limit: with a 32-byte arena the read gives
 *     the same answer or says it ran out of arena memory;
 *  4. converting an accepted value to each declared type the Table plan
 *     may meet gives a value of that type or a message; an accepted,
 *     non-null conversion encodes (or fails with a message, e.g. a DECIMAL
 *     overflow) and the encoding decodes back in exactly its length.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/arena.h"
#include "codecs/buf.h"
#include "codecs/pickle_const.h"
#include "codecs/ser.h"
#include "codecs/type.h"
#include "codecs/utf8.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ARENA_LIMIT (1u << 20)
#define SMALL_ARENA 32

static int same_value(const fnw_value *a, const fnw_value *b)
{
    if (a->kind != b->kind || a->is_null != b->is_null || a->count != b->count)
        return 0;
    if (a->is_null)
        return 1;
    switch ((fnw_kind)a->kind) {
    case FNW_STRING:
    case FNW_BIG_DEC:
    case FNW_PRIMITIVE_ARRAY:
        return memcmp(a->u.bytes, b->u.bytes, a->count) == 0;
    case FNW_DOUBLE:
        return memcmp(&a->u.d, &b->u.d, sizeof a->u.d) == 0;
    default:
        return a->u.i == b->u.i;
    }
}

/* Java's BigDecimal.toString(): -?digits(.digits)?(E[+-]digits)? */
static int decimal_text(const uint8_t *s, size_t n)
{
    size_t i = 0, k;
    if (i < n && s[i] == '-')
        i++;
    for (k = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        ;
    if (i == k)
        return 0;
    if (i < n && s[i] == '.') {
        for (k = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            ;
        if (i == k)
            return 0;
    }
    if (i < n && s[i] == 'E') {
        if (++i == n || (s[i] != '+' && s[i] != '-'))
            return 0;
        for (k = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            ;
        if (i == k)
            return 0;
    }
    return i == n;
}

/* Property 2 and 3 on an accepted value. */
static void check_value(int tb, const fnw_value *v, const fnw_type *t, size_t size)
{
    CHECK(t && fnw_type_kind(t) == (fnw_kind)v->kind);
    if (v->is_null) {
        CHECK(tb == FNW_PICKLE_CONST_PLAIN && v->kind == FNW_STRING);
        return;
    }
    switch (tb) {
    case FNW_PICKLE_CONST_DATE:
        CHECK(v->kind == FNW_SQL_DATE && v->u.i >= INT32_MIN && v->u.i <= INT32_MAX);
        return;
    case FNW_PICKLE_CONST_TIME:
        CHECK(v->kind == FNW_SQL_TIME && v->u.i >= 0 && v->u.i < 86400000);
        return;
    case FNW_PICKLE_CONST_TIMESTAMP:
        CHECK(v->kind == FNW_SQL_TIMESTAMP);
        return;
    default:
        break;
    }
    switch ((fnw_kind)v->kind) {
    case FNW_LONG:
    case FNW_DOUBLE:
        CHECK(fnw_type_child_count(t) == 0);
        return;
    case FNW_BOOLEAN:
        CHECK(v->u.i == 0 || v->u.i == 1);
        return;
    case FNW_STRING:
        CHECK(v->count <= size && v->u.bytes[v->count] == 0 && fnw_utf8_valid(v->u.bytes, v->count));
        return;
    case FNW_BIG_DEC:
        CHECK(v->count <= size && v->u.bytes[v->count] == 0 && decimal_text(v->u.bytes, v->count));
        return;
    case FNW_PRIMITIVE_ARRAY:
        CHECK(v->count <= size && v->u.bytes[v->count] == 0 && fnw_type_child_count(t) == 1 &&
              fnw_type_kind(fnw_type_child(t, 0)) == FNW_BYTE);
        return;
    default:
        CHECK(0);
    }
}

/* The argument types property 4 converts to (made once, not under test). */
static fnw_type *targets[16];
static size_t n_targets;

static fnw_type *with_precision(fnw_kind k, int32_t p, int32_t s)
{
    fnw_error err;
    fnw_type *t = fuzz_leaf(k);
    if (fnw_type_set_precision(t, p, s, &err) < 0)
        abort();
    return t;
}

static void make_targets(void)
{
    if (n_targets)
        return;
    static const fnw_kind plain[] = { FNW_BYTE,    FNW_SHORT,   FNW_INT,      FNW_LONG,
                                      FNW_FLOAT,   FNW_DOUBLE,  FNW_STRING,   FNW_BOOLEAN,
                                      FNW_SQL_DATE, FNW_SQL_TIME, FNW_SQL_TIMESTAMP };
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
        targets[n_targets++] = fuzz_leaf(plain[i]);
    targets[n_targets++] = with_precision(FNW_BIG_DEC, 10, 2);
    targets[n_targets++] = with_precision(FNW_BIG_DEC, 38, 0);
    targets[n_targets++] = with_precision(FNW_SQL_TIMESTAMP, 9, 0);
    targets[n_targets++] = with_precision(FNW_LOCAL_ZONED_TIMESTAMP, 3, 0);
    targets[n_targets++] = fuzz_with(fuzz_leaf(FNW_PRIMITIVE_ARRAY), fuzz_leaf(FNW_BYTE), NULL);
}

/* Property 4: what add_const does with v for a declared type to. */
static void check_convert(const fnw_value *v, const fnw_type *to)
{
    fnw_arena a;
    fnw_arena_init(&a, 256, ARENA_LIMIT);
    fnw_value out;
    fnw_error err;
    err.msg[0] = '\0';
    if (fnw_pickle_const_convert(v, to, &a, &out, &err) < 0) {
        CHECK(err.msg[0] != '\0');
    } else {
        CHECK(out.kind == (uint8_t)fnw_type_kind(to) && out.is_null == v->is_null);
        if (!out.is_null) {
            fnw_buf b;
            fnw_buf_init(&b, 1 << 20);
            if (fnw_ser_encode(to, &out, &b, &err) < 0) {
                CHECK(err.msg[0] != '\0');
            } else {
                fnw_value back;
                size_t used = 0;
                CHECK(fnw_ser_decode(to, b.p, b.len, &a, &back, &used, &err) == 0 && used == b.len);
                CHECK(back.kind == out.kind && !back.is_null);
            }
            fnw_buf_free(&b);
        }
    }
    fnw_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    make_targets();
    fnw_arena a, a2, small;
    fnw_arena_init(&a, 64, ARENA_LIMIT);
    fnw_arena_init(&a2, 64, ARENA_LIMIT);
    fnw_arena_init(&small, 16, SMALL_ARENA);
    fnw_value v, v2, v3;
    fnw_type *t = (fnw_type *)1, *t2 = (fnw_type *)1, *t3 = (fnw_type *)1;
    fnw_error err, err2, err3;
    int rc = fnw_pickle_const_read(data, size, &a, &v, &t, &err);
    int rc2 = fnw_pickle_const_read(data, size, &a2, &v2, &t2, &err2);
    int rc3 = fnw_pickle_const_read(data, size, &small, &v3, &t3, &err3);
    CHECK(rc == rc2);
    CHECK(a.used_total <= ARENA_LIMIT && a.used_total <= size + 16 && a.used_total == a2.used_total);
    CHECK(small.used_total <= SMALL_ARENA);
    if (rc != 0) {
        CHECK(!t && !t2 && !t3 && fuzz_same_message(&err, &err2) && !strncmp(err.msg, "SQL constant", 12));
        CHECK(rc3 != 0 && (!strcmp(err3.msg, err.msg) || strstr(err3.msg, "arena memory")));
    } else {
        CHECK(t && t2 && fnw_type_equal(t, t2) && same_value(&v, &v2));
        check_value(data[0], &v, t, size);
        if (rc3 == 0)
            CHECK(t3 && fnw_type_equal(t, t3) && same_value(&v, &v3));
        else
            CHECK(!t3 && strstr(err3.msg, "arena memory"));
        for (size_t i = 0; i < n_targets; i++)
            check_convert(&v, targets[i]);
    }
    fnw_type_free(t);
    fnw_type_free(t2);
    if (rc3 == 0)
        fnw_type_free(t3);
    fnw_arena_free(&a);
    fnw_arena_free(&a2);
    fnw_arena_free(&small);
    return 0;
}
