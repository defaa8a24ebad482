/* codecs/pickle_const.c — reads the SQL literals Flink's Table runner
 * passes to Python functions (see pickle_const.h): a type byte and a
 * razorvine pickle of one Java value. A strict grammar over the opcodes
 * razorvine 4.13 writes:
 *
 *   const    := type(0..3) PROTO(2) value STOP <end>
 *   value    := int | BINFLOAT f64 | NEWTRUE | NEWFALSE | NONE | str
 *             | GLOBAL "decimal\nDecimal\n" str TUPLE1 memo REDUCE memo
 *             | GLOBAL "__builtin__\nbytearray\n" str str("latin-1") TUPLE2 memo REDUCE memo
 *   int      := (BININT1 u8 | BININT2 u16 | BININT i32 | INT "-?digits\n") memo
 *   str      := BINUNICODE u32 utf8 memo
 *   memo     := (BINPUT u8 | LONG_BINPUT u32)*
 *
 * No length is used before it is checked against the bytes left; text and
 * bytes are copied into the caller's arena; the only malloc is the one type
 * node (fnw_type_new), made after the value has been read. */
#include "codecs/pickle_const.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/decimal.h"
#include "codecs/pickle_cursor.h"
#include "codecs/type.h"
#include "codecs/utf8.h"

enum {
    OP_PROTO = 0x80,
    OP_STOP = '.',
    OP_GLOBAL = 'c',
    OP_REDUCE = 'R',
    OP_TUPLE1 = 0x85,
    OP_TUPLE2 = 0x86,
    OP_BININT1 = 'K',
    OP_BININT2 = 'M',
    OP_BININT = 'J',
    OP_INT = 'I',
    OP_BINFLOAT = 'G',
    OP_NEWTRUE = 0x88,
    OP_NEWFALSE = 0x89,
    OP_NONE = 'N',
    OP_BINUNICODE = 'X',
    OP_BINPUT = 'q',
    OP_LONG_BINPUT = 'r',
};

/* Most digits of an INT operand: "-9223372036854775808" has 20 characters. */
#define INT_TEXT_MAX 20
#define TIME_MS_PER_DAY 86400000

static const char *const type_names[] = { "0, a plain value", "1, a DATE", "2, a TIME", "3, a TIMESTAMP" };

typedef fnw_pickle_cursor cursor;

typedef struct view {
    const uint8_t *p;
    size_t n;
} view;

/* Names of the opcodes a message may meet: the ones above and the ones
 * other picklers write for the same values, so a refusal says what it saw. */
static const struct {
    int op;
    const char *name;
} op_names[] = {
    { OP_PROTO, "PROTO" },
    { OP_STOP, "STOP" },
    { OP_GLOBAL, "GLOBAL" },
    { OP_REDUCE, "REDUCE" },
    { OP_TUPLE1, "TUPLE1" },
    { OP_TUPLE2, "TUPLE2" },
    { OP_BININT1, "BININT1" },
    { OP_BININT2, "BININT2" },
    { OP_BININT, "BININT" },
    { OP_INT, "INT" },
    { OP_BINFLOAT, "BINFLOAT" },
    { OP_NEWTRUE, "NEWTRUE" },
    { OP_NEWFALSE, "NEWFALSE" },
    { OP_NONE, "NONE" },
    { OP_BINUNICODE, "BINUNICODE" },
    { OP_BINPUT, "BINPUT" },
    { OP_LONG_BINPUT, "LONG_BINPUT" },
    { 0x8a, "LONG1" },
    { 0x8b, "LONG4" },
    { 'L', "LONG" },
    { 'F', "FLOAT" },
    { 0x8c, "SHORT_BINUNICODE" },
    { 'V', "UNICODE" },
    { 'C', "SHORT_BINBYTES" },
    { 'B', "BINBYTES" },
    { 0x8e, "BINBYTES8" },
    { 0x93, "STACK_GLOBAL" },
    { 0x94, "MEMOIZE" },
    { 0x95, "FRAME" },
    { '(', "MARK" },
    { 't', "TUPLE" },
    { 0x87, "TUPLE3" },
    { ')', "EMPTY_TUPLE" },
    { ']', "EMPTY_LIST" },
    { '}', "EMPTY_DICT" },
    { 'h', "BINGET" },
    { 'j', "LONG_BINGET" },
    { 'b', "BUILD" },
    { 0x81, "NEWOBJ" },
};

static const char *op_name(int op)
{
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if (op_names[i].op == op)
            return op_names[i].name;
    return "an opcode razorvine does not write";
}

/* The next opcode, consumed. */
static int take_op(cursor *c, int *op)
{
    if (c->p == c->end)
        return fnw_pickle_cursor_stop(c, "the pickle ends before its STOP opcode");
    *op = *c->p++;
    return 0;
}

static int expect_op(cursor *c, int want)
{
    int op = 0;
    if (take_op(c, &op) < 0)
        return -1;
    if (op != want) {
        c->p--;
        return fnw_pickle_cursor_stop(c, "opcode 0x%02x (%s) where %s was expected", op, op_name(op),
                                      op_name(want));
    }
    return 0;
}

/* width bytes of operand, little-endian (big-endian when big). */
static int take_fixed(cursor *c, int width, int big, uint64_t *v, int op)
{
    if (fnw_pickle_cursor_left(c) < (size_t)width)
        return fnw_pickle_cursor_stop(c, "the pickle ends inside the %d-byte operand of %s", width,
                                      op_name(op));
    uint64_t x = 0;
    for (int i = 0; i < width; i++)
        x = x << 8 | c->p[big ? i : width - 1 - i];
    c->p += width;
    *v = x;
    return 0;
}

/* BINPUT/LONG_BINPUT after a value: they only name it for later GETs. */
static int skip_memo(cursor *c)
{
    while (c->p < c->end && (*c->p == OP_BINPUT || *c->p == OP_LONG_BINPUT)) {
        int op = *c->p++;
        uint64_t idx = 0;
        if (take_fixed(c, op == OP_BINPUT ? 1 : 4, 0, &idx, op) < 0)
            return -1;
    }
    return 0;
}

/* BINUNICODE: a 4-byte length and that many bytes of UTF-8. */
static int take_str(cursor *c, view *v)
{
    const uint8_t *at = c->p;
    uint64_t len = 0;
    if (expect_op(c, OP_BINUNICODE) < 0 || take_fixed(c, 4, 0, &len, OP_BINUNICODE) < 0)
        return -1;
    if (len > fnw_pickle_cursor_left(c)) {
        c->p = at;
        return fnw_pickle_cursor_stop(c, "a BINUNICODE of %llu bytes, but only %zu bytes are left",
                                      (unsigned long long)len, fnw_pickle_cursor_left(c) - 5);
    }
    if (!fnw_utf8_valid(c->p, (size_t)len)) {
        c->p = at;
        return fnw_pickle_cursor_stop(c, "a BINUNICODE string that is not valid UTF-8");
    }
    v->p = c->p;
    v->n = (size_t)len;
    c->p += len;
    return skip_memo(c);
}

static int view_is(const view *v, const char *s)
{
    return v->n == strlen(s) && memcmp(v->p, s, v->n) == 0;
}

/* INT's operand as Java's Long.toString writes it: an optional '-' and
 * digits without a leading zero, up to a newline; it must fit 64 bits.
 * (Python reads "I00\n"/"I01\n" as False/True: that form is refused.) */
static int take_int_text(cursor *c, int64_t *out)
{
    const uint8_t *at = c->p;
    size_t lim = fnw_pickle_cursor_left(c) < INT_TEXT_MAX + 2 ? fnw_pickle_cursor_left(c) : INT_TEXT_MAX + 2;
    const uint8_t *nl = memchr(c->p, '\n', lim);
    if (!nl) {
        if (fnw_pickle_cursor_left(c) <= INT_TEXT_MAX + 1)
            return fnw_pickle_cursor_stop(c, "an INT operand without its newline");
        return fnw_pickle_cursor_stop(c,
                                      "an INT operand of more than %d characters: an integer wider than 64 bits (BIGINT) "
                                      "or not a number",
                                      INT_TEXT_MAX);
    }
    size_t len = (size_t)(nl - c->p);
    int neg = len > 0 && c->p[0] == '-';
    const uint8_t *d = c->p + neg;
    size_t nd = len - (size_t)neg;
    if (nd == 0 || (nd > 1 && d[0] == '0') || (neg && nd == 1 && d[0] == '0'))
        return fnw_pickle_cursor_stop(c, "an INT operand that is not a decimal integer as Java writes one");
    /* Accumulate as a negative number: its range holds INT64_MIN. */
    int64_t v = 0;
    for (size_t i = 0; i < nd; i++) {
        if (d[i] < '0' || d[i] > '9')
            return fnw_pickle_cursor_stop(c,
                                          "an INT operand that is not a decimal integer as Java writes one");
        int dig = d[i] - '0';
        if (v < (INT64_MIN + dig) / 10) {
            c->p = at;
            return fnw_pickle_cursor_stop(c, "the integer %.*s is wider than 64 bits (BIGINT)", (int)len,
                                          (const char *)at);
        }
        v = v * 10 - dig;
    }
    if (!neg) {
        if (v == INT64_MIN) {
            c->p = at;
            return fnw_pickle_cursor_stop(c, "the integer %.*s is wider than 64 bits (BIGINT)", (int)len,
                                          (const char *)at);
        }
        v = -v;
    }
    c->p = nl + 1;
    *out = v;
    return 0;
}

/* The integer opcodes, once the opcode is consumed. */
static int take_int(cursor *c, int op, int64_t *out)
{
    uint64_t u = 0;
    switch (op) {
    case OP_BININT1:
        if (take_fixed(c, 1, 0, &u, op) < 0)
            return -1;
        *out = (int64_t)u;
        break;
    case OP_BININT2:
        if (take_fixed(c, 2, 0, &u, op) < 0)
            return -1;
        *out = (int64_t)u;
        break;
    case OP_BININT:
        if (take_fixed(c, 4, 0, &u, op) < 0)
            return -1;
        *out = (int64_t)(int32_t)(uint32_t)u;
        break;
    default:
        if (take_int_text(c, out) < 0)
            return -1;
    }
    return skip_memo(c);
}

static int is_int_op(int op)
{
    return op == OP_BININT1 || op == OP_BININT2 || op == OP_BININT || op == OP_INT;
}

/* Java's BigDecimal.toString(): -?digits(.digits)?(E[+-]digits)? */
static int decimal_text_ok(const view *v)
{
    size_t i = 0, n = v->n;
    const uint8_t *s = v->p;
    size_t k;
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
        i++;
        if (i == n || (s[i] != '+' && s[i] != '-'))
            return 0;
        for (k = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            ;
        if (i == k)
            return 0;
    }
    return i == n;
}

/* The text of a bytearray: UTF-8 of code points below 256, decoded into a
 * (at most as long as the text). */
static int latin1_from_utf8(cursor *c, const view *v, fnw_arena *a, fnw_value *out)
{
    uint8_t *buf = fnw_arena_alloc(a, v->n + 1);
    if (!buf)
        return fnw_pickle_cursor_stop(c, "no arena memory for %zu bytes", v->n);
    size_t k = 0;
    for (size_t i = 0; i < v->n; i++) {
        uint8_t b = v->p[i];
        if (b < 0x80) {
            buf[k++] = b;
        } else if ((b == 0xc2 || b == 0xc3) && i + 1 < v->n && (v->p[i + 1] & 0xc0) == 0x80) {
            buf[k++] = (uint8_t)((b & 0x03) << 6 | (v->p[i + 1] & 0x3f));
            i++;
        } else {
            c->p = v->p + i;
            return fnw_pickle_cursor_stop(c, "bytearray text that is not Latin-1 written as UTF-8");
        }
    }
    buf[k] = 0;
    *out = fnw_value_bytes(FNW_PRIMITIVE_ARRAY, buf, (uint32_t)k);
    return 0;
}

static int copy_text(cursor *c, fnw_kind kind, const view *v, fnw_arena *a, fnw_value *out)
{
    if (v->n > UINT32_MAX - 1)
        return fnw_pickle_cursor_stop(c, "a string of %zu bytes", v->n);
    char *buf = fnw_arena_alloc(a, v->n + 1);
    if (!buf)
        return fnw_pickle_cursor_stop(c, "no arena memory for a string of %zu bytes", v->n);
    if (v->n)
        memcpy(buf, v->p, v->n);
    buf[v->n] = 0;
    *out = fnw_value_bytes(kind, buf, (uint32_t)v->n);
    return 0;
}

/* GLOBAL's "module\nname\n" and the call that follows it. */
static int take_global_call(cursor *c, fnw_arena *a, fnw_value *out)
{
    const uint8_t *at = c->p - 1;
    size_t lim = fnw_pickle_cursor_left(c) < 64 ? fnw_pickle_cursor_left(c) : 64;
    const uint8_t *nl1 = memchr(c->p, '\n', lim);
    const uint8_t *nl2 = nl1 ? memchr(nl1 + 1, '\n', (size_t)(c->p + lim - nl1 - 1)) : NULL;
    if (!nl2) {
        c->p = at;
        return fnw_pickle_cursor_stop(c, "a GLOBAL whose module and name are not two short lines");
    }
    view mod = { c->p, (size_t)(nl1 - c->p) }, name = { nl1 + 1, (size_t)(nl2 - nl1 - 1) };
    c->p = nl2 + 1;
    int is_dec = view_is(&mod, "decimal") && view_is(&name, "Decimal");
    int is_bytes = view_is(&mod, "__builtin__") && view_is(&name, "bytearray");
    if (!is_dec && !is_bytes) {
        char shown[130];
        size_t k = 0;
        for (size_t i = 0; i < (size_t)(nl2 - at - 1) && k + 1 < sizeof shown; i++) {
            uint8_t ch = at[1 + i];
            shown[k++] = ch == '\n' ? '.' : ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
        }
        shown[k] = 0;
        c->p = at;
        return fnw_pickle_cursor_stop(c,
                                      "GLOBAL %s, where only decimal.Decimal or __builtin__.bytearray may stand",
                                      shown);
    }
    if (skip_memo(c) < 0)
        return -1;
    view text, enc;
    if (take_str(c, &text) < 0)
        return -1;
    if (is_bytes) {
        if (take_str(c, &enc) < 0)
            return -1;
        if (!view_is(&enc, "latin-1"))
            return fnw_pickle_cursor_stop(c, "a bytearray with an encoding other than 'latin-1'");
    }
    if (expect_op(c, is_dec ? OP_TUPLE1 : OP_TUPLE2) < 0 || skip_memo(c) < 0 || expect_op(c, OP_REDUCE) < 0 ||
        skip_memo(c) < 0)
        return -1;
    if (is_bytes)
        return latin1_from_utf8(c, &text, a, out);
    if (!decimal_text_ok(&text)) {
        c->p = text.p;
        return fnw_pickle_cursor_stop(c,
                                      "Decimal text '%.*s' is not a decimal number as Java's BigDecimal writes one",
                                      (int)(text.n < 60 ? text.n : 60), (const char *)text.p);
    }
    return copy_text(c, FNW_BIG_DEC, &text, a, out);
}

/* One value of type byte 0. */
static int take_value(cursor *c, fnw_arena *a, fnw_value *out)
{
    int op = 0;
    if (take_op(c, &op) < 0)
        return -1;
    if (is_int_op(op)) {
        int64_t v;
        if (take_int(c, op, &v) < 0)
            return -1;
        *out = fnw_value_int(FNW_LONG, v);
        return 0;
    }
    switch (op) {
    case OP_BINFLOAT: {
        uint64_t bits = 0;
        if (take_fixed(c, 8, 1, &bits, op) < 0)
            return -1;
        double d;
        memcpy(&d, &bits, sizeof d);
        *out = fnw_value_double(d);
        return skip_memo(c);
    }
    case OP_NEWTRUE:
    case OP_NEWFALSE:
        *out = fnw_value_int(FNW_BOOLEAN, op == OP_NEWTRUE);
        return skip_memo(c);
    case OP_NONE:
        *out = fnw_value_null(FNW_STRING);
        return skip_memo(c);
    case OP_BINUNICODE: {
        view v;
        c->p--;
        if (take_str(c, &v) < 0)
            return -1;
        return copy_text(c, FNW_STRING, &v, a, out);
    }
    case OP_GLOBAL:
        return take_global_call(c, a, out);
    default:
        c->p--;
        return fnw_pickle_cursor_stop(c,
                                      "opcode 0x%02x (%s) where razorvine writes a number, string, boolean, None or Decimal",
                                      op, op_name(op));
    }
}

/* The int of type bytes 1-3, with its range. */
static int take_temporal(cursor *c, int tb, fnw_value *out)
{
    int op = 0;
    const uint8_t *at = c->p;
    if (take_op(c, &op) < 0)
        return -1;
    if (!is_int_op(op)) {
        c->p--;
        return fnw_pickle_cursor_stop(c, "opcode 0x%02x (%s) where the integer of a %s was expected", op,
                                      op_name(op),
                                      tb == FNW_PICKLE_CONST_DATE   ? "DATE"
                                      : tb == FNW_PICKLE_CONST_TIME ? "TIME"
                                                                    : "TIMESTAMP");
    }
    int64_t v;
    if (take_int(c, op, &v) < 0)
        return -1;
    if (tb == FNW_PICKLE_CONST_DATE) {
        if (v < INT32_MIN || v > INT32_MAX) {
            c->p = at;
            return fnw_pickle_cursor_stop(c, "a DATE of %lld days, beyond the 32 bits of a SQL DATE",
                                          (long long)v);
        }
        *out = fnw_value_int(FNW_SQL_DATE, v);
    } else if (tb == FNW_PICKLE_CONST_TIME) {
        if (v < 0 || v >= TIME_MS_PER_DAY) {
            c->p = at;
            return fnw_pickle_cursor_stop(c, "a TIME of %lld ms, outside a day (0 to %d)", (long long)v,
                                          TIME_MS_PER_DAY - 1);
        }
        *out = fnw_value_int(FNW_SQL_TIME, v);
    } else {
        *out = fnw_value_int(FNW_SQL_TIMESTAMP, v);
    }
    return 0;
}

static fnw_type *type_of(const fnw_value *v)
{
    fnw_type *t = fnw_type_new((fnw_kind)v->kind);
    if (!t || v->kind != FNW_PRIMITIVE_ARRAY)
        return t;
    fnw_type *b = fnw_type_new(FNW_BYTE);
    if (!b || fnw_type_add_child(t, b, NULL, NULL) < 0) {
        fnw_type_free(b);
        fnw_type_free(t);
        return NULL;
    }
    return t;
}

int fnw_pickle_const_read(const uint8_t *p, size_t n, fnw_arena *a, fnw_value *out, fnw_type **type,
                          fnw_error *err)
{
    *type = NULL;
    if (n == 0)
        return fnw_error_set(err, "SQL constant: the inputConstant is empty (a type byte and a pickle were "
                                  "expected)");
    int tb = p[0];
    if (tb > FNW_PICKLE_CONST_TIMESTAMP)
        return fnw_error_set(err,
                             "SQL constant: type byte %d is not one Flink writes (0 plain value, 1 DATE, 2 TIME, "
                             "3 TIMESTAMP)",
                             tb);
    cursor c = { .start = p, .p = p + 1, .end = p + n };
    fnw_value v = { 0 };
    int rc = 0;
    if (fnw_pickle_cursor_left(&c) < 2 || c.p[0] != OP_PROTO || c.p[1] != 2) {
        rc = fnw_pickle_cursor_stop(&c, "not a pickle of protocol 2 (razorvine writes PROTO 2 first)");
    } else {
        c.p += 2;
        rc = tb == FNW_PICKLE_CONST_PLAIN ? take_value(&c, a, &v) : take_temporal(&c, tb, &v);
        if (rc == 0)
            rc = expect_op(&c, OP_STOP);
        if (rc == 0 && c.p != c.end)
            rc = fnw_pickle_cursor_stop(&c, "%zu bytes after the STOP opcode", fnw_pickle_cursor_left(&c));
    }
    if (rc < 0)
        return fnw_error_set(err, "SQL constant (type byte %s): %s", type_names[tb], c.why);
    *type = type_of(&v);
    if (!*type)
        return fnw_error_set(err, "SQL constant: out of memory for its type");
    *out = v;
    return 0;
}

/* ---- a constant as a declared type ---------------------------------------------- */

static int int_fits(fnw_kind k, int64_t i)
{
    switch (k) {
    case FNW_BYTE:
        return i >= INT8_MIN && i <= INT8_MAX;
    case FNW_SHORT:
        return i >= INT16_MIN && i <= INT16_MAX;
    case FNW_INT:
        return i >= INT32_MIN && i <= INT32_MAX;
    default:
        return 1;
    }
}

static int cannot(const fnw_value *v, const fnw_type *to, fnw_error *err)
{
    char t[128];
    fnw_type_format(to, t, sizeof t);
    return fnw_error_set(err, "a constant %s cannot be an argument of type %s",
                         fnw_kind_name((fnw_kind)v->kind), t);
}

static int from_long(const fnw_value *v, const fnw_type *to, fnw_arena *a, fnw_value *out, fnw_error *err)
{
    fnw_kind k = fnw_type_kind(to);
    switch (k) {
    case FNW_BYTE:
    case FNW_SHORT:
    case FNW_INT:
    case FNW_LONG:
        if (!int_fits(k, v->u.i)) {
            char t[64];
            fnw_type_format(to, t, sizeof t);
            return fnw_error_set(err, "the constant %lld does not fit %s", (long long)v->u.i, t);
        }
        *out = fnw_value_int(k, v->u.i);
        return 0;
    case FNW_FLOAT:
        *out = fnw_value_float((float)v->u.i);
        return 0;
    case FNW_DOUBLE:
        *out = fnw_value_double((double)v->u.i);
        return 0;
    case FNW_BIG_DEC: {
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%lld", (long long)v->u.i);
        char *text = fnw_arena_memdup(a, buf, (size_t)n + 1);
        if (!text)
            return fnw_error_set(err, "out of memory");
        *out = fnw_value_bytes(FNW_BIG_DEC, text, (uint32_t)n);
        return 0;
    }
    default:
        return cannot(v, to, err);
    }
}

static int from_decimal(const fnw_value *v, const fnw_type *to, fnw_value *out, fnw_error *err)
{
    fnw_kind k = fnw_type_kind(to);
    if (k == FNW_BIG_DEC) {
        *out = *v; /* the encoder rounds it to the scale and checks the precision */
        return 0;
    }
    if (k != FNW_FLOAT && k != FNW_DOUBLE)
        return cannot(v, to, err);
    char buf[FNW_DECIMAL_TEXT_MAX * 2];
    if (v->count >= sizeof buf)
        return fnw_error_set(err, "the decimal constant is too long (%u characters)", v->count);
    memcpy(buf, v->u.bytes, v->count);
    buf[v->count] = 0;
    double d = strtod(buf, NULL);
    *out = k == FNW_FLOAT ? fnw_value_float((float)d) : fnw_value_double(d);
    return 0;
}

int fnw_pickle_const_convert(const fnw_value *v, const fnw_type *to, fnw_arena *a, fnw_value *out,
                             fnw_error *err)
{
    fnw_kind k = fnw_type_kind(to);
    if (v->is_null) {
        *out = fnw_value_null(k);
        return 0;
    }
    switch ((fnw_kind)v->kind) {
    case FNW_LONG:
        return from_long(v, to, a, out, err);
    case FNW_DOUBLE:
        if (k == FNW_DOUBLE || k == FNW_FLOAT) {
            *out = k == FNW_FLOAT ? fnw_value_float((float)v->u.d) : *v;
            return 0;
        }
        return cannot(v, to, err);
    case FNW_BIG_DEC:
        return from_decimal(v, to, out, err);
    case FNW_SQL_TIMESTAMP:
        if (k == FNW_SQL_TIMESTAMP || k == FNW_LOCAL_ZONED_TIMESTAMP) {
            *out = fnw_value_timestamp(k, v->u.i, 0);
            return 0;
        }
        return cannot(v, to, err);
    default:
        if (k == FNW_PRIMITIVE_ARRAY && fnw_type_kind(fnw_type_child(to, 0)) != FNW_BYTE)
            return cannot(v, to, err); /* only bytes are sent as an array constant */
        if ((fnw_kind)v->kind == k && k != FNW_ROW && k != FNW_MAP && k != FNW_BASIC_ARRAY) {
            *out = *v;
            return 0;
        }
        return cannot(v, to, err);
    }
}
