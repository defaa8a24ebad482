/* worker/pool_stats.c — the stats line for the worker pool (see pool_stats.h). */
#include "worker/pool_stats.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/engine.h"
#include "worker/metrics.h"

/* Writes one line (at most PIPE_BUF: all of it or nothing); 1 when the
 * pipe is full (the line is lost), -1 when the pool is gone. */
static int put_line(fnw_pool_stats *s, const char *line, size_t n)
{
    /* non-blocking: a pool that does not read loses a line, the worker never waits */
    if (write(s->fd, line, n) >= 0)
        return 0;
    return errno == EAGAIN || errno == EINTR ? 1 : -1;
}

static void report(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_pool_stats *s = t->data;
    if (s->refresh)
        s->refresh(s->refresh_user, s);
    char line[256];
    int n = snprintf(line, sizeof line,
                     "bundles=%" PRIu64 " bundle_errors=%" PRIu64 " records_in=%" PRIu64
                     " records_out=%" PRIu64 " calls=%" PRIu64 " call_failures=%" PRIu64
                     " active_bundles=%zu\n",
                     s->bundles, s->bundle_errors, s->records_in, s->records_out, s->calls, s->call_failures,
                     s->active);
    int rc = put_line(s, line, (size_t)n);
    /* the series, from where a full pipe stopped the last report, so that
     * more than a pipe's worth of them still all arrive, over a few seconds */
    char op[FNW_METRIC_LINE_MAX];
    for (size_t k = 0; rc == 0 && k < s->nseries; k++) {
        size_t i = (s->next_series + k) % s->nseries;
        rc = put_line(s, op, fnw_metric_series_format(&s->series[i], op));
        if (rc == 1)
            s->next_series = i;
    }
    if (rc < 0) {
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
    free(s->series);
    s->series = NULL;
    s->nseries = 0;
    if (s->fd < 0)
        return;
    ev_timer_stop(s->loop, &s->timer);
    close(s->fd);
    s->fd = -1;
}

/* The series of (transform, operation): found, new, or the folded one. */
static fnw_metric_series *series_for(fnw_pool_stats *s, const char *transform, const char *operation)
{
    if (!s->series && !(s->series = malloc(FNW_METRIC_SERIES_MAX * sizeof *s->series)))
        return NULL;
    size_t tl = strlen(transform), ol = strlen(operation);
    if (tl > FNW_METRIC_LABEL_MAX)
        tl = FNW_METRIC_LABEL_MAX;
    if (ol > FNW_METRIC_LABEL_MAX)
        ol = FNW_METRIC_LABEL_MAX;
    for (size_t i = 0; i < s->nseries; i++) {
        fnw_metric_series *x = &s->series[i];
        if (strncmp(x->transform, transform, tl) == 0 && x->transform[tl] == '\0' &&
            strncmp(x->operation, operation, ol) == 0 && x->operation[ol] == '\0')
            return x;
    }
    if (s->nseries < FNW_METRIC_SERIES_MAX - 1) {
        fnw_metric_series_init(&s->series[s->nseries], transform, operation);
        return &s->series[s->nseries++];
    }
    if (s->nseries == FNW_METRIC_SERIES_MAX - 1)
        fnw_metric_series_init(&s->series[s->nseries++], FNW_METRIC_OTHER, FNW_METRIC_OTHER);
    return &s->series[FNW_METRIC_SERIES_MAX - 1];
}

/* The bundle's latency histogram into the series' `le` buckets: each
 * fnw_hist bucket goes to the first bound at or above its top. */
static void add_latency(fnw_metric_series *x, const fnw_hist *h)
{
    if (h->count <= 0)
        return;
    int le = 0;
    for (int i = 0; i < FNW_HIST_BUCKETS; i++) {
        int64_t lo, hi;
        fnw_hist_bucket_range(i, &lo, &hi);
        while (le < FNW_METRIC_LE_N && fnw_metric_le_us[le] < hi)
            le++;
        x->lat[le] += h->bucket[i];
    }
}

static void add_step(fnw_metric_series *x, const fnw_engine_metrics *m)
{
    for (int i = 0; i < FNW_M_COUNT; i++) {
        const fnw_metric_name *n = &fnw_metric_names[i];
        int64_t v = fnw_metrics_value(m, n->id);
        if (n->kind == FNW_METRIC_GAUGE) {
            x->value[i] = v; /* the last bundle's */
        } else if (n->kind == FNW_METRIC_DIST) {
            x->value[i] += v;
            x->dist_sum[i] += fnw_metrics_dist(m, n->id)->sum;
        } else {
            x->value[i] += v;
        }
    }
    add_latency(x, &m->call_latency_us);
    x->lat_sum_us += m->call_latency_sum_us;
    for (size_t i = 0; i < m->ncounters; i++)
        fnw_metric_series_add_counter(x, m->counters[i].name, fnw_counter_value(&m->counters[i]));
}

void fnw_pool_stats_add_step(fnw_pool_stats *s, const char *transform, const char *operation,
                             const fnw_engine_metrics *m)
{
    if (s->fd < 0)
        return; /* no pool to tell */
    fnw_metric_series *x = series_for(s, transform, operation);
    if (x)
        add_step(x, m);
}

void fnw_pool_stats_refresh_proc(fnw_pool_stats *s, const fnw_processor *proc)
{
    if (s->fd < 0 || !proc)
        return;
    for (size_t i = 0; i < fnw_processor_steps(proc); i++) {
        const fnw_plan_step *st = &fnw_processor_plan(proc)->steps[i];
        fnw_pool_stats_refresh_step(s, st->transform_id, st->op->name,
                                    fnw_engine_metrics_get(fnw_processor_engine(proc, i)));
    }
}

void fnw_pool_stats_refresh_step(fnw_pool_stats *s, const char *transform, const char *operation,
                                 const fnw_engine_metrics *m)
{
    fnw_metric_series *x = s->fd < 0 ? NULL : series_for(s, transform, operation);
    for (int k = 0; x && k < FNW_M_COUNT; k++)
        if (fnw_metric_names[k].kind == FNW_METRIC_GAUGE && k != FNW_M_INFLIGHT_HIGH_WATER)
            x->value[k] = fnw_metrics_value(m, (fnw_metric_id)k); /* the high-water mark is a bundle's */
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
        const fnw_plan_step *st = &fnw_processor_plan(proc)->steps[i];
        fnw_pool_stats_add_step(s, st->transform_id, st->op->name, m);
    }
}
