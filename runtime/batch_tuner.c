/* runtime/batch_tuner.c — the adaptive batch size and partial-batch delay
 * for a latency target; see batch_tuner.h for the model. */
#include "runtime/batch_tuner.h"

#include <math.h>

/* The share of the target planned with: the rest absorbs the queueing
 * and jitter the model does not see. */
#define BUDGET_SHARE 0.4
#define FIT_DECAY 0.9      /* per call: the fit follows the last ~10 calls */
#define MARGIN_SD 2.5      /* noise margin, in residual standard deviations */
#define RATE_TAU_US 50000. /* the arrival rate's time constant */
#define FLOOR_GROWTH 1.25  /* per call completed after a backlog was seen */
#define FLOOR_DECAY 0.98   /* per call completed with no backlog seen since the last */
#define MIN_DELAY_US 50.   /* a partial batch waits at least this (inputs of the same loop turn join it) */

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

double fnw_batch_tuner_predict_us(const fnw_batch_tuner *t, size_t n)
{
    if (t->calls == 0)
        return 0;
    return t->a + t->b * (double)n + MARGIN_SD * sqrt(t->var);
}

/* Chooses size and delay from the fit, the rate and the backlog floor. */
static void decide(fnw_batch_tuner *t)
{
    double max = (double)t->max, n;
    if (t->calls == 0) {
        /* nothing known of the service: fill for half the budget */
        n = t->rate > 0 ? t->rate * t->budget_us / 2 : max;
        t->size = (size_t)clamp(floor(n), 1, max);
        t->delay_us = clamp(t->budget_us / 2, MIN_DELAY_US, t->max_delay_us);
        return;
    }
    double room = t->budget_us - t->a - MARGIN_SD * sqrt(t->var);
    double per = (t->rate > 0 ? 1 / t->rate : 0) + t->b; /* µs each input adds: to fill, to serve */
    if (room <= 0)
        n = 1;
    else if (per <= 0)
        n = max;
    else
        n = room / per;
    if (n < t->floor)
        n = t->floor;
    t->size = (size_t)clamp(floor(n), 1, max);
    double delay = t->budget_us - fnw_batch_tuner_predict_us(t, t->size);
    /* When the backlog set the size, the batch must have time to reach it. */
    if (t->floor > 1 && t->rate > 0 && delay < t->floor / t->rate)
        delay = t->floor / t->rate;
    t->delay_us = clamp(delay, MIN_DELAY_US, t->max_delay_us > MIN_DELAY_US ? t->max_delay_us : MIN_DELAY_US);
}

void fnw_batch_tuner_init(fnw_batch_tuner *t, size_t max, int64_t target_ms, int64_t max_delay_ms,
                          double now_us)
{
    *t = (fnw_batch_tuner){ 0 };
    t->max = max ? max : 1;
    t->budget_us = BUDGET_SHARE * (double)target_ms * 1000.;
    t->max_delay_us = max_delay_ms > 0 ? (double)max_delay_ms * 1000. : t->budget_us;
    t->window_t0 = now_us;
    decide(t);
}

/* Closes the arrival window when it is long enough. */
static int roll(fnw_batch_tuner *t, double now_us)
{
    double dt = now_us - t->window_t0;
    if (dt < FNW_BATCH_TUNER_WINDOW_US)
        return 0;
    double inst = (double)t->arrivals / dt;
    if (t->rate <= 0)
        t->rate = inst;
    else
        t->rate += (1 - exp(-dt / RATE_TAU_US)) * (inst - t->rate);
    t->arrivals = 0;
    t->window_t0 = now_us;
    return 1;
}

void fnw_batch_tuner_arrived(fnw_batch_tuner *t, double now_us)
{
    t->arrivals++;
    if (roll(t, now_us))
        decide(t);
}

void fnw_batch_tuner_sent(fnw_batch_tuner *t, size_t n, int backlog, double now_us)
{
    (void)n;
    t->backlog |= backlog != 0;
    roll(t, now_us);
    decide(t);
}

void fnw_batch_tuner_done(fnw_batch_tuner *t, size_t n, int64_t latency_us, double now_us)
{
    double x = (double)n, y = latency_us > 0 ? (double)latency_us : 0;
    if (t->calls == 0) {
        t->var = 0.01 * y * y; /* a 10% deviation until residuals say otherwise */
    } else {
        double r = y - (t->a + t->b * x);
        t->var = FIT_DECAY * t->var + (1 - FIT_DECAY) * r * r;
    }
    t->s0 = FIT_DECAY * t->s0 + 1;
    t->sn = FIT_DECAY * t->sn + x;
    t->snn = FIT_DECAY * t->snn + x * x;
    t->sy = FIT_DECAY * t->sy + y;
    t->sny = FIT_DECAY * t->sny + x * y;
    t->calls++;
    /* The floor moves once per completed call, so it reacts to what the
     * last growth did rather than to every batch of one burst. */
    if (t->backlog)
        t->floor = clamp((t->floor > (double)t->size ? t->floor : (double)t->size) * FLOOR_GROWTH, 1,
                         (double)t->max);
    else
        t->floor *= FLOOR_DECAY;
    t->backlog = 0;
    double nbar = t->sn / t->s0, ybar = t->sy / t->s0;
    double vn = t->snn / t->s0 - nbar * nbar, cov = t->sny / t->s0 - nbar * ybar;
    /* The slope needs sizes that differ, and a service that changes while
     * the sizes do can make it come out negative; until the sizes say
     * otherwise the last slope stands (0 at first: the fill time alone then
     * limits the size). */
    if (vn > 0.25 && cov > 0)
        t->b = cov / vn;
    t->a = ybar - t->b * nbar;
    if (t->a < 0) { /* a line through the origin instead */
        t->a = 0;
        t->b = ybar / nbar;
    }
    roll(t, now_us);
    decide(t);
}
