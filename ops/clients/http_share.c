/* ops/clients/http_share.c — what consecutive HTTP requests share: the
 * parsed URL (handed to libcurl as CURLOPT_CURLU, so libcurl does not parse
 * it again) with its "host:port/path" description, and the header list.
 * Both are kept while they stay the same from one request to the next and
 * reference counted by the requests in flight (http_internal.h).
 */
#include "ops/clients/http_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void url_free(fnw_http_url *u)
{
    curl_url_cleanup(u->u);
    free(u->url);
    free(u);
}

/* A new fnw_http_url for url; NULL if it is not http(s) or memory ran out. */
static fnw_http_url *url_new(const char *url)
{
    fnw_http_url *us = calloc(1, sizeof *us);
    char *host = NULL, *port = NULL, *path = NULL, *scheme = NULL;
    int ok = us && (us->u = curl_url()) && (us->url = strdup(url)) &&
             curl_url_set(us->u, CURLUPART_URL, url, 0) == CURLUE_OK &&
             curl_url_get(us->u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
             curl_url_get(us->u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
             curl_url_get(us->u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
             curl_url_get(us->u, CURLUPART_PATH, &path, 0) == CURLUE_OK &&
             (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0);
    if (ok) {
        us->tls = strcmp(scheme, "https") == 0;
        snprintf(us->target, sizeof us->target, "%s:%s%.200s", host, port, path);
    }
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(scheme);
    if (!ok && us)
        url_free(us);
    return ok ? us : NULL;
}

fnw_http_url *fnw_http_share_url(fnw_http_share *s, const char *url)
{
    if (!s->url || strcmp(s->url->url, url) != 0) {
        fnw_http_url *u = url_new(url);
        if (!u)
            return NULL;
        fnw_http_url *old = s->url;
        s->url = u;
        if (old && old->refs == 0)
            url_free(old);
    }
    s->url->refs++;
    return s->url;
}

void fnw_http_share_url_drop(fnw_http_share *s, fnw_http_url *u)
{
    if (u && --u->refs == 0 && u != s->url)
        url_free(u);
}

static void hdrs_free(fnw_http_hdrs *h)
{
    curl_slist_free_all(h->list);
    free(h);
}

/* 1 if h holds "Expect:" and then exactly lines[0..n). */
static int hdrs_match(const fnw_http_hdrs *h, const fnw_http_header *lines, size_t n)
{
    const struct curl_slist *l = h->list->next;
    for (size_t i = 0; i < n; i++, l = l->next)
        if (!l || strcmp(l->data, lines[i]) != 0)
            return 0;
    return l == NULL;
}

fnw_http_hdrs *fnw_http_share_headers(fnw_http_share *s, const fnw_http_header *lines, size_t n)
{
    if (!s->hdrs || !hdrs_match(s->hdrs, lines, n)) {
        /* "Expect:" turns off libcurl's 100-continue wait before large bodies */
        struct curl_slist *l = curl_slist_append(NULL, "Expect:");
        for (size_t i = 0; l && i < n; i++) {
            struct curl_slist *next = curl_slist_append(l, lines[i]);
            if (!next)
                curl_slist_free_all(l);
            l = next;
        }
        fnw_http_hdrs *h = l ? calloc(1, sizeof *h) : NULL;
        if (!h) {
            curl_slist_free_all(l);
            return NULL;
        }
        h->list = l;
        fnw_http_hdrs *old = s->hdrs;
        s->hdrs = h;
        if (old && old->refs == 0)
            hdrs_free(old);
    }
    s->hdrs->refs++;
    return s->hdrs;
}

void fnw_http_share_headers_drop(fnw_http_share *s, fnw_http_hdrs *h)
{
    if (h && --h->refs == 0 && h != s->hdrs)
        hdrs_free(h);
}

void fnw_http_share_free(fnw_http_share *s)
{
    if (s->url && s->url->refs == 0)
        url_free(s->url);
    if (s->hdrs && s->hdrs->refs == 0)
        hdrs_free(s->hdrs);
    s->url = NULL;
    s->hdrs = NULL;
}
