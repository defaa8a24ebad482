/* pool/pool_http.h — the pool's HTTP endpoint (libmicrohttpd): GET /metrics
 * (Prometheus text), /healthz (200 "ok" while serving, 503 "draining" after
 * SIGTERM) and /debug/state. libmicrohttpd runs without a thread of its
 * own: its epoll fd is watched on the pool's libev loop, so the answers are
 * built on the loop thread from the pool's own state, without locks. What
 * the answers hold comes from the owner's fnw_pool_http_source.
 *
 * Against slow or many clients: a request must be complete and answered
 * within FNW_POOL_HTTP_DEADLINE_S (counted from the connection's start or
 * its previous request's end), or its connection is closed; at most
 * FNW_POOL_HTTP_CONNECTIONS connections, FNW_POOL_HTTP_PER_IP of them from
 * one client address, so the kubelet's probes find room while other
 * clients hold theirs. /debug/state answers 403 to clients that are not on
 * the loopback interface. */
#ifndef FNW_POOL_HTTP_H
#define FNW_POOL_HTTP_H

#include <ev.h>
#include <stddef.h>
#include <sys/socket.h>

#include "codecs/error.h"

#define FNW_POOL_HTTP_DEADLINE_S 5
#define FNW_POOL_HTTP_CONNECTIONS 128
#define FNW_POOL_HTTP_PER_IP 16

typedef struct fnw_pool_http_source {
    char *(*metrics)(void *ctx, size_t *len); /* malloc'd text */
    /* malloc'd text; *status is 200 unless the source says otherwise */
    char *(*state)(void *ctx, size_t *len, unsigned *status);
    int (*serving)(void *ctx); /* 0 once draining */
    void *ctx;
} fnw_pool_http_source;

typedef struct fnw_pool_http fnw_pool_http;

/* Serves on fd (pool/listen.h), which it takes over. */
fnw_pool_http *fnw_pool_http_new(struct ev_loop *loop, int fd, const fnw_pool_http_source *src,
                                 fnw_error *err);
void fnw_pool_http_free(fnw_pool_http *h);
/* 1 for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104. */
int fnw_pool_http_is_loopback(const struct sockaddr *sa);

#endif
