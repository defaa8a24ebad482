/* tests/unit/runtime/test_chain.c — a fused operator's steps run as one
 * chain (runtime/chain.h) on a real ev_loop, with real engines and the
 * built-in echo/identity operations: order kept across ORDERED steps, no
 * result crossing a watermark across UNORDERED steps, a failing middle step
 * (one failed, nothing after it, the other steps' calls cancelled, the
 * engines reusable), empty results in the middle, finish with records in
 * flight in every step (a middle batch step flushes only once its upstream
 * has drained), flow control bounded by the upstream's capacity, abort, and
 * a one-step chain handing outputs straight to the caller.
 *
 * Values are INTs (4 bytes big-endian) 0..n-1 with timestamps 1000+i. No
 * assertion depends on how fast a loaded machine wakes the loop: the guard
 * timers only catch hangs. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/builtins.h"
#include "codecs/type.h"
#include "runtime/chain.h"
#include "runtime/engine.h"

#define MAX_STEPS 4

typedef struct out_rec {
    int32_t v;
    int64_t ts, wm;
} out_rec;

typedef struct ch {
    struct ev_loop *loop;
    fnw_registry reg;
    fnw_type *type;
    fnw_engine *e[MAX_STEPS];
    int32_t cap[MAX_STEPS];
    size_t n;
    fnw_chain *c;
    fnw_error err;
    /* inputs */
    size_t n_in, next;
    int64_t *wm;
    int finish_called;
    /* what the chain said */
    out_rec *outs;
    size_t n_out, cap_out;
    int finished, failed, ready_calls, after_end;
    size_t outs_at_finished;
    char fail_msg[FNW_ERROR_MAX];
    /* the most inputs waiting for capacity (overflow) seen in each step */
    size_t max_waiting[MAX_STEPS];
    int guard_fired;
    ev_timer guard;
} ch;

static const char *const NONE[] = { NULL };

static void put_int(uint8_t b[4], int32_t v)
{
    uint32_t u = (uint32_t)v;
    b[0] = (uint8_t)(u >> 24);
    b[1] = (uint8_t)(u >> 16);
    b[2] = (uint8_t)(u >> 8);
    b[3] = (uint8_t)u;
}

static int32_t get_int(const uint8_t *b)
{
    return (int32_t)(((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3]);
}

/* A synchronous operation that drops odd values: an empty result for every
 * other input. */
static void drop_odd_invoke(void *state, fnw_call *call)
{
    const fnw_record *in = fnw_call_input(call, 0);
    if (in->data && in->len == 4 && get_int(in->data) % 2 == 0)
        fnw_call_emit(call, 0, in->data, in->len);
    fnw_call_complete(call);
}

static const fnw_operation drop_odd_op = {
    .name = "drop_odd", .sync = 1, .invoke = drop_odd_invoke,
};

static void ch_init(ch *h)
{
    memset(h, 0, sizeof *h);
    h->loop = ev_loop_new(EVFLAG_AUTO);
    ck_assert_ptr_nonnull(h->loop);
    fnw_registry_init(&h->reg);
    fnw_builtins_register(&h->reg);
    h->type = fnw_type_new(FNW_INT);
    ck_assert_ptr_nonnull(h->type);
}

static fnw_spec spec(int unordered, int32_t capacity)
{
    fnw_spec s;
    memset(&s, 0, sizeof s);
    s.unordered = unordered;
    s.capacity = capacity;
    return s;
}

/* Adds step i (transform "s<i>") running op (or the registry's op_name)
 * with options "k=v". */
static void ch_step_op(ch *h, const fnw_operation *op, const char *op_name, fnw_spec s,
                       const char *const *kv)
{
    ck_assert_uint_lt(h->n, MAX_STEPS);
    fnw_option items[8];
    char keys[8][32], tid[8];
    size_t k = 0;
    for (; kv[k]; k++) {
        const char *eq = strchr(kv[k], '=');
        snprintf(keys[k], sizeof keys[k], "%.*s", (int)(eq - kv[k]), kv[k]);
        items[k].key = keys[k];
        items[k].value = eq + 1;
    }
    fnw_options opts = { k, items };
    if (!op) {
        op = fnw_registry_find(&h->reg, op_name, &h->err);
        ck_assert_msg(op != NULL, "%s", h->err.msg);
    }
    snprintf(tid, sizeof tid, "s%zu", h->n);
    fnw_op_env env = { h->loop, &opts, h->type, h->type, tid, s.batched, 0, 0, NULL };
    int rc = fnw_engine_new(h->loop, op, &s, &env, &h->e[h->n], &h->err);
    ck_assert_msg(rc == 0, "step %zu: %s", h->n, h->err.msg);
    h->cap[h->n] = s.capacity ? s.capacity : 100;
    h->n++;
}

static void ch_step(ch *h, const char *op_name, fnw_spec s, const char *const *kv)
{
    ch_step_op(h, NULL, op_name, s, kv);
}

static void ch_build(ch *h)
{
    h->c = fnw_chain_new(h->e, h->n);
    ck_assert_ptr_nonnull(h->c);
    ck_assert_uint_eq(fnw_chain_steps(h->c), h->n);
    for (size_t i = 0; i < h->n; i++)
        ck_assert_ptr_eq(fnw_chain_engine(h->c, i), h->e[i]);
}

static void ch_inputs(ch *h, size_t n)
{
    free(h->wm);
    h->n_in = n;
    h->next = 0;
    h->wm = calloc(n ? n : 1, sizeof *h->wm);
    for (size_t i = 0; i < n; i++)
        h->wm[i] = INT64_MIN;
}

static void sample_waiting(ch *h)
{
    double now = ev_now(h->loop);
    for (size_t i = 0; i < h->n; i++) {
        fnw_engine_stats st;
        fnw_engine_stats_get(h->e[i], now, &st);
        if (st.waiting > h->max_waiting[i])
            h->max_waiting[i] = st.waiting;
    }
}

static void ch_feed(ch *h);

static void on_emit(void *user, const fnw_record *out)
{
    ch *h = user;
    if (h->finished || h->failed)
        h->after_end++;
    if (h->n_out == h->cap_out) {
        h->cap_out = h->cap_out ? h->cap_out * 2 : 256;
        h->outs = realloc(h->outs, h->cap_out * sizeof *h->outs);
        ck_assert_ptr_nonnull(h->outs);
    }
    ck_assert(out->data && out->len == 4);
    out_rec *o = &h->outs[h->n_out++];
    o->v = get_int(out->data);
    o->ts = out->timestamp;
    o->wm = out->watermark;
    sample_waiting(h);
}

static void on_ready(void *user)
{
    ch *h = user;
    if (h->finished || h->failed)
        h->after_end++;
    h->ready_calls++;
    ck_assert(fnw_chain_has_space(h->c));
    ch_feed(h);
}

static void on_failed(void *user, const char *message)
{
    ch *h = user;
    if (h->finished || h->failed)
        h->after_end++;
    h->failed++;
    snprintf(h->fail_msg, sizeof h->fail_msg, "%s", message);
    ev_break(h->loop, EVBREAK_ALL);
}

static void on_finished(void *user)
{
    ch *h = user;
    if (h->finished || h->failed)
        h->after_end++;
    h->finished++;
    h->outs_at_finished = h->n_out;
    ev_break(h->loop, EVBREAK_ALL);
}

static void ch_feed(ch *h)
{
    while (!h->failed && h->next < h->n_in && fnw_chain_has_space(h->c)) {
        uint8_t b[4];
        size_t i = h->next++;
        put_int(b, (int32_t)i);
        fnw_record r = { 1000 + (int64_t)i, h->wm[i], b, 4 };
        fnw_chain_push(h->c, &r);
        sample_waiting(h);
    }
    if (!h->failed && h->next == h->n_in && !h->finish_called) {
        h->finish_called = 1;
        fnw_chain_finish(h->c);
    }
}

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    ch *h = w->data;
    h->guard_fired = 1;
    ev_break(loop, EVBREAK_ALL);
}

static void ch_begin(ch *h, const char *label)
{
    h->n_out = 0;
    h->finished = h->failed = h->ready_calls = h->after_end = 0;
    h->finish_called = 0;
    h->fail_msg[0] = '\0';
    h->next = 0;
    memset(h->max_waiting, 0, sizeof h->max_waiting);
    fnw_engine_sink s = { h, on_emit, on_ready, on_failed, on_finished, NULL, NULL, NULL, NULL };
    fnw_chain_start(h->c, &s, label);
}

/* Runs the loop until finished or failed (or guard_s, which fails the test). */
static void ch_loop(ch *h, double guard_s)
{
    ev_timer_init(&h->guard, guard_cb, guard_s, 0.);
    h->guard.data = h;
    h->guard_fired = 0;
    ev_timer_start(h->loop, &h->guard);
    if (!h->finished && !h->failed)
        ev_run(h->loop, 0);
    ev_timer_stop(h->loop, &h->guard);
    ck_assert_msg(!h->guard_fired, "the bundle did not end within %.1f s (pushed %zu/%zu, outputs %zu)",
                  guard_s, h->next, h->n_in, h->n_out);
}

static void ch_run(ch *h, double guard_s)
{
    ch_begin(h, "b1");
    ch_feed(h);
    ch_loop(h, guard_s);
}

static void ch_run_ok(ch *h, double guard_s)
{
    ch_run(h, guard_s);
    ck_assert_msg(!h->failed, "bundle failed: %s", h->fail_msg);
    ck_assert_int_eq(h->finished, 1);
}

static void stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    ev_break(loop, EVBREAK_ONE);
}

/* Runs the loop for s seconds whatever happens. */
static void ch_run_for(ch *h, double s)
{
    ev_timer t;
    ev_timer_init(&t, stop_cb, s, 0.);
    ev_timer_start(h->loop, &t);
    ev_run(h->loop, 0);
    ev_timer_stop(h->loop, &t);
}

static void assert_idle(ch *h)
{
    for (size_t i = 0; i < h->n; i++) {
        fnw_engine_stats st;
        fnw_engine_stats_get(h->e[i], ev_now(h->loop), &st);
        ck_assert_msg(st.calls == 0 && st.queued == 0 && st.waiting == 0 && st.batching == 0,
                      "step %zu still holds work: %zu call(s), %zu queued, %zu waiting, %zu batching", i,
                      st.calls, st.queued, st.waiting, st.batching);
    }
}

static void assert_in_order(const ch *h, size_t n)
{
    ck_assert_uint_eq(h->n_out, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(h->outs[i].v, (int32_t)i);
        ck_assert_int_eq(h->outs[i].ts, 1000 + (int64_t)i);
    }
}

static void ch_free(ch *h)
{
    fnw_chain_free(h->c);
    for (size_t i = 0; i < h->n; i++)
        fnw_engine_free(h->e[i]);
    fnw_type_free(h->type);
    ev_loop_destroy(h->loop);
    free(h->wm);
    free(h->outs);
}

/* ---- ordering ------------------------------------------------------------------------ */

START_TEST(test_ordered_across_steps)
{
    ch h;
    ch_init(&h);
    static const char *const j1[] = { "jitter_ms=6", "seed=1", NULL };
    static const char *const j2[] = { "jitter_ms=6", "seed=2", NULL };
    static const char *const j3[] = { "jitter_ms=6", "seed=3", NULL };
    ch_step(&h, "echo", spec(0, 20), j1);
    ch_step(&h, "echo", spec(0, 20), j2);
    ch_step(&h, "echo", spec(0, 20), j3);
    ch_build(&h);
    ch_inputs(&h, 300);
    ch_run_ok(&h, 30);
    assert_in_order(&h, 300);
    ck_assert_uint_eq(h.outs_at_finished, 300);
    for (size_t i = 0; i < 3; i++) {
        const fnw_engine_metrics *m = fnw_engine_metrics_get(h.e[i]);
        ck_assert_int_eq(m->records_in, 300);
        ck_assert_int_eq(m->records_out, 300);
        ck_assert_int_eq(m->calls, 300);
    }
    ck_assert_int_eq(h.after_end, 0);
    assert_idle(&h);
    ch_free(&h);
}
END_TEST

/* UNORDERED steps reorder, but no output crosses a watermark: when the
 * first output carrying watermark w comes out of the last step, every input
 * pushed before w has come out already. */
START_TEST(test_unordered_across_steps_keeps_watermarks)
{
    ch h;
    ch_init(&h);
    static const char *const j1[] = { "jitter_ms=8", "seed=11", NULL };
    static const char *const j2[] = { "jitter_ms=8", "seed=12", NULL };
    static const char *const j3[] = { "jitter_ms=8", "seed=13", NULL };
    ch_step(&h, "echo", spec(1, 50), j1);
    ch_step(&h, "echo", spec(1, 50), j2);
    ch_step(&h, "echo", spec(1, 50), j3);
    ch_build(&h);
    ch_inputs(&h, 400);
    for (size_t i = 0; i < 400; i++)
        h.wm[i] = (int64_t)(i / 50);
    ch_run_ok(&h, 30);
    ck_assert_uint_eq(h.n_out, 400);
    unsigned char seen[400] = {0};
    size_t inversions = 0;
    for (size_t i = 0; i < h.n_out; i++) {
        int32_t v = h.outs[i].v;
        ck_assert(v >= 0 && v < 400);
        ck_assert_msg(!seen[v], "value %d came out twice", v);
        seen[v] = 1;
        ck_assert_int_eq(h.outs[i].ts, 1000 + v);
        ck_assert_int_eq(h.outs[i].wm, v / 50);
        if (i > 0) {
            ck_assert_msg(h.outs[i].wm >= h.outs[i - 1].wm, "output %zu (value %d, watermark %lld) came after "
                          "one with watermark %lld", i, v, (long long)h.outs[i].wm, (long long)h.outs[i - 1].wm);
            if (v < h.outs[i - 1].v)
                inversions++;
        }
        /* everything before this watermark's segment is out */
        ck_assert_uint_ge(i, (size_t)(h.outs[i].wm * 50));
    }
    ck_assert_msg(inversions > 0, "UNORDERED steps with jitter emitted in input order: the test shows nothing");
    ch_free(&h);
}
END_TEST

/* ---- failure ----------------------------------------------------------------------------- */

START_TEST(test_failing_middle_step)
{
    ch h;
    ch_init(&h);
    static const char *const slow[] = { "delay_ms=5", NULL };
    static const char *const failing[] = { "fail_every=7", "fail_message=boom in the middle", NULL };
    static const char *const slower[] = { "delay_ms=40", NULL };
    ch_step(&h, "echo", spec(0, 20), slow);
    ch_step(&h, "echo", spec(0, 20), failing);
    ch_step(&h, "echo", spec(0, 20), slower);
    ch_build(&h);
    ch_inputs(&h, 200);
    ch_run(&h, 10);
    ck_assert_int_eq(h.failed, 1);
    ck_assert_int_eq(h.finished, 0);
    ck_assert_msg(strstr(h.fail_msg, "boom in the middle") && strstr(h.fail_msg, "transform 's1'") &&
                  strstr(h.fail_msg, "input 6"), "message: %s", h.fail_msg);
    ck_assert_uint_lt(h.next, 200);
    /* the other steps were stopped: nothing is in flight, nothing follows */
    assert_idle(&h);
    size_t outs = h.n_out;
    ch_run_for(&h, 0.1);
    ck_assert_uint_eq(h.n_out, outs);
    ck_assert_int_eq(h.after_end, 0);
    ck_assert_int_eq(fnw_chain_push(h.c, &(fnw_record){ 1, INT64_MIN, (const uint8_t *)"\0\0\0\1", 4 }), -1);

    /* the engines carry on with the next bundle (invocations 8..12 of s1 pass) */
    ch_inputs(&h, 5);
    ch_run_ok(&h, 10);
    assert_in_order(&h, 5);
    ck_assert_int_eq(h.after_end, 0);
    ch_free(&h);
}
END_TEST

/* The first step fails while later steps hold records: one failed, naming
 * the first step; the later steps' calls are cancelled. */
START_TEST(test_failing_first_step_cancels_downstream)
{
    ch h;
    ch_init(&h);
    static const char *const failing[] = { "fail_every=30", "delay_ms=2", NULL };
    static const char *const slow[] = { "delay_ms=500", NULL };
    ch_step(&h, "echo", spec(1, 10), failing);
    ch_step(&h, "echo", spec(1, 100), slow);
    ch_build(&h);
    ch_inputs(&h, 100);
    ch_run(&h, 10);
    ck_assert_int_eq(h.failed, 1);
    ck_assert_msg(strstr(h.fail_msg, "transform 's0'"), "message: %s", h.fail_msg);
    ck_assert_uint_eq(h.n_out, 0);
    assert_idle(&h);
    ch_run_for(&h, 0.05);
    ck_assert_int_eq(h.after_end, 0);
    ch_free(&h);
}
END_TEST

/* ---- empty results ------------------------------------------------------------------------ */

START_TEST(test_empty_results_in_the_middle)
{
    ch h;
    ch_init(&h);
    static const char *const j1[] = { "jitter_ms=3", "seed=5", NULL };
    static const char *const j2[] = { "jitter_ms=3", "seed=6", NULL };
    ch_step(&h, "echo", spec(0, 16), j1);
    ch_step_op(&h, &drop_odd_op, NULL, spec(0, 16), NONE);
    ch_step(&h, "echo", spec(0, 16), j2);
    ch_build(&h);
    ch_inputs(&h, 200);
    ch_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 100);
    for (size_t i = 0; i < 100; i++) {
        ck_assert_int_eq(h.outs[i].v, (int32_t)(2 * i));
        ck_assert_int_eq(h.outs[i].ts, 1000 + 2 * (int64_t)i);
    }
    const fnw_engine_metrics *m1 = fnw_engine_metrics_get(h.e[1]), *m2 = fnw_engine_metrics_get(h.e[2]);
    ck_assert_int_eq(m1->records_in, 200);
    ck_assert_int_eq(m1->records_out, 100);
    ck_assert_int_eq(m1->empty_results, 100);
    ck_assert_int_eq(m2->records_in, 100);
    ck_assert_int_eq(m2->records_out, 100);
    ch_free(&h);
}
END_TEST

/* A middle step that emits nothing at all: the bundle still finishes. */
START_TEST(test_all_empty_in_the_middle)
{
    ch h;
    ch_init(&h);
    static const char *const slow[] = { "delay_ms=2", NULL };
    static const char *const none[] = { "repeat=0", "delay_ms=3", NULL };
    ch_step(&h, "echo", spec(1, 8), slow);
    ch_step(&h, "echo", spec(1, 8), none);
    ch_step(&h, "echo", spec(1, 8), slow);
    ch_build(&h);
    ch_inputs(&h, 50);
    ch_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 0);
    ck_assert_int_eq(fnw_engine_metrics_get(h.e[1])->empty_results, 50);
    ck_assert_int_eq(fnw_engine_metrics_get(h.e[2])->records_in, 0);
    assert_idle(&h);
    ch_free(&h);
}
END_TEST

/* ---- the end of the bundle ------------------------------------------------------------------ */

/* Input ends while every step holds records. The middle step batches with
 * no batch timeout, so its partial batch leaves only when it is finished:
 * had the chain finished it before the first step drained, it would have
 * sent a batch early and refused what came after. One batch of all 40, every
 * output before finished, nothing held after. */
START_TEST(test_finish_with_records_in_flight_in_every_step)
{
    ch h;
    ch_init(&h);
    static const char *const slow[] = { "delay_ms=30", "jitter_ms=10", "seed=7", NULL };
    static const char *const slower[] = { "delay_ms=20", NULL };
    ch_step(&h, "echo", spec(1, 10), slow);
    fnw_spec b = spec(1, 64);
    b.batched = 1;
    b.batch_size = 64;
    b.timeout_ms = 5000;
    ch_step(&h, "echo", b, NONE);
    ch_step(&h, "echo", spec(1, 5), slower);
    ch_build(&h);
    ch_inputs(&h, 40);
    ch_run_ok(&h, 20);
    ck_assert_uint_eq(h.outs_at_finished, 40);
    ck_assert_uint_eq(h.n_out, 40);
    unsigned char seen[40] = {0};
    for (size_t i = 0; i < 40; i++) {
        ck_assert(h.outs[i].v >= 0 && h.outs[i].v < 40 && !seen[h.outs[i].v]);
        seen[h.outs[i].v] = 1;
    }
    const fnw_engine_metrics *m1 = fnw_engine_metrics_get(h.e[1]);
    ck_assert_int_eq(m1->batches, 1);
    ck_assert_int_eq(m1->batch_size.max, 40);
    assert_idle(&h);
    ch_run_for(&h, 0.05);
    ck_assert_int_eq(h.after_end, 0);
    ck_assert_int_eq(h.finished, 1);
    ch_free(&h);
}
END_TEST

/* An empty bundle: finish cascades through every step at once. */
START_TEST(test_empty_bundle)
{
    ch h;
    ch_init(&h);
    ch_step(&h, "echo", spec(0, 4), NONE);
    ch_step(&h, "identity", spec(0, 4), NONE);
    ch_step(&h, "echo", spec(1, 4), NONE);
    ch_build(&h);
    ch_inputs(&h, 0);
    ch_run_ok(&h, 5);
    ck_assert_uint_eq(h.n_out, 0);
    ch_free(&h);
}
END_TEST

/* ---- flow control ---------------------------------------------------------------------------- */

/* A slow narrow step behind a fast wide one: the caller is held back
 * (ready resumes it), and what waits for the slow step's capacity never
 * exceeds what the fast step can hold in flight. */
START_TEST(test_flow_control_is_bounded_by_the_upstream)
{
    ch h;
    ch_init(&h);
    static const char *const fast[] = { "delay_ms=1", NULL };
    static const char *const slow[] = { "delay_ms=10", NULL };
    ch_step(&h, "echo", spec(0, 8), fast);
    ch_step(&h, "echo", spec(0, 4), slow);
    ch_build(&h);
    ch_inputs(&h, 120);
    ch_run_ok(&h, 30);
    assert_in_order(&h, 120);
    ck_assert_int_gt(h.ready_calls, 0);
    ck_assert_uint_eq(h.max_waiting[0], 0);
    ck_assert_uint_gt(h.max_waiting[1], 0);
    ck_assert_uint_le(h.max_waiting[1], (size_t)h.cap[0]);
    ck_assert_int_le(fnw_engine_metrics_get(h.e[1])->inflight_high_water, 4);
    ch_free(&h);
}
END_TEST

/* ---- abort ------------------------------------------------------------------------------------- */

START_TEST(test_abort_with_records_in_flight)
{
    ch h;
    ch_init(&h);
    static const char *const slow[] = { "delay_ms=30", NULL };
    ch_step(&h, "echo", spec(1, 10), slow);
    ch_step(&h, "echo", spec(1, 10), slow);
    ch_build(&h);
    ch_inputs(&h, 10);
    ch_begin(&h, "b1");
    ch_feed(&h);
    ch_run_for(&h, 0.045);      /* the first step's calls have ended, the second's not */
    fnw_chain_abort(h.c);
    assert_idle(&h);
    size_t outs = h.n_out;
    ch_run_for(&h, 0.1);
    ck_assert_uint_eq(h.n_out, outs);
    ck_assert_int_eq(h.finished, 0);
    ck_assert_int_eq(h.failed, 0);

    ch_inputs(&h, 6);
    ch_run_ok(&h, 10);
    ck_assert_uint_eq(h.n_out, 6);
    ch_free(&h);
}
END_TEST

/* ---- one step ----------------------------------------------------------------------------------- */

START_TEST(test_one_step)
{
    ch h;
    ch_init(&h);
    ch_step(&h, "identity", spec(0, 0), NONE);
    ch_build(&h);
    ch_inputs(&h, 100);
    ch_run_ok(&h, 5);
    assert_in_order(&h, 100);
    ch_free(&h);
}
END_TEST

START_TEST(test_new_needs_a_step)
{
    ck_assert_ptr_null(fnw_chain_new(NULL, 0));
    fnw_chain_free(NULL);
}
END_TEST

static Suite *chain_suite(void)
{
    Suite *s = suite_create("chain");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ordered_across_steps);
    tcase_add_test(tc, test_unordered_across_steps_keeps_watermarks);
    tcase_add_test(tc, test_failing_middle_step);
    tcase_add_test(tc, test_failing_first_step_cancels_downstream);
    tcase_add_test(tc, test_empty_results_in_the_middle);
    tcase_add_test(tc, test_all_empty_in_the_middle);
    tcase_add_test(tc, test_finish_with_records_in_flight_in_every_step);
    tcase_add_test(tc, test_empty_bundle);
    tcase_add_test(tc, test_flow_control_is_bounded_by_the_upstream);
    tcase_add_test(tc, test_abort_with_records_in_flight);
    tcase_add_test(tc, test_one_step);
    tcase_add_test(tc, test_new_needs_a_step);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(chain_suite());
}
