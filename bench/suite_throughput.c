/* bench/suite_throughput.c — the throughput workloads: the ceiling
 * (the null worker, which echoes bytes unparsed, at every record size), W1
 * identity, W2 echo in batches, W3 per-element echo, W4 ordered batches,
 * each at 100k, 1M and 10M records on one worker; W5 and W6, slow calls
 * (per element, and batched for a model server at batch 1 to 256); W7, the
 * record sizes from 35 B to 100 KB. Rows say how far each is from the
 * ceiling; plot points go to throughput.dat.
 */
#include "bench/suite_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void suite_ceilings(bench_suite *s)
{
    static const uint64_t counts[BENCH_N_SIZES] = {10 * MILLION, 5 * MILLION, MILLION, 100000, 10000};
    static const uint64_t bundles[BENCH_N_SIZES] = {MILLION, MILLION, 100000, 10000, 1000};
    for (int i = 0; i < BENCH_N_SIZES; i++) {
        if (i > 0 && !suite_selected(s, "W7"))
            continue;
        char what[128], err[1200], id[16];
        bench_run runs[3], r;
        bench_op op = suite_op_identity();
        uint64_t n[3] = {suite_scaled(s, counts[i]), suite_scaled(s, counts[i]), suite_scaled(s, counts[i])};
        snprintf(id, sizeof id, "C%d", i);
        suite_progress("running %s (null worker ceiling)\n", id);
        /* A ceiling is the best the transport did: best of three runs. */
        suite_measure(s, 1, "null", &op, suite_str_len_for(i), n, 3, bundles[i], runs, err, sizeof err);
        r = runs[0];
        for (int k = 1; k < 3; k++)
            if (suite_rate_of(&runs[k]) > suite_rate_of(&r))
                r = runs[k];
        snprintf(what, sizeof what, "ceiling: null worker, %s records (best of 3)", suite_size_name[i]);
        bench_row *row = suite_rate_row(s, id, what, &r, 0, err);
        s->ceiling[i] = suite_rate_of(&r);
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
    uint64_t counts[5] = {suite_scaled(s, 100000), suite_scaled(s, 100000), suite_scaled(s, 100000),
                          suite_scaled(s, MILLION), suite_scaled(s, 10 * MILLION)};
    bench_run runs[5];
    int rc = suite_measure(s, 0, label, op, SMALL, counts, 5, s->bundle, runs, err, errn);
    double a[3] = {suite_ns_per_rec(&runs[0]), suite_ns_per_rec(&runs[1]), suite_ns_per_rec(&runs[2])};
    for (int i = 0; i < 2; i++)     /* median of the three 100k runs */
        for (int j = 0; j < 2 - i; j++)
            if (a[j] > a[j + 1]) {
                double t = a[j];
                a[j] = a[j + 1];
                a[j + 1] = t;
            }
    out->have = rc == 0;
    out->ns_per_rec[0] = a[1];
    out->ns_per_rec[1] = suite_ns_per_rec(&runs[3]);
    out->ns_per_rec[2] = suite_ns_per_rec(&runs[4]);
    out->rate[0] = suite_rate_of(&runs[1]);
    out->rate[1] = suite_rate_of(&runs[3]);
    out->rate[2] = suite_rate_of(&runs[4]);
    *big = runs[4];
    return rc;
}

void suite_w1(bench_suite *s)
{
    char err[1200];
    bench_run r;
    bench_op op = suite_op_identity();
    suite_progress("running %s\n", "W1");
    series(s, "W1", &op, &s->s_identity, &r, err, sizeof err);
    bench_row *row = suite_rate_row(s, "W1", "identity PROCESS, 10M records", &r, s->ceiling[0], err);
    if (!row)
        return;
    /* issue 23: >= 70% of the ceiling, or <= 400 instructions per record
     * (suite_instructions judges again once it has counted them) */
    snprintf(row->target, sizeof row->target, ">= 70%% of ceiling or <= 400 instr/rec");
    double rate = suite_rate_of(&r);
    bench_row_judge(row, s->ceiling[0] > 0 && rate >= 0.7 * s->ceiling[0], suite_failed(row));
    suite_plot_point(s, "W1 identity", rate, s->ceiling[0]);
}

void suite_w2(bench_suite *s)
{
    char err[1200];
    bench_run r;
    bench_op op = suite_op_batch(0, 10000);
    suite_progress("running %s\n", "W2");
    series(s, "W2", &op, &s->s_batch, &r, err, sizeof err);
    bench_row *row = suite_rate_row(s, "W2", "echo batch UNORDERED b256 c10k, 10M", &r, s->ceiling[0], err);
    if (!row)
        return;
    s->w2_rate = suite_rate_of(&r);
    snprintf(row->target, sizeof row->target, ">= 3M rec/s");
    bench_row_judge(row, s->w2_rate >= 3e6, suite_failed(row));
    suite_plot_point(s, "W2 batch unordered", s->w2_rate, s->ceiling[0]);
}

void suite_w3(bench_suite *s)
{
    char err[1200];
    bench_run r;
    bench_op op = suite_op_batch(1, 10000);
    uint64_t n = suite_scaled(s, 10 * MILLION);
    suite_progress("running %s\n", "W3");
    suite_measure(s, 0, "W3", &op, SMALL, &n, 1, s->bundle, &r, err, sizeof err);
    bench_row *row = suite_rate_row(s, "W3", "echo batch ORDERED b256 c10k, 10M", &r, s->ceiling[0], err);
    if (!row)
        return;
    double rate = suite_rate_of(&r);
    snprintf(row->target, sizeof row->target, "within 20%% of W2");
    if (s->w2_rate > 0) {
        bench_row_note(row, "%.0f%% of W2", 100 * rate / s->w2_rate);
        bench_row_kv(row, "ratio_to_w2", rate / s->w2_rate);
        bench_row_judge(row, rate >= 0.8 * s->w2_rate, suite_failed(row));
    }
    suite_plot_point(s, "W3 batch ordered", rate, s->ceiling[0]);
}

void suite_w4(bench_suite *s)
{
    char err[1200];
    bench_run r;
    bench_op op = suite_op_element(1000, NULL);
    uint64_t n = suite_scaled(s, 2 * MILLION);
    suite_progress("running %s\n", "W4");
    suite_measure(s, 0, "W4", &op, SMALL, &n, 1, s->bundle, &r, err, sizeof err);
    bench_row *row = suite_rate_row(s, "W4", "echo per-element UNORDERED c1000, 2M", &r, s->ceiling[0], err);
    if (!row)
        return;
    snprintf(row->target, sizeof row->target, ">= 1M rec/s");
    bench_row_judge(row, suite_rate_of(&r) >= 1e6, suite_failed(row));
    suite_plot_point(s, "W4 per element", suite_rate_of(&r), s->ceiling[0]);
}

/* ---- W5 / W6: slow calls -------------------------------------------------------------------- */

void suite_w5(bench_suite *s)
{
    char err[1200];
    bench_run r;
    bench_op op = suite_op_element(1000, "10");
    uint64_t n = suite_scaled(s, 500000);
    suite_progress("running %s\n", "W5");
    suite_measure(s, 0, "W5", &op, SMALL, &n, 1, 100000, &r, err, sizeof err);
    bench_row *row = suite_rate_row(s, "W5", "echo per-element delay 10 ms c1000, 100k bundles", &r, 0, err);
    if (!row)
        return;
    snprintf(row->target, sizeof row->target, ">= 90k rec/s (limit 100k)");
    bench_row_judge(row, suite_rate_of(&r) >= 90000, suite_failed(row));
    suite_plot_point(s, "W5 10ms c1000", suite_rate_of(&r), 100000);
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
    if (suite_session_start(s, &ss, 0, id, &op, SMALL, capacity < 1000 ? 20 : 2000) == 0)
        bench_session_run(&ss, SMALL, n, 100000, 0, &r);
    suite_session_stop(&ss, err, sizeof err);
    snprintf(what, sizeof what, "echo batch %d, 5 ms + 20 us/item, c%d", batch, capacity);
    *rate = suite_rate_of(&r);
    return suite_rate_row(s, id, what, &r, 0, err);
}

/* Batching for a model server: batch 1, 8, 64, 256 at capacity 1,000 (the
 * workload of the issue), then with capacity = batch size, i.e. a server
 * that takes one call at a time, where batching is what buys throughput. */
void suite_w6(bench_suite *s)
{
    static const int batches[4] = {1, 8, 64, 256};
    double rate[4], serial[4];
    suite_progress("running %s\n", "W6");
    for (int i = 0; i < 4; i++) {
        char id[16], pl[32];
        snprintf(id, sizeof id, "W6b%d", batches[i]);
        bench_row *row = w6_point(s, id, batches[i], 1000, suite_scaled(s, 200000), &rate[i]);
        /* Each call takes 5 ms + batch x 20 us, and only whole batches go
         * out: at most floor(capacity / batch) x batch elements are in
         * flight. That over the call time is what the operation allows. */
        double bound = (double)(1000 / batches[i] * batches[i]) / (5e-3 + batches[i] * 20e-6);
        snprintf(pl, sizeof pl, "W6 batch %d", batches[i]);
        suite_plot_point(s, pl, rate[i], bound);
        if (!row)
            continue;
        bench_row_kv(row, "bound_records_per_s", bound);
        bench_row_note(row, "bound (whole batches in flight / call time) %.0f rec/s, %.0f%% of it", bound,
                       100 * rate[i] / bound);
        if (i > 0)
            bench_row_note(row, "%.1fx batch 1", rate[0] > 0 ? rate[i] / rate[0] : 0);
        if (i == 2) {
            snprintf(row->target, sizeof row->target, ">= 20x batch 1");
            bench_row_judge(row, rate[0] > 0 && rate[i] >= 20 * rate[0], suite_failed(row));
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

void suite_w7(bench_suite *s)
{
    static const uint64_t counts[BENCH_N_SIZES] = {0, 5 * MILLION, MILLION, 100000, 10000};
    static const uint64_t bundles[BENCH_N_SIZES] = {0, MILLION, 100000, 10000, 1000};
    suite_progress("running %s\n", "W7");
    for (int i = 1; i < BENCH_N_SIZES; i++) {
        char err[1200], what[128], id[16];
        bench_run r;
        bench_op op = suite_op_identity();
        uint64_t n = suite_scaled(s, counts[i]);
        suite_measure(s, 0, "W7", &op, suite_str_len_for(i), &n, 1, bundles[i], &r, err, sizeof err);
        snprintf(id, sizeof id, "W7-%d", i);
        snprintf(what, sizeof what, "identity, %s records (STRING %zu)", suite_size_name[i], suite_str_len_for(i));
        bench_row *row = suite_rate_row(s, id, what, &r, s->ceiling[i], err);
        if (!row)
            continue;
        double mbps = r.seconds > 0 ? (double)r.bytes / r.seconds / 1e6 : 0;
        size_t used = strlen(row->result);
        snprintf(row->result + used, sizeof row->result - used, ", %.0f MB/s", mbps);
        char pl[32];
        snprintf(pl, sizeof pl, "W7 %s", suite_size_name[i]);
        suite_plot_point(s, pl, suite_rate_of(&r), s->ceiling[i]);
    }
}

/* ---- W18: chained plans ------------------------------------------------------------------- */

/* Three fused steps of op (Flink fuses consecutive Python functions into
 * one operator): what a record costs when it crosses from step to step,
 * next to the single-step row (W1 for identity, W4 for echo). */
static void w18_point(bench_suite *s, const char *id, const char *what, const bench_op *op, uint64_t n,
                      const char *single)
{
    char err[1200];
    bench_run r;
    bench_op chain[3] = {*op, *op, *op};
    chain[0].then = &chain[1];
    chain[1].then = &chain[2];
    suite_measure(s, 0, id, &chain[0], SMALL, &n, 1, s->bundle, &r, err, sizeof err);
    bench_row *row = suite_rate_row(s, id, what, &r, s->ceiling[0], err);
    if (!row)
        return;
    snprintf(row->target, sizeof row->target, "(info: vs %s)", single);
    suite_plot_point(s, id, suite_rate_of(&r), s->ceiling[0]);
}

void suite_w18(bench_suite *s)
{
    bench_op id = suite_op_identity(), echo = suite_op_element(1000, NULL);
    suite_progress("running %s\n", "W18");
    w18_point(s, "W18a", "identity -> identity -> identity, 10M", &id, suite_scaled(s, 10 * MILLION), "W1");
    w18_point(s, "W18b", "echo -> echo -> echo per-element UNORDERED c1000, 2M", &echo,
              suite_scaled(s, 2 * MILLION), "W4");
}
