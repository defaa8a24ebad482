/* ops/http/httpop_text.c — the pure pieces of the `http` operation:
 * splitting its option texts (the URL at its query, batch_body at
 * {items}, a result pointer at its {i} token), header name checks, what a
 * status means, the body excerpts quoted in errors with secrets masked, and
 * picking a result's value out of a parsed response.
 * No I/O, no state: httpop_internal.h documents each function. */
#include "ops/http/httpop_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/secrets/secret_mask.h"

size_t fnw_httpop_text_query_start(const char *url)
{
    size_t i = 0;
    while (url[i]) {
        if (url[i] == '{' && url[i + 1] == '{') {
            i += 2;
        } else if (url[i] == '{') {
            const char *close = strchr(url + i, '}');
            if (!close)
                return strlen(url); /* the template compiler names the error */
            i = (size_t)(close - url) + 1;
        } else if (url[i] == '?') {
            return i;
        } else {
            i++;
        }
    }
    return i;
}

size_t fnw_httpop_text_authority_end(const char *url)
{
    const char *s = strstr(url, "://");
    if (!s)
        return 0;
    s += 3;
    return (size_t)(s - url) + strcspn(s, "/?#");
}

const char *fnw_httpop_text_dot_segment(const char *path, size_t *len)
{
    size_t end = strcspn(path, "?#"), at = fnw_httpop_text_authority_end(path);
    while (at < end) {
        size_t seg = at + 1, n = strcspn(path + seg, "/?#");
        if (seg + n > end)
            n = end - seg;
        if ((n == 1 || n == 2) && path[seg] == '.' && path[seg + n - 1] == '.') {
            *len = n;
            return path + seg;
        }
        at = seg + n;
    }
    return NULL;
}

int fnw_httpop_text_split_batch_body(const char *text, char **prefix, char **suffix, fnw_error *err)
{
    const char *at = strstr(text, HTTPOP_ITEMS);
    size_t n = strlen(HTTPOP_ITEMS);
    if (!at || strstr(at + n, HTTPOP_ITEMS))
        return fnw_error_set(err,
                             "option 'batch_body' must hold %s exactly once (where the JSON array of "
                             "the elements' bodies goes); got '%.200s'",
                             HTTPOP_ITEMS, text);
    size_t plen = (size_t)(at - text), slen = strlen(at + n);
    char *trial = malloc(plen + slen + 3);
    if (!trial)
        return fnw_error_set(err, "option 'batch_body': out of memory");
    memcpy(trial, text, plen);
    memcpy(trial + plen, "[]", 2);
    memcpy(trial + plen + 2, at + n, slen + 1);
    json_error_t jerr;
    json_t *doc = json_loads(trial, JSON_DECODE_ANY, &jerr);
    free(trial);
    if (!doc)
        return fnw_error_set(err,
                             "option 'batch_body' is not JSON with [] in place of %s: %s (write braces "
                             "as they are, e.g. {\"inputs\": %s})",
                             HTTPOP_ITEMS, jerr.text, HTTPOP_ITEMS);
    json_decref(doc);
    *prefix = strndup(text, plen);
    *suffix = strdup(at + n);
    if (!*prefix || !*suffix) {
        free(*prefix);
        free(*suffix);
        *prefix = *suffix = NULL;
        return fnw_error_set(err, "option 'batch_body': out of memory");
    }
    return 0;
}

/* Start of the reference token "{i}" in p (a whole token), or NULL. */
static const char *find_index_token(const char *p)
{
    size_t n = strlen(HTTPOP_INDEX);
    for (const char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
        if (strncmp(s + 1, HTTPOP_INDEX, n) == 0 && (s[1 + n] == '/' || s[1 + n] == '\0'))
            return s;
    }
    return NULL;
}

int fnw_httpop_text_split_index(const char *pointer, const char *option, char **before, char **after,
                                fnw_error *err)
{
    *before = *after = NULL;
    const char *at = find_index_token(pointer);
    if (!at)
        return 0;
    const char *rest = at + 1 + strlen(HTTPOP_INDEX);
    if (find_index_token(rest))
        return fnw_error_set(err, "option '%s': the pointer '%.200s' has more than one %s token", option,
                             pointer, HTTPOP_INDEX);
    *before = strndup(pointer, (size_t)(at - pointer));
    *after = strdup(rest);
    if (!*before || !*after) {
        free(*before);
        free(*after);
        *before = *after = NULL;
        return fnw_error_set(err, "option '%s': out of memory", option);
    }
    return 1;
}

int fnw_httpop_text_header_name_ok(const char *name)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";
    if (!*name || strlen(name) > 128)
        return 0;
    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        int alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!alnum && !strchr(extra, c))
            return 0;
    }
    return 1;
}

httpop_status fnw_httpop_text_classify(long status)
{
    if (status >= 200 && status <= 299)
        return HTTPOP_OK;
    if (status == 404)
        return HTTPOP_MISSING;
    if (status == 429 || status == 503)
        return HTTPOP_OVERLOADED;
    if (status == 408 || (status >= 500 && status <= 599))
        return HTTPOP_RETRY;
    return HTTPOP_REFUSED;
}

void fnw_httpop_text_excerpt(const char *body, size_t len, const char *const *secrets, size_t n_secrets,
                             char *out, size_t cap)
{
    char b[HTTPOP_EXCERPT];
    size_t n = len < sizeof b ? len : sizeof b;
    memcpy(b, body, n);
    fnw_secret_mask(b, n, secrets, n_secrets);
    size_t o = 0;
    if (cap < 8) {
        if (cap)
            out[0] = '\0';
        return;
    }
    out[o++] = '"';
    for (size_t i = 0; i < n && o + 6 < cap; i++) {
        unsigned char c = (unsigned char)b[i];
        if (c == '"' || c == '\\')
            o += (size_t)snprintf(out + o, cap - o, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    out[o++] = '"';
    out[o] = '\0';
    if (len > n && o + 4 < cap)
        memcpy(out + o, "...", 4);
}

int fnw_httpop_text_items_count(const httpop_result *r, const json_t *doc, size_t *count)
{
    json_t *arr;
    fnw_error ignored;
    if (r->whole || fnw_jptr_get(r->items, doc, &arr, &ignored) != FNW_JPTR_FOUND || !json_is_array(arr))
        return 0;
    *count = json_array_size(arr);
    return 1;
}

int fnw_httpop_text_pick(const httpop_result *r, const json_t *doc, size_t i, json_t **out, fnw_error *err)
{
    if (r->whole)
        return fnw_jptr_get(r->whole, doc, out, err);
    json_t *arr;
    int rc = fnw_jptr_get(r->items, doc, &arr, err);
    if (rc != FNW_JPTR_FOUND)
        return rc;
    if (!json_is_array(arr))
        return fnw_error_set(err,
                             "the pointer '%.200s' needs an array before its {i}, the response has %s there",
                             r->pointer, json_is_object(arr) ? "an object" : "a scalar");
    json_t *item = json_array_get(arr, i);
    if (!item)
        return FNW_JPTR_NOT_FOUND;
    return fnw_jptr_get(r->item, item, out, err);
}
