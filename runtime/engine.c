/* runtime/engine.c — runs one operation instance with PyFlink's async
 * semantics on the libev loop (engine.h): admission under capacity (with an
 * overflow list), the ordered/unordered queue, batching, per-call timeouts
 * and retries on loop timers, the end-of-bundle barrier and metrics.
 *
 * Reentrancy: sink callbacks and operation callbacks may call back into the
 * engine (push into it, abort it, destroy it). Every entry point counts a
 * depth; work that frees structures (cleanup after a failure or abort,
 * destroy) and the sink's ready/failed/finished callbacks happen only when
 * the outermost entry point unwinds (leave()), so no frame below ever sees
 * freed memory.
 */
#include <ev.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/batcher.h"
#include "runtime/call.h"
#include "runtime/engine.h"
#include "runtime/entry.h"
#include "runtime/queue.h"

enum bundle_state { B_IDLE, B_ACTIVE, B_FINISHING, B_FAILED, B_ABORTED };

struct fnw_engine {
    struct ev_loop *loop;
    const fnw_operation *op;
    void *op_state;
    int op_open;
    fnw_spec spec;
    fnw_op_env env;
    char *transform_id;
    int direct_mode;            /* sync op, per element, no retry: no copy, no queue */
    size_t call_cap;            /* inputs per call */

    fnw_engine_sink sink;
    char label[128];
    int bstate;
    uint64_t next_index;
    fnw_engine_metrics m;

    fnw_queue queue;
    fnw_batcher batcher;
    int has_batcher;
    fnw_entry *ovf_head, *ovf_tail;   /* pushed without space, not yet admitted */
    size_t ovf_n;
    fnw_entry_pool entries;
    fnw_call *active;                 /* calls not on the free list */
    fnw_call *free_calls;
    fnw_call *direct;
    fnw_buf scratch;

    int depth;
    int draining, drain_again;
    int cleanup_pending, destroy_pending, fail_pending;
    int blocked;                      /* has_space was false at the last unwind */
    fnw_error fail_msg;
};

static void engine_free(fnw_engine *e);
static void cleanup(fnw_engine *e);
static void drain(fnw_engine *e);

/* ---- small helpers ---------------------------------------------------------- */

static int stopped(const fnw_engine *e)
{
    return e->cleanup_pending || e->destroy_pending ||
           (e->bstate != B_ACTIVE && e->bstate != B_FINISHING);
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

static int64_t ms_since(const fnw_engine *e, ev_tstamp t)
{
    double d = (ev_now(e->loop) - t) * 1000.;
    return d > 0 ? (int64_t)(d + 0.5) : 0;
}

static void enter(fnw_engine *e)
{
    e->depth++;
}

/* Runs one sink callback with the depth raised, so what it does to the
 * engine is deferred to the loop in leave(). */
#define SINK_CALL0(e, fn) do { \
        if ((e)->sink.fn) { (e)->depth++; (e)->sink.fn((e)->sink.user); (e)->depth--; } \
    } while (0)
#define SINK_CALL1(e, fn, arg) do { \
        if ((e)->sink.fn) { (e)->depth++; (e)->sink.fn((e)->sink.user, (arg)); (e)->depth--; } \
    } while (0)

static void leave(fnw_engine *e)
{
    if (--e->depth > 0)
        return;
    for (;;) {
        if (e->destroy_pending) {
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

static void fmt_ts(int64_t ts, char *buf, size_t n)
{
    if (ts == INT64_MIN)
        snprintf(buf, n, "none");
    else
        snprintf(buf, n, "%" PRId64, ts);
}

/* "input 3 (timestamp 17)" or "inputs 4..7 (timestamps 1, 2, 3, 4)". */
static void describe_inputs(const fnw_call *c, char *buf, size_t n)
{
    char ts[32];
    if (c->n == 1) {
        const fnw_record *r = fnw_call_input(c, 0);
        uint64_t idx = c->direct ? c->direct_index : c->in[0]->index;
        if (r->timestamp == INT64_MIN)
            snprintf(buf, n, "input %" PRIu64 " (no timestamp)", idx);
        else
            snprintf(buf, n, "input %" PRIu64 " (timestamp %" PRId64 ")", idx, r->timestamp);
        return;
    }
    size_t len = (size_t)snprintf(buf, n, "inputs %" PRIu64 "..%" PRIu64 " (timestamps ",
                                  c->in[0]->index, c->in[c->n - 1]->index);
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

/* fail_bundle with "<what> on <inputs> in <where><tail>" */
static void fail_call(fnw_engine *e, const fnw_call *c, const char *what, const char *tail)
{
    char inputs[512], where[384];
    describe_inputs(c, inputs, sizeof inputs);
    describe_where(e, where, sizeof where);
    fail_bundle(e, "%s on %s in %s%s", what, inputs, where, tail);
}

/* ---- calls ------------------------------------------------------------------------ */

static void timeout_cb(struct ev_loop *loop, ev_timer *w, int revents);
static void retry_cb(struct ev_loop *loop, ev_timer *w, int revents);

static fnw_call *call_new(fnw_engine *e, size_t cap)
{
    fnw_call *c = calloc(1, sizeof *c + cap * sizeof c->in[0]);
    if (!c)
        return NULL;
    c->e = e;
    c->loop = e->loop;
    c->input_type = e->env.input_type;
    c->output_type = e->env.output_type;
    c->scratch = &e->scratch;
    c->cap = cap;
    fnw_arena_init(&c->arena, 4096, 0);
    ev_timer_init(&c->timeout_w, timeout_cb, 0., 0.);
    ev_timer_init(&c->retry_w, retry_cb, 0., 0.);
    c->timeout_w.data = c;
    c->retry_w.data = c;
    return c;
}

static void call_destroy(fnw_call *c)
{
    fnw_arena_free(&c->arena);
    free(c);
}

static fnw_call *call_get(fnw_engine *e)
{
    fnw_call *c = e->free_calls;
    if (c)
        e->free_calls = c->next;
    else if (!(c = call_new(e, e->call_cap)))
        return NULL;
    c->prev = NULL;
    c->next = e->active;
    if (e->active)
        e->active->prev = c;
    e->active = c;
    c->n = 0;
    c->op_data = NULL;
    c->emitted = 0;
    return c;
}

/* The call comes back from the operation (or never went): stop its timers,
 * let go of its entries, return it to the free list. */
static void call_put(fnw_engine *e, fnw_call *c)
{
    ev_timer_stop(e->loop, &c->timeout_w);
    ev_timer_stop(e->loop, &c->retry_w);
    for (size_t i = 0; i < c->n; i++)
        fnw_entry_unhold_call(&e->entries, c->in[i]);
    c->n = 0;
    c->op_data = NULL;
    c->state = FNW_CALL_IDLE;
    fnw_arena_reset(&c->arena);
    if (c->prev)
        c->prev->next = c->next;
    else
        e->active = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = NULL;
    c->next = e->free_calls;
    e->free_calls = c;
}

static void invoke(fnw_engine *e, fnw_call *c)
{
    c->state = FNW_CALL_RUNNING;
    c->emitted = 0;
    e->op->invoke(e->op_state, c);
}

static void start_call(fnw_engine *e, fnw_entry **ens, size_t n)
{
    fnw_call *c = call_get(e);
    if (!c) {
        fail_bundle(e, "out of memory starting a call of operation '%s' in transform '%s'",
                    e->op->name, e->transform_id);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        c->in[i] = ens[i];
        ens[i]->held_by_call = 1;
    }
    c->n = n;
    c->attempt = 1;
    c->last_backoff = 0;
    if (e->spec.timeout_ms > 0)
        ev_now_update(e->loop);   /* the loop time may be stale after a long callback */
    c->started = ev_now(e->loop);
    e->m.calls++;
    if (e->spec.batched)
        e->m.batches++;
    dist_add(&e->m.batch_size, (int64_t)n);
    if (e->spec.timeout_ms > 0) {
        ev_timer_set(&c->timeout_w, (double)e->spec.timeout_ms / 1000., 0.);
        ev_timer_start(e->loop, &c->timeout_w);
    }
    invoke(e, c);
}

/* The call's entries have their final outputs: complete them in the queue. */
static void complete_entries(fnw_engine *e, fnw_call *c)
{
    ev_timer_stop(e->loop, &c->timeout_w);
    dist_add(&e->m.call_duration_ms, ms_since(e, c->started));
    for (size_t i = 0; i < c->n; i++) {
        fnw_entry *en = c->in[i];
        if (en->nspans == 0)
            e->m.empty_results++;
        fnw_queue_complete(&e->queue, &en->q);
    }
}

static int retry_allowed(const fnw_engine *e, const fnw_call *c)
{
    if (!fnw_retry_can_retry(&e->spec.retry, c->attempt))
        return 0;
    return (ev_now(e->loop) - c->started) * 1000. <= (double)e->spec.timeout_ms;
}

static void schedule_retry(fnw_engine *e, fnw_call *c)
{
    int64_t backoff = fnw_retry_backoff_ms(&e->spec.retry, c->attempt, c->last_backoff);
    c->last_backoff = backoff;
    c->attempt++;
    for (size_t i = 0; i < c->n; i++)
        fnw_entry_clear_outputs(c->in[i]);
    fnw_arena_reset(&c->arena);
    c->state = FNW_CALL_BACKOFF;
    ev_timer_set(&c->retry_w, (double)(backoff > 0 ? backoff : 0) / 1000., 0.);
    ev_timer_start(e->loop, &c->retry_w);
}

static void retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    fnw_call *c = w->data;
    fnw_engine *e = c->e;
    if (c->state != FNW_CALL_BACKOFF)
        return;
    enter(e);
    if (stopped(e)) {
        call_put(e, c);
    } else {
        e->m.retries++;
        invoke(e, c);
    }
    leave(e);
}

static void on_timeout_operation(fnw_engine *e, fnw_call *c)
{
    char what[256];
    if (!e->op->on_timeout) {
        snprintf(what, sizeof what, "operation '%s' timed out after %" PRId64 " ms",
                 e->op->name, e->spec.timeout_ms);
        fail_call(e, c, what, ": on_timeout is TIMEOUT_OPERATION but the operation has no timeout handler");
        return;
    }
    fnw_error err;
    snprintf(err.msg, sizeof err.msg, "(no message)");
    c->state = FNW_CALL_TIMING_OUT;
    int rc = e->op->on_timeout(e->op_state, c, &err);
    if (rc != 0) {
        char tail[FNW_ERROR_MAX + 4];
        snprintf(what, sizeof what, "the timeout handler of operation '%s' failed", e->op->name);
        snprintf(tail, sizeof tail, ": %s", err.msg);
        fail_call(e, c, what, tail);
        return;
    }
    if (!stopped(e))
        complete_entries(e, c);
}

static void timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    fnw_call *c = w->data;
    fnw_engine *e = c->e;
    if (c->state != FNW_CALL_RUNNING && c->state != FNW_CALL_BACKOFF)
        return;
    enter(e);
    int with_op = c->state == FNW_CALL_RUNNING;
    ev_timer_stop(e->loop, &c->retry_w);
    e->m.timeouts++;
    for (size_t i = 0; i < c->n; i++)
        fnw_entry_clear_outputs(c->in[i]);
    if (e->spec.on_timeout == FNW_TIMEOUT_EMPTY) {
        complete_entries(e, c);
    } else if (e->spec.on_timeout == FNW_TIMEOUT_OPERATION) {
        on_timeout_operation(e, c);
    } else {
        char what[256];
        snprintf(what, sizeof what, "operation '%s' timed out after %" PRId64 " ms",
                 e->op->name, e->spec.timeout_ms);
        fail_call(e, c, what, "");
    }
    /* The operation may still complete it; that completion only frees it. */
    if (with_op)
        c->state = FNW_CALL_ZOMBIE;
    else
        call_put(e, c);
    drain(e);
    leave(e);
}

/* ---- the engine side of the call API (call.h) ---------------------------------- */

static void direct_settle(fnw_engine *e, fnw_call *c)
{
    c->state = FNW_CALL_IDLE;
    if (c->emitted == 0)
        e->m.empty_results++;
    dist_add(&e->m.call_duration_ms, 0);
}

void fnw_engine_call_complete(fnw_call *c)
{
    fnw_engine *e = c->e;
    if (c->direct) {
        if (c->state == FNW_CALL_RUNNING)
            direct_settle(e, c);
        return;
    }
    if (c->state == FNW_CALL_ZOMBIE) {
        call_put(e, c);
        return;
    }
    if (c->state != FNW_CALL_RUNNING)
        return;
    enter(e);
    if (stopped(e)) {
        call_put(e, c);
    } else if (c->emitted == 0 && e->spec.retry.on_empty && retry_allowed(e, c)) {
        schedule_retry(e, c);
    } else {
        complete_entries(e, c);
        call_put(e, c);
        drain(e);
    }
    leave(e);
}

void fnw_engine_call_fail(fnw_call *c, const char *message)
{
    fnw_engine *e = c->e;
    char what[256], tail[FNW_ERROR_MAX + 4];
    snprintf(what, sizeof what, "operation '%s' failed", e->op->name);
    snprintf(tail, sizeof tail, ": %s", message);
    if (c->direct) {
        if (c->state != FNW_CALL_RUNNING)
            return;
        direct_settle(e, c);
        e->m.failures++;
        fail_call(e, c, what, tail);
        return;
    }
    if (c->state == FNW_CALL_ZOMBIE) {
        call_put(e, c);
        return;
    }
    if (c->state != FNW_CALL_RUNNING)
        return;
    enter(e);
    if (stopped(e)) {
        call_put(e, c);
    } else if (e->spec.retry.on_error && retry_allowed(e, c)) {
        schedule_retry(e, c);
    } else {
        e->m.failures++;
        fail_call(e, c, what, tail);
        call_put(e, c);
    }
    leave(e);
}

int fnw_engine_call_emit_direct(fnw_call *c, const uint8_t *data, size_t len)
{
    fnw_engine *e = c->e;
    if (stopped(e) || len > UINT32_MAX)
        return -1;
    const fnw_record *in = c->direct_rec;
    fnw_record out = { in->timestamp, in->watermark, data, data ? (uint32_t)len : 0 };
    c->emitted++;
    e->m.records_out++;
    SINK_CALL1(e, emit, &out);
    return 0;
}

void fnw_engine_call_oom(fnw_call *c)
{
    fail_bundle(c->e, "out of memory storing the outputs of operation '%s' in transform '%s'",
                c->e->op->name, c->e->transform_id);
}

/* ---- admission, emission --------------------------------------------------------- */

static void on_batch(void *user, void **items, size_t n)
{
    fnw_engine *e = user;
    enter(e);
    if (!stopped(e))
        start_call(e, (fnw_entry **)items, n);
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
     * always has a full batch or calls in flight: waiting cannot deadlock. */
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
            fnw_record out = { en->rec.timestamp, en->rec.watermark,
                               sp->is_null ? NULL : en->out + sp->off, sp->len };
            if (!sp->is_null && sp->len == 0)
                out.data = (const uint8_t *)"";
            e->m.records_out++;
            SINK_CALL1(e, emit, &out);
        }
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
    while (e->active) {
        fnw_call *c = e->active;
        int was = c->state;
        c->state = FNW_CALL_CANCELLED;
        if ((was == FNW_CALL_RUNNING || was == FNW_CALL_ZOMBIE || was == FNW_CALL_TIMING_OUT) &&
            e->op->cancel)
            e->op->cancel(e->op_state, c);
        call_put(e, c);
    }
    fnw_entry_release_all(&e->entries);
    fnw_queue_clear(&e->queue);
    e->ovf_head = e->ovf_tail = NULL;
    e->ovf_n = 0;
    e->blocked = 0;
    e->drain_again = 0;
    if (e->bstate == B_ABORTED)
        e->bstate = B_IDLE;
}

static void run_direct(fnw_engine *e, const fnw_record *in)
{
    fnw_call *c = e->direct;
    c->direct_rec = in;
    c->direct_index = e->next_index++;
    c->n = 1;
    c->attempt = 1;
    c->emitted = 0;
    c->op_data = NULL;
    e->m.calls++;
    dist_add(&e->m.batch_size, 1);
    if (e->m.inflight_high_water < 1)
        e->m.inflight_high_water = 1;
    c->state = FNW_CALL_RUNNING;
    e->op->invoke(e->op_state, c);
    if (c->state == FNW_CALL_RUNNING) {
        char what[256];
        c->state = FNW_CALL_CANCELLED;
        snprintf(what, sizeof what, "operation '%s' is synchronous but returned without completing its call",
                 e->op->name);
        fail_call(e, c, what, "");
    }
    fnw_arena_reset(&c->arena);
}

/* ---- public API ------------------------------------------------------------------- */

static int create_check(const fnw_operation *op, fnw_error *err)
{
    if (!op->invoke)
        return fnw_error_set(err, "operation '%s' has no invoke function", op->name);
    if (!op->sync && !op->cancel)
        return fnw_error_set(err, "operation '%s' is asynchronous but has no cancel function", op->name);
    return 0;
}

int fnw_engine_create(struct ev_loop *loop, const fnw_operation *op,
                      const fnw_spec *spec, const fnw_op_env *env,
                      fnw_engine **out, fnw_error *err)
{
    *out = NULL;
    if (!loop || !op || !spec || !op->name)
        return fnw_error_set(err, "fnw_engine_create: loop, operation and spec are required");
    fnw_spec s = *spec;
    if (fnw_spec_validate(&s, err) != 0 || create_check(op, err) != 0)
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
    fnw_queue_init(&e->queue, s.unordered);
    fnw_entry_pool_init(&e->entries);
    fnw_buf_init(&e->scratch, 0);
    e->bstate = B_IDLE;
    int ok = e->transform_id != NULL;
    if (ok && s.batched) {
        ok = fnw_batcher_init(&e->batcher, loop, e->call_cap, s.batch_timeout_ms, on_batch, e) == 0;
        e->has_batcher = 1;
    }
    if (ok && e->direct_mode) {
        ok = (e->direct = call_new(e, 1)) != NULL;
        if (ok)
            e->direct->direct = 1;
    }
    if (!ok) {
        engine_free(e);
        return fnw_error_set(err, "out of memory creating the engine of operation '%s'", op->name);
    }
    if (op->open && op->open(&e->env, &e->op_state, err) != 0) {
        engine_free(e);
        return -1;
    }
    e->op_open = 1;
    e->env.options = NULL;   /* only valid during open */
    *out = e;
    return 0;
}

static void engine_free(fnw_engine *e)
{
    e->depth = 1;
    e->destroy_pending = 0;
    e->bstate = B_ABORTED;
    cleanup(e);
    if (e->has_batcher)
        fnw_batcher_free(&e->batcher);
    if (e->op_open && e->op->close)
        e->op->close(e->op_state);
    fnw_entry_pool_free(&e->entries);
    while (e->free_calls) {
        fnw_call *c = e->free_calls;
        e->free_calls = c->next;
        call_destroy(c);
    }
    if (e->direct)
        call_destroy(e->direct);
    fnw_queue_free(&e->queue);
    fnw_buf_free(&e->scratch);
    free(e->transform_id);
    free(e);
}

void fnw_engine_destroy(fnw_engine *e)
{
    if (!e)
        return;
    if (e->depth > 0) {
        e->destroy_pending = 1;
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
    snprintf(e->label, sizeof e->label, "%s", bundle_label ? bundle_label : "");
    memset(&e->m, 0, sizeof e->m);
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

int fnw_engine_push(fnw_engine *e, const fnw_record *in)
{
    if (e->bstate != B_ACTIVE || stopped(e))
        return -1;
    enter(e);
    e->m.records_in++;
    if (e->direct_mode) {
        run_direct(e, in);
    } else {
        fnw_entry *en = fnw_entry_get(&e->entries);
        if (!en || fnw_entry_set_input(en, in) != 0) {
            if (en)
                fnw_entry_put(&e->entries, en);
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
    if (e->bstate != B_IDLE || e->active) {
        e->bstate = B_ABORTED;
        e->cleanup_pending = 1;
    }
    leave(e);
}

const fnw_engine_metrics *fnw_engine_metrics_get(const fnw_engine *e)
{
    return &e->m;
}
