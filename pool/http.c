/* pool/http.c — the pool's HTTP endpoint on libmicrohttpd (see http.h). */
#include "pool/http.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fnw_pool_http {
    struct ev_loop *loop;
    struct MHD_Daemon *d;
    fnw_pool_http_source src;
    ev_io io;
    ev_timer timer;
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
                             char *body, size_t len)
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

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    fnw_pool_http *h = cls;
    size_t len = 0;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(conn, 405, "text/plain", strdup("only GET\n"), 9);
    if (strcmp(url, "/metrics") == 0) {
        char *body = h->src.metrics(h->src.ctx, &len);
        return reply(conn, 200, "text/plain; version=0.0.4; charset=utf-8", body, len);
    }
    if (strcmp(url, "/healthz") == 0) {
        if (h->src.serving(h->src.ctx))
            return reply(conn, 200, "text/plain", strdup("ok\n"), 3);
        return reply(conn, 503, "text/plain", strdup("draining\n"), 9);
    }
    if (strcmp(url, "/debug/state") == 0) {
        char *body = h->src.state(h->src.ctx, &len);
        return reply(conn, 200, "text/plain; charset=utf-8", body, len);
    }
    return reply(conn, 404, "text/plain", strdup("not found (try /metrics, /healthz, /debug/state)\n"),
                 strlen("not found (try /metrics, /healthz, /debug/state)\n"));
}

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
    h->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, answer, h,
                            MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned)10, MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
                            MHD_OPTION_END);
    const union MHD_DaemonInfo *info = h->d ? MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD)
                                            : NULL;
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
    MHD_stop_daemon(h->d);   /* closes the listening socket it was given */
    free(h);
}
