/* ops/clients/http_internal.h — internal to the HTTP client
 * (http.c, http_share.c and http_h1.c), not part of its interface: what
 * consecutive requests share so that a constant URL is parsed once and a
 * constant header list is built once, and the plain HTTP/1.1 path
 * (http_h1.c) that http.c hands plain http:// requests to.
 *
 * A fnw_http_share keeps the last parsed URL and the last header list. A
 * request takes a reference on the ones it uses (fnw_http_share_url,
 * fnw_http_share_headers) and drops it when it ends; an object that is
 * neither in use nor the current one is freed at once. Each object has a
 * serial number that is never reused, so "the same URL and headers as
 * last time" is a comparison of two numbers.
 */
#ifndef FNW_HTTP_INTERNAL_H
#define FNW_HTTP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "ops/clients/http.h"

typedef struct fnw_http_url {
    char *url;
    CURLU *u;         /* parsed, for CURLOPT_CURLU */
    char target[300]; /* "host:port/path" (no query: it may hold secrets) */
    int tls;          /* an https:// URL */
    size_t refs;
    uint64_t serial;
    /* The plain path (http_h1.c), for an http:// URL without user info or
     * zone id: plain when its host is an IP literal (addr), named when it
     * is a host name (http.c learns its address from libcurl). */
    int plain, named;
    struct sockaddr_storage addr; /* host and port, when plain */
    socklen_t addrlen;
    char hostkey[270]; /* "host:port" */
    char *pathq;       /* "/path?query" as sent on the request line */
    char *hostport;    /* the Host header's value: host, ":port" unless 80 */
} fnw_http_url;

typedef struct fnw_http_hdrs {
    struct curl_slist *list; /* "Expect:" then the request's lines */
    size_t refs;
    uint64_t serial;
} fnw_http_hdrs;

typedef struct fnw_http_share {
    fnw_http_url *url;
    fnw_http_hdrs *hdrs;
    uint64_t serial; /* the last serial given */
} fnw_http_share;

/* url parsed (the current one when it is the same), with a reference
 * taken; NULL when it is not an http:// or https:// URL or memory ran out. */
fnw_http_url *fnw_http_share_url(fnw_http_share *s, const char *url);
void fnw_http_share_url_drop(fnw_http_share *s, fnw_http_url *u);
/* The header list for lines (the current one when it holds the same
 * lines), with a reference taken; NULL when memory ran out. */
fnw_http_hdrs *fnw_http_share_headers(fnw_http_share *s, const fnw_http_header *lines, size_t n);
void fnw_http_share_headers_drop(fnw_http_share *s, fnw_http_hdrs *h);
/* Frees the current objects; every reference must have been dropped. */
void fnw_http_share_free(fnw_http_share *s);

/* Retry-After's value: delta-seconds or an HTTP date; -1 when unreadable. */
int64_t fnw_http_retry_after(const char *v);
/* The message of a request that ended without a complete response, the
 * same on both paths (libcurl's and http_h1.c): what is "METHOD host:port
 * path", detail what failed. */
void fnw_http_share_failure(fnw_error *err, fnw_http_outcome oc, const char *what, long timeout_ms,
                            size_t limit, const char *detail);

/* Every request handle starts with this: which path it is on. */
typedef struct fnw_http_req_head {
    fnw_http *h;
    int plain; /* an http_h1.c request */
} fnw_http_req_head;

/* ---- the plain path: HTTP/1.1 with keep-alive on the loop (http_h1.c) ----
 *
 * Requests to an http:// URL whose host is an IP literal, when no proxy
 * variable was set at client creation and there is no total connection
 * limit. Same contract as fnw_http_send (http.h): the callback runs once,
 * from the loop, never from inside fnw_h1_send, unless cancelled first. */
typedef struct fnw_h1 fnw_h1;

fnw_h1 *fnw_h1_new(struct ev_loop *loop, const fnw_http_config *cfg);
void fnw_h1_free(fnw_h1 *c);
/* Sends rq to u at addr (u's own, or the one learned for its host name);
 * the caller's references on u and hdrs pass to the request, dropped
 * through share when it ends. */
int fnw_h1_send(fnw_h1 *c, fnw_http *h, fnw_http_share *share, fnw_http_url *u, fnw_http_hdrs *hdrs,
                const struct sockaddr_storage *addr, socklen_t addrlen, const char *method,
                const fnw_http_request *rq, fnw_http_done_fn done, void *user, fnw_http_req **out,
                fnw_error *err);
void fnw_h1_cancel(fnw_http_req *r);
size_t fnw_h1_in_flight(const fnw_h1 *c);

#endif
