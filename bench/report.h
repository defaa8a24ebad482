/* bench/report.h — what the benchmark found: one row per measured
 * figure with its target and verdict, printed as a table, written as
 * results.json, and as the data files the gnuplot script plots.
 *
 * Verdicts: PASS / MISS compare a figure with its target; INFO rows have no
 * target (ceilings, breakdowns); FAIL means the worker misbehaved (an error
 * response, lost or extra records, a bad exit) and makes the run fail.
 */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stddef.h>
#include <stdint.h>

enum { BENCH_PASS, BENCH_MISS, BENCH_INFO, BENCH_FAIL };

#define BENCH_MAX_KV 16

typedef struct bench_row {
    char id[16];
    char what[128];
    char result[64];           /* the figure, formatted */
    char vs_ceiling[32];       /* "36% of 21.5M", or "" */
    char worker[96];           /* worker cost: CPU and instructions per record */
    char target[64];
    int verdict;
    char note[512];
    int n_kv;                  /* numbers for results.json */
    char kv_key[BENCH_MAX_KV][32];
    double kv_val[BENCH_MAX_KV];
} bench_row;

typedef struct bench_report {
    bench_row *rows;
    int n, cap;
} bench_report;

bench_row *bench_report_add(bench_report *r, const char *id, const char *what);
void bench_row_kv(bench_row *row, const char *key, double v);
void bench_row_note(bench_row *row, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets the verdict from a condition (PASS/MISS), or FAIL when failed. */
void bench_row_judge(bench_row *row, int holds, int failed);
void bench_report_free(bench_report *r);
int bench_report_failures(const bench_report *r);

/* Formats a rate like "7.68 M rec/s". */
void bench_fmt_rate(char *out, size_t n, double per_s, const char *unit);

void bench_report_print(const bench_report *r, double elapsed_s, const char *title);
/* Writes path (JSON). machine is a one-line description. */
int bench_report_json(const bench_report *r, const char *path, const char *machine, double elapsed_s);

#endif
