/* ops/bind/jptr.c — compiling and evaluating RFC 6901 JSON pointers
 * on jansson documents (rules in jptr.h). */
#include "ops/bind/jptr.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct jptr_tok {
    size_t off, len; /* unescaped token in p->buf */
    int kind;        /* TOK_NAME, TOK_INDEX, TOK_DASH */
    size_t index;    /* TOK_INDEX; SIZE_MAX when too large for memory */
} jptr_tok;

enum { TOK_NAME, TOK_INDEX, TOK_DASH };

struct fnw_jptr {
    size_t n;
    jptr_tok *toks;
    char *buf; /* the unescaped tokens, each NUL-terminated */
    char *text;
    char *option;
};

void fnw_jptr_free(fnw_jptr *p)
{
    if (!p)
        return;
    free(p->toks);
    free(p->buf);
    free(p->text);
    free(p->option);
    free(p);
}

size_t fnw_jptr_depth(const fnw_jptr *p)
{
    return p->n;
}

static void classify(jptr_tok *t, const char *s)
{
    t->kind = TOK_NAME;
    if (t->len == 1 && s[0] == '-') {
        t->kind = TOK_DASH;
        return;
    }
    if (t->len == 0 || (s[0] == '0' && t->len > 1))
        return;
    size_t v = 0;
    for (size_t i = 0; i < t->len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return;
        size_t d = (size_t)(s[i] - '0');
        v = (v > (SIZE_MAX - d) / 10) ? SIZE_MAX : v * 10 + d;
    }
    t->kind = TOK_INDEX;
    t->index = v;
}

/* Unescapes text (starting at a '/') into p->buf and p->toks. */
static int split(fnw_jptr *p, const char *text, fnw_error *err)
{
    size_t w = 0;
    for (const char *s = text; *s;) {
        jptr_tok *t = &p->toks[p->n++];
        t->off = w;
        for (s++; *s && *s != '/'; s++) {
            char c = *s;
            if (c == '~') {
                if (s[1] != '0' && s[1] != '1')
                    return fnw_error_set(err,
                                         "option '%s': JSON pointer '%s' has '~' not followed by 0 or 1 "
                                         "(write ~0 for '~' and ~1 for '/')",
                                         p->option, text);
                c = *++s == '0' ? '~' : '/';
            }
            p->buf[w++] = c;
        }
        t->len = w - t->off;
        p->buf[w++] = '\0';
        classify(t, p->buf + t->off);
    }
    return 0;
}

fnw_jptr *fnw_jptr_new(const char *text, const char *option, fnw_error *err)
{
    const char *opt = option ? option : "?";
    if (!text)
        text = "";
    size_t len = strlen(text);
    if (len > FNW_JPTR_MAX_TEXT) {
        fnw_error_set(err, "option '%s': a JSON pointer may have at most %u bytes; this one has %zu", opt,
                      FNW_JPTR_MAX_TEXT, len);
        return NULL;
    }
    if (len && text[0] != '/') {
        fnw_error_set(err, "option '%s': JSON pointer '%s' must be empty or start with '/'", opt, text);
        return NULL;
    }
    fnw_jptr *p = calloc(1, sizeof *p);
    if (p) {
        p->toks = calloc(len + 1, sizeof *p->toks);
        p->buf = malloc(len + 1);
        p->text = strdup(text);
        p->option = strdup(opt);
    }
    if (!p || !p->toks || !p->buf || !p->text || !p->option) {
        fnw_jptr_free(p);
        fnw_error_set(err, "option '%s': out of memory", opt);
        return NULL;
    }
    if (split(p, text, err) != 0) {
        fnw_jptr_free(p);
        return NULL;
    }
    return p;
}

/* One step into cur; FOUND/NOT_FOUND/-1. */
static int step(const fnw_jptr *p, const jptr_tok *t, const json_t *cur, json_t **next, fnw_error *err)
{
    const char *s = p->buf + t->off;
    if (json_is_object(cur)) {
        *next = json_object_getn(cur, s, t->len);
        return *next ? FNW_JPTR_FOUND : FNW_JPTR_NOT_FOUND;
    }
    if (!json_is_array(cur))
        return FNW_JPTR_NOT_FOUND;
    if (t->kind == TOK_DASH)
        return fnw_error_set(err,
                             "option '%s': JSON pointer '%s' uses '-', the element after the last of an "
                             "array, which cannot be read",
                             p->option, p->text);
    if (t->kind != TOK_INDEX)
        return fnw_error_set(err,
                             "option '%s': JSON pointer '%s': token '%.60s' is applied to an array but is "
                             "not an index (0, 1, ... without leading zeros)",
                             p->option, p->text, s);
    if (t->index >= json_array_size(cur))
        return FNW_JPTR_NOT_FOUND;
    *next = json_array_get(cur, t->index);
    return FNW_JPTR_FOUND;
}

int fnw_jptr_get(const fnw_jptr *p, const json_t *doc, json_t **out, fnw_error *err)
{
    json_t *cur = (json_t *)doc;
    *out = NULL;
    if (!doc)
        return FNW_JPTR_NOT_FOUND;
    for (size_t i = 0; i < p->n; i++) {
        json_t *next = NULL;
        int rc = step(p, &p->toks[i], cur, &next, err);
        if (rc != FNW_JPTR_FOUND)
            return rc;
        cur = next;
    }
    *out = cur;
    return FNW_JPTR_FOUND;
}
