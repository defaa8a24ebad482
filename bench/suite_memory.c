/* bench/suite_memory.c — W9, the worker's memory: its resident set
 * sampled while idle after start-up, and while a flood of records meets
 * slow calls (capacity and the outbox must bound it, not the input rate).
 * suite_flood is the flood itself, which W12f and W13f (a slow redis, a
 * slow HTTP server) run too.
 */
#include "bench/suite_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rss_log {
    pid_t pid;
    double t0;
    FILE *f;
    void (*hook)(void *arg, double t);
    void *hook_arg;
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
    if (l->hook)
        l->hook(l->hook_arg, now - l->t0);
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

int suite_flood(bench_suite *s, const char *label, const bench_op *op, size_t str_len, double secs,
                const char *dat, void (*hook)(void *arg, double t), void *hook_arg, suite_flood_out *out,
                char *err, size_t errn)
{
    char path[512];
    bench_session ss;
    rss_log l;
    memset(&l, 0, sizeof l);
    memset(out, 0, sizeof *out);
    err[0] = '\0';
    if (suite_session_start(s, &ss, 0, label, op, str_len, 1000) == 0) {
        l.pid = ss.proc.pid;
        l.t0 = bench_now();
        l.hook = hook;
        l.hook_arg = hook_arg;
        if (dat) {
            snprintf(path, sizeof path, "%s/%s", s->env.out_dir, dat);
            l.f = fopen(path, "w");
        }
        bench_rig_set_tick(s->env.rig, 0.1, rss_tick, &l);
        bench_session_run(&ss, str_len, 0, 0, secs, &out->run);
        bench_rig_set_tick(s->env.rig, 0, NULL, NULL);
        out->hwm_mb = (double)bench_proc_status_kb(ss.proc.pid, "VmHWM") / 1024;
        if (l.f)
            fclose(l.f);
    }
    int rc = suite_session_stop(&ss, err, errn);
    /* halves of the flood after its first second */
    for (size_t i = 0; i < l.n; i++) {
        out->peak_mb = l.mb[i] > out->peak_mb ? l.mb[i] : out->peak_mb;
        if (l.t[i] < 1.0)
            continue;
        if (l.t[i] < 1.0 + (secs - 1.0) / 2) {
            out->first_mb = l.mb[i] > out->first_mb ? l.mb[i] : out->first_mb;
            out->n_first++;
        } else {
            out->second_mb = l.mb[i] > out->second_mb ? l.mb[i] : out->second_mb;
        }
    }
    free(l.mb);
    free(l.t);
    return rc;
}

void suite_w9_flood(bench_suite *s)
{
    char err[1200] = "";
    bench_op op = suite_op_element(10000, "10");
    suite_flood_out f;
    double secs = 8 * (s->scale > 0.25 ? s->scale : 0.25);
    suite_flood(s, "W9flood", &op, 974, secs, "rss.dat", NULL, NULL, &f, err, sizeof err);
    /* Flat: after the first second, the second half never rises above the
     * first half's peak by more than 10% (or 2 MB). */
    int flat = f.n_first > 0 && f.second_mb <= f.first_mb * 1.10 + 2;
    bench_row *row = bench_report_add(&s->rep, "W9b", "flood 1 KB records into echo 10 ms c10k");
    if (!row)
        return;
    snprintf(row->result, sizeof row->result, "peak %.1f MB, %s", f.peak_mb, flat ? "flat" : "growing");
    snprintf(row->target, sizeof row->target, "<= 64 MB and flat");
    bench_row_kv(row, "peak_rss_mb", f.peak_mb);
    bench_row_kv(row, "vm_hwm_mb", f.hwm_mb);
    bench_row_kv(row, "first_half_max_mb", f.first_mb);
    bench_row_kv(row, "second_half_max_mb", f.second_mb);
    bench_row_kv(row, "records", (double)f.run.records);
    bench_row_kv(row, "records_per_s", suite_rate_of(&f.run));
    char rate[32];
    bench_fmt_rate(rate, sizeof rate, suite_rate_of(&f.run), "rec/s");
    bench_row_note(row, "%.0f s, %s drained (limit 1M rec/s); max RSS %.1f MB in the first half, "
                   "%.1f MB in the second; VmHWM %.1f MB", secs, rate, f.first_mb, f.second_mb, f.hwm_mb);
    bench_row_judge(row, f.peak_mb > 0 && f.peak_mb <= 64 && flat, err[0] != 0);
    if (err[0])
        bench_row_note(row, "%s", err);
}

/* A flood row for a service operation (W12f, W13f): peak RSS <= 64 MB. */
void suite_flood_row(bench_suite *s, const char *id, const char *what, const suite_flood_out *f,
                     const char *how, const char *err)
{
    bench_row *row = bench_report_add(&s->rep, id, what);
    if (!row)
        return;
    snprintf(row->result, sizeof row->result, "peak %.1f MB", f->peak_mb);
    snprintf(row->target, sizeof row->target, "peak RSS <= 64 MB");
    if (f->run.seconds > 0)
        snprintf(row->worker, sizeof row->worker, "%.2f cores, %.0f ns/rec", f->run.worker_cpu_s / f->run.seconds,
                 suite_ns_per_rec(&f->run));
    bench_row_kv(row, "peak_rss_mb", f->peak_mb);
    bench_row_kv(row, "vm_hwm_mb", f->hwm_mb);
    bench_row_kv(row, "records", (double)f->run.records);
    bench_row_kv(row, "seconds", f->run.seconds);
    bench_row_kv(row, "records_per_s", suite_rate_of(&f->run));
    bench_row_kv(row, "worker_cpu_s", f->run.worker_cpu_s);
    char rate[32];
    bench_fmt_rate(rate, sizeof rate, suite_rate_of(&f->run), "rec/s");
    bench_row_note(row, "%s; %llu records in %.1f s (%s, with the drain); VmHWM %.1f MB", how,
                   (unsigned long long)f->run.records, f->run.seconds, rate, f->hwm_mb);
    bench_row_judge(row, f->peak_mb > 0 && f->peak_mb <= 64, err && err[0]);
    if (err && err[0])
        bench_row_note(row, "%s", err);
}
