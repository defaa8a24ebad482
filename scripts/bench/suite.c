/* scripts/bench/suite.c — the benchmark's workloads (see suite.h).
 *
 * Conventions: records are Row(LONG, LONG, Row(STRING, INT)) with 8-char
 * strings unless a workload says otherwise; every session starts a fresh
 * worker and runs a small warm-up bundle first (descriptor fetch, operation
 * open and the data stream connect are not part of any figure); bundles
 * are 1M records for the throughput runs (Flink: 100k-1M, 1 s); every
 * bundle's output count is verified. Worker cost is its CPU time over all
 * threads (/proc schedstat) per record; instructions per record come from
 * callgrind, counted only over the measured bundles (callgrind_control -z
 * before, -d after).
 */
#include "scripts/bench/suite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SMALL 8                   /* the default string length */
#define WARMUP 20000
#define MILLION 1000000ULL

static const char *const size_name[BENCH_N_SIZES] = {"35 B", "100 B", "1 KB", "10 KB", "100 KB"};
static const size_t size_bytes[BENCH_N_SIZES] = {0, 100, 1000, 10000, 100000};

/* String length giving input records of about `bytes` (26 bytes of row). */
static size_t str_len_for(int size_idx)
{
    return size_idx == 0 ? SMALL : size_bytes[size_idx] - 26;
}

/* ---- helpers ------------------------------------------------------------------- */

static int selected(const bench_suite *s, const char *id)
{
    if (!s->only)
        return 1;
    size_t n = strlen(id);
    for (const char *p = s->only; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, id, n))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

static uint64_t scaled(const bench_suite *s, uint64_t n)
{
    double v = (double)n * s->scale;
    return v < 1000 ? 1000 : (uint64_t)v;
}

static void progress(const char *fmt, const char *id)
{
    fprintf(stderr, fmt, id);
    fflush(stderr);
}

static bench_op op_identity(void)
{
    bench_op op = {0};
    op.operation = "identity";
    return op;
}

/* W2's operation: echo ASYNC_BATCH, batch 256, capacity 10,000, no delay. */
static bench_op op_batch(int ordered, int capacity)
{
    bench_op op = {0};
    op.operation = "echo";
    op.batched = 1;
    op.unordered = !ordered;
    op.batch_size = 256;
    op.capacity = capacity;
    op.timeout_ms = 60000;
    return op;
}

/* Per element echo (PROCESS), UNORDERED. */
static bench_op op_element(int capacity, const char *delay_ms)
{
    bench_op op = {0};
    op.operation = "echo";
    op.unordered = 1;
    op.capacity = capacity;
    if (delay_ms)
        bench_op_set(&op, "delay_ms", delay_ms);
    return op;
}

static double rate_of(const bench_run *r)
{
    return r->seconds > 0 ? (double)r->records / r->seconds : 0;
}

static double ns_per_rec(const bench_run *r)
{
    return r->records ? r->worker_cpu_s * 1e9 / (double)r->records : 0;
}

/* Starts a session for op and runs a warm-up bundle. */
static int open_session(bench_suite *s, bench_session *ss, int is_null, const char *label,
                        const bench_op *op, size_t str_len, uint64_t warmup)
{
    if (bench_session_start(&s->env, ss, is_null, is_null ? NULL : s->wrapper, label) < 0)
        return -1;
    if (bench_session_use(ss, op) < 0)
        return -1;
    if (warmup) {
        bench_run w;
        if (bench_session_run(ss, str_len, warmup, warmup, 0, &w) < 0)
            return -1;
    }
    return 0;
}

/* Stops the session; its first error (if any) is copied to err. */
static int close_session(bench_session *ss, char *err, size_t n)
{
    bench_session_stop(ss, 15);
    if (ss->error[0] && err && !err[0])
        snprintf(err, n, "%s", ss->error);
    return ss->error[0] ? -1 : 0;
}

/* One session, one op, several runs (counts[i] records in bundles of `bundle`). */
static int measure(bench_suite *s, int is_null, const char *label, const bench_op *op, size_t str_len,
                   const uint64_t *counts, int n, uint64_t bundle, bench_run *runs, char *err, size_t errn)
{
    bench_session ss;
    err[0] = '\0';
    memset(runs, 0, sizeof runs[0] * (size_t)n);
    if (open_session(s, &ss, is_null, label, op, str_len, s->smoke ? 500 : WARMUP) == 0)
        for (int i = 0; i < n; i++)
            if (bench_session_run(&ss, str_len, counts[i], bundle, 0, &runs[i]) < 0)
                break;
    return close_session(&ss, err, errn);
}

/* A throughput row from a run. */
static bench_row *rate_row(bench_suite *s, const char *id, const char *what, const bench_run *r,
                           double ceiling, const char *err)
{
    bench_row *row = bench_report_add(&s->rep, id, what);
    if (!row)
        return NULL;
    double rate = rate_of(r);
    bench_fmt_rate(row->result, sizeof row->result, rate, "rec/s");
    if (ceiling > 0 && rate > 0) {
        char c[24];
        bench_fmt_rate(c, sizeof c, ceiling, "");
        snprintf(row->vs_ceiling, sizeof row->vs_ceiling, "%.0f%% of %s", 100 * rate / ceiling, c);
    }
    if (r->seconds > 0)
        snprintf(row->worker, sizeof row->worker, "%.2f cores, %.0f ns/rec",
                 r->worker_cpu_s / r->seconds, ns_per_rec(r));
    bench_row_kv(row, "records", (double)r->records);
    bench_row_kv(row, "seconds", r->seconds);
    bench_row_kv(row, "records_per_s", rate);
    bench_row_kv(row, "mb_per_s", r->seconds > 0 ? (double)r->bytes / r->seconds / 1e6 : 0);
    bench_row_kv(row, "worker_cpu_s", r->worker_cpu_s);
    bench_row_kv(row, "driver_cpu_s", r->driver_cpu_s);
    bench_row_kv(row, "worker_ns_per_record", ns_per_rec(r));
    if (ceiling > 0) {
        bench_row_kv(row, "ceiling_records_per_s", ceiling);
        bench_row_kv(row, "ratio_to_ceiling", rate / ceiling);
    }
    if (err && err[0]) {
        row->verdict = BENCH_FAIL;
        bench_row_note(row, "%s", err);
    }
    return row;
}

static int failed(const bench_row *row)
{
    return row->verdict == BENCH_FAIL;
}

static bench_row *find_row(bench_suite *s, const char *id)
{
    for (int i = 0; i < s->rep.n; i++)
        if (!strcmp(s->rep.rows[i].id, id))
            return &s->rep.rows[i];
    return NULL;
}

static void plot_point(bench_suite *s, const char *label, double rate, double ceiling)
{
    char path[512];
    snprintf(path, sizeof path, "%s/throughput.dat", s->env.out_dir);
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "\"%s\" %.0f %.0f\n", label, rate, ceiling);
    fclose(f);
}

/* ---- the ceiling ----------------------------------------------------------------------- */

static void ceilings(bench_suite *s)
{
    static const uint64_t counts[BENCH_N_SIZES] = {10 * MILLION, 5 * MILLION, MILLION, 100000, 10000};
    static const uint64_t bundles[BENCH_N_SIZES] = {MILLION, MILLION, 100000, 10000, 1000};
    for (int i = 0; i < BENCH_N_SIZES; i++) {
        if (i > 0 && !selected(s, "W7"))
            continue;
        char what[128], err[1200], id[16];
        bench_run r;
        bench_op op = op_identity();
        uint64_t n = scaled(s, counts[i]);
        snprintf(id, sizeof id, "C%d", i);
        progress("running %s (null worker ceiling)\n", id);
        measure(s, 1, "null", &op, str_len_for(i), &n, 1, bundles[i], &r, err, sizeof err);
        snprintf(what, sizeof what, "ceiling: null worker, %s records", size_name[i]);
        bench_row *row = rate_row(s, id, what, &r, 0, err);
        s->ceiling[i] = rate_of(&r);
        if (row && i > 0) {
            char mb[32];
            bench_fmt_rate(mb, sizeof mb, (double)r.bytes / r.seconds / 1e6, "");
            snprintf(row->result + strlen(row->result), sizeof row->result - strlen(row->result),
                     ", %.0f MB/s", (double)r.bytes / r.seconds / 1e6);
        }
        if (row)
            snprintf(row->worker, sizeof row->worker, "null worker %.2f cores",
                     r.seconds > 0 ? r.worker_cpu_s / r.seconds : 0);
        if (row)
            bench_row_note(row, "driver %.2f cores", r.seconds > 0 ? r.driver_cpu_s / r.seconds : 0);
    }
}

/* ---- W1 / W2 / W3 / W4 ---------------------------------------------------------------------- */

/* Runs op at 100k (x3), 1M and 10M records on one worker; the 10M run is
 * the workload's figure, the others feed W11. */
static int series(bench_suite *s, const char *label, const bench_op *op, bench_series *out,
                  bench_run *big, char *err, size_t errn)
{
    uint64_t counts[5] = {scaled(s, 100000), scaled(s, 100000), scaled(s, 100000), scaled(s, MILLION),
                          scaled(s, 10 * MILLION)};
    bench_run runs[5];
    int rc = measure(s, 0, label, op, SMALL, counts, 5, MILLION, runs, err, errn);
    double a[3] = {ns_per_rec(&runs[0]), ns_per_rec(&runs[1]), ns_per_rec(&runs[2])};
    for (int i = 0; i < 2; i++)     /* median of the three 100k runs */
        for (int j = 0; j < 2 - i; j++)
            if (a[j] > a[j + 1]) {
                double t = a[j];
                a[j] = a[j + 1];
                a[j + 1] = t;
            }
    out->have = rc == 0;
    out->ns_per_rec[0] = a[1];
    out->ns_per_rec[1] = ns_per_rec(&runs[3]);
    out->ns_per_rec[2] = ns_per_rec(&runs[4]);
    out->rate[0] = rate_of(&runs[1]);
    out->rate[1] = rate_of(&runs[3]);
    out->rate[2] = rate_of(&runs[4]);
    *big = runs[4];
    return rc;
}

static void w1(bench_suite *s)
{
    char err[1200];
    bench_run r;
    bench_op op = op_identity();
    progress("running %s\n", "W1");
    series(s, "W1", &op, &s->s_identity, &r, err, sizeof err);
    bench_row *row = rate_row(s, "W1", "identity PROCESS, 10M records", &r, s->ceiling[0], err);
    if (!row)
        return;
    snprintf(row->target, sizeof row->target, ">= 5M rec/s, >= 50%% of ceiling");
    double rate = rate_of(&r);
    bench_row_judge(row, rate >= 5e6 && (s->ceiling[0] <= 0 || rate >= 0.5 * s->ceiling[0]), failed(row));
    plot_point(s, "W1 identity", rate, s->ceiling[0]);
}

static void w2(bench_suite *s)
{
    char err[1200];
    bench_run r;
    bench_op op = op_batch(0, 10000);
    progress("running %s\n", "W2");
    series(s, "W2", &op, &s->s_batch, &r, err, sizeof err);
    bench_row *row = rate_row(s, "W2", "echo ASYNC_BATCH UNORDERED b256 c10k, 10M", &r, s->ceiling[0], err);
    if (!row)
        return;
    s->w2_rate = rate_of(&r);
    snprintf(row->target, sizeof row->target, ">= 3M rec/s");
    bench_row_judge(row, s->w2_rate >= 3e6, failed(row));
    plot_point(s, "W2 batch unordered", s->w2_rate, s->ceiling[0]);
}

static void w3(bench_suite *s)
{
    char err[1200];
    bench_run r;
    bench_op op = op_batch(1, 10000);
    uint64_t n = scaled(s, 10 * MILLION);
    progress("running %s\n", "W3");
    measure(s, 0, "W3", &op, SMALL, &n, 1, MILLION, &r, err, sizeof err);
    bench_row *row = rate_row(s, "W3", "echo ASYNC_BATCH ORDERED b256 c10k, 10M", &r, s->ceiling[0], err);
    if (!row)
        return;
    double rate = rate_of(&r);
    snprintf(row->target, sizeof row->target, "within 20%% of W2");
    if (s->w2_rate > 0) {
        bench_row_note(row, "%.0f%% of W2", 100 * rate / s->w2_rate);
        bench_row_kv(row, "ratio_to_w2", rate / s->w2_rate);
        bench_row_judge(row, rate >= 0.8 * s->w2_rate, failed(row));
    }
    plot_point(s, "W3 batch ordered", rate, s->ceiling[0]);
}

static void w4(bench_suite *s)
{
    char err[1200];
    bench_run r;
    bench_op op = op_element(1000, NULL);
    uint64_t n = scaled(s, 2 * MILLION);
    progress("running %s\n", "W4");
    measure(s, 0, "W4", &op, SMALL, &n, 1, MILLION, &r, err, sizeof err);
    bench_row *row = rate_row(s, "W4", "echo PROCESS UNORDERED c1000, 2M", &r, s->ceiling[0], err);
    if (!row)
        return;
    snprintf(row->target, sizeof row->target, ">= 1M rec/s");
    bench_row_judge(row, rate_of(&r) >= 1e6, failed(row));
    plot_point(s, "W4 per element", rate_of(&r), s->ceiling[0]);
}

/* ---- W5 / W6: slow calls -------------------------------------------------------------------- */

static void w5(bench_suite *s)
{
    char err[1200];
    bench_run r;
    bench_op op = op_element(1000, "10");
    uint64_t n = scaled(s, 500000);
    progress("running %s\n", "W5");
    measure(s, 0, "W5", &op, SMALL, &n, 1, 100000, &r, err, sizeof err);
    bench_row *row = rate_row(s, "W5", "echo PROCESS delay 10 ms c1000, 100k bundles", &r, 0, err);
    if (!row)
        return;
    snprintf(row->target, sizeof row->target, ">= 90k rec/s (limit 100k)");
    bench_row_judge(row, rate_of(&r) >= 90000, failed(row));
    plot_point(s, "W5 10ms c1000", rate_of(&r), 100000);
}

static void w6(bench_suite *s)
{
    static const int batches[4] = {1, 8, 64, 256};
    static const char *const labels[4] = {"W6b1", "W6b8", "W6b64", "W6b256"};
    double rates[4] = {0};
    progress("running %s\n", "W6");
    for (int serial = 0; serial < 2; serial++) {
        for (int i = 0; i < 4; i++) {
            char err[1200], what[128], id[16];
            bench_run r;
            bench_op op = {0};
            op.operation = "echo";
            op.batched = 1;
            op.unordered = 1;
            op.batch_size = batches[i];
            op.capacity = serial ? batches[i] : 1000;
            op.timeout_ms = 60000;
            bench_op_set(&op, "delay_ms", "5");
            bench_op_set(&op, "delay_per_item_us", "20");
            bench_session ss;
            err[0] = '\0';
            memset(&r, 0, sizeof r);
            if (open_session(s, &ss, 0, labels[i], &op, SMALL, s->smoke ? 0 : 2000) == 0) {
                if (serial)   /* one call in flight: a fixed time, not a fixed count */
                    bench_session_run(&ss, SMALL, 0, 0, 1.5 * s->scale > 0.3 ? 1.5 * s->scale : 0.3, &r);
                else
                    bench_session_run(&ss, SMALL, scaled(s, 200000), 100000, 0, &r);
            }
            close_session(&ss, err, sizeof err);
            if (serial) {
                snprintf(id, sizeof id, "W6s%d", batches[i]);
                snprintf(what, sizeof what, "  same, capacity = batch (one call in flight)");
            } else {
                snprintf(id, sizeof id, "%s", labels[i]);
                snprintf(what, sizeof what, "echo batch %d, 5 ms + 20 us/item, c1000", batches[i]);
            }
            bench_row *row = rate_row(s, id, what, &r, 0, err);
            if (!row)
                continue;
            double rate = rate_of(&r);
            if (serial) {
                snprintf(what, sizeof what, "echo batch %d, 5 ms + 20 us/item, c%d", batches[i], batches[i]);
                snprintf(row->what, sizeof row->what, "%s", what);
                if (i == 0)
                    rates[0] = rate;
                else
                    bench_row_note(row, "%.1fx batch 1", rates[0] > 0 ? rate / rates[0] : 0);
                continue;
            }
            /* At most `capacity` elements are in flight, each call takes
             * 5 ms + batch x 20 us: the operation allows capacity / call time. */
            double limit = 1000.0 / (5e-3 + batches[i] * 20e-6);
            bench_row_kv(row, "bound_records_per_s", limit);
            bench_row_note(row, "bound capacity/call time = %.0f rec/s", limit);
            rates[i] = rate;
            if (i == 2) {
                snprintf(row->target, sizeof row->target, ">= 20x batch 1");
                bench_row_note(row, "%.1fx batch 1", rates[0] > 0 ? rate / rates[0] : 0);
                bench_row_judge(row, rates[0] > 0 && rate >= 20 * rates[0], failed(row));
            } else if (i > 0) {
                bench_row_note(row, "%.1fx batch 1", rates[0] > 0 ? rate / rates[0] : 0);
            }
            if (!serial) {
                char pl[32];
                snprintf(pl, sizeof pl, "W6 batch %d", batches[i]);
                plot_point(s, pl, rate, limit);
            }
        }
        if (s->smoke)
            break;
        for (int i = 0; i < 4; i++)
            rates[i] = 0;
    }
}

/* ---- W7: record sizes ---------------------------------------------------------------------- */

static void w7(bench_suite *s)
{
    static const uint64_t counts[BENCH_N_SIZES] = {0, 5 * MILLION, MILLION, 100000, 10000};
    static const uint64_t bundles[BENCH_N_SIZES] = {0, MILLION, 100000, 10000, 1000};
    progress("running %s\n", "W7");
    for (int i = 1; i < BENCH_N_SIZES; i++) {
        char err[1200], what[128], id[16];
        bench_run r;
        bench_op op = op_identity();
        uint64_t n = scaled(s, counts[i]);
        measure(s, 0, "W7", &op, str_len_for(i), &n, 1, bundles[i], &r, err, sizeof err);
        snprintf(id, sizeof id, "W7-%d", i);
        snprintf(what, sizeof what, "identity, %s records (STRING %zu)", size_name[i], str_len_for(i));
        bench_row *row = rate_row(s, id, what, &r, s->ceiling[i], err);
        if (!row)
            continue;
        double mbps = r.seconds > 0 ? (double)r.bytes / r.seconds / 1e6 : 0;
        size_t used = strlen(row->result);
        snprintf(row->result + used, sizeof row->result - used, ", %.0f MB/s", mbps);
        char pl[32];
        snprintf(pl, sizeof pl, "W7 %s", size_name[i]);
        plot_point(s, pl, rate_of(&r), s->ceiling[i]);
    }
}

/* ---- W8: latency at a steady rate -------------------------------------------------------------- */

typedef struct pacer {
    double t0, period, bundle_end;
    int per_tick;
    uint64_t tick, seq;
    fnw_buf buf;
    double *lat;                  /* latencies, ms */
    size_t n_lat, cap_lat;
} pacer;

static int pacer_next(void *self, double now, grpc_slice *out, uint64_t *records, double *wake_at)
{
    pacer *p = self;
    if (now >= p->bundle_end)
        return -1;
    fnw_buf_clear(&p->buf);
    uint64_t n = 0;
    while (p->t0 + (double)p->tick * p->period <= now) {
        int64_t ts_us = (int64_t)((double)p->tick * p->period * 1e6);
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
        p->cap_lat = cap;
    }
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
    qsort(p->lat, p->n_lat, sizeof p->lat[0], cmp_double);
    return rc;
}

static void write_latency(bench_suite *s, const pacer *p, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", s->env.out_dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    size_t step = p->n_lat > 2000 ? p->n_lat / 2000 : 1;
    for (size_t i = 0; i < p->n_lat; i += step)
        fprintf(f, "%.4f %.6f\n", p->lat[i], (double)(i + 1) / (double)p->n_lat);
    if (p->n_lat)
        fprintf(f, "%.4f 1.0\n", p->lat[p->n_lat - 1]);
    fclose(f);
}

static void w8(bench_suite *s)
{
    progress("running %s\n", "W8");
    for (int variant = 0; variant < 2; variant++) {
        char err[1200] = "";
        bench_op op = op_batch(0, 10000);
        if (variant == 1)
            op.batch_timeout_ms = 2;
        bench_session ss;
        pacer p;
        memset(&p, 0, sizeof p);
        double secs = s->smoke ? 0.5 : 5 * (s->scale < 1 ? (s->scale > 0.2 ? s->scale : 0.2) : 1);
        if (open_session(s, &ss, 0, "W8", &op, SMALL, s->smoke ? 200 : 2000) == 0)
            run_paced(s, &ss, secs, s->smoke ? 0.25 : 1.0, &p);
        close_session(&ss, err, sizeof err);
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
        if (variant == 0)
            bench_row_note(row, "a 256 batch takes 25.6 ms to fill at 10k rec/s and is sent only when "
                                "full or at bundle end (1 s bundles)");
        else
            bench_row_note(row, "a partial batch goes 2 ms after its first element; outputs wait for "
                                "the 5 ms flush timer");
        write_latency(s, &p, variant ? "latency_timeout.dat" : "latency.dat");
        free(p.lat);
    }
}

/* ---- W9: memory --------------------------------------------------------------------------- */

typedef struct rss_log {
    pid_t pid;
    double t0;
    FILE *f;
    double *mb;
    double *t;
    size_t n, cap;
} rss_log;

static void rss_tick(void *arg, double now)
{
    rss_log *l = arg;
    long kb = bench_proc_status_kb(l->pid, "VmRSS");
    if (kb < 0)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        double *a = realloc(l->mb, cap * sizeof *a), *b;
        if (!a)
            return;
        l->mb = a;
        b = realloc(l->t, cap * sizeof *b);
        if (!b)
            return;
        l->t = b;
        l->cap = cap;
    }
    l->mb[l->n] = (double)kb / 1024.0;
    l->t[l->n++] = now - l->t0;
    if (l->f)
        fprintf(l->f, "%.2f %.2f\n", now - l->t0, (double)kb / 1024.0);
}

static void w9_idle(bench_suite *s)
{
    char err[1200] = "";
    bench_session ss;
    bench_op id = op_identity(), batch = op_batch(0, 10000);
    long rss = -1, hwm = -1;
    bench_run r;
    if (open_session(s, &ss, 0, "W9idle", &id, SMALL, 0) == 0 &&
        bench_session_run(&ss, SMALL, scaled(s, MILLION), MILLION, 0, &r) == 0 &&
        bench_session_use(&ss, &batch) == 0 &&
        bench_session_run(&ss, SMALL, scaled(s, MILLION), MILLION, 0, &r) == 0) {
        double end = bench_now() + 1.0;
        while (bench_now() < end)
            bench_rig_poll(s->env.rig, 0.05);
        rss = bench_proc_status_kb(ss.proc.pid, "VmRSS");
        hwm = bench_proc_status_kb(ss.proc.pid, "VmHWM");
    }
    close_session(&ss, err, sizeof err);
    bench_row *row = bench_report_add(&s->rep, "W9a", "idle RSS after 1M identity + 1M W2 bundles");
    if (!row)
        return;
    snprintf(row->result, sizeof row->result, "RSS %.1f MB (peak %.1f)", (double)rss / 1024,
             (double)hwm / 1024);
    snprintf(row->target, sizeof row->target, "idle RSS <= 20 MB");
    bench_row_kv(row, "idle_rss_mb", (double)rss / 1024);
    bench_row_kv(row, "vm_hwm_mb", (double)hwm / 1024);
    bench_row_judge(row, rss > 0 && rss <= 20 * 1024, err[0] != 0);
    if (err[0])
        bench_row_note(row, "%s", err);
}

static void w9_flood(bench_suite *s)
{
    char err[1200] = "", path[512];
    bench_session ss;
    bench_op op = op_element(10000, "10");
    bench_run r;
    memset(&r, 0, sizeof r);
    rss_log l;
    memset(&l, 0, sizeof l);
    long hwm = -1;
    double secs = 8 * (s->scale < 1 ? (s->scale > 0.25 ? s->scale : 0.25) : 1);
    snprintf(path, sizeof path, "%s/rss.dat", s->env.out_dir);
    if (open_session(s, &ss, 0, "W9flood", &op, 974, 1000) == 0) {
        l.pid = ss.proc.pid;
        l.t0 = bench_now();
        l.f = fopen(path, "w");
        bench_rig_set_tick(s->env.rig, 0.1, rss_tick, &l);
        bench_session_run(&ss, 974, 0, 0, secs, &r);
        bench_rig_set_tick(s->env.rig, 0, NULL, NULL);
        hwm = bench_proc_status_kb(ss.proc.pid, "VmHWM");
        if (l.f)
            fclose(l.f);
    }
    close_session(&ss, err, sizeof err);
    /* Flat: after the first second, the second half never rises above the
     * first half's peak by more than 10% (or 2 MB). */
    double peak = 0, first = 0, second = 0;
    size_t n1 = 0;
    for (size_t i = 0; i < l.n; i++) {
        peak = l.mb[i] > peak ? l.mb[i] : peak;
        if (l.t[i] < 1.0)
            continue;
        if (l.t[i] < 1.0 + (secs - 1.0) / 2) {
            first = l.mb[i] > first ? l.mb[i] : first;
            n1++;
        } else {
            second = l.mb[i] > second ? l.mb[i] : second;
        }
    }
    int flat = n1 > 0 && second <= first * 1.10 + 2;
    bench_row *row = bench_report_add(&s->rep, "W9b", "flood 1 KB records into echo 10 ms c10k");
    if (!row)
        return;
    snprintf(row->result, sizeof row->result, "peak %.1f MB, %s", peak, flat ? "flat" : "growing");
    snprintf(row->target, sizeof row->target, "<= 64 MB and flat");
    bench_row_kv(row, "peak_rss_mb", peak);
    bench_row_kv(row, "vm_hwm_mb", (double)hwm / 1024);
    bench_row_kv(row, "first_half_max_mb", first);
    bench_row_kv(row, "second_half_max_mb", second);
    bench_row_kv(row, "records", (double)r.records);
    bench_row_kv(row, "records_per_s", rate_of(&r));
    char rate[32];
    bench_fmt_rate(rate, sizeof rate, rate_of(&r), "rec/s");
    bench_row_note(row, "%.0f s, %s drained (limit 1M rec/s); max RSS %.1f MB in the first half, "
                   "%.1f MB in the second; VmHWM %.1f MB", secs, rate, first, second, (double)hwm / 1024);
    bench_row_judge(row, peak > 0 && peak <= 64 && flat, err[0] != 0);
    if (err[0])
        bench_row_note(row, "%s", err);
    free(l.mb);
    free(l.t);
}

/* ---- W10: drain at bundle end ----------------------------------------------------------------- */

static void w10(bench_suite *s)
{
    char err[1200] = "";
    bench_session ss;
    bench_op op = op_element(1000, "50");
    double drains[16];
    int n = 0;
    progress("running %s\n", "W10");
    if (open_session(s, &ss, 0, "W10", &op, SMALL, 1000) == 0)
        for (int i = 0; i < (s->smoke ? 2 : 8); i++) {
            bench_run r;
            if (bench_session_run(&ss, SMALL, 1000, 1000, 0, &r) < 0)
                break;
            drains[n++] = r.max_drain_s * 1e3;
        }
    close_session(&ss, err, sizeof err);
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

/* ---- W11: scaling --------------------------------------------------------------------------- */

static void w11_sizes(bench_suite *s, const char *id, const char *what, const bench_series *se)
{
    bench_row *row = bench_report_add(&s->rep, id, what);
    if (!row)
        return;
    double lo = se->ns_per_rec[0], hi = se->ns_per_rec[0];
    for (int i = 1; i < 3; i++) {
        lo = se->ns_per_rec[i] < lo ? se->ns_per_rec[i] : lo;
        hi = se->ns_per_rec[i] > hi ? se->ns_per_rec[i] : hi;
    }
    snprintf(row->result, sizeof row->result, "%.0f / %.0f / %.0f ns/rec", se->ns_per_rec[0],
             se->ns_per_rec[1], se->ns_per_rec[2]);
    snprintf(row->vs_ceiling, sizeof row->vs_ceiling, "spread %.0f%%", lo > 0 ? 100 * (hi / lo - 1) : 0);
    snprintf(row->target, sizeof row->target, "within 20%% across sizes");
    bench_row_kv(row, "ns_per_record_100k", se->ns_per_rec[0]);
    bench_row_kv(row, "ns_per_record_1m", se->ns_per_rec[1]);
    bench_row_kv(row, "ns_per_record_10m", se->ns_per_rec[2]);
    bench_row_kv(row, "records_per_s_100k", se->rate[0]);
    bench_row_kv(row, "records_per_s_1m", se->rate[1]);
    bench_row_kv(row, "records_per_s_10m", se->rate[2]);
    bench_row_note(row, "worker CPU per record at 100k (median of 3) / 1M / 10M records; rec/s %.2fM / "
                   "%.2fM / %.2fM", se->rate[0] / 1e6, se->rate[1] / 1e6, se->rate[2] / 1e6);
    bench_row_judge(row, se->have && lo > 0 && hi <= 1.2 * lo, !se->have);
}

static void w11_capacity(bench_suite *s, const char *id, const char *what, int batched)
{
    char err[1200] = "";
    bench_run r[2];
    memset(r, 0, sizeof r);
    uint64_t n = scaled(s, MILLION);
    for (int i = 0; i < 2 && !err[0]; i++) {
        int cap = i ? 100000 : 100;
        bench_op op = batched ? op_batch(0, cap) : op_element(cap, NULL);
        measure(s, 0, id, &op, SMALL, &n, 1, MILLION, &r[i], err, sizeof err);
    }
    bench_row *row = bench_report_add(&s->rep, id, what);
    if (!row)
        return;
    double a = ns_per_rec(&r[0]), b = ns_per_rec(&r[1]);
    snprintf(row->result, sizeof row->result, "%.0f vs %.0f ns/rec", a, b);
    snprintf(row->vs_ceiling, sizeof row->vs_ceiling, "ratio %.2f", a > 0 ? b / a : 0);
    snprintf(row->target, sizeof row->target, "c100k within 20%% of c100");
    bench_row_kv(row, "ns_per_record_c100", a);
    bench_row_kv(row, "ns_per_record_c100000", b);
    bench_row_kv(row, "records_per_s_c100", rate_of(&r[0]));
    bench_row_kv(row, "records_per_s_c100000", rate_of(&r[1]));
    bench_row_note(row, "rec/s %.2fM at capacity 100, %.2fM at 100,000%s", rate_of(&r[0]) / 1e6,
                   rate_of(&r[1]) / 1e6, batched ? " (at capacity 100 a batch holds 100)" : "");
    bench_row_judge(row, a > 0 && b <= 1.2 * a, err[0] != 0);
    if (err[0])
        bench_row_note(row, "%s", err);
}

static void w11(bench_suite *s)
{
    progress("running %s\n", "W11");
    if (s->s_identity.have || find_row(s, "W1"))
        w11_sizes(s, "W11a", "identity cost at 100k / 1M / 10M records", &s->s_identity);
    if (s->s_batch.have || find_row(s, "W2"))
        w11_sizes(s, "W11b", "W2's op cost at 100k / 1M / 10M records", &s->s_batch);
    w11_capacity(s, "W11c", "echo PROCESS cost at capacity 100 vs 100k", 0);
    w11_capacity(s, "W11d", "W2's op cost at capacity 100 vs 100k", 1);
}

/* ---- instructions per record (callgrind) ----------------------------------------------------- */

static double callgrind_summary(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    double v = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "summary:", 8) || (v < 0 && !strncmp(line, "totals:", 7)))
            v = strtod(strchr(line, ':') + 1, NULL);
    fclose(f);
    return v;
}

static int run_cmd(const char *fmt, long pid)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, fmt, pid);
    return system(cmd);
}

/* Instructions the worker executes per record of op, over n records. */
static double ipr(bench_suite *s, const char *label, const bench_op *op, uint64_t n, char *err, size_t errn)
{
    char dir[512], out[700], wrapper[900], dump[720];
    snprintf(dir, sizeof dir, "%s/callgrind", s->env.out_dir);
    snprintf(out, sizeof out, "%s/%s.out", dir, label);
    snprintf(dump, sizeof dump, "%s.1", out);
    char mk[600];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
    if (system(mk) != 0)
        return -1;
    unlink(out);
    unlink(dump);
    snprintf(wrapper, sizeof wrapper, "valgrind --tool=callgrind --callgrind-out-file=%s", out);
    bench_session ss;
    double v = -1;
    err[0] = '\0';
    if (bench_session_start(&s->env, &ss, 0, wrapper, label) == 0 && bench_session_use(&ss, op) == 0) {
        bench_run r;
        if (bench_session_run(&ss, SMALL, 2000, 2000, 0, &r) == 0 &&
            run_cmd("callgrind_control -z %ld >/dev/null 2>&1", (long)ss.proc.pid) == 0 &&
            bench_session_run(&ss, SMALL, n, 100000, 0, &r) == 0 &&
            run_cmd("callgrind_control -d %ld >/dev/null 2>&1", (long)ss.proc.pid) == 0) {
            for (int i = 0; i < 100 && v < 0; i++) {
                bench_rig_poll(s->env.rig, 0.05);
                v = callgrind_summary(dump);
            }
            if (v < 0)
                snprintf(err, errn, "no callgrind dump at %s", dump);
        } else if (!ss.error[0]) {
            snprintf(err, errn, "callgrind_control failed (is vgdb usable here?)");
        }
    }
    close_session(&ss, err, errn);
    return v > 0 ? v / (double)n : -1;
}

static void instructions(bench_suite *s)
{
    struct { const char *id; bench_op op; } w[4] = {
        {"W1", op_identity()}, {"W2", op_batch(0, 10000)}, {"W3", op_batch(1, 10000)},
        {"W4", op_element(1000, NULL)},
    };
    progress("running %s (callgrind)\n", "instructions per record");
    for (int i = 0; i < 4; i++) {
        if (!selected(s, w[i].id))
            continue;
        char err[1200], label[32];
        snprintf(label, sizeof label, "ipr-%s", w[i].id);
        uint64_t n = s->smoke ? 2000 : scaled(s, 200000);
        double v = ipr(s, label, &w[i].op, n, err, sizeof err);
        bench_row *row = find_row(s, w[i].id);
        if (!row)
            continue;
        if (v > 0) {
            size_t used = strlen(row->worker);
            snprintf(row->worker + used, sizeof row->worker - used, ", %.0f instr/rec", v);
            bench_row_kv(row, "instructions_per_record", v);
        } else {
            bench_row_note(row, "instructions per record not measured: %s", err);
        }
    }
}

/* ---- the suites ------------------------------------------------------------------------------ */

void bench_suite_run(bench_suite *s)
{
    char path[512];
    snprintf(path, sizeof path, "%s/throughput.dat", s->env.out_dir);
    unlink(path);
    ceilings(s);
    if (selected(s, "W1") || selected(s, "W11"))
        w1(s);
    if (selected(s, "W2") || selected(s, "W11"))
        w2(s);
    if (selected(s, "W3"))
        w3(s);
    if (selected(s, "W4"))
        w4(s);
    if (selected(s, "W5"))
        w5(s);
    if (selected(s, "W6"))
        w6(s);
    if (selected(s, "W7"))
        w7(s);
    if (selected(s, "W8"))
        w8(s);
    if (selected(s, "W9")) {
        progress("running %s\n", "W9");
        w9_idle(s);
        w9_flood(s);
    }
    if (selected(s, "W10"))
        w10(s);
    if (selected(s, "W11"))
        w11(s);
    if (s->ipr)
        instructions(s);
}

/* Smoke: counts and exits only; every row is INFO unless the worker misbehaved. */
void bench_suite_smoke(bench_suite *s)
{
    struct { const char *id, *what; bench_op op; int is_null; } w[] = {
        {"C0", "null worker", op_identity(), 1},
        {"W1", "identity", op_identity(), 0},
        {"W2", "echo ASYNC_BATCH UNORDERED b256 c10k", op_batch(0, 10000), 0},
        {"W3", "echo ASYNC_BATCH ORDERED b256 c10k", op_batch(1, 10000), 0},
        {"W4", "echo PROCESS UNORDERED c1000", op_element(1000, NULL), 0},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        char err[1200], what[128];
        bench_run r[2];
        uint64_t counts[2] = {3000, 5000};
        progress("smoke %s\n", w[i].id);
        measure(s, w[i].is_null, w[i].id, &w[i].op, SMALL, counts, 2, 2000, r, err, sizeof err);
        r[0].records += r[1].records;
        r[0].bytes += r[1].bytes;
        r[0].seconds += r[1].seconds;
        r[0].worker_cpu_s += r[1].worker_cpu_s;
        r[0].driver_cpu_s += r[1].driver_cpu_s;
        snprintf(what, sizeof what, "%s, 8000 rec", w[i].what);
        rate_row(s, w[i].id, what, &r[0], 0, err);
    }
    progress("smoke %s\n", "W8");
    w8(s);
    w10(s);
}
