/* scripts/bench/suite_memory.c — W9, the worker's memory: its resident set
 * sampled while idle after start-up, and while a flood of records meets
 * slow calls (capacity and the outbox must bound it, not the input rate).
 */
#include "scripts/bench/suite_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void suite_w9_idle(bench_suite *s)
{
    char err[1200] = "";
    bench_session ss;
    bench_op id = suite_op_identity(), batch = suite_op_batch(0, 10000);
    long rss = -1, hwm = -1;
    bench_run r;
    long start_rss = -1;
    int ok = suite_session_start(s, &ss, 0, "W9idle", &id, SMALL, 0) == 0;
    if (ok)
        start_rss = bench_proc_status_kb(ss.proc.pid, "VmRSS");
    if (ok && bench_session_run(&ss, SMALL, suite_scaled(s, MILLION), MILLION, 0, &r) == 0 &&
        bench_session_use(&ss, &batch) == 0 &&
        bench_session_run(&ss, SMALL, suite_scaled(s, MILLION), MILLION, 0, &r) == 0) {
        double end = bench_now() + 1.0;
        while (bench_now() < end)
            bench_rig_poll(s->env.rig, 0.05);
        rss = bench_proc_status_kb(ss.proc.pid, "VmRSS");
        hwm = bench_proc_status_kb(ss.proc.pid, "VmHWM");
    }
    suite_session_stop(&ss, err, sizeof err);
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

void suite_w9_flood(bench_suite *s)
{
    char err[1200] = "", path[512];
    bench_session ss;
    bench_op op = suite_op_element(10000, "10");
    bench_run r;
    memset(&r, 0, sizeof r);
    rss_log l;
    memset(&l, 0, sizeof l);
    long hwm = -1;
    double secs = 8 * (s->scale > 0.25 ? s->scale : 0.25);
    snprintf(path, sizeof path, "%s/rss.dat", s->env.out_dir);
    if (suite_session_start(s, &ss, 0, "W9flood", &op, 974, 1000) == 0) {
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
    suite_session_stop(&ss, err, sizeof err);
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
    bench_row_kv(row, "records_per_s", suite_rate_of(&r));
    char rate[32];
    bench_fmt_rate(rate, sizeof rate, suite_rate_of(&r), "rec/s");
    bench_row_note(row, "%.0f s, %s drained (limit 1M rec/s); max RSS %.1f MB in the first half, "
                   "%.1f MB in the second; VmHWM %.1f MB", secs, rate, first, second, (double)hwm / 1024);
    bench_row_judge(row, peak > 0 && peak <= 64 && flat, err[0] != 0);
    if (err[0])
        bench_row_note(row, "%s", err);
    free(l.mb);
    free(l.t);
}
