/* ops/clients/http_internal.h — internal to the HTTP client
 * (http.c and http_share.c), not part of its interface: what
 * consecutive requests share so that a constant URL is parsed once and a
 * constant header list is built once.
 *
 * A fnw_http_share keeps the last parsed URL and the last header list. A
 * request takes a reference on the ones it uses (fnw_http_share_url,
 * fnw_http_share_headers) and drops it when it ends; an object that is
 * neither in use nor the current one is freed at once.
 */
#ifndef FNW_HTTP_INTERNAL_H
#define FNW_HTTP_INTERNAL_H

#include <stddef.h>

#include <curl/curl.h>

#include "ops/clients/http.h"

typedef struct fnw_http_url {
    char *url;
    CURLU *u;         /* parsed, for CURLOPT_CURLU */
    char target[300]; /* "host:port/path" (no query: it may hold secrets) */
    int tls;          /* an https:// URL */
    size_t refs;
} fnw_http_url;

typedef struct fnw_http_hdrs {
    struct curl_slist *list; /* "Expect:" then the request's lines */
    size_t refs;
} fnw_http_hdrs;

typedef struct fnw_http_share {
    fnw_http_url *url;
    fnw_http_hdrs *hdrs;
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

#endif
