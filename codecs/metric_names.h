/* codecs/metric_names.h — the one table of fnworker's per-operation metric
 * names, kinds, units and help texts that both exporters use: the Flink
 * user metrics (worker/metrics.c, "<operator scope>.fnworker.<op>_<i>.<flink>")
 * and the worker pool's Prometheus endpoint (pool/pool_report.c,
 * "<prom>{operation=...,transform=...,worker_id=...}"); and the figures of
 * one operation step as the worker reports them to its pool on the stats
 * pipe (fnw_metric_series, its line format below). Here, not in worker/ or
 * pool/, because both floors read it (CONTRIBUTING.md, "Floors").
 *
 * The series line (worker -> pool, one per step, once a second, at most
 * FNW_METRIC_LINE_MAX bytes including its newline, so one write(2) on a
 * pipe is atomic):
 *   op1 <transform> <operation> <key>=<value> ... lat=<n0>,...,<nK> c.<name>=<value> ...
 * "op1" is the line's version: a change that an older pool would misread
 * gets a new word; a pool ignores keys it does not know. <transform> and
 * <operation> are percent-encoded (every byte outside [A-Za-z0-9._:-] as
 * %XX), at most FNW_METRIC_LABEL_MAX bytes before encoding. Counters are
 * the worker's totals since it started (decimal, unsigned); gauges are
 * signed, -1 = not applicable; lat= gives the latency histogram's count
 * per FNW_METRIC_LE bucket (not cumulative), the last one for +Inf; c.<name>
 * is an operation counter (fnworker.h: fnw_op_counter).
 */
#ifndef FNW_METRIC_NAMES_H
#define FNW_METRIC_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "fnworker.h"

typedef enum fnw_metric_kind {
    FNW_METRIC_COUNTER, /* Flink sum_int64; Prometheus counter (_total) */
    FNW_METRIC_GAUGE,   /* Flink latest_int64; Prometheus gauge */
    FNW_METRIC_DIST,    /* Flink distribution_int64; Prometheus summary (_sum, _count) */
    FNW_METRIC_LATENCY, /* Flink p50/p95/p99 gauges in µs; Prometheus histogram in seconds */
} fnw_metric_kind;

/* Every figure of one step, in table order. */
typedef enum fnw_metric_id {
    FNW_M_RECORDS_IN,
    FNW_M_RECORDS_OUT,
    FNW_M_CALLS,
    FNW_M_BATCHES,
    FNW_M_REQUESTS,
    FNW_M_RETRIES,
    FNW_M_SUCCESSES,
    FNW_M_FAILED_ERROR,
    FNW_M_FAILED_TIMEOUT,
    FNW_M_FAILED_OVERLOAD,
    FNW_M_FAILED_BREAKER,
    FNW_M_EMPTY_RESULTS,
    FNW_M_FALLBACKS,
    FNW_M_BREAKER_OPENED,
    FNW_M_BATCH_SIZE,
    FNW_M_CALL_DURATION_MS,
    FNW_M_CALL_LATENCY,
    FNW_M_INFLIGHT_HIGH_WATER,
    FNW_M_INFLIGHT_CALLS,
    FNW_M_CONCURRENCY_LIMIT,
    FNW_M_BREAKER_STATE,
    FNW_M_BATCH_TARGET,
    FNW_M_COUNT
} fnw_metric_id;

typedef struct fnw_metric_name {
    fnw_metric_id id;
    fnw_metric_kind kind;
    /* Flink's metric name (camelCase, like Flink's own numRecordsIn); for
     * FNW_METRIC_LATENCY the stem of the three quantile gauges. */
    const char *flink;
    /* The Prometheus family (NULL: not exported there), and the label that
     * tells it apart from the table's other rows of the same family
     * (`kind="timeout"`; NULL when none). */
    const char *prom;
    const char *prom_label;
    /* Its key on the stats line (NULL: not sent to the pool). */
    const char *key;
    const char *unit; /* "1", "records", "us", "ms", "calls", ... for the docs */
    const char *help;
    /* The Prometheus family's HELP when rows share a family (NULL: help). */
    const char *prom_help;
} fnw_metric_name;

extern const fnw_metric_name fnw_metric_names[FNW_M_COUNT];

/* The latency quantiles sent to Flink: <flink stem> + suffix, in µs. */
#define FNW_METRIC_QUANTILES 3
extern const double fnw_metric_quantile_q[FNW_METRIC_QUANTILES];
extern const char *const fnw_metric_quantile_suffix[FNW_METRIC_QUANTILES];

/* The Prometheus histogram's upper bounds (`le`), in µs, ascending; a
 * latency is counted in the first bucket whose bound is at least the top
 * of its fnw_hist bucket (so within 12.5%, never early). +Inf follows. */
#define FNW_METRIC_LE_N 18
extern const int64_t fnw_metric_le_us[FNW_METRIC_LE_N];

/* Bounds of what the stats pipe carries (a pool trusts none of it). */
#define FNW_METRIC_LABEL_MAX 128   /* transform id, operation name */
#define FNW_METRIC_SERIES_MAX 64   /* steps one worker reports; more fold into FNW_METRIC_OTHER */
#define FNW_METRIC_LINE_MAX 4096   /* = PIPE_BUF on Linux */
#define FNW_METRIC_OTHER "(other)" /* the transform and operation of the folded series */
#define FNW_METRIC_COUNTER_NAME_MAX 32

/* One step's figures since the worker started. */
typedef struct fnw_metric_series {
    char transform[FNW_METRIC_LABEL_MAX + 1];
    char operation[FNW_METRIC_LABEL_MAX + 1];
    int64_t value[FNW_M_COUNT]; /* counters; gauges (-1: n/a); a DIST's count */
    int64_t dist_sum[FNW_M_COUNT];
    int64_t lat[FNW_METRIC_LE_N + 1];
    int64_t lat_sum_us;
    size_t ncounters;
    struct {
        char name[FNW_METRIC_COUNTER_NAME_MAX + 1];
        int64_t value;
    } counters[FNW_COUNTERS_MAX];
} fnw_metric_series;

/* Whether s[0, n) is an operation counter's name: 1 to
 * FNW_METRIC_COUNTER_NAME_MAX bytes of a-z, 0-9 and _, starting with a
 * letter (fnw_op_counter's rule, which the pool checks again). */
int fnw_metric_counter_name_ok(const char *s, size_t n);
/* transform and operation copied (cut at FNW_METRIC_LABEL_MAX), every
 * counter 0, every gauge -1. */
void fnw_metric_series_init(fnw_metric_series *s, const char *transform, const char *operation);
/* Adds an operation counter's value to the one of that name; returns -1
 * when the series holds FNW_COUNTERS_MAX other names already. */
int fnw_metric_series_add_counter(fnw_metric_series *s, const char *name, int64_t v);
/* The series' line, newline included, into out (FNW_METRIC_LINE_MAX);
 * returns its length. Never longer: the bounds above keep it under. */
size_t fnw_metric_series_format(const fnw_metric_series *s, char *out);

#endif
