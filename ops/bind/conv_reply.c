/* ops/bind/conv_reply.c — a Redis-style reply (reply.h)
 * into an fnw_value of a target type, by the rules of conv.h:
 * lenient about numeric text, since Redis stores strings, and strict about
 * range. Recursion follows the target type, so it is bounded by the type's
 * depth, not by how deep a reply nests. */
#include "ops/bind/conv_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/bind/vtext.h"

#define OOM "out of memory (the batch's arena limit)"

static void describe(const fnw_reply *r, char *out, size_t cap)
{
    char ex[256];
    switch (r->kind) {
    case FNW_REPLY_STRING:
        fnw_conv_excerpt((const uint8_t *)r->u.str, r->len, ex, sizeof ex);
        snprintf(out, cap, "Redis string %s", ex);
        return;
    case FNW_REPLY_INTEGER:
        snprintf(out, cap, "Redis integer %" PRId64, r->u.i);
        return;
    case FNW_REPLY_DOUBLE:
        if (isfinite(r->u.d))
            fnw_vtext_double(ex, sizeof ex, r->u.d);
        else
            snprintf(ex, sizeof ex, "%s", isnan(r->u.d) ? "nan" : r->u.d > 0 ? "inf" : "-inf");
        snprintf(out, cap, "Redis double %s", ex);
        return;
    case FNW_REPLY_BOOL:
        snprintf(out, cap, "Redis boolean %s", r->u.b ? "true" : "false");
        return;
    case FNW_REPLY_ARRAY:
        snprintf(out, cap, "a Redis array (%zu elements)", r->len);
        return;
    case FNW_REPLY_NIL:
        snprintf(out, cap, "Redis nil");
        return;
    }
    snprintf(out, cap, "a Redis reply of unknown kind %d", (int)r->kind);
}

static int fail(const fnw_conv_at *at, const fnw_type *t, const fnw_reply *r, const char *why, fnw_error *err)
{
    char what[320];
    describe(r, what, sizeof what);
    return fnw_conv_fail(at, t, what, why, err);
}

static int conv(const fnw_type *t, const fnw_reply *r, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
                fnw_error *err, int depth);

/* A Redis string into a scalar target; NULL or a reason. */
static const char *from_string(const fnw_type *t, const fnw_reply *r, fnw_arena *a, fnw_value *out)
{
    const char *s = r->u.str;
    size_t n = r->len;
    int64_t i;
    double d;
    switch (t->kind) {
    case FNW_STRING:
        return fnw_conv_set_string(a, s, n, out) == 0 ? NULL : OOM;
    case FNW_BOOLEAN:
        if ((n == 1 && s[0] == '1') || (n == 4 && memcmp(s, "true", 4) == 0))
            *out = fnw_value_int(FNW_BOOLEAN, 1);
        else if ((n == 1 && s[0] == '0') || (n == 5 && memcmp(s, "false", 5) == 0))
            *out = fnw_value_int(FNW_BOOLEAN, 0);
        else
            return "a boolean is 1, 0, true or false";
        return NULL;
    case FNW_FLOAT:
    case FNW_DOUBLE:
        if (fnw_conv_parse_f64(s, n, &d) != 0)
            return "not a decimal number";
        return fnw_conv_set_f64(t->kind, d, out);
    default:
        if (fnw_conv_parse_i64(s, n, &i) != 0)
            return "not a whole number (optional '-' and decimal digits) that fits 64 bits";
        return fnw_conv_set_i64(t->kind, i, out);
    }
}

/* Text of a number or boolean reply as a STRING in the arena. */
static const char *as_text(const fnw_reply *r, fnw_arena *a, fnw_value *out)
{
    char tmp[48];
    size_t n;
    if (r->kind == FNW_REPLY_INTEGER)
        n = (size_t)snprintf(tmp, sizeof tmp, "%" PRId64, r->u.i);
    else if (r->kind == FNW_REPLY_BOOL)
        n = (size_t)snprintf(tmp, sizeof tmp, "%s", r->u.b ? "true" : "false");
    else if (isfinite(r->u.d))
        n = fnw_vtext_double(tmp, sizeof tmp, r->u.d);
    else
        n = (size_t)snprintf(tmp, sizeof tmp, "%s", isnan(r->u.d) ? "nan" : r->u.d > 0 ? "inf" : "-inf");
    return fnw_conv_set_string(a, tmp, n, out) == 0 ? NULL : OOM;
}

static int scalar(const fnw_type *t, const fnw_reply *r, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
                  fnw_error *err)
{
    const char *why;
    if (fnw_conv_is_sql_kind(t->kind)) {
        if (r->kind == FNW_REPLY_STRING)
            why = fnw_conv_set_sql_text(t, r->u.str, r->len, a, out);
        else if (r->kind == FNW_REPLY_INTEGER)
            why = fnw_conv_set_sql_i64(t, r->u.i, a, out);
        else if (r->kind == FNW_REPLY_DOUBLE)
            why = fnw_conv_set_sql_f64(t, r->u.d, a, out);
        else
            why = "a reply of another kind";
    } else if (r->kind == FNW_REPLY_STRING)
        why = from_string(t, r, a, out);
    else if (t->kind == FNW_STRING && r->kind != FNW_REPLY_ARRAY)
        why = as_text(r, a, out);
    else if (r->kind == FNW_REPLY_INTEGER)
        why = fnw_conv_set_i64(t->kind, r->u.i, out);
    else if (r->kind == FNW_REPLY_DOUBLE)
        why = fnw_conv_set_f64(t->kind, r->u.d, out);
    else if (r->kind == FNW_REPLY_BOOL && t->kind == FNW_BOOLEAN)
        why = fnw_conv_set_i64(FNW_BOOLEAN, r->u.b ? 1 : 0, out);
    else
        why = "a reply of another kind";
    return why ? fail(at, t, r, why, err) : 0;
}

static int element(const fnw_type *t, const fnw_type *et, const fnw_reply *e, const fnw_conv_at *here,
                   fnw_arena *a, fnw_value *out, fnw_error *err, int depth)
{
    if (e->kind == FNW_REPLY_NIL && !fnw_conv_null_element_ok(t->kind))
        return fail(here, et, e, "this container cannot hold nulls", err);
    return conv(et, e, here, a, out, err, depth + 1);
}

static int array(const fnw_type *t, const fnw_reply *r, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
                 fnw_error *err, int depth)
{
    size_t n = r->len;
    const fnw_type *et = t->children[0];
    int bytes = t->kind == FNW_PRIMITIVE_ARRAY && et->kind == FNW_BYTE;
    fnw_value *items = n > INT32_MAX ? NULL : fnw_conv_items(a, t->kind, n);
    uint8_t *blob = bytes && items ? fnw_arena_alloc(a, n ? n : 1) : NULL;
    if (!items || (bytes && !blob))
        return fail(at, t, r, OOM, err);
    for (size_t i = 0; i < n; i++) {
        fnw_conv_at here = { at, NULL, i };
        if (element(t, et, &r->u.items[i], &here, a, &items[i], err, depth) != 0)
            return -1;
        if (bytes)
            blob[i] = (uint8_t)items[i].u.i;
    }
    *out = bytes ? fnw_value_bytes(t->kind, blob, (uint32_t)n) : fnw_value_items(t->kind, items, (uint32_t)n);
    return 0;
}

/* HMGET-style: element i is field i. */
static int row(const fnw_type *t, const fnw_reply *r, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
               fnw_error *err, int depth)
{
    if (r->len != t->nchildren) {
        char why[96];
        snprintf(why, sizeof why, "a ROW of %u fields is read from an array of as many elements",
                 t->nchildren);
        return fail(at, t, r, why, err);
    }
    fnw_value *items = fnw_conv_items(a, FNW_ROW, t->nchildren);
    if (!items)
        return fail(at, t, r, OOM, err);
    for (uint32_t i = 0; i < t->nchildren; i++) {
        fnw_conv_at here = { at, t->names[i], 0 };
        if (conv(t->children[i], &r->u.items[i], &here, a, &items[i], err, depth + 1) != 0)
            return -1;
    }
    *out = fnw_value_row(FNW_INSERT, items, t->nchildren);
    return 0;
}

/* HGETALL-style: key, value, key, value... */
static int map(const fnw_type *t, const fnw_reply *r, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
               fnw_error *err, int depth)
{
    if (r->len % 2)
        return fail(at, t, r, "a MAP is read from key, value pairs (an even count)", err);
    size_t n = r->len / 2;
    fnw_value *items = n > INT32_MAX ? NULL : fnw_conv_items(a, FNW_MAP, n);
    if (!items)
        return fail(at, t, r, OOM, err);
    for (size_t i = 0; i < n; i++) {
        const fnw_reply *k = &r->u.items[2 * i];
        fnw_conv_at here = { at, NULL, 2 * i };
        if (k->kind == FNW_REPLY_NIL || k->kind == FNW_REPLY_ARRAY)
            return fail(&here, t->children[0], k, "a MAP key must be a string or number", err);
        if (conv(t->children[0], k, &here, a, &items[2 * i], err, depth + 1) != 0)
            return -1;
        here.index = 2 * i + 1;
        if (element(t, t->children[1], &r->u.items[2 * i + 1], &here, a, &items[2 * i + 1], err, depth) != 0)
            return -1;
    }
    *out = fnw_value_items(FNW_MAP, items, (uint32_t)n);
    return 0;
}

static int conv(const fnw_type *t, const fnw_reply *r, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
                fnw_error *err, int depth)
{
    if (!r || r->kind == FNW_REPLY_NIL) {
        *out = fnw_value_null(t->kind);
        return 0;
    }
    if (depth > FNW_TYPE_MAX_DEPTH)
        return fail(at, t, r, "the type nests too deep", err);
    switch (t->kind) {
    case FNW_ROW:
    case FNW_BASIC_ARRAY:
    case FNW_PRIMITIVE_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
    case FNW_MAP:
        if (r->kind != FNW_REPLY_ARRAY)
            return fail(at, t, r, "a container is read from a Redis array", err);
        if (t->kind == FNW_ROW)
            return row(t, r, at, a, out, err, depth);
        return t->kind == FNW_MAP ? map(t, r, at, a, out, err, depth) : array(t, r, at, a, out, err, depth);
    default:
        return scalar(t, r, at, a, out, err);
    }
}

int fnw_conv_reply(const fnw_type *t, const fnw_reply *r, const char *field, fnw_arena *a, fnw_value *out,
                   fnw_error *err)
{
    fnw_conv_at top = { NULL, field ? field : "?", 0 };
    return conv(t, r, &top, a, out, err, 1);
}
