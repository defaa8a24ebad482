/* worker/lull.h — deciding when a bundle has made no progress for too
 * long (--lull-seconds), apart from how progress is measured and where the
 * warning goes, so the rule can be tested with a fake clock.
 *
 * The owner samples a progress figure that only grows while work moves
 * (records read, outputs, calls started and settled, state changes) and
 * passes it with the loop time. The first warning comes once the figure
 * has not changed for lull_s seconds; while it stays unchanged, another
 * follows every lull_s seconds; any change starts the count again.
 */
#ifndef FNW_LULL_H
#define FNW_LULL_H

#include <stdint.h>

typedef struct fnw_lull {
    double lull_s;     /* 0: never warn */
    uint64_t progress; /* the figure at the last change */
    double changed;    /* loop time of the last change */
    double warned;     /* loop time of the last warning since the change */
    int has_warned;
} fnw_lull;

void fnw_lull_init(fnw_lull *l, double lull_s, uint64_t progress, double now);
/* 1: warn now (*idle_s says for how long nothing moved); 0: not now. */
int fnw_lull_check(fnw_lull *l, uint64_t progress, double now, double *idle_s);
/* How often the owner should sample: a quarter of lull_s, within [0.25 s, 10 s]. */
double fnw_lull_interval(double lull_s);

#endif
