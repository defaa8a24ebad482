/* worker/metrics.c — engine figures -> MonitoringInfo (see metrics.h). */
#include "worker/metrics.h"

#include <string.h>
#include <time.h>

#include "codecs/varint.h"

#define NAMESPACE "[\"fnworker\", \"MetricGroupType.generic\"]"

typedef Org__Apache__Beam__Model__Pipeline__V1__MonitoringInfo__LabelsEntry pb_LabelEntry;

void fnw_metrics_init(fnw_metric_set *s)
{
    memset(s, 0, sizeof *s);
    fnw_arena_init(&s->arena, 8192, 0);
}

static pb_MonitoringInfo *new_info(fnw_metric_set *s, const char *urn, const char *type,
                                   const char *transform_id, const char *name)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        pb_MonitoringInfo **v = fnw_arena_alloc(&s->arena, cap * sizeof *v);
        if (!v)
            return NULL;
        if (s->n)
            memcpy(v, s->infos, s->n * sizeof *v);
        s->infos = v;
        s->cap = cap;
    }
    pb_MonitoringInfo *mi = fnw_arena_alloc(&s->arena, sizeof *mi);
    pb_LabelEntry *labels = fnw_arena_alloc(&s->arena, 3 * sizeof *labels);
    pb_LabelEntry **lp = fnw_arena_alloc(&s->arena, 3 * sizeof *lp);
    if (!mi || !labels || !lp)
        return NULL;
    pb_MonitoringInfo init = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__MONITORING_INFO__INIT;
    *mi = init;
    const char *keys[3] = {"PTRANSFORM", "NAMESPACE", "NAME"};
    const char *vals[3] = {transform_id, NAMESPACE, name};
    for (int i = 0; i < 3; i++) {
        pb_LabelEntry le = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__MONITORING_INFO__LABELS_ENTRY__INIT;
        labels[i] = le;
        labels[i].key = (char *)keys[i];
        labels[i].value = fnw_arena_strdup(&s->arena, vals[i]);
        lp[i] = &labels[i];
    }
    mi->urn = (char *)urn;
    mi->type = (char *)type;
    mi->n_labels = 3;
    mi->labels = lp;
    s->infos[s->n++] = mi;
    return mi;
}

static int set_payload(fnw_metric_set *s, pb_MonitoringInfo *mi, const int64_t *vals, int n)
{
    uint8_t *p = fnw_arena_alloc(&s->arena, (size_t)n * FNW_VARINT_MAX);
    if (!p)
        return -1;
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)fnw_varint_write(p + len, (uint64_t)vals[i]);
    mi->payload.data = p;
    mi->payload.len = len;
    return 0;
}

static int add_counter(fnw_metric_set *s, const char *tid, const char *name, int64_t v)
{
    pb_MonitoringInfo *mi = new_info(s, "beam:metric:user:sum_int64:v1", "beam:metrics:sum_int64:v1", tid, name);
    return mi ? set_payload(s, mi, &v, 1) : -1;
}

static int add_dist(fnw_metric_set *s, const char *tid, const char *name, const fnw_dist *d)
{
    pb_MonitoringInfo *mi = new_info(s, "beam:metric:user:distribution_int64:v1",
                                     "beam:metrics:distribution_int64:v1", tid, name);
    int64_t v[4] = {d->count, d->sum, d->count ? d->min : 0, d->count ? d->max : 0};
    return mi ? set_payload(s, mi, v, 4) : -1;
}

static int add_gauge(fnw_metric_set *s, const char *tid, const char *name, int64_t val)
{
    pb_MonitoringInfo *mi = new_info(s, "beam:metric:user:latest_int64:v1", "beam:metrics:latest_int64:v1", tid, name);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t v[2] = {(int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, val};
    return mi ? set_payload(s, mi, v, 2) : -1;
}

int fnw_metrics_add(fnw_metric_set *s, const char *tid, const fnw_engine_metrics *m)
{
    int rc = 0;
    rc |= add_counter(s, tid, "recordsIn", m->records_in);
    rc |= add_counter(s, tid, "recordsOut", m->records_out);
    rc |= add_counter(s, tid, "asyncCalls", m->calls);
    rc |= add_counter(s, tid, "batches", m->batches);
    rc |= add_counter(s, tid, "retries", m->retries);
    rc |= add_counter(s, tid, "timeouts", m->timeouts);
    rc |= add_counter(s, tid, "failures", m->failures);
    rc |= add_counter(s, tid, "emptyResults", m->empty_results);
    rc |= add_dist(s, tid, "batchSize", &m->batch_size);
    rc |= add_dist(s, tid, "asyncCallDurationMs", &m->call_duration_ms);
    rc |= add_gauge(s, tid, "inflightHighWater", m->inflight_high_water);
    return rc ? -1 : 0;
}

void fnw_metrics_free(fnw_metric_set *s)
{
    fnw_arena_free(&s->arena);
    s->infos = NULL;
    s->n = s->cap = 0;
}
