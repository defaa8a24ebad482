/* runtime/call.c — one operation call, start to end (call.h), and the call
 * API operations use (fnworker.h).
 *
 * The state machine of a queued call:
 *
 *   start ──> RUNNING ── complete/fail ──> done() or failed(), released
 *               │  ^                  └──> retry allowed: BACKOFF
 *               │  └──── retry timer ───────────┘
 *               │  └── overloaded (requeue_overloaded) ──> BACKOFF or WAITING
 *               │      (the attempt is not used up)
 *               └─ timeout (RUNNING, BACKOFF or WAITING): the timeout action, then
 *                  the operation's cancel if it still has the call, and
 *                  released: a call that never comes back (a hung service)
 *                  holds nothing past its timeout
 *
 * Before each attempt of a queued call the owner's gate() may hold it back
 * (WAITING, in the pool's FIFO until fnw_call_pool_resume) or reject it (it
 * fails at once without the operation: an open circuit breaker).
 *
 * TIMING_OUT is the state while the operation's timeout hook runs (it may
 * emit); CANCELLED while the owner stops the call. A direct call is DIRECT
 * while the operation has it and IDLE otherwise. Everything the owner must
 * hear goes through the setup's callback table; nothing here knows who the
 * owner is.
 */
#include <ev.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "codecs/arena.h"
#include "codecs/ser.h"
#include "runtime/call.h"

/* Slow paths stay out of line, so the per-record paths need no stack frame
 * for message buffers. */
#define CALL_SLOW __attribute__((cold, noinline))

enum call_state {
    CALL_IDLE = 0,   /* on the free list, or a direct call between inputs */
    CALL_DIRECT,     /* a direct call is with the operation */
    CALL_RUNNING,    /* an attempt is with the operation */
    CALL_BACKOFF,    /* waiting for the retry timer */
    CALL_TIMING_OUT, /* inside the operation's on_timeout hook */
    CALL_CANCELLED,  /* being stopped by the owner */
    CALL_WAITING,    /* held back by the owner's gate, in the pool's wait queue */
};

struct fnw_call {
    const fnw_call_setup *s;
    fnw_call_pool *pool; /* NULL for a direct call */
    uint8_t state;
    int attempt;
    uint8_t in_attempt; /* counted in the pool's running */
    uint8_t probe;      /* this attempt is the breaker's probe */
    uint8_t requeued;   /* the BACKOFF is an overload's, not a retry */
    int overloads;      /* overloads in a row of this call */
    ev_tstamp attempt_started;
    uint64_t emitted; /* outputs of the current attempt */
    int64_t last_backoff;
    ev_tstamp started;
    ev_timer timeout_w;
    ev_timer retry_w;
    void *op_data;
    fnw_arena arena;
    struct fnw_call *prev, *next;   /* the pool's active list, or its free list (next) */
    struct fnw_call *wprev, *wnext; /* the pool's wait queue */
    size_t n, cap;
    fnw_entry *in[]; /* cap slots */
};

static void timeout_cb(struct ev_loop *loop, ev_timer *w, int revents);
static void retry_cb(struct ev_loop *loop, ev_timer *w, int revents);

/* ---- making and freeing --------------------------------------------------------- */

/* A call with cap input slots and extra bytes after them. */
static fnw_call *call_alloc(const fnw_call_setup *s, fnw_call_pool *pool, size_t cap, size_t extra)
{
    fnw_call *c = calloc(1, sizeof *c + cap * sizeof c->in[0] + extra);
    if (!c)
        return NULL;
    c->s = s;
    c->pool = pool;
    c->cap = cap;
    fnw_arena_init(&c->arena, 4096, 0);
    ev_timer_init(&c->timeout_w, timeout_cb, 0., 0.);
    ev_timer_init(&c->retry_w, retry_cb, 0., 0.);
    c->timeout_w.data = c;
    c->retry_w.data = c;
    return c;
}

void fnw_call_free(fnw_call *c)
{
    if (!c)
        return;
    fnw_arena_free(&c->arena);
    free(c);
}

void fnw_call_pool_init(fnw_call_pool *p, const fnw_call_setup *s, size_t cap)
{
    p->setup = s;
    p->cap = cap;
    p->active = p->free = NULL;
    p->wait_head = p->wait_tail = NULL;
    p->running = 0;
    p->gated = 1;
    p->n_active = 0;
}

void fnw_call_pool_free(fnw_call_pool *p)
{
    fnw_call_pool_stop_all(p);
    while (p->free) {
        fnw_call *c = p->free;
        p->free = c->next;
        fnw_call_free(c);
    }
}

int fnw_call_pool_busy(const fnw_call_pool *p)
{
    return p->active != NULL;
}

fnw_call *fnw_call_pool_get(fnw_call_pool *p)
{
    fnw_call *c = p->free;
    if (c)
        p->free = c->next;
    else if (!(c = call_alloc(p->setup, p, p->cap, 0)))
        return NULL;
    c->prev = NULL;
    c->next = p->active;
    if (p->active)
        p->active->prev = c;
    p->active = c;
    p->n_active++;
    c->n = 0;
    c->op_data = NULL;
    c->emitted = 0;
    c->overloads = 0;
    c->requeued = 0;
    c->probe = 0;
    return c;
}

/* ---- the wait queue ------------------------------------------------------------- */

static void wait_push(fnw_call *c)
{
    fnw_call_pool *p = c->pool;
    c->state = CALL_WAITING;
    c->wnext = NULL;
    c->wprev = p->wait_tail;
    if (p->wait_tail)
        p->wait_tail->wnext = c;
    else
        p->wait_head = c;
    p->wait_tail = c;
}

static void wait_remove(fnw_call *c)
{
    fnw_call_pool *p = c->pool;
    if (c->wprev)
        c->wprev->wnext = c->wnext;
    else
        p->wait_head = c->wnext;
    if (c->wnext)
        c->wnext->wprev = c->wprev;
    else
        p->wait_tail = c->wprev;
    c->wprev = c->wnext = NULL;
}

/* The attempt the operation had is over: out of the running count, and
 * the owner hears how it ended (once). */
static inline void attempt_end(fnw_call *c, fnw_call_outcome how, int64_t retry_after_ms)
{
    if (!c->in_attempt)
        return;
    c->in_attempt = 0;
    c->pool->running--;
    const fnw_call_setup *s = c->s;
    if (__builtin_expect(how != FNW_ATTEMPT_OK || c->pool->gated || c->probe, 0) && s->cb->attempt_end)
        s->cb->attempt_end(s->user, how, c->attempt_started, c->probe, retry_after_ms);
    c->probe = 0;
}

/* The call is back from the operation (or never went): stop its timers, let
 * go of its entries, return it to the free list. */
static void call_release(fnw_call *c)
{
    const fnw_call_setup *s = c->s;
    fnw_call_pool *p = c->pool;
    ev_timer_stop(s->loop, &c->timeout_w);
    ev_timer_stop(s->loop, &c->retry_w);
    if (c->state == CALL_WAITING)
        wait_remove(c);
    for (size_t i = 0; i < c->n; i++)
        fnw_entry_unhold_call(s->entries, c->in[i]);
    c->n = 0;
    c->op_data = NULL;
    c->state = CALL_IDLE;
    fnw_arena_reset(&c->arena);
    if (c->prev)
        c->prev->next = c->next;
    else
        p->active = c->next;
    if (c->next)
        c->next->prev = c->prev;
    p->n_active--;
    c->prev = NULL;
    c->next = p->free;
    p->free = c;
}

/* The call is given up (the owner stops it, or it timed out): the
 * operation's cancel if it still has the call, then released. */
static void call_stop(fnw_call *c)
{
    const fnw_call_setup *s = c->s;
    int was = c->state;
    if (was == CALL_WAITING)
        wait_remove(c);
    attempt_end(c, FNW_ATTEMPT_GIVEN_UP, 0);
    c->state = CALL_CANCELLED;
    if ((was == CALL_RUNNING || was == CALL_TIMING_OUT) && s->op->cancel)
        s->op->cancel(s->op_state, c);
    call_release(c);
}

void fnw_call_pool_stop_all(fnw_call_pool *p)
{
    while (p->active)
        call_stop(p->active);
}

/* ---- messages ------------------------------------------------------------------- */

static void fmt_ts(int64_t ts, char *buf, size_t n)
{
    if (ts == INT64_MIN)
        snprintf(buf, n, "none");
    else
        snprintf(buf, n, "%" PRId64, ts);
}

void fnw_call_describe_inputs(const fnw_call *c, char *buf, size_t n)
{
    char ts[32];
    if (c->n == 1) {
        const fnw_entry *en = c->in[0];
        if (en->rec.timestamp == INT64_MIN)
            snprintf(buf, n, "input %" PRIu64 " (no timestamp)", en->index);
        else
            snprintf(buf, n, "input %" PRIu64 " (timestamp %" PRId64 ")", en->index, en->rec.timestamp);
        return;
    }
    size_t len = (size_t)snprintf(buf, n, "inputs %" PRIu64 "..%" PRIu64 " (timestamps ", c->in[0]->index,
                                  c->in[c->n - 1]->index);
    for (size_t i = 0; i < c->n && len < n; i++) {
        if (i == 8) {
            len += (size_t)snprintf(buf + len, n - len, ", ...");
            break;
        }
        fmt_ts(c->in[i]->rec.timestamp, ts, sizeof ts);
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", ts);
    }
    if (len < n)
        snprintf(buf + len, n - len, ")");
}

/* ---- read-only views, for diagnostics ---------------------------------------------- */

size_t fnw_call_pool_count(const fnw_call_pool *p, double *oldest_started)
{
    size_t n = 0;
    for (const fnw_call *c = p->active; c; c = c->next) {
        if (n == 0 || c->started < *oldest_started)
            *oldest_started = c->started;
        n++;
    }
    return n;
}

const fnw_call *fnw_call_pool_first(const fnw_call_pool *p)
{
    return p->active;
}

const fnw_call *fnw_call_pool_next(const fnw_call *c)
{
    return c->next;
}

static const char *state_text(int state)
{
    switch (state) {
    case CALL_RUNNING:
        return "with the operation";
    case CALL_BACKOFF:
        return "waiting to retry";
    case CALL_TIMING_OUT:
        return "in the operation's timeout hook";
    case CALL_CANCELLED:
        return "being cancelled";
    case CALL_DIRECT:
        return "running";
    case CALL_WAITING:
        return "waiting for the concurrency limit or a Retry-After pause";
    default:
        return "idle";
    }
}

void fnw_call_describe(const fnw_call *c, double now, char *buf, size_t n)
{
    char in[160];
    if (c->n)
        fnw_call_describe_inputs(c, in, sizeof in);
    else
        snprintf(in, sizeof in, "no input");
    double age = now - c->started;
    snprintf(buf, n, "call on %s: attempt %d, %s, started %.1f s ago", in, c->attempt, state_text(c->state),
             age > 0 ? age : 0);
}

static void report_failed(const fnw_call *c, const char *what, const char *tail)
{
    c->s->cb->failed(c->s->user, c, what, tail);
}

static void report_timed_out(const fnw_call *c, const char *tail)
{
    char what[256];
    snprintf(what, sizeof what, "operation '%s' timed out after %" PRId64 " ms", c->s->op->name,
             c->s->timeout_ms);
    report_failed(c, what, tail);
}

/* ---- attempts, retries ------------------------------------------------------------ */

static int64_t us_since(struct ev_loop *loop, ev_tstamp t)
{
    double d = (ev_now(loop) - t) * 1e6;
    return d > 0 ? (int64_t)(d + 0.5) : 0;
}

static void invoke(fnw_call *c)
{
    c->state = CALL_RUNNING;
    c->emitted = 0;
    if (c->pool) {
        c->in_attempt = 1;
        c->pool->running++;
        /* 0 (before any decrease) on the ungated path: no clock read per call */
        c->attempt_started = c->pool->gated ? ev_now(c->s->loop) : 0;
    }
    c->s->op->invoke(c->s->op_state, c);
}

/* The gate refused the call: it fails now without the operation. */
CALL_SLOW static void reject(fnw_call *c, const char *why)
{
    const fnw_call_setup *s = c->s;
    char what[256], tail[256];
    snprintf(what, sizeof what, "operation '%s' was not called", s->op->name);
    snprintf(tail, sizeof tail, ": %s", why);
    for (size_t i = 0; i < c->n; i++)
        fnw_entry_clear_outputs(c->in[i]);
    report_failed(c, what, tail); /* counted by the owner's gate (breaker_rejected), not a failure */
    call_release(c);
    s->cb->drain(s->user);
}

/* An attempt of a queued call: through the owner's gate, then to the
 * operation. Returns 0 when the call waits. */
CALL_SLOW static int gated_attempt(fnw_call *c, int queue_behind)
{
    const fnw_call_setup *s = c->s;
    if (queue_behind && c->pool->wait_head) {
        wait_push(c); /* the queue keeps its order */
        return 0;
    }
    char why[200];
    why[0] = '\0';
    switch (s->cb->gate(s->user, c, why, sizeof why)) {
    case FNW_GATE_WAIT:
        wait_push(c);
        return 0;
    case FNW_GATE_REJECT:
        reject(c, why);
        return 1;
    case FNW_GATE_PROBE:
        c->probe = 1;
        break;
    case FNW_GATE_GO:
        break;
    }
    invoke(c);
    return 1;
}

static inline int begin_attempt(fnw_call *c, int queue_behind)
{
    c->probe = 0;
    if (__builtin_expect(c->pool->gated && c->s->cb->gate != NULL, 0))
        return gated_attempt(c, queue_behind);
    invoke(c);
    return 1;
}

size_t fnw_call_pool_resume(fnw_call_pool *p)
{
    size_t n = 0;
    while (p->wait_head) {
        fnw_call *c = p->wait_head;
        wait_remove(c);
        c->state = CALL_IDLE;
        if (!begin_attempt(c, 0)) {
            /* still held back: back to the head, where it was */
            wait_remove(c);
            c->wnext = p->wait_head;
            c->wprev = NULL;
            if (p->wait_head)
                p->wait_head->wprev = c;
            else
                p->wait_tail = c;
            p->wait_head = c;
            break;
        }
        n++;
    }
    return n;
}

fnw_entry *const *fnw_call_entries(const fnw_call *c, size_t *n)
{
    *n = c->n;
    return c->in;
}

int fnw_call_is_direct(const fnw_call *c)
{
    return c->pool == NULL;
}

void fnw_call_start(fnw_call *c, fnw_entry *const *in, size_t n)
{
    const fnw_call_setup *s = c->s;
    for (size_t i = 0; i < n; i++) {
        c->in[i] = in[i];
        in[i]->held_by_call = 1;
    }
    c->n = n;
    c->attempt = 1;
    c->last_backoff = 0;
    if (s->timeout_ms > 0)
        ev_now_update(s->loop); /* the loop time may be stale after a long callback */
    c->started = ev_now(s->loop);
    if (s->timeout_ms > 0) {
        ev_timer_set(&c->timeout_w, (double)s->timeout_ms / 1000., 0.);
        ev_timer_start(s->loop, &c->timeout_w);
    }
    begin_attempt(c, 1);
}

/* The entries have their final outputs: hand them to the owner. */
static void report_done(fnw_call *c)
{
    const fnw_call_setup *s = c->s;
    ev_timer_stop(s->loop, &c->timeout_w);
    s->cb->done(s->user, c->in, c->n, us_since(s->loop, c->started));
}

static int retry_allowed(const fnw_call *c)
{
    const fnw_call_setup *s = c->s;
    if (!fnw_spec_retry_can_retry(&s->retry, c->attempt))
        return 0;
    return (ev_now(s->loop) - c->started) * 1000. <= (double)s->timeout_ms;
}

/* The retry waits the strategy's backoff, or at least min_delay_ms when the
 * operation asked for more (fnw_call_fail_after); the strategy's own
 * sequence (exponential growth) is not changed by that. */
static void schedule_retry(fnw_call *c, int64_t min_delay_ms)
{
    const fnw_call_setup *s = c->s;
    int64_t backoff = fnw_spec_retry_backoff_ms(&s->retry, c->attempt, c->last_backoff);
    c->last_backoff = backoff;
    if (backoff < min_delay_ms)
        backoff = min_delay_ms;
    c->attempt++;
    c->requeued = 0;
    for (size_t i = 0; i < c->n; i++)
        fnw_entry_clear_outputs(c->in[i]);
    fnw_arena_reset(&c->arena);
    c->state = CALL_BACKOFF;
    ev_timer_set(&c->retry_w, (double)(backoff > 0 ? backoff : 0) / 1000., 0.);
    ev_timer_start(s->loop, &c->retry_w);
}

static void retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    fnw_call *c = w->data;
    const fnw_call_setup *s = c->s;
    if (c->state != CALL_BACKOFF)
        return;
    s->cb->enter(s->user);
    if (s->cb->stopped(s->user)) {
        call_release(c);
    } else {
        if (!c->requeued)
            s->cb->count(s->user, FNW_CALL_RETRIED);
        c->requeued = 0;
        begin_attempt(c, 1);
    }
    s->cb->leave(s->user);
}

/* ---- timeouts ------------------------------------------------------------------------ */

/* TIMEOUT_OPERATION: the operation's hook supplies the result. */
static void timeout_by_operation(fnw_call *c)
{
    const fnw_call_setup *s = c->s;
    if (!s->op->on_timeout) {
        report_timed_out(c, ": on_timeout is TIMEOUT_OPERATION but the operation has no timeout handler");
        return;
    }
    fnw_error err;
    snprintf(err.msg, sizeof err.msg, "(no message)");
    c->state = CALL_TIMING_OUT;
    if (s->op->on_timeout(s->op_state, c, &err) != 0) {
        char what[256], tail[FNW_ERROR_MAX + 4];
        snprintf(what, sizeof what, "the timeout handler of operation '%s' failed", s->op->name);
        snprintf(tail, sizeof tail, ": %s", err.msg);
        report_failed(c, what, tail);
        return;
    }
    if (!s->cb->stopped(s->user))
        report_done(c);
}

/* The timeout action, then the call is let go of: cancelled if the
 * operation still has it (a hung call would otherwise stay allocated for
 * good, with its inputs), else released. */
static void time_out(fnw_call *c, int with_op)
{
    const fnw_call_setup *s = c->s;
    ev_timer_stop(s->loop, &c->retry_w);
    if (c->state == CALL_WAITING) {
        wait_remove(c);
        c->state = CALL_BACKOFF;
    }
    if (with_op)
        attempt_end(c, FNW_ATTEMPT_TIMED_OUT, 0);
    s->cb->count(s->user, FNW_CALL_TIMED_OUT);
    for (size_t i = 0; i < c->n; i++)
        fnw_entry_clear_outputs(c->in[i]);
    if (s->on_timeout == FNW_TIMEOUT_EMPTY)
        report_done(c);
    else if (s->on_timeout == FNW_TIMEOUT_OPERATION)
        timeout_by_operation(c);
    else
        report_timed_out(c, "");
    if (with_op)
        call_stop(c);
    else
        call_release(c);
    s->cb->drain(s->user);
}

static void timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    fnw_call *c = w->data;
    const fnw_call_setup *s = c->s;
    if (c->state != CALL_RUNNING && c->state != CALL_BACKOFF && c->state != CALL_WAITING)
        return;
    s->cb->enter(s->user);
    time_out(c, c->state == CALL_RUNNING);
    s->cb->leave(s->user);
}

/* ---- the end of an attempt (fnworker.h) ------------------------------------------- */

static __attribute__((noinline)) void attempt_completed(fnw_call *c)
{
    const fnw_call_setup *s = c->s;
    s->cb->enter(s->user);
    attempt_end(c, FNW_ATTEMPT_OK, 0);
    c->overloads = 0;
    if (s->cb->stopped(s->user)) {
        call_release(c);
    } else if (c->emitted == 0 && s->retry.on_empty && retry_allowed(c)) {
        schedule_retry(c, 0);
    } else {
        report_done(c);
        call_release(c);
        s->cb->drain(s->user);
    }
    s->cb->leave(s->user);
}

static __attribute__((noinline)) void attempt_failed(fnw_call *c, int64_t delay_ms, const char *what,
                                                     const char *tail)
{
    const fnw_call_setup *s = c->s;
    s->cb->enter(s->user);
    attempt_end(c, FNW_ATTEMPT_FAILED, 0);
    c->overloads = 0;
    if (s->cb->stopped(s->user)) {
        call_release(c);
    } else if (delay_ms >= 0 && s->retry.on_error && retry_allowed(c)) {
        schedule_retry(c, delay_ms);
    } else if (delay_ms >= 0 && s->retry.on_error && fnw_spec_retry_can_retry(&s->retry, c->attempt)) {
        time_out(c, 0); /* back after the deadline, the timer not run yet: the timeout came first */
    } else {
        s->cb->count(s->user, FNW_CALL_FAILED);
        report_failed(c, what, tail);
        call_release(c);
        s->cb->drain(s->user);
    }
    s->cb->leave(s->user);
}

/* Overload backoff of one call without a Retry-After: none the first time
 * (the lower limit is the back-off), then 10 ms doubling to 1 s. */
static int64_t overload_backoff_ms(int overloads)
{
    if (overloads <= 1)
        return 0;
    int shift = overloads - 2 < 7 ? overloads - 2 : 7;
    int64_t ms = (int64_t)10 << shift;
    return ms < 1000 ? ms : 1000;
}

/* The service refused the attempt for load: the owner lowers its limit
 * (and pauses for Retry-After), and the call runs again later with the
 * same attempt number; its timeout still bounds it. */
static __attribute__((noinline)) void attempt_overloaded(fnw_call *c, int64_t retry_after_ms)
{
    const fnw_call_setup *s = c->s;
    s->cb->enter(s->user);
    attempt_end(c, FNW_ATTEMPT_OVERLOADED, retry_after_ms);
    if (s->cb->stopped(s->user)) {
        call_release(c);
    } else {
        c->overloads++;
        for (size_t i = 0; i < c->n; i++)
            fnw_entry_clear_outputs(c->in[i]);
        fnw_arena_reset(&c->arena);
        int64_t delay = retry_after_ms > 0 ? 0 : overload_backoff_ms(c->overloads);
        if (delay > 0) {
            c->requeued = 1;
            c->state = CALL_BACKOFF;
            ev_timer_set(&c->retry_w, (double)delay / 1000., 0.);
            ev_timer_start(s->loop, &c->retry_w);
        } else {
            wait_push(c); /* the owner resumes it once its pause and limit allow */
        }
    }
    s->cb->leave(s->user);
}

void fnw_call_complete(fnw_call *c)
{
    if (c->state == CALL_DIRECT)
        c->state = CALL_IDLE;
    else if (c->state == CALL_RUNNING)
        attempt_completed(c);
    /* else settled already: ignored */
}

static void call_vfail(fnw_call *c, int64_t delay_ms, const char *fmt, va_list ap)
{
    if (c->state != CALL_DIRECT && c->state != CALL_RUNNING)
        return;
    char msg[FNW_ERROR_MAX], what[256], tail[FNW_ERROR_MAX + 4];
    vsnprintf(msg, sizeof msg, fmt ? fmt : "(no message)", ap);
    snprintf(what, sizeof what, "operation '%s' failed", c->s->op->name);
    snprintf(tail, sizeof tail, ": %s", msg);
    if (c->state == CALL_RUNNING) {
        attempt_failed(c, delay_ms, what, tail);
        return;
    }
    c->state = CALL_IDLE;
    c->s->cb->count(c->s->user, FNW_CALL_FAILED);
    report_failed(c, what, tail);
}

void fnw_call_fail(fnw_call *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    call_vfail(c, 0, fmt, ap);
    va_end(ap);
}

void fnw_call_fail_after(fnw_call *c, int64_t delay_ms, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    call_vfail(c, delay_ms < 0 ? FNW_CALL_NO_RETRY : delay_ms, fmt, ap);
    va_end(ap);
}

void fnw_call_fail_overloaded(fnw_call *c, int64_t retry_after_ms, const char *fmt, ...)
{
    if (retry_after_ms < 0)
        retry_after_ms = 0;
    if (c->state == CALL_RUNNING && c->s->requeue_overloaded) {
        attempt_overloaded(c, retry_after_ms);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    call_vfail(c, retry_after_ms, fmt, ap); /* adaptive concurrency off: a retryable failure, as before */
    va_end(ap);
}

/* ---- the direct path ---------------------------------------------------------------- */

/* One slot, pointing at an entry allocated behind it: the entry carries the
 * caller's record (not its bytes) and its index, so inputs and messages read
 * the same fields as a queued call's. */
fnw_call *fnw_call_new_direct(const fnw_call_setup *s)
{
    size_t slots = sizeof(fnw_call) + sizeof(fnw_entry *);
    size_t pad = (_Alignof(fnw_entry) - slots % _Alignof(fnw_entry)) % _Alignof(fnw_entry);
    fnw_call *c = call_alloc(s, NULL, 1, pad + sizeof(fnw_entry));
    if (!c)
        return NULL;
    c->in[0] = (fnw_entry *)((char *)c + slots + pad);
    c->n = 1;
    c->attempt = 1;
    return c;
}

CALL_SLOW static void direct_not_settled(fnw_call *c)
{
    char what[256];
    c->state = CALL_IDLE;
    snprintf(what, sizeof what, "operation '%s' is synchronous but returned without completing its call",
             c->s->op->name);
    report_failed(c, what, "");
}

int64_t fnw_call_run_direct(fnw_call *c, const fnw_record *in, uint64_t index)
{
    const fnw_call_setup *s = c->s;
    fnw_entry *en = c->in[0];
    en->rec = *in;
    en->index = index;
    c->emitted = 0;
    c->op_data = NULL;
    c->state = CALL_DIRECT;
    s->op->invoke(s->op_state, c);
    int64_t emitted = (int64_t)c->emitted;
    if (c->state == CALL_DIRECT) {
        direct_not_settled(c);
        emitted = -1;
    }
    fnw_arena_reset(&c->arena);
    return emitted;
}

static int emit_direct(fnw_call *c, const uint8_t *data, size_t len)
{
    if (len > UINT32_MAX)
        return -1;
    const fnw_record *in = &c->in[0]->rec;
    fnw_record out = { in->timestamp, in->watermark, data, data ? (uint32_t)len : 0 };
    if (c->s->cb->emit(c->s->user, &out) != 0)
        return -1;
    c->emitted++;
    return 0;
}

/* ---- the rest of the call API (fnworker.h) ---------------------------------------- */

size_t fnw_call_size(const fnw_call *c)
{
    return c->n;
}

const fnw_record *fnw_call_input(const fnw_call *c, size_t i)
{
    return i < c->n ? &c->in[i]->rec : NULL;
}

int fnw_call_attempt(const fnw_call *c)
{
    return c->attempt;
}

struct ev_loop *fnw_call_loop(const fnw_call *c)
{
    return c->s->loop;
}

fnw_arena *fnw_call_arena(fnw_call *c)
{
    return &c->arena;
}

void *fnw_call_op_data(fnw_call *c)
{
    return c->op_data;
}

void fnw_call_set_op_data(fnw_call *c, void *p)
{
    c->op_data = p;
}

int fnw_call_decode(fnw_call *c, size_t i, fnw_value *out, fnw_error *err)
{
    const fnw_record *r = fnw_call_input(c, i);
    if (!r)
        return fnw_error_set(err, "input %zu is out of range: the call has %zu input(s)", i, c->n);
    if (!r->data) {
        out->kind = (uint8_t)c->s->input_type->kind;
        out->is_null = 1;
        out->row_kind = 0;
        out->count = 0;
        return 0;
    }
    size_t used = 0;
    if (fnw_ser_decode(c->s->input_type, r->data, r->len, &c->arena, out, &used, err) != 0)
        return -1;
    if (used != r->len)
        return fnw_error_set(err, "input %zu has %zu byte(s) after its value", i, (size_t)r->len - used);
    return 0;
}

CALL_SLOW static int stage_failed(const fnw_call *c)
{
    char what[256];
    snprintf(what, sizeof what, "out of memory storing the outputs of operation '%s'", c->s->op->name);
    c->s->cb->failed(c->s->user, NULL, what, "");
    return -1;
}

/* Stages one output on entry i until the attempt ends. */
static int stage_output(fnw_call *c, size_t i, const uint8_t *data, size_t len)
{
    if (fnw_entry_add_output(c->in[i], data, len) != 0)
        return stage_failed(c);
    c->emitted++;
    return 0;
}

int fnw_call_emit(fnw_call *c, size_t i, const uint8_t *data, size_t len)
{
    if (i >= c->n)
        return -1;
    switch (c->state) {
    case CALL_DIRECT:
        return emit_direct(c, data, len);
    case CALL_RUNNING:
    case CALL_TIMING_OUT:
        return stage_output(c, i, data, len);
    default: /* settled: refused */
        return -1;
    }
}

int fnw_call_emit_value(fnw_call *c, size_t i, const fnw_value *v, fnw_error *err)
{
    int open = c->state == CALL_DIRECT || c->state == CALL_RUNNING || c->state == CALL_TIMING_OUT;
    if (!open || i >= c->n)
        return fnw_error_set(err, "the call has ended (or input %zu is out of range)", i);
    if (v->is_null)
        return fnw_call_emit(c, i, NULL, 0);
    fnw_buf *scratch = c->s->scratch;
    fnw_buf_clear(scratch);
    if (fnw_ser_encode(c->s->output_type, v, scratch, err) != 0)
        return -1;
    /* An empty encoding must stay a non-null value. */
    static const uint8_t none[1];
    const uint8_t *p = scratch->len ? scratch->p : none;
    if (fnw_call_emit(c, i, p, scratch->len) != 0)
        return fnw_error_set(err, "out of memory storing an output");
    return 0;
}
