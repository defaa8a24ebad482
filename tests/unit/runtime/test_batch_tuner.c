/* tests/unit/runtime/test_batch_tuner.c — the adaptive batch size against a
 * simulated service on a hand-fed clock (no loop, no wall time): inputs
 * arrive at a set rate, batches go when full or when their first input has
 * waited the tuner's delay and a call slot is free (capacity / the largest
 * batch, as the engine does; a batch at the largest size goes anyway), the
 * service takes a + b*n µs per call with a few calls at once (later calls
 * queue there), and inputs beyond the capacity wait. Every input's time from arrival to result is kept.
 * The tuner must keep p99 within the target when the service can, grow the
 * batch when the load grows or the service is the bottleneck, and shrink it
 * when the service slows down. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_run.h"

#include "runtime/batch_tuner.h"

#define TICK_US 50.
#define MAX_CALLS 4096
#define MAX_WAIT 65536

typedef struct sim_call {
    double sent, done;
    size_t n;
    size_t row0;             /* rows[row0 .. row0+n) */
} sim_call;

typedef struct sim {
    fnw_batch_tuner t;
    double now;
    /* the service */
    double a_us, b_us;
    int slots;
    double slot_free[16];
    /* the load */
    double rate_per_s, carry;
    size_t capacity, inflight, call_slots;
    int held; /* the batch being filled was due while no slot was free */
    /* rows: arrival times, in order; [admitted .. arrived) wait for capacity,
     * [batch0 .. admitted) fill the batch */
    double *arrival;
    size_t cap_rows, arrived, admitted, batch0;
    /* calls out, FIFO by done time is not needed: checked every tick */
    sim_call calls[MAX_CALLS];
    size_t ncalls;
    /* results: latencies of rows finished in the current phase */
    double *lat;
    size_t nlat;
    size_t max_size_seen, min_size_seen;
    double size_sum;
    size_t size_n;
} sim;

static void sim_init(sim *s, size_t max, int64_t target_ms, size_t capacity, double a_us, double b_us, int slots)
{
    memset(s, 0, sizeof *s);
    s->now = 1e6;
    fnw_batch_tuner_init(&s->t, max, target_ms, 0, s->now);
    s->a_us = a_us;
    s->b_us = b_us;
    s->slots = slots;
    s->capacity = capacity;
    s->call_slots = capacity / max;
    s->cap_rows = 1u << 22;
    s->arrival = malloc(s->cap_rows * sizeof *s->arrival);
    s->lat = malloc(s->cap_rows * sizeof *s->lat);
    ck_assert_ptr_nonnull(s->arrival);
    ck_assert_ptr_nonnull(s->lat);
}

static void sim_free(sim *s)
{
    free(s->arrival);
    free(s->lat);
}

/* The service: the call starts on the first free slot. */
static void send_batch(sim *s)
{
    size_t n = s->admitted - s->batch0;
    if (!n)
        return;
    fnw_batch_tuner_sent(&s->t, n, s->held || s->arrived > s->admitted, s->now);
    s->held = 0;
    int k = 0;
    for (int i = 1; i < s->slots; i++)
        if (s->slot_free[i] < s->slot_free[k])
            k = i;
    double start = s->slot_free[k] > s->now ? s->slot_free[k] : s->now;
    double done = start + s->a_us + s->b_us * (double)n;
    s->slot_free[k] = done;
    ck_assert_uint_lt(s->ncalls, MAX_CALLS);
    s->calls[s->ncalls++] = (sim_call){.sent = s->now, .done = done, .n = n, .row0 = s->batch0};
    s->batch0 = s->admitted;
}

static void admit(sim *s)
{
    while (s->admitted < s->arrived && s->inflight < s->capacity) {
        s->admitted++;
        s->inflight++;
        fnw_batch_tuner_arrived(&s->t, s->now);
        if (s->admitted - s->batch0 >= s->t.max)
            send_batch(s); /* the batcher's slots are full: it goes anyway */
    }
}

static void tick(sim *s)
{
    s->now += TICK_US;
    /* calls that ended */
    for (size_t i = 0; i < s->ncalls;) {
        sim_call *c = &s->calls[i];
        if (c->done > s->now) {
            i++;
            continue;
        }
        for (size_t r = c->row0; r < c->row0 + c->n; r++)
            s->lat[s->nlat++] = (c->done - s->arrival[r]) / 1000.;
        s->inflight -= c->n;
        fnw_batch_tuner_done(&s->t, c->n, (int64_t)(c->done - c->sent), s->now);
        s->calls[i] = s->calls[--s->ncalls];
    }
    /* arrivals */
    s->carry += s->rate_per_s * TICK_US / 1e6;
    while (s->carry >= 1) {
        ck_assert_uint_lt(s->arrived, s->cap_rows);
        s->arrival[s->arrived++] = s->now;
        s->carry -= 1;
    }
    admit(s);
    /* full, or its first input waited the delay: due; it goes when a slot is free */
    size_t n = s->admitted - s->batch0;
    if (n && (n >= fnw_batch_tuner_size(&s->t) || s->now - s->arrival[s->batch0] >= fnw_batch_tuner_delay_us(&s->t))) {
        if (s->ncalls < s->call_slots)
            send_batch(s);
        else
            s->held = 1;
    }
    size_t size = fnw_batch_tuner_size(&s->t);
    if (size > s->max_size_seen)
        s->max_size_seen = size;
    if (!s->min_size_seen || size < s->min_size_seen)
        s->min_size_seen = size;
    s->size_sum += (double)size;
    s->size_n++;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Runs seconds at rate; returns p99 of the latencies of rows finished in
 * the second half (the first half lets the tuner settle); *mean_size gets
 * the average size over the second half. */
static double phase(sim *s, double rate, double seconds, double *mean_size)
{
    s->rate_per_s = rate;
    size_t ticks = (size_t)(seconds * 1e6 / TICK_US);
    for (size_t i = 0; i < ticks / 2; i++)
        tick(s);
    s->nlat = 0;
    s->size_sum = 0;
    s->size_n = 0;
    s->max_size_seen = s->min_size_seen = 0;
    for (size_t i = ticks / 2; i < ticks; i++)
        tick(s);
    if (mean_size)
        *mean_size = s->size_n ? s->size_sum / (double)s->size_n : 0;
    if (!s->nlat)
        return 0;
    qsort(s->lat, s->nlat, sizeof *s->lat, cmp);
    return s->lat[(size_t)ceil(0.99 * (double)s->nlat) - 1];
}

/* The rows that arrived have all been answered, or are on their way. */
static void assert_keeps_up(const sim *s, double rate)
{
    ck_assert_msg(s->arrived - s->admitted < (size_t)(rate / 100) + 1,
                  "%zu inputs wait for capacity: the service did not keep up", s->arrived - s->admitted);
}

/* ---- tests ------------------------------------------------------------------------------- */

/* The W24 shape: KServe's slow model (5 ms + 0.02 ms per row, 2 calls at
 * once), the load stepping 1k -> 20k -> 5k rows/s, target 50 ms, capacity
 * for 2 calls of 256 (what the service runs at once). The batch grows with
 * the load (a batch of 8 cannot carry 20k rows/s: 2 x 8 / 5.16 ms =
 * 3.1k/s) and comes back down, and p99 stays within the target. */
START_TEST(follows_the_load_within_the_target)
{
    sim s;
    sim_init(&s, 256, 50, 512, 5000, 20, 2);
    double m1, m20, m5;
    double p1 = phase(&s, 1000, 2, &m1);
    assert_keeps_up(&s, 1000);
    double p20 = phase(&s, 20000, 2, &m20);
    assert_keeps_up(&s, 20000);
    double p5 = phase(&s, 5000, 2, &m5);
    assert_keeps_up(&s, 5000);
    ck_assert_msg(p1 <= 50 && p20 <= 50 && p5 <= 50, "p99 %.1f / %.1f / %.1f ms over the 50 ms target", p1, p20,
                  p5);
    ck_assert_msg(m20 > 2 * m1 && m20 > m5, "sizes %.0f / %.0f / %.0f do not follow the load", m1, m20, m5);
    ck_assert_msg(m20 >= 128, "size %.0f at 20k rows/s", m20);
    sim_free(&s);
}
END_TEST

/* The same with 8 call slots for a service that runs 2 calls at once (W24's
 * capacity 2,048): calls queue in the service, the fit counts that as
 * latency and the batches stay smaller than they could be at 20k rows/s,
 * but the load is carried and p99 stays within the target. */
START_TEST(more_slots_than_the_service_still_keeps_up)
{
    sim s;
    sim_init(&s, 256, 50, 2048, 5000, 20, 2);
    double m1, m20, m5;
    double p1 = phase(&s, 1000, 2, &m1);
    assert_keeps_up(&s, 1000);
    double p20 = phase(&s, 20000, 2, &m20);
    assert_keeps_up(&s, 20000);
    double p5 = phase(&s, 5000, 2, &m5);
    assert_keeps_up(&s, 5000);
    ck_assert_msg(p1 <= 50 && p20 <= 50 && p5 <= 50, "p99 %.1f / %.1f / %.1f ms over the 50 ms target", p1, p20,
                  p5);
    ck_assert_msg(m20 > 2 * m1, "sizes %.0f / %.0f / %.0f do not follow the load", m1, m20, m5);
    sim_free(&s);
}
END_TEST

/* A slow-down: the service's cost per row grows tenfold (0.02 -> 0.2 ms);
 * at 1k rows/s it still can meet 50 ms with smaller batches, and the tuner
 * shrinks the batch to do so, then grows it again when the service speeds
 * up. */
START_TEST(follows_a_slow_down_and_a_speed_up)
{
    sim s;
    sim_init(&s, 256, 50, 2048, 5000, 20, 2);
    double fast, slow, again;
    phase(&s, 4000, 2, &fast);
    s.b_us = 200;
    double p_slow = phase(&s, 4000, 3, &slow);
    assert_keeps_up(&s, 4000);
    ck_assert_msg(p_slow <= 50, "p99 %.1f ms after the slow-down", p_slow);
    ck_assert_msg(slow < fast, "size %.0f before, %.0f after the slow-down", fast, slow);
    s.b_us = 20;
    phase(&s, 4000, 2, &again);
    ck_assert_msg(again > slow, "size %.0f while slow, %.0f after the speed-up", slow, again);
    sim_free(&s);
}
END_TEST

/* When latency is the constraint (a call of n rows takes 2 + 0.5 n ms and
 * the load is light), batches stay small enough that fill + call fits. */
START_TEST(shrinks_when_latency_is_the_constraint)
{
    sim s;
    sim_init(&s, 1024, 20, 8192, 2000, 500, 8);
    double m;
    double p = phase(&s, 2000, 3, &m);
    assert_keeps_up(&s, 2000);
    ck_assert_msg(p <= 20, "p99 %.1f ms over the 20 ms target", p);
    /* 0.9 * 20 ms - 2 ms leaves 16 ms: at most 16 / (0.5 + 0.5) rows */
    ck_assert_msg(m <= 20, "mean size %.0f", m);
    ck_assert_uint_ge(s.min_size_seen, 1);
    sim_free(&s);
}
END_TEST

/* The service is the bottleneck (inputs wait for capacity): the batch grows
 * towards the maximum whatever the latency, since only bigger batches raise
 * the rows per second. */
START_TEST(grows_when_the_service_is_the_bottleneck)
{
    fnw_batch_tuner t;
    fnw_batch_tuner_init(&t, 512, 10, 0, 0);
    double now = 0;
    for (int i = 0; i < 20; i++) { /* calls slower than the target: alone, it would shrink */
        now += 20000;
        fnw_batch_tuner_arrived(&t, now);
        fnw_batch_tuner_done(&t, fnw_batch_tuner_size(&t), 20000, now);
    }
    size_t small = fnw_batch_tuner_size(&t);
    ck_assert_uint_eq(small, 1);
    for (int i = 0; i < 40; i++) { /* each call ends after batches were sent with a backlog */
        fnw_batch_tuner_sent(&t, fnw_batch_tuner_size(&t), 1, now += 100);
        fnw_batch_tuner_sent(&t, fnw_batch_tuner_size(&t), 1, now += 100);
        fnw_batch_tuner_done(&t, fnw_batch_tuner_size(&t), 20000, now += 100);
    }
    ck_assert_uint_eq(fnw_batch_tuner_size(&t), 512);
    /* the batch has the time to fill to that size (at this trickle: the
     * longest delay there is) */
    ck_assert(fnw_batch_tuner_delay_us(&t) >= t.max_delay_us - 1);
    for (int i = 0; i < 400; i++) { /* the backlog is gone: back down */
        fnw_batch_tuner_sent(&t, fnw_batch_tuner_size(&t), 0, now += 100);
        fnw_batch_tuner_done(&t, fnw_batch_tuner_size(&t), 20000, now += 100);
    }
    ck_assert_uint_lt(fnw_batch_tuner_size(&t), 16);
}
END_TEST

/* The fit: calls of different sizes give the service's fixed cost and cost
 * per row; the delay is what the budget leaves after a call of the chosen
 * size, and batch_timeout_ms caps it. */
START_TEST(fits_the_latency_line_and_caps_the_delay)
{
    fnw_batch_tuner t;
    fnw_batch_tuner_init(&t, 100, 100, 30, 0);
    ck_assert(fnw_batch_tuner_delay_us(&t) <= 30000);
    double now = 0;
    for (int i = 0; i < 50; i++) {
        size_t n = (size_t)(1 + i % 10) * 10;
        fnw_batch_tuner_done(&t, n, (int64_t)(3000 + 100 * n), now += 1000);
    }
    ck_assert(fabs(t.a - 3000) < 1);
    ck_assert(fabs(t.b - 100) < 0.01);
    double lat = fnw_batch_tuner_predict_us(&t, 50);
    ck_assert(lat >= 8000 && lat < 8400); /* the line plus a margin that shrinks as it fits */
    ck_assert(fnw_batch_tuner_delay_us(&t) <= 30000);
    ck_assert_uint_ge(fnw_batch_tuner_size(&t), 1);
    ck_assert_uint_le(fnw_batch_tuner_size(&t), 100);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("batch_tuner");
    TCase *tc = tcase_create("batch_tuner");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, follows_the_load_within_the_target);
    tcase_add_test(tc, more_slots_than_the_service_still_keeps_up);
    tcase_add_test(tc, follows_a_slow_down_and_a_speed_up);
    tcase_add_test(tc, shrinks_when_latency_is_the_constraint);
    tcase_add_test(tc, grows_when_the_service_is_the_bottleneck);
    tcase_add_test(tc, fits_the_latency_line_and_caps_the_delay);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
