/* ops/bind/tmpl.c — compiling `{field}` templates against an
 * input ROW type once, and rendering them per element without allocating
 * (rules in tmpl.h). */
#include "ops/bind/tmpl.h"

#include <stdlib.h>
#include <string.h>

typedef struct tmpl_seg {
    uint32_t lit_off, lit_len; /* literal text before the field, in t->lit */
    uint32_t path_off, depth;  /* field indexes in t->path; depth 0: no field */
    uint32_t name_off;         /* the placeholder text in t->names */
    const fnw_type *type;      /* the field's type */
} tmpl_seg;

struct fnw_tmpl {
    fnw_escape esc;
    size_t nseg, nfields, nlit, npath, nnames;
    tmpl_seg *segs;
    char *lit;
    uint32_t *path;
    char *names;
    char *option;
};

struct fnw_tmpl_argv {
    size_t n;
    fnw_tmpl *args[];
};

void fnw_tmpl_free(fnw_tmpl *t)
{
    if (!t)
        return;
    free(t->segs);
    free(t->lit);
    free(t->path);
    free(t->names);
    free(t->option);
    free(t);
}

size_t fnw_tmpl_fields(const fnw_tmpl *t)
{
    return t->nfields;
}

/* Arrays sized for the worst case of a text of len bytes. */
static fnw_tmpl *tmpl_alloc(size_t len, fnw_escape esc, const char *option)
{
    fnw_tmpl *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->esc = esc;
    t->segs = calloc(len / 2 + 2, sizeof *t->segs);
    t->lit = malloc(len + 1);
    t->path = malloc((len + 1) * sizeof *t->path);
    t->names = malloc(len + 1);
    t->option = strdup(option ? option : "?");
    if (!t->segs || !t->lit || !t->path || !t->names || !t->option) {
        fnw_tmpl_free(t);
        return NULL;
    }
    return t;
}

static int no_field(const fnw_tmpl *t, const char *name, size_t len, const fnw_type *row, const char *comp,
                    size_t clen, fnw_error *err)
{
    char ty[256];
    fnw_type_format(row, ty, sizeof ty);
    if (comp == name && clen == len)
        return fnw_error_set(err,
                             "option '%s': placeholder {%.*s} names field '%.*s', which the input type "
                             "%s does not have",
                             t->option, (int)len, name, (int)clen, comp, ty);
    return fnw_error_set(err,
                         "option '%s': placeholder {%.*s}: field '%.*s' is not in %s (the type of '%.*s')",
                         t->option, (int)len, name, (int)clen, comp, ty, (int)(comp - name - 1), name);
}

/* Index of field comp[0..clen) of ROW row, or -1. */
static int64_t field_index(const fnw_type *row, const char *comp, size_t clen)
{
    for (uint32_t i = 0; i < row->nchildren; i++)
        if (strlen(row->names[i]) == clen && memcmp(row->names[i], comp, clen) == 0)
            return i;
    return -1;
}

/* Resolves name[0..len) (a dotted path) into s->path_off/depth/type. */
static int resolve(fnw_tmpl *t, tmpl_seg *s, const fnw_type *in, const char *name, size_t len, fnw_error *err)
{
    const fnw_type *cur = in;
    const char *p = name, *end = name + len;
    s->path_off = (uint32_t)t->npath;
    for (;;) {
        const char *dot = memchr(p, '.', (size_t)(end - p));
        size_t clen = (size_t)((dot ? dot : end) - p);
        if (clen == 0)
            return fnw_error_set(err, "option '%s': placeholder {%.*s} has an empty field name in its path",
                                 t->option, (int)len, name);
        if (p == name && (!cur || cur->kind != FNW_ROW))
            return fnw_error_set(err,
                                 "option '%s': placeholder {%.*s}: the input type is %s, not a ROW with "
                                 "fields",
                                 t->option, (int)len, name, cur ? fnw_kind_name(cur->kind) : "missing");
        if (cur->kind != FNW_ROW)
            return fnw_error_set(err, "option '%s': placeholder {%.*s}: '%.*s' is %s, not a ROW with fields",
                                 t->option, (int)len, name, (int)(p - name - 1), name,
                                 fnw_kind_name(cur->kind));
        int64_t i = field_index(cur, p, clen);
        if (i < 0)
            return no_field(t, name, len, cur, p, clen, err);
        t->path[t->npath++] = (uint32_t)i;
        cur = cur->children[i];
        if (!dot)
            break;
        p = dot + 1;
    }
    s->depth = (uint32_t)(t->npath - s->path_off);
    s->type = cur;
    if (!fnw_vtext_renderable(cur, t->esc)) {
        char ty[256];
        fnw_type_format(cur, ty, sizeof ty);
        return fnw_error_set(err,
                             "option '%s': placeholder {%.*s}: field '%.*s' has type %s, which cannot be "
                             "written as %s text%s",
                             t->option, (int)len, name, (int)len, name, ty, fnw_vtext_escape_name(t->esc),
                             t->esc == FNW_ESCAPE_JSON ? ""
                                                       : " (only a JSON template takes ROW, MAP and arrays)");
    }
    return 0;
}

/* The placeholder starting after the '{' at text[i]; sets *next past its '}'. */
static int placeholder(fnw_tmpl *t, const char *text, size_t i, const fnw_type *in, size_t *next,
                       fnw_error *err)
{
    const char *name = text + i;
    size_t len = strcspn(name, "{}");
    if (name[len] != '}')
        return fnw_error_set(err,
                             name[len] ? "option '%s': placeholder {%.*s... holds a '{' (write '{{' for a "
                                         "literal brace)"
                                       : "option '%s': placeholder {%.*s... is not closed with '}'",
                             t->option, (int)(len > 40 ? 40 : len), name);
    if (len == 0)
        return fnw_error_set(err, "option '%s': empty placeholder {} (write '{{' and '}}' for literal braces)",
                             t->option);
    if (len > FNW_TMPL_MAX_NAME)
        return fnw_error_set(err, "option '%s': placeholder {%.40s...} is %zu bytes long; at most %u",
                             t->option, name, len, FNW_TMPL_MAX_NAME);
    tmpl_seg *s = &t->segs[t->nseg];
    s->name_off = (uint32_t)t->nnames;
    memcpy(t->names + t->nnames, name, len);
    t->names[t->nnames + len] = '\0';
    t->nnames += len + 1;
    if (resolve(t, s, in, name, len, err) != 0)
        return -1;
    t->nseg++;
    t->nfields++;
    t->segs[t->nseg].lit_off = (uint32_t)t->nlit;
    *next = i + len + 1;
    return 0;
}

static int parse(fnw_tmpl *t, const char *text, const fnw_type *in, fnw_error *err)
{
    size_t i = 0;
    t->segs[0].lit_off = 0;
    while (text[i]) {
        char c = text[i];
        if (c == '{' && text[i + 1] != '{') {
            tmpl_seg *s = &t->segs[t->nseg];
            s->lit_len = (uint32_t)(t->nlit - s->lit_off);
            if (placeholder(t, text, i + 1, in, &i, err) != 0)
                return -1;
            continue;
        }
        if (c == '}' && text[i + 1] != '}')
            return fnw_error_set(err, "option '%s': a lone '}' at byte %zu (write '}}' for a literal brace)",
                                 t->option, i);
        if (t->esc == FNW_ESCAPE_HEADER && (((unsigned char)c < 0x20 && c != '\t') || c == 0x7f))
            return fnw_error_set(err,
                                 "option '%s': a header template cannot contain a control character (byte "
                                 "0x%02x at %zu; only TAB is allowed)",
                                 t->option, (unsigned)(unsigned char)c, i);
        t->lit[t->nlit++] = c;
        i += (c == '{' || c == '}') ? 2 : 1;
    }
    tmpl_seg *s = &t->segs[t->nseg];
    s->lit_len = (uint32_t)(t->nlit - s->lit_off);
    if (s->lit_len > 0 || t->nseg == 0)
        t->nseg++;
    return 0;
}

fnw_tmpl *fnw_tmpl_new(const char *text, const fnw_type *in, fnw_escape esc, const char *option,
                       fnw_error *err)
{
    const char *opt = option ? option : "?";
    if (!text)
        text = "";
    size_t len = strlen(text);
    if (len > FNW_TMPL_MAX_TEXT) {
        fnw_error_set(err, "option '%s' is %zu bytes long; a template may have at most %u", opt, len,
                      FNW_TMPL_MAX_TEXT);
        return NULL;
    }
    fnw_tmpl *t = tmpl_alloc(len, esc, opt);
    if (!t) {
        fnw_error_set(err, "option '%s': out of memory", opt);
        return NULL;
    }
    if (parse(t, text, in, err) != 0) {
        fnw_tmpl_free(t);
        return NULL;
    }
    return t;
}

/* The value at s's path in row, or NULL when a ROW on the way is null. */
static const fnw_value *field_at(const fnw_tmpl *t, const tmpl_seg *s, const fnw_value *row, int *bad)
{
    const fnw_value *v = row;
    for (uint32_t k = 0; k < s->depth; k++) {
        if (v->is_null)
            return NULL;
        uint32_t i = t->path[s->path_off + k];
        if (v->kind != FNW_ROW || i >= v->count) {
            *bad = 1;
            return NULL;
        }
        v = &v->u.items[i];
    }
    return v;
}

static int render_seg(const fnw_tmpl *t, const tmpl_seg *s, const fnw_value *row, fnw_buf *out, fnw_error *err)
{
    const char *why = "does not fit the buffer";
    if (s->lit_len && fnw_vtext_write_bytes((const uint8_t *)t->lit + s->lit_off, s->lit_len, FNW_ESCAPE_RAW,
                                            out, &why) != 0)
        return fnw_error_set(err, "option '%s': the rendered text %s", t->option, why);
    if (!s->depth)
        return 0;
    int bad = 0;
    const fnw_value *v = field_at(t, s, row, &bad);
    fnw_value null = fnw_value_null(s->type->kind);
    if (bad)
        return fnw_error_set(err, "option '%s': field '%s': the row does not match the input type", t->option,
                             t->names + s->name_off);
    if (fnw_vtext_write(s->type, v ? v : &null, t->esc, out, &why) != 0)
        return fnw_error_set(err, "option '%s': the value of field '%s' %s", t->option,
                             t->names + s->name_off, why);
    return 0;
}

int fnw_tmpl_render(const fnw_tmpl *t, const fnw_value *row, fnw_buf *out, fnw_error *err)
{
    size_t len0 = out->len;
    for (size_t k = 0; k < t->nseg; k++) {
        if (render_seg(t, &t->segs[k], row, out, err) != 0) {
            out->len = len0;
            return -1;
        }
    }
    return 0;
}

/* ---- Redis command templates ------------------------------------------------ */
void fnw_tmpl_argv_free(fnw_tmpl_argv *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        fnw_tmpl_free(a->args[i]);
    free(a);
}

size_t fnw_tmpl_argv_count(const fnw_tmpl_argv *a)
{
    return a->n;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Length of the argument starting at p: up to whitespace outside braces. */
static size_t arg_len(const char *p)
{
    size_t i = 0;
    while (p[i] && !is_space(p[i])) {
        if (p[i] == '{' && p[i + 1] == '{') {
            i += 2;
        } else if (p[i] == '{') {
            size_t close = strcspn(p + i, "}");
            i += close + (p[i + close] ? 1 : 0);
        } else {
            i++;
        }
    }
    return i;
}

static int argv_add(fnw_tmpl_argv *a, const char *p, size_t len, const fnw_type *in, const char *opt,
                    fnw_error *err)
{
    if (a->n == FNW_TMPL_MAX_ARGS)
        return fnw_error_set(err, "option '%s' has more than %u arguments", opt, FNW_TMPL_MAX_ARGS);
    char *piece = strndup(p, len);
    if (!piece)
        return fnw_error_set(err, "option '%s': out of memory", opt);
    a->args[a->n] = fnw_tmpl_new(piece, in, FNW_ESCAPE_RAW, opt, err);
    free(piece);
    if (!a->args[a->n])
        return -1;
    a->n++;
    return 0;
}

fnw_tmpl_argv *fnw_tmpl_argv_new(const char *text, const fnw_type *in, const char *option, fnw_error *err)
{
    const char *opt = option ? option : "?";
    if (!text)
        text = "";
    if (strlen(text) > FNW_TMPL_MAX_TEXT) {
        fnw_error_set(err, "option '%s' is longer than %u bytes", opt, FNW_TMPL_MAX_TEXT);
        return NULL;
    }
    fnw_tmpl_argv *a = calloc(1, sizeof *a + FNW_TMPL_MAX_ARGS * sizeof a->args[0]);
    if (!a) {
        fnw_error_set(err, "option '%s': out of memory", opt);
        return NULL;
    }
    const char *p = text;
    for (;;) {
        while (is_space(*p))
            p++;
        if (!*p)
            break;
        size_t len = arg_len(p);
        if (argv_add(a, p, len, in, opt, err) != 0) {
            fnw_tmpl_argv_free(a);
            return NULL;
        }
        p += len;
    }
    if (a->n == 0) {
        fnw_tmpl_argv_free(a);
        fnw_error_set(err, "option '%s' is an empty command", opt);
        return NULL;
    }
    return a;
}

int fnw_tmpl_argv_render(const fnw_tmpl_argv *a, const fnw_value *row, fnw_buf *out, size_t *lens,
                         fnw_error *err)
{
    size_t len0 = out->len;
    for (size_t i = 0; i < a->n; i++) {
        size_t before = out->len;
        if (fnw_tmpl_render(a->args[i], row, out, err) != 0) {
            out->len = len0;
            return -1;
        }
        lens[i] = out->len - before;
    }
    return 0;
}
