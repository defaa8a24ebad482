/* pool/relay_link.c — a worker's link to its launcher for PyFlink's
 * Python worker (see relay_link.h): the pool's end of the worker's
 * --relay-fd socket, the line readers on both sides, the children asked
 * for, and the bounded queue towards the worker. */
#include "pool/relay_link.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pool/wire.h"

/* A launcher line: "C <n> " and an output line of FNW_WIRE_LINE_MAX bytes. */
#define LAUNCHER_LINE_MAX (FNW_WIRE_LINE_MAX + 64)
/* The pool's log gets at most this many complaints about one worker's lines. */
#define COMPLAINTS_MAX 8

typedef struct kid {
    uint32_t n; /* 0: a free entry */
    int spawned, kill_sent;
} kid;

struct fnw_relay_link {
    struct ev_loop *loop;
    char worker_id[64];
    fnw_relay_link_events ev;
    int fd; /* -1 once closed */
    ev_io rd, wr;
    char wline[FNW_RELAY_LINK_WORKER_LINE_MAX + 1]; /* from the worker */
    size_t wlen;
    int wskip;                         /* the line is too long: skip to its end */
    char lline[LAUNCHER_LINE_MAX + 1]; /* from the launcher */
    size_t llen;
    int lcut;  /* the line was cut: drop the rest of it */
    char *out; /* to the worker */
    size_t out_len, out_off, out_cap;
    unsigned long long dropped; /* C lines dropped since the last notice */
    kid kids[FNW_RELAY_LINK_CHILDREN_MAX];
    uint32_t last_n;
    unsigned complaints;
    int closed; /* the worker is gone: nothing more goes to it */
};

static void complain(fnw_relay_link *k, const char *fmt, const char *what)
{
    if (k->complaints >= COMPLAINTS_MAX)
        return;
    k->complaints++;
    fprintf(stderr, "fnworker pool: worker %s: ", k->worker_id);
    fprintf(stderr, fmt, what);
    fputs(k->complaints == COMPLAINTS_MAX ? " (no more of these for this worker)\n" : "\n", stderr);
}

static kid *find_kid(fnw_relay_link *k, uint32_t n)
{
    for (size_t i = 0; i < FNW_RELAY_LINK_CHILDREN_MAX; i++)
        if (k->kids[i].n == n && n)
            return &k->kids[i];
    return NULL;
}

unsigned fnw_relay_link_running(const fnw_relay_link *k)
{
    unsigned r = 0;
    for (size_t i = 0; i < FNW_RELAY_LINK_CHILDREN_MAX; i++)
        r += k->kids[i].n != 0;
    return r;
}

/* ---- towards the worker ------------------------------------------------------------- */

static void stop_worker_side(fnw_relay_link *k)
{
    if (k->fd < 0)
        return;
    ev_io_stop(k->loop, &k->rd);
    ev_io_stop(k->loop, &k->wr);
    close(k->fd);
    k->fd = -1;
    k->closed = 1;
    k->out_len = k->out_off = 0;
}

static void flush_worker(fnw_relay_link *k)
{
    while (k->fd >= 0 && k->out_off < k->out_len) {
        ssize_t n = send(k->fd, k->out + k->out_off, k->out_len - k->out_off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            ev_io_start(k->loop, &k->wr);
            return;
        }
        if (n < 0) { /* the worker is gone; its end's EOF follows */
            k->out_len = k->out_off = 0;
            break;
        }
        k->out_off += (size_t)n;
    }
    k->out_len = k->out_off = 0;
    ev_io_stop(k->loop, &k->wr);
}

static void on_worker_writable(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    flush_worker(w->data);
}

/* Queues a line for the worker; an output line (droppable) only while less
 * than FNW_RELAY_LINK_OUT_MAX bytes wait. */
static void to_worker(fnw_relay_link *k, const char *line, size_t n, int droppable)
{
    if (k->closed || k->fd < 0)
        return;
    size_t waiting = k->out_len - k->out_off;
    if (droppable && waiting + n > FNW_RELAY_LINK_OUT_MAX) {
        k->dropped++;
        return;
    }
    if (k->out_off && k->out_off == k->out_len)
        k->out_len = k->out_off = 0;
    if (k->out_off > k->out_cap / 2) { /* reclaim the written part */
        memmove(k->out, k->out + k->out_off, waiting);
        k->out_len = waiting;
        k->out_off = 0;
    }
    if (k->out_len + n > k->out_cap) {
        size_t cap = k->out_cap ? k->out_cap : 4096;
        while (cap < k->out_len + n)
            cap *= 2;
        char *p = realloc(k->out, cap);
        if (!p) { /* out of memory: the line is lost; the worker gives up on a child after KILL */
            complain(k, "out of memory queueing a line for the worker%s", "");
            return;
        }
        k->out = p;
        k->out_cap = cap;
    }
    memcpy(k->out + k->out_len, line, n);
    k->out_len += n;
    flush_worker(k);
}

static void to_worker_fmt(fnw_relay_link *k, int droppable, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void to_worker_fmt(fnw_relay_link *k, int droppable, const char *fmt, ...)
{
    char line[LAUNCHER_LINE_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line) { /* cut, keeping the newline */
        n = (int)sizeof line - 1;
        line[n - 1] = '\n';
    }
    to_worker(k, line, (size_t)n, droppable);
}

/* ---- towards the launcher ----------------------------------------------------------- */

static void send_kill(fnw_relay_link *k, kid *c)
{
    if (c->kill_sent)
        return;
    c->kill_sent = 1;
    char line[32];
    int n = snprintf(line, sizeof line, "KILL %u\n", c->n);
    k->ev.to_launcher(k->ev.ctx, line, (size_t)n);
}

static void on_spawn(fnw_relay_link *k, const fnw_wire_relay_line *l)
{
    const char *why = NULL;
    char buf[96];
    if (l->n <= k->last_n) {
        snprintf(buf, sizeof buf, "child numbers must grow (the last was %u)", k->last_n);
        why = buf;
    } else if (fnw_relay_link_running(k) >= FNW_RELAY_LINK_CHILDREN_MAX) {
        snprintf(buf, sizeof buf, "%d Python workers of this worker still run (at most %d)",
                 FNW_RELAY_LINK_CHILDREN_MAX, FNW_RELAY_LINK_CHILDREN_MAX);
        why = buf;
    }
    if (why) {
        complain(k, "refused SPAWN: %s", why);
        to_worker_fmt(k, 0, "SPAWNFAIL %u the fnworker pool refused it: %s\n", l->n, why);
        return;
    }
    kid *c = NULL;
    for (size_t i = 0; !c && i < FNW_RELAY_LINK_CHILDREN_MAX; i++)
        if (!k->kids[i].n)
            c = &k->kids[i];
    memset(c, 0, sizeof *c);
    c->n = l->n;
    k->last_n = l->n;
    char line[2 * FNW_WIRE_RELAY_ARG_MAX + 64];
    int n = snprintf(line, sizeof line, "SPAWN %u %.*s %s\n", l->n, (int)l->text_len, l->id, l->endpoint);
    k->ev.to_launcher(k->ev.ctx, line, (size_t)n);
}

static void worker_line(fnw_relay_link *k, const char *line)
{
    fnw_wire_relay_line l;
    fnw_error err = { { 0 } };
    if (fnw_wire_worker_line(line, &l, &err) < 0) {
        complain(k, "refused a line on its relay socket: %s", err.msg);
        if (l.n && l.verb == FNW_WIRE_SPAWN && l.n > k->last_n && !k->closed)
            to_worker_fmt(k, 0, "SPAWNFAIL %u the fnworker pool refused it: %s\n", l.n, err.msg);
        return;
    }
    if (l.verb == FNW_WIRE_SPAWN) {
        on_spawn(k, &l);
        return;
    }
    kid *c = find_kid(k, l.n);
    if (c)
        send_kill(k, c);
}

static void worker_gone(fnw_relay_link *k)
{
    stop_worker_side(k);
    for (size_t i = 0; i < FNW_RELAY_LINK_CHILDREN_MAX; i++)
        if (k->kids[i].n)
            send_kill(k, &k->kids[i]);
}

static void on_worker_readable(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    fnw_relay_link *k = w->data;
    char buf[4096];
    ssize_t n = recv(k->fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        worker_gone(k);
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        char ch = buf[i];
        if (ch != '\n') {
            if (k->wskip)
                continue;
            if (k->wlen == FNW_RELAY_LINK_WORKER_LINE_MAX || ch == '\0') {
                complain(k, "refused a line on its relay socket: %s",
                         ch ? "longer than 1024 bytes" : "it holds a NUL byte");
                k->wskip = 1;
                continue;
            }
            k->wline[k->wlen++] = ch;
            continue;
        }
        if (!k->wskip) {
            if (k->wlen && k->wline[k->wlen - 1] == '\r')
                k->wlen--;
            k->wline[k->wlen] = '\0';
            worker_line(k, k->wline);
        }
        k->wlen = 0;
        k->wskip = 0;
        if (k->fd < 0)
            return;
    }
}

/* ---- from the launcher -------------------------------------------------------------- */

static void launcher_line(fnw_relay_link *k, const char *line, size_t len)
{
    fnw_wire_relay_line l;
    if (fnw_wire_launcher_line(line, len, &l) < 0)
        return; /* not a relay line: a later version's, or noise */
    kid *c = find_kid(k, l.n);
    if (!c)
        return; /* a child this worker did not ask for, or one that ended */
    switch (l.verb) {
    case FNW_WIRE_SPAWNED:
        if (c->spawned)
            return;
        c->spawned = 1;
        to_worker_fmt(k, 0, "SPAWNED %u %lld\n", l.n, l.value);
        return;
    case FNW_WIRE_C:
        if (k->dropped && !k->closed && k->out_len - k->out_off + 200 + l.text_len <= FNW_RELAY_LINK_OUT_MAX) {
            to_worker_fmt(k, 1,
                          "C %u [fnworker pool: %llu lines of the Python worker's output were not passed "
                          "to fnworker, which read too slowly; the boot log has them]\n",
                          l.n, k->dropped);
            k->dropped = 0;
        }
        to_worker_fmt(k, 1, "C %u %.*s\n", l.n, (int)l.text_len, l.text);
        return;
    case FNW_WIRE_SPAWNFAIL:
        to_worker_fmt(k, 0, "SPAWNFAIL %u %.*s\n", l.n, (int)l.text_len, l.text);
        c->n = 0;
        return;
    case FNW_WIRE_CHILDEXIT:
        to_worker_fmt(k, 0, "CHILDEXIT %u %lld\n", l.n, l.value);
        c->n = 0;
        return;
    default:
        return;
    }
}

void fnw_relay_link_from_launcher(fnw_relay_link *k, const char *data, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char ch = data[i];
        if (ch != '\n') {
            if (k->llen == LAUNCHER_LINE_MAX) {
                k->lcut = 1; /* the line goes on as it is; the rest is dropped */
                continue;
            }
            k->lline[k->llen++] = ch ? ch : '?';
            continue;
        }
        if (!k->lcut && k->llen && k->lline[k->llen - 1] == '\r')
            k->llen--;
        k->lline[k->llen] = '\0';
        launcher_line(k, k->lline, k->llen);
        k->llen = 0;
        k->lcut = 0;
    }
}

/* ---- the object --------------------------------------------------------------------- */

fnw_relay_link *fnw_relay_link_new(struct ev_loop *loop, const char *worker_id,
                                   const fnw_relay_link_events *ev, int *worker_fd, fnw_error *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        fnw_error_set(err, "cannot create the worker's relay socket: %s", strerror(errno));
        return NULL;
    }
    fnw_relay_link *k = calloc(1, sizeof *k);
    if (!k) {
        close(sv[0]);
        close(sv[1]);
        fnw_error_set(err, "out of memory");
        return NULL;
    }
    k->loop = loop;
    snprintf(k->worker_id, sizeof k->worker_id, "%s", worker_id);
    k->ev = *ev;
    k->fd = sv[0];
    fcntl(k->fd, F_SETFL, fcntl(k->fd, F_GETFL) | O_NONBLOCK);
    ev_io_init(&k->rd, on_worker_readable, k->fd, EV_READ);
    ev_io_init(&k->wr, on_worker_writable, k->fd, EV_WRITE);
    k->rd.data = k->wr.data = k;
    ev_io_start(loop, &k->rd);
    *worker_fd = sv[1];
    return k;
}

void fnw_relay_link_close(fnw_relay_link *k)
{
    if (k)
        worker_gone(k);
}

void fnw_relay_link_free(fnw_relay_link *k)
{
    if (!k)
        return;
    stop_worker_side(k);
    free(k->out);
    free(k);
}
