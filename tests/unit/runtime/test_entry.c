/* tests/unit/runtime/test_entry.c — the entry pool (runtime/entry.h): entries come
 * back from the free list with their storage, so steady state allocates
 * nothing, but storage a burst of big records grew is given back when the
 * entry returns to the pool, so a long-running worker's memory does not
 * creep towards (entries x the largest record ever seen). The soak (make
 * soak) found that creep: RSS grew from 78 MB to 227 MB in 20 s. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/entry.h"
#include "tests/unit/check_run.h"

static void fill(fnw_entry *en, size_t in_len, size_t out_len, int outputs)
{
    uint8_t *buf = malloc(in_len > out_len ? in_len : out_len);
    ck_assert_ptr_nonnull(buf);
    memset(buf, 'x', in_len > out_len ? in_len : out_len);
    fnw_record rec = {0};
    rec.data = buf;
    rec.len = in_len;
    ck_assert_int_eq(fnw_entry_set_input(en, &rec), 0);
    for (int i = 0; i < outputs; i++)
        ck_assert_int_eq(fnw_entry_add_output(en, buf, out_len / (size_t)outputs), 0);
    free(buf);
}

START_TEST(small_storage_is_reused)
{
    fnw_entry_pool p;
    fnw_entry_pool_init(&p);
    fnw_entry *en = fnw_entry_pool_get(&p);
    ck_assert_ptr_nonnull(en);
    fill(en, 100, 100, 1);
    const uint8_t *in = en->in, *out = en->out;
    fnw_entry_pool_put(&p, en);
    fnw_entry *again = fnw_entry_pool_get(&p);
    ck_assert_ptr_eq(again, en);
    ck_assert_ptr_eq(again->in, in);      /* kept: no allocation on reuse */
    ck_assert_ptr_eq(again->out, out);
    ck_assert_uint_ge(again->in_cap, 100);
    ck_assert_uint_eq(again->nspans, 0);  /* but no stale outputs */
    fnw_entry_pool_free(&p);
}
END_TEST

START_TEST(records_of_1_kib_keep_their_storage)
{
    fnw_entry_pool p;
    fnw_entry_pool_init(&p);
    fnw_entry *en = fnw_entry_pool_get(&p);
    fill(en, 1024, 1024, 1);
    ck_assert_uint_le(en->in_cap, FNW_ENTRY_KEEP_BYTES);
    const uint8_t *in = en->in;
    fnw_entry_pool_put(&p, en);
    ck_assert_ptr_eq(fnw_entry_pool_get(&p)->in, in);
    fnw_entry_pool_free(&p);
}
END_TEST

START_TEST(big_storage_is_given_back)
{
    fnw_entry_pool p;
    fnw_entry_pool_init(&p);
    fnw_entry *en = fnw_entry_pool_get(&p);
    fill(en, 64 * 1024, 64 * 1024, 100);
    ck_assert_uint_ge(en->in_cap, 64 * 1024);
    fnw_entry_pool_put(&p, en);
    fnw_entry *again = fnw_entry_pool_get(&p);
    ck_assert_ptr_eq(again, en);
    ck_assert_uint_le(again->in_cap, FNW_ENTRY_KEEP_BYTES);
    ck_assert_uint_le(again->out_cap, FNW_ENTRY_KEEP_BYTES);
    ck_assert_uint_le(again->spans_cap, FNW_ENTRY_KEEP_SPANS);
    /* and it still works */
    fill(again, 300, 300, 2);
    ck_assert_uint_eq(again->rec.len, 300);
    ck_assert_uint_eq(again->nspans, 2);
    ck_assert_int_eq(again->in[299], 'x');
    fnw_entry_pool_free(&p);
}
END_TEST

/* Entries released through the hold counts (queue, then call) give back
 * their big storage too: after a burst of big records through many
 * entries, the pool keeps at most entries x the limit. */
START_TEST(a_burst_of_big_records_leaves_the_pool_small)
{
    enum { N = 200 };
    fnw_entry_pool p;
    fnw_entry_pool_init(&p);
    fnw_entry *ens[N];
    for (int i = 0; i < N; i++) {
        ens[i] = fnw_entry_pool_get(&p);
        ck_assert_ptr_nonnull(ens[i]);
        fill(ens[i], 20000, 20000, 1);
        ens[i]->held_by_queue = ens[i]->held_by_call = 1;
    }
    for (int i = 0; i < N; i++) {
        fnw_entry_unhold_queue(&p, ens[i]);
        ck_assert_uint_ge(ens[i]->in_cap, 20000);   /* the call still holds it */
        fnw_entry_unhold_call(&p, ens[i]);
    }
    size_t kept = 0;
    int n = 0;
    for (fnw_entry *en = p.free; en; en = en->live_next, n++)
        kept += en->in_cap + en->out_cap;
    ck_assert_int_eq(n, N);
    ck_assert_uint_le(kept, (size_t)N * 2 * FNW_ENTRY_KEEP_BYTES);
    fnw_entry_pool_free(&p);
}
END_TEST

/* Entries of mid-sized records (between the small size and the keep limit)
 * keep their storage only while the free list's share of it stays within
 * the pool's spare budget: 8,000 entries of 1 KiB records leave at most
 * that much behind, and the rest give theirs back. */
START_TEST(mid_sized_storage_is_kept_within_the_spare_budget)
{
    enum { N = 8000 };
    fnw_entry_pool p;
    fnw_entry_pool_init(&p);
    fnw_entry **ens = calloc(N, sizeof *ens);
    ck_assert_ptr_nonnull(ens);
    for (int i = 0; i < N; i++) {
        ens[i] = fnw_entry_pool_get(&p);
        ck_assert_ptr_nonnull(ens[i]);
        fill(ens[i], 1024, 1024, 1);
    }
    for (int i = 0; i < N; i++)
        fnw_entry_pool_put(&p, ens[i]);
    size_t kept = 0;
    int keeping = 0;
    for (fnw_entry *en = p.free; en; en = en->live_next) {
        kept += en->in_cap + en->out_cap;
        keeping += en->in != NULL;
    }
    ck_assert_uint_le(kept, FNW_ENTRY_POOL_SPARE_BYTES);
    ck_assert_uint_ge(p.spare, kept);   /* the spans are counted too */
    ck_assert_uint_le(p.spare, FNW_ENTRY_POOL_SPARE_BYTES);
    ck_assert_int_gt(keeping, 0);
    ck_assert_int_lt(keeping, N);
    /* taking entries off the free list takes their storage out of the count */
    while (p.free)
        (void)fnw_entry_pool_get(&p);
    ck_assert_uint_eq(p.spare, 0);
    free(ens);
    fnw_entry_pool_free(&p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("entry");
    TCase *tc = tcase_create("pool");
    tcase_add_test(tc, small_storage_is_reused);
    tcase_add_test(tc, records_of_1_kib_keep_their_storage);
    tcase_add_test(tc, big_storage_is_given_back);
    tcase_add_test(tc, a_burst_of_big_records_leaves_the_pool_small);
    tcase_add_test(tc, mid_sized_storage_is_kept_within_the_spare_budget);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
