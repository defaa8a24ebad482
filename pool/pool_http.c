/* pool/pool_http.c — the pool's HTTP endpoint on libmicrohttpd (see pool_http.h).
 *
 * Hostile clients: every connection has a total deadline per request
 * (FNW_POOL_HTTP_DEADLINE_S from its start or its previous request's end;
 * libmicrohttpd's own timeout only bounds idle time, so a client sending a
 * byte now and then would hold it for ever): past it the socket is shut
 * down and libmicrohttpd closes the connection. One client address holds
 * at most FNW_POOL_HTTP_PER_IP connections of FNW_POOL_HTTP_CONNECTIONS, so
 * a probe from another address always finds room. /debug/state answers
 * only clients on the loopback interface (it signals every worker). */
#include "pool/pool_http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One open connection, for its deadline. */
typedef struct tracked {
    struct tracked *next, *prev;
    int fd;
    double since; /* connected, or its last request ended */
    int cut;      /* shut down once */
} tracked;

struct fnw_pool_http {
    struct ev_loop *loop;
    struct MHD_Daemon *d;
    fnw_pool_http_source src;
    ev_io io;
    ev_timer timer;
    ev_timer deadlines; /* runs while connections are open */
    tracked *open;
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type, char *body,
                             size_t len)
{
    struct MHD_Response *r = body ? MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE)
                                  : MHD_create_response_from_buffer(strlen("out of memory\n"),
                                                                    (void *)"out of memory\n",
                                                                    MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result rc = MHD_queue_response(conn, body ? status : 500, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
    return reply(conn, status, "text/plain", strdup(text), strlen(text));
}

int fnw_pool_http_is_loopback(const struct sockaddr *sa)
{
    if (!sa)
        return 0;
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return 1;
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return 0;
}

static int from_loopback(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return ci && fnw_pool_http_is_loopback(ci->client_addr);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    fnw_pool_http *h = cls;
    size_t len = 0;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply_text(conn, 405, "only GET\n");
    if (strcmp(url, "/metrics") == 0) {
        char *body = h->src.metrics(h->src.ctx, &len);
        return reply(conn, 200, "text/plain; version=0.0.4; charset=utf-8", body, len);
    }
    if (strcmp(url, "/healthz") == 0) {
        if (h->src.serving(h->src.ctx))
            return reply_text(conn, 200, "ok\n");
        return reply_text(conn, 503, "draining\n");
    }
    if (strcmp(url, "/debug/state") == 0) {
        if (!from_loopback(conn))
            return reply_text(conn, 403,
                              "/debug/state answers only on the loopback interface "
                              "(it signals every worker)\n");
        unsigned status = 200;
        char *body = h->src.state(h->src.ctx, &len, &status);
        return reply(conn, status, "text/plain; charset=utf-8", body, len);
    }
    return reply_text(conn, 404, "not found (try /metrics, /healthz, /debug/state)\n");
}

/* ---- deadlines ------------------------------------------------------------------------ */

static void on_deadlines(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_pool_http *h = t->data;
    double now = ev_now(loop);
    for (tracked *k = h->open; k; k = k->next)
        if (!k->cut && now - k->since >= FNW_POOL_HTTP_DEADLINE_S) {
            k->cut = 1; /* libmicrohttpd sees the end and closes it */
            shutdown(k->fd, SHUT_RDWR);
        }
    if (!h->open)
        ev_timer_stop(loop, t);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    fnw_pool_http *h = cls;
    tracked *k = *socket_context;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!ci || !(k = calloc(1, sizeof *k))) {
            /* untracked: libmicrohttpd's idle timeout still applies */
            return;
        }
        k->fd = ci->connect_fd;
        k->since = ev_now(h->loop);
        k->next = h->open;
        if (h->open)
            h->open->prev = k;
        h->open = k;
        *socket_context = k;
        if (!ev_is_active(&h->deadlines))
            ev_timer_again(h->loop, &h->deadlines);
        return;
    }
    if (!k)
        return;
    if (k->prev)
        k->prev->next = k->next;
    else
        h->open = k->next;
    if (k->next)
        k->next->prev = k->prev;
    free(k);
    *socket_context = NULL;
}

/* A request ended: the next one on the connection gets a fresh deadline. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    fnw_pool_http *h = cls;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    tracked *k = ci ? ci->socket_context : NULL;
    if (k)
        k->since = ev_now(h->loop);
}

/* ---- the loop ------------------------------------------------------------------------ */

/* Runs what is ready and re-arms the timer libmicrohttpd asks for. */
static void run(fnw_pool_http *h)
{
    MHD_run(h->d);
    MHD_UNSIGNED_LONG_LONG ms;
    ev_timer_stop(h->loop, &h->timer);
    if (MHD_get_timeout(h->d, &ms) == MHD_YES) {
        ev_timer_set(&h->timer, (double)ms / 1000.0, 0);
        ev_timer_start(h->loop, &h->timer);
    }
}

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
    run(w->data);
}

static void on_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
    run(t->data);
}

fnw_pool_http *fnw_pool_http_new(struct ev_loop *loop, int fd, const fnw_pool_http_source *src, fnw_error *err)
{
    fnw_pool_http *h = calloc(1, sizeof *h);
    if (!h) {
        close(fd);
        fnw_error_set(err, "out of memory");
        return NULL;
    }
    h->loop = loop;
    h->src = *src;
    ev_init(&h->deadlines, on_deadlines);
    h->deadlines.repeat = 0.5;
    h->deadlines.data = h;
    h->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, answer, h,
                            MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned)FNW_POOL_HTTP_DEADLINE_S, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)FNW_POOL_HTTP_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                            (unsigned)FNW_POOL_HTTP_PER_IP, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
    const union MHD_DaemonInfo *info = h->d ? MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
    if (!info) {
        if (h->d)
            MHD_stop_daemon(h->d);
        close(fd);
        free(h);
        fnw_error_set(err, "cannot start the HTTP endpoint (libmicrohttpd)");
        return NULL;
    }
    ev_io_init(&h->io, on_io, info->epoll_fd, EV_READ);
    ev_timer_init(&h->timer, on_timer, 0, 0);
    h->io.data = h->timer.data = h;
    ev_io_start(loop, &h->io);
    return h;
}

void fnw_pool_http_free(fnw_pool_http *h)
{
    if (!h)
        return;
    ev_io_stop(h->loop, &h->io);
    ev_timer_stop(h->loop, &h->timer);
    ev_timer_stop(h->loop, &h->deadlines);
    MHD_stop_daemon(h->d); /* closes the listening socket it was given (and every
                                connection, through on_connection) */
    while (h->open) {      /* in case a close was not notified */
        tracked *k = h->open;
        h->open = k->next;
        free(k);
    }
    free(h);
}
