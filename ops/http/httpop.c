/* ops/http/httpop.c — the `http` operation: one HTTP request per element
 * (or per batch) built from templates over the input row, its JSON response
 * picked apart by JSON pointers into the output row's result fields. This
 * file reads and validates every option at open (so a bad job fails before
 * any request, naming the option and the field), builds the instance state
 * and frees it; httpop_call.c runs the calls. The options and their
 * rules are listed in http_known below and documented for users with the
 * operation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ops/bind/conv.h"
#include "ops/http/httpop_internal.h"
#include "ops/builtins.h"
#include "ops/secrets/secret_env.h"
#include "ops/secrets/secret_mask.h"

#define OP "http"
#define MIB ((int64_t)1 << 20)
#define DAY_MS 86400000LL

static const char *const http_known[] = {
    "method",
    "url",
    "body",
    "batch_body",
    "on_missing",
    "on_short_batch",
    "max_response_bytes",
    "max_connections",
    "tls_ca_file",
    "connect_timeout_ms",
    "request_timeout_ms",
    "cache_max_rows",
    "cache_ttl_ms",
    "cache_max_bytes",
    "cache_missing",
    "header.<Name>",
    "result.<field>",
    NULL,
};

static int has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static int check_known(const fnw_options *o, fnw_error *err)
{
    for (size_t i = 0; i < o->count; i++) {
        const char *k = o->items[i].key ? o->items[i].key : "";
        int ok = has_prefix(k, "header.") || has_prefix(k, "result.");
        for (size_t j = 0; !ok && http_known[j]; j++)
            ok = strcmp(k, http_known[j]) == 0 && !strchr(k, '<');
        if (!ok)
            return fnw_error_set(err,
                                 "unknown option '%s'; known options: method, url, body, batch_body, "
                                 "on_missing, on_short_batch, max_response_bytes, max_connections, tls_ca_file, "
                                 "connect_timeout_ms, request_timeout_ms, cache_max_rows, cache_ttl_ms, cache_max_bytes, "
                                 "cache_missing, header.<Name>, result.<field>",
                                 k);
    }
    return 0;
}

static int parse_method(httpop_state *st, const fnw_options *o, fnw_error *err)
{
    const char *m = fnw_options_get(o, "method");
    if (!m)
        m = st->body ? "POST" : "GET";
    size_t n = strlen(m);
    int ok = n > 0 && n < sizeof st->method;
    for (size_t i = 0; ok && i < n; i++)
        ok = m[i] >= 'A' && m[i] <= 'Z';
    if (!ok)
        return fnw_error_set(err,
                             "option 'method' must be an upper-case HTTP method (GET, POST, PUT, ...); "
                             "got '%.40s'",
                             m);
    memcpy(st->method, m, n + 1);
    return 0;
}

/* The URL: path part (before the first '?') and query part, each escaped
 * for its place. In batch mode one request serves many rows: no fields. */
static int parse_url(httpop_state *st, const fnw_options *o, fnw_error *err)
{
    const char *url = fnw_options_get(o, "url");
    if (!url || !*url)
        return fnw_error_set(err, "option 'url' is required (e.g. http://host:port/items/{id})");
    if (!has_prefix(url, "http://") && !has_prefix(url, "https://"))
        return fnw_error_set(err, "option 'url' must start with http:// or https://; got '%.200s'", url);
    size_t q = fnw_httpop_text_query_start(url), auth = fnw_httpop_text_authority_end(url), dots;
    for (size_t i = 0; i < auth; i++)
        if (url[i] == '{' && url[i + 1] != '{')
            return fnw_error_set(err,
                                 "option 'url': a placeholder before the path ('%.200s'): a row's value may "
                                 "not choose the scheme, host or port; write them out",
                                 url);
    char *path = strndup(url, q);
    if (path && fnw_httpop_text_dot_segment(path, &dots)) {
        free(path);
        return fnw_error_set(err,
                             "option 'url': the path has a '.' or '..' segment ('%.200s'); write the path "
                             "it stands for",
                             url);
    }
    if (!path)
        return fnw_error_set(err, "option 'url': out of memory");
    st->url_path = fnw_tmpl_new(path, st->input_type, FNW_ESCAPE_URL_PATH, "url", err);
    free(path);
    if (!st->url_path)
        return -1;
    if (url[q] && !(st->url_query = fnw_tmpl_new(url + q, st->input_type, FNW_ESCAPE_URL_QUERY, "url", err)))
        return -1;
    size_t fields = fnw_tmpl_fields(st->url_path) + (st->url_query ? fnw_tmpl_fields(st->url_query) : 0);
    if (st->batched && fields)
        return fnw_error_set(err, "option 'url' names input fields, but in batch mode one request carries "
                                  "many rows: use a constant URL and put the fields in 'body'");
    return 0;
}

/* 1 when s holds a byte a header value may not: a control character but TAB, or DEL. */
static int header_ctl(const char *s)
{
    for (; *s; s++)
        if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
            return 1;
    return 0;
}

/* A header whose value comes from the environment at open: "env:VAR" (the
 * whole value) or literal text around one "{env:VAR}" ("Bearer {env:KEY}").
 * The line is built once; the variable's value is a secret to mask. */
static int secret_header(httpop_state *st, httpop_header *h, const char *opt, const char *value,
                         fnw_error *err)
{
    const char *before = "", *after = "";
    size_t blen = 0, vlen;
    const char *var;
    if (has_prefix(value, "env:")) {
        var = value + 4;
        vlen = strlen(var);
    } else {
        const char *at = strstr(value, "{env:"), *close = strchr(at, '}');
        if (!close || strpbrk(close + 1, "{}") || memchr(value, '{', (size_t)(at - value)) ||
            memchr(value, '}', (size_t)(at - value)))
            return fnw_error_set(err,
                                 "option '%s': a value from the environment is 'env:VAR' or text around "
                                 "one {env:VAR} (e.g. 'Bearer {env:API_KEY}'), without other braces",
                                 opt);
        before = value;
        blen = (size_t)(at - value);
        var = at + 5;
        vlen = (size_t)(close - var);
        after = close + 1;
    }
    char name[256];
    if (vlen == 0 || vlen >= sizeof name)
        return fnw_error_set(err, "option '%s': no environment variable name after 'env:'", opt);
    memcpy(name, var, vlen);
    name[vlen] = '\0';
    const char *secret = fnw_secret_env_get(name, opt, "http", err);
    if (!secret)
        return -1;
    if (header_ctl(secret) || header_ctl(before) || header_ctl(after))
        return fnw_error_set(err,
                             "option '%s': the value (or environment variable '%s') holds a control "
                             "character (only TAB may be in a header value)",
                             opt, name);
    size_t n = strlen(h->name) + blen + strlen(secret) + strlen(after) + 3;
    if (!(h->line = malloc(n)))
        return fnw_error_set(err, "out of memory");
    int at = snprintf(h->line, n, "%s: %.*s", h->name, (int)blen, before);
    snprintf(h->line + at, n - (size_t)at, "%s%s", secret, after);
    /* the value, and its credential alone ("Bearer tok" -> "tok"), which a server may quote */
    const char *cred = fnw_secret_mask_credential(secret);
    const char *mask[2] = { secret, cred };
    for (size_t k = 0; k < 2; k++) {
        if (!mask[k] || !*mask[k])
            continue;
        /* unmasked, the secret could reach the log in an excerpt: fail instead */
        if (st->n_secrets >= HTTPOP_MAX_SECRETS || !(st->secrets[st->n_secrets] = strdup(mask[k])))
            return fnw_error_set(err, "option '%s': out of memory", opt);
        st->n_secrets++;
    }
    return 0;
}

static int add_header(httpop_state *st, const char *name, const char *value, fnw_error *err)
{
    if (!fnw_httpop_text_header_name_ok(name))
        return fnw_error_set(err, "option 'header.%.128s': '%.128s' is not a header name", name, name);
    if (st->n_headers >= HTTPOP_MAX_HEADERS)
        return fnw_error_set(err, "option 'header.%s': at most %d headers", name, HTTPOP_MAX_HEADERS);
    httpop_header *h = &st->headers[st->n_headers++];
    if (!(h->name = strdup(name)))
        return fnw_error_set(err, "out of memory");
    if (strcasecmp(name, "Content-Type") == 0)
        st->add_content_type = 0;
    char opt[160];
    snprintf(opt, sizeof opt, "header.%s", name);
    if (has_prefix(value, "env:") || strstr(value, "{env:"))
        return secret_header(st, h, opt, value, err);
    if (!(h->value = fnw_tmpl_new(value, st->input_type, FNW_ESCAPE_HEADER, opt, err)))
        return -1;
    if (st->batched && fnw_tmpl_fields(h->value))
        return fnw_error_set(err,
                             "option '%s' names input fields, but in batch mode one request carries many "
                             "rows: use a constant value",
                             opt);
    return 0;
}

/* The body template: JSON escaping; with every field null it must read as JSON. */
static int parse_body(httpop_state *st, const fnw_options *o, fnw_error *err)
{
    const char *body = fnw_options_get(o, "body");
    const char *batch_body = fnw_options_get(o, "batch_body");
    if (!body) {
        if (st->batched)
            return fnw_error_set(err, "option 'body' is required in batch mode: the JSON each row adds to "
                                      "the batch's array (e.g. {name})");
        if (batch_body)
            return fnw_error_set(err, "option 'batch_body' is a batch-mode option (OperationSpec mode BATCH)");
        return 0;
    }
    if (!(st->body = fnw_tmpl_new(body, st->input_type, FNW_ESCAPE_JSON, "body", err)))
        return -1;
    fnw_value null_row = fnw_value_null(FNW_ROW);
    fnw_buf_clear(&st->body_buf);
    if (fnw_tmpl_render(st->body, &null_row, &st->body_buf, err) != 0 || fnw_buf_put_u8(&st->body_buf, 0) != 0)
        return -1;
    json_error_t jerr;
    json_t *doc = json_loads((const char *)st->body_buf.p, JSON_DECODE_ANY, &jerr);
    if (!doc)
        return fnw_error_set(err,
                             "option 'body' does not give JSON (with every field null it reads "
                             "'%.200s': %s); write literal braces doubled: {{\"id\": {id}}}",
                             (const char *)st->body_buf.p, jerr.text);
    json_decref(doc);
    st->add_content_type = 1;
    if (!batch_body && st->batched)
        batch_body = HTTPOP_ITEMS;
    if (batch_body && !st->batched)
        return fnw_error_set(err, "option 'batch_body' is a batch-mode option (OperationSpec mode BATCH)");
    if (batch_body &&
        fnw_httpop_text_split_batch_body(batch_body, &st->batch_prefix, &st->batch_suffix, err) != 0)
        return -1;
    return 0;
}

static int parse_headers(httpop_state *st, const fnw_options *o, fnw_error *err)
{
    for (size_t i = 0; i < o->count; i++)
        if (has_prefix(o->items[i].key, "header.") &&
            add_header(st, o->items[i].key + 7, o->items[i].value ? o->items[i].value : "", err) != 0)
            return -1;
    return 0;
}

static int compile_result(httpop_state *st, httpop_result *r, const char *field, const char *pointer,
                          fnw_error *err)
{
    char opt[300], *before, *after;
    snprintf(opt, sizeof opt, "result.%.280s", field);
    if (!(r->pointer = strdup(pointer)))
        return fnw_error_set(err, "out of memory");
    int split = fnw_httpop_text_split_index(pointer, opt, &before, &after, err);
    if (split < 0)
        return -1;
    if (split && !st->batched) {
        free(before);
        free(after);
        return fnw_error_set(err,
                             "option '%s': the %s token picks a batch item by index; it is for batch "
                             "mode (OperationSpec mode BATCH) only",
                             opt, HTTPOP_INDEX);
    }
    if (split) {
        r->items = fnw_jptr_new(before, opt, err);
        r->item = r->items ? fnw_jptr_new(after, opt, err) : NULL;
        free(before);
        free(after);
        return r->item ? 0 : -1;
    }
    r->whole = fnw_jptr_new(pointer, opt, err);
    return r->whole ? 0 : -1;
}

/* result.<field> options: the output row plan, each field's type, its pointer. */
static int parse_results(httpop_state *st, const fnw_op_env *env, fnw_error *err)
{
    const fnw_options *o = env->options;
    const char *names[256];
    const char *pointers[256];
    size_t n = 0;
    for (size_t i = 0; i < o->count; i++) {
        if (!has_prefix(o->items[i].key, "result."))
            continue;
        if (n == 256)
            return fnw_error_set(err, "at most 256 result.<field> options");
        names[n] = o->items[i].key + 7;
        pointers[n++] = o->items[i].value ? o->items[i].value : "";
    }
    if (!(st->out = fnw_outrow_new(env->input_type, env->output_type, names, n, OP, err)))
        return -1;
    if (n && !(st->results = calloc(n, sizeof *st->results)))
        return fnw_error_set(err, "out of memory");
    for (size_t k = 0; k < n; k++) {
        if (fnw_conv_check_type(fnw_outrow_result_type(st->out, k), names[k], err) != 0 ||
            compile_result(st, &st->results[k], names[k], pointers[k], err) != 0)
            return -1;
    }
    return 0;
}

static int make_client(httpop_state *st, const fnw_options *o, fnw_error *err)
{
    int64_t conns, max_body, connect_ms, request_ms;
    if (fnw_options_int(o, "max_connections", 8, 1, 1024, &conns, err) ||
        fnw_options_int(o, "max_response_bytes", 8 * MIB, 1, 1024 * MIB, &max_body, err) ||
        fnw_options_int(o, "connect_timeout_ms", 10000, 0, DAY_MS, &connect_ms, err) ||
        fnw_options_int(o, "request_timeout_ms", 30000, 0, DAY_MS, &request_ms, err) ||
        fnw_missing_option(o, "on_missing", FNW_MISSING_NULL, &st->on_missing, err) ||
        fnw_options_choice(o, "on_short_batch", (const char *const[]){ "fail", "missing", NULL }, 0,
                           &st->short_batch_missing, err))
        return -1;
    if (fnw_options_get(o, "on_short_batch") && !st->batched)
        return fnw_error_set(err, "option 'on_short_batch' is a batch-mode option (OperationSpec mode BATCH)");
    const char *ca = fnw_options_get(o, "tls_ca_file");
    if (ca && access(ca, R_OK) != 0)
        return fnw_error_set(err, "option 'tls_ca_file': cannot read '%.200s'", ca);
    st->request_timeout_ms = (long)request_ms;
    st->max_response_bytes = (size_t)max_body;
    fnw_http_config cfg = {
        .max_host_connections = (long)conns,
        .max_response_bytes = (size_t)max_body,
        .connect_timeout_ms = (long)connect_ms,
        .ca_file = ca,
    };
    st->http = fnw_http_new(st->loop, &cfg, err);
    return st->http ? 0 : -1;
}

static void http_close(void *state)
{
    httpop_state *st = state;
    if (!st)
        return;
    fnw_http_free(st->http);
    fnw_lookup_cache_free(st->cache);
    fnw_buf_free(&st->cache_key);
    fnw_buf_free(&st->cache_answer);
    fnw_tmpl_free(st->url_path);
    fnw_tmpl_free(st->url_query);
    fnw_tmpl_free(st->body);
    for (size_t i = 0; i < st->n_headers; i++) {
        free(st->headers[i].name);
        fnw_tmpl_free(st->headers[i].value);
        free(st->headers[i].line);
    }
    for (size_t k = 0; st->results && k < fnw_outrow_results(st->out); k++) {
        free(st->results[k].pointer);
        fnw_jptr_free(st->results[k].whole);
        fnw_jptr_free(st->results[k].items);
        fnw_jptr_free(st->results[k].item);
    }
    for (size_t i = 0; i < st->n_secrets; i++)
        free(st->secrets[i]);
    free(st->results);
    fnw_outrow_free(st->out);
    free(st->batch_prefix);
    free(st->batch_suffix);
    fnw_buf_free(&st->buf);
    fnw_buf_free(&st->body_buf);
    free(st);
}

static int http_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    *state = NULL;
    httpop_state *st = calloc(1, sizeof *st);
    if (!st)
        return fnw_error_set(err, "operation '" OP "': out of memory");
    st->loop = env->loop;
    st->batched = env->batched;
    st->input_type = env->input_type;
    fnw_buf_init(&st->buf, 0);
    fnw_buf_init(&st->body_buf, 0);
    fnw_buf_init(&st->cache_key, 0);
    fnw_buf_init(&st->cache_answer, 0);
    fnw_error why = { "" };
    int rc = -1;
    if (!env->input_type || fnw_type_kind(env->input_type) != FNW_ROW)
        fnw_error_set(&why, "the input type must be a ROW (its fields fill the templates)");
    else if (check_known(env->options, &why) == 0 && parse_url(st, env->options, &why) == 0 &&
             parse_body(st, env->options, &why) == 0 && parse_headers(st, env->options, &why) == 0 &&
             parse_method(st, env->options, &why) == 0 && parse_results(st, env, &why) == 0 &&
             make_client(st, env->options, &why) == 0 &&
             fnw_lookup_cache_open(env, OP, st, &st->cache, &st->cache_missing, &why) == 0)
        rc = 0;
    if (rc != 0) {
        http_close(st);
        if (strncmp(why.msg, "operation '", 11) == 0)
            return fnw_error_set(err, "%s", why.msg);
        return fnw_error_set(err, "operation '" OP "': %s", why.msg);
    }
    *state = st;
    return 0;
}

const fnw_operation fnw_op_http = {
    .name = OP,
    .summary = "one HTTP request per element or per batch; JSON pointers fill the result fields",
    .output_rule = FNW_OUTPUT_DECLARED,
    .sync = 0,
    .open = http_open,
    .close = http_close,
    .invoke = fnw_httpop_call,
    .cancel = fnw_httpop_call_cancel,
};
