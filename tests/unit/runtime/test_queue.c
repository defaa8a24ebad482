/* tests/unit/runtime/test_queue.c — the element queue disciplines: ordered FIFO and
 * unordered with watermark segments (PyFlink's queue.py semantics). */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdlib.h>
#include <string.h>

#include "runtime/queue.h"

#define N 16
static fnw_qnode nodes[N];

static int idx(const fnw_qnode *n)
{
    return n ? (int)(n - nodes) : -1;
}

static int pop(fnw_queue *q)
{
    return idx(fnw_queue_pop_ready(q));
}

START_TEST(test_ordered_waits_for_head)
{
    fnw_queue q;
    fnw_queue_init(&q, 0);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(fnw_queue_put(&q, &nodes[i]), 0);
    ck_assert_uint_eq(fnw_queue_pending(&q), 5);
    for (int i = 4; i >= 1; i--) {
        fnw_queue_complete(&q, &nodes[i]);
        ck_assert_int_eq(pop(&q), -1);
    }
    fnw_queue_complete(&q, &nodes[0]);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(pop(&q), i);
    ck_assert_int_eq(pop(&q), -1);
    ck_assert_uint_eq(fnw_queue_pending(&q), 0);
    fnw_queue_free(&q);
}
END_TEST

START_TEST(test_ordered_ignores_watermarks)
{
    fnw_queue q;
    fnw_queue_init(&q, 0);
    fnw_queue_put(&q, &nodes[0]);
    fnw_queue_advance_watermark(&q, 10);
    fnw_queue_put(&q, &nodes[1]);
    fnw_queue_complete(&q, &nodes[1]);
    ck_assert_int_eq(pop(&q), -1);
    fnw_queue_complete(&q, &nodes[0]);
    ck_assert_int_eq(pop(&q), 0);
    ck_assert_int_eq(pop(&q), 1);
    fnw_queue_free(&q);
}
END_TEST

START_TEST(test_unordered_completion_order)
{
    fnw_queue q;
    fnw_queue_init(&q, 1);
    for (int i = 0; i < 4; i++)
        fnw_queue_put(&q, &nodes[i]);
    fnw_queue_complete(&q, &nodes[2]);
    ck_assert_int_eq(pop(&q), 2);
    ck_assert_int_eq(pop(&q), -1);
    fnw_queue_complete(&q, &nodes[3]);
    fnw_queue_complete(&q, &nodes[0]);
    ck_assert_int_eq(pop(&q), 3);
    ck_assert_int_eq(pop(&q), 0);
    fnw_queue_complete(&q, &nodes[1]);
    ck_assert_int_eq(pop(&q), 1);
    ck_assert_uint_eq(fnw_queue_pending(&q), 0);
    fnw_queue_free(&q);
}
END_TEST

START_TEST(test_unordered_watermark_is_a_barrier)
{
    fnw_queue q;
    fnw_queue_init(&q, 1);
    fnw_queue_advance_watermark(&q, 5);      /* empty queue: nothing to hold back */
    fnw_queue_put(&q, &nodes[0]);
    fnw_queue_put(&q, &nodes[1]);
    fnw_queue_advance_watermark(&q, 10);
    fnw_queue_put(&q, &nodes[2]);
    fnw_queue_put(&q, &nodes[3]);
    fnw_queue_advance_watermark(&q, 20);
    fnw_queue_put(&q, &nodes[4]);
    /* later segments complete first: held back */
    fnw_queue_complete(&q, &nodes[4]);
    fnw_queue_complete(&q, &nodes[3]);
    fnw_queue_complete(&q, &nodes[2]);
    ck_assert_int_eq(pop(&q), -1);
    fnw_queue_complete(&q, &nodes[1]);
    ck_assert_int_eq(pop(&q), 1);
    ck_assert_int_eq(pop(&q), -1);
    fnw_queue_complete(&q, &nodes[0]);
    ck_assert_int_eq(pop(&q), 0);
    /* the second segment in its completion order, then the third */
    ck_assert_int_eq(pop(&q), 3);
    ck_assert_int_eq(pop(&q), 2);
    ck_assert_int_eq(pop(&q), 4);
    ck_assert_int_eq(pop(&q), -1);
    ck_assert_uint_eq(fnw_queue_pending(&q), 0);
    fnw_queue_free(&q);
}
END_TEST

START_TEST(test_unordered_same_or_lower_watermark_no_barrier)
{
    fnw_queue q;
    fnw_queue_init(&q, 1);
    fnw_queue_advance_watermark(&q, 10);
    fnw_queue_put(&q, &nodes[0]);
    fnw_queue_advance_watermark(&q, 10);
    fnw_queue_advance_watermark(&q, 3);
    fnw_queue_put(&q, &nodes[1]);
    fnw_queue_complete(&q, &nodes[1]);
    ck_assert_int_eq(pop(&q), 1);
    ck_assert_int_eq(q.watermark, 10);
    fnw_queue_free(&q);
}
END_TEST

START_TEST(test_unordered_initial_watermark_is_min)
{
    fnw_queue q;
    fnw_queue_init(&q, 1);
    ck_assert(q.watermark == INT64_MIN);
    fnw_queue_put(&q, &nodes[0]);
    fnw_queue_advance_watermark(&q, INT64_MIN);   /* not an advance */
    fnw_queue_put(&q, &nodes[1]);
    fnw_queue_complete(&q, &nodes[1]);
    ck_assert_int_eq(pop(&q), 1);
    fnw_queue_advance_watermark(&q, INT64_MIN + 1);
    fnw_queue_put(&q, &nodes[2]);
    fnw_queue_complete(&q, &nodes[2]);
    ck_assert_int_eq(pop(&q), -1);
    fnw_queue_complete(&q, &nodes[0]);
    ck_assert_int_eq(pop(&q), 0);
    ck_assert_int_eq(pop(&q), 2);
    fnw_queue_free(&q);
}
END_TEST

START_TEST(test_unordered_drained_segment_is_reused)
{
    fnw_queue q;
    fnw_queue_init(&q, 1);
    fnw_queue_put(&q, &nodes[0]);
    fnw_queue_complete(&q, &nodes[0]);
    ck_assert_int_eq(pop(&q), 0);
    fnw_queue_advance_watermark(&q, 7);   /* nothing pending before it */
    fnw_queue_put(&q, &nodes[1]);
    fnw_queue_put(&q, &nodes[2]);
    fnw_queue_complete(&q, &nodes[2]);
    ck_assert_int_eq(pop(&q), 2);
    ck_assert_ptr_eq(q.first, q.last);
    fnw_queue_free(&q);
}
END_TEST

START_TEST(test_unordered_segment_closed_then_drained)
{
    /* a watermark closes a segment that then drains before the next put */
    fnw_queue q;
    fnw_queue_init(&q, 1);
    fnw_queue_put(&q, &nodes[0]);
    fnw_queue_advance_watermark(&q, 1);
    fnw_queue_complete(&q, &nodes[0]);
    ck_assert_int_eq(pop(&q), 0);
    fnw_queue_put(&q, &nodes[1]);
    fnw_queue_complete(&q, &nodes[1]);
    ck_assert_int_eq(pop(&q), 1);
    ck_assert_uint_eq(fnw_queue_pending(&q), 0);
    fnw_queue_free(&q);
}
END_TEST

START_TEST(test_clear_keeps_working)
{
    fnw_queue q;
    fnw_queue_init(&q, 1);
    for (int i = 0; i < 6; i++) {
        fnw_queue_advance_watermark(&q, i);
        fnw_queue_put(&q, &nodes[i]);
    }
    fnw_queue_clear(&q);
    ck_assert_uint_eq(fnw_queue_pending(&q), 0);
    ck_assert_int_eq(pop(&q), -1);
    fnw_queue_put(&q, &nodes[7]);
    fnw_queue_complete(&q, &nodes[7]);
    ck_assert_int_eq(pop(&q), 7);
    fnw_queue_free(&q);
}
END_TEST

START_TEST(test_unordered_random_against_model)
{
    /* random puts, watermark advances and completions; every node leaves
     * exactly once and never before a node of an earlier segment */
    enum { M = 2000 };
    fnw_qnode *ns = calloc(M, sizeof *ns);
    int *seg = calloc(M, sizeof *seg), *out = calloc(M, sizeof *out);
    unsigned char *done = calloc(M, 1);
    fnw_queue q;
    fnw_queue_init(&q, 1);
    srand(1);
    int put = 0, nout = 0, s = 0;
    int64_t wm = 0;
    while (nout < M) {
        int r = rand() % 10;
        if (r < 4 && put < M) {
            if (rand() % 5 == 0) {
                wm += 1 + rand() % 3;
                fnw_queue_advance_watermark(&q, wm);
                s++;
            }
            seg[put] = s;
            ck_assert_int_eq(fnw_queue_put(&q, &ns[put]), 0);
            put++;
        } else if (put > 0) {
            int k = rand() % put;
            if (!done[k]) {
                done[k] = 1;
                fnw_queue_complete(&q, &ns[k]);
            }
        }
        fnw_qnode *n;
        while ((n = fnw_queue_pop_ready(&q)))
            out[nout++] = (int)(n - ns);
    }
    for (int i = 1; i < M; i++)
        ck_assert_int_ge(seg[out[i]], seg[out[i - 1]]);
    memset(done, 0, M);
    for (int i = 0; i < M; i++) {
        ck_assert(!done[out[i]]);
        done[out[i]] = 1;
    }
    fnw_queue_free(&q);
    free(ns);
    free(seg);
    free(out);
    free(done);
}
END_TEST

static Suite *queue_suite(void)
{
    Suite *s = suite_create("queue");
    TCase *tc = tcase_create("queue");
    tcase_add_test(tc, test_ordered_waits_for_head);
    tcase_add_test(tc, test_ordered_ignores_watermarks);
    tcase_add_test(tc, test_unordered_completion_order);
    tcase_add_test(tc, test_unordered_watermark_is_a_barrier);
    tcase_add_test(tc, test_unordered_same_or_lower_watermark_no_barrier);
    tcase_add_test(tc, test_unordered_initial_watermark_is_min);
    tcase_add_test(tc, test_unordered_drained_segment_is_reused);
    tcase_add_test(tc, test_unordered_segment_closed_then_drained);
    tcase_add_test(tc, test_clear_keeps_working);
    tcase_add_test(tc, test_unordered_random_against_model);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(queue_suite());
}
