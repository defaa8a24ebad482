/* bench/suite_internal.h — internal to the suite (suite*.c), not part
 * of its interface (suite.h): the helpers every workload shares (defined in
 * suite_common.c) and the workloads themselves, one function each, which
 * bench_suite_run and bench_suite_smoke (suite.c) call in order.
 *
 * Conventions: records are Row(LONG, LONG, Row(STRING, INT)) with 8-char
 * strings unless a workload says otherwise; every session starts a fresh
 * worker and runs a small warm-up bundle first (descriptor fetch, operation
 * open and the data stream connect are not part of any figure); every
 * bundle's output count is verified. Worker cost is its CPU time over all
 * threads (/proc schedstat) per record.
 */
#ifndef BENCH_SUITE_INTERNAL_H
#define BENCH_SUITE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "bench/suite.h"

#define SMALL 8                   /* the default string length */
#define WARMUP 20000
#define MILLION 1000000ULL

/* Display names and payload sizes of the record sizes (index 0: 8-char strings). */
extern const char *const suite_size_name[BENCH_N_SIZES];
extern const size_t suite_size_bytes[BENCH_N_SIZES];

/* String length giving input records of about the size at size_idx. */
size_t suite_str_len_for(int size_idx);
/* 1 if workload id is selected by --only (or no --only was given). */
int suite_selected(const bench_suite *s, const char *id);
/* n times --scale, at least 1000. */
uint64_t suite_scaled(const bench_suite *s, uint64_t n);
/* A progress line on stderr: fmt with one %s, id. */
void suite_progress(const char *fmt, const char *id);

/* The operations the workloads run: identity; echo in batches of 256
 * (ORDERED or not, at capacity); echo per element, UNORDERED, with an
 * optional delay_ms. */
bench_op suite_op_identity(void);
bench_op suite_op_batch(int ordered, int capacity);
bench_op suite_op_element(int capacity, const char *delay_ms);

/* Records per second of a run, and worker CPU ns per record. */
double suite_rate_of(const bench_run *r);
double suite_ns_per_rec(const bench_run *r);
/* Appends the worker's peak RSS (VmHWM after the run) to the row's worker column. */
void suite_show_peak_rss(bench_row *row, const bench_run *r);

/* A flood: op's worker is sent records with str_len-byte strings as fast as
 * the driver can for secs seconds (one bundle), its RSS sampled every 100 ms
 * (into out_dir/<dat> if dat is set); hook (if set) is called at each sample
 * with the seconds since the flood began. Returns 0, or -1 with err set. */
typedef struct suite_flood_out {
    bench_run run;
    double peak_mb;                 /* largest sample */
    double first_mb, second_mb;     /* largest sample in each half after the first second */
    double hwm_mb;                  /* VmHWM at the end */
    int n_first;                    /* samples in the first half */
} suite_flood_out;
int suite_flood(bench_suite *s, const char *label, const bench_op *op, size_t str_len, double secs,
                const char *dat, void (*hook)(void *arg, double t), void *hook_arg, suite_flood_out *out,
                char *err, size_t errn);
/* Adds a row judging a service flood: peak RSS <= 64 MB; how says what was slow. */
void suite_flood_row(bench_suite *s, const char *id, const char *what, const suite_flood_out *f,
                     const char *how, const char *err);

/* Paced input (suite_pace.c): per_tick records every period seconds, put by
 * put (ts_us: the send time, seq: 0, 1, ...); the latency (ms) of every
 * output is collected from its timestamp. Zero it, then set per_tick,
 * period, put, out_len (every output's length) and optionally on_rec. */
typedef struct suite_pacer {
    double period;
    int per_tick;
    int (*put)(fnw_buf *b, int64_t ts_us, uint64_t seq);
    uint64_t out_len;
    bench_rec_fn on_rec;
    void *rec_arg;
    double t0, bundle_end;
    uint64_t tick, seq;
    double late_sum, late_max;    /* driver's send delay past each record's schedule, s */
    uint64_t late_n;
    fnw_buf buf;
    double *lat;                  /* latencies, ms */
    double *sent;                 /* when each was scheduled, s since t0 */
    size_t n_lat, cap_lat;
} suite_pacer;
/* Runs bundles of bundle_s seconds on ss for `seconds`; 0, or -1 with ss->error set. */
int suite_run_paced(bench_session *ss, double seconds, double bundle_s, suite_pacer *p);
void suite_pacer_free(suite_pacer *p);
/* Sorts v ascending; the q-quantile (0 < q <= 1) of sorted v. */
void suite_sort(double *v, size_t n);
double suite_pct(const double *v, size_t n, double q);

/* Starts a session for op and runs a warm-up bundle of `warmup` records. */
int suite_session_start(bench_suite *s, bench_session *ss, int is_null, const char *label,
                        const bench_op *op, size_t str_len, uint64_t warmup);
/* Stops the session; its first error (if any) is copied to err. */
int suite_session_stop(bench_session *ss, char *err, size_t n);
/* One session, one op, several runs (counts[i] records in bundles of `bundle`). */
int suite_measure(bench_suite *s, int is_null, const char *label, const bench_op *op, size_t str_len,
                  const uint64_t *counts, int n, uint64_t bundle, bench_run *runs, char *err, size_t errn);

/* A throughput row from a run, against the ceiling if > 0; FAIL with err if set. */
bench_row *suite_rate_row(bench_suite *s, const char *id, const char *what, const bench_run *r,
                          double ceiling, const char *err);
int suite_failed(const bench_row *row);
bench_row *suite_find_row(bench_suite *s, const char *id);
/* Appends a point to out_dir/throughput.dat. */
void suite_plot_point(bench_suite *s, const char *label, double rate, double ceiling);

/* The workloads (suite_throughput.c, suite_latency.c, suite_memory.c,
 * suite_scaling.c, suite_redis.c, suite_http.c, suite_kserve.c). Each adds
 * its rows to s->rep. */
void suite_ceilings(bench_suite *s);
void suite_w1(bench_suite *s);
void suite_w2(bench_suite *s);
void suite_w3(bench_suite *s);
void suite_w4(bench_suite *s);
void suite_w5(bench_suite *s);
void suite_w6(bench_suite *s);
void suite_w7(bench_suite *s);
void suite_w8(bench_suite *s);
void suite_w9_idle(bench_suite *s);
void suite_w9_flood(bench_suite *s);
void suite_w10(bench_suite *s);
void suite_w11(bench_suite *s);
void suite_w18(bench_suite *s);   /* suite_throughput.c: chains */
void suite_w12(bench_suite *s);   /* suite_redis.c */
void suite_w23(bench_suite *s);   /* suite_cache.c: the redis lookup cache */
void suite_w13(bench_suite *s);   /* suite_http.c */
void suite_w14(bench_suite *s);   /* suite_kserve.c */
void suite_w21(bench_suite *s);   /* suite_resilience.c */
void suite_w22(bench_suite *s);   /* suite_resilience.c */
void suite_instructions(bench_suite *s);

#endif
