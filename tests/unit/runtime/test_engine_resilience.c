/* tests/unit/runtime/test_engine_resilience.c — the engine's protection of
 * a service (docs/resilience.md), through a real fnw_engine on a real loop
 * with a fake service operation that answers 1 ms later: overloads re-queue
 * without using retries and lower the limit; a Retry-After pauses every
 * start; adaptive concurrency off keeps today's failure; the circuit
 * breaker opens, rejects without calling, probes and closes; on_failure
 * DEFAULT / EMPTY in ordered, unordered and batch mode. Order and counts
 * are checked, times only from below. */
#include "tests/unit/test_engine_harness.h"

#include "codecs/ser.h"
#include "runtime/breaker.h"
#include "tests/unit/check_run.h"

/* ---- the fake service ------------------------------------------------------------ */

static struct {
    int cap;                /* > 0: more calls at once than this are refused for load */
    int64_t retry_after_ms; /* with such a refusal */
    int refuse_first;       /* the first n attempts are refused for load */
    int down;               /* every call fails */
    int running, max_running, calls, refused, max_attempt;
    double first_refusal, first_start_after_refusal; /* loop times */
} S;

typedef struct svc_call {
    ev_timer t;
    fnw_call *c;
} svc_call;

static void svc_answer(struct ev_loop *loop, ev_timer *w, int revents)
{
    svc_call *x = w->data;
    fnw_call *c = x->c;
    S.running--;
    fnw_call_set_op_data(c, NULL);
    if (S.down) {
        fnw_call_fail(c, "service down");
        return;
    }
    for (size_t i = 0; i < fnw_call_size(c); i++) {
        const fnw_record *in = fnw_call_input(c, i);
        fnw_call_emit(c, i, in->data, in->len);
    }
    fnw_call_complete(c);
}

static void svc_invoke(void *state, fnw_call *c)
{
    struct ev_loop *loop = fnw_call_loop(c);
    S.calls++;
    if (fnw_call_attempt(c) > S.max_attempt)
        S.max_attempt = fnw_call_attempt(c);
    if (S.refused && S.first_start_after_refusal == 0)
        S.first_start_after_refusal = ev_now(loop);
    if (S.refuse_first > 0 || (S.cap > 0 && S.running >= S.cap)) {
        if (S.refuse_first > 0)
            S.refuse_first--;
        if (S.refused++ == 0)
            S.first_refusal = ev_now(loop);
        fnw_call_fail_overloaded(c, S.retry_after_ms, "HTTP status 429");
        return;
    }
    S.running++;
    if (S.running > S.max_running)
        S.max_running = S.running;
    svc_call *x = fnw_arena_alloc(fnw_call_arena(c), sizeof *x);
    x->c = c;
    ev_timer_init(&x->t, svc_answer, 0.001, 0.);
    x->t.data = x;
    fnw_call_set_op_data(c, x);
    ev_timer_start(loop, &x->t);
}

static void svc_cancel(void *state, fnw_call *c)
{
    svc_call *x = fnw_call_op_data(c);
    if (x) {
        ev_timer_stop(fnw_call_loop(c), &x->t);
        S.running--;
    }
}

static const fnw_operation svc_op = { .name = "svc", .invoke = svc_invoke, .cancel = svc_cancel };

static char LOG[4096];

static void log_line(void *user, const char *line)
{
    size_t n = strlen(LOG);
    snprintf(LOG + n, sizeof LOG - n, "%s\n", line);
}

static void setup(harness *h, fnw_spec *s)
{
    memset(&S, 0, sizeof S);
    LOG[0] = 0;
    h_init(h);
    ck_assert_int_eq(fnw_registry_add(&h->reg, &svc_op, NULL), 0);
    s->fallback_encode = h->reg.json_encode;
    h_create(h, "svc", s, NULL);
}

static void run(harness *h, double guard_s)
{
    fnw_engine_sink sink = h_sink(h);
    sink.log = log_line;
    h->n_out = 0;
    h->finished = h->failed = h->guard_fired = 0;
    h->finish_called = 0;
    h->next = 0;
    ev_now_update(h->loop);
    h->t0 = ev_now(h->loop);
    fnw_engine_start(h->e, &sink, "b1");
    h_feed(h);
    h_loop(h, guard_s);
    ck_assert_msg(!h->guard_fired, "the bundle did not end (outputs %zu)", h->n_out);
}

static void teardown(harness *h)
{
    fnw_engine_free(h->e);
    fnw_type_free(h->type);
    free(h->vals);
    free(h->ts);
    free(h->wm);
    free(h->outs);
    ev_loop_destroy(h->loop);
}

/* ---- adaptive concurrency -------------------------------------------------------- */

START_TEST(overloads_requeue_lower_the_limit_and_use_no_retry)
{
    harness h;
    fnw_spec s = h_spec();
    s.capacity = 64;
    s.timeout_ms = 30000;
    s.retry = (fnw_retry){ .kind = FNW_RETRY_FIXED_DELAY, .max_attempts = 1, .delay_ms = 1, .on_error = 1 };
    setup(&h, &s);
    S.cap = 4;
    h_inputs(&h, 300);
    run(&h, 30);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_int_eq(h.n_out, 300);
    for (size_t i = 0; i < 300; i++)
        ck_assert_int_eq(h.outs[i].v, (int32_t)i); /* ordered, every row */
    const fnw_engine_metrics *m = fnw_engine_metrics_get(h.e);
    ck_assert_int_gt(m->overloaded, 0);
    ck_assert_int_eq(m->overloaded, S.refused);
    ck_assert_int_eq(m->retries, 0);
    ck_assert_int_eq(m->failures, 0);
    ck_assert_int_eq(S.max_attempt, 1); /* re-runs after an overload keep attempt 1 */
    ck_assert_int_lt(m->concurrency_limit, 64);
    ck_assert_int_ge(m->concurrency_limit, 1);
    /* the limit adapted: far fewer refusals than rows */
    ck_assert_msg(S.refused < 300, "refused %d", S.refused);
    teardown(&h);
}
END_TEST

START_TEST(retry_after_pauses_every_start)
{
    harness h;
    fnw_spec s = h_spec();
    s.capacity = 16;
    setup(&h, &s);
    S.refuse_first = 1;
    S.retry_after_ms = 300;
    h_inputs(&h, 50);
    run(&h, 30);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_int_eq(h.n_out, 50);
    /* the refusal came on the first call; every call after it waited for the pause */
    ck_assert_int_eq(S.refused, 1);
    ck_assert_msg(S.first_start_after_refusal - S.first_refusal >= 0.299, "started %.3f s after the refusal",
                  S.first_start_after_refusal - S.first_refusal);
    ck_assert_ptr_nonnull(strstr(LOG, "Retry-After"));
    ck_assert_int_eq(fnw_engine_metrics_get(h.e)->overloaded, 1);
    teardown(&h);
}
END_TEST

START_TEST(adaptive_off_keeps_the_failure)
{
    harness h;
    fnw_spec s = h_spec();
    s.concurrency.adaptive_off = 1;
    setup(&h, &s);
    S.refuse_first = 1;
    h_inputs(&h, 5);
    run(&h, 30);
    ck_assert(h.failed);
    ck_assert_ptr_nonnull(strstr(h.fail_msg, "HTTP status 429"));
    ck_assert_int_eq(fnw_engine_metrics_get(h.e)->concurrency_limit, -1);
    teardown(&h);
}
END_TEST

/* ---- the circuit breaker and on_failure ------------------------------------------------ */

START_TEST(breaker_opens_and_rejects_without_calling)
{
    harness h;
    fnw_spec s = h_spec();
    s.capacity = 1; /* one call at a time: the count is exact */
    s.breaker.failures = 3;
    s.breaker.cooldown_ms = 60000;
    s.on_failure = FNW_FAILURE_DEFAULT;
    s.fallback_json = "-1";
    setup(&h, &s);
    S.down = 1;
    h_inputs(&h, 50);
    run(&h, 30);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_int_eq(h.n_out, 50);
    for (size_t i = 0; i < 50; i++)
        ck_assert_int_eq(h.outs[i].v, -1);
    ck_assert_int_eq(S.calls, 3);
    const fnw_engine_metrics *m = fnw_engine_metrics_get(h.e);
    ck_assert_int_eq(m->breaker_opened, 1);
    ck_assert_int_eq(m->breaker_rejected, 47);
    ck_assert_int_eq(m->fallbacks, 50);
    ck_assert_int_eq(m->breaker_state, FNW_BREAKER_OPEN);
    ck_assert_ptr_nonnull(strstr(LOG, "opened: 3 consecutive failed calls"));
    teardown(&h);
}
END_TEST

START_TEST(breaker_probes_after_the_cooldown_and_closes)
{
    harness h;
    fnw_spec s = h_spec();
    s.capacity = 1;
    s.breaker.failures = 2;
    s.breaker.cooldown_ms = 50;
    s.on_failure = FNW_FAILURE_EMPTY;
    setup(&h, &s);
    S.down = 1;
    h_inputs(&h, 10);
    run(&h, 30);
    ck_assert_int_eq(h.n_out, 0);
    ck_assert_int_eq(S.calls, 2);
    S.down = 0;
    h_run_for(&h, 0.06);
    run(&h, 30); /* the next bundle: the first call is the probe, then closed */
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_int_eq(h.n_out, 10);
    ck_assert_int_eq(h.outs[9].v, 9);
    ck_assert_int_eq(S.calls, 12);
    ck_assert_int_eq(fnw_engine_metrics_get(h.e)->breaker_state, FNW_BREAKER_CLOSED);
    const char *open = strstr(LOG, " opened:"), *half = strstr(LOG, "half-open"), *closed = strstr(LOG, " closed:");
    ck_assert(open && half && closed && open < half && half < closed);
    ck_assert_ptr_null(strstr(open + 1, " opened:")); /* each change logged once */
    teardown(&h);
}
END_TEST

START_TEST(a_failed_probe_reopens)
{
    harness h;
    fnw_spec s = h_spec();
    s.capacity = 1;
    s.breaker.failures = 1;
    s.breaker.cooldown_ms = 30;
    s.on_failure = FNW_FAILURE_EMPTY;
    setup(&h, &s);
    S.down = 1;
    h_inputs(&h, 3);
    run(&h, 30);
    h_run_for(&h, 0.04);
    run(&h, 30);
    ck_assert_int_eq(S.calls, 2); /* the first failure, then one probe */
    ck_assert_int_eq(fnw_engine_metrics_get(h.e)->breaker_opened, 1); /* this bundle's */
    ck_assert_int_eq(fnw_engine_metrics_get(h.e)->breaker_state, FNW_BREAKER_OPEN);
    teardown(&h);
}
END_TEST

START_TEST(fallback_in_unordered_mode)
{
    harness h;
    fnw_spec s = h_spec();
    s.unordered = 1;
    s.capacity = 8;
    s.on_failure = FNW_FAILURE_DEFAULT;
    s.fallback_json = "42";
    setup(&h, &s);
    S.down = 1;
    h_inputs(&h, 20);
    run(&h, 30);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_int_eq(h.n_out, 20);
    for (size_t i = 0; i < 20; i++)
        ck_assert_int_eq(h.outs[i].v, 42);
    ck_assert_int_eq(fnw_engine_metrics_get(h.e)->fallbacks, 20);
    ck_assert_int_eq(fnw_engine_metrics_get(h.e)->breaker_state, -1); /* no breaker */
    teardown(&h);
}
END_TEST

START_TEST(fallback_in_batch_mode_and_null)
{
    harness h;
    fnw_spec s = h_spec();
    s.batched = 1;
    s.batch_size = 4;
    s.timeout_ms = 10000;
    s.capacity = 16;
    s.on_failure = FNW_FAILURE_DEFAULT; /* no fallback_json: null */
    setup(&h, &s);
    S.down = 1;
    h_inputs(&h, 10);
    run(&h, 30);
    ck_assert_msg(!h.failed, "%s", h.fail_msg);
    ck_assert_int_eq(h.n_out, 10);
    for (size_t i = 0; i < 10; i++)
        ck_assert(h.outs[i].is_null);
    ck_assert_int_eq(fnw_engine_metrics_get(h.e)->fallbacks, 10);
    teardown(&h);
}
END_TEST

START_TEST(empty_in_batch_mode_after_retries)
{
    harness h;
    fnw_spec s = h_spec();
    s.batched = 1;
    s.batch_size = 5;
    s.timeout_ms = 10000;
    s.retry = (fnw_retry){ .kind = FNW_RETRY_FIXED_DELAY, .max_attempts = 2, .delay_ms = 1, .on_error = 1 };
    s.on_failure = FNW_FAILURE_EMPTY;
    setup(&h, &s);
    S.down = 1;
    h_inputs(&h, 10);
    run(&h, 30);
    ck_assert_msg(!h.failed && h.finished, "%s", h.fail_msg);
    ck_assert_int_eq(h.n_out, 0);
    ck_assert_int_eq(S.calls, 6); /* 2 batches x 3 attempts: retries come first */
    ck_assert_int_eq(fnw_engine_metrics_get(h.e)->fallbacks, 10);
    teardown(&h);
}
END_TEST

START_TEST(fail_stays_the_default)
{
    harness h;
    fnw_spec s = h_spec();
    s.breaker.failures = 1;
    setup(&h, &s);
    S.down = 1;
    h_inputs(&h, 5);
    run(&h, 30);
    ck_assert(h.failed);
    ck_assert_ptr_nonnull(strstr(h.fail_msg, "service down"));
    teardown(&h);
}
END_TEST

/* ROW<id INT, label STRING> in and out: a fallback {"label": "?"} keeps
 * each input's id (a null field of the fallback that the input has). */
static fnw_type *id_label_row(void)
{
    fnw_type *t = fnw_type_new(FNW_ROW);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(t, fnw_type_new(FNW_INT), "id", &err), 0);
    ck_assert_int_eq(fnw_type_add_child(t, fnw_type_new(FNW_STRING), "label", &err), 0);
    return t;
}

static struct {
    int n;
    int32_t ids[8];
    char labels[8][8];
} ROWS;

static void row_emit(void *user, const fnw_record *out)
{
    const fnw_type *t = user;
    fnw_arena a;
    fnw_value v;
    fnw_error err;
    size_t used;
    fnw_arena_init(&a, 256, 0);
    ck_assert_int_eq(fnw_ser_decode(t, out->data, out->len, &a, &v, &used, &err), 0);
    ROWS.ids[ROWS.n] = v.u.items[0].is_null ? -99 : (int32_t)v.u.items[0].u.i;
    snprintf(ROWS.labels[ROWS.n], sizeof ROWS.labels[0], "%.*s", (int)v.u.items[1].count, v.u.items[1].u.bytes);
    ROWS.n++;
    fnw_arena_free(&a);
}

static void row_finished(void *user)
{
    ev_break(EV_DEFAULT, EVBREAK_ALL);
}

static void row_failed(void *user, const char *m)
{
    ck_abort_msg("failed: %s", m);
}

START_TEST(a_row_fallback_keeps_the_input_fields_it_leaves_null)
{
    memset(&S, 0, sizeof S);
    memset(&ROWS, 0, sizeof ROWS);
    S.down = 1;
    struct ev_loop *loop = EV_DEFAULT;
    fnw_registry reg;
    fnw_registry_init(&reg);
    fnw_builtins_register(&reg);
    fnw_type *t = id_label_row();
    fnw_spec s = h_spec();
    s.on_failure = FNW_FAILURE_DEFAULT;
    s.fallback_json = "{\"label\": \"?\"}";
    s.fallback_encode = reg.json_encode;
    fnw_options opts = { 0, NULL };
    fnw_op_env env = { loop, &opts, t, t, "t1", 0, 0, 0, NULL };
    fnw_engine *e;
    fnw_error err;
    ck_assert_msg(fnw_engine_new(loop, &svc_op, &s, &env, &e, &err) == 0, "%s", err.msg);
    fnw_engine_sink sink = { t, row_emit, NULL, row_failed, row_finished, NULL, NULL, NULL, NULL };
    fnw_engine_start(e, &sink, "b1");
    fnw_buf b;
    fnw_buf_init(&b, 0);
    for (int i = 0; i < 3; i++) {
        fnw_value items[2] = { fnw_value_int(FNW_INT, 7 + i), fnw_value_bytes(FNW_STRING, "in", 2) };
        fnw_value row = { .kind = FNW_ROW, .count = 2, .u.items = items };
        fnw_buf_clear(&b);
        ck_assert_int_eq(fnw_ser_encode(t, &row, &b, &err), 0);
        fnw_record r = { 1000 + i, INT64_MIN, b.p, (uint32_t)b.len };
        fnw_engine_push(e, &r);
    }
    fnw_engine_finish(e);
    ev_run(loop, 0);
    ck_assert_int_eq(ROWS.n, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ROWS.ids[i], 7 + i);
        ck_assert_str_eq(ROWS.labels[i], "?");
    }
    fnw_buf_free(&b);
    fnw_engine_free(e);
    fnw_type_free(t);
}
END_TEST

START_TEST(a_fallback_of_the_wrong_type_is_refused_at_open)
{
    harness h;
    memset(&S, 0, sizeof S);
    h_init(&h);
    fnw_spec s = h_spec();
    s.on_failure = FNW_FAILURE_DEFAULT;
    s.fallback_json = "\"not a number\"";
    s.fallback_encode = h.reg.json_encode;
    ck_assert_int_eq(h_create_opts(&h, "echo", &s, NULL), -1);
    ck_assert_msg(strstr(h.err.msg, "fallback_json") != NULL, "%s", h.err.msg);
    s.fallback_json = "{";
    ck_assert_int_eq(h_create_opts(&h, "echo", &s, NULL), -1);
    ck_assert_msg(strstr(h.err.msg, "not valid JSON") != NULL, "%s", h.err.msg);
    fnw_type_free(h.type);
    ev_loop_destroy(h.loop);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("engine_resilience");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, overloads_requeue_lower_the_limit_and_use_no_retry);
    tcase_add_test(tc, retry_after_pauses_every_start);
    tcase_add_test(tc, adaptive_off_keeps_the_failure);
    tcase_add_test(tc, breaker_opens_and_rejects_without_calling);
    tcase_add_test(tc, breaker_probes_after_the_cooldown_and_closes);
    tcase_add_test(tc, a_failed_probe_reopens);
    tcase_add_test(tc, fallback_in_unordered_mode);
    tcase_add_test(tc, fallback_in_batch_mode_and_null);
    tcase_add_test(tc, empty_in_batch_mode_after_retries);
    tcase_add_test(tc, fail_stays_the_default);
    tcase_add_test(tc, a_fallback_of_the_wrong_type_is_refused_at_open);
    tcase_add_test(tc, a_row_fallback_keeps_the_input_fields_it_leaves_null);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
