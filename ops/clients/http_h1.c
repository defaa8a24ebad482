/* ops/clients/http_h1.c — the HTTP client's plain path: HTTP/1.1 with
 * keep-alive straight on the libev loop, for http:// URLs whose host is an
 * IP literal (http.c decides; see http_internal.h). Same contract as
 * fnw_http_send (http.h).
 *
 * Why it exists: libcurl's multi interface costs ~100k instructions per
 * request (its state machine, header building, a socket-callback round per
 * transfer); a request here is one sendmsg, one read and a parse of the
 * response head, about a tenth of that. What libcurl still does: TLS
 * (https://), host names (its resolver and cache), proxies, a total
 * connection limit; http.c sends those requests through libcurl.
 *
 * Behaviour kept from the libcurl path: one request per connection at a
 * time, at most max_host_connections connections per host:port (requests
 * beyond wait in FIFO order), idle connections reused (LIFO) and not after
 * 118 s idle (libcurl's CURLOPT_MAXAGE_CONN), TCP_NODELAY and TCP keep-alive
 * (60 s), a request that finds its reused connection closed before any byte
 * of the answer is sent again once on a new connection, the whole-request
 * timeout counting the wait for a connection, connect_timeout_ms (default
 * 300 s as libcurl's), the body limit (a Content-Length over it fails at
 * once), redirects returned as answers, an Accept header of any type and a form
 * Content-Type for a body without one (as libcurl sends), a header line
 * "Name:" with nothing after it sending nothing. Responses: Content-Length,
 * chunked or until close; 1xx answers skipped; no body for HEAD, 204, 304;
 * the response head at most 100 KB.
 */
#include "ops/clients/http_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_HEAD (100 * 1024)  /* response head limit */
#define IDLE_MAX_AGE 118.0     /* s, libcurl's default CURLOPT_MAXAGE_CONN */
#define KEEPALIVE_S 60         /* TCP keep-alive idle and interval, as libcurl's */
#define DEFAULT_CONNECT_S 300. /* libcurl's default connect timeout */
#define FREE_REQS 256          /* finished requests kept for reuse */
#define KEEP_BUF (64 * 1024)   /* a reused request keeps buffers up to this */
#define RBUF 16384             /* a connection's first read buffer */
#define IDLE_UNLIMITED 64      /* idle connections kept per host without a limit */

typedef struct h1_conn h1_conn;
typedef struct h1_pool h1_pool;
typedef struct h1_req h1_req;

enum { C_CONNECTING, C_BUSY, C_IDLE };
enum { P_HEAD, P_LEN, P_CHUNK_SIZE, P_CHUNK_DATA, P_CHUNK_CRLF, P_TRAILER, P_CLOSE, P_DONE };

struct h1_req {
    fnw_http_req_head head; /* first: plain = 1 */
    fnw_h1 *c;
    h1_pool *pool;
    h1_conn *conn;
    fnw_http_share *share;
    fnw_http_url *url;
    fnw_http_hdrs *hdrs;
    fnw_http_done_fn done;
    void *user;
    ev_timer tmo; /* the request timeout, or 0 s for a failure found at send */
    int tmo_on;
    h1_req *qprev, *qnext; /* the pool's wait queue */
    h1_req *prev, *next;   /* in flight */
    int queued;
    /* the request: head in out[0..head_len), then the body */
    char *out;
    size_t out_cap, head_len;
    const char *body;
    size_t body_len, sent;
    int head_only, retried, got_bytes;
    /* a failure found at send, reported from the loop */
    int pending;
    fnw_http_outcome pend_oc;
    fnw_error pend_err;
    /* the response */
    char *resp;
    size_t len, cap, limit;
    long status;
    int version, keep_alive;
    int64_t retry_after_s;
    char ctype[128];
    char *ctype_long; /* a Content-Type over 127 bytes */
    int has_ctype;
    long timeout_ms;
    char what[320];
};

struct h1_conn {
    ev_io io;
    int events;
    ev_timer ctmo; /* connect timeout */
    fnw_h1 *c;
    h1_pool *pool;
    int state, reused;
    ev_tstamp idle_since;
    h1_req *req;
    h1_conn *prev, *next; /* the pool's connections */
    h1_conn *inext;       /* the pool's idle stack */
    char *rbuf;           /* bytes read and not yet parsed */
    size_t rlen, rcap;
    int phase;
    size_t remain;
};

struct h1_pool {
    struct sockaddr_storage addr;
    socklen_t addrlen;
    h1_conn *conns, *idle;
    size_t n_conns, n_idle;
    h1_req *qhead, *qtail;
    h1_pool *next;
};

struct fnw_h1 {
    struct ev_loop *loop;
    fnw_http_config cfg;
    h1_pool *pools;
    h1_req *reqs; /* in flight */
    size_t n_reqs;
    h1_req *free_reqs;
    size_t n_free;
    int defer; /* inside fnw_h1_send / fnw_h1_cancel: no callbacks */
    /* the last request head built, kept while URL, headers and method stay */
    uint64_t head_url, head_hdrs;
    char head_method[20];
    int head_body;
    char *head;
    size_t head_len;
};

/* ---- requests --------------------------------------------------------------- */

static void req_recycle(fnw_h1 *c, h1_req *r)
{
    fnw_http_share_headers_drop(r->share, r->hdrs);
    fnw_http_share_url_drop(r->share, r->url);
    free(r->ctype_long);
    if (c->n_free >= FREE_REQS || r->out_cap > KEEP_BUF || r->cap > KEEP_BUF) {
        free(r->out);
        free(r->resp);
        free(r);
        return;
    }
    r->qnext = c->free_reqs;
    c->free_reqs = r;
    c->n_free++;
}

static h1_req *req_get(fnw_h1 *c)
{
    h1_req *r = c->free_reqs;
    if (r) {
        c->free_reqs = r->qnext;
        c->n_free--;
        char *out = r->out, *resp = r->resp;
        size_t oc = r->out_cap, rc = r->cap;
        memset(r, 0, offsetof(h1_req, pend_err));
        memset(&r->resp, 0, sizeof *r - offsetof(h1_req, resp));
        r->out = out, r->out_cap = oc, r->resp = resp, r->cap = rc;
    } else if (!(r = calloc(1, sizeof *r))) {
        return NULL;
    }
    r->c = c;
    r->head.plain = 1;
    r->retry_after_s = -1;
    return r;
}

static void inflight_unlink(fnw_h1 *c, h1_req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        c->reqs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    c->n_reqs--;
}

static void queue_unlink(h1_pool *p, h1_req *r)
{
    if (r->qprev)
        r->qprev->qnext = r->qnext;
    else
        p->qhead = r->qnext;
    if (r->qnext)
        r->qnext->qprev = r->qprev;
    else
        p->qtail = r->qprev;
    r->queued = 0;
}

/* ---- connections ------------------------------------------------------------ */

static void conn_io(struct ev_loop *loop, ev_io *w, int revents);
static void conn_ctmo(struct ev_loop *loop, ev_timer *t, int revents);
static void pool_kick(fnw_h1 *c, h1_pool *p);

static void conn_watch(h1_conn *k, int events)
{
    if (k->events == events)
        return;
    ev_io_stop(k->c->loop, &k->io);
    ev_io_set(&k->io, k->io.fd, events);
    ev_io_start(k->c->loop, &k->io);
    k->events = events;
}

static void idle_remove(h1_pool *p, h1_conn *k)
{
    for (h1_conn **pp = &p->idle; *pp; pp = &(*pp)->inext)
        if (*pp == k) {
            *pp = k->inext;
            p->n_idle--;
            return;
        }
}

/* Closes k and frees it; its request (if any) must have been detached. */
static void conn_close(h1_conn *k)
{
    h1_pool *p = k->pool;
    fnw_h1 *c = k->c;
    if (k->state == C_IDLE)
        idle_remove(p, k);
    ev_io_stop(c->loop, &k->io);
    ev_timer_stop(c->loop, &k->ctmo);
    close(k->io.fd);
    if (k->prev)
        k->prev->next = k->next;
    else
        p->conns = k->next;
    if (k->next)
        k->next->prev = k->prev;
    p->n_conns--;
    free(k->rbuf);
    free(k);
}

/* A new connection to p, connecting; NULL with errno set when the socket
 * cannot be made or the connect fails at once. */
static h1_conn *conn_open(fnw_h1 *c, h1_pool *p)
{
    int fd = socket(p->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    int one = 1, ka = KEEPALIVE_S;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &ka, sizeof ka);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &ka, sizeof ka);
    if (connect(fd, (const struct sockaddr *)&p->addr, p->addrlen) != 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    h1_conn *k = calloc(1, sizeof *k);
    if (!k) {
        close(fd);
        errno = ENOMEM;
        return NULL;
    }
    k->c = c;
    k->pool = p;
    k->state = C_CONNECTING;
    ev_io_init(&k->io, conn_io, fd, EV_WRITE);
    k->events = EV_WRITE;
    ev_io_start(c->loop, &k->io);
    double ct = c->cfg.connect_timeout_ms > 0 ? (double)c->cfg.connect_timeout_ms / 1000.0 : DEFAULT_CONNECT_S;
    ev_timer_init(&k->ctmo, conn_ctmo, ct, 0.);
    ev_timer_start(c->loop, &k->ctmo);
    k->next = p->conns;
    if (p->conns)
        p->conns->prev = k;
    p->conns = k;
    p->n_conns++;
    return k;
}

/* ---- completing ------------------------------------------------------------- */

/* Detaches r from wherever it is (queue, connection, timer) and from the
 * in-flight list; the connection, if any, is left to the caller. */
static void req_detach(fnw_h1 *c, h1_req *r)
{
    if (r->queued)
        queue_unlink(r->pool, r);
    if (r->conn) {
        r->conn->req = NULL;
        r->conn = NULL;
    }
    if (r->tmo_on) {
        ev_timer_stop(c->loop, &r->tmo);
        r->tmo_on = 0;
    }
    inflight_unlink(c, r);
}

/* Runs r's callback with oc (and err when not DONE), then recycles r. r is
 * already detached. */
static void req_finish(fnw_h1 *c, h1_req *r, fnw_http_outcome oc, const fnw_error *err)
{
    fnw_http_response resp = { .outcome = oc, .retry_after_s = -1 };
    if (oc == FNW_HTTP_DONE) {
        resp.status = r->status;
        resp.http_version = r->version;
        if (!r->resp || !r->cap) {
            resp.body = "";
        } else {
            r->resp[r->len] = '\0';
            resp.body = r->resp;
        }
        resp.body_len = r->len;
        resp.retry_after_s = r->retry_after_s;
        resp.content_type = r->has_ctype ? (r->ctype_long ? r->ctype_long : r->ctype) : NULL;
        err = NULL;
    }
    r->done(r->user, &resp, err);
    req_recycle(c, r);
}

static void fail_msg(h1_req *r, fnw_http_outcome oc, const char *detail, fnw_error *err)
{
    fnw_http_share_failure(err, oc, r->what, r->timeout_ms, r->limit, detail);
}

/* r fails, reported from the loop (by its timer at 0 s): for failures
 * found inside fnw_h1_send or fnw_h1_cancel, which never run callbacks. */
static void req_fail_later(fnw_h1 *c, h1_req *r, fnw_http_outcome oc, const char *detail)
{
    if (r->queued)
        queue_unlink(r->pool, r);
    if (r->conn) {
        r->conn->req = NULL;
        r->conn = NULL;
    }
    r->pending = 1;
    r->pend_oc = oc;
    fail_msg(r, oc, detail, &r->pend_err);
    if (r->tmo_on)
        ev_timer_stop(c->loop, &r->tmo);
    ev_timer_set(&r->tmo, 0., 0.);
    ev_timer_start(c->loop, &r->tmo);
    r->tmo_on = 1;
}

/* r fails on connection k (closed here), then the pool moves on. */
static void conn_fail(h1_conn *k, fnw_http_outcome oc, const char *detail)
{
    fnw_h1 *c = k->c;
    h1_pool *p = k->pool;
    h1_req *r = k->req;
    fnw_error err;
    if (r && c->defer) {
        req_fail_later(c, r, oc, detail);
        r = NULL;
    }
    if (r) {
        fail_msg(r, oc, detail, &err);
        req_detach(c, r);
    }
    conn_close(k);
    pool_kick(c, p);
    if (r)
        req_finish(c, r, oc, &err);
}

/* A reused connection broke before any byte of r's answer: r goes again,
 * first in line, on a new connection. 1 when it did. */
static int conn_retry(h1_conn *k)
{
    h1_req *r = k->req;
    if (!r || !k->reused || r->retried || r->got_bytes)
        return 0;
    fnw_h1 *c = k->c;
    h1_pool *p = k->pool;
    r->retried = 1;
    r->conn = NULL;
    k->req = NULL;
    r->sent = 0;
    r->qprev = NULL;
    r->qnext = p->qhead;
    if (p->qhead)
        p->qhead->qprev = r;
    else
        p->qtail = r;
    p->qhead = r;
    r->queued = 1;
    conn_close(k);
    pool_kick(c, p);
    return 1;
}

static void conn_broken(h1_conn *k, const char *what, int e)
{
    if (conn_retry(k))
        return;
    char detail[200];
    if (e)
        snprintf(detail, sizeof detail, "%s: %s", what, strerror(e));
    else
        snprintf(detail, sizeof detail, "%s", what);
    conn_fail(k, FNW_HTTP_FAILED, detail);
}

/* ---- writing ---------------------------------------------------------------- */

/* Writes what is left of k's request; arms EV_WRITE when the socket is
 * full. 0, or -1 when the connection was closed (request failed or
 * requeued). */
static int conn_write(h1_conn *k)
{
    h1_req *r = k->req;
    size_t total = r->head_len + r->body_len;
    while (r->sent < total) {
        struct iovec iov[2];
        int n = 0;
        if (r->sent < r->head_len) {
            iov[n].iov_base = r->out + r->sent;
            iov[n++].iov_len = r->head_len - r->sent;
            if (r->body_len) {
                iov[n].iov_base = (void *)r->body;
                iov[n++].iov_len = r->body_len;
            }
        } else {
            iov[n].iov_base = (void *)(r->body + (r->sent - r->head_len));
            iov[n++].iov_len = total - r->sent;
        }
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)n };
        ssize_t w = sendmsg(k->io.fd, &mh, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                conn_watch(k, EV_READ | EV_WRITE);
                return 0;
            }
            conn_broken(k, "sending the request", errno);
            return -1;
        }
        r->sent += (size_t)w;
    }
    conn_watch(k, EV_READ);
    return 0;
}

/* Puts r on idle or fresh connection k and starts writing. */
static void conn_start(h1_conn *k, h1_req *r)
{
    k->req = r;
    k->state = C_BUSY;
    k->phase = P_HEAD;
    k->rlen = 0;
    r->conn = k;
    r->sent = 0;
    r->len = 0;
    conn_write(k);
}

/* Gives waiting requests connections: idle ones first (newest first), else
 * new ones within the limit. A request that fails meanwhile (its write, its
 * connect) is reported from the loop: pool_kick runs inside other
 * requests' completions, sends and cancels, where no callback may run. */
static void pool_kick_now(fnw_h1 *c, h1_pool *p);

static void pool_kick(fnw_h1 *c, h1_pool *p)
{
    c->defer++;
    pool_kick_now(c, p);
    c->defer--;
}

static void pool_kick_now(fnw_h1 *c, h1_pool *p)
{
    while (p->qhead) {
        h1_req *r = p->qhead;
        h1_conn *k = p->idle;
        if (k) {
            p->idle = k->inext;
            p->n_idle--;
            if (ev_now(c->loop) - k->idle_since > IDLE_MAX_AGE) {
                k->state = C_BUSY; /* not on the idle stack any more */
                conn_close(k);
                continue;
            }
            queue_unlink(p, r);
            conn_start(k, r);
            continue;
        }
        if (c->cfg.max_host_connections > 0 && p->n_conns >= (size_t)c->cfg.max_host_connections)
            return;
        queue_unlink(p, r);
        if (!(k = conn_open(c, p))) {
            char detail[200];
            snprintf(detail, sizeof detail, "connect to %.60s failed: %s", r->url->hostport, strerror(errno));
            req_fail_later(c, r, FNW_HTTP_CONNECT, detail);
            continue;
        }
        k->req = r;
        r->conn = k;
    }
}

/* ---- reading ---------------------------------------------------------------- */

static const char *find_eol(const char *p, const char *end)
{
    const char *n = memchr(p, '\n', (size_t)(end - p));
    return n;
}

/* The value of a header line "Name: value" (line without its line end) if
 * its name is name (case-insensitive), trimmed; NULL otherwise. */
static const char *hvalue(const char *line, size_t len, const char *name, size_t nl, size_t *vlen)
{
    if (len <= nl || line[nl] != ':' || strncasecmp(line, name, nl) != 0)
        return NULL;
    const char *v = line + nl + 1, *e = line + len;
    while (v < e && (*v == ' ' || *v == '\t'))
        v++;
    while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    *vlen = (size_t)(e - v);
    return v;
}

static int has_token(const char *v, size_t n, const char *tok)
{
    size_t tl = strlen(tok);
    for (size_t i = 0; i + tl <= n; i++)
        if (strncasecmp(v + i, tok, tl) == 0 && (i == 0 || v[i - 1] == ',' || v[i - 1] == ' ') &&
            (i + tl == n || v[i + tl] == ',' || v[i + tl] == ' '))
            return 1;
    return 0;
}

/* Parses the response head in b[0..n) (up to and including the empty
 * line). 0, or -1 with detail set. Sets the framing in k. */
static int parse_head(h1_conn *k, h1_req *r, const char *b, size_t n, char *detail, size_t dn)
{
    const char *end = b + n, *eol = find_eol(b, end);
    if (n < 12 || memcmp(b, "HTTP/1.", 7) != 0 || (b[7] != '0' && b[7] != '1') || b[8] != ' ' || b[9] < '1' ||
        b[9] > '9' || b[10] < '0' || b[10] > '9' || b[11] < '0' || b[11] > '9' ||
        (eol - b > 12 && b[12] != ' ' && b[12] != '\r')) {
        snprintf(detail, dn, "bad response: the status line is not HTTP/1.x NNN");
        return -1;
    }
    r->version = b[7] == '1' ? 11 : 10;
    r->status = (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0');
    int keep = r->version == 11, chunked = 0, has_len = 0, te = 0;
    unsigned long long clen = 0;
    r->retry_after_s = -1;
    r->has_ctype = 0;
    for (const char *p = eol + 1; p < end;) {
        const char *e = find_eol(p, end);
        size_t len = (size_t)(e - p);
        if (len && p[len - 1] == '\r')
            len--;
        if (!len)
            break;
        size_t vl;
        const char *v;
        switch (p[0] | 0x20) {
        case 'c':
            if ((v = hvalue(p, len, "Content-Length", 14, &vl))) {
                unsigned long long x = 0;
                size_t i = 0;
                for (; i < vl && v[i] >= '0' && v[i] <= '9' && x < (1ULL << 60); i++)
                    x = x * 10 + (unsigned)(v[i] - '0');
                if (i == 0 || i != vl || (has_len && x != clen)) {
                    snprintf(detail, dn, "bad response: Content-Length '%.*s'%s", (int)(vl < 40 ? vl : 40), v,
                             has_len && x != clen ? " after another length" : "");
                    return -1;
                }
                clen = x;
                has_len = 1;
            } else if ((v = hvalue(p, len, "Content-Type", 12, &vl))) {
                free(r->ctype_long);
                r->ctype_long = NULL;
                if (vl < sizeof r->ctype) {
                    memcpy(r->ctype, v, vl);
                    r->ctype[vl] = '\0';
                } else if (!(r->ctype_long = strndup(v, vl))) {
                    snprintf(detail, dn, "out of memory for the response's Content-Type");
                    return -1;
                }
                r->has_ctype = 1;
            } else if ((v = hvalue(p, len, "Connection", 10, &vl))) {
                if (has_token(v, vl, "close"))
                    keep = 0;
                else if (has_token(v, vl, "keep-alive"))
                    keep = 1;
            }
            break;
        case 't':
            if ((v = hvalue(p, len, "Transfer-Encoding", 17, &vl))) {
                te = 1;
                chunked = vl >= 7 && strncasecmp(v + vl - 7, "chunked", 7) == 0;
            }
            break;
        case 'r':
            if ((v = hvalue(p, len, "Retry-After", 11, &vl))) {
                char tmp[128];
                snprintf(tmp, sizeof tmp, "%.*s", (int)(vl < 127 ? vl : 127), v);
                r->retry_after_s = fnw_http_retry_after(tmp);
            }
            break;
        default:
            break;
        }
        p = e + 1;
    }
    r->keep_alive = keep;
    if (r->head_only || r->status == 204 || r->status == 304 || (r->status >= 100 && r->status < 200)) {
        k->phase = P_DONE;
    } else if (te) {
        k->phase = chunked ? P_CHUNK_SIZE : P_CLOSE;
        if (!chunked)
            r->keep_alive = 0;
    } else if (has_len) {
        if (clen > r->limit) {
            snprintf(detail, dn, "too large");
            return -2;
        }
        k->phase = clen ? P_LEN : P_DONE;
        k->remain = (size_t)clen;
    } else {
        k->phase = P_CLOSE;
        r->keep_alive = 0;
    }
    return 0;
}

/* Appends n body bytes; -2 over the limit, -1 out of memory. */
static int body_add(h1_req *r, const char *p, size_t n)
{
    if (n > r->limit - r->len)
        return -2;
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 1024;
        while (cap < r->len + n + 1)
            cap *= 2;
        char *np = realloc(r->resp, cap);
        if (!np)
            return -1;
        r->resp = np;
        r->cap = cap;
    }
    memcpy(r->resp + r->len, p, n);
    r->len += n;
    return 0;
}

/* Takes up to k->remain body bytes from *p (a length-framed body or a
 * chunk's data), then goes to phase next when none remain. Returns 1 when
 * parsing stops here: *rc stays 0 when more bytes are needed, is -1 on
 * failure (oc and detail set); 0 when it took bytes and parsing goes on. */
static int take_body(h1_conn *k, h1_req *r, char **p, const char *end, int next, fnw_http_outcome *oc,
                     char *detail, size_t dn, int *rc)
{
    size_t n = (size_t)(end - *p) < k->remain ? (size_t)(end - *p) : k->remain;
    if (!n)
        return 1;
    int a = body_add(r, *p, n);
    if (a < 0) {
        *oc = a == -2 ? FNW_HTTP_TOO_LARGE : FNW_HTTP_FAILED;
        snprintf(detail, dn, "out of memory for the response body");
        *rc = -1;
        return 1;
    }
    *p += n;
    if (!(k->remain -= n))
        k->phase = next;
    return 0;
}

/* Parses what k has read. 1: the response is complete; 0: more needed;
 * -1 failed (oc and detail set). */
static int conn_parse(h1_conn *k, h1_req *r, fnw_http_outcome *oc, char *detail, size_t dn)
{
    char *b = k->rbuf, *end = b + k->rlen, *p = b;
    int rc = 0;
    *oc = FNW_HTTP_FAILED;
    while (rc == 0) {
        switch (k->phase) {
        case P_HEAD: {
            const char *q = p, *hend = NULL;
            while ((q = memchr(q, '\n', (size_t)(end - q))) != NULL) {
                q++;
                if (q < end && *q == '\n') {
                    hend = q + 1;
                    break;
                }
                if (q + 1 < end && q[0] == '\r' && q[1] == '\n') {
                    hend = q + 2;
                    break;
                }
                if (q >= end)
                    break;
            }
            if (!hend) {
                if ((size_t)(end - p) > MAX_HEAD) {
                    snprintf(detail, dn, "the response's head is larger than %d bytes", MAX_HEAD);
                    rc = -1;
                }
                goto out;
            }
            int h = parse_head(k, r, p, (size_t)(hend - p), detail, dn);
            if (h < 0) {
                *oc = h == -2 ? FNW_HTTP_TOO_LARGE : FNW_HTTP_FAILED;
                rc = -1;
                goto out;
            }
            p = (char *)hend;
            if (r->status >= 100 && r->status < 200) {
                if (r->status == 101) {
                    snprintf(detail, dn, "bad response: the server switched protocols (101)");
                    rc = -1;
                    goto out;
                }
                k->phase = P_HEAD; /* an interim answer: the real one follows */
            }
            break;
        }
        case P_LEN:
            if (take_body(k, r, &p, end, P_DONE, oc, detail, dn, &rc))
                goto out;
            break;
        case P_CHUNK_SIZE: {
            char *e = memchr(p, '\n', (size_t)(end - p));
            if (!e) {
                if (end - p > 1024) {
                    snprintf(detail, dn, "bad response: a chunk size line over 1024 bytes");
                    rc = -1;
                }
                goto out;
            }
            size_t x = 0, i = 0;
            for (; p + i < e; i++) {
                int ch = p[i], d = ch >= '0' && ch <= '9'                     ? ch - '0'
                                   : (ch | 0x20) >= 'a' && (ch | 0x20) <= 'f' ? (ch | 0x20) - 'a' + 10
                                                                              : -1;
                if (d < 0)
                    break;
                if (x > ((size_t)1 << 56)) {
                    *oc = FNW_HTTP_TOO_LARGE;
                    rc = -1;
                    goto out;
                }
                x = x * 16 + (size_t)d;
            }
            if (i == 0 || (p[i] != ';' && p[i] != '\r' && p[i] != '\n' && p[i] != ' ' && p[i] != '\t')) {
                snprintf(detail, dn, "bad response: a chunk size that is not hexadecimal");
                rc = -1;
                goto out;
            }
            if (x > r->limit - r->len) {
                *oc = FNW_HTTP_TOO_LARGE;
                rc = -1;
                goto out;
            }
            p = e + 1;
            k->remain = x;
            k->phase = x ? P_CHUNK_DATA : P_TRAILER;
            break;
        }
        case P_CHUNK_DATA:
            if (take_body(k, r, &p, end, P_CHUNK_CRLF, oc, detail, dn, &rc))
                goto out;
            break;
        case P_CHUNK_CRLF: {
            char *e = memchr(p, '\n', (size_t)(end - p));
            if (!e) {
                if (end - p > 2) {
                    snprintf(detail, dn, "bad response: no line end after a chunk");
                    rc = -1;
                }
                goto out;
            }
            if (e - p > 1 || (e - p == 1 && *p != '\r')) {
                snprintf(detail, dn, "bad response: no line end after a chunk");
                rc = -1;
                goto out;
            }
            p = e + 1;
            k->phase = P_CHUNK_SIZE;
            break;
        }
        case P_TRAILER: {
            char *e = memchr(p, '\n', (size_t)(end - p));
            if (!e) {
                if (end - p > MAX_HEAD) {
                    snprintf(detail, dn, "the response's trailer is larger than %d bytes", MAX_HEAD);
                    rc = -1;
                }
                goto out;
            }
            int empty = e == p || (e - p == 1 && *p == '\r');
            p = e + 1;
            if (empty)
                k->phase = P_DONE;
            break;
        }
        case P_CLOSE: {
            size_t n = (size_t)(end - p);
            if (!n)
                goto out;
            int a = body_add(r, p, n);
            if (a < 0) {
                *oc = a == -2 ? FNW_HTTP_TOO_LARGE : FNW_HTTP_FAILED;
                snprintf(detail, dn, "out of memory for the response body");
                rc = -1;
                goto out;
            }
            p += n;
            goto out;
        }
        case P_DONE:
            rc = 1;
            break;
        }
    }
out:
    /* keep what is not parsed yet at the start of the buffer */
    if (p != b) {
        size_t left = (size_t)(end - p);
        if (left)
            memmove(b, p, left);
        k->rlen = left;
    }
    return rc;
}

/* r's answer is complete on k: k goes idle (or closes), the pool moves on,
 * then the callback runs. */
static void conn_done(h1_conn *k, h1_req *r)
{
    fnw_h1 *c = k->c;
    h1_pool *p = k->pool;
    req_detach(c, r);
    k->reused = 1;
    if (!r->keep_alive || k->rlen) {
        conn_close(k);
    } else if (c->cfg.max_host_connections <= 0 && p->n_idle >= IDLE_UNLIMITED && !p->qhead) {
        conn_close(k);
    } else {
        k->state = C_IDLE;
        k->idle_since = ev_now(c->loop);
        k->inext = p->idle;
        p->idle = k;
        p->n_idle++;
    }
    pool_kick(c, p);
    req_finish(c, r, FNW_HTTP_DONE, NULL);
}

static void conn_read(h1_conn *k)
{
    for (;;) {
        if (k->rlen == k->rcap) {
            size_t cap = k->rcap ? k->rcap * 2 : RBUF;
            char *nb = cap <= 4 * MAX_HEAD ? realloc(k->rbuf, cap) : NULL;
            if (!nb) { /* a head over the limit is caught by the parser first */
                if (k->req)
                    conn_fail(k, FNW_HTTP_FAILED, "out of memory for the response");
                else
                    conn_close(k);
                return;
            }
            k->rbuf = nb;
            k->rcap = cap;
        }
        size_t space = k->rcap - k->rlen;
        ssize_t n = read(k->io.fd, k->rbuf + k->rlen, space);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        h1_req *r = k->req;
        if (k->state == C_IDLE || !r) { /* an idle connection closed or spoke */
            h1_pool *p = k->pool;
            fnw_h1 *c = k->c;
            conn_close(k);
            pool_kick(c, p);
            return;
        }
        if (n <= 0) {
            if (n == 0 && k->phase == P_CLOSE) {
                k->phase = P_DONE;
                conn_done(k, r);
                return;
            }
            if (n < 0)
                conn_broken(k, "reading the response", errno);
            else
                conn_broken(k, "the server closed the connection before the response was complete", 0);
            return;
        }
        r->got_bytes = 1;
        k->rlen += (size_t)n;
        fnw_http_outcome oc;
        char detail[200] = "";
        int rc = conn_parse(k, r, &oc, detail, sizeof detail);
        if (rc < 0) {
            conn_fail(k, oc, detail);
            return;
        }
        if (rc > 0) {
            conn_done(k, r);
            return;
        }
        if ((size_t)n < space)
            return; /* the socket is drained */
    }
}

static void conn_connected(h1_conn *k)
{
    int e = 0;
    socklen_t el = sizeof e;
    if (getsockopt(k->io.fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
        e = errno;
    if (e) {
        char detail[200];
        h1_req *r = k->req;
        snprintf(detail, sizeof detail, "connect to %.60s failed: %s",
                 r && r->url && r->url->hostport ? r->url->hostport : "the server", strerror(e));
        conn_fail(k, FNW_HTTP_CONNECT, detail);
        return;
    }
    ev_timer_stop(k->c->loop, &k->ctmo);
    h1_req *r = k->req;
    if (!r) { /* its request was cancelled meanwhile */
        k->state = C_IDLE;
        k->idle_since = ev_now(k->c->loop);
        k->inext = k->pool->idle;
        k->pool->idle = k;
        k->pool->n_idle++;
        conn_watch(k, EV_READ);
        pool_kick(k->c, k->pool);
        return;
    }
    conn_start(k, r);
}

static void conn_io(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    h1_conn *k = (h1_conn *)w;
    if (k->state == C_CONNECTING) {
        conn_connected(k);
        return;
    }
    if ((revents & EV_WRITE) && k->req && k->state == C_BUSY) {
        if (conn_write(k) != 0)
            return;
    }
    if (revents & EV_READ)
        conn_read(k);
}

static void conn_ctmo(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    h1_conn *k = (h1_conn *)((char *)t - offsetof(h1_conn, ctmo));
    char detail[120];
    snprintf(detail, sizeof detail, "no connection within connect_timeout_ms (%ld ms)",
             k->c->cfg.connect_timeout_ms > 0 ? k->c->cfg.connect_timeout_ms
                                              : (long)(DEFAULT_CONNECT_S * 1000));
    conn_fail(k, FNW_HTTP_CONNECT, detail);
}

/* The request timer: a failure found at send, or the request timeout. */
static void req_tmo(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    h1_req *r = (h1_req *)((char *)t - offsetof(h1_req, tmo));
    fnw_h1 *c = r->c;
    r->tmo_on = 0;
    if (r->pending) {
        req_detach(c, r);
        req_finish(c, r, r->pend_oc, &r->pend_err);
        return;
    }
    fnw_error err;
    fail_msg(r, FNW_HTTP_TIMEOUT,
             r->queued                                   ? "waiting for a free connection"
             : r->conn && r->conn->state == C_CONNECTING ? "connecting"
             : r->got_bytes                              ? "the response was incomplete"
                                                         : "no answer yet",
             &err);
    h1_conn *k = r->conn;
    h1_pool *p = r->pool;
    req_detach(c, r);
    if (k)
        conn_close(k); /* its state is unknown now */
    pool_kick(c, p);
    req_finish(c, r, FNW_HTTP_TIMEOUT, &err);
}

/* ---- the request head ------------------------------------------------------- */

static int put(char **b, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t nc = *cap ? *cap : 256;
        while (nc < *len + n + 1)
            nc *= 2;
        char *nb = realloc(*b, nc);
        if (!nb)
            return -1;
        *b = nb;
        *cap = nc;
    }
    memcpy(*b + *len, s, n);
    *len += n;
    return 0;
}

static int user_has(const fnw_http_hdrs *hd, const char *name, size_t nl)
{
    for (const struct curl_slist *l = hd->list; l; l = l->next)
        if (strncasecmp(l->data, name, nl) == 0 && (l->data[nl] == ':' || l->data[nl] == ';'))
            return 1;
    return 0;
}

/* Builds the head (without Content-Length and the final empty line) into
 * c->head, as libcurl would send it. -1: out of memory; -2: a header line
 * holds CR or LF (it would smuggle a header or end the head). */
static int build_head(fnw_h1 *c, const fnw_http_url *u, const fnw_http_hdrs *hd, const char *method, int body)
{
    size_t cap = 0;
    char *b = NULL;
    size_t len = 0;
    cap = 0;
    int ok = put(&b, &len, &cap, method, strlen(method)) == 0 && put(&b, &len, &cap, " ", 1) == 0 &&
             put(&b, &len, &cap, u->pathq, strlen(u->pathq)) == 0 &&
             put(&b, &len, &cap, " HTTP/1.1\r\n", 11) == 0;
    if (ok && !user_has(hd, "Host", 4))
        ok = put(&b, &len, &cap, "Host: ", 6) == 0 &&
             put(&b, &len, &cap, u->hostport, strlen(u->hostport)) == 0 &&
             put(&b, &len, &cap, "\r\n", 2) == 0;
    if (ok && !user_has(hd, "Accept", 6))
        ok = put(&b, &len, &cap, "Accept: */*\r\n", 13) == 0;
    if (ok && body && !user_has(hd, "Content-Type", 12))
        ok = put(&b, &len, &cap, "Content-Type: application/x-www-form-urlencoded\r\n", 49) == 0;
    for (const struct curl_slist *l = hd->list; ok && l; l = l->next) {
        const char *s = l->data, *colon = strpbrk(s, ":;");
        if (strpbrk(s, "\r\n")) { /* would end the line: another header, or the head */
            free(b);
            return -2;
        }
        if (!colon || colon == s)
            continue;
        size_t nl = (size_t)(colon - s);
        if ((nl == 14 && strncasecmp(s, "Content-Length", 14) == 0) ||
            (nl == 17 && strncasecmp(s, "Transfer-Encoding", 17) == 0) ||
            (nl == 6 && strncasecmp(s, "Expect", 6) == 0) ||
            (nl == 10 && strncasecmp(s, "Connection", 10) == 0))
            continue;
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        if (*colon == ':' && !*v)
            continue;      /* "Name:" sends nothing (libcurl: removes the header) */
        if (*colon == ';') /* "Name;" sends the header empty */
            ok = put(&b, &len, &cap, s, nl) == 0 && put(&b, &len, &cap, ":\r\n", 3) == 0;
        else
            ok = put(&b, &len, &cap, s, strlen(s)) == 0 && put(&b, &len, &cap, "\r\n", 2) == 0;
    }
    if (!ok) {
        free(b);
        return -1;
    }
    free(c->head);
    c->head = b;
    c->head_len = len;
    c->head_url = u->serial;
    c->head_hdrs = hd->serial;
    snprintf(c->head_method, sizeof c->head_method, "%s", method);
    c->head_body = body;
    return 0;
}

/* ---- the client ------------------------------------------------------------- */

fnw_h1 *fnw_h1_new(struct ev_loop *loop, const fnw_http_config *cfg)
{
    fnw_h1 *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->loop = loop;
    c->cfg = *cfg;
    return c;
}

void fnw_h1_free(fnw_h1 *c)
{
    if (!c)
        return;
    while (c->reqs) {
        h1_req *r = c->reqs;
        req_detach(c, r);
        req_recycle(c, r);
    }
    while (c->pools) {
        h1_pool *p = c->pools;
        c->pools = p->next;
        while (p->conns) {
            p->conns->state = C_BUSY;
            p->idle = NULL;
            conn_close(p->conns);
        }
        free(p);
    }
    while (c->free_reqs) {
        h1_req *r = c->free_reqs;
        c->free_reqs = r->qnext;
        free(r->out);
        free(r->resp);
        free(r);
    }
    free(c->head);
    free(c);
}

size_t fnw_h1_in_flight(const fnw_h1 *c)
{
    return c ? c->n_reqs : 0;
}

void fnw_h1_cancel(fnw_http_req *rr)
{
    h1_req *r = (h1_req *)rr;
    fnw_h1 *c = r->c;
    h1_conn *k = r->conn;
    h1_pool *p = r->pool;
    req_detach(c, r);
    if (k && k->state == C_BUSY) {
        conn_close(k); /* an answer may be on its way */
        pool_kick(c, p);
    }
    /* a connecting connection stays: it goes idle when it connects */
    req_recycle(c, r);
}

static h1_pool *pool_for(fnw_h1 *c, const struct sockaddr_storage *addr, socklen_t addrlen)
{
    h1_pool **pp = &c->pools;
    for (h1_pool *p = c->pools; p; pp = &p->next, p = p->next)
        if (p->addrlen == addrlen && memcmp(&p->addr, addr, addrlen) == 0) {
            if (p != c->pools) { /* the newest used first */
                *pp = p->next;
                p->next = c->pools;
                c->pools = p;
            }
            return p;
        }
    h1_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    memcpy(&p->addr, addr, addrlen);
    p->addrlen = addrlen;
    p->next = c->pools;
    c->pools = p;
    return p;
}

int fnw_h1_send(fnw_h1 *c, fnw_http *h, fnw_http_share *share, fnw_http_url *u, fnw_http_hdrs *hdrs,
                const struct sockaddr_storage *addr, socklen_t addrlen, const char *method,
                const fnw_http_request *rq, fnw_http_done_fn done, void *user, fnw_http_req **out,
                fnw_error *err)
{
    int body = rq->body_len || strcmp(method, "POST") == 0;
    h1_req *r = req_get(c);
    h1_pool *p = r ? pool_for(c, addr, addrlen) : NULL;
    if (!p) {
        fnw_error_set(err, "HTTP %s %s: out of memory", method, u->target); /* before u is let go */
        if (r)
            req_recycle(c, r);
        fnw_http_share_headers_drop(share, hdrs);
        fnw_http_share_url_drop(share, u);
        return -1;
    }
    r->head.h = h;
    r->share = share;
    r->url = u;
    r->hdrs = hdrs;
    r->pool = p;
    r->done = done;
    r->user = user;
    r->timeout_ms = rq->timeout_ms;
    r->limit = rq->max_response_bytes ? rq->max_response_bytes : c->cfg.max_response_bytes;
    r->head_only = strcmp(method, "HEAD") == 0;
    snprintf(r->what, sizeof r->what, "%s %s", method, u->target);
    if (c->head_url != u->serial || c->head_hdrs != hdrs->serial || c->head_body != body ||
        strcmp(c->head_method, method) != 0 || !c->head) {
        int b = build_head(c, u, hdrs, method, body);
        if (b == -2) {
            fnw_error_set(err, "HTTP %s %s: a header line holds a CR or LF", method, u->target);
            req_recycle(c, r); /* lets go of u */
            return -1;
        }
        if (b != 0)
            goto oom;
    }
    char cl[48];
    int cln = body ? snprintf(cl, sizeof cl, "Content-Length: %zu\r\n\r\n", rq->body_len) : 2;
    if (!body)
        memcpy(cl, "\r\n", 3);
    r->head_len = 0;
    if (put(&r->out, &r->head_len, &r->out_cap, c->head, c->head_len) != 0 ||
        put(&r->out, &r->head_len, &r->out_cap, cl, (size_t)cln) != 0)
        goto oom;
    r->body = rq->body;
    r->body_len = rq->body_len;
    if (rq->body_len && rq->copy_body) {
        size_t hl = r->head_len;
        if (put(&r->out, &r->head_len, &r->out_cap, rq->body, rq->body_len) != 0)
            goto oom;
        r->head_len = hl;
        r->body = r->out + hl;
    }
    if (rq->timeout_ms > 0) {
        ev_timer_init(&r->tmo, req_tmo, (double)rq->timeout_ms / 1000.0, 0.);
        ev_timer_start(c->loop, &r->tmo);
        r->tmo_on = 1;
    } else {
        ev_init(&r->tmo, req_tmo);
    }
    r->next = c->reqs;
    if (c->reqs)
        c->reqs->prev = r;
    c->reqs = r;
    c->n_reqs++;
    r->qprev = p->qtail;
    if (p->qtail)
        p->qtail->qnext = r;
    else
        p->qhead = r;
    p->qtail = r;
    r->queued = 1;
    if (out)
        *out = (fnw_http_req *)r;
    pool_kick(c, p);
    return 0;
oom:
    fnw_error_set(err, "HTTP %s: out of memory", r->what); /* before r goes back: it may be freed */
    req_recycle(c, r);
    return -1;
}
