/* ops/bind/conv_json.c — a jansson value into an fnw_value of a
 * target type, by the strict JSON rules of conv.h. Recursion
 * follows the target type, so it is bounded by the type's depth, not by how
 * deep a hostile document nests. */
#include "ops/bind/conv_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "codecs/ser.h"
#include "ops/bind/vtext.h"

#define OOM "out of memory (the batch's arena limit)"

typedef struct excerpt_buf {
    char *p;
    size_t len, cap;
} excerpt_buf;

/* json_dump_callback sink: keeps what fits, then stops the dump. */
static int excerpt_sink(const char *chunk, size_t n, void *data)
{
    excerpt_buf *b = data;
    size_t room = b->cap - b->len;
    memcpy(b->p + b->len, chunk, n < room ? n : room);
    b->len += n < room ? n : room;
    return n < room ? 0 : -1;
}

/* Compact ASCII JSON text of a container, cut after FNW_CONV_EXCERPT chars. */
static void container_excerpt(const json_t *j, char *out, size_t cap)
{
    char text[FNW_CONV_EXCERPT + 1];
    excerpt_buf b = { text, 0, sizeof text };
    json_dump_callback(j, excerpt_sink, &b, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
    int cut = b.len > FNW_CONV_EXCERPT;
    snprintf(out, cap, "%.*s%s", (int)(cut ? FNW_CONV_EXCERPT : b.len), text, cut ? "..." : "");
}

/* "JSON string \"abc\"", "JSON number 1.5", "JSON object {\"a\":1}"... */
static void describe(const json_t *j, char *out, size_t cap)
{
    char ex[256];
    switch (json_typeof(j)) {
    case JSON_STRING:
        fnw_conv_excerpt((const uint8_t *)json_string_value(j), json_string_length(j), ex, sizeof ex);
        snprintf(out, cap, "JSON string %s", ex);
        return;
    case JSON_INTEGER:
        snprintf(out, cap, "JSON number %" JSON_INTEGER_FORMAT, json_integer_value(j));
        return;
    case JSON_REAL:
        fnw_vtext_double(ex, sizeof ex, json_real_value(j));
        snprintf(out, cap, "JSON number %s", ex);
        return;
    case JSON_TRUE:
        snprintf(out, cap, "JSON true");
        return;
    case JSON_FALSE:
        snprintf(out, cap, "JSON false");
        return;
    case JSON_NULL:
        snprintf(out, cap, "JSON null");
        return;
    case JSON_OBJECT:
    case JSON_ARRAY:
        container_excerpt(j, ex, sizeof ex);
        snprintf(out, cap, "JSON %s %s", json_is_object(j) ? "object" : "array", ex);
        return;
    }
    snprintf(out, cap, "a JSON value");
}

static int fail(const fnw_conv_at *at, const fnw_type *t, const json_t *j, const char *why, fnw_error *err)
{
    char what[320];
    describe(j, what, sizeof what);
    return fnw_conv_fail(at, t, what, why, err);
}

static int conv(const fnw_type *t, const json_t *j, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
                fnw_error *err, int depth);

/* Compact JSON text of a non-string value, in the arena. */
static int to_text(const fnw_type *t, const json_t *j, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
                   fnw_error *err)
{
    const size_t flags = JSON_COMPACT | JSON_ENCODE_ANY;
    size_t n = json_dumpb(j, NULL, 0, flags);
    char *p = n && n <= INT32_MAX ? fnw_arena_alloc(a, n) : NULL;
    if (!p || json_dumpb(j, p, n, flags) != n)
        return fail(at, t, j, n ? OOM : "it cannot be written as JSON text", err);
    *out = fnw_value_bytes(FNW_STRING, p, (uint32_t)n);
    return 0;
}

static int scalar(const fnw_type *t, const json_t *j, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
                  fnw_error *err)
{
    const char *why = "a JSON value of another type";
    if (fnw_conv_is_sql_kind(t->kind)) {
        if (json_is_string(j))
            why = fnw_conv_set_sql_text(t, json_string_value(j), json_string_length(j), a, out);
        else if (json_is_integer(j))
            why = fnw_conv_set_sql_i64(t, json_integer_value(j), a, out);
        else if (json_is_real(j))
            why = fnw_conv_set_sql_f64(t, json_real_value(j), a, out);
        return why ? fail(at, t, j, why, err) : 0;
    }
    switch (t->kind) {
    case FNW_STRING:
        if (!json_is_string(j))
            return to_text(t, j, at, a, out, err);
        if (fnw_conv_set_string(a, json_string_value(j), json_string_length(j), out) != 0)
            return fail(at, t, j, OOM, err);
        return 0;
    case FNW_BOOLEAN:
        if (!json_is_boolean(j))
            break;
        *out = fnw_value_int(FNW_BOOLEAN, json_is_true(j));
        return 0;
    case FNW_BYTE:
    case FNW_SHORT:
    case FNW_INT:
    case FNW_LONG:
    case FNW_FLOAT:
    case FNW_DOUBLE:
        if (json_is_integer(j))
            why = fnw_conv_set_i64(t->kind, json_integer_value(j), out);
        else if (json_is_real(j))
            why = fnw_conv_set_f64(t->kind, json_real_value(j), out);
        else
            why = "not a JSON number";
        break;
    default:
        why = "not a supported target type";
        break;
    }
    return why ? fail(at, t, j, why, err) : 0;
}

static int row(const fnw_type *t, const json_t *j, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
               fnw_error *err, int depth)
{
    if (!json_is_object(j))
        return fail(at, t, j, "a ROW is read from a JSON object", err);
    fnw_value *items = fnw_conv_items(a, FNW_ROW, t->nchildren);
    if (!items)
        return fail(at, t, j, OOM, err);
    for (uint32_t i = 0; i < t->nchildren; i++) {
        fnw_conv_at here = { at, t->names[i], 0 };
        if (conv(t->children[i], json_object_get(j, t->names[i]), &here, a, &items[i], err, depth + 1) != 0)
            return -1;
    }
    *out = fnw_value_row(FNW_INSERT, items, t->nchildren);
    return 0;
}

/* One container element (or MAP value) with the nullability check. */
static int element(const fnw_type *t, const fnw_type *et, const json_t *e, const fnw_conv_at *here,
                   fnw_arena *a, fnw_value *out, fnw_error *err, int depth)
{
    if (json_is_null(e) && !fnw_conv_null_element_ok(t->kind))
        return fail(here, et, e, "this container cannot hold nulls", err);
    return conv(et, e, here, a, out, err, depth + 1);
}

static int array(const fnw_type *t, const json_t *j, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
                 fnw_error *err, int depth)
{
    if (!json_is_array(j))
        return fail(at, t, j, "an array is read from a JSON array", err);
    size_t n = json_array_size(j);
    const fnw_type *et = t->children[0];
    int bytes = t->kind == FNW_PRIMITIVE_ARRAY && et->kind == FNW_BYTE;
    fnw_value *items = n > INT32_MAX ? NULL : fnw_conv_items(a, t->kind, n);
    uint8_t *blob = bytes && items ? fnw_arena_alloc(a, n ? n : 1) : NULL;
    if (!items || (bytes && !blob))
        return fail(at, t, j, OOM, err);
    for (size_t i = 0; i < n; i++) {
        fnw_conv_at here = { at, NULL, i };
        if (element(t, et, json_array_get(j, i), &here, a, &items[i], err, depth) != 0)
            return -1;
        if (bytes)
            blob[i] = (uint8_t)items[i].u.i;
    }
    *out = bytes ? fnw_value_bytes(t->kind, blob, (uint32_t)n) : fnw_value_items(t->kind, items, (uint32_t)n);
    return 0;
}

static int map(const fnw_type *t, const json_t *j, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
               fnw_error *err, int depth)
{
    if (!json_is_object(j))
        return fail(at, t, j, "a MAP is read from a JSON object", err);
    size_t n = json_object_size(j), i = 0;
    fnw_value *items = n > INT32_MAX ? NULL : fnw_conv_items(a, FNW_MAP, n);
    if (!items)
        return fail(at, t, j, OOM, err);
    const char *key;
    size_t klen;
    json_t *v;
    json_object_keylen_foreach((json_t *)j, key, klen, v)
    {
        fnw_conv_at here = { at, key, 0 };
        if (fnw_conv_set_string(a, key, klen, &items[2 * i]) != 0)
            return fail(&here, t, j, OOM, err);
        if (element(t, t->children[1], v, &here, a, &items[2 * i + 1], err, depth) != 0)
            return -1;
        i++;
    }
    *out = fnw_value_items(FNW_MAP, items, (uint32_t)n);
    return 0;
}

static int conv(const fnw_type *t, const json_t *j, const fnw_conv_at *at, fnw_arena *a, fnw_value *out,
                fnw_error *err, int depth)
{
    if (!j || json_is_null(j)) {
        *out = fnw_value_null(t->kind);
        return 0;
    }
    if (depth > FNW_TYPE_MAX_DEPTH)
        return fail(at, t, j, "the type nests too deep", err);
    switch (t->kind) {
    case FNW_ROW:
        return row(t, j, at, a, out, err, depth);
    case FNW_BASIC_ARRAY:
    case FNW_PRIMITIVE_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
        return array(t, j, at, a, out, err, depth);
    case FNW_MAP:
        return map(t, j, at, a, out, err, depth);
    default:
        return scalar(t, j, at, a, out, err);
    }
}

int fnw_conv_json(const fnw_type *t, const json_t *j, const char *field, fnw_arena *a, fnw_value *out,
                  fnw_error *err)
{
    fnw_conv_at top = { NULL, field ? field : "?", 0 };
    return conv(t, j, &top, a, out, err, 1);
}

/* A ROW fallback's members must all be fields of the row: a misspelt field
 * would otherwise be ignored and the field left null. */
static int check_members(const fnw_type *t, const json_t *j, fnw_error *err)
{
    if (t->kind != FNW_ROW || !json_is_object(j))
        return 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)j, key, v)
    {
        (void)v;
        if (fnw_type_find_field(t, key, strlen(key)) < 0)
            return fnw_error_set(err, "'%.100s' is not a field of the output row", key);
    }
    return 0;
}

int fnw_conv_json_encode(const fnw_type *t, const char *json, fnw_buf *out, int *is_null, fnw_error *err)
{
    json_error_t jerr;
    json_t *j = json_loads(json, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (!j)
        return fnw_error_set(err, "not valid JSON (%s at line %d, column %d)", jerr.text, jerr.line,
                             jerr.column);
    int rc = fnw_conv_check_type(t, "fallback", err);
    if (rc == 0)
        rc = check_members(t, j, err);
    fnw_arena a;
    fnw_arena_init(&a, 4096, 1u << 20);
    fnw_value v = fnw_value_null(t->kind);
    if (rc == 0)
        rc = fnw_conv_json(t, j, "fallback", &a, &v, err);
    *is_null = rc == 0 && v.is_null;
    fnw_buf_clear(out);
    if (rc == 0 && !v.is_null)
        rc = fnw_ser_encode(t, &v, out, err);
    fnw_arena_free(&a);
    json_decref(j);
    return rc;
}
