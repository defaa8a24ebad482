/* tests/unit/runtime/test_batcher.c — batch flushing by size, by timeout since the
 * batch's first element, explicitly (bundle end), and that a timer of an
 * earlier batch never flushes a later one early. Real ev_loop, real time:
 * times are checked as lower bounds and order (a marker timer), never as
 * windows, so a loaded machine cannot fail them. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/batcher.h"

typedef struct rec {
    fnw_batcher b;
    struct ev_loop *loop;
    size_t flushes;
    size_t sizes[64];
    intptr_t first[64];
    double at[64];
    double t0;
    intptr_t next_item;
    ev_timer marker;
    long flushes_at_marker;   /* -1 until the marker fires */
} rec;

static void on_flush(void *user, void **items, size_t n)
{
    rec *r = user;
    ck_assert_uint_lt(r->flushes, 64);
    r->sizes[r->flushes] = n;
    r->first[r->flushes] = (intptr_t)items[0];
    r->at[r->flushes] = ev_time() - r->t0;
    for (size_t i = 1; i < n; i++)
        ck_assert_int_eq((intptr_t)items[i], (intptr_t)items[i - 1] + 1);
    r->flushes++;
}

static void rec_init(rec *r, size_t size, int64_t timeout_ms)
{
    memset(r, 0, sizeof *r);
    r->loop = ev_loop_new(EVFLAG_AUTO);
    ck_assert_int_eq(fnw_batcher_init(&r->b, r->loop, size, timeout_ms, on_flush, r), 0);
    r->t0 = ev_time();
    r->next_item = 1;
}

static void rec_add(rec *r, int k)
{
    for (int i = 0; i < k; i++)
        fnw_batcher_add(&r->b, (void *)r->next_item++);
}

static void stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    ev_break(loop, EVBREAK_ALL);
}

static void run_for(rec *r, double s)
{
    ev_timer t;
    ev_timer_init(&t, stop_cb, s, 0.);
    ev_timer_start(r->loop, &t);
    ev_run(r->loop, 0);
    ev_timer_stop(r->loop, &t);
}

/* Runs the loop until n flushes have happened, failing after guard_s. */
static void run_until_flushes(rec *r, size_t n, double guard_s)
{
    double end = ev_time() + guard_s;
    while (r->flushes < n) {
        ck_assert_msg(ev_time() < end, "%zu flushes after %.1f s, want %zu", r->flushes, guard_s, n);
        ev_run(r->loop, EVRUN_ONCE);
    }
}

static void marker_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    rec *r = w->data;
    r->flushes_at_marker = (long)r->flushes;
}

/* A timer s seconds from the loop's current time recording how many
 * flushes came before it. libev runs timers due in the same iteration in
 * expiry order, so a flush timer due before the marker is counted however
 * late the loop wakes up. */
static void start_marker(rec *r, double s)
{
    r->flushes_at_marker = -1;
    ev_timer_init(&r->marker, marker_cb, s, 0.);
    r->marker.data = r;
    ev_timer_start(r->loop, &r->marker);
}

static void rec_free(rec *r)
{
    ev_timer_stop(r->loop, &r->marker);
    fnw_batcher_free(&r->b);
    ev_loop_destroy(r->loop);
}

START_TEST(test_flush_by_size)
{
    rec r;
    rec_init(&r, 3, 0);
    rec_add(&r, 7);
    ck_assert_uint_eq(r.flushes, 2);
    ck_assert_uint_eq(r.sizes[0], 3);
    ck_assert_uint_eq(r.sizes[1], 3);
    ck_assert_int_eq(r.first[1], 4);
    ck_assert_uint_eq(fnw_batcher_count(&r.b), 1);
    run_for(&r, 0.03);                /* no timeout configured: nothing fires */
    ck_assert_uint_eq(r.flushes, 2);
    fnw_batcher_flush(&r.b);          /* bundle end */
    ck_assert_uint_eq(r.flushes, 3);
    ck_assert_uint_eq(r.sizes[2], 1);
    ck_assert_int_eq(r.first[2], 7);
    fnw_batcher_flush(&r.b);          /* empty: nothing */
    ck_assert_uint_eq(r.flushes, 3);
    rec_free(&r);
}
END_TEST

START_TEST(test_flush_by_timeout)
{
    rec r;
    rec_init(&r, 10, 40);
    rec_add(&r, 2);
    start_marker(&r, 0.045);          /* 5 ms after the flush timer is due */
    run_until_flushes(&r, 1, 5);
    ck_assert_uint_eq(r.sizes[0], 2);
    ck_assert_msg(r.at[0] >= 0.039, "flushed early, at %.3f s", r.at[0]);
    while (r.flushes_at_marker < 0)
        ev_run(r.loop, EVRUN_ONCE);
    ck_assert_int_eq(r.flushes_at_marker, 1);   /* the 40 ms timer flushed it, in time */
    ck_assert_uint_eq(r.flushes, 1);
    rec_free(&r);
}
END_TEST

static rec *late_rec;
static void add_one_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    rec_add(late_rec, 1);
}

START_TEST(test_stale_timer_cannot_flush_next_batch)
{
    /* batch 1 starts a 100 ms timer at t=0 and is flushed by size at once;
     * batch 2 starts at t=60 ms and must wait until t=160 ms, not 100 ms */
    rec r;
    rec_init(&r, 3, 100);
    late_rec = &r;
    rec_add(&r, 3);
    ck_assert_uint_eq(r.flushes, 1);
    ev_timer t;
    ev_timer_init(&t, add_one_cb, 0.06, 0.);
    ev_timer_start(r.loop, &t);
    run_until_flushes(&r, 2, 5);
    ck_assert_uint_eq(r.sizes[1], 1);
    ck_assert_msg(r.at[1] >= 0.155, "second batch flushed early, at %.3f s", r.at[1]);
    rec_free(&r);
}
END_TEST

START_TEST(test_explicit_flush_stops_timer)
{
    rec r;
    rec_init(&r, 10, 30);
    rec_add(&r, 1);
    fnw_batcher_flush(&r.b);
    ck_assert_uint_eq(r.flushes, 1);
    run_for(&r, 0.08);
    ck_assert_uint_eq(r.flushes, 1);
    rec_free(&r);
}
END_TEST

START_TEST(test_clear_drops_batch_and_timer)
{
    rec r;
    rec_init(&r, 10, 30);
    rec_add(&r, 4);
    fnw_batcher_clear(&r.b);
    ck_assert_uint_eq(fnw_batcher_count(&r.b), 0);
    run_for(&r, 0.08);
    ck_assert_uint_eq(r.flushes, 0);
    rec_add(&r, 1);                    /* a new batch gets its own timer */
    run_for(&r, 0.08);
    ck_assert_uint_eq(r.flushes, 1);
    ck_assert_int_eq(r.first[0], 5);
    rec_free(&r);
}
END_TEST

START_TEST(test_size_one_never_times)
{
    rec r;
    rec_init(&r, 1, 30);
    rec_add(&r, 3);
    ck_assert_uint_eq(r.flushes, 3);
    run_for(&r, 0.06);
    ck_assert_uint_eq(r.flushes, 3);
    rec_free(&r);
}
END_TEST

/* Tuning changes the size (never past the slots reserved at init) and the
 * timeout for the batches after it; a batch already at the new size goes
 * with its next add. */
START_TEST(test_tune_size_and_timeout)
{
    rec r;
    rec_init(&r, 8, 0);
    rec_add(&r, 5);
    ck_assert_uint_eq(r.flushes, 0);
    fnw_batcher_tune(&r.b, 4, 0.01);
    rec_add(&r, 1); /* 6 >= 4 */
    ck_assert_uint_eq(r.flushes, 1);
    ck_assert_uint_eq(r.sizes[0], 6);
    rec_add(&r, 4);
    ck_assert_uint_eq(r.flushes, 2);
    ck_assert_uint_eq(r.sizes[1], 4);
    fnw_batcher_tune(&r.b, 100, 0.01); /* capped at the 8 slots */
    rec_add(&r, 9);
    ck_assert_uint_eq(r.flushes, 3);
    ck_assert_uint_eq(r.sizes[2], 8);
    /* the remaining 1 waits for the 10 ms timer */
    start_marker(&r, 0.005);
    run_until_flushes(&r, 4, 5);
    ck_assert_int_eq(r.flushes_at_marker, 3);
    ck_assert_uint_eq(r.sizes[3], 1);
    ck_assert(r.at[3] >= 0.01);
    rec_free(&r);
}
END_TEST

static Suite *batcher_suite(void)
{
    Suite *s = suite_create("batcher");
    TCase *tc = tcase_create("batcher");
    tcase_add_test(tc, test_flush_by_size);
    tcase_add_test(tc, test_flush_by_timeout);
    tcase_add_test(tc, test_stale_timer_cannot_flush_next_batch);
    tcase_add_test(tc, test_explicit_flush_stops_timer);
    tcase_add_test(tc, test_clear_drops_batch_and_timer);
    tcase_add_test(tc, test_size_one_never_times);
    tcase_add_test(tc, test_tune_size_and_timeout);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(batcher_suite());
}
