/* ops/clients/http_share.c — what consecutive HTTP requests share: the
 * parsed URL (handed to libcurl as CURLOPT_CURLU, so libcurl does not parse
 * it again) with its "host:port/path" description, and the header list.
 * Both are kept while they stay the same from one request to the next and
 * reference counted by the requests in flight (http_internal.h).
 */
#include "ops/clients/http_internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void url_free(fnw_http_url *u)
{
    curl_url_cleanup(u->u);
    free(u->url);
    free(u->pathq);
    free(u->hostport);
    free(u);
}

/* Fills the plain path's fields when u is an http:// URL to an IP literal
 * (no user info, no zone id); leaves plain 0 otherwise. -1: out of memory. */
static int plain_target(fnw_http_url *us, const char *host, const char *port, const char *path)
{
    char *user = NULL, *zone = NULL, *query = NULL;
    int has_user = curl_url_get(us->u, CURLUPART_USER, &user, 0) == CURLUE_OK;
    int has_zone = curl_url_get(us->u, CURLUPART_ZONEID, &zone, 0) == CURLUE_OK;
    curl_url_get(us->u, CURLUPART_QUERY, &query, 0);
    curl_free(user);
    curl_free(zone);
    char *end;
    unsigned long pn = strtoul(port, &end, 10);
    int rc = 0;
    if (has_user || has_zone || *end || pn == 0 || pn > 65535)
        goto out;
    size_t hl = strlen(host);
    int literal = 0;
    if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
        char h6[64];
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&us->addr;
        if (hl >= sizeof h6)
            goto out;
        memcpy(h6, host + 1, hl - 2);
        h6[hl - 2] = '\0';
        if (inet_pton(AF_INET6, h6, &a->sin6_addr) != 1)
            goto out; /* a bracketed host that is not IPv6: libcurl's */
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)pn);
        us->addrlen = sizeof *a;
        literal = 1;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&us->addr;
        if (inet_pton(AF_INET, host, &a->sin_addr) == 1) {
            a->sin_family = AF_INET;
            a->sin_port = htons((uint16_t)pn);
            us->addrlen = sizeof *a;
            literal = 1;
        }
    }
    if (hl > 253 || strlen(path) > 8192)
        goto out;
    size_t pl = strlen(path), ql = query ? strlen(query) : 0;
    us->pathq = malloc(pl + ql + 2);
    us->hostport = malloc(hl + strlen(port) + 2);
    if (!us->pathq || !us->hostport) {
        rc = -1;
        goto out;
    }
    memcpy(us->pathq, path, pl);
    if (query) {
        us->pathq[pl] = '?';
        memcpy(us->pathq + pl + 1, query, ql + 1);
    } else {
        us->pathq[pl] = '\0';
    }
    if (pn == 80)
        memcpy(us->hostport, host, hl + 1);
    else
        sprintf(us->hostport, "%s:%s", host, port);
    snprintf(us->hostkey, sizeof us->hostkey, "%s:%lu", host, pn);
    us->plain = literal;
    us->named = !literal;
out:
    curl_free(query);
    return rc;
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
        if (!us->tls && plain_target(us, host, port, path) != 0)
            ok = 0;
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
        u->serial = ++s->serial;
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
        h->serial = ++s->serial;
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

void fnw_http_share_failure(fnw_error *err, fnw_http_outcome oc, const char *what, long timeout_ms,
                            size_t limit, const char *detail)
{
    switch (oc) {
    case FNW_HTTP_TIMEOUT:
        fnw_error_set(err, "HTTP %s: no complete response within the request's timeout of %ld ms (%s)", what,
                      timeout_ms, detail);
        break;
    case FNW_HTTP_TOO_LARGE:
        fnw_error_set(err,
                      "HTTP %s: the response body is larger than the limit of %zu bytes "
                      "(raise max_response_bytes if it is expected)",
                      what, limit);
        break;
    case FNW_HTTP_CONNECT:
        fnw_error_set(err, "HTTP %s: cannot connect: %s", what, detail);
        break;
    default:
        fnw_error_set(err, "HTTP %s: %s", what, detail);
    }
}
