/* runtime/engine.c — runs one operation instance with PyFlink's async
 * semantics on the libev loop (engine.h): admission under capacity (with an
 * overflow list), the ordered/unordered queue, batching, the end-of-bundle
 * barrier, failure messages and metrics, and what protects the service
 * (docs/resilience.md): the adaptive concurrency limit and Retry-After
 * pause (limiter.c), the circuit breaker (breaker.c) and on_failure's
 * result. Each call (its attempts, retries
 * and timeout) is call.c's; the engine starts calls and hears back through
 * the callback table it gives them (call_callbacks below).
 *
 * Reentrancy: sink callbacks and operation callbacks may call back into the
 * engine (push into it, abort it, free it). Every public function counts
 * a depth; work that frees structures (cleanup after a failure or abort,
 * fnw_engine_free) and the sink's ready/failed/finished callbacks happen
 * only when the outermost public function unwinds (leave()), so no frame
 * below ever sees freed memory.
 */
#include <ev.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/batch_tuner.h"
#include "runtime/batcher.h"
#include "runtime/blocking_op.h"
#include "runtime/breaker.h"
#include "runtime/call.h"
#include "runtime/engine.h"
#include "runtime/entry.h"
#include "runtime/limiter.h"
#include "runtime/queue.h"

#include "codecs/arena.h"
#include "codecs/ser.h"
#include "codecs/type.h"

enum bundle_state { B_IDLE, B_ACTIVE, B_FINISHING, B_FAILED, B_ABORTED };

struct fnw_engine {
    struct ev_loop *loop;
    const fnw_operation *op;
    void *op_state;
    int op_open;
    fnw_blocking_op *blocking; /* a blocking operation's wrapper, else NULL */
    fnw_spec spec;
    fnw_op_env env;
    char *transform_id;
    int direct_mode; /* sync op, per element, no retry: no copy, no queue */
    int passthrough; /* direct mode, and the op emits its input: no call */
    size_t call_cap; /* inputs per call */

    fnw_engine_sink sink;
    char label[128];
    int bstate;
    uint64_t next_index;
    fnw_engine_metrics m;

    fnw_queue queue;
    fnw_batcher batcher;
    int has_batcher;
    fnw_batch_tuner tuner; /* target_latency_ms > 0: the adaptive batch size */
    int has_tuner;
    size_t call_slots;              /* with the tuner: calls out at once, capacity / batch_size */
    fnw_entry *ovf_head, *ovf_tail; /* pushed without space, not yet admitted */
    size_t ovf_n;
    fnw_entry_pool entries;
    fnw_call_setup call_setup; /* what every call of this engine shares */
    fnw_call_pool calls;       /* queued calls */
    fnw_counter_set counters;  /* the operation's own (fnw_op_counter) */
    fnw_call *direct;          /* direct mode's one call */
    fnw_buf scratch;

    fnw_limiter limiter; /* adaptive concurrency, Retry-After */
    ev_timer pause_w;    /* the end of a Retry-After pause */
    fnw_breaker breaker;
    int has_breaker;
    fnw_buf fallback; /* on_failure DEFAULT: the output's bytes */
    int fallback_null;
    /* A ROW fallback's null fields that the input ROW has (same name and
     * type) take the input's value: carry[i] = the input field, or -1. */
    int32_t *carry;
    fnw_value fallback_value; /* decoded, in fb_arena */
    fnw_arena fb_arena, carry_arena;
    fnw_buf carry_buf;

    int depth;
    int draining, drain_again;
    int cleanup_pending, free_pending, fail_pending;
    int blocked; /* has_space was false at the last unwind */
    fnw_error fail_msg;

    int timing_out; /* a call's timeout action runs: its done() is not a success */
};

static void engine_free(fnw_engine *e);
static void cleanup(fnw_engine *e);
static void drain(fnw_engine *e);
static void metrics_gauges_init(fnw_engine *e);

/* ---- small helpers ---------------------------------------------------------- */

static int stopped(const fnw_engine *e)
{
    return e->cleanup_pending || e->free_pending || (e->bstate != B_ACTIVE && e->bstate != B_FINISHING);
}

static void dist_add(fnw_dist *d, int64_t v)
{
    if (d->count == 0 || v < d->min)
        d->min = v;
    if (d->count == 0 || v > d->max)
        d->max = v;
    d->count++;
    d->sum += v;
}

static void enter(fnw_engine *e)
{
    e->depth++;
}

/* Runs one sink callback with the depth raised, so what it does to the
 * engine is deferred to the loop in leave(). */
#define SINK_CALL0(e, fn) \
    do { \
        if ((e)->sink.fn) { \
            (e)->depth++; \
            (e)->sink.fn((e)->sink.user); \
            (e)->depth--; \
        } \
    } while (0)
#define SINK_CALL1(e, fn, arg) \
    do { \
        if ((e)->sink.fn) { \
            (e)->depth++; \
            (e)->sink.fn((e)->sink.user, (arg)); \
            (e)->depth--; \
        } \
    } while (0)
/* settled, like emit, goes to emit_user (engine.h). */
#define SINK_SETTLED(e, rec) \
    do { \
        if ((e)->sink.settled) { \
            fnw_record settled_rec_ = { (rec)->timestamp, (rec)->watermark, NULL, 0 }; \
            (e)->depth++; \
            (e)->sink.settled((e)->sink.emit_user, &settled_rec_); \
            (e)->depth--; \
        } \
    } while (0)
/* emit goes to its own user (engine.h: emit_user). */
#define SINK_EMIT(e, out) \
    do { \
        if ((e)->sink.emit) { \
            (e)->depth++; \
            (e)->sink.emit((e)->sink.emit_user, (out)); \
            (e)->depth--; \
        } \
    } while (0)

static void leave(fnw_engine *e)
{
    if (--e->depth > 0)
        return;
    for (;;) {
        if (e->free_pending) {
            engine_free(e);
            return;
        }
        if (e->cleanup_pending) {
            e->depth++;
            cleanup(e);
            e->depth--;
            continue;
        }
        if (e->fail_pending) {
            e->fail_pending = 0;
            SINK_CALL1(e, failed, e->fail_msg.msg);
            continue;
        }
        if (!stopped(e) && e->calls.wait_head) {
            e->depth++;
            size_t moved = fnw_call_pool_resume(&e->calls);
            e->depth--;
            if (moved)
                continue;
        }
        if (e->bstate == B_FINISHING && fnw_queue_pending(&e->queue) == 0 && e->ovf_n == 0) {
            e->bstate = B_IDLE;
            SINK_CALL0(e, finished);
            continue;
        }
        if (e->bstate == B_ACTIVE) {
            if (!fnw_engine_has_space(e)) {
                e->blocked = 1;
            } else if (e->blocked) {
                e->blocked = 0;
                SINK_CALL0(e, ready);
                continue;
            }
        }
        break;
    }
}

/* ---- messages ------------------------------------------------------------------ */

/* "transform 'T' of bundle 'B'" */
static void describe_where(const fnw_engine *e, char *buf, size_t n)
{
    if (e->label[0])
        snprintf(buf, n, "transform '%s' of bundle '%s'", e->transform_id, e->label);
    else
        snprintf(buf, n, "transform '%s'", e->transform_id);
}

/* Marks the bundle failed; cleanup and sink.failed follow in leave(). */
static void fail_bundle(fnw_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_bundle(fnw_engine *e, const char *fmt, ...)
{
    if (e->bstate != B_ACTIVE && e->bstate != B_FINISHING)
        return;
    e->bstate = B_FAILED;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->fail_msg.msg, sizeof e->fail_msg.msg, fmt, ap);
    va_end(ap);
    e->fail_pending = 1;
    e->cleanup_pending = 1;
}

/* ---- the adaptive batch size (batch_tuner.h) -------------------------------------- */

static double now_us(const fnw_engine *e)
{
    return ev_now(e->loop) * 1e6;
}

static size_t calls_out(const fnw_engine *e)
{
    return fnw_call_pool_active(&e->calls);
}

/* The batcher's gate: with a latency target, a due batch waits for a free
 * call slot (and keeps filling meanwhile), as a fixed batch size's calls
 * are bounded by capacity / batch_size; smaller batches must not mean more
 * calls at once, or the service's queue would eat the target. */
static int slot_free(void *user)
{
    const fnw_engine *e = user;
    return calls_out(e) < e->call_slots;
}

/* The tuner's choice goes to the batcher (for the next batch) and the gauge. */
static void tune_apply(fnw_engine *e)
{
    fnw_batcher_tune(&e->batcher, fnw_batch_tuner_size(&e->tuner), fnw_batch_tuner_delay_us(&e->tuner) / 1e6);
    e->m.batch_target = (int64_t)fnw_batch_tuner_size(&e->tuner);
}

/* ---- calls: starting them, and what they report (call.h) ------------------------- */

static void start_call(fnw_engine *e, fnw_entry *const *ens, size_t n)
{
    fnw_call *c = fnw_call_pool_get(&e->calls);
    if (!c) {
        fail_bundle(e, "out of memory starting a call of operation '%s' in transform '%s'", e->op->name,
                    e->transform_id);
        return;
    }
    e->m.calls++;
    if (e->spec.batched)
        e->m.batches++;
    dist_add(&e->m.batch_size, (int64_t)n);
    e->m.inflight_calls = (int64_t)fnw_call_pool_active(&e->calls);
    fnw_call_start(c, ens, n);
}

static void run_direct(fnw_engine *e, const fnw_record *in)
{
    e->m.calls++;
    dist_add(&e->m.batch_size, 1);
    if (e->m.inflight_high_water < 1)
        e->m.inflight_high_water = 1;
    int64_t emitted = fnw_call_run_direct(e->direct, in, e->next_index++);
    if (emitted < 0)
        return; /* the operation did not settle the call: failed already */
    if (emitted == 0)
        e->m.empty_results++;
    dist_add(&e->m.call_duration_ms, 0);
    if (!stopped(e))
        SINK_SETTLED(e, in);
}

static void on_call_enter(void *user)
{
    enter(user);
}

static void on_call_leave(void *user)
{
    leave(user);
}

static int on_call_stopped(void *user)
{
    return stopped(user);
}

/* The call's entries have their final outputs: complete them in the queue. */
static void on_call_done(void *user, fnw_entry *const *in, size_t n, int64_t elapsed_us)
{
    fnw_engine *e = user;
    if (e->has_tuner) {
        fnw_batch_tuner_done(&e->tuner, n, elapsed_us, now_us(e));
        tune_apply(e);
    }
    dist_add(&e->m.call_duration_ms, (elapsed_us + 500) / 1000);
    fnw_hist_add(&e->m.call_latency_us, elapsed_us);
    e->m.call_latency_sum_us += elapsed_us > 0 ? elapsed_us : 0;
    if (!e->timing_out)
        e->m.successes++; /* a timed-out call settled by its timeout action is a timeout */
    for (size_t i = 0; i < n; i++) {
        if (in[i]->nspans == 0)
            e->m.empty_results++;
        fnw_queue_complete(&e->queue, &in[i]->q);
    }
}

static void on_call_drain(void *user)
{
    fnw_engine *e = user;
    e->m.inflight_calls = (int64_t)fnw_call_pool_active(&e->calls); /* a call was released */
    e->timing_out = 0;
    drain(e);
}

/* Direct mode: the output goes to the sink at once. */
static int on_call_emit(void *user, const fnw_record *out)
{
    fnw_engine *e = user;
    if (stopped(e))
        return -1;
    e->m.records_out++;
    SINK_EMIT(e, out);
    return 0;
}

/* The fallback row with the input's values in the fields carry[] names;
 * NULL (use the plain fallback) when the input does not decode. Only on
 * the failure path; the arena is reused, nothing is allocated per input
 * after the first. */
static const uint8_t *fallback_with_input(fnw_engine *e, const fnw_record *rec, size_t *len)
{
    fnw_arena_reset(&e->carry_arena);
    fnw_value in, row = e->fallback_value;
    fnw_error err;
    size_t used = 0;
    if (!rec->data ||
        fnw_ser_decode(e->env.input_type, rec->data, rec->len, &e->carry_arena, &in, &used, &err) != 0 ||
        in.is_null)
        return NULL;
    fnw_value *items = fnw_arena_alloc(&e->carry_arena, sizeof *items * row.count);
    if (!items)
        return NULL;
    for (uint32_t i = 0; i < row.count; i++)
        items[i] = e->carry[i] >= 0 ? in.u.items[e->carry[i]] : row.u.items[i];
    row.u.items = items;
    fnw_buf_clear(&e->carry_buf);
    if (fnw_ser_encode(e->env.output_type, &row, &e->carry_buf, &err) != 0)
        return NULL;
    *len = e->carry_buf.len;
    return e->carry_buf.p;
}

/* on_failure DEFAULT or EMPTY: the call's inputs end with the fallback
 * value or nothing, instead of failing the bundle. */
static void take_fallback(fnw_engine *e, const fnw_call *c)
{
    int with_value = e->spec.on_failure == FNW_FAILURE_DEFAULT;
    const uint8_t *data = e->fallback_null ? NULL : (e->fallback.len ? e->fallback.p : (const uint8_t *)"");
    if (fnw_call_is_direct(c)) {
        const fnw_record *in = fnw_call_input(c, 0);
        e->m.fallbacks++;
        if (with_value) {
            fnw_record out = { in->timestamp, in->watermark, data, (uint32_t)e->fallback.len };
            e->m.records_out++;
            SINK_EMIT(e, &out);
        }
        return;
    }
    size_t n;
    fnw_entry *const *in = fnw_call_entries(c, &n);
    for (size_t i = 0; i < n; i++) {
        fnw_entry_clear_outputs(in[i]);
        if (with_value) {
            size_t len = e->fallback.len;
            const uint8_t *out = e->carry ? fallback_with_input(e, &in[i]->rec, &len) : NULL;
            if (!out) {
                out = data;
                len = e->fallback.len;
            }
            if (fnw_entry_add_output(in[i], out, len) != 0) {
                fail_bundle(e, "out of memory storing the fallback value in transform '%s'", e->transform_id);
                return;
            }
        } else {
            e->m.empty_results++;
        }
        fnw_queue_complete(&e->queue, &in[i]->q);
    }
    e->m.fallbacks += (int64_t)n;
}

static void on_call_failed(void *user, const fnw_call *c, const char *what, const char *tail)
{
    fnw_engine *e = user;
    if (c && e->spec.on_failure != FNW_FAILURE_FAIL && !stopped(e)) {
        take_fallback(e, c);
        return;
    }
    if (!c) {
        fail_bundle(e, "%s in transform '%s'%s", what, e->transform_id, tail);
        return;
    }
    char inputs[512], where[384];
    fnw_call_describe_inputs(c, inputs, sizeof inputs);
    describe_where(e, where, sizeof where);
    fail_bundle(e, "%s on %s in %s%s", what, inputs, where, tail);
}

static void on_call_count(void *user, fnw_call_count what)
{
    fnw_engine *e = user;
    if (what == FNW_CALL_RETRIED) {
        e->m.retries++;
    } else if (what == FNW_CALL_TIMED_OUT) {
        e->m.timeouts++;
        e->timing_out = 1; /* the timeout action follows, then drain (call.c: time_out) */
    } else
        e->m.failures++;
}

/* ---- the limiter and the breaker (docs/resilience.md) ------------------------------ */

static void engine_log(fnw_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void engine_log(fnw_engine *e, const char *fmt, ...)
{
    if (!e->sink.log)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    e->depth++;
    e->sink.log(e->sink.log_user ? e->sink.log_user : e->sink.user, line);
    e->depth--;
}

static const char *failure_action_name(fnw_failure_action a)
{
    return a == FNW_FAILURE_DEFAULT ? "DEFAULT (the fallback value)"
           : a == FNW_FAILURE_EMPTY ? "EMPTY (no result)"
                                    : "FAIL (the bundle fails)";
}

/* Logs and counts a change of the breaker's state (once per change). */
static void breaker_changed(fnw_engine *e)
{
    const fnw_breaker *b = &e->breaker;
    e->m.breaker_state = b->state;
    switch (b->state) {
    case FNW_BREAKER_OPEN:
        e->m.breaker_opened++;
        engine_log(e,
                   "circuit breaker of operation '%s' in transform '%s' opened: %s; for %" PRId64
                   " ms no call goes to the service and inputs take on_failure %s, then one probe call",
                   e->op->name, e->transform_id, b->why, b->spec.cooldown_ms,
                   failure_action_name(e->spec.on_failure));
        break;
    case FNW_BREAKER_HALF_OPEN:
        engine_log(e,
                   "circuit breaker of operation '%s' in transform '%s' is half-open: one probe call goes to the service",
                   e->op->name, e->transform_id);
        break;
    case FNW_BREAKER_CLOSED:
        engine_log(e, "circuit breaker of operation '%s' in transform '%s' closed: the probe call succeeded",
                   e->op->name, e->transform_id);
        break;
    }
}

static void breaker_record(fnw_engine *e, int ok, int probe, double now)
{
    if (e->has_breaker && fnw_breaker_record(&e->breaker, ok, probe, now))
        breaker_changed(e);
}

static fnw_call_gate breaker_reject(fnw_engine *e, const fnw_call *c, double now, char *why, size_t n)
{
    const fnw_breaker *b = &e->breaker;
    e->m.breaker_rejected += (int64_t)fnw_call_size(c);
    if (b->state == FNW_BREAKER_OPEN)
        snprintf(why, n, "its circuit breaker is open (%s); the next probe is in %.0f ms", b->why,
                 (b->open_until - now) * 1000.);
    else
        snprintf(why, n, "its circuit breaker is half-open and its probe call is still out");
    return FNW_GATE_REJECT;
}

static void pause_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    fnw_engine *e = w->data;
    if (fnw_limiter_pause_left(&e->limiter, ev_now(loop)) == 0)
        e->limiter.paused_until = 0; /* back on the gate's fast path */
    enter(e);
    leave(e); /* resumes the calls that waited */
}

/* Before each attempt: the breaker, then the limit and the pause. */
static fnw_call_gate on_call_gate(void *user, const fnw_call *c, char *why, size_t n)
{
    fnw_engine *e = user;
    if (!e->has_breaker && e->limiter.paused_until == 0) { /* the per-call path: the limit alone */
        if (e->calls.running >= fnw_limiter_limit(&e->limiter))
            return FNW_GATE_WAIT;
        return FNW_GATE_GO;
    }
    double now = ev_now(e->loop);
    fnw_breaker *b = &e->breaker;
    if (e->has_breaker && ((b->state == FNW_BREAKER_OPEN && now < b->open_until) ||
                           (b->state == FNW_BREAKER_HALF_OPEN && b->probe_out)))
        return breaker_reject(e, c, now, why, n);
    if (!fnw_limiter_allows(&e->limiter, e->calls.running, now))
        return FNW_GATE_WAIT;
    fnw_call_gate verdict = FNW_GATE_GO;
    if (e->has_breaker) {
        int changed = 0;
        fnw_breaker_verdict v = fnw_breaker_admit(b, now, &changed);
        if (changed)
            breaker_changed(e);
        if (v == FNW_BREAKER_REJECT)
            return breaker_reject(e, c, now, why, n);
        if (v == FNW_BREAKER_PROBE)
            verdict = FNW_GATE_PROBE;
    }
    return verdict;
}

static void on_overloaded(fnw_engine *e, double started, double now, int64_t retry_after_ms)
{
    e->m.overloaded++;
    if (retry_after_ms <= 0) {
        fnw_limiter_on_overload(&e->limiter, started, now);
        return;
    }
    /* A rate limit: the pause is the back-off; the limit goes no lower
     * than what the service accepted since the last cut (limiter.h). */
    fnw_limiter_on_paused_overload(&e->limiter, started, now);
    int was_paused = fnw_limiter_pause_left(&e->limiter, now) > 0;
    fnw_limiter_pause(&e->limiter, (double)retry_after_ms / 1000., started, now);
    ev_timer_stop(e->loop, &e->pause_w);
    ev_timer_set(&e->pause_w, fnw_limiter_pause_left(&e->limiter, now), 0.);
    ev_timer_start(e->loop, &e->pause_w);
    if (!was_paused)
        engine_log(e,
                   "operation '%s' in transform '%s': the service refused a call for load and asked for a "
                   "pause of %" PRId64
                   " ms (Retry-After); no call starts until it ends; concurrency limit now %d",
                   e->op->name, e->transform_id, retry_after_ms, (int)fnw_limiter_limit(&e->limiter));
}

static void on_call_attempt_end(void *user, fnw_call_outcome how, double started, int probe,
                                int64_t retry_after_ms)
{
    fnw_engine *e = user;
    if (how == FNW_ATTEMPT_OK && !e->has_breaker) {
        fnw_limiter_on_success(&e->limiter);
        if (e->limiter.on)
            e->m.concurrency_limit = fnw_limiter_limit(&e->limiter);
        /* back at the maximum, no pause, none waiting: calls skip the gate again */
        if (e->limiter.limit >= e->limiter.max && e->limiter.paused_until == 0 && !e->calls.wait_head)
            e->calls.gated = 0;
        return;
    }
    if (how == FNW_ATTEMPT_OVERLOADED || how == FNW_ATTEMPT_TIMED_OUT)
        e->calls.gated = 1; /* the limit may go down: every call through the gate */
    double now = ev_now(e->loop);
    switch (how) {
    case FNW_ATTEMPT_OK:
        fnw_limiter_on_success(&e->limiter);
        breaker_record(e, 1, probe, now);
        break;
    case FNW_ATTEMPT_FAILED:
        breaker_record(e, 0, probe, now);
        break;
    case FNW_ATTEMPT_TIMED_OUT:
        fnw_limiter_on_overload(&e->limiter, started, now);
        breaker_record(e, 0, probe, now);
        break;
    case FNW_ATTEMPT_OVERLOADED:
        on_overloaded(e, started, now, retry_after_ms);
        if (probe && e->has_breaker)
            fnw_breaker_probe_lost(&e->breaker);
        break;
    case FNW_ATTEMPT_GIVEN_UP:
        if (probe && e->has_breaker)
            fnw_breaker_probe_lost(&e->breaker);
        break;
    }
    if (e->limiter.on)
        e->m.concurrency_limit = fnw_limiter_limit(&e->limiter);
}

static const fnw_call_callbacks call_callbacks = {
    .enter = on_call_enter,
    .leave = on_call_leave,
    .stopped = on_call_stopped,
    .done = on_call_done,
    .drain = on_call_drain,
    .emit = on_call_emit,
    .failed = on_call_failed,
    .count = on_call_count,
    .gate = on_call_gate,
    .attempt_end = on_call_attempt_end,
};

/* Everything calls need from the engine, fixed once the operation is open. */
static void call_setup_init(fnw_engine *e)
{
    fnw_call_setup *cs = &e->call_setup;
    cs->cb = &call_callbacks;
    cs->user = e;
    cs->loop = e->loop;
    cs->op = e->blocking ? fnw_blocking_op_table(e->blocking) : e->op;
    cs->op_state = e->blocking ? (void *)e->blocking : e->op_state;
    cs->input_type = e->env.input_type;
    cs->output_type = e->env.output_type;
    cs->scratch = &e->scratch;
    cs->entries = &e->entries;
    cs->timeout_ms = e->spec.timeout_ms;
    cs->on_timeout = e->spec.on_timeout;
    cs->retry = e->spec.retry;
    cs->requeue_overloaded = e->limiter.on;
}

/* Which null fields of a ROW fallback take the input's field of the same
 * name and type (docs/resilience.md); none: e->carry stays NULL. */
static int carry_init(fnw_engine *e, fnw_error *err)
{
    const fnw_type *out = e->env.output_type, *in = e->env.input_type;
    if (e->fallback_null || !out || !in || out->kind != FNW_ROW || in->kind != FNW_ROW)
        return 0;
    size_t used = 0;
    if (fnw_ser_decode(out, e->fallback.p, e->fallback.len, &e->fb_arena, &e->fallback_value, &used, err) != 0)
        return fnw_error_prefix(err, "fallback_json of operation '%s'", e->op->name);
    int32_t *carry = calloc(out->nchildren ? out->nchildren : 1, sizeof *carry);
    if (!carry)
        return fnw_error_set(err, "out of memory reading the fallback value of operation '%s'", e->op->name);
    int any = 0;
    for (uint32_t i = 0; i < out->nchildren; i++) {
        carry[i] = -1;
        if (!e->fallback_value.u.items[i].is_null)
            continue;
        for (uint32_t j = 0; j < in->nchildren; j++)
            if (strcmp(out->names[i], in->names[j]) == 0 && fnw_type_equal(out->children[i], in->children[j])) {
                carry[i] = (int32_t)j;
                any = 1;
                break;
            }
    }
    if (!any) {
        free(carry);
        return 0;
    }
    e->carry = carry;
    return 0;
}

/* The limiter, the breaker and the fallback value (from fallback_json, the
 * caller's string, read only here), from the spec. */
static int resilience_init(fnw_engine *e, const char *fallback_json, fnw_error *err)
{
    const fnw_spec *s = &e->spec;
    fnw_limiter_init(&e->limiter, !s->concurrency.adaptive_off && !e->direct_mode, s->concurrency.min,
                     s->capacity);
    ev_timer_init(&e->pause_w, pause_cb, 0., 0.);
    e->pause_w.data = e;
    if (fnw_spec_breaker_on(&s->breaker)) {
        if (fnw_breaker_init(&e->breaker, &s->breaker, err) != 0)
            return -1;
        e->has_breaker = 1;
    }
    if (s->on_failure != FNW_FAILURE_DEFAULT)
        return 0;
    if (!s->fallback_encode)
        return fnw_error_set(err,
                             "on_failure DEFAULT needs a JSON reader for fallback_json, and none was given "
                             "to the engine");
    const char *json = fallback_json && *fallback_json ? fallback_json : "null";
    if (s->fallback_encode(e->env.output_type, json, &e->fallback, &e->fallback_null, err) != 0)
        return fnw_error_prefix(err, "fallback_json of operation '%s' (on_failure DEFAULT)", e->op->name);
    return carry_init(e, err);
}

/* ---- admission, emission --------------------------------------------------------- */

static void on_batch(void *user, void **items, size_t n)
{
    fnw_engine *e = user;
    enter(e);
    if (e->has_tuner) {
        /* the batch waited for a call slot, or inputs wait for capacity:
         * the service is the bottleneck */
        int backlog = e->batcher.held || e->ovf_n > 0 ||
                      fnw_queue_pending(&e->queue) >= (size_t)e->spec.capacity;
        fnw_batch_tuner_sent(&e->tuner, n, backlog, now_us(e));
        tune_apply(e);
    }
    if (!stopped(e))
        start_call(e, (fnw_entry *const *)items, n);
    leave(e);
}

static void admit(fnw_engine *e, fnw_entry *en)
{
    fnw_queue_advance_watermark(&e->queue, en->rec.watermark);
    if (fnw_queue_put(&e->queue, &en->q) != 0) {
        fail_bundle(e, "out of memory queueing an input in transform '%s'", e->transform_id);
        return;
    }
    int64_t pending = (int64_t)fnw_queue_pending(&e->queue);
    if (pending > e->m.inflight_high_water)
        e->m.inflight_high_water = pending;
    if (!e->spec.batched) {
        start_call(e, &en, 1);
        return;
    }
    /* The batcher's size is min(batch_size, capacity), so a full queue
     * always has a full batch or calls in flight: waiting cannot deadlock.
     * (The tuner's size is smaller still.) */
    if (e->has_tuner) {
        size_t before = fnw_batch_tuner_size(&e->tuner);
        fnw_batch_tuner_arrived(&e->tuner, now_us(e));
        if (fnw_batch_tuner_size(&e->tuner) != before)
            tune_apply(e);
    }
    fnw_batcher_add(&e->batcher, en);
}

static void overflow_append(fnw_engine *e, fnw_entry *en)
{
    en->q.next = NULL;
    if (e->ovf_tail)
        e->ovf_tail->q.next = &en->q;
    else
        e->ovf_head = en;
    e->ovf_tail = en;
    e->ovf_n++;
}

static fnw_entry *overflow_pop(fnw_engine *e)
{
    fnw_entry *en = e->ovf_head;
    e->ovf_head = (fnw_entry *)en->q.next;
    if (!e->ovf_head)
        e->ovf_tail = NULL;
    e->ovf_n--;
    en->q.next = NULL;
    return en;
}

static void emit_ready(fnw_engine *e)
{
    fnw_qnode *n;
    while (!stopped(e) && (n = fnw_queue_pop_ready(&e->queue))) {
        fnw_entry *en = (fnw_entry *)n;
        for (uint32_t s = 0; s < en->nspans && !stopped(e); s++) {
            const fnw_span *sp = &en->spans[s];
            fnw_record out = { en->rec.timestamp, en->rec.watermark, sp->is_null ? NULL : en->out + sp->off,
                               sp->len };
            if (!sp->is_null && sp->len == 0)
                out.data = (const uint8_t *)"";
            e->m.records_out++;
            SINK_EMIT(e, &out);
        }
        if (!stopped(e))
            SINK_SETTLED(e, &en->rec);
        fnw_entry_unhold_queue(&e->entries, en);
    }
}

static void drain(fnw_engine *e)
{
    if (e->draining) {
        e->drain_again = 1;
        return;
    }
    e->draining = 1;
    do {
        e->drain_again = 0;
        emit_ready(e);
        while (!stopped(e) && e->ovf_n && fnw_queue_pending(&e->queue) < (size_t)e->spec.capacity)
            admit(e, overflow_pop(e));
        /* A batch held for a call slot goes when one is free. */
        if (!stopped(e) && e->has_tuner && fnw_batcher_due(&e->batcher) && slot_free(e))
            fnw_batcher_flush(&e->batcher);
        /* At bundle end the partial batch goes once nothing more can join. */
        if (!stopped(e) && e->has_batcher && e->bstate == B_FINISHING && e->ovf_n == 0)
            fnw_batcher_flush(&e->batcher);
    } while (e->drain_again && !stopped(e));
    e->draining = 0;
}

/* Cancels every call still out, forgets every entry. */
static void cleanup(fnw_engine *e)
{
    e->cleanup_pending = 0;
    if (e->has_batcher)
        fnw_batcher_clear(&e->batcher);
    fnw_call_pool_stop_all(&e->calls);
    fnw_entry_pool_put_all(&e->entries);
    fnw_queue_clear(&e->queue);
    e->ovf_head = e->ovf_tail = NULL;
    e->ovf_n = 0;
    e->blocked = 0;
    e->drain_again = 0;
    if (e->bstate == B_ABORTED)
        e->bstate = B_IDLE;
}

/* ---- public API ------------------------------------------------------------------- */

int fnw_engine_new(struct ev_loop *loop, const fnw_operation *op, const fnw_spec *spec, const fnw_op_env *env,
                   fnw_engine **out, fnw_error *err)
{
    *out = NULL;
    if (!loop || !op || !spec || !op->name)
        return fnw_error_set(err, "fnw_engine_new: loop, operation and spec are required");
    fnw_spec s = *spec;
    if (fnw_spec_validate(&s, err) != 0 || fnw_registry_check(op, err) != 0)
        return -1;
    fnw_engine *e = calloc(1, sizeof *e);
    if (!e)
        return fnw_error_set(err, "out of memory creating the engine of operation '%s'", op->name);
    e->loop = loop;
    e->op = op;
    e->spec = s;
    e->transform_id = strdup(env && env->transform_id ? env->transform_id : "");
    if (env)
        e->env = *env;
    e->env.loop = loop;
    e->env.batched = s.batched;
    e->env.transform_id = e->transform_id;
    e->direct_mode = op->sync && !s.batched && s.retry.kind == FNW_RETRY_NONE;
    /* A batch never outgrows capacity (else a full queue would wait for a
     * batch that cannot fill). */
    e->call_cap = s.batched ? (size_t)(s.batch_size < s.capacity ? s.batch_size : s.capacity) : 1;
    e->env.batch_size = e->call_cap;
    e->env.timeout_ms = s.timeout_ms;
    e->env.counters = &e->counters;
    fnw_queue_init(&e->queue, s.unordered);
    fnw_entry_pool_init(&e->entries);
    fnw_call_pool_init(&e->calls, &e->call_setup, e->call_cap);
    fnw_buf_init(&e->scratch, 0);
    e->spec.fallback_json = NULL; /* the caller's; read once, by resilience_init */
    fnw_buf_init(&e->fallback, 0);
    fnw_buf_init(&e->carry_buf, 0);
    fnw_arena_init(&e->fb_arena, 1024, 0);
    fnw_arena_init(&e->carry_arena, 4096, 0);
    e->bstate = B_IDLE;
    int ok = e->transform_id != NULL;
    if (ok && s.batched) {
        ok = fnw_batcher_init(&e->batcher, loop, e->call_cap, s.batch_timeout_ms, on_batch, e) == 0;
        e->has_batcher = 1;
        if (ok && s.target_latency_ms > 0) {
            fnw_batch_tuner_init(&e->tuner, e->call_cap, s.target_latency_ms, s.batch_timeout_ms,
                                 ev_now(loop) * 1e6);
            e->has_tuner = 1;
            e->call_slots = (size_t)s.capacity / e->call_cap;
            if (e->call_slots < 1)
                e->call_slots = 1;
            fnw_batcher_set_gate(&e->batcher, slot_free);
            fnw_batcher_tune(&e->batcher, fnw_batch_tuner_size(&e->tuner),
                             fnw_batch_tuner_delay_us(&e->tuner) / 1e6);
        }
    }
    if (!ok) {
        engine_free(e);
        return fnw_error_set(err, "out of memory creating the engine of operation '%s'", op->name);
    }
    if (resilience_init(e, s.fallback_json, err) != 0) {
        engine_free(e);
        return -1;
    }
    if (op->open && op->open(&e->env, &e->op_state, err) != 0) {
        engine_free(e);
        return -1;
    }
    e->op_open = 1;
    e->env.options = NULL; /* only valid during open */
    if (op->invoke_blocking &&
        !(e->blocking = fnw_blocking_op_new(loop, op, e->op_state, e->env.input_type, e->env.output_type,
                                            (size_t)e->spec.capacity, fnw_blocking_pool_shared(), err))) {
        engine_free(e);
        return -1;
    }
    call_setup_init(e);
    e->calls.gated = e->has_breaker; /* the limit starts at capacity: nothing to hold back */
    if (e->direct_mode && !(e->direct = fnw_call_new_direct(&e->call_setup))) {
        engine_free(e);
        return fnw_error_set(err, "out of memory creating the engine of operation '%s'", op->name);
    }
    *out = e;
    return 0;
}

static void engine_free(fnw_engine *e)
{
    e->depth = 1;
    e->free_pending = 0;
    e->bstate = B_ABORTED;
    cleanup(e);
    if (e->has_batcher)
        fnw_batcher_free(&e->batcher);
    fnw_blocking_op_free(e->blocking); /* waits for calls still on a thread */
    if (e->op_open && e->op->close)
        e->op->close(e->op_state);
    fnw_call_pool_free(&e->calls);
    fnw_call_free(e->direct);
    fnw_entry_pool_free(&e->entries);
    fnw_queue_free(&e->queue);
    fnw_buf_free(&e->scratch);
    fnw_buf_free(&e->fallback);
    fnw_buf_free(&e->carry_buf);
    fnw_arena_free(&e->fb_arena);
    fnw_arena_free(&e->carry_arena);
    free(e->carry);
    ev_timer_stop(e->loop, &e->pause_w);
    if (e->has_breaker)
        fnw_breaker_free(&e->breaker);
    free(e->transform_id);
    free(e);
}

void fnw_engine_free(fnw_engine *e)
{
    if (!e)
        return;
    if (e->depth > 0) {
        e->free_pending = 1;
        return;
    }
    engine_free(e);
}

void fnw_engine_start(fnw_engine *e, const fnw_engine_sink *sink, const char *bundle_label)
{
    if (e->bstate != B_IDLE) {
        e->bstate = B_ABORTED;
        e->fail_pending = 0;
        cleanup(e);
    }
    e->sink = *sink;
    if (!e->sink.emit_user)
        e->sink.emit_user = e->sink.user;
    snprintf(e->label, sizeof e->label, "%s", bundle_label ? bundle_label : "");
    memset(&e->m, 0, sizeof e->m);
    metrics_gauges_init(e);
    fnw_counter_set_reset(&e->counters);
    e->next_index = 0;
    e->blocked = 0;
    e->bstate = B_ACTIVE;
}

int fnw_engine_has_space(const fnw_engine *e)
{
    if (e->direct_mode)
        return 1;
    return e->ovf_n == 0 && fnw_queue_pending(&e->queue) < (size_t)e->spec.capacity;
}

void fnw_engine_set_passthrough(fnw_engine *e)
{
    e->passthrough = e->direct_mode;
}

/* What run_direct does for an operation that emits its input: the same
 * metrics and sink callbacks, without the call. leave() has nothing to do
 * unless the sink changed the engine's state (failed, blocked, freed). */
static int push_passthrough(fnw_engine *e, const fnw_record *in)
{
    e->depth++;
    e->m.records_in++;
    e->m.calls++;
    dist_add(&e->m.batch_size, 1);
    if (e->m.inflight_high_water < 1)
        e->m.inflight_high_water = 1;
    e->next_index++;
    e->m.records_out++;
    SINK_EMIT(e, in);
    if (!stopped(e)) {
        dist_add(&e->m.call_duration_ms, 0);
        SINK_SETTLED(e, in);
    }
    if (e->depth == 1 && e->bstate == B_ACTIVE && !e->blocked && !e->free_pending && !e->cleanup_pending &&
        !e->fail_pending) {
        e->depth = 0;
        return 0;
    }
    int rc = e->bstate == B_FAILED ? -1 : 0;
    leave(e);
    return rc;
}

int fnw_engine_push(fnw_engine *e, const fnw_record *in)
{
    if (e->bstate != B_ACTIVE || stopped(e))
        return -1;
    if (e->passthrough)
        return push_passthrough(e, in);
    enter(e);
    e->m.records_in++;
    if (e->direct_mode) {
        run_direct(e, in);
    } else {
        fnw_entry *en = fnw_entry_pool_get(&e->entries);
        if (!en || fnw_entry_set_input(en, in) != 0) {
            if (en)
                fnw_entry_pool_put(&e->entries, en);
            fail_bundle(e, "out of memory copying an input in transform '%s'", e->transform_id);
        } else {
            en->index = e->next_index++;
            en->held_by_queue = 1;
            if (e->ovf_n || fnw_queue_pending(&e->queue) >= (size_t)e->spec.capacity)
                overflow_append(e, en);
            else
                admit(e, en);
        }
    }
    int rc = e->bstate == B_FAILED ? -1 : 0;
    leave(e);
    return rc;
}

void fnw_engine_finish(fnw_engine *e)
{
    if (e->bstate != B_ACTIVE || stopped(e))
        return;
    enter(e);
    e->bstate = B_FINISHING;
    drain(e);
    leave(e);
}

void fnw_engine_abort(fnw_engine *e)
{
    enter(e);
    e->fail_pending = 0;
    if (e->bstate != B_IDLE || fnw_call_pool_busy(&e->calls)) {
        e->bstate = B_ABORTED;
        e->cleanup_pending = 1;
    }
    leave(e);
}

const fnw_engine_metrics *fnw_engine_metrics_get(const fnw_engine *e)
{
    return &e->m;
}

/* The gauges a new bundle starts with: -1 for what this engine does not
 * have, the counters' table for the exporters. */
static void metrics_gauges_init(fnw_engine *e)
{
    e->m.concurrency_limit = e->limiter.on ? fnw_limiter_limit(&e->limiter) : -1;
    e->m.breaker_state = e->has_breaker ? (int64_t)e->breaker.state : -1;
    e->m.batch_target = e->has_tuner ? (int64_t)fnw_batch_tuner_size(&e->tuner) : -1;
    e->m.inflight_calls = (int64_t)fnw_call_pool_active(&e->calls); /* timed out, still held */
    e->m.ncounters = e->counters.n;
    e->m.counters = e->counters.items;
}

/* ---- read-only views, for diagnostics ---------------------------------------------- */

void fnw_engine_stats_get(const fnw_engine *e, double now, fnw_engine_stats *st)
{
    double oldest = now;
    st->queued = fnw_queue_pending(&e->queue);
    st->waiting = e->ovf_n;
    st->batching = e->has_batcher ? fnw_batcher_count(&e->batcher) : 0;
    st->calls = fnw_call_pool_count(&e->calls, &oldest);
    st->oldest_call_s = st->calls && now > oldest ? now - oldest : 0;
    st->records_in = e->m.records_in;
    st->records_out = e->m.records_out;
}

void fnw_engine_describe(const fnw_engine *e, double now, char *buf, size_t n)
{
    fnw_engine_stats st;
    fnw_engine_stats_get(e, now, &st);
    char oldest[64] = "";
    if (st.calls)
        snprintf(oldest, sizeof oldest, " (the oldest started %.1f s ago)", st.oldest_call_s);
    snprintf(buf, n,
             "operation '%s' in transform '%s': %zu call(s) in flight%s; %zu input(s) "
             "queued, %zu waiting for capacity %d, %zu in a partial batch; %" PRId64 " in, %" PRId64
             " out this bundle",
             e->op->name, e->transform_id, st.calls, oldest, st.queued, st.waiting, e->spec.capacity,
             st.batching, st.records_in, st.records_out);
}

size_t fnw_engine_each_call(const fnw_engine *e, double now, size_t max,
                            void (*fn)(void *user, const char *line), void *user)
{
    size_t k = 0;
    char line[512];
    for (const fnw_call *c = fnw_call_pool_first(&e->calls); c; c = fnw_call_pool_next(c), k++) {
        if (k >= max)
            continue;
        fnw_call_describe(c, now, line, sizeof line);
        fn(user, line);
    }
    return k;
}
