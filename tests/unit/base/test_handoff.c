/* tests/unit/base/test_handoff.c — the hand-off (base/handoff.c), both
 * kinds. A loop's hand-off: items run on the loop thread in the order they
 * were put, each with the ok it was put with; many puts from another thread
 * before the loop runs are delivered by one wake-up; a put never waits,
 * however many items the loop has not run yet; while held, ev_run waits for
 * items, and once released (or never held), an idle loop's ev_run returns,
 * and an item put then still runs when the loop runs; a loop has one
 * hand-off; two kinds of producer (a thread, and the gRPC completion-queue
 * thread) reach the loop through it; take_if collects an owner's items and
 * leaves the others queued. A queue taken by threads: items are taken in
 * the order they were put, from another thread too; remove_if takes out
 * exactly the matching items in order and keeps the queue usable; a closed,
 * empty queue stops waiting takers. */
#include <check.h>
#include <ev.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <unistd.h>

#include "base/handoff.h"
#include "base/pump.h"
#include "tests/unit/check_run.h"

#define N_ITEMS 10000

typedef struct item {
    fnw_handoff_item link;      /* first */
    int v;
    int ok;
    pthread_t ran_on;
} item;

static item items[N_ITEMS];
static int seen[N_ITEMS];
static int n_seen, out_of_order;

static void item_done(fnw_handoff_item *it, int ok)
{
    item *x = (item *)it;
    if (n_seen > 0 && seen[n_seen - 1] + 1 != x->v)
        out_of_order++;
    x->ok = ok;
    x->ran_on = pthread_self();
    seen[n_seen++] = x->v;
}

static void reset(void)
{
    for (int i = 0; i < N_ITEMS; i++)
        items[i] = (item){ .link.done = item_done, .v = i, .ok = -1 };
    n_seen = 0;
    out_of_order = 0;
}

typedef struct producer {
    fnw_handoff *h;
    int from, n;
    volatile int finished;
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    for (int i = p->from; i < p->from + p->n; i++)
        fnw_handoff_put(p->h, &items[i].link, i % 2);
    __atomic_store_n(&p->finished, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* ---- a loop's hand-off ---------------------------------------------------------- */

START_TEST(test_drain_runs_items_in_put_order_with_their_ok)
{
    reset();
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_handoff *h = fnw_handoff_of(loop);
    for (int i = 0; i < 100; i++)
        fnw_handoff_put(h, &items[i].link, i % 2);
    ck_assert_uint_eq(fnw_handoff_count(h), 100);
    fnw_handoff_drain(h);
    ck_assert_int_eq(n_seen, 100);
    ck_assert_int_eq(out_of_order, 0);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(items[i].ok, i % 2);
    ck_assert_uint_eq(fnw_handoff_count(h), 0);
    fnw_handoff_loop_free(loop);
    ev_loop_destroy(loop);
}
END_TEST

START_TEST(test_one_wake_delivers_every_put_before_it)
{
    reset();
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_handoff *h = fnw_handoff_of(loop);
    fnw_handoff_hold(h);
    producer p = { h, 0, 500, 0 };
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, produce, &p), 0);
    pthread_join(th, NULL);
    ck_assert_int_eq(n_seen, 0);              /* nothing runs off the loop thread */
    ev_run(loop, EVRUN_NOWAIT);               /* the wake is pending: one iteration */
    ck_assert_int_eq(n_seen, 500);
    ck_assert_int_eq(out_of_order, 0);
    ck_assert(pthread_equal(items[0].ran_on, pthread_self()));
    fnw_handoff_release(h);
    fnw_handoff_loop_free(loop);
    ev_loop_destroy(loop);
}
END_TEST

START_TEST(test_a_put_never_waits_for_the_loop)
{
    reset();
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_handoff *h = fnw_handoff_of(loop);
    fnw_handoff_hold(h);
    producer p = { h, 0, N_ITEMS, 0 };
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, produce, &p), 0);
    pthread_join(th, NULL);                   /* the loop has run nothing: the producer still finished */
    ck_assert_int_eq(p.finished, 1);
    ck_assert_uint_eq(fnw_handoff_count(h), N_ITEMS);
    ev_run(loop, EVRUN_NOWAIT);
    ck_assert_int_eq(n_seen, N_ITEMS);
    ck_assert_int_eq(out_of_order, 0);
    fnw_handoff_release(h);
    fnw_handoff_loop_free(loop);
    ev_loop_destroy(loop);
}
END_TEST

static fnw_handoff *released_by_item;

static void release_at_last(fnw_handoff_item *it, int ok)
{
    item_done(it, ok);
    if (n_seen == 100)
        fnw_handoff_release(released_by_item);   /* nothing left to wait for: ev_run returns */
}

START_TEST(test_held_loop_waits_then_ends_when_released)
{
    reset();
    for (int i = 0; i < 100; i++)
        items[i].link.done = release_at_last;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_handoff *h = fnw_handoff_of(loop);
    released_by_item = h;
    fnw_handoff_hold(h);
    producer p = { h, 0, 100, 0 };
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, produce, &p), 0);
    ev_run(loop, 0);                          /* returns only once every item ran */
    pthread_join(th, NULL);
    ck_assert_int_eq(n_seen, 100);
    ck_assert_int_eq(out_of_order, 0);
    fnw_handoff_loop_free(loop);
    ev_loop_destroy(loop);
}
END_TEST

START_TEST(test_unheld_handoff_lets_ev_run_return_and_still_runs_items)
{
    reset();
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_handoff *h = fnw_handoff_of(loop);
    ev_run(loop, 0);                          /* nobody holds it: returns at once */
    fnw_handoff_put(h, &items[0].link, 1);
    for (int i = 0; i < 100 && n_seen == 0; i++)
        ev_run(loop, EVRUN_NOWAIT);           /* the wake-up was not lost */
    ck_assert_int_eq(n_seen, 1);
    fnw_handoff_loop_free(loop);
    ev_loop_destroy(loop);
}
END_TEST

START_TEST(test_a_loop_has_one_handoff)
{
    struct ev_loop *a = ev_loop_new(EVFLAG_AUTO), *b = ev_loop_new(EVFLAG_AUTO);
    fnw_handoff *ha = fnw_handoff_of(a);
    ck_assert_ptr_nonnull(ha);
    ck_assert_ptr_eq(fnw_handoff_of(a), ha);
    ck_assert_ptr_ne(fnw_handoff_of(b), ha);
    fnw_handoff_loop_free(a);
    fnw_handoff_loop_free(b);
    fnw_handoff_loop_free(b);                 /* a loop without one: nothing to do */
    ev_loop_destroy(a);
    ev_loop_destroy(b);
}
END_TEST

/* A gRPC completion: a connectivity watch on a channel nobody serves, due
 * at once; its tag is an item the loop's pump puts into the hand-off. */
typedef struct grpc_item {
    fnw_handoff_item link;
    int ran;
    pthread_t ran_on;
} grpc_item;

static fnw_handoff *two_kinds_h;
static int two_kinds_left;

static void grpc_done(fnw_handoff_item *it, int ok)
{
    grpc_item *g = (grpc_item *)it;
    g->ran++;
    g->ran_on = pthread_self();
    if (--two_kinds_left == 0)
        fnw_handoff_release(two_kinds_h);
}

static void thread_done(fnw_handoff_item *it, int ok)
{
    item_done(it, ok);
    if (--two_kinds_left == 0)
        fnw_handoff_release(two_kinds_h);
}

START_TEST(test_two_kinds_of_producer_reach_the_loop_through_one_handoff)
{
    reset();
    grpc_init();
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_handoff *h = fnw_handoff_of(loop);
    fnw_pump *pump = fnw_pump_of(loop);
    ck_assert_ptr_nonnull(pump);
    ck_assert_ptr_eq(fnw_pump_of(loop), pump);      /* one per loop */
    grpc_channel_credentials *cr = grpc_insecure_credentials_create();
    grpc_channel *ch = grpc_channel_create("127.0.0.1:1", cr, NULL);
    grpc_channel_credentials_release(cr);
    grpc_item g[3] = { { .link.done = grpc_done }, { .link.done = grpc_done }, { .link.done = grpc_done } };
    for (int i = 0; i < 200; i++)
        items[i].link.done = thread_done;
    two_kinds_h = h;
    two_kinds_left = 3 + 200;
    fnw_handoff_hold(h);
    for (int i = 0; i < 3; i++)
        grpc_channel_watch_connectivity_state(ch, grpc_channel_check_connectivity_state(ch, 0),
                                              gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                                           gpr_time_from_millis(10 * i, GPR_TIMESPAN)),
                                              fnw_pump_cq(pump), &g[i].link);
    producer p = { h, 0, 200, 0 };
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, produce, &p), 0);
    ev_run(loop, 0);                          /* ends when all 203 ran */
    pthread_join(th, NULL);
    ck_assert_int_eq(n_seen, 200);
    ck_assert_int_eq(out_of_order, 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(g[i].ran, 1);
        ck_assert(pthread_equal(g[i].ran_on, pthread_self()));
    }
    ck_assert(pthread_equal(items[199].ran_on, pthread_self()));
    grpc_channel_destroy(ch);
    fnw_handoff_loop_free(loop);              /* stops the pump too */
    ev_loop_destroy(loop);
    grpc_shutdown();
}
END_TEST

static int is_even_item(const fnw_handoff_item *it, void *user)
{
    return it->done == item_done && ((const item *)it)->v % 2 == 0;
}

START_TEST(test_take_if_waits_for_an_owners_item_and_leaves_the_rest)
{
    reset();
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_handoff *h = fnw_handoff_of(loop);
    fnw_handoff_put(h, &items[1].link, 1);
    producer p = { h, 2, 1, 0 };              /* item 2, from a thread, later */
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, produce, &p), 0);
    fnw_handoff_item *got = fnw_handoff_take_if(h, is_even_item, NULL);
    pthread_join(th, NULL);
    ck_assert_ptr_eq(got, &items[2].link);
    ck_assert_int_eq(n_seen, 0);              /* taken, not run */
    ck_assert_uint_eq(fnw_handoff_count(h), 1);
    fnw_handoff_drain(h);
    ck_assert_int_eq(n_seen, 1);
    ck_assert_int_eq(seen[0], 1);
    fnw_handoff_loop_free(loop);
    ev_loop_destroy(loop);
}
END_TEST

/* ---- a queue taken by threads ------------------------------------------------------- */

START_TEST(test_take_in_order_across_threads)
{
    reset();
    fnw_handoff h;
    fnw_handoff_init(&h);
    producer p = { &h, 0, 100, 0 };
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, produce, &p), 0);
    for (int i = 0; i < 100; i++) {
        item *it = (item *)fnw_handoff_take(&h);   /* waits for the producer */
        ck_assert_int_eq(it->v, i);
    }
    pthread_join(t, NULL);
    ck_assert_ptr_null(fnw_handoff_poll(&h));
    fnw_handoff_free(&h);
}
END_TEST

static int is_odd(const fnw_handoff_item *it, void *user)
{
    return ((const item *)it)->v % 2 == 1;
}

START_TEST(test_remove_if_takes_the_matching_items)
{
    reset();
    fnw_handoff h;
    fnw_handoff_init(&h);
    for (int i = 0; i < 7; i++)
        fnw_handoff_put(&h, &items[i].link, 1);
    fnw_handoff_item *odd = fnw_handoff_remove_if(&h, is_odd, NULL);
    int want = 1;
    for (fnw_handoff_item *it = odd; it; it = it->next, want += 2)
        ck_assert_int_eq(((item *)it)->v, want);
    ck_assert_int_eq(want, 7);
    ck_assert_uint_eq(fnw_handoff_count(&h), 4);
    fnw_handoff_put(&h, &items[10].link, 1);     /* the tail is right after a removal at the end */
    int rest[] = { 0, 2, 4, 6, 10 };
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(((item *)fnw_handoff_poll(&h))->v, rest[i]);
    ck_assert_ptr_null(fnw_handoff_poll(&h));
    fnw_handoff_free(&h);
}
END_TEST

static void *taker(void *arg)
{
    return fnw_handoff_take(arg);
}

START_TEST(test_close_releases_waiting_takers)
{
    reset();
    fnw_handoff h;
    fnw_handoff_init(&h);
    fnw_handoff_put(&h, &items[0].link, 1);
    fnw_handoff_close(&h);
    ck_assert_ptr_eq(fnw_handoff_take(&h), &items[0].link);   /* what is queued is still taken */
    pthread_t t;
    void *got = &h;
    ck_assert_int_eq(pthread_create(&t, NULL, taker, &h), 0);
    pthread_join(t, &got);
    ck_assert_ptr_null(got);
    fnw_handoff_free(&h);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("handoff");
    TCase *tc = tcase_create("loop");
    tcase_add_test(tc, test_drain_runs_items_in_put_order_with_their_ok);
    tcase_add_test(tc, test_one_wake_delivers_every_put_before_it);
    tcase_add_test(tc, test_a_put_never_waits_for_the_loop);
    tcase_add_test(tc, test_held_loop_waits_then_ends_when_released);
    tcase_add_test(tc, test_unheld_handoff_lets_ev_run_return_and_still_runs_items);
    tcase_add_test(tc, test_a_loop_has_one_handoff);
    tcase_add_test(tc, test_two_kinds_of_producer_reach_the_loop_through_one_handoff);
    tcase_add_test(tc, test_take_if_waits_for_an_owners_item_and_leaves_the_rest);
    suite_add_tcase(s, tc);
    TCase *tq = tcase_create("threads");
    tcase_add_test(tq, test_take_in_order_across_threads);
    tcase_add_test(tq, test_remove_if_takes_the_matching_items);
    tcase_add_test(tq, test_close_releases_waiting_takers);
    suite_add_tcase(s, tq);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
