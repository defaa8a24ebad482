/* runtime/batch_tuner.h — the adaptive batch size of batch mode with a
 * latency target (OperationSpec target_latency_ms), internal to the runtime.
 *
 * The tuner chooses, for the batch being filled, its size (1 .. the spec's
 * batch_size, then the maximum) and how long a partial batch may wait for
 * more inputs before it is sent (the delay), so that an input's time from
 * admission to result (wait to fill + call latency) stays within the target
 * while each call carries as many inputs as the target allows:
 *
 * - the service's latency as a function of the batch size is fitted from
 *   completed calls as lat(n) = a + b*n (least squares over decayed sums,
 *   so it follows a service that slows down or speeds up), with a noise
 *   margin of 2.5 times the residuals' decayed standard deviation;
 * - the arrival rate r (inputs per µs) is an exponentially weighted mean
 *   over windows of at least FNW_BATCH_TUNER_WINDOW_US;
 * - the budget is 40% of the target (the rest absorbs the service's own
 *   queueing and the jitter the fit does not see: on a loaded two-core
 *   machine a p99 is 2-3 times the median). The size is the largest n whose time
 *   to fill plus its latency fits it: n/r + lat(n) + margin <= budget; the
 *   delay is what the budget leaves after the latency of that size (capped
 *   by batch_timeout_ms when the spec sets it). At low load batches go
 *   partial at the delay; at high load they fill before it;
 * - when the service is the bottleneck (a due batch waited for a call slot,
 *   or inputs wait for capacity: the engine's backlog), latency is lost
 *   anyway, and the
 *   size grows by a quarter per backlogged batch towards the maximum,
 *   since bigger batches amortise each call's fixed cost; that floor decays
 *   once the backlog is gone, and the delay lets a batch reach it.
 *
 * The engine keeps calls at once to capacity / batch_size (its call slots),
 * as a fixed size does. The fit sees the service's own queue as latency:
 * with more call slots than the service runs at once, calls queue there,
 * the fitted latency grows, and the tuner keeps batches small and the
 * service busy rather than finding the size with the shortest queue; set
 * capacity to batch_size x the calls the service runs in parallel.
 *
 * This is Triton's dynamic batcher (max_queue_delay_microseconds with a
 * preferred batch size) with both figures derived from the target instead of
 * set by hand. Times are µs given by the caller (the loop's clock in the
 * engine, a hand-fed clock in the unit tests); nothing here allocates.
 */
#ifndef FNW_BATCH_TUNER_H
#define FNW_BATCH_TUNER_H

#include <stddef.h>
#include <stdint.h>

/* Arrivals are turned into a rate over windows at least this long. */
#define FNW_BATCH_TUNER_WINDOW_US 5000.0

typedef struct fnw_batch_tuner {
    double budget_us;    /* 90% of the target */
    double max_delay_us; /* batch_timeout_ms when set, else the budget */
    size_t max;          /* the largest batch */
    /* latency fit: decayed sums over calls (n inputs, y µs) */
    double s0, sn, snn, sy, sny;
    double a, b, var; /* y = a + b*n; residual variance */
    uint64_t calls;   /* calls heard of */
    /* arrivals */
    double rate;      /* inputs per µs; 0 until the first window */
    double window_t0; /* start of the window being counted */
    uint64_t arrivals;
    double floor; /* size the backlog asked for, decaying */
    int backlog;  /* a batch was sent with a backlog since the last call ended */
    /* the decision */
    size_t size;
    double delay_us;
} fnw_batch_tuner;

/* max >= 1 inputs per batch; target_ms > 0; max_delay_ms > 0 caps the
 * delay (0: no cap). now_us starts the first arrival window. */
void fnw_batch_tuner_init(fnw_batch_tuner *t, size_t max, int64_t target_ms, int64_t max_delay_ms,
                          double now_us);
/* One input admitted. */
void fnw_batch_tuner_arrived(fnw_batch_tuner *t, double now_us);
/* A batch of n inputs is being sent; backlog: inputs are waiting for
 * capacity (the service is the bottleneck). */
void fnw_batch_tuner_sent(fnw_batch_tuner *t, size_t n, int backlog, double now_us);
/* A call of n inputs settled latency_us after it started. */
void fnw_batch_tuner_done(fnw_batch_tuner *t, size_t n, int64_t latency_us, double now_us);
/* The predicted latency of a call of n inputs, with the noise margin, µs
 * (0 before the first call). */
double fnw_batch_tuner_predict_us(const fnw_batch_tuner *t, size_t n);

static inline size_t fnw_batch_tuner_size(const fnw_batch_tuner *t)
{
    return t->size;
}
static inline double fnw_batch_tuner_delay_us(const fnw_batch_tuner *t)
{
    return t->delay_us;
}

#endif
