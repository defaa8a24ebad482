/* runtime/hist.c — the log-linear histogram of hist.h: bucket index from
 * the value's highest set bit and the three bits below it. */
#include "runtime/hist.h"

#define SUB_BITS 3
#define SUB (1 << SUB_BITS) /* buckets per power of two */

static int bucket_of(int64_t v)
{
    if (v < SUB)
        return v < 0 ? 0 : (int)v;
    int e = 63 - __builtin_clzll((unsigned long long)v); /* >= SUB_BITS */
    int sub = (int)((v >> (e - SUB_BITS)) & (SUB - 1));
    int i = SUB + (e - SUB_BITS) * SUB + sub;
    return i < FNW_HIST_BUCKETS ? i : FNW_HIST_BUCKETS - 1;
}

void fnw_hist_bucket_range(int i, int64_t *lo, int64_t *hi)
{
    if (i < SUB) {
        *lo = *hi = i;
        return;
    }
    int e = (i - SUB) / SUB + SUB_BITS;
    int64_t sub = (i - SUB) % SUB;
    int64_t width = (int64_t)1 << (e - SUB_BITS);
    *lo = ((int64_t)SUB + sub) * width;
    *hi = *lo + width - 1;
}

void fnw_hist_add(fnw_hist *h, int64_t v)
{
    h->bucket[bucket_of(v)]++;
    h->count++;
}

int64_t fnw_hist_quantile(const fnw_hist *h, double q)
{
    if (h->count <= 0)
        return 0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    int64_t rank = (int64_t)(q * (double)h->count);
    if ((double)rank < q * (double)h->count)
        rank++; /* ceil */
    if (rank < 1)
        rank = 1;
    int64_t seen = 0;
    for (int i = 0; i < FNW_HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            int64_t lo, hi;
            fnw_hist_bucket_range(i, &lo, &hi);
            return lo + (hi - lo) / 2;
        }
    }
    return 0;
}

void fnw_hist_merge(fnw_hist *into, const fnw_hist *from)
{
    into->count += from->count;
    for (int i = 0; i < FNW_HIST_BUCKETS; i++)
        into->bucket[i] += from->bucket[i];
}
