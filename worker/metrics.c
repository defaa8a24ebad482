/* worker/metrics.c — engine figures -> MonitoringInfo (see metrics.h). */
#include "worker/metrics.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "codecs/varint.h"

#define URN_SUM "beam:metric:user:sum_int64:v1"
#define URN_DIST "beam:metric:user:distribution_int64:v1"
#define URN_LATEST "beam:metric:user:latest_int64:v1"
#define TYPE_SUM "beam:metrics:sum_int64:v1"
#define TYPE_DIST "beam:metrics:distribution_int64:v1"
#define TYPE_LATEST "beam:metrics:latest_int64:v1"

typedef Org__Apache__Beam__Model__Pipeline__V1__MonitoringInfo__LabelsEntry pb_LabelEntry;

/* What every MonitoringInfo of one step shares. */
typedef struct step_labels {
    const char *transform_id; /* arena copies */
    const char *namespace_json;
} step_labels;

void fnw_metrics_init(fnw_metric_set *s)
{
    memset(s, 0, sizeof *s);
    fnw_arena_init(&s->arena, 8192, 0);
}

/* ---- the namespace label ------------------------------------------------------ */

/* Appends s as a JSON string body (no quotes) at out; returns bytes written.
 * out must hold 6 * strlen(s) bytes. */
static size_t json_escape(char *out, const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            out[n++] = '\\';
            out[n++] = (char)*p;
        } else if (*p < 0x20) {
            n += (size_t)snprintf(out + n, 7, "\\u%04x", *p);
        } else {
            out[n++] = (char)*p;
        }
    }
    return n;
}

/* ["fnworker", "<operation>_<index>", "MetricGroupType.generic", "MetricGroupType.generic"] */
static char *step_namespace(fnw_metric_set *s, const char *operation, size_t index)
{
    static const char head[] = "[\"" FNW_METRICS_GROUP "\", \"";
    static const char tail[] = "\", \"" FNW_METRICS_GENERIC "\", \"" FNW_METRICS_GENERIC "\"]";
    size_t cap = sizeof head + 6 * strlen(operation) + 24 + sizeof tail;
    char *out = fnw_arena_alloc(&s->arena, cap);
    if (!out)
        return NULL;
    size_t n = sizeof head - 1;
    memcpy(out, head, n);
    n += json_escape(out + n, operation);
    n += (size_t)snprintf(out + n, cap - n, "_%zu%s", index, tail);
    return out;
}

/* ---- one MonitoringInfo --------------------------------------------------------- */

static pb_LabelEntry **make_labels(fnw_metric_set *s, const step_labels *sl, const char *name)
{
    pb_LabelEntry *labels = fnw_arena_alloc(&s->arena, 3 * sizeof *labels);
    pb_LabelEntry **lp = fnw_arena_alloc(&s->arena, 3 * sizeof *lp);
    char *name_copy = fnw_arena_strdup(&s->arena, name);
    if (!labels || !lp || !name_copy)
        return NULL;
    const char *keys[3] = { "PTRANSFORM", "NAMESPACE", "NAME" };
    const char *vals[3] = { sl->transform_id, sl->namespace_json, name_copy };
    for (int i = 0; i < 3; i++) {
        pb_LabelEntry le = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__MONITORING_INFO__LABELS_ENTRY__INIT;
        labels[i] = le;
        labels[i].key = (char *)keys[i];
        labels[i].value = (char *)vals[i];
        lp[i] = &labels[i];
    }
    return lp;
}

static int reserve_slot(fnw_metric_set *s)
{
    if (s->n < s->cap)
        return 0;
    size_t cap = s->cap ? s->cap * 2 : 16;
    pb_MonitoringInfo **v = fnw_arena_alloc(&s->arena, cap * sizeof *v);
    if (!v)
        return -1;
    if (s->n)
        memcpy(v, s->infos, s->n * sizeof *v);
    s->infos = v;
    s->cap = cap;
    return 0;
}

/* Builds one complete MonitoringInfo (labels and varint payload) and only
 * then appends it, so a failure never leaves an info without a payload
 * (Beam's container stops reading at the first empty payload). */
static int add_info(fnw_metric_set *s, const step_labels *sl, const char *urn, const char *type,
                    const char *name, const int64_t *vals, int n_vals)
{
    pb_MonitoringInfo *mi = fnw_arena_alloc(&s->arena, sizeof *mi);
    uint8_t *payload = fnw_arena_alloc(&s->arena, (size_t)n_vals * FNW_VARINT_MAX);
    pb_LabelEntry **labels = make_labels(s, sl, name);
    if (!mi || !payload || !labels || reserve_slot(s) < 0)
        return -1;
    size_t len = 0;
    for (int i = 0; i < n_vals; i++)
        len += (size_t)fnw_varint_write(payload + len, (uint64_t)vals[i]);
    pb_MonitoringInfo init = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__MONITORING_INFO__INIT;
    *mi = init;
    mi->urn = (char *)urn;
    mi->type = (char *)type;
    mi->n_labels = 3;
    mi->labels = labels;
    mi->payload.data = payload;
    mi->payload.len = len;
    s->infos[s->n++] = mi;
    return 0;
}

/* ---- the three kinds ------------------------------------------------------------------ */

static int add_counter(fnw_metric_set *s, const step_labels *sl, const char *name, int64_t v)
{
    return add_info(s, sl, URN_SUM, TYPE_SUM, name, &v, 1);
}

/* Payload count, sum, min, max; nothing when the bundle had no sample. */
static int add_dist(fnw_metric_set *s, const step_labels *sl, const char *name, const fnw_dist *d)
{
    if (d->count <= 0)
        return 0;
    int64_t v[4] = { d->count, d->sum, d->min, d->max };
    return add_info(s, sl, URN_DIST, TYPE_DIST, name, v, 4);
}

/* Payload timestamp (ms since the epoch), value. */
static int add_gauge(fnw_metric_set *s, const step_labels *sl, const char *name, int64_t val)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t v[2] = { (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, val };
    return add_info(s, sl, URN_LATEST, TYPE_LATEST, name, v, 2);
}

/* ---- the engine's fields, by the name table's ids ------------------------------------- */

int64_t fnw_metrics_value(const fnw_engine_metrics *m, fnw_metric_id id)
{
    switch (id) {
    case FNW_M_RECORDS_IN:
        return m->records_in;
    case FNW_M_RECORDS_OUT:
        return m->records_out;
    case FNW_M_CALLS:
        return m->calls;
    case FNW_M_BATCHES:
        return m->batches;
    case FNW_M_REQUESTS:
        return m->calls + m->retries; /* every attempt handed to the operation */
    case FNW_M_RETRIES:
        return m->retries;
    case FNW_M_SUCCESSES:
        return m->successes;
    case FNW_M_FAILED_ERROR:
        return m->failures;
    case FNW_M_FAILED_TIMEOUT:
        return m->timeouts;
    case FNW_M_FAILED_OVERLOAD:
        return m->overloaded;
    case FNW_M_FAILED_BREAKER:
        return m->breaker_rejected;
    case FNW_M_EMPTY_RESULTS:
        return m->empty_results;
    case FNW_M_FALLBACKS:
        return m->fallbacks;
    case FNW_M_BREAKER_OPENED:
        return m->breaker_opened;
    case FNW_M_BATCH_SIZE:
        return m->batch_size.count;
    case FNW_M_CALL_DURATION_MS:
        return m->call_duration_ms.count;
    case FNW_M_CALL_LATENCY:
        return m->call_latency_us.count;
    case FNW_M_INFLIGHT_HIGH_WATER:
        return m->inflight_high_water;
    case FNW_M_INFLIGHT_CALLS:
        return m->inflight_calls;
    case FNW_M_CONCURRENCY_LIMIT:
        return m->concurrency_limit;
    case FNW_M_BREAKER_STATE:
        return m->breaker_state;
    case FNW_M_BATCH_TARGET:
        return m->batch_target;
    case FNW_M_COUNT:
        break;
    }
    return 0;
}

const fnw_dist *fnw_metrics_dist(const fnw_engine_metrics *m, fnw_metric_id id)
{
    return id == FNW_M_BATCH_SIZE         ? &m->batch_size
           : id == FNW_M_CALL_DURATION_MS ? &m->call_duration_ms
                                          : NULL;
}

/* An operation counter's Flink name: its own, or "op_<name>" when that is
 * one of the table's (an operation's "retries" must not overwrite the
 * engine's in the same group). */
static const char *counter_flink_name(const char *name, char *buf, size_t n)
{
    for (int i = 0; i < FNW_M_COUNT; i++) {
        if (strcmp(fnw_metric_names[i].flink, name) == 0) {
            snprintf(buf, n, "op_%s", name);
            return buf;
        }
    }
    return name;
}

/* One gauge per quantile of the bundle's latency histogram, in µs; none
 * when the bundle had no call (Flink would keep a 0 for good). */
static int add_latency(fnw_metric_set *s, const step_labels *sl, const char *stem, const fnw_hist *h)
{
    if (h->count <= 0)
        return 0;
    int rc = 0;
    for (int q = 0; q < FNW_METRIC_QUANTILES; q++) {
        char name[64];
        snprintf(name, sizeof name, "%s%s", stem, fnw_metric_quantile_suffix[q]);
        rc |= add_gauge(s, sl, name, fnw_hist_quantile(h, fnw_metric_quantile_q[q]));
    }
    return rc;
}

int fnw_metrics_add(fnw_metric_set *s, const char *tid, const char *operation, size_t index,
                    const fnw_engine_metrics *m)
{
    step_labels sl = { fnw_arena_strdup(&s->arena, tid), step_namespace(s, operation, index) };
    if (!sl.transform_id || !sl.namespace_json)
        return -1;
    int rc = 0;
    for (int i = 0; i < FNW_M_COUNT; i++) {
        const fnw_metric_name *n = &fnw_metric_names[i];
        int64_t v = fnw_metrics_value(m, n->id);
        switch (n->kind) {
        case FNW_METRIC_COUNTER:
            rc |= add_counter(s, &sl, n->flink, v);
            break;
        case FNW_METRIC_DIST:
            rc |= add_dist(s, &sl, n->flink, fnw_metrics_dist(m, n->id));
            break;
        case FNW_METRIC_LATENCY:
            rc |= add_latency(s, &sl, n->flink, &m->call_latency_us);
            break;
        case FNW_METRIC_GAUGE:
            /* the high-water mark of an empty bundle (0) would replace the
             * last real one; -1 is "does not apply" */
            if (n->id == FNW_M_INFLIGHT_HIGH_WATER ? v > 0 : v >= 0)
                rc |= add_gauge(s, &sl, n->flink, v);
            break;
        }
    }
    for (size_t i = 0; i < m->ncounters; i++) {
        char buf[FNW_COUNTER_NAME_MAX + 4];
        const char *name = counter_flink_name(m->counters[i].name, buf, sizeof buf);
        rc |= add_counter(s, &sl, name, fnw_counter_value(&m->counters[i]));
    }
    return rc ? -1 : 0;
}

void fnw_metrics_free(fnw_metric_set *s)
{
    fnw_arena_free(&s->arena);
    s->infos = NULL;
    s->n = s->cap = 0;
}
