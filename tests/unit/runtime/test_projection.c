/* tests/unit/runtime/test_projection.c — a Table operator's functions run
 * as one projection (runtime/projection.h) on a real ev_loop, with real
 * engines and a test operation ("probe") whose behaviour per input is set
 * by options: two output columns filled in input order; a nested call
 * f(g(x)) whose argument row holds g's result, constants (one null) and an
 * input field, byte for byte; input order kept when a node runs UNORDERED
 * with varying delays and in batch mode; no result -> a null column, two
 * -> the bundle fails naming the function; unwrap of ROW<result T> with a
 * null field; a table function's 0, 1 and 3 rows per input, each input
 * ended by 0x00; the ring bounds the rows in flight (has_space false when
 * full, ready once it drains); finish of nested nodes (the parent's batch
 * flushes only after its child finished); a failing node aborts the others
 * (sink.failed once, nothing after); abort; a projection reused after
 * finish and after failure; synchronous nodes (rows end inside push); a
 * null nested result as a null argument; an empty bundle; a full node
 * engine stopping input; the sink freeing the projection inside finished
 * and failed; TIMEOUT_EMPTY as a null; a table function calling a scalar
 * function, and a null where its row should be.
 *
 * Input rows are ROW<x INT, y INT> (mask byte, x, y; big-endian), x = i and
 * y = 1000 + i for row i (y null where asked). Guard timers catch hangs
 * only: no assertion depends on how fast a loaded machine wakes the loop. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/ser.h"
#include "codecs/type.h"
#include "runtime/engine.h"
#include "runtime/projection.h"

#define MAX_NODES 4
#define MAX_LOG 4096
#define MAX_HELD 1024

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

/* ---- the probe operation ------------------------------------------------------------
 * Reads x, field 0 of its argument row (mask byte, then 4 bytes; a null x
 * gives a null result), and for each input emits x * mul + add (+ 1000 per
 * repeat) as INT, or with wrap=1 as ROW<result INT> (null where
 * null_mod divides x). Options: mul, add, wrap, null_mod; none_at / dup_at
 * (no result / two results for that x); fanout=1 ({0,1,3}[x % 3] results);
 * fail_at (the call fails); delay_ms (times ((x * 7) % 5): varying
 * delays); hold=1 (calls wait for release_held()). Every argument row and
 * every call's size is logged. */

typedef struct log_entry {
    char tid[16];
    uint8_t b[64];
    size_t len;
    size_t call_size; /* inputs in the call that carried it */
} log_entry;

static log_entry g_log[MAX_LOG];
static size_t g_nlog;
/* x in the order the probes emitted their results (per tid "n<i>") */
static int32_t g_emit_order[MAX_NODES][MAX_LOG];
static size_t g_nemit[MAX_NODES];

typedef struct probe probe;
typedef struct ptimer {
    ev_timer w;
    probe *st;
    fnw_call *call;
} ptimer;

struct probe {
    struct ev_loop *loop;
    char tid[16];
    int node;
    int64_t mul, add, wrap, null_mod, none_at, dup_at, fanout, fail_at, delay_ms, hold;
};

static fnw_call *g_held[MAX_HELD];
static probe *g_held_st[MAX_HELD];
static size_t g_nheld;

static const char *const probe_known[] = { "mul",    "add",     "wrap",     "null_mod", "none_at", "dup_at",
                                           "fanout", "fail_at", "delay_ms", "hold",     NULL };

static int probe_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    probe *st = calloc(1, sizeof *st);
    ck_assert_ptr_nonnull(st);
    st->loop = env->loop;
    snprintf(st->tid, sizeof st->tid, "%s", env->transform_id);
    st->node = st->tid[1] - '0';
    const fnw_options *o = env->options;
    if (fnw_options_check_known(o, probe_known, "probe", err) || fnw_options_int(o, "mul", 1, -100, 100, &st->mul, err) ||
        fnw_options_int(o, "add", 0, -100000, 100000, &st->add, err) ||
        fnw_options_int(o, "wrap", 0, 0, 1, &st->wrap, err) ||
        fnw_options_int(o, "null_mod", 0, 0, 1000, &st->null_mod, err) ||
        fnw_options_int(o, "none_at", -1, -1, 1 << 20, &st->none_at, err) ||
        fnw_options_int(o, "dup_at", -1, -1, 1 << 20, &st->dup_at, err) ||
        fnw_options_int(o, "fanout", 0, 0, 1, &st->fanout, err) ||
        fnw_options_int(o, "fail_at", -1, -1, 1 << 20, &st->fail_at, err) ||
        fnw_options_int(o, "delay_ms", 0, 0, 1000, &st->delay_ms, err) ||
        fnw_options_int(o, "hold", 0, 0, 1, &st->hold, err)) {
        free(st);
        return -1;
    }
    *state = st;
    return 0;
}

static void probe_close(void *state)
{
    free(state);
}

/* x of an argument row; 0 when it is null. */
static int arg_x(const fnw_record *in, int32_t *x)
{
    if (!in->data || in->len < 1 || (in->data[0] & 0x20))
        return 0;
    ck_assert_uint_ge(in->len, 5);
    *x = get_int(in->data + 1);
    return 1;
}

static void probe_emit_one(probe *st, fnw_call *call, size_t i, int has_x, int32_t x, int r)
{
    int32_t v = x * (int32_t)st->mul + (int32_t)st->add + r * 1000;
    uint8_t b[5];
    if (st->node >= 0 && st->node < MAX_NODES && g_nemit[st->node] < MAX_LOG)
        g_emit_order[st->node][g_nemit[st->node]++] = x;
    if (!has_x) {
        fnw_call_emit(call, i, NULL, 0);
    } else if (st->wrap) {
        if (st->null_mod && x % st->null_mod == 0) {
            b[0] = 0x20;
            fnw_call_emit(call, i, b, 1);
        } else {
            b[0] = 0;
            put_int(b + 1, v);
            fnw_call_emit(call, i, b, 5);
        }
    } else {
        put_int(b, v);
        fnw_call_emit(call, i, b, 4);
    }
}

static void probe_settle(probe *st, fnw_call *call)
{
    size_t n = fnw_call_size(call);
    for (size_t i = 0; i < n; i++) {
        int32_t x = 0;
        int has_x = arg_x(fnw_call_input(call, i), &x);
        if (has_x && x == st->fail_at) {
            fnw_call_fail_after(call, FNW_CALL_NO_RETRY, "probe: failed at %d", (int)x);
            return;
        }
    }
    for (size_t i = 0; i < n; i++) {
        int32_t x = 0;
        int has_x = arg_x(fnw_call_input(call, i), &x);
        static const int fan[3] = { 0, 1, 3 };
        int k = st->fanout ? fan[(has_x ? x : 0) % 3] : has_x && x == st->none_at ? 0 : has_x && x == st->dup_at ? 2 : 1;
        for (int r = 0; r < k; r++)
            probe_emit_one(st, call, i, has_x, x, st->fanout ? r : 0);
    }
    fnw_call_complete(call);
}

static void probe_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    ptimer *t = w->data;
    fnw_call *call = t->call;
    probe *st = t->st;
    fnw_call_set_op_data(call, NULL);
    free(t);
    probe_settle(st, call);
}

static void probe_invoke(void *state, fnw_call *call)
{
    probe *st = state;
    size_t n = fnw_call_size(call);
    for (size_t i = 0; i < n; i++) {
        const fnw_record *in = fnw_call_input(call, i);
        ck_assert_uint_lt(g_nlog, MAX_LOG);
        log_entry *l = &g_log[g_nlog++];
        snprintf(l->tid, sizeof l->tid, "%s", st->tid);
        ck_assert_uint_le(in->len, sizeof l->b);
        l->len = in->data ? in->len : 0;
        if (l->len)
            memcpy(l->b, in->data, l->len);
        l->call_size = n;
    }
    if (st->hold) {
        ck_assert_uint_lt(g_nheld, MAX_HELD);
        g_held_st[g_nheld] = st;
        g_held[g_nheld++] = call;
        fnw_call_set_op_data(call, &g_held[g_nheld - 1]);
        return;
    }
    int32_t x = 0;
    double delay = 0;
    if (st->delay_ms && arg_x(fnw_call_input(call, 0), &x))
        delay = (double)(((x * 7) % 5) * st->delay_ms) / 1000.;
    if (delay <= 0) {
        probe_settle(st, call);
        return;
    }
    ptimer *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    t->st = st;
    t->call = call;
    ev_timer_init(&t->w, probe_timer_cb, delay, 0.);
    t->w.data = t;
    fnw_call_set_op_data(call, t);
    ev_timer_start(st->loop, &t->w);
}

static void probe_cancel(void *state, fnw_call *call)
{
    probe *st = state;
    void *d = fnw_call_op_data(call);
    if (!d)
        return;
    fnw_call_set_op_data(call, NULL);
    if (st->hold) {
        for (size_t i = 0; i < g_nheld; i++)
            if (g_held[i] == call) {
                memmove(g_held + i, g_held + i + 1, (g_nheld - i - 1) * sizeof *g_held);
                memmove(g_held_st + i, g_held_st + i + 1, (g_nheld - i - 1) * sizeof *g_held_st);
                g_nheld--;
                /* the op data pointers moved: reset them */
                for (size_t j = i; j < g_nheld; j++)
                    fnw_call_set_op_data(g_held[j], &g_held[j]);
                return;
            }
        return;
    }
    ptimer *t = d;
    ev_timer_stop(st->loop, &t->w);
    free(t);
}

static const fnw_operation probe_op = {
    .name = "probe",
    .invoke = probe_invoke,
    .open = probe_open,
    .close = probe_close,
    .cancel = probe_cancel,
};

/* The same, synchronous (the engine hands it the caller's bytes). */
static const fnw_operation probe_sync_op = {
    .name = "probe",
    .sync = 1,
    .invoke = probe_invoke,
    .open = probe_open,
    .close = probe_close,
};

static const fnw_operation *g_op = &probe_op;

/* Completes every held call (calls held meanwhile stay held). */
static void release_held(void)
{
    size_t n = g_nheld;
    fnw_call *calls[MAX_HELD];
    probe *sts[MAX_HELD];
    memcpy(calls, g_held, n * sizeof *calls);
    memcpy(sts, g_held_st, n * sizeof *sts);
    memmove(g_held, g_held + n, (g_nheld - n) * sizeof *g_held);
    memmove(g_held_st, g_held_st + n, (g_nheld - n) * sizeof *g_held_st);
    g_nheld -= n;
    for (size_t j = 0; j < g_nheld; j++)
        fnw_call_set_op_data(g_held[j], &g_held[j]);
    for (size_t i = 0; i < n; i++) {
        fnw_call_set_op_data(calls[i], NULL);
        probe_settle(sts[i], calls[i]);
    }
}

/* ---- the projection under test ----------------------------------------------------------- */

typedef struct out_row {
    uint8_t b[32];
    size_t len;
    int64_t ts;
} out_row;

typedef struct pj {
    struct ev_loop *loop;
    fnw_type *type, *in_row;
    fnw_ser_field *fx, *fy;
    fnw_engine *e[MAX_NODES];
    fnw_proj_node nodes[MAX_NODES];
    fnw_proj_arg args[MAX_NODES][6];
    char names[MAX_NODES][64];
    fnw_proj_desc d;
    fnw_projection *p;
    fnw_error err;
    /* inputs */
    size_t n_in, next;
    int null_y_mod; /* y is null where it divides i */
    int finish_called, manual, feeding, again;
    int free_at_end; /* free the projection inside sink.finished / sink.failed */
    /* what the projection said */
    out_row *outs;
    size_t n_out, cap_out;
    int finished, failed, ready_calls, after_end;
    size_t outs_at_finished;
    char fail_msg[FNW_ERROR_MAX + 256];
    int guard_fired;
    ev_timer guard;
} pj;

static fnw_spec spec(int unordered, int32_t capacity)
{
    fnw_spec s;
    memset(&s, 0, sizeof s);
    s.unordered = unordered;
    s.capacity = capacity;
    return s;
}

static fnw_spec batch_spec(int32_t capacity, int32_t size, int64_t timeout_ms)
{
    fnw_spec s = spec(0, capacity);
    s.batched = 1;
    s.batch_size = size;
    s.batch_timeout_ms = timeout_ms;
    s.timeout_ms = 100000;
    return s;
}

static void pj_init(pj *h)
{
    memset(h, 0, sizeof *h);
    g_nlog = 0;
    g_nheld = 0;
    g_op = &probe_op;
    memset(g_nemit, 0, sizeof g_nemit);
    h->loop = ev_loop_new(EVFLAG_AUTO);
    ck_assert_ptr_nonnull(h->loop);
    h->type = fnw_type_new(FNW_INT);
    h->in_row = fnw_type_new(FNW_ROW);
    ck_assert_ptr_nonnull(h->type);
    ck_assert_ptr_nonnull(h->in_row);
    ck_assert_int_eq(fnw_type_add_child(h->in_row, fnw_type_new(FNW_INT), "x", &h->err), 0);
    ck_assert_int_eq(fnw_type_add_child(h->in_row, fnw_type_new(FNW_INT), "y", &h->err), 0);
    h->fx = fnw_ser_field_new(h->in_row, 0, &h->err);
    h->fy = fnw_ser_field_new(h->in_row, 1, &h->err);
    ck_assert_ptr_nonnull(h->fx);
    ck_assert_ptr_nonnull(h->fy);
    h->d.nodes = h->nodes;
    h->d.window = 64;
}

static fnw_proj_arg field_arg(pj *h, int y)
{
    fnw_proj_arg a;
    memset(&a, 0, sizeof a);
    a.kind = FNW_PROJ_FIELD;
    a.field = y ? h->fy : h->fx;
    return a;
}

static fnw_proj_arg call_arg(uint32_t node)
{
    fnw_proj_arg a;
    memset(&a, 0, sizeof a);
    a.kind = FNW_PROJ_CALL;
    a.node = node;
    return a;
}

static fnw_proj_arg const_arg(const uint8_t *b, uint32_t len)
{
    fnw_proj_arg a;
    memset(&a, 0, sizeof a);
    a.kind = FNW_PROJ_CONST;
    a.bytes = b;
    a.len = len;
    return a;
}

/* Node i (transform "n<i>"): probe with options "k=v"..., the arguments
 * given, filling column (-1: a nested call). */
static void pj_node(pj *h, fnw_spec s, const char *const *kv, int column, int unwrap, int n_args, ...)
{
    uint32_t i = h->d.n_nodes;
    ck_assert_uint_lt(i, MAX_NODES);
    fnw_option items[8];
    char keys[8][32], tid[8];
    size_t k = 0;
    for (; kv && kv[k]; k++) {
        const char *eq = strchr(kv[k], '=');
        snprintf(keys[k], sizeof keys[k], "%.*s", (int)(eq - kv[k]), kv[k]);
        items[k].key = keys[k];
        items[k].value = eq + 1;
    }
    fnw_options opts = { k, items };
    snprintf(tid, sizeof tid, "n%u", i);
    fnw_op_env env = { h->loop, &opts, h->type, h->type, tid, s.batched, 0, 0, NULL };
    int rc = fnw_engine_new(h->loop, g_op, &s, &env, &h->e[i], &h->err);
    ck_assert_msg(rc == 0, "node %u: %s", i, h->err.msg);
    va_list ap;
    va_start(ap, n_args);
    for (int j = 0; j < n_args; j++)
        h->args[i][j] = va_arg(ap, fnw_proj_arg);
    va_end(ap);
    snprintf(h->names[i], sizeof h->names[i], "transform 'T', function %u (operation 'probe')", i + 1);
    h->nodes[i] = (fnw_proj_node){ h->args[i], (uint32_t)n_args, unwrap, column, h->names[i] };
    h->d.n_nodes = i + 1;
    if (column >= 0 && (uint32_t)column + 1 > h->d.n_columns)
        h->d.n_columns = (uint32_t)column + 1;
}

static void pj_build(pj *h, size_t n_in)
{
    h->p = fnw_projection_new(&h->d, h->e);
    ck_assert_ptr_nonnull(h->p);
    h->n_in = n_in;
}

static void pj_feed(pj *h);

static void on_emit(void *user, const fnw_record *out)
{
    pj *h = user;
    if (h->finished || h->failed)
        h->after_end++;
    if (h->n_out == h->cap_out) {
        h->cap_out = h->cap_out ? h->cap_out * 2 : 256;
        h->outs = realloc(h->outs, h->cap_out * sizeof *h->outs);
        ck_assert_ptr_nonnull(h->outs);
    }
    ck_assert_ptr_nonnull(out->data);
    ck_assert_uint_le(out->len, sizeof h->outs[0].b);
    out_row *o = &h->outs[h->n_out++];
    memcpy(o->b, out->data, out->len);
    o->len = out->len;
    o->ts = out->timestamp;
}

static void on_ready(void *user)
{
    pj *h = user;
    if (h->finished || h->failed)
        h->after_end++;
    h->ready_calls++;
    ck_assert(fnw_projection_has_space(h->p));
    if (!h->manual)
        pj_feed(h);
}

static void on_failed(void *user, const char *message)
{
    pj *h = user;
    if (h->finished || h->failed)
        h->after_end++;
    h->failed++;
    snprintf(h->fail_msg, sizeof h->fail_msg, "%s", message);
    if (h->free_at_end) {
        fnw_projection_free(h->p);
        h->p = NULL;
    }
    ev_break(h->loop, EVBREAK_ALL);
}

static void on_finished(void *user)
{
    pj *h = user;
    if (h->finished || h->failed)
        h->after_end++;
    h->finished++;
    h->outs_at_finished = h->n_out;
    if (h->free_at_end) {
        fnw_projection_free(h->p);
        h->p = NULL;
    }
    ev_break(h->loop, EVBREAK_ALL);
}

static void pj_push_one(pj *h)
{
    uint8_t b[9];
    size_t i = h->next++;
    int null_y = h->null_y_mod && i % (size_t)h->null_y_mod == 0;
    b[0] = null_y ? 0x10 : 0x00; /* ROW<x, y>: y's null bit is bit 3 */
    put_int(b + 1, (int32_t)i);
    put_int(b + 5, 1000 + (int32_t)i);
    fnw_record r = { 1000 + (int64_t)i, INT64_MIN, b, null_y ? 5u : 9u };
    fnw_projection_push(h->p, &r);
}

/* Pushes while there is space, then finishes; as the worker's bundle does,
 * a ready heard while pushing (a synchronous node completes rows inside
 * push) resumes the loop instead of recursing. */
static void pj_feed(pj *h)
{
    if (!h->p)
        return;
    if (h->feeding) {
        h->again = 1;
        return;
    }
    h->feeding = 1;
    do {
        h->again = 0;
        while (h->p && !h->failed && h->next < h->n_in && fnw_projection_has_space(h->p))
            pj_push_one(h);
    } while (h->p && h->again && !h->failed);
    h->feeding = 0;
    if (h->p && !h->failed && h->next == h->n_in && !h->finish_called) {
        h->finish_called = 1;
        fnw_projection_finish(h->p);
    }
}

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    pj *h = w->data;
    h->guard_fired = 1;
    ev_break(loop, EVBREAK_ALL);
}

static void pj_begin(pj *h, const char *label)
{
    h->n_out = 0;
    h->finished = h->failed = h->ready_calls = h->after_end = 0;
    h->finish_called = 0;
    h->fail_msg[0] = '\0';
    h->next = 0;
    fnw_engine_sink s = { h, on_emit, on_ready, on_failed, on_finished, NULL, NULL, NULL, NULL };
    fnw_projection_start(h->p, &s, label);
}

static void pj_loop(pj *h, double guard_s)
{
    ev_timer_init(&h->guard, guard_cb, guard_s, 0.);
    h->guard.data = h;
    ev_timer_start(h->loop, &h->guard);
    if (!h->finished && !h->failed)
        ev_run(h->loop, 0);
    ev_timer_stop(h->loop, &h->guard);
    ck_assert_msg(!h->guard_fired, "the bundle did not end (pushed %zu/%zu, outputs %zu)", h->next, h->n_in,
                  h->n_out);
}

/* Runs the loop for s seconds (to see that nothing more happens). */
static void quiet_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

static void pj_run_for(pj *h, double s)
{
    ev_timer t;
    ev_timer_init(&t, quiet_cb, s, 0.);
    ev_timer_start(h->loop, &t);
    ev_run(h->loop, 0);
    ev_timer_stop(h->loop, &t);
}

static void pj_run(pj *h, double guard_s)
{
    pj_begin(h, "b1");
    pj_feed(h);
    pj_loop(h, guard_s);
}

static void pj_run_ok(pj *h, double guard_s)
{
    pj_run(h, guard_s);
    ck_assert_msg(!h->failed, "bundle failed: %s", h->fail_msg);
    ck_assert_int_eq(h->finished, 1);
    ck_assert_int_eq(h->after_end, 0);
    ck_assert_uint_eq(h->outs_at_finished, h->n_out);
}

static void pj_free(pj *h)
{
    fnw_projection_free(h->p);
    for (uint32_t i = 0; i < h->d.n_nodes; i++)
        fnw_engine_free(h->e[i]);
    fnw_ser_field_free(h->fx);
    fnw_ser_field_free(h->fy);
    fnw_type_free(h->type);
    fnw_type_free(h->in_row);
    ev_loop_destroy(h->loop);
    free(h->outs);
}

/* Scalar output row i with one or two INT columns: its values (null: flag). */
static void out_cols(const pj *h, size_t i, int n_cols, int32_t *v, int *null)
{
    ck_assert_uint_lt(i, h->n_out);
    const out_row *o = &h->outs[i];
    ck_assert_int_eq(o->ts, INT64_MIN);
    ck_assert_uint_ge(o->len, 1);
    ck_assert_int_eq(o->b[0] & 0xC0, 0); /* row kind INSERT */
    size_t off = 1;
    for (int c = 0; c < n_cols; c++) {
        null[c] = (o->b[0] & (0x80 >> (c + 2))) != 0;
        if (!null[c]) {
            ck_assert_uint_le(off + 4, o->len);
            v[c] = get_int(o->b + off);
            off += 4;
        }
    }
    ck_assert_uint_eq(off, o->len);
}

static size_t inversions(const int32_t *xs, size_t n)
{
    size_t inv = 0;
    for (size_t i = 1; i < n; i++)
        inv += xs[i] < xs[i - 1];
    return inv;
}

static const log_entry *log_of(const char *tid, int32_t x_at_1)
{
    for (size_t i = 0; i < g_nlog; i++)
        if (!strcmp(g_log[i].tid, tid) && g_log[i].len >= 5 && get_int(g_log[i].b + 1) == x_at_1)
            return &g_log[i];
    return NULL;
}

/* ---- tests -------------------------------------------------------------------------------- */

/* Two columns, 2x and y + 5, one row per input, in order. */
START_TEST(two_columns_in_order)
{
    pj h;
    pj_init(&h);
    const char *const c0[] = { "mul=2", NULL };
    const char *const c1[] = { "add=5", "delay_ms=1", NULL };
    pj_node(&h, spec(0, 10), c0, 0, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(1, 10), c1, 1, 0, 1, field_arg(&h, 1));
    pj_build(&h, 50);
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 50);
    for (size_t i = 0; i < 50; i++) {
        int32_t v[2];
        int null[2];
        out_cols(&h, i, 2, v, null);
        ck_assert(!null[0] && !null[1]);
        ck_assert_int_eq(v[0], 2 * (int32_t)i);
        ck_assert_int_eq(v[1], 1005 + (int32_t)i);
        ck_assert_uint_eq(h.outs[i].len, 9);
    }
    ck_assert_int_eq(fnw_projection_rows_in(h.p), 50);
    ck_assert_int_eq(fnw_projection_rows_out(h.p), 50);
    pj_free(&h);
}
END_TEST

/* f(g(x), 7, NULL, y): g's argument row is (x); f's is (g's result, the
 * constant 7, a null constant, y), with their null bits in the mask byte. */
START_TEST(nested_call_argument_rows)
{
    pj h;
    pj_init(&h);
    h.null_y_mod = 3;
    static const uint8_t seven[4] = { 0, 0, 0, 7 };
    const char *const g[] = { "mul=3", "delay_ms=1", NULL };
    const char *const f[] = { "add=1", NULL };
    pj_node(&h, spec(1, 10), g, -1, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(0, 10), f, 0, 0, 4, call_arg(0), const_arg(seven, 4), const_arg(NULL, 0), field_arg(&h, 1));
    pj_build(&h, 12);
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 12);
    for (int32_t i = 0; i < 12; i++) {
        int32_t v[1];
        int null[1];
        out_cols(&h, (size_t)i, 1, v, null);
        ck_assert(!null[0]);
        ck_assert_int_eq(v[0], 3 * i + 1);
        /* g saw (x) */
        const log_entry *lg = log_of("n0", i);
        ck_assert_ptr_nonnull(lg);
        uint8_t want_g[5] = { 0x00 };
        put_int(want_g + 1, i);
        ck_assert_uint_eq(lg->len, 5);
        ck_assert_mem_eq(lg->b, want_g, 5);
        /* f saw (3x, 7, null, y): field 2's null bit 0x08, y's (field 3) 0x04 */
        const log_entry *lf = log_of("n1", 3 * i);
        ck_assert_ptr_nonnull(lf);
        int null_y = i % 3 == 0;
        uint8_t want_f[13];
        want_f[0] = (uint8_t)(0x08 | (null_y ? 0x04 : 0));
        put_int(want_f + 1, 3 * i);
        put_int(want_f + 5, 7);
        put_int(want_f + 9, 1000 + i);
        ck_assert_uint_eq(lf->len, null_y ? 9 : 13);
        ck_assert_mem_eq(lf->b, want_f, lf->len);
    }
    pj_free(&h);
}
END_TEST

/* An UNORDERED node whose calls end out of order (delays vary with x), next
 * to an ordered one: rows still leave in input order. */
START_TEST(unordered_node_results_in_input_order)
{
    pj h;
    pj_init(&h);
    const char *const c0[] = { "add=100", "delay_ms=2", NULL };
    const char *const c1[] = { "mul=-1", NULL };
    pj_node(&h, spec(1, 20), c0, 0, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(0, 20), c1, 1, 0, 1, field_arg(&h, 0));
    pj_build(&h, 80);
    pj_run_ok(&h, 30);
    ck_assert_uint_eq(h.n_out, 80);
    ck_assert_uint_eq(g_nemit[0], 80);
    ck_assert_msg(inversions(g_emit_order[0], 80) > 5, "the unordered node did not complete out of order");
    for (size_t i = 0; i < 80; i++) {
        int32_t v[2];
        int null[2];
        out_cols(&h, i, 2, v, null);
        ck_assert_int_eq(v[0], (int32_t)i + 100);
        ck_assert_int_eq(v[1], -(int32_t)i);
    }
    pj_free(&h);
}
END_TEST

/* A batch-mode node (batches of 4, delays varying per batch) and a nested
 * batch-mode call: results per row, in order. */
START_TEST(batch_mode_nodes_in_input_order)
{
    pj h;
    pj_init(&h);
    const char *const g[] = { "mul=2", "delay_ms=2", NULL };
    const char *const f[] = { "add=3", NULL };
    pj_node(&h, batch_spec(16, 4, 20), g, -1, 0, 1, field_arg(&h, 0));
    pj_node(&h, batch_spec(16, 4, 20), f, 0, 0, 1, call_arg(0));
    pj_build(&h, 41);
    pj_run_ok(&h, 30);
    ck_assert_uint_eq(h.n_out, 41);
    for (size_t i = 0; i < 41; i++) {
        int32_t v[1];
        int null[1];
        out_cols(&h, i, 1, v, null);
        ck_assert_int_eq(v[0], 2 * (int32_t)i + 3);
    }
    int batched = 0;
    for (size_t i = 0; i < g_nlog; i++)
        batched |= g_log[i].call_size > 1;
    ck_assert_msg(batched, "no call carried more than one row");
    pj_free(&h);
}
END_TEST

/* No result for a row: that column is null. */
START_TEST(no_result_is_a_null_column)
{
    pj h;
    pj_init(&h);
    const char *const c0[] = { "none_at=3", NULL };
    const char *const c1[] = { "add=1", NULL };
    pj_node(&h, spec(0, 10), c0, 0, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(0, 10), c1, 1, 0, 1, field_arg(&h, 0));
    pj_build(&h, 6);
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 6);
    for (size_t i = 0; i < 6; i++) {
        int32_t v[2];
        int null[2];
        out_cols(&h, i, 2, v, null);
        ck_assert_int_eq(null[0], i == 3);
        if (i != 3)
            ck_assert_int_eq(v[0], (int32_t)i);
        ck_assert(!null[1]);
        ck_assert_int_eq(v[1], (int32_t)i + 1);
    }
    ck_assert_uint_eq(h.outs[3].len, 5);
    ck_assert_int_eq(h.outs[3].b[0], 0x20);
    pj_free(&h);
}
END_TEST

/* Two results for one row of a scalar function fail the bundle, naming the
 * function; nothing is said after. */
START_TEST(two_results_fail_naming_the_function)
{
    pj h;
    pj_init(&h);
    const char *const c0[] = { "add=1", NULL };
    const char *const c1[] = { "dup_at=5", NULL };
    pj_node(&h, spec(0, 10), c0, 0, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(0, 10), c1, 1, 0, 1, field_arg(&h, 0));
    pj_build(&h, 20);
    pj_run(&h, 20);
    ck_assert_int_eq(h.failed, 1);
    ck_assert_int_eq(h.finished, 0);
    ck_assert_msg(strstr(h.fail_msg, "transform 'T', function 2 (operation 'probe')") &&
                      strstr(h.fail_msg, "2 results") && strstr(h.fail_msg, "row 5"),
                  "%s", h.fail_msg);
    ck_assert_uint_le(h.n_out, 5); /* rows before 5 only */
    pj_run_for(&h, 0.05);
    ck_assert_int_eq(h.after_end, 0);
    ck_assert_int_eq(fnw_projection_push(h.p, &(fnw_record){ 0, INT64_MIN, (const uint8_t *)"\0\0\0\0\0", 5 }), -1);
    pj_free(&h);
}
END_TEST

/* unwrap: the operation emits ROW<result INT>; the column is its field, and
 * a null field a null column. */
START_TEST(unwrap_takes_field_zero)
{
    pj h;
    pj_init(&h);
    const char *const c0[] = { "wrap=1", "null_mod=4", "add=10", NULL };
    pj_node(&h, spec(1, 10), c0, 0, 1, 1, field_arg(&h, 0));
    pj_build(&h, 9);
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 9);
    for (size_t i = 0; i < 9; i++) {
        int32_t v[1];
        int null[1];
        out_cols(&h, i, 1, v, null);
        ck_assert_int_eq(null[0], i % 4 == 0);
        if (!null[0])
            ck_assert_int_eq(v[0], (int32_t)i + 10);
    }
    pj_free(&h);
}
END_TEST

/* A table function: {0, 1, 3}[x % 3] rows for input x, each input ended
 * by the end message 0x00, in input order. */
START_TEST(table_function_rows_then_end_message)
{
    pj h;
    pj_init(&h);
    const char *const tf[] = { "wrap=1", "fanout=1", "delay_ms=1", NULL };
    pj_node(&h, spec(1, 10), tf, -1, 0, 1, field_arg(&h, 0));
    h.d.table_function = 1;
    h.d.n_columns = 1;
    pj_build(&h, 9);
    pj_run_ok(&h, 20);
    size_t k = 0;
    for (int32_t x = 0; x < 9; x++) {
        static const int fan[3] = { 0, 1, 3 };
        for (int r = 0; r < fan[x % 3]; r++, k++) {
            ck_assert_uint_lt(k, h.n_out);
            ck_assert_uint_eq(h.outs[k].len, 5);
            ck_assert_int_eq(h.outs[k].b[0], 0);
            ck_assert_int_eq(get_int(h.outs[k].b + 1), x + r * 1000);
        }
        ck_assert_uint_lt(k, h.n_out);
        ck_assert_msg(h.outs[k].len == 1 && h.outs[k].b[0] == 0, "no end message after input %d", (int)x);
        k++;
    }
    ck_assert_uint_eq(k, h.n_out);
    ck_assert_int_eq(fnw_projection_rows_out(h.p), (int64_t)h.n_out);
    pj_free(&h);
}
END_TEST

/* The ring holds window rows: has_space is false once they are in flight
 * (the engines have room), ready comes when they drain. */
START_TEST(window_bounds_rows_in_flight)
{
    pj h;
    pj_init(&h);
    h.d.window = 4;
    const char *const c0[] = { "hold=1", NULL };
    pj_node(&h, spec(1, 100), c0, 0, 0, 1, field_arg(&h, 0));
    pj_build(&h, 10);
    h.manual = 1;
    pj_begin(&h, "b1");
    pj_feed(&h);
    ck_assert_uint_eq(h.next, 4);
    ck_assert(!fnw_projection_has_space(h.p));
    ck_assert_uint_eq(g_nheld, 4);
    release_held();
    pj_run_for(&h, 0.02);
    ck_assert_uint_eq(h.n_out, 4);
    ck_assert_int_ge(h.ready_calls, 1);
    ck_assert(fnw_projection_has_space(h.p));
    pj_feed(&h);
    ck_assert_uint_eq(h.next, 8);
    ck_assert(!fnw_projection_has_space(h.p));
    while (!h.finished && !h.failed) {
        release_held();
        pj_run_for(&h, 0.01);
        pj_feed(&h);
    }
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_uint_eq(h.n_out, 10);
    for (size_t i = 0; i < 10; i++) {
        int32_t v[1];
        int null[1];
        out_cols(&h, i, 1, v, null);
        ck_assert_int_eq(v[0], (int32_t)i);
    }
    pj_free(&h);
}
END_TEST

/* finish with a nested call: the parent (batch mode, a batch timeout far
 * away) is finished only once its child has finished, so its one batch
 * holds every row and flushes at finish, not at the timeout; the sink hears
 * finished once, after the last row. */
START_TEST(finish_waits_for_nested_nodes)
{
    pj h;
    pj_init(&h);
    const char *const g[] = { "hold=1", "mul=2", NULL };
    const char *const f[] = { "add=1", NULL };
    pj_node(&h, spec(0, 100), g, -1, 0, 1, field_arg(&h, 0));
    pj_node(&h, batch_spec(100, 50, 60000), f, 0, 0, 1, call_arg(0));
    pj_build(&h, 6);
    pj_begin(&h, "b1");
    pj_feed(&h);
    ck_assert(h.finish_called);
    pj_run_for(&h, 0.02);
    ck_assert_int_eq(h.finished, 0);
    ck_assert_uint_eq(h.n_out, 0);
    ck_assert_uint_eq(g_nheld, 6);
    double t0 = ev_time();
    release_held();
    pj_loop(&h, 20);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_int_eq(h.finished, 1);
    ck_assert_uint_eq(h.outs_at_finished, 6);
    ck_assert_msg(ev_time() - t0 < 30, "the parent's batch waited for its timeout");
    size_t f_rows = 0;
    for (size_t i = 0; i < g_nlog; i++)
        if (!strcmp(g_log[i].tid, "n1")) {
            f_rows++;
            ck_assert_uint_eq(g_log[i].call_size, 6); /* one batch with every row */
        }
    ck_assert_uint_eq(f_rows, 6);
    for (size_t i = 0; i < 6; i++) {
        int32_t v[1];
        int null[1];
        out_cols(&h, i, 1, v, null);
        ck_assert_int_eq(v[0], 2 * (int32_t)i + 1);
    }
    pj_run_for(&h, 0.02);
    ck_assert_int_eq(h.after_end, 0);
    pj_free(&h);
}
END_TEST

/* A node that fails aborts the others (their held calls are cancelled);
 * sink.failed once, nothing after. */
START_TEST(failing_node_aborts_the_others)
{
    pj h;
    pj_init(&h);
    const char *const c0[] = { "hold=1", NULL };
    const char *const c1[] = { "fail_at=3", "delay_ms=1", NULL };
    pj_node(&h, spec(1, 100), c0, 0, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(1, 100), c1, 1, 0, 1, field_arg(&h, 0));
    pj_build(&h, 10);
    pj_run(&h, 20);
    ck_assert_int_eq(h.failed, 1);
    ck_assert_msg(strstr(h.fail_msg, "transform 'T', function 2 (operation 'probe'): ") &&
                      strstr(h.fail_msg, "probe: failed at 3"),
                  "%s", h.fail_msg);
    ck_assert_uint_eq(g_nheld, 0); /* the other node's calls were cancelled */
    ck_assert_uint_eq(h.n_out, 0);
    pj_run_for(&h, 0.05);
    ck_assert_int_eq(h.after_end, 0);
    ck_assert_int_eq(h.finished, 0);
    pj_free(&h);
}
END_TEST

/* abort: every node's calls are cancelled, no callback; a new bundle runs. */
START_TEST(abort_then_reuse)
{
    pj h;
    pj_init(&h);
    const char *const c0[] = { "hold=1", NULL };
    pj_node(&h, spec(1, 100), c0, 0, 0, 1, field_arg(&h, 0));
    pj_build(&h, 5);
    pj_begin(&h, "b1");
    pj_feed(&h);
    ck_assert_uint_eq(g_nheld, 5);
    fnw_projection_abort(h.p);
    ck_assert_uint_eq(g_nheld, 0);
    pj_run_for(&h, 0.02);
    ck_assert_int_eq(h.failed + h.finished, 0);
    ck_assert_uint_eq(h.n_out, 0);
    /* the next bundle: outputs from row 0 again */
    pj_begin(&h, "b2");
    pj_feed(&h);
    while (!h.finished && !h.failed) {
        release_held();
        pj_run_for(&h, 0.01);
    }
    ck_assert_int_eq(h.finished, 1);
    ck_assert_uint_eq(h.n_out, 5);
    ck_assert_int_eq(fnw_projection_rows_in(h.p), 5);
    pj_free(&h);
}
END_TEST

/* The same projection runs three bundles: after a finish, after a failure. */
START_TEST(reuse_after_finish_and_failure)
{
    pj h;
    pj_init(&h);
    h.d.window = 8;
    const char *const g[] = { "mul=2", "delay_ms=1", NULL };
    const char *const f[] = { "fail_at=1000000", NULL };
    pj_node(&h, spec(1, 10), g, -1, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(1, 10), f, 0, 0, 1, call_arg(0));
    pj_build(&h, 30);
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 30);
    /* bundle 2: row 7 (g gives 14) fails in f... */
    fnw_engine_free(h.e[1]);
    fnw_option items[1] = { { .key = "fail_at", .value = "14" } };
    fnw_options opts = { 1, items };
    fnw_spec s = spec(1, 10);
    fnw_op_env env = { h.loop, &opts, h.type, h.type, "n1", 0, 0, 0, NULL };
    ck_assert_int_eq(fnw_engine_new(h.loop, &probe_op, &s, &env, &h.e[1], &h.err), 0);
    fnw_projection_free(h.p);
    h.p = fnw_projection_new(&h.d, h.e);
    ck_assert_ptr_nonnull(h.p);
    pj_run(&h, 20);
    ck_assert_int_eq(h.failed, 1);
    ck_assert_msg(strstr(h.fail_msg, "probe: failed at 14"), "%s", h.fail_msg);
    /* bundle 3 on the same projection, inputs below 7 only */
    h.n_in = 7;
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 7);
    for (size_t i = 0; i < 7; i++) {
        int32_t v[1];
        int null[1];
        out_cols(&h, i, 1, v, null);
        ck_assert_int_eq(v[0], 2 * (int32_t)i);
    }
    ck_assert_int_eq(fnw_projection_rows_in(h.p), 7);
    /* bundle 4, a failure again, then bundle 5 again */
    h.n_in = 20;
    pj_run(&h, 20);
    ck_assert_int_eq(h.failed, 1);
    h.n_in = 3;
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 3);
    pj_free(&h);
}
END_TEST


/* Synchronous nodes complete rows inside push: f(g(x), y, 7, 7, 7) with a
 * larger argument row than g's (the argument buffer grows while g's call
 * is still on the stack). */
START_TEST(synchronous_nested_nodes)
{
    pj h;
    pj_init(&h);
    g_op = &probe_sync_op;
    static const uint8_t seven[4] = { 0, 0, 0, 7 };
    const char *const g[] = { "mul=5", NULL };
    const char *const f[] = { "add=2", NULL };
    pj_node(&h, spec(0, 10), g, -1, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(0, 10), f, 0, 0, 5, call_arg(0), field_arg(&h, 1), const_arg(seven, 4), const_arg(seven, 4),
            const_arg(seven, 4));
    pj_build(&h, 200);
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 200);
    for (size_t i = 0; i < 200; i++) {
        int32_t v[1];
        int null[1];
        out_cols(&h, i, 1, v, null);
        ck_assert_int_eq(v[0], 5 * (int32_t)i + 2);
    }
    const log_entry *lf = log_of("n1", 5 * 9);
    ck_assert_ptr_nonnull(lf);
    ck_assert_uint_eq(lf->len, 21);
    ck_assert_int_eq(get_int(lf->b + 5), 1009);
    pj_free(&h);
}
END_TEST

/* A nested call with no result passes a null argument (its null bit set),
 * and the parent's null result is a null column. */
START_TEST(null_nested_result_is_a_null_argument)
{
    pj h;
    pj_init(&h);
    const char *const g[] = { "none_at=2", NULL };
    const char *const f[] = { "add=1", NULL };
    pj_node(&h, spec(1, 10), g, -1, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(0, 10), f, 0, 0, 2, call_arg(0), field_arg(&h, 0));
    pj_build(&h, 4);
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 4);
    for (size_t i = 0; i < 4; i++) {
        int32_t v[1];
        int null[1];
        out_cols(&h, i, 1, v, null);
        ck_assert_int_eq(null[0], i == 2);
    }
    size_t seen = 0;
    for (size_t i = 0; i < g_nlog; i++) {
        if (strcmp(g_log[i].tid, "n1") || !(g_log[i].b[0] & 0x20))
            continue;
        seen++;
        uint8_t want[5] = { 0x20, 0, 0, 0, 2 }; /* (null, x = 2) */
        ck_assert_uint_eq(g_log[i].len, 5);
        ck_assert_mem_eq(g_log[i].b, want, 5);
    }
    ck_assert_uint_eq(seen, 1);
    pj_free(&h);
}
END_TEST

/* An empty bundle with nested calls finishes (once, no rows). */
START_TEST(empty_bundle_finishes)
{
    pj h;
    pj_init(&h);
    const char *const g[] = { "mul=2", NULL };
    const char *const f[] = { "add=1", NULL };
    pj_node(&h, spec(0, 10), g, -1, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(0, 10), f, -1, 0, 1, call_arg(0));
    pj_node(&h, batch_spec(10, 5, 60000), f, 0, 0, 2, call_arg(1), call_arg(0));
    pj_build(&h, 0);
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 0);
    /* and one row through the same three nodes */
    h.n_in = 1;
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 1);
    int32_t v[1];
    int null[1];
    out_cols(&h, 0, 1, v, null);
    ck_assert_int_eq(v[0], 2); /* (0 * 2 + 1) + 1 */
    pj_free(&h);
}
END_TEST

/* A node's engine at capacity makes has_space false before the ring is full. */
START_TEST(full_node_engine_stops_input)
{
    pj h;
    pj_init(&h);
    const char *const c0[] = { "hold=1", NULL };
    const char *const c1[] = { "add=1", NULL };
    pj_node(&h, spec(1, 3), c0, 0, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(1, 100), c1, 1, 0, 1, field_arg(&h, 0));
    pj_build(&h, 7);
    h.manual = 1;
    pj_begin(&h, "b1");
    pj_feed(&h);
    ck_assert_uint_eq(h.next, 3);
    ck_assert(!fnw_projection_has_space(h.p));
    while (!h.finished && !h.failed) {
        release_held();
        pj_run_for(&h, 0.01);
        pj_feed(&h);
    }
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_uint_eq(h.n_out, 7);
    ck_assert_int_ge(h.ready_calls, 1);
    pj_free(&h);
}
END_TEST

/* The sink may free the projection from inside finished and failed
 * (projection.h), here while finish and push are still on the stack:
 * synchronous nodes end inside them. */
START_TEST(sink_frees_the_projection_inside_its_callbacks)
{
    for (int fail = 0; fail < 2; fail++) {
        pj h;
        pj_init(&h);
        g_op = &probe_sync_op;
        const char *const ok[] = { "add=1", NULL };
        const char *const bad[] = { "fail_at=2", NULL };
        pj_node(&h, spec(0, 10), ok, 0, 0, 1, field_arg(&h, 0));
        pj_node(&h, spec(0, 10), fail ? bad : ok, 1, 0, 1, field_arg(&h, 0));
        pj_node(&h, spec(0, 10), ok, 2, 0, 1, field_arg(&h, 1));
        pj_build(&h, 4);
        h.free_at_end = 1;
        pj_run(&h, 20);
        ck_assert_ptr_null(h.p);
        ck_assert_int_eq(h.failed, fail);
        ck_assert_int_eq(h.finished, !fail);
        ck_assert_uint_eq(h.n_out, fail ? 2 : 4);
        pj_free(&h);
    }
}
END_TEST

/* A call that times out with TIMEOUT_EMPTY has no result: a null column. */
START_TEST(timeout_empty_is_a_null_column)
{
    pj h;
    pj_init(&h);
    fnw_spec s = spec(1, 10);
    s.timeout_ms = 30;
    s.on_timeout = FNW_TIMEOUT_EMPTY;
    const char *const c0[] = { "hold=1", NULL };
    const char *const c1[] = { "add=1", NULL };
    pj_node(&h, s, c0, 0, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(0, 10), c1, 1, 0, 1, field_arg(&h, 0));
    pj_build(&h, 3);
    pj_run_ok(&h, 20);
    ck_assert_uint_eq(h.n_out, 3);
    ck_assert_uint_eq(g_nheld, 0);
    for (size_t i = 0; i < 3; i++) {
        int32_t v[2];
        int null[2];
        out_cols(&h, i, 2, v, null);
        ck_assert(null[0]);
        ck_assert(!null[1]);
        ck_assert_int_eq(v[1], (int32_t)i + 1);
    }
    pj_free(&h);
}
END_TEST

/* A table function calling a scalar function for its argument: the nested
 * results are arguments, not output rows. tf(g(x), y), g(x) = x + 1. */
START_TEST(table_function_with_a_nested_call)
{
    pj h;
    pj_init(&h);
    const char *const g[] = { "add=1", "delay_ms=1", NULL };
    const char *const tf[] = { "wrap=1", "fanout=1", NULL };
    pj_node(&h, spec(1, 10), g, -1, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(1, 10), tf, -1, 0, 2, call_arg(0), field_arg(&h, 1));
    h.d.table_function = 1;
    h.d.n_columns = 1;
    pj_build(&h, 7);
    pj_run_ok(&h, 20);
    size_t k = 0;
    for (int32_t x = 0; x < 7; x++) {
        static const int fan[3] = { 0, 1, 3 };
        for (int r = 0; r < fan[(x + 1) % 3]; r++, k++) {
            ck_assert_uint_lt(k, h.n_out);
            ck_assert_uint_eq(h.outs[k].len, 5);
            ck_assert_int_eq(get_int(h.outs[k].b + 1), x + 1 + r * 1000);
        }
        ck_assert_uint_lt(k, h.n_out);
        ck_assert_msg(h.outs[k].len == 1 && h.outs[k].b[0] == 0, "no end message after input %d", (int)x);
        k++;
        const log_entry *l = log_of("n1", x + 1);
        ck_assert_ptr_nonnull(l);
        ck_assert_uint_eq(l->len, 9);
        ck_assert_int_eq(get_int(l->b + 5), 1000 + x);
    }
    ck_assert_uint_eq(k, h.n_out);
    pj_free(&h);
}
END_TEST

/* A null where a table function's row should be fails the bundle, naming
 * the function (an empty record would corrupt Flink's stream). */
START_TEST(table_function_null_row_fails)
{
    pj h;
    pj_init(&h);
    const char *const g[] = { "none_at=1", NULL };
    const char *const tf[] = { "add=0", NULL };
    pj_node(&h, spec(0, 10), g, -1, 0, 1, field_arg(&h, 0));
    pj_node(&h, spec(0, 10), tf, -1, 0, 1, call_arg(0));
    h.d.table_function = 1;
    h.d.n_columns = 1;
    pj_build(&h, 3);
    pj_run(&h, 20);
    ck_assert_int_eq(h.failed, 1);
    ck_assert_msg(strstr(h.fail_msg, "function 2 (operation 'probe') gave a null for row 1"), "%s", h.fail_msg);
    pj_free(&h);
}
END_TEST

static Suite *projection_suite(void)
{
    Suite *s = suite_create("projection");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, two_columns_in_order);
    tcase_add_test(tc, nested_call_argument_rows);
    tcase_add_test(tc, unordered_node_results_in_input_order);
    tcase_add_test(tc, batch_mode_nodes_in_input_order);
    tcase_add_test(tc, no_result_is_a_null_column);
    tcase_add_test(tc, two_results_fail_naming_the_function);
    tcase_add_test(tc, unwrap_takes_field_zero);
    tcase_add_test(tc, table_function_rows_then_end_message);
    tcase_add_test(tc, window_bounds_rows_in_flight);
    tcase_add_test(tc, finish_waits_for_nested_nodes);
    tcase_add_test(tc, failing_node_aborts_the_others);
    tcase_add_test(tc, abort_then_reuse);
    tcase_add_test(tc, reuse_after_finish_and_failure);
    tcase_add_test(tc, synchronous_nested_nodes);
    tcase_add_test(tc, null_nested_result_is_a_null_argument);
    tcase_add_test(tc, empty_bundle_finishes);
    tcase_add_test(tc, full_node_engine_stops_input);
    tcase_add_test(tc, sink_frees_the_projection_inside_its_callbacks);
    tcase_add_test(tc, timeout_empty_is_a_null_column);
    tcase_add_test(tc, table_function_with_a_nested_call);
    tcase_add_test(tc, table_function_null_row_fails);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(projection_suite());
}
