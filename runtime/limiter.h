/* runtime/limiter.h — adaptive concurrency for one operation: how many
 * calls may be out at once (AIMD between a minimum and the capacity) and the
 * operation-wide pause a service's Retry-After asks for. Pure arithmetic on
 * times the caller gives (loop time, seconds); the engine asks it before it
 * starts an attempt and tells it how each attempt ended
 * (docs/resilience.md).
 *
 * Decrease: the limit halves on an overload or a timeout, but only for an
 * attempt that started after the last decrease, so one burst of refusals
 * from calls already out halves it once (TCP's once per round trip).
 * Increase: each success adds 1/limit, so a whole limit's worth of
 * successes adds one.
 */
#ifndef FNW_LIMITER_H
#define FNW_LIMITER_H

#include <stdint.h>

typedef struct fnw_limiter {
    int on;               /* adaptive; off: the limit stays at max */
    double limit;         /* current limit, min..max */
    int32_t min, max;     /* bounds */
    double last_decrease; /* loop time of the last decrease */
    double paused_until;  /* no attempt starts before this loop time */
    double pause_set_at;  /* loop time the current pause was set */
    int64_t decreases;    /* times the limit went down (for tests and logs) */
    int64_t ok_since;     /* successes since the last decrease */
} fnw_limiter;

void fnw_limiter_init(fnw_limiter *l, int on, int32_t min, int32_t max);
/* The limit now, as an integer >= 1. */
int32_t fnw_limiter_limit(const fnw_limiter *l);
/* Whether an attempt may start now with running attempts out. */
int fnw_limiter_allows(const fnw_limiter *l, int64_t running, double now);
/* Seconds until the pause ends (0 when not paused). */
double fnw_limiter_pause_left(const fnw_limiter *l, double now);
/* An attempt succeeded (an answer, even a failure that is not about load). */
void fnw_limiter_on_success(fnw_limiter *l);
/* An attempt that started at started was refused for load or timed out:
 * halve the limit unless it started before the last decrease. Returns 1
 * when the limit went down. */
int fnw_limiter_on_overload(fnw_limiter *l, double started, double now);
/* An overload that came with a Retry-After (a rate limit: the pause is
 * the back-off): the limit goes to max(limit / 2, the successes since the
 * last decrease), once per burst like fnw_limiter_on_overload, so the next
 * burst after the pause can still use what the service accepted last time
 * at once instead of stretching over its window. Returns 1 when it went
 * down. */
int fnw_limiter_on_paused_overload(fnw_limiter *l, double started, double now);
/* Retry-After on an attempt that started at started: no attempt starts
 * for pause_s seconds from now (a later end than the current one wins; at
 * most FNW_LIMITER_MAX_PAUSE_S). Refusals of attempts that started before
 * the current pause was set are the same burst: they do not extend it, so
 * the pause runs from the burst's first refusal. */
void fnw_limiter_pause(fnw_limiter *l, double pause_s, double started, double now);

/* A Retry-After longer than this is taken as this: a service cannot stop
 * the job for good. */
#define FNW_LIMITER_MAX_PAUSE_S 300.0

#endif
