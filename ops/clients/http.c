/* ops/clients/http.c — the libcurl multi-socket driver on a libev loop
 * and the request life cycle (see http.h for the contract).
 *
 * Three callbacks connect libcurl to the loop: on_socket (libcurl asks for
 * a socket to be watched, changed or forgotten: one ev_io per socket, kept
 * on a list so fnw_http_free can stop what libcurl leaves behind), on_timer
 * (libcurl asks for a tick after N ms: the one ev_timer) and the watchers'
 * own callbacks, which hand the event to curl_multi_socket_action and then
 * reap finished transfers with curl_multi_info_read. User callbacks run only
 * from reap(), never from inside a libcurl callback, so they may start and
 * cancel requests freely.
 *
 * Per-request costs the client avoids: easy handles are kept on a free list
 * (curl_easy_reset, up to IDLE_EASY of them; connections live in the multi
 * handle's cache either way); the URL is handed to libcurl parsed
 * (CURLOPT_CURLU) and, like the header list, shared with the next requests
 * while it stays the same (http_share.c); and when no proxy variable (http_proxy,
 * https_proxy, HTTPS_PROXY, all_proxy, ALL_PROXY) is set at client creation,
 * requests say "no proxy" instead of having libcurl read the environment
 * on every request (the proxy variables are read when the client is made).
 */
#include "ops/clients/http.h"
#include "ops/clients/http_internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#define DEFAULT_MAX_BODY ((size_t)64 << 20)
#define LEARN_MAX 16   /* host names whose address the client keeps */
#define LEARN_TTL 60.0 /* s: libcurl's default CURLOPT_DNS_CACHE_TIMEOUT */
#define IDLE_EASY 64   /* reset easy handles kept for reuse */

typedef struct sock_w {
    ev_io io;
    fnw_http *h;
    struct sock_w *prev, *next;
} sock_w;

struct fnw_http_req {
    fnw_http_req_head head; /* first: plain = 0 */
    int learn;              /* keep the address libcurl connects to */
    CURL *easy;
    fnw_http_hdrs *hdrs;
    fnw_http_url *url;
    void *body_copy;
    char *resp; /* body received so far, NUL-terminated */
    size_t len, cap, limit;
    int too_large, oom;
    int64_t retry_after_s;
    char *content_type;
    long timeout_ms;
    fnw_http_done_fn done;
    void *user;
    fnw_http_req *prev, *next;
    char what[320]; /* "GET host:port/path" for messages */
    char errbuf[CURL_ERROR_SIZE];
};

/* The address libcurl connected to for a host name, and when. */
typedef struct learned {
    char key[270]; /* "host:port"; "" = free */
    struct sockaddr_storage addr;
    socklen_t addrlen;
    double at;
    int refreshing; /* a libcurl request is finding it again */
} learned;

struct fnw_http {
    struct ev_loop *loop;
    CURLM *multi;
    ev_timer timer;
    fnw_http_config cfg;
    char *ca_file;
    fnw_http_req *reqs; /* in flight */
    size_t n_reqs;
    sock_w *socks;         /* watched sockets */
    CURL *idle[IDLE_EASY]; /* reset easy handles for reuse */
    size_t n_idle;
    fnw_http_share share; /* the last URL parsed, the last header list */
    int no_proxy_env;     /* no proxy variable set at creation */
    fnw_h1 *h1;           /* the plain path (http_h1.c); NULL when not used */
    learned learned[LEARN_MAX];
};

/* ---- driving libcurl from the loop ------------------------------------- */

static void reap(fnw_http *h);
static void learn_address(fnw_http_req *r, int ok);

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
    fnw_http *h = ((sock_w *)w)->h;
    int action = ((revents & EV_READ) ? CURL_CSELECT_IN : 0) | ((revents & EV_WRITE) ? CURL_CSELECT_OUT : 0);
    int running = 0;
    curl_multi_socket_action(h->multi, w->fd, action, &running); /* w may be freed now */
    reap(h);
}

static void on_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_http *h = t->data;
    int running = 0;
    curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    reap(h);
}

static void sock_unlink_free(fnw_http *h, sock_w *sw)
{
    ev_io_stop(h->loop, &sw->io);
    if (sw->prev)
        sw->prev->next = sw->next;
    else
        h->socks = sw->next;
    if (sw->next)
        sw->next->prev = sw->prev;
    free(sw);
}

static int on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
    fnw_http *h = userp;
    sock_w *sw = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (sw)
            sock_unlink_free(h, sw);
        return 0;
    }
    int events = ((what & CURL_POLL_IN) ? EV_READ : 0) | ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
    if (!sw) {
        sw = calloc(1, sizeof *sw);
        if (!sw)
            return -1; /* libcurl fails the transfers on this socket */
        sw->h = h;
        ev_init(&sw->io, on_io);
        sw->next = h->socks;
        if (h->socks)
            h->socks->prev = sw;
        h->socks = sw;
        curl_multi_assign(h->multi, s, sw);
    } else {
        ev_io_stop(h->loop, &sw->io);
    }
    ev_io_set(&sw->io, s, events);
    ev_io_start(h->loop, &sw->io);
    return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *userp)
{
    fnw_http *h = userp;
    ev_timer_stop(h->loop, &h->timer);
    if (timeout_ms >= 0) { /* 0: as soon as possible, from the loop */
        ev_timer_set(&h->timer, (double)timeout_ms / 1000.0, 0.);
        ev_timer_start(h->loop, &h->timer);
    }
    return 0;
}

/* ---- the client -------------------------------------------------------- */

fnw_http *fnw_http_new(struct ev_loop *loop, const fnw_http_config *cfg, fnw_error *err)
{
    static int global_done;
    if (!global_done) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
            fnw_error_set(err, "HTTP client: libcurl could not be initialised");
            return NULL;
        }
        global_done = 1;
    }
    fnw_http *h = calloc(1, sizeof *h);
    if (!h || !(h->multi = curl_multi_init())) {
        free(h);
        fnw_error_set(err, "HTTP client: out of memory");
        return NULL;
    }
    h->loop = loop;
    if (cfg)
        h->cfg = *cfg;
    if (!h->cfg.max_response_bytes)
        h->cfg.max_response_bytes = DEFAULT_MAX_BODY;
    if (h->cfg.ca_file && !(h->ca_file = strdup(h->cfg.ca_file))) {
        curl_multi_cleanup(h->multi);
        free(h);
        fnw_error_set(err, "HTTP client: out of memory");
        return NULL;
    }
    h->cfg.ca_file = h->ca_file;
    ev_init(&h->timer, on_tick);
    h->timer.data = h;
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
    curl_multi_setopt(h->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS, h->cfg.max_host_connections);
    curl_multi_setopt(h->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, h->cfg.max_total_connections);
    static const char *const proxy_vars[] = { "http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy",
                                              "ALL_PROXY" };
    h->no_proxy_env = 1;
    for (size_t i = 0; i < sizeof proxy_vars / sizeof proxy_vars[0]; i++) {
        const char *v = getenv(proxy_vars[i]);
        if (v && *v)
            h->no_proxy_env = 0;
    }
    /* Plain http:// to an IP literal goes the plain path when libcurl
     * would find no proxy and no total connection limit must be shared. */
    if (h->no_proxy_env && h->cfg.max_total_connections <= 0 && !(h->h1 = fnw_h1_new(loop, &h->cfg))) {
        fnw_http_free(h);
        fnw_error_set(err, "HTTP client: out of memory");
        return NULL;
    }
    return h;
}

static void req_unlink(fnw_http_req *r)
{
    fnw_http *h = r->head.h;
    if (r->prev)
        r->prev->next = r->next;
    else
        h->reqs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    h->n_reqs--;
    curl_multi_remove_handle(h->multi, r->easy);
}

/* The easy handle goes back to the free list (reset) or is cleaned up. */
static void req_free(fnw_http_req *r)
{
    fnw_http *h = r->head.h;
    if (r->easy && h->n_idle < IDLE_EASY) {
        curl_easy_reset(r->easy);
        h->idle[h->n_idle++] = r->easy;
    } else {
        curl_easy_cleanup(r->easy);
    }
    fnw_http_share_headers_drop(&h->share, r->hdrs);
    fnw_http_share_url_drop(&h->share, r->url);
    free(r->body_copy);
    free(r->resp);
    free(r->content_type);
    free(r);
}

void fnw_http_free(fnw_http *h)
{
    if (!h)
        return;
    while (h->reqs) {
        fnw_http_req *r = h->reqs;
        req_unlink(r);
        req_free(r);
    }
    while (h->n_idle)
        curl_easy_cleanup(h->idle[--h->n_idle]);
    fnw_h1_free(h->h1);
    fnw_http_share_free(&h->share);
    curl_multi_cleanup(h->multi);
    while (h->socks) /* sockets libcurl did not say it forgot */
        sock_unlink_free(h, h->socks);
    ev_timer_stop(h->loop, &h->timer);
    free(h->ca_file);
    free(h);
}

size_t fnw_http_in_flight(const fnw_http *h)
{
    return h->n_reqs + fnw_h1_in_flight(h->h1);
}

void fnw_http_cancel(fnw_http_req *r)
{
    if (!r)
        return;
    if (r->head.plain) {
        fnw_h1_cancel(r);
        return;
    }
    if (r->learn) /* the next request looks the address up again */
        learn_address(r, 0);
    req_unlink(r);
    req_free(r);
}

/* ---- receiving --------------------------------------------------------- */

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    fnw_http_req *r = ud;
    size_t n = size * nmemb;
    if (n > r->limit - r->len) {
        r->too_large = 1;
        return 0; /* fails the transfer */
    }
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 1024;
        while (cap < r->len + n + 1)
            cap *= 2;
        char *np = realloc(r->resp, cap);
        if (!np) {
            r->oom = 1;
            return 0;
        }
        r->resp = np;
        r->cap = cap;
    }
    memcpy(r->resp + r->len, p, n);
    r->len += n;
    r->resp[r->len] = '\0';
    return n;
}

/* Retry-After: delta-seconds or an HTTP date; -1 when unreadable. */
int64_t fnw_http_retry_after(const char *v)
{
    if (isdigit((unsigned char)*v)) {
        char *end;
        unsigned long long s = strtoull(v, &end, 10);
        while (*end == ' ' || *end == '\t')
            end++;
        if (*end)
            return -1;
        return s > 1000000000ULL ? 1000000000 : (int64_t)s;
    }
    time_t t = curl_getdate(v, NULL);
    if (t == (time_t)-1)
        return -1;
    time_t now = time(NULL);
    return t > now ? (int64_t)(t - now) : 0;
}

/* Takes the value of header line `line` (len bytes, CRLF included) if its
 * name is `name`; returns a NUL-terminated copy or NULL. */
static char *header_value(const char *line, size_t len, const char *name)
{
    size_t nl = strlen(name);
    if (len <= nl || line[nl] != ':' || strncasecmp(line, name, nl) != 0)
        return NULL;
    const char *v = line + nl + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    return strndup(v, (size_t)(end - v));
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    fnw_http_req *r = ud;
    size_t n = size * nmemb;
    if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) { /* a new response (after 100, ...) */
        r->retry_after_s = -1;
        free(r->content_type);
        r->content_type = NULL;
        return n;
    }
    char *v = header_value(p, n, "Retry-After");
    if (v) {
        r->retry_after_s = fnw_http_retry_after(v);
        free(v);
    } else if ((v = header_value(p, n, "Content-Type")) != NULL) {
        free(r->content_type);
        r->content_type = v;
    }
    return n;
}

/* ---- completion -------------------------------------------------------- */

static fnw_http_outcome outcome_of(const fnw_http_req *r, CURLcode rc)
{
    switch (rc) {
    case CURLE_OK:
        return FNW_HTTP_DONE;
    case CURLE_OPERATION_TIMEDOUT:
        return FNW_HTTP_TIMEOUT;
    case CURLE_FILESIZE_EXCEEDED:
        return FNW_HTTP_TOO_LARGE;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
        return FNW_HTTP_CONNECT;
    default:
        return r->too_large ? FNW_HTTP_TOO_LARGE : FNW_HTTP_FAILED;
    }
}

static void describe_failure(const fnw_http_req *r, fnw_http_outcome oc, CURLcode rc, fnw_error *err)
{
    const char *detail = r->errbuf[0] ? r->errbuf : curl_easy_strerror(rc);
    if (oc == FNW_HTTP_FAILED && r->oom)
        detail = "out of memory for the response body";
    fnw_http_share_failure(err, oc, r->what, r->timeout_ms, r->limit, detail);
}

static int version_of(long v)
{
    switch (v) {
    case CURL_HTTP_VERSION_1_0:
        return 10;
    case CURL_HTTP_VERSION_1_1:
        return 11;
    case CURL_HTTP_VERSION_2_0:
        return 20;
    case CURL_HTTP_VERSION_3:
        return 30;
    default:
        return 0;
    }
}

static learned *learned_find(fnw_http *h, const char *key)
{
    for (size_t i = 0; i < LEARN_MAX; i++)
        if (h->learned[i].key[0] && strcmp(h->learned[i].key, key) == 0)
            return &h->learned[i];
    return NULL;
}

/* After a request sent through libcurl to learn its host's address: the
 * address libcurl connected to becomes the plain path's for LEARN_TTL. */
static void learn_address(fnw_http_req *r, int ok)
{
    fnw_http *h = r->head.h;
    const char *key = r->url->hostkey;
    learned *l = learned_find(h, key);
    char *ip = NULL;
    long port = 0;
    struct sockaddr_storage a;
    socklen_t alen = 0;
    memset(&a, 0, sizeof a);
    if (ok && curl_easy_getinfo(r->easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip &&
        curl_easy_getinfo(r->easy, CURLINFO_PRIMARY_PORT, &port) == CURLE_OK && port > 0 && port < 65536) {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&a;
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&a;
        if (inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
            a4->sin_family = AF_INET;
            a4->sin_port = htons((uint16_t)port);
            alen = sizeof *a4;
        } else if (inet_pton(AF_INET6, ip, &a6->sin6_addr) == 1) {
            a6->sin6_family = AF_INET6;
            a6->sin6_port = htons((uint16_t)port);
            alen = sizeof *a6;
        }
    }
    if (!alen) {
        if (l)
            l->refreshing = 0; /* the next request tries again */
        return;
    }
    if (!l) { /* a free slot, else the oldest */
        l = &h->learned[0];
        for (size_t i = 0; i < LEARN_MAX && l->key[0]; i++)
            if (!h->learned[i].key[0] || h->learned[i].at < l->at)
                l = &h->learned[i];
        snprintf(l->key, sizeof l->key, "%s", key);
    }
    l->addr = a;
    l->addrlen = alen;
    l->at = ev_now(h->loop);
    l->refreshing = 0;
}

static void complete(fnw_http_req *r, CURLcode rc)
{
    fnw_http_response resp = { .retry_after_s = -1 };
    resp.outcome = outcome_of(r, rc);
    if (r->learn)
        learn_address(r, resp.outcome == FNW_HTTP_DONE);
    long v = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &resp.status);
    curl_easy_getinfo(r->easy, CURLINFO_HTTP_VERSION, &v);
    resp.http_version = version_of(v);
    req_unlink(r);
    fnw_error err;
    const fnw_error *e = NULL;
    if (resp.outcome == FNW_HTTP_DONE) {
        resp.body = r->resp ? r->resp : "";
        resp.body_len = r->len;
        resp.retry_after_s = r->retry_after_s;
        resp.content_type = r->content_type;
    } else {
        describe_failure(r, resp.outcome, rc, &err);
        e = &err;
    }
    r->done(r->user, &resp, e);
    req_free(r);
}

static void reap(fnw_http *h)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(h->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        fnw_http_req *r = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        if (r)
            complete(r, m->data.result);
    }
}

/* ---- sending ----------------------------------------------------------- */

static int method_ok(const char *m)
{
    size_t n = strlen(m);
    if (n == 0 || n > 16)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isupper((unsigned char)m[i]))
            return 0;
    return 1;
}

/* The request's URL (the client's last one when it is the same) and its
 * description "METHOD host:port/path". */
static int describe_target(fnw_http_req *r, const char *method, const char *url, fnw_error *err)
{
    if (!(r->url = fnw_http_share_url(&r->head.h->share, url)))
        return fnw_error_set(err, "HTTP %s: '%.200s' is not an http:// or https:// URL", method, url);
    snprintf(r->what, sizeof r->what, "%s %s", method, r->url->target);
    return 0;
}

static int set_body(fnw_http_req *r, const fnw_http_request *rq, const char *method)
{
    const void *body = rq->body;
    if (rq->body_len && rq->copy_body) {
        if (!(r->body_copy = malloc(rq->body_len)))
            return -1;
        memcpy(r->body_copy, rq->body, rq->body_len);
        body = r->body_copy;
    }
    if (rq->body_len || strcmp(method, "POST") == 0) {
        curl_easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
        curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, rq->body_len ? (const char *)body : "");
    }
    if (strcmp(method, "HEAD") == 0)
        curl_easy_setopt(r->easy, CURLOPT_NOBODY, 1L);
    else if (strcmp(method, "POST") != 0 && (strcmp(method, "GET") != 0 || rq->body_len))
        curl_easy_setopt(r->easy, CURLOPT_CUSTOMREQUEST, method);
    return 0;
}

static int set_headers(fnw_http_req *r, const fnw_http_request *rq)
{
    r->hdrs = fnw_http_share_headers(&r->head.h->share, rq->headers, rq->n_headers);
    return r->hdrs ? 0 : -1;
}

static void set_options(fnw_http *h, fnw_http_req *r, const fnw_http_request *rq)
{
    CURL *e = r->easy;
    curl_easy_setopt(e, CURLOPT_CURLU, r->url->u);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)r);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    /* Over TLS, ALPN tells during the handshake whether a connection can
     * multiplex: wait for that rather than open a connection per request.
     * A plain http:// connection is HTTP/1.1 (no multiplexing) and would
     * only be known as such at its first response, so no waiting there. */
    if (r->url->tls)
        curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->hdrs->list);
    if (h->no_proxy_env) { /* what libcurl would find: no proxy */
        curl_easy_setopt(e, CURLOPT_PROXY, "");
        curl_easy_setopt(e, CURLOPT_NOPROXY, "");
    }
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->limit);
    if (rq->timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, rq->timeout_ms);
    if (h->cfg.connect_timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, h->cfg.connect_timeout_ms);
    if (h->cfg.ca_file)
        curl_easy_setopt(e, CURLOPT_CAINFO, h->cfg.ca_file);
}

int fnw_http_send(fnw_http *h, const fnw_http_request *rq, fnw_http_done_fn done, void *user,
                  fnw_http_req **out, fnw_error *err)
{
    const char *method = rq->method ? rq->method : "GET";
    if (!method_ok(method))
        return fnw_error_set(err, "HTTP: '%.40s' is not a method (upper-case letters, at most 16)", method);
    int learn = 0;
    learned *refresh = NULL; /* the stale address a new lookup will replace */
    if (h->h1) {
        const char *url = rq->url ? rq->url : "";
        fnw_http_url *u = fnw_http_share_url(&h->share, url);
        if (!u)
            return fnw_error_set(err, "HTTP %s: '%.200s' is not an http:// or https:// URL", method, url);
        const struct sockaddr_storage *addr = NULL;
        socklen_t alen = 0;
        if (u->plain) {
            addr = &u->addr;
            alen = u->addrlen;
        } else if (u->named) { /* the address libcurl found, while fresh */
            learned *l = learned_find(h, u->hostkey);
            if (l && (ev_now(h->loop) - l->at < LEARN_TTL || l->refreshing)) {
                addr = &l->addr;
                alen = l->addrlen;
            } else {
                learn = 1;
                refresh = l;
            }
        }
        if (addr) {
            fnw_http_hdrs *hd = fnw_http_share_headers(&h->share, rq->headers, rq->n_headers);
            if (!hd) {
                fnw_http_share_url_drop(&h->share, u);
                return fnw_error_set(err, "HTTP %s %s: out of memory", method, u->target);
            }
            return fnw_h1_send(h->h1, h, &h->share, u, hd, addr, alen, method, rq, done, user, out, err);
        }
        fnw_http_share_url_drop(&h->share, u); /* the libcurl path takes its own reference */
    }
    fnw_http_req *r = calloc(1, sizeof *r);
    if (!r)
        return fnw_error_set(err, "HTTP %s: out of memory", method);
    r->head.h = h;
    if (describe_target(r, method, rq->url ? rq->url : "", err) != 0) {
        free(r);
        return -1;
    }
    r->done = done;
    r->user = user;
    r->retry_after_s = -1;
    r->timeout_ms = rq->timeout_ms;
    r->limit = rq->max_response_bytes ? rq->max_response_bytes : h->cfg.max_response_bytes;
    r->easy = h->n_idle ? h->idle[--h->n_idle] : curl_easy_init();
    if (!r->easy || set_headers(r, rq) != 0 || set_body(r, rq, method) != 0) {
        fnw_error_set(err, "HTTP %s: out of memory", r->what);
        req_free(r);
        return -1;
    }
    set_options(h, r, rq);
    if ((r->learn = learn) != 0) /* its connection is not kept: the plain path's pool is */
        curl_easy_setopt(r->easy, CURLOPT_FORBID_REUSE, 1L);
    if (curl_multi_add_handle(h->multi, r->easy) != CURLM_OK) {
        fnw_error_set(err, "HTTP %s: libcurl refused the request", r->what);
        req_free(r);
        return -1;
    }
    if (refresh) /* only once the lookup is under way: a request that failed above left nothing marked */
        refresh->refreshing = 1; /* meanwhile the old address serves */
    r->next = h->reqs;
    if (h->reqs)
        h->reqs->prev = r;
    h->reqs = r;
    h->n_reqs++;
    if (out)
        *out = r;
    return 0;
}
