/* tests/unit/runtime/test_hist.c — the latency histogram: quantiles within
 * the promised 12.5% of the exact ones over wide ranges, exact for small
 * values, empty and merged histograms, and the last bucket catching values
 * past the range. */
#include <check.h>
#include <stdlib.h>

#include "runtime/hist.h"
#include "tests/unit/check_run.h"

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

START_TEST(test_empty_is_zero)
{
    fnw_hist h = { 0 };
    ck_assert_int_eq(fnw_hist_quantile(&h, 0.99), 0);
}
END_TEST

START_TEST(test_small_values_exact)
{
    fnw_hist h = { 0 };
    for (int v = 0; v < 8; v++)
        fnw_hist_add(&h, v);
    ck_assert_int_eq(fnw_hist_quantile(&h, 0.0), 0);
    ck_assert_int_eq(fnw_hist_quantile(&h, 0.5), 3);
    ck_assert_int_eq(fnw_hist_quantile(&h, 1.0), 7);
    fnw_hist_add(&h, -5); /* negative counts as 0 */
    ck_assert_int_eq(h.bucket[0], 2);
}
END_TEST

START_TEST(test_quantiles_within_bound)
{
    enum { N = 20000 };
    int64_t *v = malloc(N * sizeof *v);
    fnw_hist h = { 0 };
    srand(7);
    for (int i = 0; i < N; i++) {
        /* spread over 1 µs .. ~10 s, log-uniform-ish */
        int64_t x = (int64_t)1 << (rand() % 24);
        x += rand() % (x + 1);
        v[i] = x;
        fnw_hist_add(&h, x);
    }
    qsort(v, N, sizeof *v, cmp64);
    const double qs[] = { 0.5, 0.9, 0.95, 0.99, 0.999 };
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        int64_t exact = v[(size_t)(qs[k] * N + 0.999999) - 1];
        int64_t got = fnw_hist_quantile(&h, qs[k]);
        double err = (double)llabs(got - exact) / (double)exact;
        ck_assert_msg(err <= 0.125, "q=%g exact=%lld got=%lld", qs[k], (long long)exact, (long long)got);
    }
    free(v);
}
END_TEST

START_TEST(test_merge_and_overflow)
{
    fnw_hist a = { 0 }, b = { 0 };
    for (int i = 0; i < 99; i++)
        fnw_hist_add(&a, 1000);
    fnw_hist_add(&b, INT64_MAX); /* past the range: the last bucket */
    fnw_hist_merge(&a, &b);
    ck_assert_int_eq(a.count, 100);
    ck_assert_int_eq(a.bucket[FNW_HIST_BUCKETS - 1], 1);
    int64_t p50 = fnw_hist_quantile(&a, 0.5);
    ck_assert(p50 >= 875 && p50 <= 1125);
    ck_assert_int_gt(fnw_hist_quantile(&a, 1.0), (int64_t)1 << 33);
}
END_TEST

START_TEST(test_bucket_ranges_tile)
{
    int64_t prev_hi = -1;
    for (int i = 0; i < FNW_HIST_BUCKETS; i++) {
        int64_t lo, hi;
        fnw_hist_bucket_range(i, &lo, &hi);
        ck_assert_int_eq(lo, prev_hi + 1);
        ck_assert_int_ge(hi, lo);
        prev_hi = hi;
    }
}
END_TEST

static Suite *hist_suite(void)
{
    Suite *s = suite_create("hist");
    TCase *tc = tcase_create("hist");
    tcase_add_test(tc, test_empty_is_zero);
    tcase_add_test(tc, test_small_values_exact);
    tcase_add_test(tc, test_quantiles_within_bound);
    tcase_add_test(tc, test_merge_and_overflow);
    tcase_add_test(tc, test_bucket_ranges_tile);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(hist_suite());
}
