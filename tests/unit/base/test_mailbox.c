/* tests/unit/base/test_mailbox.c — the pump-to-loop hand-off: completions run on
 * the loop thread in the order they were posted; many posts from another
 * thread before the loop runs are delivered by one wake-up; the ring is
 * bounded, and a post to a full ring waits for the loop to make room rather
 * than dropping anything. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/mailbox.h"

#define N_TAGS (FNW_MAILBOX_SIZE + 1)

typedef struct counted_tag {
    fnw_tag tag;
    int id;
} counted_tag;

static counted_tag tags[N_TAGS];
static int seen[N_TAGS];
static int n_seen;
static int out_of_order;

static void tag_done(fnw_tag *t, int ok)
{
    counted_tag *c = (counted_tag *)t;
    if (n_seen > 0 && seen[n_seen - 1] + 1 != c->id)
        out_of_order++;
    if (!ok)
        out_of_order++;          /* every post below says ok */
    seen[n_seen++] = c->id;
}

static void reset(void)
{
    for (int i = 0; i < N_TAGS; i++) {
        tags[i].tag.done = tag_done;
        tags[i].id = i;
    }
    n_seen = 0;
    out_of_order = 0;
}

typedef struct poster {
    fnw_mailbox *m;
    int n;
    volatile int done;
} poster;

static void *post_all(void *arg)
{
    poster *p = arg;
    for (int i = 0; i < p->n; i++)
        fnw_mailbox_post(p->m, &tags[i].tag, 1);
    __atomic_store_n(&p->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

START_TEST(drain_runs_completions_in_post_order)
{
    reset();
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_mailbox m;
    fnw_mailbox_init(&m, loop);
    for (int i = 0; i < 100; i++)
        fnw_mailbox_post(&m, &tags[i].tag, 1);
    ck_assert_uint_eq(fnw_mailbox_pending(&m), 100);
    fnw_mailbox_drain(&m);
    ck_assert_int_eq(n_seen, 100);
    ck_assert_int_eq(out_of_order, 0);
    ck_assert_uint_eq(fnw_mailbox_pending(&m), 0);
    fnw_mailbox_free(&m);
    ev_loop_destroy(loop);
}
END_TEST

START_TEST(one_wake_delivers_every_post_before_it)
{
    reset();
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_mailbox m;
    fnw_mailbox_init(&m, loop);
    poster p = {&m, 500, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, post_all, &p), 0);
    pthread_join(th, NULL);
    ck_assert_int_eq(n_seen, 0);              /* nothing runs off the loop thread */
    ev_run(loop, EVRUN_NOWAIT);               /* the wake is pending: one iteration */
    ck_assert_int_eq(n_seen, 500);
    ck_assert_int_eq(out_of_order, 0);
    fnw_mailbox_free(&m);
    ev_loop_destroy(loop);
}
END_TEST

START_TEST(a_full_ring_makes_the_poster_wait)
{
    reset();
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_mailbox m;
    fnw_mailbox_init(&m, loop);
    poster p = {&m, N_TAGS, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, post_all, &p), 0);
    while (fnw_mailbox_pending(&m) < FNW_MAILBOX_SIZE)
        sched_yield();
    usleep(20000);                            /* a poster that did not wait would be done by now */
    ck_assert_int_eq(__atomic_load_n(&p.done, __ATOMIC_SEQ_CST), 0);
    ck_assert_uint_eq(fnw_mailbox_pending(&m), FNW_MAILBOX_SIZE);
    fnw_mailbox_drain(&m);                    /* makes room: the last post goes in */
    pthread_join(th, NULL);
    fnw_mailbox_drain(&m);
    ck_assert_int_eq(n_seen, N_TAGS);
    ck_assert_int_eq(out_of_order, 0);
    fnw_mailbox_free(&m);
    ev_loop_destroy(loop);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mailbox");
    TCase *tc = tcase_create("hand-off");
    tcase_add_test(tc, drain_runs_completions_in_post_order);
    tcase_add_test(tc, one_wake_delivers_every_post_before_it);
    tcase_add_test(tc, a_full_ring_makes_the_poster_wait);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
