/* bench/suite.h — the workloads of `make bench` (W1-W11 of the
 * benchmark issue, plus the null-worker ceilings) and the smoke run that
 * `make check` uses. Each workload launches fresh workers through a
 * session, measures, and adds rows (figure, target, PASS/MISS) to the
 * report; data for the plots goes to files in out_dir.
 */
#ifndef BENCH_SUITE_H
#define BENCH_SUITE_H

#include "bench/report.h"
#include "bench/session.h"

#define BENCH_N_SIZES 5          /* 8-char strings, then records of 100 B, 1 KB, 10 KB, 100 KB */

typedef struct bench_series {
    int have;
    double ns_per_rec[3];        /* worker CPU per record at 100k, 1M, 10M records */
    double rate[3];
} bench_series;

typedef struct bench_suite {
    bench_env env;
    bench_report rep;
    int smoke;
    int ipr;                     /* measure instructions per record with callgrind */
    const char *only;            /* comma-separated workload ids, NULL = all */
    const char *wrapper;         /* command prefix for the real worker (e.g. perf record) */
    double scale;                /* multiplies record counts and durations */
    uint64_t bundle;             /* records per bundle of the W1-W4, W11 runs (1M) */
    double ceiling[BENCH_N_SIZES];
    double w2_rate;
    bench_series s_identity, s_batch;
} bench_suite;

/* Runs the selected workloads; rows go to s->rep. */
void bench_suite_run(bench_suite *s);
/* The quick correctness run: a few thousand records through a few
 * workloads, every count verified. */
void bench_suite_smoke(bench_suite *s);

#endif
