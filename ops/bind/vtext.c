/* ops/bind/vtext.c — writing one decoded value as escaped text or as
 * a JSON value into a caller's buffer (rules in vtext.h). */
#include "ops/bind/vtext.h"

#include "codecs/utf8.h"
#include "ops/bind/tstext.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCALAR_TMP FNW_TSTEXT_MAX /* room for any scalar's text */
#define WHY_FULL "does not fit the buffer"
#define WHY_NO_MEMORY "could not be written: out of memory"

const char *fnw_vtext_escape_name(fnw_escape esc)
{
    switch (esc) {
    case FNW_ESCAPE_RAW:
        return "raw";
    case FNW_ESCAPE_URL_PATH:
        return "URL path";
    case FNW_ESCAPE_URL_QUERY:
        return "URL query";
    case FNW_ESCAPE_HEADER:
        return "header";
    case FNW_ESCAPE_JSON:
        return "JSON";
    }
    return "?";
}

static int is_text_kind(fnw_kind k)
{
    switch (k) {
    case FNW_STRING:
    case FNW_CHAR:
    case FNW_BOOLEAN:
    case FNW_BYTE:
    case FNW_SHORT:
    case FNW_INT:
    case FNW_LONG:
    case FNW_FLOAT:
    case FNW_DOUBLE:
    case FNW_BIG_DEC:
    case FNW_SQL_TIMESTAMP:
    case FNW_LOCAL_ZONED_TIMESTAMP:
        return 1;
    default:
        return 0;
    }
}

static int json_renderable(const fnw_type *t, int depth)
{
    if (!t || depth > FNW_TYPE_MAX_DEPTH)
        return 0;
    if (is_text_kind(t->kind))
        return 1;
    switch (t->kind) {
    case FNW_ROW:
        for (uint32_t i = 0; i < t->nchildren; i++)
            if (!json_renderable(t->children[i], depth + 1))
                return 0;
        return 1;
    case FNW_BASIC_ARRAY:
    case FNW_PRIMITIVE_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
        return t->nchildren == 1 && json_renderable(t->children[0], depth + 1);
    case FNW_MAP:
        return t->nchildren == 2 && t->children[0]->kind == FNW_STRING &&
               json_renderable(t->children[1], depth + 1);
    default:
        return 0;
    }
}

int fnw_vtext_renderable(const fnw_type *t, fnw_escape esc)
{
    if (esc == FNW_ESCAPE_JSON)
        return json_renderable(t, 1);
    return t && is_text_kind(t->kind);
}

static int put(fnw_buf *out, const void *p, size_t n, const char **why)
{
    if (fnw_buf_append(out, p, n) == 0)
        return 0;
    *why = fnw_buf_within_limit(out, n) ? WHY_NO_MEMORY : WHY_FULL;
    return -1;
}

static int is_unreserved(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

static int put_percent(const uint8_t *p, size_t n, fnw_buf *out, const char **why)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (is_unreserved(p[i]))
            continue;
        if (put(out, p + run, i - run, why) != 0)
            return -1;
        char e[3] = { '%', hex[p[i] >> 4], hex[p[i] & 15] };
        if (put(out, e, 3, why) != 0)
            return -1;
        run = i + 1;
    }
    return put(out, p + run, n - run, why);
}

static int put_json_string(const uint8_t *p, size_t n, fnw_buf *out, const char **why)
{
    static const char hex[] = "0123456789abcdef";
    if (!fnw_utf8_valid(p, n)) {
        *why = "is not valid UTF-8";
        return -1;
    }
    if (put(out, "\"", 1, why) != 0)
        return -1;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (put(out, p + run, i - run, why) != 0)
            return -1;
        char e[6] = { '\\', (char)c, 0, 0, 0, 0 };
        size_t en = 2;
        switch (c) {
        case '"':
        case '\\':
            break;
        case '\n':
            e[1] = 'n';
            break;
        case '\r':
            e[1] = 'r';
            break;
        case '\t':
            e[1] = 't';
            break;
        case '\b':
            e[1] = 'b';
            break;
        case '\f':
            e[1] = 'f';
            break;
        default:
            memcpy(e + 1, "u00", 3);
            e[4] = hex[c >> 4];
            e[5] = hex[c & 15];
            en = 6;
        }
        if (put(out, e, en, why) != 0)
            return -1;
        run = i + 1;
    }
    if (put(out, p + run, n - run, why) != 0)
        return -1;
    return put(out, "\"", 1, why);
}

static int put_header(const uint8_t *p, size_t n, fnw_buf *out, const char **why)
{
    for (size_t i = 0; i < n; i++) {
        if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f) {
            *why = "contains a control character (CR, LF, NUL, DEL, ...; only TAB may be in a header value)";
            return -1;
        }
    }
    return put(out, p, n, why);
}

static int put_escaped(const uint8_t *p, size_t n, fnw_escape esc, fnw_buf *out, const char **why)
{
    if (n == 0) /* p may be NULL for an empty value */
        return esc == FNW_ESCAPE_JSON ? put(out, "\"\"", 2, why) : 0;
    switch (esc) {
    case FNW_ESCAPE_URL_PATH:
    case FNW_ESCAPE_URL_QUERY:
        return put_percent(p, n, out, why);
    case FNW_ESCAPE_HEADER:
        return put_header(p, n, out, why);
    case FNW_ESCAPE_JSON:
        return put_json_string(p, n, out, why);
    default:
        return put(out, p, n, why);
    }
}

int fnw_vtext_write_bytes(const uint8_t *p, size_t n, fnw_escape esc, fnw_buf *out, const char **why)
{
    size_t len0 = out->len;
    if (put_escaped(p, n, esc, out, why) == 0)
        return 0;
    out->len = len0;
    return -1;
}

/* Shortest "%.*g" that reads back to d (d finite). */
size_t fnw_vtext_double(char *tmp, size_t cap, double d)
{
    int n = 0;
    for (int prec = 1; prec <= 17; prec++) {
        n = snprintf(tmp, cap, "%.*g", prec, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    return n < 0 ? 0 : (size_t)n;
}

static size_t fmt_float(char *tmp, size_t cap, float f)
{
    int n = 0;
    for (int prec = 1; prec <= 9; prec++) {
        n = snprintf(tmp, cap, "%.*g", prec, (double)f);
        if (strtof(tmp, NULL) == f)
            break;
    }
    return n < 0 ? 0 : (size_t)n;
}

static size_t fmt_nonfinite(char *tmp, double d)
{
    const char *s = isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity";
    size_t n = strlen(s);
    memcpy(tmp, s, n);
    return n;
}

/* UTF-8 of one UTF-16 unit (a lone surrogate becomes U+FFFD). */
static size_t char_utf8(int64_t unit, char *tmp)
{
    uint32_t c = (uint32_t)(unit & 0xffff);
    return fnw_utf8_encode(c >= 0xd800 && c <= 0xdfff ? 0xfffd : c, tmp);
}

/* v in decimal (what "%" PRId64 writes, without printf's cost: templates
 * render a key per row); tmp has room for 20 digits and the sign. */
static size_t fmt_int(char *tmp, int64_t v)
{
    char rev[24];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    size_t n = 0, k = 0;
    do {
        rev[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[k++] = '-';
    while (n)
        tmp[k++] = rev[--n];
    tmp[k] = '\0';
    return k;
}

/* Text of a non-null scalar: p and n point at its bytes or into tmp
 * (>= SCALAR_TMP bytes). *quote is set when JSON writes it as a string. */
static void scalar_text(const fnw_type *t, const fnw_value *v, char *tmp, const uint8_t **p, size_t *n,
                        int *quote)
{
    *p = (const uint8_t *)tmp;
    *quote = 0;
    switch (t->kind) {
    case FNW_STRING:
    case FNW_BIG_DEC:
        *p = v->u.bytes;
        *n = v->count;
        *quote = 1;
        return;
    case FNW_CHAR:
        *n = char_utf8(v->u.i, tmp);
        *quote = 1;
        return;
    case FNW_SQL_TIMESTAMP:
    case FNW_LOCAL_ZONED_TIMESTAMP:
        *n = fnw_tstext_format(t, v->u.i, v->count, tmp);
        *quote = 1;
        return;
    case FNW_BOOLEAN:
        *n = (size_t)snprintf(tmp, SCALAR_TMP, "%s", v->u.i ? "true" : "false");
        return;
    case FNW_FLOAT:
        *n = isfinite(v->u.f) ? fmt_float(tmp, SCALAR_TMP, v->u.f) : fmt_nonfinite(tmp, v->u.f);
        return;
    case FNW_DOUBLE:
        *n = isfinite(v->u.d) ? fnw_vtext_double(tmp, SCALAR_TMP, v->u.d) : fmt_nonfinite(tmp, v->u.d);
        return;
    default:
        *n = fmt_int(tmp, v->u.i);
        return;
    }
}

static int json_value(const fnw_type *t, const fnw_value *v, fnw_buf *out, const char **why);

static int json_items(const fnw_type *t, const fnw_value *v, fnw_buf *out, const char **why)
{
    int is_row = t->kind == FNW_ROW, is_map = t->kind == FNW_MAP;
    if (is_row && v->count != t->nchildren) {
        *why = "does not match its type (field count)";
        return -1;
    }
    if (put(out, is_row || is_map ? "{" : "[", 1, why) != 0)
        return -1;
    for (uint32_t i = 0; i < v->count; i++) {
        if (i && put(out, ",", 1, why) != 0)
            return -1;
        if (is_row) {
            const char *name = t->names[i];
            if (put_json_string((const uint8_t *)name, strlen(name), out, why) != 0 ||
                put(out, ":", 1, why) != 0 || json_value(t->children[i], &v->u.items[i], out, why) != 0)
                return -1;
        } else if (is_map) {
            const fnw_value *k = &v->u.items[2 * i];
            if (k->is_null) {
                *why = "has a null map key, which a JSON object cannot have";
                return -1;
            }
            if (json_value(t->children[0], k, out, why) != 0 || put(out, ":", 1, why) != 0 ||
                json_value(t->children[1], &v->u.items[2 * i + 1], out, why) != 0)
                return -1;
        } else if (json_value(t->children[0], &v->u.items[i], out, why) != 0) {
            return -1;
        }
    }
    return put(out, is_row || is_map ? "}" : "]", 1, why);
}

static int json_byte_array(const fnw_value *v, fnw_buf *out, const char **why)
{
    if (put(out, "[", 1, why) != 0)
        return -1;
    for (uint32_t i = 0; i < v->count; i++) {
        char tmp[8];
        int n = snprintf(tmp, sizeof tmp, "%s%d", i ? "," : "", (int)(int8_t)v->u.bytes[i]);
        if (put(out, tmp, (size_t)n, why) != 0)
            return -1;
    }
    return put(out, "]", 1, why);
}

static int json_value(const fnw_type *t, const fnw_value *v, fnw_buf *out, const char **why)
{
    if (v->is_null)
        return put(out, "null", 4, why);
    switch (t->kind) {
    case FNW_ROW:
    case FNW_MAP:
    case FNW_BASIC_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
        return json_items(t, v, out, why);
    case FNW_PRIMITIVE_ARRAY:
        if (t->children[0]->kind == FNW_BYTE)
            return json_byte_array(v, out, why);
        return json_items(t, v, out, why);
    case FNW_FLOAT:
        if (!isfinite(v->u.f))
            return put(out, "null", 4, why);
        break;
    case FNW_DOUBLE:
        if (!isfinite(v->u.d))
            return put(out, "null", 4, why);
        break;
    default:
        break;
    }
    char tmp[SCALAR_TMP];
    const uint8_t *p;
    size_t n;
    int quote;
    scalar_text(t, v, tmp, &p, &n, &quote);
    return quote ? put_escaped(p, n, FNW_ESCAPE_JSON, out, why) : put(out, p, n, why);
}

int fnw_vtext_write(const fnw_type *t, const fnw_value *v, fnw_escape esc, fnw_buf *out, const char **why)
{
    size_t len0 = out->len;
    int rc;
    if (esc == FNW_ESCAPE_JSON) {
        rc = json_value(t, v, out, why);
    } else if (v->is_null) {
        rc = 0;
    } else {
        char tmp[SCALAR_TMP];
        const uint8_t *p;
        size_t n;
        int quote;
        scalar_text(t, v, tmp, &p, &n, &quote);
        rc = put_escaped(p, n, esc, out, why);
    }
    if (rc != 0)
        out->len = len0;
    return rc;
}
