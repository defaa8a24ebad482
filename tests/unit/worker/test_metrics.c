/* tests/unit/worker/test_metrics.c — the MonitoringInfos a bundle reports, byte for
 * byte as Flink reads them: one group per step in the NAMESPACE label,
 * Beam varint payloads, and no distribution or gauge that the bundle never
 * updated (Flink would keep their zeros). */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/varint.h"
#include "worker/metrics.h"

#define NS_ECHO_0 "[\"fnworker\", \"echo_0\", \"MetricGroupType.generic\", \"MetricGroupType.generic\"]"
#define NS_IDENTITY_1 \
    "[\"fnworker\", \"identity_1\", \"MetricGroupType.generic\", \"MetricGroupType.generic\"]"

static const char *label(const pb_MonitoringInfo *mi, const char *key)
{
    for (size_t i = 0; i < mi->n_labels; i++)
        if (!strcmp(mi->labels[i]->key, key))
            return mi->labels[i]->value;
    return NULL;
}

static const pb_MonitoringInfo *find(const fnw_metric_set *s, const char *tid, const char *name)
{
    for (size_t i = 0; i < fnw_metrics_count(s); i++)
        if (!strcmp(label(fnw_metrics_infos(s)[i], "PTRANSFORM"), tid) && !strcmp(label(fnw_metrics_infos(s)[i], "NAME"), name))
            return fnw_metrics_infos(s)[i];
    return NULL;
}

/* The payload's varints; returns how many, -1 if it does not decode. */
static int payload(const pb_MonitoringInfo *mi, int64_t *out, int max)
{
    size_t off = 0;
    int n = 0;
    while (off < mi->payload.len) {
        uint64_t v;
        int k = fnw_varint_read(mi->payload.data + off, mi->payload.len - off, &v);
        if (k <= 0 || n == max)
            return -1;
        out[n++] = (int64_t)v;
        off += (size_t)k;
    }
    return n;
}

/* A bundle's figures before anything happened, as fnw_engine_start leaves
 * them: zeros, the gauges that do not apply at -1, no call out. */
static fnw_engine_metrics empty_step(void)
{
    fnw_engine_metrics m;
    memset(&m, 0, sizeof m);
    m.concurrency_limit = m.breaker_state = m.batch_target = -1;
    return m;
}

/* Counters, the two distributions, inflightHighWater and inflightCalls. */
#define ASYNC_STEP_INFOS 18

/* An async step after a bundle: 3 calls, batch sizes 4, 4, 2, 2 retries. */
static fnw_engine_metrics async_step(void)
{
    fnw_engine_metrics m = empty_step();
    m.records_in = 10;
    m.records_out = 20;
    m.calls = 3;
    m.batches = 3;
    m.retries = 300;
    m.batch_size = (fnw_dist){3, 10, 2, 4};
    m.call_duration_ms = (fnw_dist){3, 95, 30, 35};
    m.inflight_high_water = 4;
    return m;
}

START_TEST(each_step_has_its_own_group)
{
    fnw_metric_set s;
    fnw_metrics_init(&s);
    fnw_engine_metrics a = async_step();
    fnw_engine_metrics b = empty_step();
    b.records_in = 20;
    b.records_out = 20;
    ck_assert_int_eq(fnw_metrics_add(&s, "transform-0", "echo", 0, &a), 0);
    ck_assert_int_eq(fnw_metrics_add(&s, "transform-1", "identity", 1, &b), 0);
    const pb_MonitoringInfo *in0 = find(&s, "transform-0", "recordsIn");
    const pb_MonitoringInfo *in1 = find(&s, "transform-1", "recordsIn");
    ck_assert_ptr_nonnull(in0);
    ck_assert_ptr_nonnull(in1);
    ck_assert_str_eq(label(in0, "NAMESPACE"), NS_ECHO_0);
    ck_assert_str_eq(label(in1, "NAMESPACE"), NS_IDENTITY_1);
    /* Flink's identifier is namespace names + NAME: the two steps' counters differ */
    ck_assert_str_ne(label(in0, "NAMESPACE"), label(in1, "NAMESPACE"));
    ck_assert_str_eq(in0->urn, "beam:metric:user:sum_int64:v1");
    ck_assert_str_eq(in0->type, "beam:metrics:sum_int64:v1");
    ck_assert_int_eq((int)in0->n_labels, 3);
    fnw_metrics_free(&s);
}
END_TEST

START_TEST(counter_payloads_are_beam_varints)
{
    fnw_metric_set s;
    fnw_metrics_init(&s);
    fnw_engine_metrics a = async_step();
    ck_assert_int_eq(fnw_metrics_add(&s, "transform-0", "echo", 0, &a), 0);
    const pb_MonitoringInfo *r = find(&s, "transform-0", "retries");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq((int)r->payload.len, 2);   /* 300 = ac 02 */
    ck_assert_int_eq(r->payload.data[0], 0xac);
    ck_assert_int_eq(r->payload.data[1], 0x02);
    /* counters are sent even at zero, so they exist in Flink from the first bundle */
    const pb_MonitoringInfo *t = find(&s, "transform-0", "timeouts");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq((int)t->payload.len, 1);
    ck_assert_int_eq(t->payload.data[0], 0);
    fnw_metrics_free(&s);
}
END_TEST

START_TEST(updated_distribution_is_count_sum_min_max)
{
    fnw_metric_set s;
    fnw_metrics_init(&s);
    fnw_engine_metrics a = async_step();
    ck_assert_int_eq(fnw_metrics_add(&s, "transform-0", "echo", 0, &a), 0);
    const pb_MonitoringInfo *d = find(&s, "transform-0", "batchSize");
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d->urn, "beam:metric:user:distribution_int64:v1");
    ck_assert_str_eq(d->type, "beam:metrics:distribution_int64:v1");
    int64_t v[8];
    ck_assert_int_eq(payload(d, v, 8), 4);
    ck_assert(v[0] == 3 && v[1] == 10 && v[2] == 2 && v[3] == 4);
    fnw_metrics_free(&s);
}
END_TEST

START_TEST(never_updated_distribution_and_gauge_are_omitted)
{
    fnw_metric_set s;
    fnw_metrics_init(&s);
    fnw_engine_metrics m = empty_step(); /* an empty bundle */
    ck_assert_int_eq(fnw_metrics_add(&s, "transform-0", "echo", 0, &m), 0);
    ck_assert_ptr_null(find(&s, "transform-0", "batchSize"));
    ck_assert_ptr_null(find(&s, "transform-0", "asyncCallDurationMs"));
    ck_assert_ptr_null(find(&s, "transform-0", "inflightHighWater"));
    ck_assert_ptr_null(find(&s, "transform-0", "callLatencyP50Us"));
    ck_assert_ptr_null(find(&s, "transform-0", "breakerState"));        /* -1: no breaker */
    ck_assert_ptr_nonnull(find(&s, "transform-0", "inflightCalls"));    /* 0 calls out is a value */
    ck_assert_int_eq((int)fnw_metrics_count(&s), 15);               /* the 14 counters, inflightCalls */
    for (size_t i = 0; i < fnw_metrics_count(&s); i++)
        ck_assert_int_gt((int)fnw_metrics_infos(&s)[i]->payload.len, 0);   /* Beam stops at an empty payload */
    /* one sample: the distribution is sent, the other one still is not */
    m.batch_size = (fnw_dist){1, 5, 5, 5};
    ck_assert_int_eq(fnw_metrics_add(&s, "transform-1", "echo", 1, &m), 0);
    ck_assert_ptr_nonnull(find(&s, "transform-1", "batchSize"));
    ck_assert_ptr_null(find(&s, "transform-1", "asyncCallDurationMs"));
    fnw_metrics_free(&s);
}
END_TEST

START_TEST(raised_gauge_is_timestamp_then_value)
{
    fnw_metric_set s;
    fnw_metrics_init(&s);
    fnw_engine_metrics a = async_step();
    ck_assert_int_eq(fnw_metrics_add(&s, "transform-0", "echo", 0, &a), 0);
    const pb_MonitoringInfo *g = find(&s, "transform-0", "inflightHighWater");
    ck_assert_ptr_nonnull(g);
    ck_assert_str_eq(g->urn, "beam:metric:user:latest_int64:v1");
    ck_assert_str_eq(g->type, "beam:metrics:latest_int64:v1");
    int64_t v[4];
    ck_assert_int_eq(payload(g, v, 4), 2);
    ck_assert(v[0] > 1600000000000LL);          /* ms since the epoch */
    ck_assert(v[1] == 4);
    fnw_metrics_free(&s);
}
END_TEST

START_TEST(operation_name_is_escaped_in_the_json)
{
    fnw_metric_set s;
    fnw_metrics_init(&s);
    fnw_engine_metrics m = empty_step();
    ck_assert_int_eq(fnw_metrics_add(&s, "t", "we\"ird\\op\n", 12, &m), 0);
    const pb_MonitoringInfo *mi = find(&s, "t", "recordsIn");
    ck_assert_ptr_nonnull(mi);
    ck_assert_str_eq(label(mi, "NAMESPACE"), "[\"fnworker\", \"we\\\"ird\\\\op\\u000a_12\", "
                                             "\"MetricGroupType.generic\", \"MetricGroupType.generic\"]");
    fnw_metrics_free(&s);
}
END_TEST

START_TEST(packs_into_a_response)
{
    fnw_metric_set s;
    fnw_metrics_init(&s);
    fnw_engine_metrics a = async_step();
    for (size_t i = 0; i < 5; i++)                /* more than the first slot block */
        ck_assert_int_eq(fnw_metrics_add(&s, "transform-x", "echo", i, &a), 0);
    ck_assert_int_eq((int)fnw_metrics_count(&s), 5 * ASYNC_STEP_INFOS);
    pb_ProcessBundleResponse r = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROCESS_BUNDLE_RESPONSE__INIT;
    r.n_monitoring_infos = fnw_metrics_count(&s);
    r.monitoring_infos = fnw_metrics_infos(&s);
    size_t len = PB(process_bundle_response__get_packed_size)(&r);
    uint8_t *buf = malloc(len);
    ck_assert_ptr_nonnull(buf);
    PB(process_bundle_response__pack)(&r, buf);
    pb_ProcessBundleResponse *back = PB(process_bundle_response__unpack)(NULL, len, buf);
    ck_assert_ptr_nonnull(back);
    ck_assert_int_eq((int)back->n_monitoring_infos, 5 * ASYNC_STEP_INFOS);
    ck_assert_str_eq(label(back->monitoring_infos[5 * ASYNC_STEP_INFOS - 1], "NAMESPACE"),
                     "[\"fnworker\", \"echo_4\", \"MetricGroupType.generic\", \"MetricGroupType.generic\"]");
    PB(process_bundle_response__free_unpacked)(back, NULL);
    free(buf);
    fnw_metrics_free(&s);
}
END_TEST

static int64_t gauge_value(const fnw_metric_set *s, const char *tid, const char *name)
{
    const pb_MonitoringInfo *g = find(s, tid, name);
    ck_assert_msg(g != NULL, "no gauge %s", name);
    ck_assert_str_eq(g->urn, "beam:metric:user:latest_int64:v1");
    int64_t v[4];
    ck_assert_int_eq(payload(g, v, 4), 2);
    return v[1];
}

static int64_t counter_value(const fnw_metric_set *s, const char *tid, const char *name)
{
    const pb_MonitoringInfo *c = find(s, tid, name);
    ck_assert_msg(c != NULL, "no counter %s", name);
    ck_assert_str_eq(c->urn, "beam:metric:user:sum_int64:v1");
    int64_t v[2];
    ck_assert_int_eq(payload(c, v, 2), 1);
    return v[0];
}

START_TEST(latency_quantiles_are_gauges_in_us)
{
    fnw_metric_set s;
    fnw_metrics_init(&s);
    fnw_engine_metrics m = async_step();
    for (int i = 0; i < 90; i++)
        fnw_hist_add(&m.call_latency_us, 5000); /* 90 calls of 5 ms */
    for (int i = 0; i < 10; i++)
        fnw_hist_add(&m.call_latency_us, 80000); /* and 10 of 80 ms */
    ck_assert_int_eq(fnw_metrics_add(&s, "t", "http", 0, &m), 0);
    int64_t p50 = gauge_value(&s, "t", "callLatencyP50Us");
    int64_t p95 = gauge_value(&s, "t", "callLatencyP95Us");
    int64_t p99 = gauge_value(&s, "t", "callLatencyP99Us");
    /* within the histogram's 12.5% */
    ck_assert_msg(p50 >= 4375 && p50 <= 5625, "p50 %lld", (long long)p50);
    ck_assert_msg(p95 >= 70000 && p95 <= 90000, "p95 %lld", (long long)p95);
    ck_assert_msg(p99 >= 70000 && p99 <= 90000, "p99 %lld", (long long)p99);
    fnw_metrics_free(&s);
}
END_TEST

START_TEST(every_field_is_exported_by_its_table_name)
{
    fnw_metric_set s;
    fnw_metrics_init(&s);
    fnw_engine_metrics m = empty_step();
    m.calls = 5;
    m.retries = 2; /* requests: 7 attempts */
    m.successes = 5;
    m.failures = 1;
    m.timeouts = 2;
    m.overloaded = 3;
    m.breaker_rejected = 4;
    m.fallbacks = 6;
    m.breaker_opened = 1;
    m.inflight_calls = 9;
    m.inflight_high_water = 2;
    m.concurrency_limit = 40;
    m.breaker_state = 0; /* closed is a state, not "no breaker" */
    m.batch_target = 64;
    ck_assert_int_eq(fnw_metrics_add(&s, "t", "http", 0, &m), 0);
    ck_assert_int_eq(counter_value(&s, "t", "requests"), 7);
    ck_assert_int_eq(counter_value(&s, "t", "successes"), 5);
    ck_assert_int_eq(counter_value(&s, "t", "failures"), 1);
    ck_assert_int_eq(counter_value(&s, "t", "timeouts"), 2);
    ck_assert_int_eq(counter_value(&s, "t", "overloaded"), 3);
    ck_assert_int_eq(counter_value(&s, "t", "breakerRejected"), 4);
    ck_assert_int_eq(counter_value(&s, "t", "fallbacks"), 6);
    ck_assert_int_eq(counter_value(&s, "t", "breakerOpened"), 1);
    ck_assert_int_eq(gauge_value(&s, "t", "inflightCalls"), 9);
    ck_assert_int_eq(gauge_value(&s, "t", "concurrencyLimit"), 40);
    ck_assert_int_eq(gauge_value(&s, "t", "breakerState"), 0);
    ck_assert_int_eq(gauge_value(&s, "t", "batchTarget"), 64);
    /* every row of the table is there, under its Flink name */
    for (int i = 0; i < FNW_M_COUNT; i++) {
        const fnw_metric_name *n = &fnw_metric_names[i];
        if (n->kind == FNW_METRIC_COUNTER || n->kind == FNW_METRIC_GAUGE)
            ck_assert_msg(find(&s, "t", n->flink) != NULL, "%s missing", n->flink);
    }
    fnw_metrics_free(&s);
}
END_TEST

START_TEST(operation_counters_by_their_names)
{
    fnw_metric_set s;
    fnw_metrics_init(&s);
    fnw_engine_metrics m = empty_step();
    fnw_counter cs[2] = { { "cache_hits", 12 }, { "retries", 3 } };
    m.counters = cs;
    m.ncounters = 2;
    m.retries = 1;
    ck_assert_int_eq(fnw_metrics_add(&s, "t", "redis", 0, &m), 0);
    ck_assert_int_eq(counter_value(&s, "t", "cache_hits"), 12);
    /* an operation's "retries" does not overwrite the engine's */
    ck_assert_int_eq(counter_value(&s, "t", "retries"), 1);
    ck_assert_int_eq(counter_value(&s, "t", "op_retries"), 3);
    fnw_metrics_free(&s);
}
END_TEST

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

START_TEST(name_table_follows_the_conventions)
{
    for (int i = 0; i < FNW_M_COUNT; i++) {
        const fnw_metric_name *n = &fnw_metric_names[i];
        ck_assert_int_eq((int)n->id, i);
        ck_assert_msg(n->flink && n->flink[0] >= 'a' && n->flink[0] <= 'z' && n->help && n->unit, "row %d", i);
        for (const char *p = n->flink; *p; p++)
            ck_assert_msg((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'), "flink name %s", n->flink);
        for (int j = 0; j < i; j++) {
            ck_assert_str_ne(n->flink, fnw_metric_names[j].flink);
            if (n->key && fnw_metric_names[j].key)
                ck_assert_str_ne(n->key, fnw_metric_names[j].key);
            /* rows of one Prometheus family are told apart by a label, and follow each other */
            if (n->prom && fnw_metric_names[j].prom && !strcmp(n->prom, fnw_metric_names[j].prom))
                ck_assert_msg(n->prom_label && fnw_metric_names[j].prom_label && j >= i - 3 &&
                                  !strcmp(fnw_metric_names[i - 1].prom, n->prom),
                              "%s", n->prom);
        }
        if (!n->prom)
            continue;
        ck_assert_msg(!strncmp(n->prom, "fnworker_", 9), "%s", n->prom);
        for (const char *p = n->prom; *p; p++)
            ck_assert_msg((*p >= 'a' && *p <= 'z') || *p == '_', "%s", n->prom);
        ck_assert_msg(n->key != NULL, "%s is in Prometheus but not on the stats line", n->prom);
        if (n->kind == FNW_METRIC_COUNTER)
            ck_assert_msg(ends_with(n->prom, "_total"), "counter %s", n->prom);
        else
            ck_assert_msg(!ends_with(n->prom, "_total"), "%s", n->prom);
        if (n->kind == FNW_METRIC_LATENCY)
            ck_assert_msg(ends_with(n->prom, "_seconds"), "%s", n->prom);
    }
    for (int b = 1; b < FNW_METRIC_LE_N; b++)
        ck_assert(fnw_metric_le_us[b] > fnw_metric_le_us[b - 1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("monitoring_infos");
    tcase_add_test(tc, each_step_has_its_own_group);
    tcase_add_test(tc, counter_payloads_are_beam_varints);
    tcase_add_test(tc, updated_distribution_is_count_sum_min_max);
    tcase_add_test(tc, never_updated_distribution_and_gauge_are_omitted);
    tcase_add_test(tc, raised_gauge_is_timestamp_then_value);
    tcase_add_test(tc, operation_name_is_escaped_in_the_json);
    tcase_add_test(tc, packs_into_a_response);
    tcase_add_test(tc, latency_quantiles_are_gauges_in_us);
    tcase_add_test(tc, every_field_is_exported_by_its_table_name);
    tcase_add_test(tc, operation_counters_by_their_names);
    tcase_add_test(tc, name_table_follows_the_conventions);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
