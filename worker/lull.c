/* worker/lull.c — the no-progress rule behind --lull-seconds (see lull.h). */
#include "worker/lull.h"

void fnw_lull_init(fnw_lull *l, double lull_s, uint64_t progress, double now)
{
    l->lull_s = lull_s;
    l->progress = progress;
    l->changed = now;
    l->warned = 0;
    l->has_warned = 0;
}

int fnw_lull_check(fnw_lull *l, uint64_t progress, double now, double *idle_s)
{
    if (progress != l->progress) {
        l->progress = progress;
        l->changed = now;
        l->has_warned = 0;
        return 0;
    }
    *idle_s = now - l->changed;
    if (l->lull_s <= 0 || *idle_s < l->lull_s)
        return 0;
    if (l->has_warned && now - l->warned < l->lull_s)
        return 0;
    l->warned = now;
    l->has_warned = 1;
    return 1;
}

double fnw_lull_interval(double lull_s)
{
    double t = lull_s / 4;
    return t < 0.25 ? 0.25 : t > 10 ? 10 : t;
}
