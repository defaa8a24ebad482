/* tests/unit/runtime/test_call.c — one call driven on its own through its callback
 * table (runtime/call.h), with a fake owner that records which callbacks
 * fired, in order, and a scripted operation. Covers: the first of result
 * and timeout wins and a timed-out call is cancelled and let go of at once
 * (each timeout action; a hung call holds nothing past its timeout),
 * retry after an error and after an empty result, the timeout covering
 * retries (an error back after the deadline is a timeout), cancel when
 * the owner gives up, and the direct path.
 *
 * Timers are real libev timers, but nothing asserts a wall-clock window:
 * the tests wait for events (with a 10 s guard) and check their order, and
 * durations only from below, so a loaded machine cannot make them fail. */
#include <check.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/buf.h"
#include "codecs/type.h"
#include "runtime/call.h"
#include "runtime/entry.h"
#include "tests/unit/check_run.h"

/* ---- a scripted operation ----------------------------------------------------------- */

typedef enum act {
    ACT_OK,          /* emit each input `repeat` times, complete */
    ACT_EMPTY,       /* complete with no output */
    ACT_FAIL,        /* emit each input once, then fail "boom <attempt>" */
    ACT_HOLD,        /* keep the call; the test ends it */
} act;

typedef struct hand {
    act script[8];             /* attempt k does script[min(k, n) - 1] */
    int nscript;
    int repeat;
    int invokes, cancels;
    int attempts[16];          /* fnw_call_attempt() of each invoke */
    fnw_call *held;
    int hook_fails;            /* on_timeout: fail instead of emitting */
    int emit_rc[16];           /* fnw_call_emit() results, in order */
    int n_emit_rc;
    int emit_after_end;        /* fnw_call_emit() after the call ended */
} hand;

static hand H;

static void hand_emit(fnw_call *c, size_t i)
{
    const fnw_record *in = fnw_call_input(c, i);
    int rc = fnw_call_emit(c, i, in->data, in->len);
    if (H.n_emit_rc < 16)
        H.emit_rc[H.n_emit_rc++] = rc;
}

static void hand_invoke(void *state, fnw_call *c)
{
    int attempt = fnw_call_attempt(c);
    if (H.invokes < 16)
        H.attempts[H.invokes] = attempt;
    H.invokes++;
    act a = H.script[(attempt < H.nscript ? attempt : H.nscript) - 1];
    size_t n = fnw_call_size(c);
    switch (a) {
    case ACT_OK:
        for (size_t i = 0; i < n; i++)
            for (int r = 0; r < (H.repeat ? H.repeat : 1); r++)
                hand_emit(c, i);
        fnw_call_complete(c);
        H.emit_after_end = fnw_call_emit(c, 0, NULL, 0);
        break;
    case ACT_EMPTY:
        fnw_call_complete(c);
        break;
    case ACT_FAIL:
        for (size_t i = 0; i < n; i++)
            hand_emit(c, i);
        fnw_call_fail(c, "boom %d", attempt);
        break;
    case ACT_HOLD:
        H.held = c;
        break;
    }
}

static void hand_cancel(void *state, fnw_call *c)
{
    H.cancels++;
    if (H.held == c)
        H.held = NULL;
}

static int hand_on_timeout(void *state, fnw_call *c, fnw_error *err)
{
    if (H.hook_fails)
        return fnw_error_set(err, "hook says no");
    for (size_t i = 0; i < fnw_call_size(c); i++)
        hand_emit(c, i);
    return 0;
}

static const fnw_operation hand_op = {
    .name = "hand", .invoke = hand_invoke, .on_timeout = hand_on_timeout, .cancel = hand_cancel,
};
static const fnw_operation hand_no_hook_op = {
    .name = "hand", .invoke = hand_invoke, .cancel = hand_cancel,
};

static void script(int n, act a0, act a1)
{
    memset(&H, 0, sizeof H);
    H.nscript = n;
    H.script[0] = a0;
    H.script[1] = a1;
}

/* ---- the fake owner ------------------------------------------------------------------ */

typedef struct fake {
    struct ev_loop *loop;
    fnw_type *type;
    fnw_buf scratch;
    fnw_entry_pool entries;
    fnw_entry *en[4];
    fnw_call_setup setup;
    fnw_call_pool pool;
    int depth;
    int outside;               /* callbacks after enter()'s that came outside enter/leave */
    int stopped, refuse_emit;
    char events[512];          /* "retry,done,drain" */
    size_t done_n;
    int64_t done_elapsed;
    uint32_t done_spans[4];
    char fail_msg[1024];
    fnw_record out[8];         /* data points into out_bytes */
    uint8_t out_bytes[8][4];
    size_t n_out;
} fake;

static fake F;

static void note(const char *ev)
{
    size_t len = strlen(F.events);
    snprintf(F.events + len, sizeof F.events - len, "%s%s", len ? "," : "", ev);
}

static void inside(void)
{
    if (F.depth <= 0)
        F.outside++;
}

static void f_enter(void *user)
{
    ck_assert_ptr_eq(user, &F);
    F.depth++;
}

static void f_leave(void *user)
{
    F.depth--;
    ck_assert_int_ge(F.depth, 0);
}

static int f_stopped(void *user)
{
    return F.stopped;
}

static void f_done(void *user, fnw_entry *const *in, size_t n, int64_t elapsed_us)
{
    inside();
    note("done");
    F.done_n = n;
    F.done_elapsed = elapsed_us / 1000;
    for (size_t i = 0; i < n && i < 4; i++)
        F.done_spans[i] = in[i]->nspans;
}

static void f_drain(void *user)
{
    inside();
    note("drain");
}

static int f_emit(void *user, const fnw_record *out)
{
    note("emit");
    if (F.refuse_emit)
        return -1;
    if (F.n_out < 8) {
        ck_assert_uint_le(out->len, 4);   /* bytes valid during the call only: copied */
        memcpy(F.out_bytes[F.n_out], out->data, out->len);
        F.out[F.n_out] = *out;
        F.out[F.n_out].data = F.out_bytes[F.n_out];
        F.n_out++;
    }
    return 0;
}

static void f_failed(void *user, const fnw_call *c, const char *what, const char *tail)
{
    char inputs[512] = "";
    if (c)
        fnw_call_describe_inputs(c, inputs, sizeof inputs);
    inside();
    note("failed");
    snprintf(F.fail_msg, sizeof F.fail_msg, "%s%s%s%s", what, c ? " on " : "", inputs, tail);
}

static void f_count(void *user, fnw_call_count what)
{
    inside();
    note(what == FNW_CALL_RETRIED ? "retry" : what == FNW_CALL_TIMED_OUT ? "timeout" : "failure");
}

static const fnw_call_callbacks fake_callbacks = {
    .enter = f_enter, .leave = f_leave, .stopped = f_stopped, .done = f_done,
    .drain = f_drain, .emit = f_emit, .failed = f_failed, .count = f_count,
};

/* A fake owner for op with n entries: INT values 0..n-1, timestamps
 * 1000+i (entry 2 has none), held by the (fake) queue. */
static void fake_init(const fnw_operation *op, int64_t timeout_ms, fnw_timeout_action on_timeout,
                      fnw_retry retry, size_t n)
{
    memset(&F, 0, sizeof F);
    F.loop = ev_loop_new(EVFLAG_AUTO);
    ck_assert_ptr_nonnull(F.loop);
    F.type = fnw_type_new(FNW_INT);
    fnw_buf_init(&F.scratch, 0);
    fnw_entry_pool_init(&F.entries);
    for (size_t i = 0; i < n; i++) {
        uint8_t b[4] = { 0, 0, 0, (uint8_t)i };
        fnw_record r = { i == 2 ? INT64_MIN : 1000 + (int64_t)i, INT64_MIN, b, 4 };
        F.en[i] = fnw_entry_pool_get(&F.entries);
        ck_assert_ptr_nonnull(F.en[i]);
        ck_assert_int_eq(fnw_entry_set_input(F.en[i], &r), 0);
        F.en[i]->index = i;
        F.en[i]->held_by_queue = 1;
    }
    fnw_call_setup s = {
        .cb = &fake_callbacks, .user = &F, .loop = F.loop, .op = op, .op_state = NULL,
        .input_type = F.type, .output_type = F.type, .scratch = &F.scratch,
        .entries = &F.entries, .timeout_ms = timeout_ms, .on_timeout = on_timeout, .retry = retry,
    };
    F.setup = s;
    fnw_call_pool_init(&F.pool, &F.setup, 4);
}

static void fake_free(void)
{
    fnw_call_pool_free(&F.pool);
    fnw_entry_pool_free(&F.entries);
    fnw_buf_free(&F.scratch);
    fnw_type_free(F.type);
    ev_loop_destroy(F.loop);
}

static fnw_call *start(size_t n)
{
    fnw_call *c = fnw_call_pool_get(&F.pool);
    ck_assert_ptr_nonnull(c);
    fnw_call_start(c, F.en, n);
    return c;
}

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    *(int *)w->data = 1;
}

/* Runs the loop until events contains ev (at most 10 s, which fails). */
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

/* Runs the loop for s seconds (to see that nothing more happens). */
static void idle_for(double s)
{
    int fired = 0;
    ev_timer t;
    ev_timer_init(&t, guard_cb, s, 0.);
    t.data = &fired;
    ev_timer_start(F.loop, &t);
    while (!fired)
        ev_run(F.loop, EVRUN_ONCE);
}

static fnw_retry no_retry(void)
{
    fnw_retry r;
    memset(&r, 0, sizeof r);
    return r;
}

static fnw_retry fixed(int32_t max_attempts, int64_t delay_ms, int on_error, int on_empty)
{
    fnw_retry r = no_retry();
    r.kind = FNW_RETRY_FIXED_DELAY;
    r.max_attempts = max_attempts;
    r.delay_ms = delay_ms;
    r.on_error = on_error;
    r.on_empty = on_empty;
    return r;
}

/* ---- first of result and timeout wins ---------------------------------------------- */

START_TEST(test_result_before_timeout)
{
    script(1, ACT_OK, ACT_OK);
    fake_init(&hand_op, 20, FNW_TIMEOUT_FAIL, no_retry(), 1);
    start(1);
    ck_assert_str_eq(F.events, "done,drain");
    ck_assert_uint_eq(F.done_spans[0], 1);
    ck_assert_int_eq(H.emit_after_end, -1);          /* settled: emits refused */
    ck_assert(!fnw_call_pool_busy(&F.pool));
    ck_assert_int_eq(F.en[0]->held_by_call, 0);
    idle_for(0.06);                                  /* the timeout was stopped */
    ck_assert_str_eq(F.events, "done,drain");
    ck_assert_int_eq(F.outside, 0);
    fake_free();
}
END_TEST

/* A held call times out with `action`; returns after the owner heard. */
static void time_out_held(const fnw_operation *op, fnw_timeout_action action, size_t n, const char *last)
{
    script(1, ACT_HOLD, ACT_HOLD);
    fake_init(op, 20, action, no_retry(), n);
    start(n);
    ck_assert_ptr_nonnull(H.held);
    ck_assert_str_eq(F.events, "");
    wait_for(last);
    ck_assert_int_eq(F.outside, 0);
}

/* After its timeout the call was cancelled (the operation let go of it) and
 * released: nothing of it stays with the operation or the pool. */
static void given_up(void)
{
    char before[512];
    snprintf(before, sizeof before, "%s", F.events);
    ck_assert_int_eq(H.cancels, 1);
    ck_assert_ptr_null(H.held);
    ck_assert(!fnw_call_pool_busy(&F.pool));
    ck_assert_int_eq(F.en[0]->held_by_call, 0);
    idle_for(0.05);
    ck_assert_str_eq(F.events, before);               /* nothing more */
}

START_TEST(test_timeout_gives_up_empty)
{
    time_out_held(&hand_op, FNW_TIMEOUT_EMPTY, 1, "drain");
    ck_assert_str_eq(F.events, "timeout,done,drain");
    ck_assert_uint_eq(F.done_n, 1);
    ck_assert_uint_eq(F.done_spans[0], 0);
    ck_assert_int_ge(F.done_elapsed, 20);
    given_up();
    fake_free();

    time_out_held(&hand_op, FNW_TIMEOUT_EMPTY, 1, "drain");
    given_up();
    fake_free();
}
END_TEST

START_TEST(test_timeout_gives_up_fail)
{
    time_out_held(&hand_op, FNW_TIMEOUT_FAIL, 3, "drain");
    ck_assert_str_eq(F.events, "timeout,failed,drain");
    ck_assert_str_eq(F.fail_msg, "operation 'hand' timed out after 20 ms on inputs 0..2 "
                                 "(timestamps 1000, 1001, none)");
    given_up();
    fake_free();
}
END_TEST

START_TEST(test_timeout_gives_up_operation)
{
    /* the hook supplies the result */
    time_out_held(&hand_op, FNW_TIMEOUT_OPERATION, 1, "drain");
    ck_assert_str_eq(F.events, "timeout,done,drain");
    ck_assert_uint_eq(F.done_spans[0], 1);
    given_up();
    fake_free();

    /* the hook fails */
    script(1, ACT_HOLD, ACT_HOLD);
    H.hook_fails = 1;
    fake_init(&hand_op, 20, FNW_TIMEOUT_OPERATION, no_retry(), 1);
    start(1);
    wait_for("drain");
    ck_assert_str_eq(F.events, "timeout,failed,drain");
    ck_assert_str_eq(F.fail_msg, "the timeout handler of operation 'hand' failed on input 0 "
                                 "(timestamp 1000): hook says no");
    given_up();
    fake_free();

    /* no hook */
    time_out_held(&hand_no_hook_op, FNW_TIMEOUT_OPERATION, 1, "drain");
    ck_assert_str_eq(F.events, "timeout,failed,drain");
    ck_assert_str_eq(F.fail_msg, "operation 'hand' timed out after 20 ms on input 0 (timestamp 1000): "
                                 "on_timeout is TIMEOUT_OPERATION but the operation has no timeout handler");
    given_up();
    fake_free();
}
END_TEST

/* ---- retries ---------------------------------------------------------------------------- */

START_TEST(test_retry_after_error)
{
    script(2, ACT_FAIL, ACT_OK);
    fake_init(&hand_op, 10000, FNW_TIMEOUT_FAIL, fixed(3, 5, 1, 0), 1);
    start(1);
    ck_assert_str_eq(F.events, "");                  /* waiting for the retry timer */
    ck_assert_int_eq(H.invokes, 1);
    wait_for("drain");
    ck_assert_str_eq(F.events, "retry,done,drain");
    ck_assert_int_eq(H.attempts[0], 1);
    ck_assert_int_eq(H.attempts[1], 2);
    ck_assert_uint_eq(F.done_spans[0], 1);           /* the failed attempt's output is gone */
    ck_assert_int_ge(F.done_elapsed, 5);             /* the backoff was waited */
    ck_assert(!fnw_call_pool_busy(&F.pool));
    ck_assert_int_eq(F.outside, 0);
    fake_free();

    /* max_attempts 2: three invocations, then the failure is final */
    script(1, ACT_FAIL, ACT_FAIL);
    fake_init(&hand_op, 10000, FNW_TIMEOUT_FAIL, fixed(2, 1, 1, 0), 1);
    start(1);
    wait_for("failed");
    ck_assert_str_eq(F.events, "retry,retry,failure,failed,drain");
    ck_assert_int_eq(H.invokes, 3);
    ck_assert_str_eq(F.fail_msg, "operation 'hand' failed on input 0 (timestamp 1000): boom 3");
    ck_assert(!fnw_call_pool_busy(&F.pool));
    ck_assert_int_eq(F.outside, 0);
    fake_free();
}
END_TEST

START_TEST(test_retry_after_empty_result)
{
    script(2, ACT_EMPTY, ACT_OK);
    fake_init(&hand_op, 10000, FNW_TIMEOUT_FAIL, fixed(3, 1, 0, 1), 1);
    start(1);
    ck_assert_str_eq(F.events, "");
    wait_for("drain");
    ck_assert_str_eq(F.events, "retry,done,drain");
    ck_assert_uint_eq(F.done_spans[0], 1);
    fake_free();

    /* still empty after the last retry: an empty result, not a failure */
    script(1, ACT_EMPTY, ACT_EMPTY);
    fake_init(&hand_op, 10000, FNW_TIMEOUT_FAIL, fixed(1, 1, 0, 1), 1);
    start(1);
    wait_for("drain");
    ck_assert_str_eq(F.events, "retry,done,drain");
    ck_assert_uint_eq(F.done_spans[0], 0);
    fake_free();

    /* retry on empty only: an error is final at once */
    script(1, ACT_FAIL, ACT_FAIL);
    fake_init(&hand_op, 10000, FNW_TIMEOUT_FAIL, fixed(3, 1, 0, 1), 1);
    start(1);
    ck_assert_str_eq(F.events, "failure,failed,drain");
    ck_assert_int_eq(H.invokes, 1);
    ck_assert_int_eq(F.outside, 0);
    fake_free();
}
END_TEST

START_TEST(test_timeout_covers_retries)
{
    /* the call waits 10 s for its retry; the 20 ms timeout ends it first,
     * and as the operation does not have it, it is released at once */
    script(1, ACT_FAIL, ACT_FAIL);
    fake_init(&hand_op, 20, FNW_TIMEOUT_EMPTY, fixed(5, 10000, 1, 0), 1);
    start(1);
    ck_assert_str_eq(F.events, "");
    wait_for("drain");
    ck_assert_str_eq(F.events, "timeout,done,drain");
    ck_assert_uint_eq(F.done_spans[0], 0);           /* attempt 1's output is gone */
    ck_assert_int_eq(H.invokes, 1);
    ck_assert_int_eq(H.cancels, 0);
    ck_assert(!fnw_call_pool_busy(&F.pool));
    ck_assert_int_eq(F.en[0]->held_by_call, 0);
    fake_free();
}
END_TEST

START_TEST(test_error_after_the_deadline_is_a_timeout)
{
    /* the operation fails the call after its deadline, before the timeout
     * timer ran (both due in one loop iteration): with retries left, the
     * timeout came first, so the timeout action decides, not the error */
    script(1, ACT_HOLD, ACT_HOLD);
    fake_init(&hand_op, 20, FNW_TIMEOUT_EMPTY, fixed(5, 1, 1, 0), 1);
    start(1);
    ev_sleep(0.03);
    ev_now_update(F.loop);
    fnw_call *c = H.held;
    H.held = NULL;
    fnw_call_fail(c, "refused");
    ck_assert_str_eq(F.events, "timeout,done,drain");
    ck_assert_uint_eq(F.done_spans[0], 0);
    ck_assert_int_eq(H.invokes, 1);
    ck_assert_int_eq(H.cancels, 0);                   /* the operation had handed it back */
    ck_assert(!fnw_call_pool_busy(&F.pool));
    ck_assert_int_eq(F.en[0]->held_by_call, 0);
    idle_for(0.05);
    ck_assert_str_eq(F.events, "timeout,done,drain");
    fake_free();

    /* without retries the error is the result, whenever it comes */
    script(1, ACT_HOLD, ACT_HOLD);
    fake_init(&hand_op, 20, FNW_TIMEOUT_EMPTY, no_retry(), 1);
    start(1);
    ev_sleep(0.03);
    ev_now_update(F.loop);
    fnw_call_fail(H.held, "refused");
    ck_assert_str_eq(F.events, "failure,failed,drain");
    ck_assert(!fnw_call_pool_busy(&F.pool));
    fake_free();
}
END_TEST

/* ---- the owner gives up ------------------------------------------------------------------ */

START_TEST(test_cancel_on_give_up)
{
    /* one call with the operation, one waiting for its retry */
    script(1, ACT_HOLD, ACT_HOLD);
    fake_init(&hand_op, 10000, FNW_TIMEOUT_FAIL, fixed(3, 1, 1, 0), 2);
    fnw_call *held = fnw_call_pool_get(&F.pool);
    fnw_call_start(held, &F.en[0], 1);
    H.script[0] = ACT_FAIL;
    fnw_call *backoff = fnw_call_pool_get(&F.pool);
    fnw_call_start(backoff, &F.en[1], 1);
    ck_assert_ptr_eq(H.held, held);
    ck_assert_int_eq(H.invokes, 2);
    fnw_call_pool_stop_all(&F.pool);
    ck_assert_int_eq(H.cancels, 1);                   /* only the one the operation has */
    ck_assert_ptr_null(H.held);
    ck_assert_str_eq(F.events, "");                   /* no callbacks */
    ck_assert(!fnw_call_pool_busy(&F.pool));
    ck_assert_int_eq(F.en[0]->held_by_call, 0);
    ck_assert_int_eq(F.en[1]->held_by_call, 0);
    idle_for(0.05);                                   /* the retry timer was stopped */
    ck_assert_int_eq(H.invokes, 2);
    ck_assert_str_eq(F.events, "");
    fake_free();

    /* a timed-out call the operation still has is cancelled too */
    time_out_held(&hand_op, FNW_TIMEOUT_FAIL, 1, "drain");
    fnw_call_pool_stop_all(&F.pool);
    ck_assert_int_eq(H.cancels, 1);
    ck_assert(!fnw_call_pool_busy(&F.pool));
    fake_free();

    /* the owner stopped: a call that comes back is released, unheard */
    script(1, ACT_HOLD, ACT_HOLD);
    fake_init(&hand_op, 10000, FNW_TIMEOUT_FAIL, no_retry(), 1);
    start(1);
    F.stopped = 1;
    fnw_call_complete(H.held);
    ck_assert_str_eq(F.events, "");
    ck_assert(!fnw_call_pool_busy(&F.pool));
    ck_assert_int_eq(H.cancels, 0);
    fake_free();
}
END_TEST

/* ---- the direct path ---------------------------------------------------------------------- */

static int64_t run_direct(fnw_call *c)
{
    uint8_t b[4] = { 0, 0, 0, 42 };
    fnw_record in = { 5, 6, b, 4 };
    F.events[0] = '\0';
    F.n_out = 0;
    return fnw_call_run_direct(c, &in, 7);
}

START_TEST(test_direct_path)
{
    script(1, ACT_OK, ACT_OK);
    H.repeat = 2;
    fake_init(&hand_op, 0, FNW_TIMEOUT_FAIL, no_retry(), 0);
    fnw_call *c = fnw_call_new_direct(&F.setup);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(run_direct(c), 2);
    ck_assert_str_eq(F.events, "emit,emit");           /* straight to the owner */
    ck_assert_uint_eq(F.n_out, 2);
    ck_assert_int_eq(F.out[0].timestamp, 5);
    ck_assert_int_eq(F.out[0].watermark, 6);
    ck_assert_uint_eq(F.out[0].len, 4);
    ck_assert_int_eq(F.out[1].data[3], 42);
    ck_assert_int_eq(H.emit_after_end, -1);
    ck_assert_int_eq(run_direct(c), 2);                /* the call is reused */

    script(1, ACT_EMPTY, ACT_EMPTY);
    ck_assert_int_eq(run_direct(c), 0);
    ck_assert_str_eq(F.events, "");

    script(1, ACT_FAIL, ACT_FAIL);
    ck_assert_int_eq(run_direct(c), 1);
    ck_assert_str_eq(F.events, "emit,failure,failed");
    ck_assert_str_eq(F.fail_msg, "operation 'hand' failed on input 7 (timestamp 5): boom 1");

    /* the owner refuses the output */
    script(1, ACT_OK, ACT_OK);
    F.refuse_emit = 1;
    ck_assert_int_eq(run_direct(c), 0);
    ck_assert_int_eq(H.emit_rc[0], -1);
    F.refuse_emit = 0;

    /* returning without settling fails, and a late completion is ignored */
    script(1, ACT_HOLD, ACT_HOLD);
    ck_assert_int_eq(run_direct(c), -1);
    ck_assert_str_eq(F.events, "failed");
    ck_assert_str_eq(F.fail_msg, "operation 'hand' is synchronous but returned without completing its call "
                                 "on input 7 (timestamp 5)");
    fnw_call_complete(H.held);
    fnw_call_fail(H.held, "late");
    ck_assert_str_eq(F.events, "failed");
    fnw_call_free(c);
    fake_free();
}
END_TEST

static Suite *call_suite(void)
{
    Suite *s = suite_create("call");
    TCase *tc = tcase_create("call");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_result_before_timeout);
    tcase_add_test(tc, test_timeout_gives_up_empty);
    tcase_add_test(tc, test_timeout_gives_up_fail);
    tcase_add_test(tc, test_timeout_gives_up_operation);
    tcase_add_test(tc, test_retry_after_error);
    tcase_add_test(tc, test_retry_after_empty_result);
    tcase_add_test(tc, test_timeout_covers_retries);
    tcase_add_test(tc, test_error_after_the_deadline_is_a_timeout);
    tcase_add_test(tc, test_cancel_on_give_up);
    tcase_add_test(tc, test_direct_path);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(call_suite());
}
