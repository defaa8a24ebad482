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

/* W2's operation: echo batch, batch 256, capacity 10,000, no delay. */
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

/* Per-element echo, UNORDERED. */
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
        snprintf(row->worker, sizeof row->worker, "%.2f cores (top thr %.0f%%), %.0f ns/rec",
                 r->worker_cpu_s / r->seconds, 100 * r->worker_top_thread_s / r->seconds, ns_per_rec(r));
    bench_row_kv(row, "records", (double)r->records);
    bench_row_kv(row, "seconds", r->seconds);
    bench_row_kv(row, "records_per_s", rate);
    bench_row_kv(row, "mb_per_s", r->seconds > 0 ? (double)r->bytes / r->seconds / 1e6 : 0);
    bench_row_kv(row, "worker_cpu_s", r->worker_cpu_s);
    bench_row_kv(row, "driver_cpu_s", r->driver_cpu_s);
    bench_row_kv(row, "worker_ns_per_record", ns_per_rec(r));
    bench_row_kv(row, "worker_top_thread_cores", r->seconds > 0 ? r->worker_top_thread_s / r->seconds : 0);
    if (ceiling > 0) {
        bench_row_kv(row, "ceiling_records_per_s", ceiling);
        bench_row_kv(row, "ratio_to_ceiling", rate / ceiling);
    }
    bench_row_kv(row, "other_processes_cores", r->other_cores);
    if (r->other_cores > 0.25)
        bench_row_note(row, "NOISY: other processes used %.2f cores during this run", r->other_cores);
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
        bench_run runs[3], r;
        bench_op op = op_identity();
        uint64_t n[3] = {scaled(s, counts[i]), scaled(s, counts[i]), scaled(s, counts[i])};
        snprintf(id, sizeof id, "C%d", i);
        progress("running %s (null worker ceiling)\n", id);
        /* A ceiling is the best the transport did: best of three runs. */
        measure(s, 1, "null", &op, str_len_for(i), n, 3, bundles[i], runs, err, sizeof err);
        r = runs[0];
        for (int k = 1; k < 3; k++)
            if (rate_of(&runs[k]) > rate_of(&r))
                r = runs[k];
        snprintf(what, sizeof what, "ceiling: null worker, %s records (best of 3)", size_name[i]);
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
    int rc = measure(s, 0, label, op, SMALL, counts, 5, s->bundle, runs, err, errn);
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
    bench_row *row = rate_row(s, "W2", "echo batch UNORDERED b256 c10k, 10M", &r, s->ceiling[0], err);
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
    measure(s, 0, "W3", &op, SMALL, &n, 1, s->bundle, &r, err, sizeof err);
    bench_row *row = rate_row(s, "W3", "echo batch ORDERED b256 c10k, 10M", &r, s->ceiling[0], err);
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
    measure(s, 0, "W4", &op, SMALL, &n, 1, s->bundle, &r, err, sizeof err);
    bench_row *row = rate_row(s, "W4", "echo per-element UNORDERED c1000, 2M", &r, s->ceiling[0], err);
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
    bench_row *row = rate_row(s, "W5", "echo per-element delay 10 ms c1000, 100k bundles", &r, 0, err);
    if (!row)
        return;
    snprintf(row->target, sizeof row->target, ">= 90k rec/s (limit 100k)");
    bench_row_judge(row, rate_of(&r) >= 90000, failed(row));
    plot_point(s, "W5 10ms c1000", rate_of(&r), 100000);
}

/* echo batch UNORDERED, 5 ms + 20 us per item per call. */
static bench_op op_model(int batch, int capacity)
{
    bench_op op = {0};
    op.operation = "echo";
    op.batched = 1;
    op.unordered = 1;
    op.batch_size = batch;
    op.capacity = capacity;
    op.timeout_ms = 60000;
    bench_op_set(&op, "delay_ms", "5");
    bench_op_set(&op, "delay_per_item_us", "20");
    return op;
}

/* One W6 point: n records through op_model(batch, capacity). */
static bench_row *w6_point(bench_suite *s, const char *id, int batch, int capacity, uint64_t n,
                           double *rate)
{
    char err[1200] = "", what[128];
    bench_run r;
    bench_session ss;
    bench_op op = op_model(batch, capacity);
    memset(&r, 0, sizeof r);
    if (open_session(s, &ss, 0, id, &op, SMALL, capacity < 1000 ? 20 : 2000) == 0)
        bench_session_run(&ss, SMALL, n, 100000, 0, &r);
    close_session(&ss, err, sizeof err);
    snprintf(what, sizeof what, "echo batch %d, 5 ms + 20 us/item, c%d", batch, capacity);
    *rate = rate_of(&r);
    return rate_row(s, id, what, &r, 0, err);
}

/* Batching for a model server: batch 1, 8, 64, 256 at capacity 1,000 (the
 * workload of the issue), then with capacity = batch size, i.e. a server
 * that takes one call at a time, where batching is what buys throughput. */
static void w6(bench_suite *s)
{
    static const int batches[4] = {1, 8, 64, 256};
    double rate[4], serial[4];
    progress("running %s\n", "W6");
    for (int i = 0; i < 4; i++) {
        char id[16], pl[32];
        snprintf(id, sizeof id, "W6b%d", batches[i]);
        bench_row *row = w6_point(s, id, batches[i], 1000, scaled(s, 200000), &rate[i]);
        /* Each call takes 5 ms + batch x 20 us, and only whole batches go
         * out: at most floor(capacity / batch) x batch elements are in
         * flight. That over the call time is what the operation allows. */
        double bound = (double)(1000 / batches[i] * batches[i]) / (5e-3 + batches[i] * 20e-6);
        snprintf(pl, sizeof pl, "W6 batch %d", batches[i]);
        plot_point(s, pl, rate[i], bound);
        if (!row)
            continue;
        bench_row_kv(row, "bound_records_per_s", bound);
        bench_row_note(row, "bound (whole batches in flight / call time) %.0f rec/s, %.0f%% of it", bound,
                       100 * rate[i] / bound);
        if (i > 0)
            bench_row_note(row, "%.1fx batch 1", rate[0] > 0 ? rate[i] / rate[0] : 0);
        if (i == 2) {
            snprintf(row->target, sizeof row->target, ">= 20x batch 1");
            bench_row_judge(row, rate[0] > 0 && rate[i] >= 20 * rate[0], failed(row));
        }
    }
    if (s->smoke)
        return;
    for (int i = 0; i < 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "W6s%d", batches[i]);
        /* One call in flight runs at batch / call time: about 1.5 s of it. */
        double expect = batches[i] / (5e-3 + batches[i] * 20e-6);
        uint64_t n = (uint64_t)(expect * 1.5 * (s->scale < 1 ? s->scale : 1)) + 50;
        bench_row *row = w6_point(s, id, batches[i], batches[i], n, &serial[i]);
        if (row && i > 0)
            bench_row_note(row, "%.1fx batch 1 (one call in flight)", serial[0] > 0 ? serial[i] / serial[0] : 0);
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
    long start_rss = -1;
    int ok = open_session(s, &ss, 0, "W9idle", &id, SMALL, 0) == 0;
    if (ok)
        start_rss = bench_proc_status_kb(ss.proc.pid, "VmRSS");
    if (ok && bench_session_run(&ss, SMALL, scaled(s, MILLION), MILLION, 0, &r) == 0 &&
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
    bench_row_kv(row, "start_rss_mb", (double)start_rss / 1024);
    bench_row_note(row, "RSS %.1f MB right after start-up, before any bundle", (double)start_rss / 1024);
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
    double secs = 8 * (s->scale > 0.25 ? s->scale : 0.25);
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
        measure(s, 0, id, &op, SMALL, &n, 1, s->bundle, &r[i], err, sizeof err);
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

/* Worker CPU a bundle costs beyond its records: 1M records in ten bundles
 * against the same in one (an explanation for W11a/b, no target). */
static void w11_per_bundle(bench_suite *s)
{
    char err[1200] = "";
    bench_run r[2];
    bench_session ss;
    bench_op op = op_identity();
    uint64_t n = scaled(s, MILLION);
    memset(r, 0, sizeof r);
    if (open_session(s, &ss, 0, "W11e", &op, SMALL, WARMUP) == 0)
        for (int k = 0; k < 3; k++)      /* alternate, keep the cheapest of each */
            for (int i = 0; i < 2; i++) {
                bench_run t;
                if (bench_session_run(&ss, SMALL, n, i ? n : n / 10, 0, &t) < 0)
                    break;
                if (k == 0 || t.worker_cpu_s < r[i].worker_cpu_s)
                    r[i] = t;
            }
    close_session(&ss, err, sizeof err);
    bench_row *row = bench_report_add(&s->rep, "W11e", "identity 1M records: 10 bundles vs 1 bundle");
    if (!row)
        return;
    double per_bundle_ms = (r[0].worker_cpu_s - r[1].worker_cpu_s) / 9 * 1e3;
    snprintf(row->result, sizeof row->result, "%.2f ms worker CPU per bundle", per_bundle_ms);
    snprintf(row->vs_ceiling, sizeof row->vs_ceiling, "%.0f vs %.0f ns/rec", ns_per_rec(&r[0]),
             ns_per_rec(&r[1]));
    bench_row_kv(row, "per_bundle_worker_cpu_ms", per_bundle_ms);
    bench_row_kv(row, "ns_per_record_100k_bundles", ns_per_rec(&r[0]));
    bench_row_kv(row, "ns_per_record_1m_bundle", ns_per_rec(&r[1]));
    bench_row_note(row, "the fixed cost of a bundle beyond its records (best of 3 each)");
    if (err[0]) {
        row->verdict = BENCH_FAIL;
        bench_row_note(row, "%s", err);
    }
}

static void w11(bench_suite *s)
{
    progress("running %s\n", "W11");
    if (s->s_identity.have || find_row(s, "W1"))
        w11_sizes(s, "W11a", "identity cost at 100k / 1M / 10M records", &s->s_identity);
    if (s->s_batch.have || find_row(s, "W2"))
        w11_sizes(s, "W11b", "W2's op cost at 100k / 1M / 10M records", &s->s_batch);
    w11_capacity(s, "W11c", "echo per-element cost at capacity 100 vs 100k", 0);
    w11_capacity(s, "W11d", "W2's op cost at capacity 100 vs 100k", 1);
    w11_per_bundle(s);
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

/* A failing bundle must come back as an error response that names the
 * cause, and the worker must go on serving the next bundle. */
static void smoke_error_path(bench_suite *s)
{
    char err[1200] = "";
    bench_session ss;
    bench_op bad = op_element(1000, NULL), good = op_identity();
    bench_op_set(&bad, "fail_every", "1000");
    bench_op_set(&bad, "fail_message", "smoke-injected");
    bench_row *row = bench_report_add(&s->rep, "ERR", "bundle with a failing call, then a good bundle");
    if (!row)
        return;
    progress("smoke %s\n", "ERR");
    int got_error = 0, recovered = 0;
    if (open_session(s, &ss, 0, "ERR", &bad, SMALL, 0) == 0) {
        bench_run r;
        got_error = bench_session_run(&ss, SMALL, 3000, 3000, 0, &r) < 0 && strstr(ss.error, "smoke-injected");
        snprintf(row->result, sizeof row->result, "%s", got_error ? "error response" : "no error");
        if (!got_error)
            snprintf(err, sizeof err, "expected an error response naming 'smoke-injected', got: %.1100s",
                     ss.error[0] ? ss.error : "a successful bundle");
        ss.error[0] = '\0';
        recovered = bench_session_use(&ss, &good) == 0 && bench_session_run(&ss, SMALL, 2000, 2000, 0, &r) == 0;
    }
    close_session(&ss, err, sizeof err);
    snprintf(row->target, sizeof row->target, "error, then the next bundle ok");
    bench_row_judge(row, got_error && recovered, !got_error || !recovered || err[0]);
    if (err[0])
        bench_row_note(row, "%s", err);
}

/* Smoke: counts and exits only; every row is INFO unless the worker misbehaved. */
void bench_suite_smoke(bench_suite *s)
{
    struct { const char *id, *what; bench_op op; int is_null; } w[] = {
        {"C0", "null worker", op_identity(), 1},
        {"W1", "identity", op_identity(), 0},
        {"W2", "echo batch UNORDERED b256 c10k", op_batch(0, 10000), 0},
        {"W3", "echo batch ORDERED b256 c10k", op_batch(1, 10000), 0},
        {"W4", "echo per-element UNORDERED c1000", op_element(1000, NULL), 0},
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
    smoke_error_path(s);
    progress("smoke %s\n", "W8");
    w8(s);
    w10(s);
}
