/* scripts/bench/suite_latency.c — the latency workloads: W8 paces 10
 * records every millisecond in 1 s bundles and reports per-record latency
 * percentiles (and latency over time, for the plots); W10 measures how long
 * a bundle's end waits for calls still in flight, against the calls' own
 * duration.
 */
#include "scripts/bench/suite_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- W8: latency at a steady rate -------------------------------------------------------------- */

typedef struct pacer {
    double t0, period, bundle_end;
    int per_tick;
    uint64_t tick, seq;
    double late_sum, late_max;    /* driver's send delay past each record's schedule, s */
    uint64_t late_n;
    fnw_buf buf;
    double *lat;                  /* latencies, ms */
    double *sent;                 /* when each was scheduled, s since t0 */
    size_t n_lat, cap_lat;
} pacer;

static int pacer_next(void *self, double now, grpc_slice *out, uint64_t *records, double *wake_at)
{
    pacer *p = self;
    if (now >= p->bundle_end)
        return -1;
    fnw_buf_clear(&p->buf);
    uint64_t n = 0;
    /* Each record carries the time it is handed to gRPC (the latency
     * starts when the driver sends it); the pacing's own lateness is kept. */
    int64_t ts_us = (int64_t)((now - p->t0) * 1e6);
    while (p->t0 + (double)p->tick * p->period <= now) {
        double late = now - (p->t0 + (double)p->tick * p->period);
        p->late_sum += late * p->per_tick;
        p->late_n += (uint64_t)p->per_tick;
        p->late_max = late > p->late_max ? late : p->late_max;
        for (int k = 0; k < p->per_tick; k++, n++, p->seq++)
            bench_record_put(&p->buf, ts_us, INT64_MIN, SMALL, p->seq, (int32_t)p->seq);
        p->tick++;
    }
    if (!n) {
        *wake_at = p->t0 + (double)p->tick * p->period;
        return 0;
    }
    *out = grpc_slice_from_copied_buffer((const char *)p->buf.p, p->buf.len);
    *records = n;
    return 1;
}

static void pacer_ts(void *arg, int64_t ts_us)
{
    pacer *p = arg;
    if (p->n_lat == p->cap_lat) {
        size_t cap = p->cap_lat ? p->cap_lat * 2 : 65536;
        double *l = realloc(p->lat, cap * sizeof *l);
        if (!l)
            return;
        p->lat = l;
        double *t = realloc(p->sent, cap * sizeof *t);
        if (!t)
            return;
        p->sent = t;
        p->cap_lat = cap;
    }
    p->sent[p->n_lat] = (double)ts_us / 1e6;
    p->lat[p->n_lat++] = ((bench_now() - p->t0) * 1e6 - (double)ts_us) / 1000.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double q)
{
    if (!n)
        return 0;
    size_t i = (size_t)ceil(q * (double)n) - 1;
    return v[i < n ? i : n - 1];
}

/* Steady 10 records every ms in 1 s bundles, for `seconds`. */
static int run_paced(bench_suite *s, bench_session *ss, double seconds, double bundle_s, pacer *p)
{
    memset(p, 0, sizeof *p);
    fnw_buf_init(&p->buf, 0);
    p->period = 0.001;
    p->per_tick = 10;
    p->t0 = bench_now();
    double end = p->t0 + seconds;
    int rc = 0;
    while (rc == 0 && bench_now() < end - 1e-3) {
        bench_bundle b;
        memset(&b, 0, sizeof b);
        p->bundle_end = bench_now() + bundle_s < end ? bench_now() + bundle_s : end;
        b.src.next = pacer_next;
        b.src.self = p;
        b.expect_out_len = bench_session_out_len(ss, SMALL);
        b.on_ts = pacer_ts;
        b.ts_arg = p;
        rc = bench_session_bundle(ss, &b, 0, 60 + bundle_s);
    }
    fnw_buf_free(&p->buf);
    return rc;
}

/* Writes latency over time (every record: sent at, latency) to series and
 * the distribution (sorted; about 2000 points) to name. Sorts p->lat. */
static void write_latency(bench_suite *s, pacer *p, const char *name, const char *series)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", s->env.out_dir, series);
    FILE *f = fopen(path, "w");
    if (f) {
        for (size_t i = 0; i < p->n_lat; i++)
            fprintf(f, "%.4f %.3f\n", p->sent[i], p->lat[i]);
        fclose(f);
    }
    qsort(p->lat, p->n_lat, sizeof p->lat[0], cmp_double);
    snprintf(path, sizeof path, "%s/%s", s->env.out_dir, name);
    f = fopen(path, "w");
    if (!f)
        return;
    size_t step = p->n_lat > 2000 ? p->n_lat / 2000 : 1;
    for (size_t i = 0; i < p->n_lat; i += step)
        fprintf(f, "%.4f %.6f\n", p->lat[i], (double)(i + 1) / (double)p->n_lat);
    if (p->n_lat)
        fprintf(f, "%.4f 1.0\n", p->lat[p->n_lat - 1]);
    fclose(f);
}

void suite_w8(bench_suite *s)
{
    suite_progress("running %s\n", "W8");
    for (int variant = 0; variant < 2; variant++) {
        char err[1200] = "";
        bench_op op = suite_op_batch(0, 10000);
        if (variant == 1)
            op.batch_timeout_ms = 2;
        bench_session ss;
        pacer p;
        memset(&p, 0, sizeof p);
        double secs = s->smoke ? 0.5 : 5 * (s->scale < 1 ? (s->scale > 0.2 ? s->scale : 0.2) : 1);
        if (suite_session_start(s, &ss, 0, "W8", &op, SMALL, s->smoke ? 200 : 2000) == 0)
            run_paced(s, &ss, secs, s->smoke ? 0.25 : 1.0, &p);
        suite_session_stop(&ss, err, sizeof err);
        write_latency(s, &p, variant ? "latency_timeout.dat" : "latency.dat",
                      variant ? "latency_series_timeout.dat" : "latency_series.dat");
        bench_row *row = bench_report_add(&s->rep, variant ? "W8b" : "W8",
                                          variant ? "10k rec/s through W2's op + batch_timeout_ms 2"
                                                  : "10k rec/s through W2's op (no batch timeout)");
        if (!row)
            break;
        double p50 = pct(p.lat, p.n_lat, 0.5), p99 = pct(p.lat, p.n_lat, 0.99);
        double mx = p.n_lat ? p.lat[p.n_lat - 1] : 0;
        snprintf(row->result, sizeof row->result, "p50 %.1f p99 %.1f max %.1f ms", p50, p99, mx);
        snprintf(row->target, sizeof row->target, "p99 <= 10 ms");
        bench_row_kv(row, "records", (double)p.n_lat);
        bench_row_kv(row, "p50_ms", p50);
        bench_row_kv(row, "p99_ms", p99);
        bench_row_kv(row, "max_ms", mx);
        bench_row_judge(row, p.n_lat > 0 && p99 <= 10, err[0] != 0);
        if (err[0])
            bench_row_note(row, "%s", err);
        bench_row_note(row, "driver send delay after schedule: mean %.2f max %.2f ms",
                       p.late_n ? p.late_sum / (double)p.late_n * 1e3 : 0, p.late_max * 1e3);
        bench_row_kv(row, "driver_send_delay_mean_ms", p.late_n ? p.late_sum / (double)p.late_n * 1e3 : 0);
        bench_row_kv(row, "driver_send_delay_max_ms", p.late_max * 1e3);
        if (variant == 0)
            bench_row_note(row, "a 256 batch takes 25.6 ms to fill at 10k rec/s and is sent only when "
                                "full or at bundle end (1 s bundles)");
        else
            bench_row_note(row, "a partial batch goes 2 ms after its first element; outputs wait for "
                                "the 5 ms flush timer");
        free(p.lat);
        free(p.sent);
    }
}


/* ---- W10: drain at bundle end ----------------------------------------------------------------- */

void suite_w10(bench_suite *s)
{
    char err[1200] = "";
    bench_session ss;
    bench_op op = suite_op_element(1000, "50");
    double drains[16];
    int n = 0;
    suite_progress("running %s\n", "W10");
    if (suite_session_start(s, &ss, 0, "W10", &op, SMALL, 1000) == 0)
        for (int i = 0; i < (s->smoke ? 2 : 8); i++) {
            bench_run r;
            if (bench_session_run(&ss, SMALL, 1000, 1000, 0, &r) < 0)
                break;
            drains[n++] = r.max_drain_s * 1e3;
        }
    suite_session_stop(&ss, err, sizeof err);
    qsort(drains, (size_t)n, sizeof drains[0], cmp_double);
    bench_row *row = bench_report_add(&s->rep, "W10", "is_last -> response, 1000 in-flight 50 ms calls");
    if (!row)
        return;
    double mx = n ? drains[n - 1] : 0, med = n ? drains[n / 2] : 0;
    snprintf(row->result, sizeof row->result, "max %.1f ms (median %.1f)", mx, med);
    snprintf(row->target, sizeof row->target, "<= 60 ms");
    bench_row_kv(row, "bundles", n);
    bench_row_kv(row, "max_ms", mx);
    bench_row_kv(row, "median_ms", med);
    bench_row_judge(row, n > 0 && mx <= 60, err[0] != 0);
    if (err[0])
        bench_row_note(row, "%s", err);
}
