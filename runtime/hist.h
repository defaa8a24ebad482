/* runtime/hist.h — a fixed-size histogram of non-negative integers (call
 * latencies in microseconds), for quantiles without keeping samples.
 *
 * Values below 8 have a bucket each; above, every power of two is split
 * into 8 buckets, so a quantile is within 12.5% of the true value, from
 * 0 up to 2^34 (about 4.7 hours in µs; larger values land in the last
 * bucket). 256 buckets, 2 KB, no allocation: a histogram lives inside the
 * engine's per-bundle metrics and is reset with them.
 */
#ifndef FNW_HIST_H
#define FNW_HIST_H

#include <stdint.h>

#define FNW_HIST_BUCKETS 256

typedef struct fnw_hist {
    int64_t count;
    int64_t bucket[FNW_HIST_BUCKETS];
} fnw_hist;

/* v < 0 counts as 0. */
void fnw_hist_add(fnw_hist *h, int64_t v);
/* The value at quantile q (0..1): the middle of the bucket that holds the
 * ceil(q * count)-th smallest value; 0 when the histogram is empty. */
int64_t fnw_hist_quantile(const fnw_hist *h, double q);
void fnw_hist_merge(fnw_hist *into, const fnw_hist *from);
/* The bucket's range [*lo, *hi] (inclusive), for exporters. */
void fnw_hist_bucket_range(int i, int64_t *lo, int64_t *hi);

#endif
