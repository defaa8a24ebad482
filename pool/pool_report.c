/* pool/pool_report.c — the pool's metrics and state text (see pool_report.h). */
#include "pool/pool_report.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int64_t fnw_pool_report_rss(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned long size, resident;
    int n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    if (n != 2)
        return -1;
    return (int64_t)resident * sysconf(_SC_PAGESIZE);
}

/* Writes s as a Prometheus label value (backslash, quote, newline escaped). */
static void put_label(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void metric(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %" PRIu64 "\n", name, help, name, type, name, v);
}

static void worker_labels(FILE *f, const char *name, fnw_child *c)
{
    fprintf(f, "%s{worker_id=\"", name);
    put_label(f, fnw_children_id(c));
    fprintf(f, "\",pid=\"%d\"}", (int)fnw_children_pid(c));
}

/* The figures each worker reports on its stats pipe (pool/wire.h). */
static void figures(FILE *f, fnw_children *cs)
{
    static const struct {
        const char *name, *type, *help;
        size_t off;
    } m[] = {
#define FIG(n, t, h, field) { "fnworker_pool_worker_" n, t, h, offsetof(fnw_wire_figures, field) }
        FIG("bundles_total", "counter", "Bundles the worker finished.", bundles),
        FIG("bundle_errors_total", "counter", "Bundles that failed.", bundle_errors),
        FIG("records_in_total", "counter", "Records into the worker's operators.", records_in),
        FIG("records_out_total", "counter", "Records out of the worker's operators.", records_out),
        FIG("calls_total", "counter", "Operation calls.", calls),
        FIG("call_failures_total", "counter", "Operation calls that failed.", call_failures),
        FIG("bundles_in_progress", "gauge", "Bundles the worker is running now.", active_bundles),
#undef FIG
    };
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        fprintf(f, "# HELP %s %s (reported once a second)\n# TYPE %s %s\n", m[k].name, m[k].help, m[k].name,
                m[k].type);
        for (fnw_child *c = fnw_children_next(cs, NULL); c; c = fnw_children_next(cs, c)) {
            const fnw_wire_figures *g = fnw_children_figures(c);
            if (!g->known)
                continue;
            worker_labels(f, m[k].name, c);
            fprintf(f, " %" PRIu64 "\n", *(const uint64_t *)((const char *)g + m[k].off));
        }
    }
}

/* ---- per operation step: the rows of codecs/metric_names.h ---------------------------- */

/* name{operation="..",transform="..",worker_id="..",pid=".."[,extra] */
static void series_labels(FILE *f, const char *name, const char *suffix, fnw_child *c,
                          const fnw_metric_series *x, const char *extra)
{
    fprintf(f, "%s%s{operation=\"", name, suffix);
    put_label(f, x->operation);
    fputs("\",transform=\"", f);
    put_label(f, x->transform);
    fputs("\",worker_id=\"", f);
    put_label(f, fnw_children_id(c));
    fprintf(f, "\",pid=\"%d\"%s%s", (int)fnw_children_pid(c), extra ? "," : "", extra ? extra : "");
}

/* Runs body for every series of every worker, in slot order, with c the
 * worker and x the series. */
#define EACH_SERIES(cs, c, x, body) \
    for (fnw_child *c = fnw_children_next(cs, NULL); c; c = fnw_children_next(cs, c)) { \
        fnw_metric_series *const *all_; \
        size_t n_ = fnw_children_series(c, &all_); \
        for (size_t i_ = 0; i_ < n_; i_++) { \
            const fnw_metric_series *x = all_[i_]; \
            body \
        } \
    }

static void latency_row(FILE *f, fnw_children *cs, const fnw_metric_name *m)
{
    EACH_SERIES(cs, c, x, {
        int64_t cum = 0;
        for (int b = 0; b <= FNW_METRIC_LE_N; b++) {
            char le[48];
            if (b < FNW_METRIC_LE_N)
                snprintf(le, sizeof le, "le=\"%g\"", (double)fnw_metric_le_us[b] / 1e6);
            else
                snprintf(le, sizeof le, "le=\"+Inf\"");
            cum += x->lat[b];
            series_labels(f, m->prom, "_bucket", c, x, le);
            fprintf(f, "} %" PRId64 "\n", cum);
        }
        series_labels(f, m->prom, "_sum", c, x, NULL);
        fprintf(f, "} %.6f\n", (double)x->lat_sum_us / 1e6);
        series_labels(f, m->prom, "_count", c, x, NULL);
        fprintf(f, "} %" PRId64 "\n", cum);
    })
}

static void table_rows(FILE *f, fnw_children *cs)
{
    static const char *const types[] = { "counter", "gauge", "summary", "histogram" };
    for (int i = 0; i < FNW_M_COUNT; i++) {
        const fnw_metric_name *m = &fnw_metric_names[i];
        if (!m->prom)
            continue;
        /* rows of one family (the failure kinds) follow each other: one header */
        if (i == 0 || !fnw_metric_names[i - 1].prom || strcmp(fnw_metric_names[i - 1].prom, m->prom) != 0)
            fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->prom, m->prom_help ? m->prom_help : m->help,
                    m->prom, types[m->kind]);
        if (m->kind == FNW_METRIC_LATENCY) {
            latency_row(f, cs, m);
            continue;
        }
        EACH_SERIES(cs, c, x, {
            if (m->kind == FNW_METRIC_GAUGE && x->value[i] < 0)
                continue; /* does not apply to this operation */
            if (m->kind == FNW_METRIC_DIST) {
                series_labels(f, m->prom, "_sum", c, x, NULL);
                fprintf(f, "} %" PRId64 "\n", x->dist_sum[i]);
                series_labels(f, m->prom, "_count", c, x, NULL);
            } else {
                series_labels(f, m->prom, "", c, x, m->prom_label);
            }
            fprintf(f, "} %" PRId64 "\n", x->value[i]);
        })
    }
    fputs("# HELP fnworker_operation_counter_total An operation's own counter (fnw_op_counter), by name.\n"
          "# TYPE fnworker_operation_counter_total counter\n",
          f);
    EACH_SERIES(cs, c, x, {
        for (size_t k = 0; k < x->ncounters; k++) {
            char extra[FNW_METRIC_COUNTER_NAME_MAX + 16];
            snprintf(extra, sizeof extra, "counter=\"%s\"", x->counters[k].name); /* [a-z0-9_]: no escaping */
            series_labels(f, "fnworker_operation_counter_total", "", c, x, extra);
            fprintf(f, "} %" PRId64 "\n", x->counters[k].value);
        }
    })
}

static void per_worker(FILE *f, fnw_children *cs, double now)
{
    fputs("# HELP fnworker_pool_worker_rss_bytes Resident memory of a running worker.\n"
          "# TYPE fnworker_pool_worker_rss_bytes gauge\n",
          f);
    for (fnw_child *c = fnw_children_next(cs, NULL); c; c = fnw_children_next(cs, c)) {
        int64_t rss = fnw_pool_report_rss(fnw_children_pid(c));
        if (rss < 0)
            continue;
        fputs("fnworker_pool_worker_rss_bytes{worker_id=\"", f);
        put_label(f, fnw_children_id(c));
        fprintf(f, "\",pid=\"%d\"} %" PRId64 "\n", (int)fnw_children_pid(c), rss);
    }
    fputs("# HELP fnworker_pool_worker_uptime_seconds Seconds since a running worker started.\n"
          "# TYPE fnworker_pool_worker_uptime_seconds gauge\n",
          f);
    for (fnw_child *c = fnw_children_next(cs, NULL); c; c = fnw_children_next(cs, c)) {
        fputs("fnworker_pool_worker_uptime_seconds{worker_id=\"", f);
        put_label(f, fnw_children_id(c));
        fprintf(f, "\",pid=\"%d\"} %.3f\n", (int)fnw_children_pid(c), now - fnw_children_started_at(c));
    }
}

char *fnw_pool_report_metrics(fnw_children *cs, int draining, double now, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    fnw_children_stats s = fnw_children_get_stats(cs);
    metric(f, "fnworker_pool_workers_running", "gauge", "Workers running now.", s.running);
    metric(f, "fnworker_pool_workers_max", "gauge", "Workers allowed at once (--max-workers).", s.max);
    metric(f, "fnworker_pool_workers_started_total", "counter", "Workers started.", s.started);
    metric(f, "fnworker_pool_workers_exited_total", "counter", "Workers that ended.", s.exited);
    metric(f, "fnworker_pool_workers_failed_to_start_total", "counter", "Workers that could not be started.",
           s.failed_to_start);
    metric(f, "fnworker_pool_requests_rejected_full_total", "counter",
           "Start requests refused because the pool was full.", s.rejected_full);
    metric(f, "fnworker_pool_workers_start_timeouts_total", "counter",
           "Workers stopped because they did not connect within --start-timeout.", s.start_timeouts);
    metric(f, "fnworker_pool_draining", "gauge", "1 after SIGTERM, while workers finish.", (uint64_t)draining);
    metric(f, "fnworker_pool_series_dropped_total", "counter",
           "Per-operation series lines not kept (a worker's or the pool's series bound was reached).",
           s.series_dropped);
    metric(f, "fnworker_pool_series", "gauge", "Per-operation series the pool holds now.", s.series_kept);
    per_worker(f, cs, now);
    figures(f, cs);
    table_rows(f, cs);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

char *fnw_pool_report_state(fnw_children *cs, int draining, double now, unsigned dumps_requested, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    fnw_children_stats s = fnw_children_get_stats(cs);
    fprintf(f, "pool: %s, %u of %u workers running, %" PRIu64 " started, %" PRIu64 " exited\n",
            draining ? "draining" : "serving", s.running, s.max, s.started, s.exited);
    fprintf(f, "state dump (SIGQUIT) requested from %u workers; each writes it to its log\n", dumps_requested);
    for (fnw_child *c = fnw_children_next(cs, NULL); c; c = fnw_children_next(cs, c))
        fprintf(f, "worker id=%s pid=%d uptime_s=%.1f rss_bytes=%" PRId64 "\n", fnw_children_id(c),
                (int)fnw_children_pid(c), now - fnw_children_started_at(c),
                fnw_pool_report_rss(fnw_children_pid(c)));
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
