/* runtime/limiter.c — AIMD concurrency limit and the Retry-After pause
 * (limiter.h). */
#include "runtime/limiter.h"

void fnw_limiter_init(fnw_limiter *l, int on, int32_t min, int32_t max)
{
    if (max < 1)
        max = 1;
    if (min < 1)
        min = 1;
    if (min > max)
        min = max;
    l->on = on;
    l->min = min;
    l->max = max;
    l->limit = max;
    l->last_decrease = -1e300;
    l->paused_until = 0;
    l->pause_set_at = -1e300;
    l->decreases = 0;
    l->ok_since = 0;
}

int32_t fnw_limiter_limit(const fnw_limiter *l)
{
    int32_t n = (int32_t)l->limit;
    return n < 1 ? 1 : n;
}

double fnw_limiter_pause_left(const fnw_limiter *l, double now)
{
    return l->paused_until > now ? l->paused_until - now : 0;
}

int fnw_limiter_allows(const fnw_limiter *l, int64_t running, double now)
{
    if (l->paused_until > now)
        return 0;
    return running < (int64_t)fnw_limiter_limit(l);
}

void fnw_limiter_on_success(fnw_limiter *l)
{
    l->ok_since++;
    if (!l->on || l->limit >= l->max)
        return;
    l->limit += 1.0 / l->limit;
    if (l->limit > l->max)
        l->limit = l->max;
}

static int decrease_to(fnw_limiter *l, double next, double now)
{
    l->last_decrease = now;
    l->ok_since = 0;
    if (next < l->min)
        next = l->min;
    if (next >= l->limit)
        return 0;
    l->limit = next;
    l->decreases++;
    return 1;
}

int fnw_limiter_on_overload(fnw_limiter *l, double started, double now)
{
    if (!l->on || started <= l->last_decrease)
        return 0;
    return decrease_to(l, l->limit / 2, now);
}

int fnw_limiter_on_paused_overload(fnw_limiter *l, double started, double now)
{
    if (!l->on || started <= l->last_decrease)
        return 0;
    double next = l->limit / 2;
    if ((double)l->ok_since > next)
        next = (double)l->ok_since;
    return decrease_to(l, next, now);
}

void fnw_limiter_pause(fnw_limiter *l, double pause_s, double started, double now)
{
    if (!(pause_s > 0))
        return;
    if (started <= l->pause_set_at && l->paused_until > now)
        return; /* the burst the current pause answers */
    l->pause_set_at = now;
    if (pause_s > FNW_LIMITER_MAX_PAUSE_S)
        pause_s = FNW_LIMITER_MAX_PAUSE_S;
    if (now + pause_s > l->paused_until)
        l->paused_until = now + pause_s;
}
