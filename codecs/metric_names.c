/* codecs/metric_names.c — the metric name table and the stats pipe's series
 * line (see metric_names.h). */
#include "codecs/metric_names.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define FAIL "fnworker_call_failures_total"
#define FAIL_HELP "Call failures by kind. error, timeout: calls; overload: attempts; breaker_open: inputs."

/* clang-format off */
const fnw_metric_name fnw_metric_names[FNW_M_COUNT] = {
    { FNW_M_RECORDS_IN, FNW_METRIC_COUNTER, "recordsIn", "fnworker_records_in_total", NULL, "records_in",
      "records", "Records into the step.", NULL },
    { FNW_M_RECORDS_OUT, FNW_METRIC_COUNTER, "recordsOut", "fnworker_records_out_total", NULL, "records_out",
      "records", "Records out of the step.", NULL },
    { FNW_M_CALLS, FNW_METRIC_COUNTER, "asyncCalls", "fnworker_calls_total", NULL, "calls",
      "calls", "Operation calls started (first attempts; a batch is one call).", NULL },
    { FNW_M_BATCHES, FNW_METRIC_COUNTER, "batches", "fnworker_batches_total", NULL, "batches",
      "calls", "Calls in batch mode.", NULL },
    { FNW_M_REQUESTS, FNW_METRIC_COUNTER, "requests", "fnworker_requests_total", NULL, "requests",
      "attempts", "Attempts handed to the operation: first attempts and retries.", NULL },
    { FNW_M_RETRIES, FNW_METRIC_COUNTER, "retries", "fnworker_retries_total", NULL, "retries",
      "attempts", "Attempts after the first.", NULL },
    { FNW_M_SUCCESSES, FNW_METRIC_COUNTER, "successes", "fnworker_successes_total", NULL, "successes",
      "calls", "Calls that ended with a result (outputs or an empty one), not by their timeout.", NULL },
    { FNW_M_FAILED_ERROR, FNW_METRIC_COUNTER, "failures", FAIL, "kind=\"error\"", "failures",
      "calls", "Calls that failed with an error after their retries.", FAIL_HELP },
    { FNW_M_FAILED_TIMEOUT, FNW_METRIC_COUNTER, "timeouts", FAIL, "kind=\"timeout\"", "timeouts",
      "calls", "Calls whose timeout passed (then the timeout action applied).", FAIL_HELP },
    { FNW_M_FAILED_OVERLOAD, FNW_METRIC_COUNTER, "overloaded", FAIL, "kind=\"overload\"", "overloaded",
      "attempts", "Attempts the service refused as overloaded (429, 503, ...).", FAIL_HELP },
    { FNW_M_FAILED_BREAKER, FNW_METRIC_COUNTER, "breakerRejected", FAIL, "kind=\"breaker_open\"",
      "breaker_rejected", "inputs", "Inputs answered at once because the circuit breaker was open.", FAIL_HELP },
    { FNW_M_EMPTY_RESULTS, FNW_METRIC_COUNTER, "emptyResults", "fnworker_empty_results_total", NULL,
      "empty_results", "inputs", "Inputs that ended with no output.", NULL },
    { FNW_M_FALLBACKS, FNW_METRIC_COUNTER, "fallbacks", "fnworker_fallbacks_total", NULL, "fallbacks",
      "inputs", "Inputs given on_failure's result instead of failing the bundle.", NULL },
    { FNW_M_BREAKER_OPENED, FNW_METRIC_COUNTER, "breakerOpened", "fnworker_breaker_opened_total", NULL,
      "breaker_opened", "1", "Times the circuit breaker opened.", NULL },
    { FNW_M_BATCH_SIZE, FNW_METRIC_DIST, "batchSize", "fnworker_batch_size", NULL, "batch_size",
      "inputs", "Inputs per call.", NULL },
    { FNW_M_CALL_DURATION_MS, FNW_METRIC_DIST, "asyncCallDurationMs", NULL, NULL, NULL,
      "ms", "Milliseconds from a call's first attempt to its end (synchronous calls count 0).", NULL },
    { FNW_M_CALL_LATENCY, FNW_METRIC_LATENCY, "callLatency", "fnworker_call_latency_seconds", NULL, "lat",
      "us", "Time from a call's first attempt to its result, retries included.", NULL },
    { FNW_M_INFLIGHT_HIGH_WATER, FNW_METRIC_GAUGE, "inflightHighWater", "fnworker_inflight_high_water", NULL,
      "inflight_high_water", "inputs", "Most inputs in flight at once in the last bundle.", NULL },
    { FNW_M_INFLIGHT_CALLS, FNW_METRIC_GAUGE, "inflightCalls", "fnworker_inflight_calls", NULL,
      "inflight_calls", "calls", "Calls out now (with the operation, waiting to retry, or timed out and "
      "still held by it).", NULL },
    { FNW_M_CONCURRENCY_LIMIT, FNW_METRIC_GAUGE, "concurrencyLimit", "fnworker_concurrency_limit", NULL,
      "concurrency_limit", "calls", "Calls the adaptive limit lets out now.", NULL },
    { FNW_M_BREAKER_STATE, FNW_METRIC_GAUGE, "breakerState", "fnworker_breaker_state", NULL, "breaker_state",
      "1", "Circuit breaker: 0 closed, 1 open, 2 half-open.", NULL },
    { FNW_M_BATCH_TARGET, FNW_METRIC_GAUGE, "batchTarget", "fnworker_batch_target", NULL, "batch_target",
      "inputs", "The adaptive batch size now.", NULL },
};
/* clang-format on */

const double fnw_metric_quantile_q[FNW_METRIC_QUANTILES] = { 0.50, 0.95, 0.99 };
const char *const fnw_metric_quantile_suffix[FNW_METRIC_QUANTILES] = { "P50Us", "P95Us", "P99Us" };

const int64_t fnw_metric_le_us[FNW_METRIC_LE_N] = {
    100,    250,    500,    1000,    2500,    5000,    10000,    25000,    50000,
    100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000, 60000000,
};

static void copy_label(char *dst, const char *src)
{
    size_t n = strlen(src);
    if (n > FNW_METRIC_LABEL_MAX)
        n = FNW_METRIC_LABEL_MAX;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void fnw_metric_series_init(fnw_metric_series *s, const char *transform, const char *operation)
{
    memset(s, 0, sizeof *s);
    copy_label(s->transform, transform);
    copy_label(s->operation, operation);
    for (int i = 0; i < FNW_M_COUNT; i++)
        if (fnw_metric_names[i].kind == FNW_METRIC_GAUGE)
            s->value[i] = -1;
}

int fnw_metric_series_add_counter(fnw_metric_series *s, const char *name, int64_t v)
{
    size_t i;
    for (i = 0; i < s->ncounters; i++)
        if (strcmp(s->counters[i].name, name) == 0)
            break;
    if (i == s->ncounters) {
        if (s->ncounters == FNW_COUNTERS_MAX || strlen(name) > FNW_METRIC_COUNTER_NAME_MAX)
            return -1;
        snprintf(s->counters[i].name, sizeof s->counters[i].name, "%s", name);
        s->counters[i].value = 0;
        s->ncounters++;
    }
    s->counters[i].value += v;
    return 0;
}

int fnw_metric_counter_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > FNW_METRIC_COUNTER_NAME_MAX || s[0] < 'a' || s[0] > 'z')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return 0;
    return 1;
}

static int plain(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == ':' || c == '-';
}

/* Percent-encodes at most FNW_METRIC_LABEL_MAX bytes of s into out (3 *
 * FNW_METRIC_LABEL_MAX + 1); returns the length. */
static size_t label_encode(const char *s, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (size_t i = 0; i < FNW_METRIC_LABEL_MAX && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (plain(c)) {
            out[n++] = (char)c;
        } else {
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    out[n] = '\0';
    return n;
}

/* Appends to out at *n; the bounds in metric_names.h keep every line short
 * of FNW_METRIC_LINE_MAX, the checks here only keep a mistake from writing
 * past it. */
static void put(char *out, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *out, size_t *n, const char *fmt, ...)
{
    if (*n >= FNW_METRIC_LINE_MAX - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *n, FNW_METRIC_LINE_MAX - 1 - *n, fmt, ap);
    va_end(ap);
    if (k > 0)
        *n += (size_t)k < FNW_METRIC_LINE_MAX - 1 - *n ? (size_t)k : FNW_METRIC_LINE_MAX - 2 - *n;
}

size_t fnw_metric_series_format(const fnw_metric_series *s, char *out)
{
    char t[3 * FNW_METRIC_LABEL_MAX + 1], o[3 * FNW_METRIC_LABEL_MAX + 1];
    label_encode(s->transform, t);
    label_encode(s->operation, o);
    size_t n = 0;
    put(out, &n, "op1 %s %s", t, o);
    for (int i = 0; i < FNW_M_COUNT; i++) {
        const fnw_metric_name *m = &fnw_metric_names[i];
        if (!m->key)
            continue;
        if (m->kind == FNW_METRIC_LATENCY) {
            put(out, &n, " %s=", m->key);
            for (int b = 0; b <= FNW_METRIC_LE_N; b++)
                put(out, &n, "%s%" PRId64, b ? "," : "", s->lat[b]);
            put(out, &n, " %s_sum_us=%" PRId64, m->key, s->lat_sum_us);
        } else if (m->kind == FNW_METRIC_DIST) {
            put(out, &n, " %s_count=%" PRId64 " %s_sum=%" PRId64, m->key, s->value[i], m->key, s->dist_sum[i]);
        } else {
            put(out, &n, " %s=%" PRId64, m->key, s->value[i]);
        }
    }
    for (size_t i = 0; i < s->ncounters; i++)
        put(out, &n, " c.%s=%" PRId64, s->counters[i].name, s->counters[i].value);
    out[n++] = '\n';
    out[n] = '\0';
    return n;
}
