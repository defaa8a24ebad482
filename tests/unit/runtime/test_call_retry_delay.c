/* tests/unit/runtime/test_call_retry_delay.c — fnw_call_fail_after (fnworker.h): a
 * failure that asks the retry to wait at least some time (a server's
 * Retry-After) and a failure that must not be retried. One call is driven
 * through its callback table with a minimal fake owner and an operation that
 * fails its first attempt; durations are checked from below only, so a
 * loaded machine cannot make the tests fail. */
#include <check.h>
#include <ev.h>
#include <stdio.h>
#include <string.h>

#include "codecs/buf.h"
#include "codecs/type.h"
#include "runtime/call.h"
#include "runtime/entry.h"
#include "tests/unit/check_run.h"

static struct {
    int64_t delay_ms;          /* what attempt 1 passes to fnw_call_fail_after */
    int invokes;
} OP;

static void op_invoke(void *state, fnw_call *c)
{
    OP.invokes++;
    if (fnw_call_attempt(c) == 1) {
        fnw_call_fail_after(c, OP.delay_ms, "busy (attempt %d)", fnw_call_attempt(c));
        return;
    }
    const fnw_record *in = fnw_call_input(c, 0);
    fnw_call_emit(c, 0, in->data, in->len);
    fnw_call_complete(c);
}

static void op_cancel(void *state, fnw_call *c) {}

static const fnw_operation op = { .name = "later", .invoke = op_invoke, .cancel = op_cancel };

static struct {
    struct ev_loop *loop;
    fnw_type *type;
    fnw_buf scratch;
    fnw_entry_pool entries;
    fnw_entry *en;
    fnw_call_setup setup;
    fnw_call_pool pool;
    char events[256];
    int64_t elapsed;
    char fail_msg[512];
} F;

static void note(const char *ev)
{
    size_t len = strlen(F.events);
    snprintf(F.events + len, sizeof F.events - len, "%s%s", len ? "," : "", ev);
}

static void f_nop(void *user) {}
static int f_stopped(void *user) { return 0; }
static int f_emit(void *user, const fnw_record *out) { return -1; }

static void f_done(void *user, fnw_entry *const *in, size_t n, int64_t elapsed_us)
{
    note("done");
    F.elapsed = elapsed_us / 1000;
}

static void f_failed(void *user, const fnw_call *c, const char *what, const char *tail)
{
    note("failed");
    snprintf(F.fail_msg, sizeof F.fail_msg, "%s%s", what, tail);
}

static void f_count(void *user, fnw_call_count what)
{
    note(what == FNW_CALL_RETRIED ? "retry" : what == FNW_CALL_TIMED_OUT ? "timeout" : "failure");
}

static const fnw_call_callbacks cbs = {
    .enter = f_nop, .leave = f_nop, .stopped = f_stopped, .done = f_done, .drain = f_nop,
    .emit = f_emit, .failed = f_failed, .count = f_count,
};

/* Starts one call of op with a fixed-delay retry strategy (3 attempts,
 * backoff_ms, on error) and the given call timeout. */
static void start(int64_t delay_ms, int64_t backoff_ms, int64_t timeout_ms)
{
    memset(&F, 0, sizeof F);
    memset(&OP, 0, sizeof OP);
    OP.delay_ms = delay_ms;
    F.loop = ev_loop_new(EVFLAG_AUTO);
    F.type = fnw_type_new(FNW_INT);
    fnw_buf_init(&F.scratch, 0);
    fnw_entry_pool_init(&F.entries);
    uint8_t b[4] = { 0, 0, 0, 7 };
    fnw_record r = { 1000, INT64_MIN, b, 4 };
    F.en = fnw_entry_pool_get(&F.entries);
    ck_assert_int_eq(fnw_entry_set_input(F.en, &r), 0);
    F.en->held_by_queue = 1;
    fnw_retry retry = { .kind = FNW_RETRY_FIXED_DELAY, .max_attempts = 3, .delay_ms = backoff_ms,
                        .on_error = 1 };
    fnw_call_setup s = {
        .cb = &cbs, .user = &F, .loop = F.loop, .op = &op, .input_type = F.type,
        .output_type = F.type, .scratch = &F.scratch, .entries = &F.entries,
        .timeout_ms = timeout_ms, .on_timeout = FNW_TIMEOUT_FAIL, .retry = retry,
    };
    F.setup = s;
    fnw_call_pool_init(&F.pool, &F.setup, 1);
    fnw_call *c = fnw_call_pool_get(&F.pool);
    ck_assert_ptr_nonnull(c);
    fnw_call_start(c, &F.en, 1);
}

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    *(int *)w->data = 1;
}

static void wait_for(const char *ev)
{
    int fired = 0;
    ev_timer guard;
    ev_timer_init(&guard, guard_cb, 10., 0.);
    guard.data = &fired;
    ev_timer_start(F.loop, &guard);
    while (!strstr(F.events, ev) && !fired)
        ev_run(F.loop, EVRUN_ONCE);
    ev_timer_stop(F.loop, &guard);
    ck_assert_msg(!fired, "no '%s' within 10 s; events: %s", ev, F.events);
}

static void finish(void)
{
    fnw_call_pool_free(&F.pool);
    fnw_entry_pool_free(&F.entries);
    fnw_buf_free(&F.scratch);
    fnw_type_free(F.type);
    ev_loop_destroy(F.loop);
}

START_TEST(test_delay_longer_than_backoff)
{
    start(150, 1, 10000);
    ck_assert_str_eq(F.events, "");              /* waiting, not failed */
    wait_for("done");
    ck_assert_str_eq(F.events, "retry,done");
    ck_assert_int_eq(OP.invokes, 2);
    ck_assert_int_ge(F.elapsed, 150);            /* the asked delay, not the 1 ms backoff */
    finish();
}
END_TEST

START_TEST(test_backoff_longer_than_delay)
{
    start(0, 120, 10000);
    wait_for("done");
    ck_assert_str_eq(F.events, "retry,done");
    ck_assert_int_ge(F.elapsed, 120);            /* the strategy's backoff still applies */
    finish();
}
END_TEST

START_TEST(test_no_retry_is_final)
{
    start(FNW_CALL_NO_RETRY, 1, 10000);
    ck_assert_str_eq(F.events, "failure,failed");
    ck_assert_int_eq(OP.invokes, 1);
    ck_assert_str_eq(F.fail_msg, "operation 'later' failed: busy (attempt 1)");
    finish();
}
END_TEST

START_TEST(test_delay_past_timeout_times_out)
{
    /* the delay would start attempt 2 after the 50 ms timeout: the timeout wins */
    start(5000, 1, 50);
    wait_for("failed");
    ck_assert_str_eq(F.events, "timeout,failed");
    ck_assert_int_eq(OP.invokes, 1);
    ck_assert_msg(strstr(F.fail_msg, "timed out after 50 ms"), "%s", F.fail_msg);
    finish();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("call_retry_delay");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_delay_longer_than_backoff);
    tcase_add_test(tc, test_backoff_longer_than_delay);
    tcase_add_test(tc, test_no_retry_is_final);
    tcase_add_test(tc, test_delay_past_timeout_times_out);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
