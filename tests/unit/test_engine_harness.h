/* tests/unit/test_engine_harness.h — drives a real fnw_engine on a real
 * ev_loop for the runtime's Check tests: INT inputs (4 bytes big-endian),
 * pushes while has_space, resumes on sink.ready, calls finish after the
 * last input, and runs the loop until sink.finished or sink.failed (or a
 * guard timer, which fails the test). Outputs are recorded with their
 * timestamps, watermarks, arrival times and loop iterations.
 *
 * Times are measured from the loop time at h_begin(), refreshed there, so a
 * timer started during the bundle never fires before t0 + its delay: lower
 * bounds on times hold on any machine. Upper bounds do not (a loaded
 * machine delays every wake-up), so tests check order instead where they
 * can: h_run_until() waits for a condition, not for a time. */
#ifndef TEST_ENGINE_HARNESS_H
#define TEST_ENGINE_HARNESS_H

#include <check.h>
#include <ev.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/handoff.h"
#include "ops/builtins.h"
#include "codecs/type.h"
#include "runtime/engine.h"
#include "runtime/operation.h"
#include "runtime/spec.h"

typedef struct h_out {
    int32_t v;
    int64_t ts, wm;
    int is_null;
    double at;          /* seconds since the bundle started */
    unsigned iter;      /* ev_iteration() when it was emitted */
} h_out;

typedef struct harness {
    struct ev_loop *loop;
    fnw_registry reg;
    fnw_type *type;
    fnw_engine *e;
    fnw_error err;
    /* inputs */
    size_t n_in, next;
    int32_t *vals;
    int64_t *ts, *wm;
    int auto_finish;        /* finish after the last input (default 1) */
    int finish_called;
    /* results */
    int finished, failed, guard_fired;
    char fail_msg[FNW_ERROR_MAX];
    h_out *outs;
    size_t n_out, cap_out;
    int ready_calls;
    size_t max_pushed_without_space; /* pushes made while has_space was false */
    double t0, t_finished;
    unsigned finished_iter;     /* ev_iteration() at sink.finished */
    ev_timer guard;
    /* h_mark(): outputs already emitted when the mark timer fired (-1 before) */
    ev_timer mark;
    long mark_n_out;
    /* optional hook run for every output (after recording it) */
    void (*on_emit)(struct harness *h, const fnw_record *out);
    void *user;
} harness;

static inline double h_now(void)
{
    return ev_time();
}

static inline void h_put_int(uint8_t b[4], int32_t v)
{
    uint32_t u = (uint32_t)v;
    b[0] = (uint8_t)(u >> 24);
    b[1] = (uint8_t)(u >> 16);
    b[2] = (uint8_t)(u >> 8);
    b[3] = (uint8_t)u;
}

static inline int32_t h_get_int(const uint8_t *b)
{
    return (int32_t)(((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3]);
}

static inline void h_init(harness *h)
{
    memset(h, 0, sizeof *h);
    h->loop = ev_loop_new(EVFLAG_AUTO);
    ck_assert_ptr_nonnull(h->loop);
    fnw_registry_init(&h->reg);
    fnw_builtins_register(&h->reg);
    h->type = fnw_type_new(FNW_INT);
    ck_assert_ptr_nonnull(h->type);
    h->auto_finish = 1;
}

/* n inputs with values 0..n-1, timestamps 1000+i, watermark INT64_MIN. */
static inline void h_inputs(harness *h, size_t n)
{
    free(h->vals);
    free(h->ts);
    free(h->wm);
    h->n_in = n;
    h->next = 0;
    h->vals = calloc(n ? n : 1, sizeof *h->vals);
    h->ts = calloc(n ? n : 1, sizeof *h->ts);
    h->wm = calloc(n ? n : 1, sizeof *h->wm);
    for (size_t i = 0; i < n; i++) {
        h->vals[i] = (int32_t)i;
        h->ts[i] = 1000 + (int64_t)i;
        h->wm[i] = INT64_MIN;
    }
}

static inline fnw_spec h_spec(void)
{
    fnw_spec s;
    memset(&s, 0, sizeof s);
    return s;
}

/* Creates the engine for op_name with options "k=v" strings (NULL-terminated). */
static inline int h_create_opts(harness *h, const char *op_name, const fnw_spec *spec,
                                const char *const *kv)
{
    fnw_option items[32];
    char keys[32][64];
    size_t n = 0;
    for (; kv && kv[n]; n++) {
        const char *eq = strchr(kv[n], '=');
        ck_assert_ptr_nonnull(eq);
        snprintf(keys[n], sizeof keys[n], "%.*s", (int)(eq - kv[n]), kv[n]);
        items[n].key = keys[n];
        items[n].value = eq + 1;
    }
    fnw_options opts = { n, items };
    const fnw_operation *op = fnw_registry_find(&h->reg, op_name, &h->err);
    ck_assert_msg(op != NULL, "%s", h->err.msg);
    fnw_op_env env = { h->loop, &opts, h->type, h->type, "t1", spec->batched, 0, 0, NULL };
    return fnw_engine_new(h->loop, op, spec, &env, &h->e, &h->err);
}

static inline void h_create(harness *h, const char *op_name, const fnw_spec *spec, const char *const *kv)
{
    int rc = h_create_opts(h, op_name, spec, kv);
    ck_assert_msg(rc == 0, "create failed: %s", h->err.msg);
}

static inline void h_feed(harness *h);

static inline void h_emit(void *user, const fnw_record *out)
{
    harness *h = user;
    if (h->n_out == h->cap_out) {
        h->cap_out = h->cap_out ? h->cap_out * 2 : 1024;
        h->outs = realloc(h->outs, h->cap_out * sizeof *h->outs);
        ck_assert_ptr_nonnull(h->outs);
    }
    h_out *o = &h->outs[h->n_out++];
    o->is_null = out->data == NULL;
    ck_assert(o->is_null || out->len == 4);
    o->v = o->is_null ? 0 : h_get_int(out->data);
    o->ts = out->timestamp;
    o->wm = out->watermark;
    o->at = h_now() - h->t0;
    o->iter = ev_iteration(h->loop);
    if (h->on_emit)
        h->on_emit(h, out);
}

static inline void h_ready(void *user)
{
    harness *h = user;
    h->ready_calls++;
    h_feed(h);
}

static inline void h_failed(void *user, const char *message)
{
    harness *h = user;
    h->failed = 1;
    snprintf(h->fail_msg, sizeof h->fail_msg, "%s", message);
    ev_break(h->loop, EVBREAK_ALL);
}

static inline void h_finished(void *user)
{
    harness *h = user;
    h->finished = 1;
    h->t_finished = h_now() - h->t0;
    h->finished_iter = ev_iteration(h->loop);
    ev_break(h->loop, EVBREAK_ALL);
}

static inline void h_push_one(harness *h)
{
    uint8_t b[4];
    size_t i = h->next++;
    h_put_int(b, h->vals[i]);
    fnw_record r = { h->ts[i], h->wm[i], b, 4 };
    fnw_engine_push(h->e, &r);
}

static inline void h_feed(harness *h)
{
    while (!h->failed && h->next < h->n_in && fnw_engine_has_space(h->e))
        h_push_one(h);
    if (!h->failed && h->next == h->n_in && h->auto_finish && !h->finish_called) {
        h->finish_called = 1;
        fnw_engine_finish(h->e);
    }
}

static inline void h_guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    harness *h = w->data;
    (void)revents;
    h->guard_fired = 1;
    ev_break(loop, EVBREAK_ALL);
}

static inline fnw_engine_sink h_sink(harness *h)
{
    fnw_engine_sink s = { h, h_emit, h_ready, h_failed, h_finished, NULL, NULL, NULL, NULL };
    return s;
}

/* Starts a bundle; does not run the loop. */
static inline void h_begin(harness *h, const char *label)
{
    fnw_engine_sink s = h_sink(h);
    h->n_out = 0;
    h->finished = h->failed = h->guard_fired = 0;
    h->finish_called = 0;
    h->ready_calls = 0;
    h->fail_msg[0] = '\0';
    h->next = 0;
    ev_now_update(h->loop);
    h->t0 = ev_now(h->loop);
    fnw_engine_start(h->e, &s, label);
}

/* Runs the loop until finished/failed, at most guard_s seconds. */
static inline void h_loop(harness *h, double guard_s)
{
    ev_timer_init(&h->guard, h_guard_cb, guard_s, 0.);
    h->guard.data = h;
    ev_timer_start(h->loop, &h->guard);
    if (!h->finished && !h->failed)
        ev_run(h->loop, 0);
    ev_timer_stop(h->loop, &h->guard);
}

/* One whole bundle. */
static inline void h_run(harness *h, double guard_s)
{
    h_begin(h, "b1");
    h_feed(h);
    h_loop(h, guard_s);
    ck_assert_msg(!h->guard_fired, "the bundle did not end within %.1f s (pushed %zu/%zu, outputs %zu)",
                  guard_s, h->next, h->n_in, h->n_out);
}

static inline void h_run_ok(harness *h, double guard_s)
{
    h_run(h, guard_s);
    ck_assert_msg(!h->failed, "bundle failed: %s", h->fail_msg);
    ck_assert(h->finished);
}

/* Runs the loop for s seconds regardless of the engine. */
static inline void h_sleep_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

static inline void h_run_for(harness *h, double s)
{
    ev_timer t;
    ev_timer_init(&t, h_sleep_cb, s, 0.);
    ev_timer_start(h->loop, &t);
    ev_run(h->loop, 0);
    ev_timer_stop(h->loop, &t);
}

/* Runs the loop until cond(h) holds, failing the test after guard_s. */
static inline void h_run_until(harness *h, int (*cond)(const harness *h), double guard_s)
{
    ev_timer_init(&h->guard, h_guard_cb, guard_s, 0.);
    h->guard.data = h;
    h->guard_fired = 0;
    ev_timer_start(h->loop, &h->guard);
    while (!cond(h) && !h->guard_fired)
        ev_run(h->loop, EVRUN_ONCE);
    ev_timer_stop(h->loop, &h->guard);
    ck_assert_msg(!h->guard_fired, "the awaited condition did not hold within %.1f s (outputs %zu)",
                  guard_s, h->n_out);
}

/* An order check instead of an upper bound on time: starts a timer s
 * seconds from the loop's current time that records how many outputs were
 * emitted when it fires (h->mark_n_out). libev runs timers that are due in
 * the same iteration in expiry order, so an output whose timer was due
 * before the mark is counted however late the loop wakes up. Start it after
 * h_begin() and before feeding, so both share the loop time of h_begin(). */
static inline void h_mark_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    harness *h = w->data;
    (void)loop;
    (void)revents;
    h->mark_n_out = (long)h->n_out;
}

static inline void h_mark(harness *h, double s)
{
    h->mark_n_out = -1;
    ev_timer_init(&h->mark, h_mark_cb, s, 0.);
    h->mark.data = h;
    ev_timer_start(h->loop, &h->mark);
}

/* Calls running at once on average: the sum of call durations over the
 * bundle's time. A loaded machine stretches both alike. */
static inline double h_concurrency(const harness *h)
{
    const fnw_engine_metrics *m = fnw_engine_metrics_get(h->e);
    return h->t_finished > 0 ? (double)m->call_duration_ms.sum / (h->t_finished * 1000.) : 0;
}

static inline const fnw_engine_metrics *h_m(const harness *h)
{
    return fnw_engine_metrics_get(h->e);
}

static inline void h_free(harness *h)
{
    ev_timer_stop(h->loop, &h->mark);
    fnw_engine_free(h->e);
    fnw_type_free(h->type);
    fnw_handoff_loop_free(h->loop);   /* blocking operations made the loop's hand-off */
    ev_loop_destroy(h->loop);
    free(h->vals);
    free(h->ts);
    free(h->wm);
    free(h->outs);
}

#endif
