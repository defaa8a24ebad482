/* tests/unit/runtime/test_engine_batch.c — batch mode through echo: batch sizes
 * under capacity, the batch timeout flushing a partial batch, short
 * results, timeouts and failures naming a batch's inputs, unordered batches
 * across watermarks; and repeated outputs per element.
 *
 * No assertion depends on how fast a loaded machine wakes the loop: times
 * are checked from below, concurrency as the ratio of call time to bundle
 * time, and "did not wait" by order (what had happened when the bundle
 * ended), with generous guards against hangs. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/test_engine_ops.h"

/* ---- per element and batch mode through echo ------------------------------------ */

START_TEST(test_repeat_outputs)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "repeat=3", "delay_ms=1", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, 30);
    for (size_t i = 0; i < 30; i++)
        ck_assert_int_eq(h.outs[i].v, (int32_t)(i / 3));
    ck_assert_int_eq(h_m(&h)->records_out, 30);
    h_free(&h);

    h_init(&h);
    static const char *const kv0[] = { "repeat=0", NULL };
    h_create(&h, "echo", &s, kv0);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, 0);
    ck_assert_int_eq(h_m(&h)->empty_results, 10);
    h_free(&h);
}
END_TEST

static void batch_spec(fnw_spec *s, int32_t size, int64_t batch_timeout)
{
    *s = h_spec();
    s->batched = 1;
    s->batch_size = size;
    s->timeout_ms = 2000;
    s->batch_timeout_ms = batch_timeout;
}

START_TEST(test_batch_mode)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 4, 0);
    static const char *const kv[] = { "delay_ms=5", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    assert_in_order(&h, 10);
    const fnw_engine_metrics *m = h_m(&h);
    ck_assert_int_eq(m->batches, 3);
    ck_assert_int_eq(m->calls, 3);
    ck_assert_int_eq(m->batch_size.count, 3);
    ck_assert_int_eq(m->batch_size.sum, 10);
    ck_assert_int_eq(m->batch_size.min, 2);
    ck_assert_int_eq(m->batch_size.max, 4);
    ck_assert_int_eq(m->records_out, 10);
    h_free(&h);
}
END_TEST

START_TEST(test_batch_short_result)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 4, 0);
    static const char *const kv[] = { "short_result=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    static const int32_t want[] = { 0, 1, 4, 5, 8, 9 };
    ck_assert_uint_eq(h.n_out, 6);
    for (size_t i = 0; i < 6; i++)
        ck_assert_int_eq(h.outs[i].v, want[i]);
    ck_assert_int_eq(h_m(&h)->empty_results, 4);
    h_free(&h);
}
END_TEST

START_TEST(test_batch_timeout_flushes_partial_batch)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 10, 30);
    h_create(&h, "echo", &s, NO_OPTS);
    h_inputs(&h, 3);
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    /* the batch timer sends the partial batch: the bundle is still open */
    h_run_until(&h, three_outputs, 5);
    ck_assert(!h.finish_called && !h.finished);
    assert_in_order(&h, 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_msg(h.outs[i].at >= 0.029, "output at %.3f s", h.outs[i].at);
    ck_assert_int_eq(h_m(&h)->batches, 1);
    h.finish_called = 1;
    fnw_engine_finish(h.e);
    ck_assert(h.finished);
    ck_assert_int_eq(h_m(&h)->batches, 1);
    h_free(&h);
}
END_TEST

START_TEST(test_batch_larger_than_capacity_does_not_deadlock)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 10, 0);
    s.capacity = 4;
    static const char *const kv[] = { "delay_ms=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 20);
    h_run_ok(&h, 5);
    assert_in_order(&h, 20);
    ck_assert_int_eq(h_m(&h)->batches, 5);
    ck_assert_int_eq(h_m(&h)->batch_size.max, 4);
    ck_assert_int_eq(h_m(&h)->inflight_high_water, 4);
    h_free(&h);
}
END_TEST

START_TEST(test_batch_keeps_full_batches_under_capacity)
{
    /* capacity 6, batches of 4: the 2 elements left when the queue is full
     * wait for the batch to fill rather than go as a short batch */
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 4, 0);
    s.capacity = 6;
    static const char *const kv[] = { "delay_ms=5", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 40);
    h_run_ok(&h, 5);
    assert_in_order(&h, 40);
    ck_assert_int_eq(h_m(&h)->batches, 10);
    ck_assert_int_eq(h_m(&h)->batch_size.min, 4);
    ck_assert_int_eq(h_m(&h)->inflight_high_water, 6);
    h_free(&h);
}
END_TEST

START_TEST(test_batch_timeout_fail_names_inputs)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 4, 0);
    s.timeout_ms = 20;
    static const char *const kv[] = { "hang=yes", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 3);
    h_run(&h, 5);
    ck_assert(h.failed);
    ck_assert_str_eq(h.fail_msg, "operation 'echo' timed out after 20 ms on inputs 0..2 "
                                 "(timestamps 1000, 1001, 1002) in transform 't1' of bundle 'b1'");
    h_free(&h);
}
END_TEST

START_TEST(test_batch_error_message)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 2, 0);
    static const char *const kv[] = { "fail_every=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 4);
    h.ts[3] = INT64_MIN;
    h_run(&h, 5);
    ck_assert(h.failed);
    ck_assert_str_eq(h.fail_msg, "operation 'echo' failed on inputs 2..3 (timestamps 1002, none) "
                                 "in transform 't1' of bundle 'b1': echo: injected failure");
    h_free(&h);
}
END_TEST

START_TEST(test_batch_unordered_with_watermarks)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 5, 0);
    s.unordered = 1;
    s.capacity = 40;
    static const char *const kv[] = { "jitter_ms=4", "seed=9", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 400);
    for (size_t i = 0; i < 400; i++)
        h.wm[i] = (int64_t)(i / 50);
    h_run_ok(&h, 10);
    assert_each_once(&h, 400);
    int32_t group = 0;
    for (size_t i = 0; i < h.n_out; i++) {
        ck_assert_int_ge(h.outs[i].v / 50, group);
        group = h.outs[i].v / 50;
    }
    h_free(&h);
}
END_TEST

/* With a latency target and no batch_timeout_ms, a partial batch still goes
 * before the bundle ends: the tuner's delay sends it (a fixed batch size
 * would hold it until the end); the gauge shows the size the tuner chose. */
START_TEST(test_target_latency_sends_partial_batches)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 10, 0);
    s.target_latency_ms = 30;
    h_create(&h, "echo", &s, NO_OPTS);
    h_inputs(&h, 3);
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    h_run_until(&h, three_outputs, 5);
    ck_assert(!h.finish_called && !h.finished);
    assert_in_order(&h, 3);
    ck_assert_int_eq(h_m(&h)->batches, 1);
    ck_assert_int_ge(h_m(&h)->batch_target, 1);
    ck_assert_int_le(h_m(&h)->batch_target, 10);
    h.finish_called = 1;
    fnw_engine_finish(h.e);
    ck_assert(h.finished);
    h_free(&h);
}
END_TEST

/* A service whose calls cost 2 ms + 0.1 ms per input, a 40 ms target:
 * every output exact and in order, batches within batch_size, the gauge
 * set; a fixed batch size leaves the gauge at -1. */
START_TEST(test_target_latency_outputs_exact)
{
    harness h;
    h_init(&h);
    fnw_spec s;
    batch_spec(&s, 128, 0);
    s.capacity = 1024;
    s.target_latency_ms = 40;
    static const char *const kv[] = { "delay_ms=2", "delay_per_item_us=100", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 2000);
    h_run_ok(&h, 20);
    assert_in_order(&h, 2000);
    const fnw_engine_metrics *m = h_m(&h);
    ck_assert_int_eq(m->batch_size.sum, 2000);
    ck_assert_int_le(m->batch_size.max, 128);
    ck_assert_int_ge(m->batch_target, 1);
    ck_assert_int_le(m->batch_target, 128);
    h_free(&h);

    h_init(&h);
    s.target_latency_ms = 0;
    h_create(&h, "echo", &s, NO_OPTS);
    h_inputs(&h, 10);
    h_run_ok(&h, 5);
    ck_assert_int_eq(h_m(&h)->batch_target, -1);
    h_free(&h);
}
END_TEST

static Suite *engine_batch_suite(void)
{
    Suite *s = suite_create("engine_batch");
    TCase *tc = tcase_create("engine_batch");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_repeat_outputs);
    tcase_add_test(tc, test_batch_mode);
    tcase_add_test(tc, test_batch_short_result);
    tcase_add_test(tc, test_batch_timeout_flushes_partial_batch);
    tcase_add_test(tc, test_batch_larger_than_capacity_does_not_deadlock);
    tcase_add_test(tc, test_batch_keeps_full_batches_under_capacity);
    tcase_add_test(tc, test_batch_timeout_fail_names_inputs);
    tcase_add_test(tc, test_batch_error_message);
    tcase_add_test(tc, test_batch_unordered_with_watermarks);
    tcase_add_test(tc, test_target_latency_sends_partial_batches);
    tcase_add_test(tc, test_target_latency_outputs_exact);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(engine_batch_suite());
}
