/* ops/builtin_echo.c — the `echo` operation: outputs equal inputs, with
 * knobs that make it behave like a slow, flaky or broken remote service, so
 * the engine (and whole jobs) can be tested and benchmarked without one.
 *
 * Options (all optional):
 *   delay_ms           complete each attempt after this delay (a loop timer;
 *                      0 with no jitter and no per-item delay = at once)
 *   jitter_ms, seed    add a uniform 0..jitter_ms random delay per attempt,
 *                      reproducible from seed (a PRNG in the instance)
 *   delay_per_item_us  add items x this to the delay (batch benchmarks)
 *   repeat             emit each input k times (k >= 0; default 1)
 *   fail_every         every Nth invocation (attempt) of this instance fails
 *   fail_message       the message of injected failures
 *   fail_attempts      attempts 1..K of every call fail
 *   empty_attempts     attempts 1..K of every call (that did not fail)
 *                      complete with an empty result
 *   hang               true: calls never complete
 *   short_result       only inputs 0..N-1 of a call get results
 *   timeout_result     input | empty: what the timeout handler returns
 * Timers come from a per-instance free list, so steady state allocates
 * nothing.
 */
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnworker.h"

typedef struct echo_state echo_state;

typedef struct echo_timer {
    ev_timer w;
    echo_state *st;
    fnw_call *call;
    int fail; /* decided at invoke (fail_every) */
    struct echo_timer *next_free;
    struct echo_timer *next_all;
} echo_timer;

struct echo_state {
    struct ev_loop *loop;
    int64_t delay_ms, jitter_ms, delay_per_item_us;
    int64_t repeat, fail_every, fail_attempts, empty_attempts, short_result;
    int hang;
    int timeout_empty;
    char fail_message[512];
    uint64_t rng;
    uint64_t invocations;
    echo_timer *free_timers;
    echo_timer *all_timers;
};

static const char *const echo_known[] = {
    "delay_ms",   "jitter_ms",    "seed",           "repeat",
    "fail_every", "fail_message", "fail_attempts",  "empty_attempts",
    "hang",       "short_result", "timeout_result", "delay_per_item_us",
    NULL,
};

#define DAY_MS 86400000LL

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int echo_parse(echo_state *st, const fnw_options *o, fnw_error *err)
{
    static const char *const results[] = { "input", "empty", NULL };
    int64_t seed;
    if (fnw_options_int(o, "delay_ms", 0, 0, DAY_MS, &st->delay_ms, err) ||
        fnw_options_int(o, "jitter_ms", 0, 0, DAY_MS, &st->jitter_ms, err) ||
        fnw_options_int(o, "seed", 1, INT64_MIN, INT64_MAX, &seed, err) ||
        fnw_options_int(o, "delay_per_item_us", 0, 0, DAY_MS * 1000, &st->delay_per_item_us, err) ||
        fnw_options_int(o, "repeat", 1, 0, 1000000, &st->repeat, err) ||
        fnw_options_int(o, "fail_every", 0, 0, INT64_MAX, &st->fail_every, err) ||
        fnw_options_int(o, "fail_attempts", 0, 0, INT32_MAX, &st->fail_attempts, err) ||
        fnw_options_int(o, "empty_attempts", 0, 0, INT32_MAX, &st->empty_attempts, err) ||
        fnw_options_int(o, "short_result", -1, -1, INT32_MAX, &st->short_result, err) ||
        fnw_options_bool(o, "hang", 0, &st->hang, err) ||
        fnw_options_choice(o, "timeout_result", results, 0, &st->timeout_empty, err))
        return -1;
    const char *msg = fnw_options_get(o, "fail_message");
    snprintf(st->fail_message, sizeof st->fail_message, "%s", msg ? msg : "echo: injected failure");
    uint64_t x = (uint64_t)seed;
    st->rng = splitmix64(&x);
    return 0;
}

/* Fails unless the output type equals the input type, naming both. */
static int check_same_type(const fnw_op_env *env, fnw_error *err)
{
    const fnw_type *in = env->input_type, *out = env->output_type;
    if (in == out || (in && out && fnw_type_equal(in, out)))
        return 0;
    char a[384] = "(none)", b[384] = "(none)";
    if (in)
        fnw_type_format(in, a, sizeof a);
    if (out)
        fnw_type_format(out, b, sizeof b);
    return fnw_error_set(err,
                         "operation 'echo' needs the output type to equal the input type: input %s, "
                         "output %s",
                         a, b);
}

static int echo_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    *state = NULL;
    if (fnw_options_check_known(env->options, echo_known, "echo", err) != 0)
        return -1;
    if (check_same_type(env, err) != 0)
        return -1;
    echo_state *st = calloc(1, sizeof *st);
    if (!st)
        return fnw_error_set(err, "operation 'echo': out of memory");
    st->loop = env->loop;
    fnw_error why;
    if (echo_parse(st, env->options, &why) != 0) {
        free(st);
        return fnw_error_set(err, "operation 'echo': %s", why.msg);
    }
    *state = st;
    return 0;
}

static void echo_close(void *state)
{
    echo_state *st = state;
    if (!st)
        return;
    while (st->all_timers) {
        echo_timer *t = st->all_timers;
        st->all_timers = t->next_all;
        ev_timer_stop(st->loop, &t->w);
        free(t);
    }
    free(st);
}

/* The outcome of one attempt. */
static void echo_settle(echo_state *st, fnw_call *call, int fail)
{
    int attempt = fnw_call_attempt(call);
    if (fail || attempt <= st->fail_attempts) {
        fnw_call_fail(call, "%s", st->fail_message);
        return;
    }
    if (attempt > st->empty_attempts) {
        size_t n = fnw_call_size(call);
        if (st->short_result >= 0 && (size_t)st->short_result < n)
            n = (size_t)st->short_result;
        for (size_t i = 0; i < n; i++) {
            const fnw_record *in = fnw_call_input(call, i);
            for (int64_t r = 0; r < st->repeat; r++)
                fnw_call_emit(call, i, in->data, in->len);
        }
    }
    fnw_call_complete(call);
}

static void timer_release(echo_state *st, echo_timer *t)
{
    t->call = NULL;
    t->next_free = st->free_timers;
    st->free_timers = t;
}

static void echo_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    echo_timer *t = w->data;
    echo_state *st = t->st;
    fnw_call *call = t->call;
    int fail = t->fail;
    fnw_call_set_op_data(call, NULL);
    timer_release(st, t);
    echo_settle(st, call, fail); /* last: the call is the engine's after this */
}

static echo_timer *timer_get(echo_state *st)
{
    echo_timer *t = st->free_timers;
    if (t) {
        st->free_timers = t->next_free;
        return t;
    }
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->st = st;
    ev_timer_init(&t->w, echo_timer_cb, 0., 0.);
    t->w.data = t;
    t->next_all = st->all_timers;
    st->all_timers = t;
    return t;
}

static double attempt_delay_s(echo_state *st, size_t items)
{
    int64_t us = st->delay_ms * 1000 + (int64_t)items * st->delay_per_item_us;
    if (st->jitter_ms > 0)
        us += (int64_t)(splitmix64(&st->rng) % (uint64_t)(st->jitter_ms * 1000 + 1));
    return (double)us / 1e6;
}

static void echo_invoke(void *state, fnw_call *call)
{
    echo_state *st = state;
    st->invocations++;
    if (st->hang)
        return;
    int fail = st->fail_every > 0 && st->invocations % (uint64_t)st->fail_every == 0;
    double delay = attempt_delay_s(st, fnw_call_size(call));
    if (delay <= 0) {
        echo_settle(st, call, fail);
        return;
    }
    echo_timer *t = timer_get(st);
    if (!t) {
        fnw_call_fail(call, "echo: out of memory for a timer");
        return;
    }
    t->call = call;
    t->fail = fail;
    fnw_call_set_op_data(call, t);
    ev_timer_set(&t->w, delay, 0.);
    ev_timer_start(st->loop, &t->w);
}

static void echo_cancel(void *state, fnw_call *call)
{
    echo_state *st = state;
    echo_timer *t = fnw_call_op_data(call);
    if (!t)
        return;
    ev_timer_stop(st->loop, &t->w);
    fnw_call_set_op_data(call, NULL);
    timer_release(st, t);
}

static int echo_on_timeout(void *state, fnw_call *call, fnw_error *err)
{
    echo_state *st = state;
    if (st->timeout_empty)
        return 0;
    size_t n = fnw_call_size(call);
    for (size_t i = 0; i < n; i++) {
        const fnw_record *in = fnw_call_input(call, i);
        fnw_call_emit(call, i, in->data, in->len);
    }
    return 0;
}

const fnw_operation fnw_op_echo = {
    .name = "echo",
    .summary = "emits its inputs, optionally late, repeated, short or failing (for tests)",
    .output_rule = FNW_OUTPUT_SAME_AS_INPUT,
    .sync = 0,
    .open = echo_open,
    .close = echo_close,
    .invoke = echo_invoke,
    .on_timeout = echo_on_timeout,
    .cancel = echo_cancel,
};
