/* worker/pool_stats.c — the stats line for the worker pool (see pool_stats.h). */
#include "worker/pool_stats.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/engine.h"

static void report(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_pool_stats *s = t->data;
    char line[256];
    int n = snprintf(line, sizeof line,
                     "bundles=%" PRIu64 " bundle_errors=%" PRIu64 " records_in=%" PRIu64
                     " records_out=%" PRIu64 " calls=%" PRIu64 " call_failures=%" PRIu64
                     " active_bundles=%zu\n",
                     s->bundles, s->bundle_errors, s->records_in, s->records_out, s->calls, s->call_failures,
                     s->active);
    /* non-blocking: a pool that does not read loses a line, the worker never waits */
    if (write(s->fd, line, (size_t)n) < 0 && errno != EAGAIN && errno != EINTR) {
        ev_timer_stop(loop, t); /* the pool is gone */
        close(s->fd);
        s->fd = -1;
    }
}

void fnw_pool_stats_init(fnw_pool_stats *s, struct ev_loop *loop)
{
    *s = (fnw_pool_stats){ .loop = loop, .fd = -1 };
    const char *v = getenv(FNW_POOL_STATS_ENV);
    char *end;
    long fd = v ? strtol(v, &end, 10) : -1;
    if (!v || end == v || *end || fd < 3 || fd > 1024 || fcntl((int)fd, F_GETFD) < 0)
        return;
    s->fd = (int)fd;
    fcntl(s->fd, F_SETFD, FD_CLOEXEC);
    fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
    ev_timer_init(&s->timer, report, 0, 1.0);
    s->timer.data = s;
    ev_timer_start(loop, &s->timer);
}

void fnw_pool_stats_connected(fnw_pool_stats *s)
{
    static const char line[] = "connected\n";
    if (s->fd < 0)
        return;
    /* a fresh pipe has room: this never waits and is never cut */
    if (write(s->fd, line, sizeof line - 1) < 0) {
        /* the pool is gone or not reading; the next report finds out */
    }
}

void fnw_pool_stats_free(fnw_pool_stats *s)
{
    if (s->fd < 0)
        return;
    ev_timer_stop(s->loop, &s->timer);
    close(s->fd);
    s->fd = -1;
}

void fnw_pool_stats_add_bundle(fnw_pool_stats *s, const fnw_processor *proc, int failed)
{
    s->bundles++;
    s->bundle_errors += failed != 0;
    size_t n = proc ? fnw_processor_steps(proc) : 0;
    for (size_t i = 0; i < n; i++) {
        const fnw_engine_metrics *m = fnw_engine_metrics_get(fnw_processor_engine(proc, i));
        if (i == 0)
            s->records_in += (uint64_t)m->records_in;
        if (i + 1 == n)
            s->records_out += (uint64_t)m->records_out;
        s->calls += (uint64_t)m->calls;
        s->call_failures += (uint64_t)m->failures;
    }
}
