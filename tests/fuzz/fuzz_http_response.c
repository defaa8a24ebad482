/* tests/fuzz/fuzz_http_response.c — fuzz target for what a hostile HTTP
 * server can send the http client's plain HTTP/1.1 path
 * (ops/clients/http_h1.c): the input is the server's whole answer to one GET
 * to http://127.0.0.1:PORT/x, written on a real loopback connection (a
 * listener of the target's own) in two parts, split at a point the first
 * input byte picks, and then the connection is closed.
 *
 * Properties (abort() on violation):
 * - the request ends in exactly one callback, within the request's timeout;
 * - a DONE answer has a status 100..999 (a final one: 200..999), a body no
 *   longer than the client's limit (4096 bytes), NUL-terminated; any other
 *   outcome carries a message;
 * - the same answer split at another point ends the same way (outcome,
 *   status, body): the reader does not depend on how bytes arrive;
 * - nothing leaks (LSan) and nothing is read out of bounds (ASan).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ev.h>

#include "ops/clients/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIMIT 4096
#define MAX_INPUT 65536

static struct ev_loop *loop;
static fnw_http *client;
static int lsock = -1;
static char url[64];

typedef struct result {
    int calls;
    fnw_http_outcome outcome;
    long status;
    size_t body_len;
    char body[LIMIT + 1];
} result;

static void die(const char *what)
{
    fprintf(stderr, "fuzz_http_response: %s\n", what);
    abort();
}

static void setup(void)
{
    loop = ev_default_loop(0);
    fnw_http_config cfg = { .max_host_connections = 1, .max_response_bytes = LIMIT };
    fnw_error err;
    if (!(client = fnw_http_new(loop, &cfg, &err)))
        die(err.msg);
    lsock = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;
    if (lsock < 0 || bind(lsock, (struct sockaddr *)&a, sizeof a) != 0 || listen(lsock, 16) != 0 ||
        getsockname(lsock, (struct sockaddr *)&a, &al) != 0)
        die("cannot listen on 127.0.0.1");
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", ntohs(a.sin_port));
}

static void on_done(void *user, const fnw_http_response *resp, const fnw_error *err)
{
    result *r = user;
    r->calls++;
    r->outcome = resp->outcome;
    r->status = resp->status;
    r->body_len = 0;
    if (resp->outcome == FNW_HTTP_DONE) {
        if (resp->status < 200 || resp->status > 999)
            die("a DONE answer with a status outside 200..999");
        if (resp->body_len > LIMIT)
            die("a body over the client's limit");
        if (resp->body[resp->body_len] != '\0')
            die("a body without its NUL");
        memcpy(r->body, resp->body, resp->body_len);
        r->body_len = resp->body_len;
    } else if (!err || !err->msg[0]) {
        die("a failed request without a message");
    }
}

/* Runs the loop a little at a time until cond(arg) or the deadline. */
static int run_until(int (*cond)(void *), void *arg, double seconds)
{
    double end = ev_time() + seconds;
    while (!cond(arg)) {
        if (ev_time() > end)
            return -1;
        ev_run(loop, EVRUN_NOWAIT);
        usleep(200);
    }
    return 0;
}

typedef struct server {
    int fd;
    char head[8192];
    size_t n;
} server;

static int accepted(void *arg)
{
    server *s = arg;
    s->fd = accept4(lsock, NULL, NULL, SOCK_NONBLOCK);
    return s->fd >= 0;
}

static int read_head(void *arg)
{
    server *s = arg;
    ssize_t k = read(s->fd, s->head + s->n, sizeof s->head - 1 - s->n);
    if (k > 0)
        s->n += (size_t)k;
    s->head[s->n] = '\0';
    return strstr(s->head, "\r\n\r\n") != NULL || k == 0 || s->n + 1 >= sizeof s->head;
}

static int finished(void *arg)
{
    return ((result *)arg)->calls > 0;
}

static void send_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
        } else if (k < 0 && errno != EAGAIN && errno != EINTR) {
            return; /* the client closed: it has decided */
        } else {
            ev_run(loop, EVRUN_NOWAIT);
        }
    }
}

/* One request answered with body split at cut; the result in r. */
static void exchange(const uint8_t *body, size_t n, size_t cut, result *r)
{
    memset(r, 0, sizeof *r);
    fnw_http_request rq = { .method = "GET", .url = url, .timeout_ms = 3000 };
    fnw_error err;
    if (fnw_http_send(client, &rq, on_done, r, NULL, &err) != 0)
        die(err.msg);
    server s = { .fd = -1 };
    if (run_until(accepted, &s, 5) != 0)
        die("the client never connected");
    if (run_until(read_head, &s, 5) != 0)
        die("the client never sent its request head");
    send_all(s.fd, body, cut);
    for (int i = 0; i < 5; i++) {
        ev_run(loop, EVRUN_NOWAIT);
        usleep(100);
    }
    send_all(s.fd, body + cut, n - cut);
    shutdown(s.fd, SHUT_WR);
    if (run_until(finished, r, 10) != 0)
        die("the request did not end within its timeout");
    close(s.fd);
    ev_run(loop, EVRUN_NOWAIT);
    if (r->calls != 1)
        die("the callback ran more than once");
    if (fnw_http_in_flight(client) != 0)
        die("a finished request is still in flight");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!loop)
        setup();
    if (size < 1 || size > MAX_INPUT)
        return 0;
    size_t n = size - 1, cut = n ? data[0] % (n + 1) : 0;
    const uint8_t *body = data + 1;
    static result a, b;
    exchange(body, n, n, &a);   /* all at once */
    exchange(body, n, cut, &b); /* in two parts */
    if (a.outcome != b.outcome || a.status != b.status || a.body_len != b.body_len ||
        memcmp(a.body, b.body, a.body_len) != 0) {
        /* A timeout is the only answer that may depend on arrival; every
         * answer here ends with the connection closed, so none may. */
        fprintf(stderr, "outcomes %d/%d, status %ld/%ld, body %zu/%zu bytes (cut at %zu of %zu)\n",
                (int)a.outcome, (int)b.outcome, a.status, b.status, a.body_len, b.body_len, cut, n);
        die("the same answer ended differently when split");
    }
    return 0;
}
