/* bench/suite_common.c — what every workload of the suite shares
 * (declared in suite_internal.h): the record sizes, the --only filter and
 * --scale, the three operation specs the workloads use (identity, echo in
 * batches, echo per element), starting a session with its warm-up bundle and
 * stopping it, measuring several runs on one worker, and turning a run into
 * a throughput row (rate, share of the null-worker ceiling, worker cores and
 * CPU per record, a NOISY note when other processes competed for the CPU).
 */
#include "bench/suite_internal.h"

#include <stdio.h>
#include <string.h>

const char *const suite_size_name[BENCH_N_SIZES] = {"35 B", "100 B", "1 KB", "10 KB", "100 KB"};
const size_t suite_size_bytes[BENCH_N_SIZES] = {0, 100, 1000, 10000, 100000};

/* String length giving input records of about `bytes` (26 bytes of row). */
size_t suite_str_len_for(int size_idx)
{
    return size_idx == 0 ? SMALL : suite_size_bytes[size_idx] - 26;
}

/* ---- helpers ------------------------------------------------------------------- */

int suite_selected(const bench_suite *s, const char *id)
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

uint64_t suite_scaled(const bench_suite *s, uint64_t n)
{
    double v = (double)n * s->scale;
    return v < 1000 ? 1000 : (uint64_t)v;
}

void suite_progress(const char *fmt, const char *id)
{
    fprintf(stderr, fmt, id);
    fflush(stderr);
}

bench_op suite_op_identity(void)
{
    bench_op op = {0};
    op.operation = "identity";
    return op;
}

/* W2's operation: echo batch, batch 256, capacity 10,000, no delay. */
bench_op suite_op_batch(int ordered, int capacity)
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
bench_op suite_op_element(int capacity, const char *delay_ms)
{
    bench_op op = {0};
    op.operation = "echo";
    op.unordered = 1;
    op.capacity = capacity;
    if (delay_ms)
        bench_op_set(&op, "delay_ms", delay_ms);
    return op;
}

double suite_rate_of(const bench_run *r)
{
    return r->seconds > 0 ? (double)r->records / r->seconds : 0;
}

double suite_ns_per_rec(const bench_run *r)
{
    return r->records ? r->worker_cpu_s * 1e9 / (double)r->records : 0;
}

void suite_show_peak_rss(bench_row *row, const bench_run *r)
{
    size_t len = strlen(row->worker);
    if (r->worker_peak_rss_mb > 0)
        snprintf(row->worker + len, sizeof row->worker - len, "%speak RSS %.1f MB", len ? ", " : "",
                 r->worker_peak_rss_mb);
}

/* Starts a session for op and runs a warm-up bundle. */
int suite_session_start(bench_suite *s, bench_session *ss, int is_null, const char *label,
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
int suite_session_stop(bench_session *ss, char *err, size_t n)
{
    bench_session_stop(ss, 15);
    if (ss->error[0] && err && !err[0])
        snprintf(err, n, "%s", ss->error);
    return ss->error[0] ? -1 : 0;
}

/* One session, one op, several runs (counts[i] records in bundles of `bundle`). */
int suite_measure(bench_suite *s, int is_null, const char *label, const bench_op *op, size_t str_len,
                  const uint64_t *counts, int n, uint64_t bundle, bench_run *runs, char *err, size_t errn)
{
    bench_session ss;
    err[0] = '\0';
    memset(runs, 0, sizeof runs[0] * (size_t)n);
    if (suite_session_start(s, &ss, is_null, label, op, str_len, s->smoke ? 500 : WARMUP) == 0)
        for (int i = 0; i < n; i++)
            if (bench_session_run(&ss, str_len, counts[i], bundle, 0, &runs[i]) < 0)
                break;
    return suite_session_stop(&ss, err, errn);
}

/* A throughput row from a run. */
bench_row *suite_rate_row(bench_suite *s, const char *id, const char *what, const bench_run *r,
                          double ceiling, const char *err)
{
    bench_row *row = bench_report_add(&s->rep, id, what);
    if (!row)
        return NULL;
    double rate = suite_rate_of(r);
    bench_fmt_rate(row->result, sizeof row->result, rate, "rec/s");
    if (ceiling > 0 && rate > 0) {
        char c[24];
        bench_fmt_rate(c, sizeof c, ceiling, "");
        snprintf(row->vs_ceiling, sizeof row->vs_ceiling, "%.0f%% of %s", 100 * rate / ceiling, c);
    }
    if (r->seconds > 0)
        snprintf(row->worker, sizeof row->worker, "%.2f cores (top thr %.0f%%), %.0f ns/rec",
                 r->worker_cpu_s / r->seconds, 100 * r->worker_top_thread_s / r->seconds, suite_ns_per_rec(r));
    bench_row_kv(row, "records", (double)r->records);
    bench_row_kv(row, "seconds", r->seconds);
    bench_row_kv(row, "records_per_s", rate);
    bench_row_kv(row, "mb_per_s", r->seconds > 0 ? (double)r->bytes / r->seconds / 1e6 : 0);
    bench_row_kv(row, "worker_cpu_s", r->worker_cpu_s);
    bench_row_kv(row, "driver_cpu_s", r->driver_cpu_s);
    bench_row_kv(row, "worker_ns_per_record", suite_ns_per_rec(r));
    bench_row_kv(row, "worker_top_thread_cores", r->seconds > 0 ? r->worker_top_thread_s / r->seconds : 0);
    if (ceiling > 0) {
        bench_row_kv(row, "ceiling_records_per_s", ceiling);
        bench_row_kv(row, "ratio_to_ceiling", rate / ceiling);
    }
    bench_row_kv(row, "other_processes_cores", r->other_cores);
    bench_row_kv(row, "worker_peak_rss_mb", r->worker_peak_rss_mb);
    if (r->other_cores > 0.25)
        bench_row_note(row, "NOISY: other processes used %.2f cores during this run", r->other_cores);
    if (err && err[0]) {
        row->verdict = BENCH_FAIL;
        bench_row_note(row, "%s", err);
    }
    return row;
}

int suite_failed(const bench_row *row)
{
    return row->verdict == BENCH_FAIL;
}

bench_row *suite_find_row(bench_suite *s, const char *id)
{
    for (int i = 0; i < s->rep.n; i++)
        if (!strcmp(s->rep.rows[i].id, id))
            return &s->rep.rows[i];
    return NULL;
}

void suite_plot_point(bench_suite *s, const char *label, double rate, double ceiling)
{
    char path[512];
    snprintf(path, sizeof path, "%s/throughput.dat", s->env.out_dir);
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "\"%s\" %.0f %.0f\n", label, rate, ceiling);
    fclose(f);
}
