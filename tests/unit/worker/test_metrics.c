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

/* An async step after a bundle: 3 calls, batch sizes 4, 4, 2, 2 retries. */
static fnw_engine_metrics async_step(void)
{
    fnw_engine_metrics m;
    memset(&m, 0, sizeof m);
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
    fnw_engine_metrics b;
    memset(&b, 0, sizeof b);
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
    fnw_engine_metrics m;
    memset(&m, 0, sizeof m);      /* an empty bundle */
    ck_assert_int_eq(fnw_metrics_add(&s, "transform-0", "echo", 0, &m), 0);
    ck_assert_ptr_null(find(&s, "transform-0", "batchSize"));
    ck_assert_ptr_null(find(&s, "transform-0", "asyncCallDurationMs"));
    ck_assert_ptr_null(find(&s, "transform-0", "inflightHighWater"));
    ck_assert_int_eq((int)fnw_metrics_count(&s), 8);               /* the eight counters */
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
    fnw_engine_metrics m;
    memset(&m, 0, sizeof m);
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
    ck_assert_int_eq((int)fnw_metrics_count(&s), 55);
    pb_ProcessBundleResponse r = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROCESS_BUNDLE_RESPONSE__INIT;
    r.n_monitoring_infos = fnw_metrics_count(&s);
    r.monitoring_infos = fnw_metrics_infos(&s);
    size_t len = PB(process_bundle_response__get_packed_size)(&r);
    uint8_t *buf = malloc(len);
    ck_assert_ptr_nonnull(buf);
    PB(process_bundle_response__pack)(&r, buf);
    pb_ProcessBundleResponse *back = PB(process_bundle_response__unpack)(NULL, len, buf);
    ck_assert_ptr_nonnull(back);
    ck_assert_int_eq((int)back->n_monitoring_infos, 55);
    ck_assert_str_eq(label(back->monitoring_infos[54], "NAMESPACE"),
                     "[\"fnworker\", \"echo_4\", \"MetricGroupType.generic\", \"MetricGroupType.generic\"]");
    PB(process_bundle_response__free_unpacked)(back, NULL);
    free(buf);
    fnw_metrics_free(&s);
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
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
