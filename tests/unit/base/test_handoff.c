/* tests/unit/base/test_handoff.c — the cross-thread queue (base/handoff.c):
 * items arrive in the order they were put, from another thread too, and a
 * loop-side queue wakes its loop (many puts, the loop drains them all);
 * remove_if takes out exactly the matching items in order and keeps the
 * queue usable; a closed, empty queue stops waiting takers. */
#include <check.h>
#include <ev.h>
#include <pthread.h>

#include "base/handoff.h"
#include "tests/unit/check_run.h"

typedef struct item {
    fnw_handoff_item link;      /* first */
    int v;
} item;

static item items[100];

static void *producer(void *arg)
{
    fnw_handoff *h = arg;
    for (int i = 0; i < 100; i++) {
        items[i].v = i;
        fnw_handoff_put(h, &items[i].link);
    }
    return NULL;
}

START_TEST(test_take_in_order_across_threads)
{
    fnw_handoff h;
    fnw_handoff_init(&h);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, producer, &h), 0);
    for (int i = 0; i < 100; i++) {
        item *it = (item *)fnw_handoff_take(&h);   /* waits for the producer */
        ck_assert_int_eq(it->v, i);
    }
    pthread_join(t, NULL);
    ck_assert_ptr_null(fnw_handoff_poll(&h));
    fnw_handoff_free(&h);
}
END_TEST

static int drained;

static void wake_cb(struct ev_loop *loop, ev_async *w, int revents)
{
    fnw_handoff *h = w->data;
    while (fnw_handoff_poll(h))
        drained++;
    if (drained == 100)
        fnw_handoff_wake_stop(h);      /* nothing left to wait for: ev_run returns */
}

START_TEST(test_loop_is_woken_and_drains_everything)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_handoff h;
    fnw_handoff_init_wake(&h, loop, wake_cb, &h);
    fnw_handoff_wake_start(&h);
    drained = 0;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, producer, &h), 0);
    ev_run(loop, 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(drained, 100);
    fnw_handoff_free(&h);
    ev_loop_destroy(loop);
}
END_TEST

static int is_odd(const fnw_handoff_item *it, void *user)
{
    return ((const item *)it)->v % 2 == 1;
}

START_TEST(test_remove_if_takes_the_matching_items)
{
    fnw_handoff h;
    fnw_handoff_init(&h);
    for (int i = 0; i < 7; i++) {
        items[i].v = i;
        fnw_handoff_put(&h, &items[i].link);
    }
    fnw_handoff_item *odd = fnw_handoff_remove_if(&h, is_odd, NULL);
    int want = 1;
    for (fnw_handoff_item *it = odd; it; it = it->next, want += 2)
        ck_assert_int_eq(((item *)it)->v, want);
    ck_assert_int_eq(want, 7);
    ck_assert_uint_eq(fnw_handoff_count(&h), 4);
    items[10].v = 10;
    fnw_handoff_put(&h, &items[10].link);     /* the tail is right after a removal at the end */
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
    fnw_handoff h;
    fnw_handoff_init(&h);
    items[0].v = 0;
    fnw_handoff_put(&h, &items[0].link);
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
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_take_in_order_across_threads);
    tcase_add_test(tc, test_loop_is_woken_and_drains_everything);
    tcase_add_test(tc, test_remove_if_takes_the_matching_items);
    tcase_add_test(tc, test_close_releases_waiting_takers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
