/* tests/unit/runtime/test_blocking.c — blocking operations (fnworker.h,
 * invoke_blocking) through a real engine and the blocking pool: results in
 * input order whatever order the threads finish in; a timeout applies while
 * a thread still works and its late result is dropped; a retry runs on a
 * thread again; freeing the engine with calls on threads waits for them
 * before the operation is closed; the pool's size and the spec's capacity
 * bound how many calls run at once. The fake operation `blk` blocks on a
 * condition variable the test controls (never on the clock): input v runs
 * once the test released v (or opened the gate), then emits v + 100. */
#include <check.h>
#include <ev.h>
#include <pthread.h>
#include <time.h>

#include "runtime/blocking_pool.h"
#include "tests/unit/check_run.h"
#include "tests/unit/test_engine_harness.h"

#define MAXV 64

static struct ctl {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int gate_open;
    int released[MAXV];
    int fail_first_attempt[MAXV];
    int attempts[MAXV];
    int finished_v[MAXV];
    int running, max_running, started, finished;
    int closes, running_at_close, unfinished_at_close;
} ctl = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}, {0}, {0}, {0}, 0, 0, 0, 0, 0, 0, 0 };

static int blk_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    *state = &ctl;
    return 0;
}

static void blk_close(void *state)
{
    pthread_mutex_lock(&ctl.mu);
    ctl.closes++;
    ctl.running_at_close = ctl.running;
    ctl.unfinished_at_close = ctl.started - ctl.finished;
    pthread_mutex_unlock(&ctl.mu);
}

static int blk_invoke(void *state, fnw_blocking_call *bc)
{
    fnw_value v;
    fnw_error err;
    if (fnw_blocking_decode(bc, 0, &v, &err) != 0)
        return fnw_blocking_fail(bc, "blk: %s", err.msg);
    int i = (int)v.u.i;
    ck_assert(i >= 0 && i < MAXV);
    pthread_mutex_lock(&ctl.mu);
    ctl.running++;
    ctl.started++;
    ctl.attempts[i]++;
    if (ctl.running > ctl.max_running)
        ctl.max_running = ctl.running;
    pthread_cond_broadcast(&ctl.cond);
    while (!ctl.gate_open && !ctl.released[i])
        pthread_cond_wait(&ctl.cond, &ctl.mu);
    int fail = ctl.fail_first_attempt[i] && fnw_blocking_attempt(bc) == 1;
    pthread_mutex_unlock(&ctl.mu);
    int rc = 0;
    if (fail) {
        rc = fnw_blocking_fail(bc, "blk: input %d fails its first attempt", i);
    } else {
        fnw_value out = fnw_value_int(FNW_INT, i + 100);
        if (fnw_blocking_emit_value(bc, 0, &out, &err) != 0)
            rc = fnw_blocking_fail(bc, "blk: %s", err.msg);
    }
    pthread_mutex_lock(&ctl.mu);
    ctl.running--;
    ctl.finished++;
    ctl.finished_v[i]++;
    pthread_cond_broadcast(&ctl.cond);
    pthread_mutex_unlock(&ctl.mu);
    return rc;
}

static const fnw_operation blk_op = {
    .name = "blk",
    .summary = "blocks until the test releases it (test operation)",
    .output_rule = FNW_OUTPUT_SAME_AS_INPUT,
    .open = blk_open,
    .close = blk_close,
    .invoke_blocking = blk_invoke,
};

/* A fresh control block (tests may share a process: CK_FORK=no). */
static void ctl_reset(void)
{
    pthread_mutex_lock(&ctl.mu);
    ctl.gate_open = 0;
    memset(ctl.released, 0, sizeof ctl.released);
    memset(ctl.fail_first_attempt, 0, sizeof ctl.fail_first_attempt);
    memset(ctl.attempts, 0, sizeof ctl.attempts);
    memset(ctl.finished_v, 0, sizeof ctl.finished_v);
    ctl.running = ctl.max_running = ctl.started = ctl.finished = 0;
    ctl.closes = ctl.running_at_close = ctl.unfinished_at_close = 0;
    pthread_mutex_unlock(&ctl.mu);
}

static void b_init(harness *h, size_t threads)
{
    ctl_reset();
    fnw_blocking_pool_configure(threads);
    h_init(h);
    ck_assert_msg(fnw_registry_add(&h->reg, &blk_op, &h->err) == 0, "%s", h->err.msg);
}

static void b_free(harness *h)
{
    h_free(h);
    fnw_blocking_pool_shared_free();
}

/* Waits (on the condition variable, not the clock) until what() holds; a
 * guard of 20 s fails the test instead of hanging. */
static void ctl_wait(int (*what)(void *), void *arg, const char *desc)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&ctl.mu);
    int rc = 0;
    while (!what(arg) && rc == 0)
        rc = pthread_cond_timedwait(&ctl.cond, &ctl.mu, &until);
    int ok = what(arg);
    pthread_mutex_unlock(&ctl.mu);
    ck_assert_msg(ok, "waited 20 s for %s", desc);
}

static int running_is(void *n)
{
    return ctl.running == *(int *)n;
}

static int finished_v(void *v)
{
    return ctl.finished_v[*(int *)v] > 0;
}

static int finished_is(void *n)
{
    return ctl.finished == *(int *)n;
}

static void release(int v)
{
    pthread_mutex_lock(&ctl.mu);
    ctl.released[v] = 1;
    pthread_cond_broadcast(&ctl.cond);
    pthread_mutex_unlock(&ctl.mu);
}

static void open_gate(void)
{
    pthread_mutex_lock(&ctl.mu);
    ctl.gate_open = 1;
    pthread_cond_broadcast(&ctl.cond);
    pthread_mutex_unlock(&ctl.mu);
}

static void check_outputs(const harness *h, size_t n)
{
    ck_assert_uint_eq(h->n_out, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(h->outs[i].v, (int32_t)i + 100);
        ck_assert_int_eq(h->outs[i].ts, 1000 + (int64_t)i);
    }
}

START_TEST(test_ordered_results_whatever_the_finish_order)
{
    harness h;
    b_init(&h, 4);
    fnw_spec s = h_spec();
    h_create(&h, "blk", &s, NULL);
    h_inputs(&h, 4);
    h_begin(&h, "b1");
    h_feed(&h);
    int four = 4;
    ctl_wait(running_is, &four, "4 calls on threads");
    for (int v = 3; v >= 0; v--) {      /* the last input finishes first */
        release(v);
        ctl_wait(finished_v, &v, "the released call to finish");
    }
    h_loop(&h, 20);
    ck_assert(h.finished && !h.failed);
    check_outputs(&h, 4);
    ck_assert_int_eq(h_m(&h)->calls, 4);
    b_free(&h);
}
END_TEST

START_TEST(test_timeout_while_a_thread_works)
{
    harness h;
    b_init(&h, 4);
    fnw_spec s = h_spec();
    s.timeout_ms = 30;
    s.on_timeout = FNW_TIMEOUT_EMPTY;
    h_create(&h, "blk", &s, NULL);
    h_inputs(&h, 1);
    h_run_ok(&h, 20);                   /* ends by the timeout: the thread still blocks */
    ck_assert_uint_eq(h.n_out, 0);
    ck_assert_int_eq(h_m(&h)->timeouts, 1);
    ck_assert_int_eq(h_m(&h)->empty_results, 1);
    pthread_mutex_lock(&ctl.mu);
    ck_assert_int_eq(ctl.running, 1);
    pthread_mutex_unlock(&ctl.mu);
    open_gate();
    int one = 1;
    ctl_wait(finished_is, &one, "the timed-out call to finish");
    /* The late result comes back before the next bundle's and is dropped. */
    h_inputs(&h, 5);
    h_run_ok(&h, 20);
    check_outputs(&h, 5);
    ck_assert_int_eq(h_m(&h)->timeouts, 0);
    b_free(&h);
}
END_TEST

START_TEST(test_retry_runs_on_a_thread_again)
{
    harness h;
    b_init(&h, 2);
    ctl.fail_first_attempt[2] = 1;
    ctl.gate_open = 1;
    fnw_spec s = h_spec();
    s.timeout_ms = 10000;
    s.retry.kind = FNW_RETRY_FIXED_DELAY;
    s.retry.max_attempts = 3;
    s.retry.delay_ms = 1;
    s.retry.on_error = 1;
    h_create(&h, "blk", &s, NULL);
    h_inputs(&h, 5);
    h_run_ok(&h, 20);
    check_outputs(&h, 5);
    ck_assert_int_eq(h_m(&h)->retries, 1);
    ck_assert_int_eq(ctl.attempts[2], 2);
    ck_assert_int_eq(ctl.attempts[1], 1);
    b_free(&h);
}
END_TEST

START_TEST(test_failure_message_reaches_the_bundle)
{
    harness h;
    b_init(&h, 2);
    ctl.fail_first_attempt[1] = 1;
    ctl.gate_open = 1;
    fnw_spec s = h_spec();
    h_create(&h, "blk", &s, NULL);
    h_inputs(&h, 3);
    h_run(&h, 20);
    ck_assert(h.failed);
    ck_assert_msg(strstr(h.fail_msg, "operation 'blk' failed") &&
                  strstr(h.fail_msg, "input 1 fails its first attempt"), "%s", h.fail_msg);
    b_free(&h);
}
END_TEST

static void *release_when_freeing(void *arg)
{
    open_gate();
    return NULL;
}

START_TEST(test_free_with_calls_on_threads_waits_for_them)
{
    harness h;
    b_init(&h, 2);
    fnw_spec s = h_spec();
    h_create(&h, "blk", &s, NULL);
    h.auto_finish = 0;
    h_inputs(&h, 5);
    h_begin(&h, "b1");
    h_feed(&h);
    int two = 2;
    ctl_wait(running_is, &two, "2 calls on threads");
    ck_assert_uint_eq(fnw_blocking_pool_queued(fnw_blocking_pool_shared()), 3);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, release_when_freeing, NULL), 0);
    fnw_engine_free(h.e);               /* waits for the calls on threads, never interrupts them */
    h.e = NULL;
    pthread_join(t, NULL);
    ck_assert_int_eq(ctl.closes, 1);
    ck_assert_int_eq(ctl.running_at_close, 0);
    ck_assert_int_eq(ctl.unfinished_at_close, 0);
    ck_assert_int_ge(ctl.started, 2);
    b_free(&h);
}
END_TEST

START_TEST(test_pool_size_bounds_concurrency)
{
    harness h;
    b_init(&h, 2);
    fnw_spec s = h_spec();
    s.capacity = 6;
    h_create(&h, "blk", &s, NULL);
    h_inputs(&h, 6);
    h_begin(&h, "b1");
    h_feed(&h);
    int two = 2;
    ctl_wait(running_is, &two, "2 calls on threads");
    /* both threads are held: the other four wait in the pool's queue */
    ck_assert_uint_eq(fnw_blocking_pool_queued(fnw_blocking_pool_shared()), 4);
    open_gate();
    h_loop(&h, 20);
    ck_assert(h.finished && !h.failed);
    check_outputs(&h, 6);
    ck_assert_int_eq(ctl.max_running, 2);
    b_free(&h);
}
END_TEST

START_TEST(test_capacity_bounds_calls_on_threads)
{
    harness h;
    b_init(&h, 4);
    fnw_spec s = h_spec();
    s.capacity = 2;
    s.timeout_ms = 20;
    s.on_timeout = FNW_TIMEOUT_EMPTY;
    h_create(&h, "blk", &s, NULL);
    h_inputs(&h, 4);
    h_run_ok(&h, 20);                   /* every call times out: the engine admits all four */
    ck_assert_int_eq(h_m(&h)->timeouts, 4);
    int two = 2;
    ctl_wait(running_is, &two, "2 calls on threads");
    pthread_mutex_lock(&ctl.mu);
    ck_assert_int_eq(ctl.started, 2);   /* the other two wait for the operation's room, not a thread */
    pthread_mutex_unlock(&ctl.mu);
    ck_assert_uint_eq(fnw_blocking_pool_queued(fnw_blocking_pool_shared()), 0);
    open_gate();
    fnw_engine_free(h.e);
    h.e = NULL;
    ck_assert_int_le(ctl.max_running, 2);
    b_free(&h);
}
END_TEST

static void nop_invoke(void *state, fnw_call *call)
{
}

START_TEST(test_registry_checks_blocking_tables)
{
    fnw_registry r;
    fnw_error err;
    fnw_registry_init(&r);
    ck_assert_msg(fnw_registry_add(&r, &blk_op, &err) == 0, "%s", err.msg);   /* no cancel needed */
    fnw_operation both = blk_op;
    both.name = "both";
    both.invoke = nop_invoke;
    ck_assert_int_eq(fnw_registry_add(&r, &both, &err), -1);
    ck_assert_msg(strstr(err.msg, "both invoke and invoke_blocking"), "%s", err.msg);
    fnw_operation sync = blk_op;
    sync.name = "sync";
    sync.sync = 1;
    ck_assert_int_eq(fnw_registry_add(&r, &sync, &err), -1);
    ck_assert_msg(strstr(err.msg, "blocking and cannot be synchronous"), "%s", err.msg);
    ck_assert_uint_eq(r.count, 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("blocking");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_registry_checks_blocking_tables);
    tcase_add_test(tc, test_ordered_results_whatever_the_finish_order);
    tcase_add_test(tc, test_timeout_while_a_thread_works);
    tcase_add_test(tc, test_retry_runs_on_a_thread_again);
    tcase_add_test(tc, test_failure_message_reaches_the_bundle);
    tcase_add_test(tc, test_free_with_calls_on_threads_waits_for_them);
    tcase_add_test(tc, test_pool_size_bounds_concurrency);
    tcase_add_test(tc, test_capacity_bounds_calls_on_threads);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
