/* tests/unit/runtime/test_engine_describe.c — the engine's read-only views that a
 * hung bundle's warning and the SIGQUIT dump are built from: calls in
 * flight and the oldest one's age, queue sizes (admitted, waiting for
 * capacity, in a partial batch), this bundle's counts, the one-line
 * description and the per-call lines.
 *
 * `echo hang=true` keeps every call out, so the figures are fixed while
 * they are read; ages are checked against a "now" the test chooses, never
 * against the wall clock. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/test_engine_harness.h"

typedef struct lines {
    char text[8][512];
    size_t n;
} lines;

static void take_line(void *user, const char *line)
{
    lines *l = user;
    ck_assert_uint_lt(l->n, 8);
    snprintf(l->text[l->n++], sizeof l->text[0], "%s", line);
}

START_TEST(calls_in_flight_and_the_oldest_age)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.capacity = 5;
    static const char *const kv[] = { "hang=true", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 8);
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);                      /* 5 admitted, then no space */
    double now = ev_now(h.loop) + 2.0;
    fnw_engine_stats st;
    fnw_engine_stats_get(h.e, now, &st);
    ck_assert_uint_eq(st.calls, 5);
    ck_assert_uint_eq(st.queued, 5);
    ck_assert_uint_eq(st.waiting, 0);
    ck_assert_uint_eq(st.batching, 0);
    ck_assert(st.oldest_call_s >= 2.0 && st.oldest_call_s < 3.0);
    ck_assert_int_eq(st.records_in, 5);
    ck_assert_int_eq(st.records_out, 0);

    char d[1024];
    fnw_engine_describe(h.e, now, d, sizeof d);
    ck_assert_msg(strstr(d, "operation 'echo' in transform 't1': 5 call(s) in flight (the oldest "
                            "started 2.0 s ago); 5 input(s) queued, 0 waiting for capacity 5, "
                            "0 in a partial batch; 5 in, 0 out this bundle"), "%s", d);

    lines l = {.n = 0};
    ck_assert_uint_eq(fnw_engine_each_call(h.e, now, 3, take_line, &l), 5);
    ck_assert_uint_eq(l.n, 3);       /* at most max lines, the count of all */
    ck_assert_msg(strstr(l.text[0], "call on input ") && strstr(l.text[0], "attempt 1, with the "
                  "operation, started 2.0 s ago"), "%s", l.text[0]);
    /* a push past capacity waits for it */
    h_push_one(&h);
    fnw_engine_stats_get(h.e, now, &st);
    ck_assert_uint_eq(st.waiting, 1);
    ck_assert_uint_eq(st.calls, 5);
    fnw_engine_abort(h.e);
    fnw_engine_stats_get(h.e, now, &st);
    ck_assert_uint_eq(st.calls, 0);
    ck_assert_uint_eq(st.queued + st.waiting, 0);
    h_free(&h);
}
END_TEST

START_TEST(partial_batch_and_one_call)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    s.batched = 1;
    s.batch_size = 4;
    s.timeout_ms = 60000;
    s.capacity = 10;
    static const char *const kv[] = { "hang=true", NULL };
    h_create(&h, "echo", &s, kv);
    h_inputs(&h, 6);
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    fnw_engine_stats st;
    fnw_engine_stats_get(h.e, ev_now(h.loop), &st);
    ck_assert_uint_eq(st.calls, 1);      /* inputs 0..3 */
    ck_assert_uint_eq(st.batching, 2);   /* inputs 4, 5 wait for the batch to fill */
    ck_assert_uint_eq(st.queued, 6);
    lines l = {.n = 0};
    ck_assert_uint_eq(fnw_engine_each_call(h.e, ev_now(h.loop), 8, take_line, &l), 1);
    ck_assert_msg(strstr(l.text[0], "call on inputs 0..3 (timestamps 1000, 1001, 1002, 1003)"), "%s",
                  l.text[0]);
    char d[1024];
    fnw_engine_describe(h.e, ev_now(h.loop), d, sizeof d);
    ck_assert_msg(strstr(d, "1 call(s) in flight") && strstr(d, "2 in a partial batch"), "%s", d);
    fnw_engine_abort(h.e);
    h_free(&h);
}
END_TEST

START_TEST(an_idle_engine_has_nothing_in_flight)
{
    harness h;
    h_init(&h);
    fnw_spec s = h_spec();
    h_create(&h, "echo", &s, NULL);
    h_inputs(&h, 3);
    h_run_ok(&h, 10);
    fnw_engine_stats st;
    fnw_engine_stats_get(h.e, ev_now(h.loop), &st);
    ck_assert_uint_eq(st.calls, 0);
    ck_assert_uint_eq(st.queued, 0);
    ck_assert(st.oldest_call_s == 0);
    ck_assert_int_eq(st.records_out, 3);
    char d[1024];
    fnw_engine_describe(h.e, ev_now(h.loop), d, sizeof d);
    ck_assert_msg(strstr(d, "0 call(s) in flight;") && !strstr(d, "oldest"), "%s", d);
    h_free(&h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine_describe");
    TCase *tc = tcase_create("engine_describe");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, calls_in_flight_and_the_oldest_age);
    tcase_add_test(tc, partial_batch_and_one_call);
    tcase_add_test(tc, an_idle_engine_has_nothing_in_flight);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
