/* pool/http.h — the pool's HTTP endpoint (libmicrohttpd): GET /metrics
 * (Prometheus text), /healthz (200 "ok" while serving, 503 "draining" after
 * SIGTERM) and /debug/state. libmicrohttpd runs without a thread of its
 * own: its epoll fd is watched on the pool's libev loop, so the answers are
 * built on the loop thread from the pool's own state, without locks. What
 * the answers hold comes from the owner's fnw_pool_http_source. */
#ifndef FNW_POOL_HTTP_H
#define FNW_POOL_HTTP_H

#include <ev.h>
#include <stddef.h>

#include "codecs/error.h"

typedef struct fnw_pool_http_source {
    char *(*metrics)(void *ctx, size_t *len);   /* malloc'd text */
    char *(*state)(void *ctx, size_t *len);     /* malloc'd text */
    int (*serving)(void *ctx);                  /* 0 once draining */
    void *ctx;
} fnw_pool_http_source;

typedef struct fnw_pool_http fnw_pool_http;

/* Serves on fd (pool/listen.h), which it takes over. */
fnw_pool_http *fnw_pool_http_new(struct ev_loop *loop, int fd, const fnw_pool_http_source *src, fnw_error *err);
void fnw_pool_http_free(fnw_pool_http *h);

#endif
