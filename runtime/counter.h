/* runtime/counter.h — the counters operations register (fnworker.h:
 * fnw_op_counter): a fixed set per operation instance, owned by its engine,
 * whose values the engine resets at each bundle start so the metrics carry
 * what the bundle added. Values are added with relaxed atomics (a blocking
 * operation counts from its pool threads); the loop thread reads and resets
 * them. */
#ifndef FNW_COUNTER_H
#define FNW_COUNTER_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/metric_names.h"
#include "fnworker.h"

#define FNW_COUNTER_NAME_MAX FNW_METRIC_COUNTER_NAME_MAX

struct fnw_counter {
    char name[FNW_COUNTER_NAME_MAX + 1];
    int64_t value; /* this bundle's; atomic adds */
};

typedef struct fnw_counter_set {
    size_t n;
    fnw_counter items[FNW_COUNTERS_MAX];
} fnw_counter_set;

/* Every value back to 0 (a bundle starts). */
void fnw_counter_set_reset(fnw_counter_set *s);
/* Counter i's value now. */
int64_t fnw_counter_value(const fnw_counter *c);

#endif
