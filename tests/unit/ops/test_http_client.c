/* tests/unit/ops/test_http_client.c — the HTTP client against real servers on
 * 127.0.0.1: the Python test server (tests/servers/http_server.py) for
 * round trips, concurrency, timeouts, cancel, statuses and limits, and nginx
 * for keep-alive and HTTP/2 over TLS. Skips with one line when python3 (or,
 * for the nginx cases, nginx) is not installed.
 */
#include <check.h>
#include <jansson.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/check_run.h"
#include "tests/unit/test_servers.h"

#include "ops/clients/http.h"

static char py_dir[128], ng_dir[128];
static int py_port, ng_port, ng_tls_port;

static void py_up(void)
{
    char out[64], owner[32];
    srv_dir(py_dir, sizeof py_dir, "py");
    snprintf(owner, sizeof owner, "--owner %d", (int)getpid());
    ck_assert_int_eq(srv_cmd("pyhttp.sh", "start", py_dir, owner, out, sizeof out), 0);
    py_port = atoi(out);
    ck_assert_int_gt(py_port, 0);
}

static void py_down(void)
{
    srv_cmd("pyhttp.sh", "stop", py_dir, NULL, NULL, 0);
    srv_rmdir(py_dir);
}

static void ng_up(void)
{
    char out[64], owner[32];
    srv_dir(ng_dir, sizeof ng_dir, "nginx");
    snprintf(owner, sizeof owner, "--owner %d", (int)getpid());
    ck_assert_int_eq(srv_cmd("nginx.sh", "start", ng_dir, owner, out, sizeof out), 0);
    ck_assert_int_eq(sscanf(out, "%d %d", &ng_port, &ng_tls_port), 2);
}

static void ng_down(void)
{
    srv_cmd("nginx.sh", "stop", ng_dir, NULL, NULL, 0);
    srv_rmdir(ng_dir);
}

/* ---- one result per request ---------------------------------------------- */

typedef struct result {
    int called;
    fnw_http_outcome outcome;
    long status;
    int version;
    int64_t retry_after;
    char body[512];
    size_t body_len;
    char ctype[64];
    char err[FNW_ERROR_MAX];
} result;

static void on_done(void *user, const fnw_http_response *resp, const fnw_error *err)
{
    result *r = user;
    r->called++;
    r->outcome = resp->outcome;
    r->status = resp->status;
    r->version = resp->http_version;
    r->retry_after = resp->retry_after_s;
    r->body_len = resp->body_len;
    snprintf(r->body, sizeof r->body, "%s", resp->body ? resp->body : "");
    snprintf(r->ctype, sizeof r->ctype, "%s", resp->content_type ? resp->content_type : "");
    snprintf(r->err, sizeof r->err, "%s", err ? err->msg : "");
    ck_assert((err == NULL) == (resp->outcome == FNW_HTTP_DONE));
}

typedef struct client {
    struct ev_loop *loop;
    fnw_http *h;
    fnw_error err;
} client;

static void client_init(client *c, const fnw_http_config *cfg)
{
    c->loop = ev_loop_new(EVFLAG_AUTO);
    c->h = fnw_http_new(c->loop, cfg, &c->err);
    ck_assert_msg(c->h != NULL, "%s", c->err.msg);
}

static void client_free(client *c)
{
    ck_assert_uint_eq(fnw_http_in_flight(c->h), 0);
    fnw_http_free(c->h);
    ev_loop_destroy(c->loop);
}

static void url(char *buf, size_t n, int port, const char *path)
{
    snprintf(buf, n, "http://127.0.0.1:%d%s", port, path);
}

/* One request, run to completion. */
static void fetch(client *c, const fnw_http_request *rq, result *r)
{
    memset(r, 0, sizeof *r);
    ck_assert_msg(fnw_http_send(c->h, rq, on_done, r, NULL, &c->err) == 0, "%s", c->err.msg);
    srv_run_until(c->loop, &r->called, 20);
    ck_assert_int_eq(r->called, 1);
}

static void get(client *c, const char *path, size_t limit, result *r)
{
    char u[256];
    url(u, sizeof u, py_port, path);
    fnw_http_request rq = { .url = u, .max_response_bytes = limit };
    fetch(c, &rq, r);
}

/* ---- Python server --------------------------------------------------------- */

START_TEST(test_get_fixture)
{
    client c;
    client_init(&c, NULL);
    result r;
    get(&c, "/json/a", 0, &r);
    ck_assert_int_eq(r.outcome, FNW_HTTP_DONE);
    ck_assert_int_eq(r.status, 200);
    ck_assert_int_eq(r.version, 11);
    ck_assert_str_eq(r.body, "{\"key\":\"a\",\"n\":1}");
    ck_assert_uint_eq(r.body_len, strlen("{\"key\":\"a\",\"n\":1}"));
    ck_assert_str_eq(r.ctype, "application/json");
    ck_assert_int_eq(r.retry_after, -1);
    get(&c, "/json/nope", 0, &r);
    ck_assert_int_eq(r.status, 404);
    client_free(&c);
}
END_TEST

/* Easy handles and header lists are reused between requests: each request
 * still carries exactly its own method, body and headers. */
START_TEST(test_reuse_keeps_requests_apart)
{
    client c;
    client_init(&c, NULL);
    result r;
    char u[256];
    url(u, sizeof u, py_port, "/headers");
    fnw_http_header a1[] = { "X-A: 1" }, a2[] = { "X-A: 2" };
    fnw_http_request rq = { .url = u, .headers = a1, .n_headers = 1 };
    fetch(&c, &rq, &r);
    ck_assert_ptr_nonnull(strstr(r.body, "\"x-a\": \"1\""));
    fetch(&c, &rq, &r);                 /* the same list again */
    ck_assert_ptr_nonnull(strstr(r.body, "\"x-a\": \"1\""));
    rq.headers = a2;
    fetch(&c, &rq, &r);
    ck_assert_ptr_nonnull(strstr(r.body, "\"x-a\": \"2\""));
    rq.n_headers = 0;
    fetch(&c, &rq, &r);
    ck_assert_ptr_null(strstr(r.body, "x-a"));
    char e[256];
    url(e, sizeof e, py_port, "/echo");
    fnw_http_request post = { .method = "POST", .url = e, .body = "[7]", .body_len = 3 };
    fetch(&c, &post, &r);
    ck_assert_str_eq(r.body, "[7]");
    get(&c, "/json/a", 0, &r);          /* a GET after a POST on a reused handle */
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "{\"key\":\"a\",\"n\":1}");
    client_free(&c);
}
END_TEST

/* The proxy variables are read when the client is made: one set then sends
 * every request to that proxy (here: nothing listens, so none connects). */
START_TEST(test_proxy_variable_read_at_creation)
{
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    setenv("http_proxy", "http://127.0.0.1:1", 1);
    client c;
    client_init(&c, NULL);
    result r;
    get(&c, "/json/a", 0, &r);
    ck_assert_int_eq(r.outcome, FNW_HTTP_CONNECT);
    client_free(&c);
    unsetenv("http_proxy");
    client_init(&c, NULL);
    get(&c, "/json/a", 0, &r);
    ck_assert_int_eq(r.status, 200);
    client_free(&c);
}
END_TEST

START_TEST(test_post_copied_and_borrowed_bodies)
{
    client c;
    client_init(&c, NULL);
    char u[256];
    url(u, sizeof u, py_port, "/echo");
    static const fnw_http_header hdr[] = { "Content-Type: application/json" };
    char body[64];
    snprintf(body, sizeof body, "{\"copied\":true}");
    fnw_http_request rq = { .method = "POST", .url = u, .headers = hdr, .n_headers = 1,
                            .body = body, .body_len = strlen(body), .copy_body = 1 };
    result r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(fnw_http_send(c.h, &rq, on_done, &r, NULL, &c.err), 0);
    memset(body, 'x', sizeof body);      /* copied at send: the caller may reuse it */
    srv_run_until(c.loop, &r.called, 20);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "{\"copied\":true}");

    static const char borrowed[] = "{\"borrowed\":[1,2]}";
    rq.body = borrowed;
    rq.body_len = strlen(borrowed);
    rq.copy_body = 0;
    fetch(&c, &rq, &r);
    ck_assert_str_eq(r.body, borrowed);

    url(u, sizeof u, py_port, "/batch");
    static const char batch[] = "{\"inputs\":[1,\"ab\",null,2.5]}";
    rq.body = batch;
    rq.body_len = strlen(batch);
    fetch(&c, &rq, &r);
    json_error_t je;
    json_t *doc = json_loads(r.body, 0, &je), *want = json_loads("{\"outputs\":[2,\"AB\",null,5.0]}", 0, &je);
    ck_assert_ptr_nonnull(doc);
    ck_assert(json_equal(doc, want));
    json_decref(doc);
    json_decref(want);
    client_free(&c);
}
END_TEST

/* 1,000 requests in flight at once on one loop, through at most 8
 * connections: each gets its own answer, and the connections are reused. */
typedef struct many {
    int done, bad, all;
    int want;
    result r[1000];
} many;

static many *g_many;

static void on_many(void *user, const fnw_http_response *resp, const fnw_error *err)
{
    result *r = user;
    on_done(user, resp, err);
    int i = (int)(r - g_many->r);
    char want[64];
    snprintf(want, sizeof want, "{\"i\":%d}", i);
    if (resp->status != 200 || strcmp(r->body, want) != 0)
        g_many->bad++;
    if (++g_many->done == g_many->want)
        g_many->all = 1;
}

static long count_field(client *c, const char *field)
{
    result r;
    get(c, "/count", 0, &r);
    json_error_t je;
    json_t *doc = json_loads(r.body, 0, &je);
    ck_assert_ptr_nonnull(doc);
    long v = (long)json_integer_value(json_object_get(doc, field));
    json_decref(doc);
    return v;
}

START_TEST(test_thousand_in_flight)
{
    fnw_http_config cfg = { .max_host_connections = 8 };
    client c;
    client_init(&c, &cfg);
    long conns0 = count_field(&c, "connections");
    many *m = calloc(1, sizeof *m);
    g_many = m;
    m->want = 1000;
    char u[256];
    url(u, sizeof u, py_port, "/echo");
    static char bodies[1000][24];
    for (int i = 0; i < 1000; i++) {
        snprintf(bodies[i], sizeof bodies[i], "{\"i\":%d}", i);
        fnw_http_request rq = { .method = "POST", .url = u, .body = bodies[i], .body_len = strlen(bodies[i]) };
        ck_assert_int_eq(fnw_http_send(c.h, &rq, on_many, &m->r[i], NULL, &c.err), 0);
    }
    ck_assert_uint_eq(fnw_http_in_flight(c.h), 1000);
    srv_run_until(c.loop, &m->all, 120);
    ck_assert_int_eq(m->bad, 0);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(m->r[i].called, 1);
    /* the /count request itself may open one more connection */
    long opened = count_field(&c, "connections") - conns0;
    ck_assert_msg(opened <= 9, "%ld connections for 1000 requests (max 8 per host)", opened);
    free(m);
    client_free(&c);
}
END_TEST

START_TEST(test_timeout)
{
    client c;
    client_init(&c, NULL);
    char u[256];
    url(u, sizeof u, py_port, "/delay?ms=60000");
    fnw_http_request rq = { .url = u, .timeout_ms = 100 };
    result r;
    fetch(&c, &rq, &r);
    ck_assert_int_eq(r.outcome, FNW_HTTP_TIMEOUT);
    ck_assert_int_eq(r.status, 0);
    char want[128];
    snprintf(want, sizeof want, "HTTP GET 127.0.0.1:%d/delay: no complete response within the request's "
             "timeout of 100 ms", py_port);
    ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
    client_free(&c);
}
END_TEST

/* A cancelled request's callback never runs: cancelled at once, and
 * cancelled from another request's callback while its answer is on the way. */
typedef struct canceller {
    result r;
    fnw_http_req *victim;
} canceller;

static void on_cancel_other(void *user, const fnw_http_response *resp, const fnw_error *err)
{
    canceller *k = user;
    on_done(&k->r, resp, err);
    fnw_http_cancel(k->victim);
}

START_TEST(test_cancel)
{
    client c;
    client_init(&c, NULL);
    char slow[256], fast[256], later[256];
    url(slow, sizeof slow, py_port, "/delay?ms=60000");     /* never answers in time */
    url(fast, sizeof fast, py_port, "/json/a");
    url(later, sizeof later, py_port, "/delay?ms=300");
    result a, b, l;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&l, 0, sizeof l);
    canceller k;
    memset(&k, 0, sizeof k);
    fnw_http_req *ra = NULL;
    fnw_http_request rs = { .url = slow }, rf = { .url = fast }, rl = { .url = later };
    ck_assert_int_eq(fnw_http_send(c.h, &rs, on_done, &a, &ra, &c.err), 0);
    fnw_http_cancel(ra);                                    /* before the loop ever ran */
    ck_assert_int_eq(fnw_http_send(c.h, &rs, on_done, &b, &k.victim, &c.err), 0);
    ck_assert_int_eq(fnw_http_send(c.h, &rf, on_cancel_other, &k, NULL, &c.err), 0);
    ck_assert_int_eq(fnw_http_send(c.h, &rl, on_done, &l, NULL, &c.err), 0);
    srv_run_until(c.loop, &l.called, 20);                  /* the loop went on */
    ck_assert_int_eq(k.r.called, 1);
    ck_assert_int_eq(a.called, 0);
    ck_assert_int_eq(b.called, 0);
    ck_assert_int_eq(l.status, 200);
    client_free(&c);
}
END_TEST

START_TEST(test_statuses_and_retry_after)
{
    client c;
    client_init(&c, NULL);
    result r;
    get(&c, "/status/503", 0, &r);
    ck_assert_int_eq(r.outcome, FNW_HTTP_DONE);
    ck_assert_int_eq(r.status, 503);
    ck_assert_str_eq(r.err, "");
    get(&c, "/429?after=7&key=k1", 0, &r);
    ck_assert_int_eq(r.status, 429);
    ck_assert_int_eq(r.retry_after, 7);
    get(&c, "/429?after=7&key=k1", 0, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_int_eq(r.retry_after, -1);
    /* an HTTP date in the past means "now"; one far ahead is seconds away */
    get(&c, "/429?key=k2&after=Thu,%2001%20Jan%201970%2000:00:00%20GMT", 0, &r);
    ck_assert_int_eq(r.status, 429);
    ck_assert_int_eq(r.retry_after, 0);
    get(&c, "/429?key=k3&after=Fri,%2001%20Jan%202100%2000:00:00%20GMT", 0, &r);
    ck_assert_int_gt(r.retry_after, 365LL * 24 * 3600);
    get(&c, "/429?key=k4&after=soon", 0, &r);
    ck_assert_int_eq(r.retry_after, -1);
    client_free(&c);
}
END_TEST

START_TEST(test_body_limit)
{
    client c;
    fnw_http_config cfg = { .max_response_bytes = 1000 };
    client_init(&c, &cfg);
    result r;
    get(&c, "/json/big", 0, &r);
    ck_assert_int_eq(r.outcome, FNW_HTTP_TOO_LARGE);
    ck_assert_msg(strstr(r.err, "larger than the limit of 1000 bytes") != NULL, "%s", r.err);
    get(&c, "/json/a", 0, &r);                       /* under the limit */
    ck_assert_int_eq(r.status, 200);
    get(&c, "/json/big", 1 << 20, &r);               /* a per-request limit wins */
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_gt(r.body_len, 200000);
    client_free(&c);
}
END_TEST

START_TEST(test_connect_failure_and_bad_requests)
{
    client c;
    client_init(&c, NULL);
    int port = srv_closed_port();
    char u[256];
    url(u, sizeof u, port, "/x?secret=1");
    fnw_http_request rq = { .url = u };
    result r;
    fetch(&c, &rq, &r);
    ck_assert_int_eq(r.outcome, FNW_HTTP_CONNECT);
    char want[128];
    snprintf(want, sizeof want, "HTTP GET 127.0.0.1:%d/x: cannot connect: ", port);
    ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
    ck_assert_ptr_null(strstr(r.err, "secret"));

    fnw_http_request bad = { .url = "ftp://127.0.0.1/x" };
    ck_assert_int_eq(fnw_http_send(c.h, &bad, on_done, &r, NULL, &c.err), -1);
    ck_assert_str_eq(c.err.msg, "HTTP GET: 'ftp://127.0.0.1/x' is not an http:// or https:// URL");
    fnw_http_request lower = { .method = "get", .url = u };
    ck_assert_int_eq(fnw_http_send(c.h, &lower, on_done, &r, NULL, &c.err), -1);
    ck_assert_str_eq(c.err.msg, "HTTP: 'get' is not a method (upper-case letters, at most 16)");
    client_free(&c);
}
END_TEST

/* The plain HTTP/1.1 path (http_h1.c) reads every framing a server may
 * choose: chunked with an extension and a trailer, a body ended by the
 * connection's close, an interim 100 before the answer; HEAD has no body. */
START_TEST(test_response_framings)
{
    client c;
    client_init(&c, NULL);
    result r;
    static const char *const forms[] = { "chunked", "close", "interim" };
    for (size_t i = 0; i < 3; i++) {
        char path[64], want[64];
        snprintf(path, sizeof path, "/wire?form=%s", forms[i]);
        snprintf(want, sizeof want, "{\"form\": \"%s\"}", forms[i]);
        get(&c, path, 0, &r);
        ck_assert_msg(r.outcome == FNW_HTTP_DONE, "%s: %s", forms[i], r.err);
        ck_assert_int_eq(r.status, 200);
        ck_assert_int_eq(r.version, 11);
        ck_assert_str_eq(r.body, want);
        ck_assert_str_eq(r.ctype, "application/json");
    }
    get(&c, "/wire?form=chunked", 5, &r); /* the limit holds across chunks */
    ck_assert_int_eq(r.outcome, FNW_HTTP_TOO_LARGE);
    char u[256];
    url(u, sizeof u, py_port, "/json/a");
    fnw_http_request head = { .method = "HEAD", .url = u };
    fetch(&c, &head, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.body_len, 0);
    client_free(&c);
}
END_TEST

/* A server that closes a kept-alive connection without saying so: the
 * request sent on it at once (from the callback, before the loop sees the
 * close) goes again on a new connection instead of failing. */
typedef struct bye_state {
    client *c;
    result first, second;
} bye_state;

static void on_bye(void *user, const fnw_http_response *resp, const fnw_error *err)
{
    bye_state *b = user;
    on_done(&b->first, resp, err);
    char u[256];
    url(u, sizeof u, py_port, "/json/a");
    fnw_http_request rq = { .url = u };
    ck_assert_int_eq(fnw_http_send(b->c->h, &rq, on_done, &b->second, NULL, &b->c->err), 0);
}

START_TEST(test_reused_connection_closed_by_server)
{
    client c;
    client_init(&c, NULL);
    bye_state b;
    memset(&b, 0, sizeof b);
    b.c = &c;
    char u[256];
    url(u, sizeof u, py_port, "/wire?form=bye");
    fnw_http_request rq = { .url = u };
    for (int i = 0; i < 5; i++) {
        memset(&b.first, 0, sizeof b.first);
        memset(&b.second, 0, sizeof b.second);
        ck_assert_int_eq(fnw_http_send(c.h, &rq, on_bye, &b, NULL, &c.err), 0);
        srv_run_until(c.loop, &b.second.called, 20);
        ck_assert_int_eq(b.first.status, 200);
        ck_assert_msg(b.second.outcome == FNW_HTTP_DONE, "%s", b.second.err);
        ck_assert_str_eq(b.second.body, "{\"key\":\"a\",\"n\":1}");
    }
    client_free(&c);
}
END_TEST

/* A host name's first request goes through libcurl (its resolver), the
 * next ones to the address libcurl connected to on the plain path; the
 * Host header keeps the name. The request's own headers win over the
 * defaults (Accept, Host) on the plain path. */
START_TEST(test_host_name_and_default_headers)
{
    client c;
    client_init(&c, NULL);
    result r;
    char u[256], host[64];
    snprintf(u, sizeof u, "http://localhost:%d/json/a", py_port);
    fnw_http_request rq = { .url = u };
    for (int i = 0; i < 3; i++) {
        fetch(&c, &rq, &r);
        ck_assert_msg(r.status == 200, "%s", r.err);
        ck_assert_str_eq(r.body, "{\"key\":\"a\",\"n\":1}");
    }
    snprintf(u, sizeof u, "http://localhost:%d/headers", py_port);
    fetch(&c, &rq, &r);
    snprintf(host, sizeof host, "\"host\": \"localhost:%d\"", py_port);
    ck_assert_msg(strstr(r.body, host) != NULL, "%s", r.body);
    url(u, sizeof u, py_port, "/headers?q=1");
    fnw_http_header hs[] = { "Accept: text/plain", "X-Gone:", "X-Empty;" };
    fnw_http_request hq = { .url = u, .headers = hs, .n_headers = 3 };
    fetch(&c, &hq, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "\"accept\": \"text/plain\""));
    ck_assert_ptr_null(strstr(r.body, "*/*"));
    ck_assert_ptr_null(strstr(r.body, "x-gone"));
    ck_assert_ptr_nonnull(strstr(r.body, "\"x-empty\": \"\""));
    ck_assert_ptr_nonnull(strstr(r.body, "\"_path\": \"/headers?q=1\""));
    snprintf(host, sizeof host, "\"host\": \"127.0.0.1:%d\"", py_port);
    ck_assert_msg(strstr(r.body, host) != NULL, "%s", r.body);
    fnw_http_header smuggle[] = { "X-A: 1\r\nX-B: 2" };
    fnw_http_request sq = { .url = u, .headers = smuggle, .n_headers = 1 };
    ck_assert_int_eq(fnw_http_send(c.h, &sq, on_done, &r, NULL, &c.err), -1);
    ck_assert_msg(strstr(c.err.msg, "a header line holds a CR or LF") != NULL, "%s", c.err.msg);
    client_free(&c);
}
END_TEST

/* ---- a hostile server: canned answers on a raw socket ------------------------ */

/* One connection per answer: reads the request's head, writes the answer,
 * closes. The client's parser sees what a broken or hostile server sends. */
typedef struct canned {
    int fd;
    const char *const *answers;
    const size_t *lens;
    size_t n;
} canned;

static void *canned_main(void *arg)
{
    canned *k = arg;
    for (size_t i = 0; i < k->n; i++) {
        int c = accept(k->fd, NULL, NULL);
        if (c < 0)
            break;
        char buf[4096];
        size_t got = 0;
        while (got < sizeof buf - 1) {
            ssize_t r = read(c, buf + got, sizeof buf - 1 - got);
            if (r <= 0)
                break;
            got += (size_t)r;
            buf[got] = '\0';
            if (strstr(buf, "\r\n\r\n"))
                break;
        }
        for (size_t off = 0; off < k->lens[i];) {
            ssize_t w = send(c, k->answers[i] + off, k->lens[i] - off, MSG_NOSIGNAL);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        shutdown(c, SHUT_WR);
        usleep(20000);
        close(c);
    }
    return NULL;
}

START_TEST(test_hostile_responses)
{
    static char big_head[150 * 1024];
    size_t hl = (size_t)snprintf(big_head, sizeof big_head, "HTTP/1.1 200 OK\r\nX-Big: ");
    memset(big_head + hl, 'a', sizeof big_head - hl);
    static const char *const answers[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",             /* cut short */
        "FOO 200 OK\r\nContent-Length: 0\r\n\r\n",                    /* not HTTP */
        big_head,                                                        /* head over 100 KB */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", /* bad chunk size */
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",      /* over the limit */
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab", /* two lengths */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", /* huge chunk */
    };
    size_t lens[7];
    for (size_t i = 0; i < 7; i++)
        lens[i] = i == 2 ? sizeof big_head : strlen(answers[i]);
    static const fnw_http_outcome want[] = { FNW_HTTP_FAILED, FNW_HTTP_FAILED, FNW_HTTP_FAILED, FNW_HTTP_FAILED,
                                             FNW_HTTP_TOO_LARGE, FNW_HTTP_FAILED, FNW_HTTP_TOO_LARGE };
    static const char *const says[] = { "closed the connection before the response was complete",
                                        "status line", "head is larger than", "chunk size", "larger than the limit",
                                        "Content-Length", "larger than the limit" };
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(fd, 8), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    canned k = { fd, answers, lens, 7 };
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, canned_main, &k), 0);
    client c;
    fnw_http_config cfg = { .max_host_connections = 1, .max_response_bytes = 1 << 20 };
    client_init(&c, &cfg);
    char u[256];
    snprintf(u, sizeof u, "http://127.0.0.1:%d/x?secret=1", ntohs(a.sin_port));
    for (size_t i = 0; i < 7; i++) {
        fnw_http_request rq = { .url = u, .timeout_ms = 10000 };
        result r;
        fetch(&c, &rq, &r);
        ck_assert_msg(r.outcome == want[i], "answer %zu: outcome %d: %s", i, (int)r.outcome, r.err);
        ck_assert_msg(strstr(r.err, says[i]) != NULL, "answer %zu: %s", i, r.err);
        ck_assert_msg(strncmp(r.err, "HTTP GET 127.0.0.1:", 19) == 0 && !strstr(r.err, "secret"), "%s", r.err);
    }
    client_free(&c);
    pthread_join(th, NULL);
    close(fd);
}
END_TEST

/* Freeing the client with requests in flight: no callback runs. */
START_TEST(test_free_with_requests_in_flight)
{
    client c;
    client_init(&c, NULL);
    char u[256];
    url(u, sizeof u, py_port, "/delay?ms=100");
    result r[10];
    memset(r, 0, sizeof r);
    fnw_http_request rq = { .url = u };
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(fnw_http_send(c.h, &rq, on_done, &r[i], NULL, &c.err), 0);
    ev_run(c.loop, EVRUN_NOWAIT);
    fnw_http_free(c.h);
    srv_run_for(c.loop, 0.3);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(r[i].called, 0);
    ev_loop_destroy(c.loop);
}
END_TEST

/* ---- nginx ------------------------------------------------------------------ */

START_TEST(test_nginx_keepalive)
{
    client c;
    client_init(&c, NULL);
    char u[256];
    url(u, sizeof u, ng_port, "/json/b");
    fnw_http_request rq = { .url = u };
    for (int i = 0; i < 50; i++) {
        result r;
        fetch(&c, &rq, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.body, "{\"key\":\"b\",\"list\":[1,2,3],\"nested\":{\"ok\":true}}");
    }
    client_free(&c);
}
END_TEST

static void on_h2(void *user, const fnw_http_response *resp, const fnw_error *err)
{
    many *m = g_many;
    result *r = user;
    on_done(user, resp, err);
    if (resp->status != 200 || r->version != 20)
        m->bad++;
    if (++m->done == m->want)
        m->all = 1;
}

START_TEST(test_nginx_http2_over_tls)
{
    if (ng_tls_port == 0) {
        printf("test_http_client: HTTP/2 case skipped: openssl could not make a certificate\n");
        return;
    }
    char ca[256];
    snprintf(ca, sizeof ca, "%s/cert.pem", ng_dir);
    fnw_http_config cfg = { .ca_file = ca, .max_host_connections = 2 };
    client c;
    client_init(&c, &cfg);
    many *m = calloc(1, sizeof *m);
    g_many = m;
    m->want = 200;
    char u[256];
    snprintf(u, sizeof u, "https://127.0.0.1:%d/json/a", ng_tls_port);
    fnw_http_request rq = { .url = u };
    for (int i = 0; i < m->want; i++)
        ck_assert_int_eq(fnw_http_send(c.h, &rq, on_h2, &m->r[i], NULL, &c.err), 0);
    srv_run_until(c.loop, &m->all, 60);
    ck_assert_int_eq(m->bad, 0);
    free(m);
    client_free(&c);

    /* without the test CA the self-signed certificate is refused */
    client_init(&c, NULL);
    result r;
    fetch(&c, &rq, &r);
    ck_assert_int_eq(r.outcome, FNW_HTTP_CONNECT);
    client_free(&c);
}
END_TEST

int main(void)
{
    static const char *const py[] = { "python3", NULL };
    static const char *const ng[] = { "nginx", NULL };
    if (!srv_have("test_http_client", py))
        return 0;
    Suite *s = suite_create("http_client");
    TCase *t = tcase_create("python");
    tcase_add_unchecked_fixture(t, py_up, py_down);
    tcase_set_timeout(t, 180);
    tcase_add_test(t, test_get_fixture);
    tcase_add_test(t, test_post_copied_and_borrowed_bodies);
    tcase_add_test(t, test_reuse_keeps_requests_apart);
    tcase_add_test(t, test_proxy_variable_read_at_creation);
    tcase_add_test(t, test_thousand_in_flight);
    tcase_add_test(t, test_timeout);
    tcase_add_test(t, test_cancel);
    tcase_add_test(t, test_statuses_and_retry_after);
    tcase_add_test(t, test_body_limit);
    tcase_add_test(t, test_connect_failure_and_bad_requests);
    tcase_add_test(t, test_free_with_requests_in_flight);
    tcase_add_test(t, test_response_framings);
    tcase_add_test(t, test_reused_connection_closed_by_server);
    tcase_add_test(t, test_host_name_and_default_headers);
    tcase_add_test(t, test_hostile_responses);
    suite_add_tcase(s, t);
    if (srv_have("test_http_client (nginx cases)", ng)) {
        TCase *n = tcase_create("nginx");
        tcase_add_unchecked_fixture(n, ng_up, ng_down);
        tcase_set_timeout(n, 120);
        tcase_add_test(n, test_nginx_keepalive);
        tcase_add_test(n, test_nginx_http2_over_tls);
        suite_add_tcase(s, n);
    }
    return fnw_check_run(s);
}
