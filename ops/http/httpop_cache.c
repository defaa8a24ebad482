/* ops/http/httpop_cache.c — the `http` operation's lookup cache (per
 * element, option cache_max_rows): the cache key of a rendered request, a
 * kept answer handed to the call as if it had just arrived, and one request
 * per key in flight whose response (or failure) every waiting call gets
 * through the same handler (httpop_call.c's on_done), so each call builds
 * its own row, and fails or retries on its own. What is kept: the status
 * and body of a 2xx answer, of a 404 only with cache_missing; nothing else
 * (a 429 or 5xx, a timeout, a refusal are every waiting call's failure and
 * never kept). The request's body is copied at send (the leader's call may
 * be cancelled while others still wait for the answer). */
#include <string.h>

#include "ops/http/httpop_internal.h"

static int is_secret_line(const httpop_state *st, const char *line)
{
    for (size_t i = 0; i < st->n_headers; i++)
        if (st->headers[i].line == line)
            return 1;
    return 0;
}

/* method NUL url NUL (header NUL)* body: the parts cannot run into each
 * other (the URL and the header lines hold no NUL; the body is last).
 * Header lines from the environment are left out: they are the same for
 * every row, and the cache should not hold copies of a secret. */
static int make_key(const httpop_state *st, fnw_buf *k, const fnw_http_request *rq)
{
    fnw_buf_clear(k);
    const char *m = rq->method ? rq->method : "GET";
    if (fnw_buf_append(k, m, strlen(m) + 1) || fnw_buf_append(k, rq->url, strlen(rq->url) + 1))
        return -1;
    for (size_t i = 0; i < rq->n_headers; i++)
        if (!is_secret_line(st, rq->headers[i]) &&
            fnw_buf_append(k, rq->headers[i], strlen(rq->headers[i]) + 1))
            return -1;
    return rq->body_len ? fnw_buf_append(k, rq->body, rq->body_len) : 0;
}

static void on_flight_done(void *user, const fnw_http_response *resp, const fnw_error *err)
{
    fnw_lookup_flight *f = user;
    httpop_state *st = fnw_lookup_cache_owner(f);
    httpop_status how = resp ? fnw_httpop_text_classify(resp->status) : HTTPOP_REFUSED;
    int keep = !err && resp && (how == HTTPOP_OK || (how == HTTPOP_MISSING && st->cache_missing));
    fnw_buf *a = &st->cache_answer;
    fnw_buf_clear(a);
    if (keep) {
        int64_t status = resp->status;
        keep = fnw_buf_append(a, &status, sizeof status) == 0 &&
               (!resp->body_len || fnw_buf_append(a, resp->body, resp->body_len) == 0) &&
               fnw_buf_put_u8(a, 0) == 0;
    }
    fnw_lookup_cache_settle(st->cache, f, a->p, a->len, keep);
    for (fnw_lookup_waiter *w; (w = fnw_lookup_cache_next(st->cache, f));)
        st->cache_done(w->user, resp, err);
}

int fnw_httpop_cache_send(httpop_state *st, const fnw_http_request *rq, fnw_http_done_fn done, void *x,
                          fnw_lookup_waiter *w, fnw_error *err)
{
    st->cache_done = done;
    if (make_key(st, &st->cache_key, rq) != 0)
        return fnw_error_set(err, "out of memory for the cache key");
    *w = (fnw_lookup_waiter){ .user = x };
    const void *val;
    size_t len;
    int got = fnw_lookup_cache_get(st->cache, st->cache_key.p, st->cache_key.len, w, &val, &len, err);
    if (got < 0)
        return -1;
    if (got == FNW_LOOKUP_HIT) {
        int64_t status;
        memcpy(&status, val, sizeof status);
        fnw_http_response resp = {
            .outcome = FNW_HTTP_DONE,
            .status = (long)status,
            .body = (const char *)val + sizeof status,
            .body_len = len - sizeof status - 1, /* the kept NUL */
            .retry_after_s = -1,
        };
        done(x, &resp, NULL);
        return 1;
    }
    if (got == FNW_LOOKUP_JOIN)
        return 0;
    fnw_lookup_flight *f = w->flight;
    fnw_http_request copy = *rq;
    copy.copy_body = 1;
    fnw_http_req *req;
    if (fnw_http_send(st->http, &copy, on_flight_done, f, &req, err) != 0) {
        fnw_lookup_cache_settle(st->cache, f, NULL, 0, 0);
        while (fnw_lookup_cache_next(st->cache, f)) /* only x: nothing joined meanwhile */
            ;
        return -1;
    }
    fnw_lookup_cache_set_request(f, req);
    return 0;
}

void fnw_httpop_cache_cancel(httpop_state *st, fnw_lookup_waiter *w)
{
    fnw_http_req *req = fnw_lookup_cache_leave(st->cache, w);
    if (req)
        fnw_http_cancel(req);
}
