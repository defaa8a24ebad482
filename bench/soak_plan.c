/* bench/soak_plan.c — what the soak runs (soak_internal.h): its
 * random numbers (splitmix64, so a seed replays the same bundles, sizes and
 * chunking) and its profiles, one descriptor each on the one worker, every
 * one the `echo` operation with the spec and options that make it behave
 * like a different flaky service: retried failures, failures then empty
 * results then success, timeouts that end empty, short batch results,
 * rare unretried failures that fail their bundle, and a service that is
 * always too slow for its TIMEOUT_FAIL timeout (its bundles always fail).
 */
#include <stdio.h>
#include <string.h>

#include "bench/soak_internal.h"

uint64_t soak_rand(soak_rng *g)
{
    uint64_t z = (g->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

uint64_t soak_range(soak_rng *g, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + soak_rand(g) % (hi - lo + 1);
}

uint64_t soak_log_range(soak_rng *g, uint64_t lo, uint64_t hi)
{
    if (lo < 1)
        lo = 1;
    if (hi <= lo)
        return lo;
    /* a random number of bits up to hi's, then a value of about that size */
    unsigned bits_hi = 64 - (unsigned)__builtin_clzll(hi);
    unsigned bits = (unsigned)soak_range(g, 1, bits_hi);
    uint64_t top = bits >= 64 ? UINT64_MAX : (1ULL << bits) - 1;
    uint64_t v = soak_range(g, top >> 1, top);
    return v < lo ? lo : v > hi ? hi : v;
}

static void retry_fixed(bench_op *op, int max_attempts, int on_error, int on_empty)
{
    op->retry_kind = 1;
    op->retry_max_attempts = max_attempts;
    op->retry_delay_ms = 1;
    op->retry_on_error = on_error;
    op->retry_on_empty = on_empty;
}

static soak_profile *add(soak_profile *p, int *n, const char *name, const char *what, int weight,
                         int batched, int unordered, int capacity, int64_t timeout_ms)
{
    soak_profile *x = &p[(*n)++];
    memset(x, 0, sizeof *x);
    x->name = name;
    x->what = what;
    x->weight = weight;
    x->max_records = 200000;
    x->op.operation = "echo";
    x->op.batched = batched;
    x->op.unordered = unordered;
    x->op.capacity = capacity;
    x->op.timeout_ms = timeout_ms;
    return x;
}

static void batch(soak_profile *x, int size, int64_t timeout_ms)
{
    x->op.batch_size = size;
    x->op.batch_timeout_ms = timeout_ms;
}

int soak_profiles(soak_profile *p, int max)
{
    if (max < 8)
        return 0;
    int n = 0;
    soak_profile *x;
    x = add(p, &n, "elem-fast", "none: settles inline", 20, 0, 1, 1000, 0);
    x = add(p, &n, "elem-retry", "fail_every 37, jitter 3 ms; retried on error (4 attempts)", 20, 0, 1, 500, 10000);
    bench_op_set(&x->op, "jitter_ms", "3");
    bench_op_set(&x->op, "fail_every", "37");
    retry_fixed(&x->op, 4, 1, 0);
    x->may_fail = 1;   /* a retry can land on a multiple of 37 again: 4 in a row fail the bundle */
    x = add(p, &n, "elem-fail-empty", "fail_attempts 1, empty_attempts 2, delay 1 ms; retried on error and empty",
            10, 0, 0, 200, 10000);
    bench_op_set(&x->op, "delay_ms", "1");
    bench_op_set(&x->op, "fail_attempts", "1");
    bench_op_set(&x->op, "empty_attempts", "2");
    retry_fixed(&x->op, 3, 1, 1);
    x->max_records = 20000;
    x = add(p, &n, "elem-timeout-empty", "jitter 20 ms over a 15 ms timeout, TIMEOUT_EMPTY", 15, 0, 1, 1000, 15);
    bench_op_set(&x->op, "jitter_ms", "20");
    x->op.on_timeout = 1;
    x->may_empty = 1;
    x = add(p, &n, "batch-short", "short_result 60 of 64, delay 2 + jitter 2 ms, ORDERED", 20, 1, 0, 4096, 10000);
    batch(x, 64, 5);
    bench_op_set(&x->op, "delay_ms", "2");
    bench_op_set(&x->op, "jitter_ms", "2");
    bench_op_set(&x->op, "short_result", "60");
    x->may_empty = 1;
    x = add(p, &n, "batch-fail-rare", "fail_every 300 batches, no retry: fails its bundle", 15, 1, 1, 2048, 10000);
    batch(x, 128, 5);
    bench_op_set(&x->op, "jitter_ms", "2");
    bench_op_set(&x->op, "fail_every", "300");
    x->may_fail = 1;
    x = add(p, &n, "batch-timeout-retry", "jitter 50 ms over a 40 ms timeout (TIMEOUT_EMPTY), fail_every 50 retried",
            10, 1, 1, 8192, 40);
    batch(x, 256, 3);
    bench_op_set(&x->op, "jitter_ms", "50");
    bench_op_set(&x->op, "fail_every", "50");
    retry_fixed(&x->op, 2, 1, 0);
    x->op.on_timeout = 1;
    x->may_empty = 1;
    x->may_fail = 1;   /* a retry can fail again (fail_every) */
    x = add(p, &n, "elem-doomed", "delay 60 ms over a 20 ms timeout, TIMEOUT_FAIL: fails its bundle", 3, 0, 1, 100, 20);
    bench_op_set(&x->op, "delay_ms", "60");
    x->max_records = 5000;
    x->must_fail = 1;
    x->may_fail = 1;
    return n;
}

int soak_only(soak_profile *p, int n, const char *names)
{
    int kept = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(p[i].name);
        const char *at = names;
        int hit = 0;
        while (!hit && (at = strstr(at, p[i].name))) {
            hit = (at == names || at[-1] == ',') && (at[len] == ',' || at[len] == '\0');
            at += len;
        }
        if (!hit)
            p[i].weight = 0;
        kept += hit;
    }
    return kept ? 0 : -1;
}

const soak_profile *soak_pick(soak_profile *p, int n, soak_rng *g)
{
    int total = 0;
    for (int i = 0; i < n; i++)
        total += p[i].weight;
    int r = (int)soak_range(g, 0, (uint64_t)total - 1);
    for (int i = 0; i < n; i++) {
        if (r < p[i].weight)
            return &p[i];
        r -= p[i].weight;
    }
    return &p[n - 1];
}
