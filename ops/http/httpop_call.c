/* ops/http/httpop_call.c — one call of the `http` operation: render the
 * request from the call's rows (one row, or a batch whose element bodies go
 * into one JSON array), send it on the instance's HTTP client, and turn the
 * response into outputs: 2xx -> the result fields from JSON pointers;
 * 404 -> the on_missing policy; 408, 429, 5xx and transport errors ->
 * a retryable failure whose retry waits for Retry-After; any other status
 * -> a final failure quoting the status and a body excerpt. Secrets (header
 * values from the environment) are masked in every failure message, since
 * the service may echo them.
 *
 * Per call, everything comes from the call arena (the context, the decoded
 * rows, the request body, the output rows); request text is built in the
 * instance's buffers, which libcurl copies at send.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "ops/bind/conv.h"
#include "ops/http/httpop_internal.h"
#include "ops/secrets/secret_mask.h"

typedef struct httpop_ctx {
    httpop_state *st;
    fnw_call *call;
    fnw_http_req *req;
    fnw_value *rows; /* the decoded inputs */
    char what[256];  /* "GET http://host/path" (no query) for messages */
    /* with the cache: waiting on a request (httpop_cache.c) */
    fnw_lookup_waiter w;
    int cached;
} httpop_ctx;

static void on_done(void *user, const fnw_http_response *resp, const fnw_error *err);

/* ---- the request -------------------------------------------------------------- */

/* Renders template t for row into st->buf and NUL-terminates it; returns the
 * offset of its start, or -1. */
static long render_z(httpop_state *st, const char *prefix, const fnw_tmpl *t, const fnw_value *row,
                     fnw_error *err)
{
    size_t at = st->buf.len;
    if (prefix && fnw_buf_append(&st->buf, prefix, strlen(prefix)) != 0)
        return fnw_error_set(err, "out of memory rendering the request");
    if (t && fnw_tmpl_render(t, row, &st->buf, err) != 0)
        return -1;
    return fnw_buf_put_u8(&st->buf, 0) == 0 ? (long)at : fnw_error_set(err, "out of memory");
}

/* The body: one row's, or the batch prefix, the rows' bodies as a JSON array, the suffix. */
static int render_body(httpop_state *st, httpop_ctx *x, size_t n, fnw_error *err)
{
    fnw_buf *b = &st->body_buf;
    fnw_buf_clear(b);
    if (!st->batched)
        return fnw_tmpl_render(st->body, &x->rows[0], b, err);
    if (fnw_buf_append(b, st->batch_prefix, strlen(st->batch_prefix)) != 0 || fnw_buf_put_u8(b, '[') != 0)
        return fnw_error_set(err, "out of memory rendering the batch body");
    for (size_t i = 0; i < n; i++) {
        if (i && fnw_buf_put_u8(b, ',') != 0)
            return fnw_error_set(err, "out of memory rendering the batch body");
        if (fnw_tmpl_render(st->body, &x->rows[i], b, err) != 0)
            return -1;
    }
    if (fnw_buf_put_u8(b, ']') != 0 || fnw_buf_append(b, st->batch_suffix, strlen(st->batch_suffix)) != 0)
        return fnw_error_set(err, "out of memory rendering the batch body");
    return 0;
}

static int build_and_send(httpop_state *st, httpop_ctx *x, size_t n, fnw_error *err)
{
    fnw_arena *a = fnw_call_arena(x->call);
    fnw_buf_clear(&st->buf);
    long url = render_z(st, NULL, st->url_path, &x->rows[0], err);
    if (url >= 0 && st->url_query) {
        st->buf.len--; /* continue the URL over its NUL */
        if (fnw_tmpl_render(st->url_query, &x->rows[0], &st->buf, err) != 0 ||
            fnw_buf_put_u8(&st->buf, 0) != 0)
            return -1;
    }
    if (url < 0)
        return -1;
    size_t dots;
    const char *dot = fnw_httpop_text_dot_segment((const char *)st->buf.p + url, &dots);
    if (dot)
        return fnw_error_set(err,
                             "option 'url': the row's values make the path segment '%.*s' in '%s %.*s', which "
                             "would walk up the path: a value may not be '.' or '..' in a URL path",
                             (int)dots, dot, st->method, (int)strcspn((const char *)st->buf.p + url, "?"),
                             (const char *)st->buf.p + url);
    long hdr[HTTPOP_MAX_HEADERS + 1];
    size_t nh = 0;
    for (size_t i = 0; i < st->n_headers; i++) {
        const httpop_header *h = &st->headers[i];
        if (h->line)
            continue; /* secrets: pointed at directly below */
        char name[140];
        snprintf(name, sizeof name, "%s: ", h->name);
        if ((hdr[nh++] = render_z(st, name, h->value, &x->rows[0], err)) < 0)
            return -1;
    }
    fnw_http_header lines[HTTPOP_MAX_HEADERS + 1];
    size_t nl = 0;
    for (size_t i = 0; i < nh; i++)
        lines[nl++] = (const char *)st->buf.p + hdr[i];
    for (size_t i = 0; i < st->n_headers; i++)
        if (st->headers[i].line)
            lines[nl++] = st->headers[i].line;
    if (st->add_content_type)
        lines[nl++] = "Content-Type: application/json";
    const char *u = (const char *)st->buf.p + url;
    snprintf(x->what, sizeof x->what, "%s %.*s", st->method, (int)strcspn(u, "?"), u);
    fnw_http_request rq = {
        .method = st->method,
        .url = u,
        .headers = lines,
        .n_headers = nl,
        .timeout_ms = st->request_timeout_ms,
        .max_response_bytes = st->max_response_bytes,
    };
    if (st->body) {
        if (render_body(st, x, n, err) != 0)
            return -1;
        if (!(rq.body = fnw_arena_memdup(a, st->body_buf.p, st->body_buf.len ? st->body_buf.len : 1)))
            return fnw_error_set(err, "out of memory for the request body");
        rq.body_len = st->body_buf.len;
    }
    if (st->cache) {
        x->cached = 1;
        return fnw_httpop_cache_send(st, &rq, on_done, x, &x->w, err);
    }
    return fnw_http_send(st->http, &rq, on_done, x, &x->req, err);
}

/* ---- the response --------------------------------------------------------------- */

/* Fills element i's result fields into row; 1 when the element is dropped
 * (on_missing empty), 0 when done, -1 to fail the call (err set). */
static int fill_results(httpop_ctx *x, const json_t *doc, size_t i, fnw_value *row, fnw_error *err)
{
    httpop_state *st = x->st;
    for (size_t k = 0; k < fnw_outrow_results(st->out); k++) {
        json_t *v = NULL;
        int rc = fnw_httpop_text_pick(&st->results[k], doc, i, &v, err);
        const char *name = fnw_outrow_result_name(st->out, k);
        if (rc < 0)
            return -1;
        if (rc == FNW_JPTR_NOT_FOUND) {
            if (st->on_missing == FNW_MISSING_EMPTY)
                return 1;
            if (st->on_missing == FNW_MISSING_FAIL)
                return fnw_error_set(err,
                                     "%s: the response has no value at '%.200s' (result.%s) for element "
                                     "%zu, and on_missing is fail",
                                     x->what, st->results[k].pointer, name, i);
            continue; /* null: the field stays null */
        }
        if (fnw_conv_json(fnw_outrow_result_type(st->out, k), v, name, fnw_call_arena(x->call),
                          &row->u.items[fnw_outrow_slot(st->out, k)], err) != 0)
            return -1;
    }
    return 0;
}

/* Emits every element's output; doc NULL = no results (404 with on_missing
 * null, or no result fields). Returns -1 with err set to fail the call. */
static int emit_all(httpop_ctx *x, const json_t *doc, int missing, fnw_error *err)
{
    httpop_state *st = x->st;
    size_t n = fnw_call_size(x->call);
    for (size_t i = 0; i < n; i++) {
        fnw_value row;
        if (fnw_outrow_assemble(st->out, &x->rows[i], fnw_call_arena(x->call), &row, err) != 0)
            return -1;
        int rc = doc ? fill_results(x, doc, i, &row, err) : 0;
        if (rc < 0)
            return -1;
        if (rc > 0 || (missing && st->on_missing == FNW_MISSING_EMPTY)) {
            st->missing++;
            continue;
        }
        if (fnw_call_emit_value(x->call, i, &row, err) != 0)
            return -1;
    }
    return 0;
}

static void fail_status(httpop_ctx *x, const fnw_http_response *resp, int64_t delay_ms)
{
    char excerpt[HTTPOP_EXCERPT * 4 + 8];
    fnw_httpop_text_excerpt(resp->body, resp->body_len, (const char *const *)x->st->secrets, x->st->n_secrets,
                            excerpt, sizeof excerpt);
    fnw_call_fail_after(x->call, delay_ms, "%s: HTTP status %ld%s; body %s", x->what, resp->status,
                        delay_ms > 0 ? " (retry after the server's Retry-After)" : "", excerpt);
}

/* 429 or 503: the service refused the call for load; adaptive concurrency
 * lowers the limit and pauses for Retry-After (docs/resilience.md). */
static void fail_overloaded(httpop_ctx *x, const fnw_http_response *resp, int64_t retry_after_ms)
{
    char excerpt[HTTPOP_EXCERPT * 4 + 8];
    fnw_httpop_text_excerpt(resp->body, resp->body_len, (const char *const *)x->st->secrets, x->st->n_secrets,
                            excerpt, sizeof excerpt);
    fnw_call_fail_overloaded(x->call, retry_after_ms, "%s: HTTP status %ld (overloaded%s); body %s", x->what,
                             resp->status, retry_after_ms > 0 ? ", Retry-After" : "", excerpt);
}

/* Fails the call for good with err's message, every secret masked: a
 * conversion failure quotes the value, which the service may have copied
 * from the request (a header echoed back). */
static void fail_masked(httpop_ctx *x, fnw_error *err)
{
    fnw_secret_mask_str(err->msg, (const char *const *)x->st->secrets, x->st->n_secrets);
    fnw_call_fail_after(x->call, FNW_CALL_NO_RETRY, "%s", err->msg);
}

static void on_ok(httpop_ctx *x, const fnw_http_response *resp)
{
    fnw_error err = { "" };
    json_t *doc = NULL;
    if (fnw_outrow_results(x->st->out)) {
        json_error_t jerr;
        doc = json_loadb(resp->body, resp->body_len, HTTPOP_JSON_FLAGS, &jerr);
        if (!doc) {
            char excerpt[HTTPOP_EXCERPT * 4 + 8];
            fnw_httpop_text_excerpt(resp->body, resp->body_len, (const char *const *)x->st->secrets,
                                    x->st->n_secrets, excerpt, sizeof excerpt);
            fnw_call_fail_after(x->call, FNW_CALL_NO_RETRY,
                                "%s: the response (status %ld) is not JSON: %s; "
                                "body %s",
                                x->what, resp->status, jerr.text, excerpt);
            return;
        }
    }
    size_t n = fnw_call_size(x->call), have;
    for (size_t k = 0;
         doc && x->st->batched && !x->st->short_batch_missing && k < fnw_outrow_results(x->st->out); k++) {
        if (fnw_httpop_text_items_count(&x->st->results[k], doc, &have) && have < n) {
            json_decref(doc);
            fnw_call_fail(x->call,
                          "%s: the response has %zu items at '%.200s' (result.%s) for a batch of %zu rows: "
                          "a short answer (retryable; option on_short_batch 'missing' gives the rows without an item "
                          "the on_missing policy instead)",
                          x->what, have, x->st->results[k].pointer, fnw_outrow_result_name(x->st->out, k), n);
            return;
        }
    }
    int rc = emit_all(x, doc, 0, &err);
    json_decref(doc);
    if (rc != 0)
        fail_masked(x, &err);
    else
        fnw_call_complete(x->call);
}

static void on_missing_status(httpop_ctx *x, const fnw_http_response *resp)
{
    if (x->st->on_missing == FNW_MISSING_FAIL) {
        fail_status(x, resp, FNW_CALL_NO_RETRY);
        return;
    }
    fnw_error err = { "" };
    if (emit_all(x, NULL, 1, &err) != 0)
        fail_masked(x, &err);
    else
        fnw_call_complete(x->call);
}

static void on_done(void *user, const fnw_http_response *resp, const fnw_error *err)
{
    httpop_ctx *x = user;
    fnw_call *call = x->call;
    x->req = NULL;
    fnw_call_set_op_data(call, NULL);
    if (err) {
        fnw_error e = *err;
        fnw_secret_mask_str(e.msg, (const char *const *)x->st->secrets, x->st->n_secrets);
        /* a body over the limit will be over it again; the rest may pass */
        fnw_call_fail_after(call, resp->outcome == FNW_HTTP_TOO_LARGE ? FNW_CALL_NO_RETRY : 0, "%s", e.msg);
        return;
    }
    switch (fnw_httpop_text_classify(resp->status)) {
    case HTTPOP_OK:
        on_ok(x, resp);
        break;
    case HTTPOP_MISSING:
        on_missing_status(x, resp);
        break;
    case HTTPOP_RETRY:
        fail_status(x, resp, resp->retry_after_s > 0 ? resp->retry_after_s * 1000 : 0);
        break;
    case HTTPOP_OVERLOADED:
        fail_overloaded(x, resp, resp->retry_after_s > 0 ? resp->retry_after_s * 1000 : 0);
        break;
    default:
        fail_status(x, resp, FNW_CALL_NO_RETRY);
    }
}

/* ---- the operation table's invoke and cancel ------------------------------------- */

void fnw_httpop_call(void *state, fnw_call *call)
{
    httpop_state *st = state;
    size_t n = fnw_call_size(call);
    fnw_arena *a = fnw_call_arena(call);
    httpop_ctx *x = fnw_arena_alloc(a, sizeof *x);
    fnw_value *rows = fnw_arena_alloc(a, n * sizeof *rows);
    if (!x || !rows) {
        fnw_call_fail(call, "out of memory for the call");
        return;
    }
    memset(x, 0, sizeof *x);
    x->st = st;
    x->call = call;
    x->rows = rows;
    snprintf(x->what, sizeof x->what, "%s", st->method);
    fnw_error err = { "" };
    for (size_t i = 0; i < n; i++) {
        if (fnw_call_decode(call, i, &rows[i], &err) != 0) {
            fnw_call_fail_after(call, FNW_CALL_NO_RETRY, "input %zu: %s", i, err.msg);
            return;
        }
    }
    int sent = build_and_send(st, x, n, &err);
    if (sent < 0) {
        fnw_call_fail_after(call, FNW_CALL_NO_RETRY, "%s", err.msg);
        return;
    }
    if (sent == 0) /* 1: answered from the cache, the call is settled */
        fnw_call_set_op_data(call, x);
}

void fnw_httpop_call_cancel(void *state, fnw_call *call)
{
    httpop_ctx *x = fnw_call_op_data(call);
    if (!x)
        return;
    if (x->cached)
        fnw_httpop_cache_cancel(x->st, &x->w);
    else
        fnw_http_cancel(x->req);
    x->req = NULL;
    fnw_call_set_op_data(call, NULL);
}
