/* tests/unit/runtime/test_engine_lifecycle.c — the end of a bundle and of an
 * engine: the drain at finish, failure messages, abort (and reuse after it),
 * and abort or free from inside the sink's callbacks and with calls still
 * out, where nothing may fire after the engine is gone.
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

/* ---- finish, failures, abort ---------------------------------------------------------- */

START_TEST(test_drain_at_finish)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "delay_ms=80", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 5);
    h_run_ok(&h, 5);
    assert_in_order(&h, 5);
    /* finish waited for the calls, which ran side by side, and ended in the
     * loop iteration of the last output */
    ck_assert_msg(h.t_finished >= 0.079, "drain took %.3f s", h.t_finished);
    ck_assert_msg(h_concurrency(&h) >= 2.5, "%.1f calls at once", h_concurrency(&h));
    ck_assert_uint_eq(h.finished_iter, h.outs[4].iter);
    h_free(&h);
}
END_TEST

START_TEST(test_finish_empty_bundle)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    h_create(&h, "echo", &s, NO_OPTS);
    h_inputs(&h, 0);
    h_begin(&h, "b1");
    fnw_engine_finish(h.e);
    ck_assert(h.finished);
    ck_assert_int_eq(h_m(&h)->records_in, 0);
    h_free(&h);
}
END_TEST

START_TEST(test_operation_error_message)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.capacity = 1;
    static const char *const kv[] = { "fail_every=3", "fail_message=boom: service said no", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h_run(&h, 5);
    ck_assert(h.failed);
    ck_assert_str_eq(h.fail_msg, "operation 'echo' failed on input 2 (timestamp 1002) in transform 't1' "
                                 "of bundle 'b1': boom: service said no");
    ck_assert_int_eq(h_m(&h)->failures, 1);
    ck_assert_uint_eq(h.n_out, 2);
    h_free(&h);
}
END_TEST

START_TEST(test_sync_operation_must_complete)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    h_create_op(&h, &liar_op, &s);
    h_inputs(&h, 3);
    h_run(&h, 5);
    ck_assert(h.failed);
    ck_assert_str_eq(h.fail_msg, "operation 'liar' is synchronous but returned without completing its call "
                                 "on input 0 (timestamp 1000) in transform 't1' of bundle 'b1'");
    h_free(&h);
}
END_TEST

START_TEST(test_abort_cancels_and_engine_is_reusable)
{
    harness h;
    h_init(&h);
    probe_invokes = probe_cancels = probe_closes = 0;
    fnw_spec s = h_spec();
    h_create_op(&h, &probe_op, &s);
    h_inputs(&h, 5);
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    ck_assert_int_eq(probe_invokes, 5);
    fnw_engine_abort(h.e);
    ck_assert_int_eq(probe_cancels, 5);
    ck_assert(!h.failed && !h.finished);
    /* a new bundle starts clean */
    h_begin(&h, "b2");
    ck_assert(fnw_engine_has_space(h.e));
    fnw_engine_finish(h.e);
    ck_assert(h.finished);
    h_free(&h);
    ck_assert_int_eq(probe_closes, 1);
}
END_TEST

static void abort_after_three(harness *h, const fnw_record *out)
{
    if (h->n_out == 3)
        fnw_engine_abort(h->e);
}

START_TEST(test_abort_from_emit_callback)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.capacity = 10;
    static const char *const kv[] = { "delay_ms=5", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    h.on_emit = abort_after_three;
    h_begin(&h, "b1");
    h_feed(&h);
    h_run_until(&h, three_outputs, 5);
    h_run_for(&h, 0.03);   /* nothing more comes after the abort */
    ck_assert_uint_eq(h.n_out, 3);
    ck_assert(!h.failed && !h.finished);
    h.on_emit = NULL;
    h_run_ok(&h, 5);
    assert_in_order(&h, 10);
    h_free(&h);
}
END_TEST

static void free_on_finished(void *user)
{
    harness *h = user;
    h->finished = 1;
    fnw_engine_free(h->e);
    h->e = NULL;
    ev_break(h->loop, EVBREAK_ALL);
}

START_TEST(test_free_from_finished_callback)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "delay_ms=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    fnw_engine_sink sink = h_sink(&h);
    sink.finished = free_on_finished;
    fnw_engine_start(h.e, &sink, "b1");
    h_feed(&h);
    h_loop(&h, 5);
    ck_assert(h.finished);
    ck_assert_ptr_null(h.e);
    ck_assert_uint_eq(h.n_out, 10);
    h_free(&h);
}
END_TEST

static void free_after_two(harness *h, const fnw_record *out)
{
    if (h->n_out == 2) {
        fnw_engine_free(h->e);
        h->e = NULL;
        ev_break(h->loop, EVBREAK_ALL);
    }
}

START_TEST(test_free_from_emit_callback)
{
    /* unordered, delayed: the free happens inside an echo timer callback */
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.unordered = 1;
    s.timeout_ms = 500;
    static const char *const kv[] = { "delay_ms=3", "jitter_ms=3", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 50);
    h.on_emit = free_after_two;
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    h_loop(&h, 5);
    ck_assert_ptr_null(h.e);
    ck_assert_uint_eq(h.n_out, 2);
    h_run_for(&h, 0.05);   /* no timer of the engine or echo fires after */
    ck_assert_uint_eq(h.n_out, 2);
    h_free(&h);
}
END_TEST

static void restart_on_failed(void *user, const char *message)
{
    harness *h = user;
    h->failed++;
    snprintf(h->fail_msg, sizeof h->fail_msg, "%s", message);
    fnw_engine_abort(h->e);
    ev_break(h->loop, EVBREAK_ALL);
}

START_TEST(test_abort_from_failed_callback)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "fail_every=4", "delay_ms=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 10);
    fnw_engine_sink sink = h_sink(&h);
    sink.failed = restart_on_failed;
    fnw_engine_start(h.e, &sink, "b1");
    h_feed(&h);
    h_loop(&h, 5);
    ck_assert_int_eq(h.failed, 1);   /* reported once */
    h_run_for(&h, 0.03);
    ck_assert_int_eq(h.failed, 1);
    ck_assert(!h.finished);
    h_free(&h);
}
END_TEST

/* Even inputs fail their first attempt at once (and wait for a retry);
 * odd inputs stay with the operation until it is cancelled. */
static int split_invokes, split_cancels, split_closes;

static void split_invoke(void *state, fnw_call *call)
{
    split_invokes++;
    const fnw_record *in = fnw_call_input(call, 0);
    if (h_get_int(in->data) % 2 == 0 && fnw_call_attempt(call) == 1)
        fnw_call_fail(call, "split: even input");
}

static void split_cancel(void *state, fnw_call *call)
{
    split_cancels++;
}

static void split_close(void *state)
{
    split_closes++;
}

static const fnw_operation split_op = {
    .name = "split", .summary = "even inputs retry, odd ones hang", .sync = 0,
    .close = split_close, .invoke = split_invoke, .cancel = split_cancel,
};

START_TEST(test_free_with_calls_in_flight)
{
    /* free with ten calls waiting for a retry and ten with the operation:
     * the operation is told to cancel exactly the calls it has, is closed
     * once, and no retry or timeout timer fires after the engine is gone */
    harness h;
    h_init(&h);
    split_invokes = split_cancels = split_closes = 0;
    fnw_spec s = h_spec();
    s.timeout_ms = 40;
    s.retry.kind = FNW_RETRY_FIXED_DELAY;
    s.retry.max_attempts = 5;
    s.retry.delay_ms = 20;
    s.retry.on_error = 1;
    h_create_op(&h, &split_op, &s);
    h_inputs(&h, 20);
    h_begin(&h, "b1");
    h_feed(&h);
    ck_assert_uint_eq(h.next, 20);
    ck_assert_int_eq(split_invokes, 20);
    ck_assert_int_eq(h_m(&h)->calls, 20);
    fnw_engine_free(h.e);
    h.e = NULL;
    ck_assert_int_eq(split_cancels, 10);
    ck_assert_int_eq(split_closes, 1);
    h_run_for(&h, 0.1);    /* past every retry and timeout the calls had */
    ck_assert_int_eq(split_invokes, 20);
    ck_assert_int_eq(split_cancels, 10);
    ck_assert_uint_eq(h.n_out, 0);
    ck_assert(!h.finished && !h.failed);
    h_free(&h);
}
END_TEST

START_TEST(test_free_with_echo_calls_in_flight)
{
    /* the same through echo, whose own timers must stop with the calls:
     * every second invocation fails, so when the engine is freed input 0
     * has been emitted, the other even inputs have completed (held back by
     * the order of input 1), and the odd ones wait for a retry or are with
     * echo again */
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.timeout_ms = 1000;
    s.retry.kind = FNW_RETRY_FIXED_DELAY;
    s.retry.max_attempts = 5;
    s.retry.delay_ms = 5;
    s.retry.on_error = 1;
    static const char *const kv[] = { "delay_ms=30", "fail_every=2", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 20);
    h_begin(&h, "b1");
    h_feed(&h);
    h_run_for(&h, 0.04);   /* after the first attempts (30 ms), before any second one ends */
    ck_assert_uint_eq(h.n_out, 1);
    ck_assert_int_eq(h_m(&h)->calls, 20);
    fnw_engine_free(h.e);
    h.e = NULL;
    h_run_for(&h, 0.15);   /* past every echo delay and retry */
    ck_assert_uint_eq(h.n_out, 1);
    ck_assert(!h.finished && !h.failed);
    h_free(&h);
}
END_TEST

static Suite *engine_lifecycle_suite(void)
{
    Suite *s = suite_create("engine_lifecycle");
    TCase *tc = tcase_create("engine_lifecycle");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_drain_at_finish);
    tcase_add_test(tc, test_finish_empty_bundle);
    tcase_add_test(tc, test_operation_error_message);
    tcase_add_test(tc, test_sync_operation_must_complete);
    tcase_add_test(tc, test_abort_cancels_and_engine_is_reusable);
    tcase_add_test(tc, test_abort_from_emit_callback);
    tcase_add_test(tc, test_free_from_finished_callback);
    tcase_add_test(tc, test_free_from_emit_callback);
    tcase_add_test(tc, test_abort_from_failed_callback);
    tcase_add_test(tc, test_free_with_calls_in_flight);
    tcase_add_test(tc, test_free_with_echo_calls_in_flight);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(engine_lifecycle_suite());
}
