/* pool/launcher.c — connections from the launcher script (see launcher.h).
 *
 * One connection: read the request (bounded, timed), start the worker, then
 * relay: each chunk of worker output becomes protocol lines queued for the
 * socket; a queue over FNW_LAUNCHER_OUT_MAX pauses the worker's pipes until
 * the launcher catches up. EOF or an error on the socket means Flink killed
 * the launcher: the worker is stopped and forgotten (it is still reaped).
 *
 * Before a worker starts, the request must carry the pool's token (when it
 * has one) and only allowed worker flags (pool/worker_args.h). At most
 * FNW_LAUNCHER_PENDING_MAX connections may be reading their request; when
 * accept runs out of descriptors the listener rests for
 * FNW_LAUNCHER_ACCEPT_PAUSE_S, and both are logged at most once per
 * FNW_LAUNCHER_LOG_INTERVAL_S.
 *
 * Version 2 (pool/wire.h): the worker gets a relay socket (pool/relay_link.h,
 * --relay-fd=4) for asking the launcher for PyFlink's Python worker; the
 * lines the launcher sends after its request go to that link, the link's
 * SPAWN and KILL lines join the worker's output on the connection. A
 * version 1 launcher cannot start it: its worker runs with --relay=off, and
 * the launcher's boot log says so. */
#include "pool/launcher.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pool/relay_link.h"
#include "pool/wire.h"

typedef struct conn {
    struct conn *next, *prev;
    fnw_launcher *l;
    ev_io rd, wr;
    ev_timer request_timer;
    fnw_wire_request req;
    fnw_child *child;
    fnw_relay_link *link; /* version 2: the worker's relay socket */
    fnw_wire_framer framer[2];
    char *out;
    size_t out_len, out_off, out_cap;
    int closing; /* close once the queue is written */
    int pending; /* still reading its request */
} conn;

/* A problem logged at most once per FNW_LAUNCHER_LOG_INTERVAL_S. */
typedef struct quiet_log {
    double last;
    unsigned long missed;
} quiet_log;

struct fnw_launcher {
    struct ev_loop *loop;
    fnw_children *children;
    fnw_launcher_policy policy;
    ev_io accept_w;
    ev_timer resume; /* accepting again after running out of descriptors */
    int accepting;
    conn *conns;
    unsigned n_conns, n_pending;
    quiet_log accept_log, full_log;
};

/* Logs "fnworker pool: <msg>" unless one went out within the interval. */
static void log_quietly(fnw_launcher *l, quiet_log *q, const char *msg)
{
    double now = ev_now(l->loop);
    if (q->last > 0 && now - q->last < FNW_LAUNCHER_LOG_INTERVAL_S) {
        q->missed++;
        return;
    }
    if (q->missed)
        fprintf(stderr, "fnworker pool: %s (and %lu more times in the last %.0f s)\n", msg, q->missed,
                now - q->last);
    else
        fprintf(stderr, "fnworker pool: %s\n", msg);
    q->last = now;
    q->missed = 0;
}

static void set_pending(conn *c, int pending)
{
    if (c->pending == pending)
        return;
    c->pending = pending;
    if (pending)
        c->l->n_pending++;
    else
        c->l->n_pending--;
}

static void conn_free(conn *c)
{
    fnw_launcher *l = c->l;
    if (c->child) { /* the launcher went away: stop its worker */
        fnw_children_detach(c->child);
        fnw_children_stop(l->children, c->child);
    }
    ev_io_stop(l->loop, &c->rd);
    ev_io_stop(l->loop, &c->wr);
    ev_timer_stop(l->loop, &c->request_timer);
    set_pending(c, 0);
    fnw_relay_link_free(c->link);
    close(c->rd.fd);
    if (c->prev)
        c->prev->next = c->next;
    else
        l->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    l->n_conns--;
    free(c->out);
    free(c);
}

/* Writes what is queued; returns -1 when the connection was freed. */
static int flush_out(conn *c)
{
    fnw_launcher *l = c->l;
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->rd.fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            ev_io_start(l->loop, &c->wr);
            return 0;
        }
        if (n < 0) {
            conn_free(c);
            return -1;
        }
        c->out_off += (size_t)n;
    }
    c->out_len = c->out_off = 0;
    ev_io_stop(l->loop, &c->wr);
    if (c->child)
        fnw_children_pause(l->children, c->child, 0);
    if (c->closing) {
        conn_free(c);
        return -1;
    }
    return 0;
}

static void queue(conn *c, const char *data, size_t n)
{
    if (c->out_off && c->out_off == c->out_len)
        c->out_len = c->out_off = 0;
    if (c->out_len + n > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_len + n)
            cap *= 2;
        char *p = realloc(c->out, cap);
        if (!p)
            return; /* out of memory: the line is lost */
        c->out = p;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, data, n);
    c->out_len += n;
}

static void queue_line(conn *c, const char *fmt, const char *text)
{
    char line[FNW_ERROR_MAX + 64];
    int n = snprintf(line, sizeof line, fmt, text);
    if (n > (int)sizeof line - 1)
        n = (int)sizeof line - 1;
    queue(c, line, (size_t)n);
}

static void emit_line(void *ctx, const char *line, size_t len)
{
    queue(ctx, line, len);
}

static void on_child_output(void *ctx, fnw_child *child, int stream, const char *data, size_t n)
{
    conn *c = ctx;
    fnw_wire_framer_feed(&c->framer[stream == 2], data, n, emit_line, c);
    if (c->out_len - c->out_off > FNW_LAUNCHER_OUT_MAX)
        fnw_children_pause(c->l->children, child, 1);
    flush_out(c);
}

static void on_linger_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
    conn_free(t->data); /* the launcher does not read its last lines */
}

/* The connection closes once its last lines are out: a launcher that does
 * not read them within FNW_LAUNCHER_LINGER_S loses them. */
static void linger(conn *c)
{
    ev_timer_stop(c->l->loop, &c->request_timer);
    ev_timer_init(&c->request_timer, on_linger_timeout, FNW_LAUNCHER_LINGER_S, 0);
    ev_timer_start(c->l->loop, &c->request_timer);
}

static void on_child_exit(void *ctx, fnw_child *child, int code)
{
    conn *c = ctx;
    char line[32];
    fnw_relay_link_close(c->link); /* KILL for its Python workers, before EXIT */
    fnw_wire_framer_flush(&c->framer[0], emit_line, c);
    fnw_wire_framer_flush(&c->framer[1], emit_line, c);
    snprintf(line, sizeof line, "EXIT %d\n", code);
    queue(c, line, strlen(line));
    c->child = NULL;
    c->closing = 1;
    if (flush_out(c) == 0)
        linger(c);
}

static void fail_request(conn *c, const char *msg)
{
    fprintf(stderr, "fnworker pool: launcher request refused: %s\n", msg);
    queue_line(c, "ERROR %s\n", msg);
    c->closing = 1;
    set_pending(c, 0);
    ev_io_stop(c->l->loop, &c->rd);
    if (flush_out(c) == 0)
        linger(c);
}

/* A SPAWN or KILL line from the worker's relay link; written out with the
 * connection's next write (the link must not be freed from here). */
static void link_to_launcher(void *ctx, const char *line, size_t len)
{
    conn *c = ctx;
    queue(c, line, len);
    ev_io_start(c->l->loop, &c->wr);
}

/* Version 2: the worker's relay socket; -1 with err when it cannot be made. */
static int open_link(conn *c, int *worker_fd, fnw_error *err)
{
    fnw_relay_link_events lev = { link_to_launcher, c };
    c->link = fnw_relay_link_new(c->l->loop, c->req.id, &lev, worker_fd, err);
    return c->link ? 0 : -1;
}

/* 0: the worker runs and c lives on; -1: refused, or c was freed. */
static int start_worker(conn *c)
{
    fnw_error err = { { 0 } };
    fnw_child_events ev = { on_child_output, on_child_exit, c };
    const fnw_launcher_policy *p = &c->l->policy;
    ev_timer_stop(c->l->loop, &c->request_timer);
    if (!fnw_pool_token_accepts(p->token, c->req.token)) {
        fail_request(c, c->req.token ? "the request's token is wrong (the launcher's "
                                       "FNW_POOL_TOKEN_FILE or FNW_POOL_TOKEN must hold the pool's)"
                                     : "the pool asks for a token and the request has none (set "
                                       "FNW_POOL_TOKEN_FILE or FNW_POOL_TOKEN for the launcher)");
        return -1;
    }
    if (fnw_worker_args_check(p->allow, c->req.args, c->req.n_args, &err) < 0) {
        fail_request(c, err.msg);
        return -1;
    }
    set_pending(c, 0);
    /* the request's args, and --relay=off for a launcher that cannot start
     * PyFlink's Python worker */
    const char *args[FNW_WIRE_MAX_ARGS + 1];
    size_t n_args = c->req.n_args;
    memcpy(args, c->req.args, n_args * sizeof *args);
    int worker_fd = -1;
    if (c->req.version < 2)
        args[n_args++] = "--relay=off";
    else if (open_link(c, &worker_fd, &err) < 0) {
        fail_request(c, err.msg);
        return -1;
    }
    fnw_child *child = fnw_children_start_relayed(c->l->children, c->req.id, c->req.provision_endpoint, args,
                                                  n_args, worker_fd, &ev, 0, &err);
    if (worker_fd >= 0)
        close(worker_fd);
    if (!child) {
        fnw_relay_link_free(c->link);
        c->link = NULL;
        fail_request(c, err.msg);
        return -1;
    }
    c->child = child;
    fnw_wire_framer_init(&c->framer[0], 'O');
    fnw_wire_framer_init(&c->framer[1], 'E');
    char line[32];
    snprintf(line, sizeof line, "OK %d\n", (int)fnw_children_pid(child));
    queue(c, line, strlen(line));
    if (c->req.version < 2) {
        static const char v1[] =
            "this launcher speaks launcher protocol version 1, so the worker runs with --relay=off: a job's "
            "Python functions that are not fnworker operations fail (install the launcher script of this "
            "fnworker release, the sidecar image's install-launcher, for version 2)";
        fprintf(stderr, "fnworker pool: worker %.64s: %s\n", c->req.id, v1);
        queue_line(c, "E fnworker pool: %s\n", v1);
    }
    return flush_out(c);
}

static void on_conn_readable(struct ev_loop *loop, ev_io *w, int revents)
{
    conn *c = w->data;
    char buf[4096];
    ssize_t n = recv(w->fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) { /* the launcher closed or died */
        conn_free(c);
        return;
    }
    if (c->link && c->child) { /* version 2: the launcher's answers about PyFlink's Python worker */
        fnw_relay_link_from_launcher(c->link, buf, (size_t)n);
        return;
    }
    if (c->child || c->closing)
        return; /* nothing more is expected from the launcher */
    fnw_error err = { { 0 } };
    size_t used = 0;
    int rc = fnw_wire_request_feed(&c->req, buf, (size_t)n, &used, &err);
    if (rc < 0) {
        fail_request(c, err.msg);
    } else if (rc == 1) {
        if (start_worker(c) == 0 && c->link && used < (size_t)n) /* lines right behind the request */
            fnw_relay_link_from_launcher(c->link, buf + used, (size_t)n - used);
    }
}

static void on_conn_writable(struct ev_loop *loop, ev_io *w, int revents)
{
    flush_out(w->data);
}

static void on_request_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
    fail_request(t->data, "no complete request within 10 s");
}

static void add_conn(fnw_launcher *l, int fd)
{
    conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return;
    }
    c->l = l;
    fnw_wire_request_init(&c->req);
    ev_io_init(&c->rd, on_conn_readable, fd, EV_READ);
    ev_io_init(&c->wr, on_conn_writable, fd, EV_WRITE);
    ev_timer_init(&c->request_timer, on_request_timeout, FNW_LAUNCHER_REQUEST_TIMEOUT_S, 0);
    c->rd.data = c->wr.data = c->request_timer.data = c;
    ev_io_start(l->loop, &c->rd);
    ev_timer_start(l->loop, &c->request_timer);
    c->next = l->conns;
    if (l->conns)
        l->conns->prev = c;
    l->conns = c;
    l->n_conns++;
    set_pending(c, 1);
}

/* Too many connections are reading their request: this one is told so. */
static void refuse_conn(fnw_launcher *l, int fd)
{
    char line[160];
    int n = snprintf(line, sizeof line,
                     "ERROR the pool has %u connections waiting to send "
                     "their request (at most %d); try again\n",
                     l->n_pending, FNW_LAUNCHER_PENDING_MAX);
    if (send(fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
        /* the line is lost; the connection closes anyway */
    }
    close(fd);
    snprintf(line, sizeof line,
             "refused a launcher connection: %d connections are waiting "
             "to send their request",
             FNW_LAUNCHER_PENDING_MAX);
    log_quietly(l, &l->full_log, line);
}

static void on_resume(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_launcher *l = t->data;
    if (l->accepting)
        ev_io_start(loop, &l->accept_w);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
    fnw_launcher *l = w->data;
    for (;;) {
        int fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            if (l->n_pending >= FNW_LAUNCHER_PENDING_MAX)
                refuse_conn(l, fd);
            else
                add_conn(l, fd);
            continue;
        }
        int e = errno;
        if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR)
            return;
        char msg[200];
        if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
            /* the connection stays in the backlog; retrying now would spin */
            snprintf(msg, sizeof msg,
                     "accept on the launcher endpoint: %s; not accepting for "
                     "%g s",
                     strerror(e), FNW_LAUNCHER_ACCEPT_PAUSE_S);
            ev_io_stop(loop, w);
            ev_timer_set(&l->resume, FNW_LAUNCHER_ACCEPT_PAUSE_S, 0);
            ev_timer_start(loop, &l->resume);
            log_quietly(l, &l->accept_log, msg);
            return;
        }
        /* a connection that failed before it was accepted (ECONNABORTED, ...) */
        snprintf(msg, sizeof msg, "accept on the launcher endpoint: %s", strerror(e));
        log_quietly(l, &l->accept_log, msg);
        return;
    }
}

fnw_launcher *fnw_launcher_new(struct ev_loop *loop, fnw_children *children, int fd,
                               const fnw_launcher_policy *policy)
{
    fnw_launcher *l = calloc(1, sizeof *l);
    if (!l) {
        close(fd);
        return NULL;
    }
    l->loop = loop;
    l->children = children;
    l->policy = *policy;
    ev_timer_init(&l->resume, on_resume, FNW_LAUNCHER_ACCEPT_PAUSE_S, 0);
    l->resume.data = l;
    ev_io_init(&l->accept_w, on_accept, fd, EV_READ);
    l->accept_w.data = l;
    ev_io_start(loop, &l->accept_w);
    l->accepting = 1;
    return l;
}

void fnw_launcher_stop(fnw_launcher *l)
{
    if (l->accepting) {
        ev_io_stop(l->loop, &l->accept_w);
        ev_timer_stop(l->loop, &l->resume);
        close(l->accept_w.fd);
        l->accepting = 0;
    }
    conn *next;
    for (conn *c = l->conns; c; c = next) {
        next = c->next;
        if (!c->child && !c->closing)
            fail_request(c, "the pool is shutting down");
    }
}

void fnw_launcher_free(fnw_launcher *l)
{
    if (!l)
        return;
    fnw_launcher_stop(l);
    while (l->conns)
        conn_free(l->conns);
    free(l);
}

unsigned fnw_launcher_connections(const fnw_launcher *l)
{
    return l->n_conns;
}
