/* bench/suite.c — the benchmark's two runs (see suite.h): the full
 * suite, which calls the selected workloads in order, and the smoke run
 * that `make check` uses (a few thousand records through a few workloads,
 * counts and exits only, plus one failing bundle that must come back as an
 * error response).
 *
 * The workloads live by theme: suite_throughput.c (the null-worker ceiling,
 * W1-W7), suite_latency.c (W8, W10), suite_memory.c (W9), suite_scaling.c
 * (W11, instructions per record), suite_redis.c (W12, the redis operation
 * against redis-benchmark), suite_http.c (W13, the http operation against
 * nginx), suite_cache.c (W23, the redis lookup cache), suite_kserve.c (W14, the kserve operation against a model server
 * and its direct client; W24, adaptive batching against fixed sizes on the
 * same server); suite_pace.c paces input for the latency rows;
 * suite_common.c holds what they share and
 * suite_internal.h declares it, with the conventions every workload keeps.
 * Bundles are 1M records for the throughput runs (Flink: 100k-1M, 1 s).
 */
#include "bench/suite.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/suite_internal.h"

void bench_suite_run(bench_suite *s)
{
    char path[512];
    snprintf(path, sizeof path, "%s/throughput.dat", s->env.out_dir);
    unlink(path);
    suite_ceilings(s);
    if (suite_selected(s, "W1") || suite_selected(s, "W11"))
        suite_w1(s);
    if (suite_selected(s, "W2") || suite_selected(s, "W11"))
        suite_w2(s);
    if (suite_selected(s, "W3"))
        suite_w3(s);
    if (suite_selected(s, "W4"))
        suite_w4(s);
    if (suite_selected(s, "W5"))
        suite_w5(s);
    if (suite_selected(s, "W6"))
        suite_w6(s);
    if (suite_selected(s, "W7"))
        suite_w7(s);
    if (suite_selected(s, "W8"))
        suite_w8(s);
    if (suite_selected(s, "W9")) {
        suite_progress("running %s\n", "W9");
        suite_w9_idle(s);
        suite_w9_flood(s);
    }
    if (suite_selected(s, "W10"))
        suite_w10(s);
    if (suite_selected(s, "W11"))
        suite_w11(s);
    if (suite_selected(s, "W18"))
        suite_w18(s);
    if (suite_selected(s, "W12"))
        suite_w12(s);
    if (suite_selected(s, "W13"))
        suite_w13(s);
    if (suite_selected(s, "W23"))
        suite_w23(s);
    if (suite_selected(s, "W14") || suite_selected(s, "W14a") || suite_selected(s, "W14b") ||
        suite_selected(s, "W14c") || suite_selected(s, "W24"))
        suite_w14(s);
    if (suite_selected(s, "W21"))
        suite_w21(s);
    if (suite_selected(s, "W22"))
        suite_w22(s);
    if (s->ipr)
        suite_instructions(s);
}

/* A failing bundle must come back as an error response that names the
 * cause, and the worker must go on serving the next bundle. */
static void smoke_error_path(bench_suite *s)
{
    char err[1200] = "";
    bench_session ss;
    bench_op bad = suite_op_element(1000, NULL), good = suite_op_identity();
    bench_op_set(&bad, "fail_every", "1000");
    bench_op_set(&bad, "fail_message", "smoke-injected");
    bench_row *row = bench_report_add(&s->rep, "ERR", "bundle with a failing call, then a good bundle");
    if (!row)
        return;
    suite_progress("smoke %s\n", "ERR");
    int got_error = 0, recovered = 0;
    if (suite_session_start(s, &ss, 0, "ERR", &bad, SMALL, 0) == 0) {
        bench_run r;
        got_error = bench_session_run(&ss, SMALL, 3000, 3000, 0, &r) < 0 && strstr(ss.error, "smoke-injected");
        snprintf(row->result, sizeof row->result, "%s", got_error ? "error response" : "no error");
        if (!got_error)
            snprintf(err, sizeof err, "expected an error response naming 'smoke-injected', got: %.1100s",
                     ss.error[0] ? ss.error : "a successful bundle");
        ss.error[0] = '\0';
        recovered = bench_session_use(&ss, &good) == 0 && bench_session_run(&ss, SMALL, 2000, 2000, 0, &r) == 0;
    }
    suite_session_stop(&ss, err, sizeof err);
    snprintf(row->target, sizeof row->target, "error, then the next bundle ok");
    bench_row_judge(row, got_error && recovered, !got_error || !recovered || err[0]);
    if (err[0])
        bench_row_note(row, "%s", err);
}

/* Smoke: counts and exits only; every row is INFO unless the worker misbehaved. */
void bench_suite_smoke(bench_suite *s)
{
    struct { const char *id, *what; bench_op op; int is_null; } w[] = {
        {"C0", "null worker", suite_op_identity(), 1},
        {"W1", "identity", suite_op_identity(), 0},
        {"W2", "echo batch UNORDERED b256 c10k", suite_op_batch(0, 10000), 0},
        {"W3", "echo batch ORDERED b256 c10k", suite_op_batch(1, 10000), 0},
        {"W4", "echo per-element UNORDERED c1000", suite_op_element(1000, NULL), 0},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        char err[1200], what[128];
        bench_run r[2];
        uint64_t counts[2] = {3000, 5000};
        suite_progress("smoke %s\n", w[i].id);
        suite_measure(s, w[i].is_null, w[i].id, &w[i].op, SMALL, counts, 2, 2000, r, err, sizeof err);
        r[0].records += r[1].records;
        r[0].bytes += r[1].bytes;
        r[0].seconds += r[1].seconds;
        r[0].worker_cpu_s += r[1].worker_cpu_s;
        r[0].driver_cpu_s += r[1].driver_cpu_s;
        snprintf(what, sizeof what, "%s, 8000 rec", w[i].what);
        suite_rate_row(s, w[i].id, what, &r[0], 0, err);
    }
    smoke_error_path(s);
    suite_progress("smoke %s\n", "W8");
    suite_w8(s);
    suite_w10(s);
    suite_w14(s);
}
