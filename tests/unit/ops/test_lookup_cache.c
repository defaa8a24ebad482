/* tests/unit/ops/test_lookup_cache.c — the lookup cache unit
 * (ops/clients/lookup_cache.h) without a service: LRU order, TTL with an
 * injected clock, the row and byte bounds and their eviction counts, the
 * counters, and coalescing (waiters share the leader's answer or failure, a
 * cancelled waiter leaves cleanly, the last one out gets the request back to
 * cancel, a get during the hand-out starts afresh). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "ops/clients/lookup_cache.h"
#include "runtime/counter.h"
#include "tests/unit/check_run.h"

static int64_t clock_now;

static int64_t fake_clock(void *p)
{
    (void)p;
    return clock_now;
}

static fnw_lookup_cache *mk(int64_t rows, int64_t bytes, int64_t ttl)
{
    fnw_lookup_cache_config cfg = { .max_rows = rows, .max_bytes = bytes, .ttl_ms = ttl, .now_ms = fake_clock };
    fnw_error err = { "" };
    fnw_lookup_cache *c = fnw_lookup_cache_new(&cfg, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    return c;
}

/* Looks k up; on a miss stores answer "v:<k>" through a flight of its own. */
static int get_or_fill(fnw_lookup_cache *c, const char *k, char *got, size_t cap)
{
    fnw_lookup_waiter w = { 0 };
    const void *val;
    size_t len;
    fnw_error err;
    int rc = fnw_lookup_cache_get(c, k, strlen(k), &w, &val, &len, &err);
    if (rc == FNW_LOOKUP_HIT) {
        snprintf(got, cap, "%.*s", (int)len, (const char *)val);
        return rc;
    }
    ck_assert_int_eq(rc, FNW_LOOKUP_LEAD);
    fnw_lookup_flight *f = w.flight;
    char v[64];
    snprintf(v, sizeof v, "v:%s", k);
    fnw_lookup_cache_settle(c, f, v, strlen(v), 1);
    ck_assert_ptr_eq(fnw_lookup_cache_next(c, f), &w);
    ck_assert_ptr_null(fnw_lookup_cache_next(c, f));
    snprintf(got, cap, "%s", v);
    return rc;
}

START_TEST(test_hit_miss_and_lru)
{
    fnw_lookup_cache *c = mk(3, 0, 0);
    char got[64];
    ck_assert_int_eq(get_or_fill(c, "a", got, sizeof got), FNW_LOOKUP_LEAD);
    ck_assert_int_eq(get_or_fill(c, "b", got, sizeof got), FNW_LOOKUP_LEAD);
    ck_assert_int_eq(get_or_fill(c, "c", got, sizeof got), FNW_LOOKUP_LEAD);
    ck_assert_int_eq(get_or_fill(c, "a", got, sizeof got), FNW_LOOKUP_HIT); /* a is now the newest */
    ck_assert_str_eq(got, "v:a");
    ck_assert_int_eq(get_or_fill(c, "d", got, sizeof got), FNW_LOOKUP_LEAD); /* evicts b, the oldest */
    ck_assert_int_eq(get_or_fill(c, "a", got, sizeof got), FNW_LOOKUP_HIT);
    ck_assert_int_eq(get_or_fill(c, "c", got, sizeof got), FNW_LOOKUP_HIT);
    ck_assert_int_eq(get_or_fill(c, "d", got, sizeof got), FNW_LOOKUP_HIT);
    ck_assert_int_eq(get_or_fill(c, "b", got, sizeof got), FNW_LOOKUP_LEAD); /* evicts a */
    fnw_lookup_cache_stats s;
    fnw_lookup_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.hits, 4);
    ck_assert_uint_eq(s.misses, 5);
    ck_assert_uint_eq(s.evictions, 2);
    ck_assert_uint_eq(s.entries, 3);
    ck_assert_uint_eq(s.bytes, 3 * (1 + 3));
    ck_assert_uint_eq(s.flights, 0);
    ck_assert_int_eq(get_or_fill(c, "a", got, sizeof got), FNW_LOOKUP_LEAD);
    fnw_lookup_cache_free(c);
}
END_TEST

START_TEST(test_ttl)
{
    clock_now = 1000;
    fnw_lookup_cache *c = mk(10, 0, 100);
    char got[64];
    ck_assert_int_eq(get_or_fill(c, "k", got, sizeof got), FNW_LOOKUP_LEAD);
    clock_now = 1099;
    ck_assert_int_eq(get_or_fill(c, "k", got, sizeof got), FNW_LOOKUP_HIT); /* a hit does not extend it */
    clock_now = 1100;
    ck_assert_int_eq(get_or_fill(c, "k", got, sizeof got), FNW_LOOKUP_LEAD); /* expired: a miss, and refilled */
    clock_now = 1150;
    ck_assert_int_eq(get_or_fill(c, "k", got, sizeof got), FNW_LOOKUP_HIT);
    fnw_lookup_cache_stats s;
    fnw_lookup_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.expired, 1);
    ck_assert_uint_eq(s.entries, 1);
    /* an expired entry at the LRU tail counts as expired when pushed out, not evicted */
    fnw_lookup_cache_free(c);
    c = mk(1, 0, 100);
    clock_now = 0;
    get_or_fill(c, "x", got, sizeof got);
    clock_now = 500;
    get_or_fill(c, "y", got, sizeof got);
    fnw_lookup_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.expired, 1);
    ck_assert_uint_eq(s.evictions, 0);
    fnw_lookup_cache_free(c);
}
END_TEST

START_TEST(test_byte_bound)
{
    /* keys of 1 byte, answers "v:k" of 3: 4 bytes an entry; 10 bytes hold 2 */
    fnw_lookup_cache *c = mk(1000, 10, 0);
    char got[64];
    get_or_fill(c, "a", got, sizeof got);
    get_or_fill(c, "b", got, sizeof got);
    get_or_fill(c, "c", got, sizeof got);
    fnw_lookup_cache_stats s;
    fnw_lookup_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.entries, 2);
    ck_assert_uint_le(s.bytes, 10);
    ck_assert_uint_eq(s.evictions, 1);
    /* an answer larger than the whole bound is handed out but not stored, and evicts nothing */
    fnw_lookup_waiter w = { 0 };
    const void *val;
    size_t len;
    fnw_error err;
    ck_assert_int_eq(fnw_lookup_cache_get(c, "big", 3, &w, &val, &len, &err), FNW_LOOKUP_LEAD);
    fnw_lookup_flight *f = w.flight;
    fnw_lookup_cache_settle(c, f, "0123456789abcdef", 16, 1);
    ck_assert_ptr_eq(fnw_lookup_cache_next(c, f), &w);
    ck_assert_ptr_null(fnw_lookup_cache_next(c, f));
    fnw_lookup_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.entries, 2);
    ck_assert_uint_eq(s.evictions, 1);
    ck_assert_int_eq(get_or_fill(c, "b", got, sizeof got), FNW_LOOKUP_HIT);
    /* many keys through a small cache: the bounds hold throughout */
    for (int i = 0; i < 5000; i++) {
        char k[16];
        snprintf(k, sizeof k, "%d", i);
        get_or_fill(c, k, got, sizeof got);
        fnw_lookup_cache_stats_get(c, &s);
        ck_assert_uint_le(s.bytes, 10);
    }
    fnw_lookup_cache_free(c);
    /* the config bounds */
    fnw_lookup_cache_config bad = { .max_rows = 0 };
    ck_assert_ptr_null(fnw_lookup_cache_new(&bad, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "cache_max_rows"));
    bad = (fnw_lookup_cache_config){ .max_rows = 1, .max_bytes = -1 };
    ck_assert_ptr_null(fnw_lookup_cache_new(&bad, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "cache_max_bytes"));
}
END_TEST

START_TEST(test_coalescing_shares_the_answer)
{
    fnw_lookup_cache *c = mk(10, 0, 0);
    fnw_lookup_waiter w[4] = { { 0 } };
    const void *val;
    size_t len;
    fnw_error err;
    ck_assert_int_eq(fnw_lookup_cache_get(c, "k", 1, &w[0], &val, &len, &err), FNW_LOOKUP_LEAD);
    int req = 7;
    fnw_lookup_cache_set_request(w[0].flight, &req);
    for (int i = 1; i < 4; i++)
        ck_assert_int_eq(fnw_lookup_cache_get(c, "k", 1, &w[i], &val, &len, &err), FNW_LOOKUP_JOIN);
    ck_assert_ptr_eq(w[3].flight, w[0].flight);
    /* a different key leads its own flight */
    fnw_lookup_waiter other = { 0 };
    ck_assert_int_eq(fnw_lookup_cache_get(c, "j", 1, &other, &val, &len, &err), FNW_LOOKUP_LEAD);
    ck_assert_ptr_ne(other.flight, w[0].flight);
    /* a cancelled waiter leaves; the flight is still wanted by the others */
    ck_assert_ptr_null(fnw_lookup_cache_leave(c, &w[2]));
    ck_assert_ptr_null(w[2].flight);
    /* so is the leader: the request stays out for the remaining waiters */
    ck_assert_ptr_null(fnw_lookup_cache_leave(c, &w[0]));
    fnw_lookup_flight *f = w[1].flight;
    fnw_lookup_cache_settle(c, f, "ans", 3, 1);
    /* during the hand-out a get of the key hits the stored answer */
    fnw_lookup_waiter late = { 0 };
    ck_assert_int_eq(fnw_lookup_cache_get(c, "k", 1, &late, &val, &len, &err), FNW_LOOKUP_HIT);
    ck_assert_int_eq((int)len, 3);
    ck_assert_ptr_eq(fnw_lookup_cache_next(c, f), &w[1]);
    ck_assert_ptr_null(w[1].flight);
    /* a waiter cancelled during the hand-out leaves the list cleanly */
    ck_assert_ptr_null(fnw_lookup_cache_leave(c, &w[3]));
    ck_assert_ptr_null(fnw_lookup_cache_next(c, f));
    fnw_lookup_cache_stats s;
    fnw_lookup_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.misses, 2);
    ck_assert_uint_eq(s.coalesced, 3);
    ck_assert_uint_eq(s.hits, 1);
    ck_assert_uint_eq(s.flights, 1); /* j's */
    /* the last waiter of a flight still out gets the request back to cancel */
    int jreq = 9;
    fnw_lookup_cache_set_request(other.flight, &jreq);
    ck_assert_ptr_eq(fnw_lookup_cache_leave(c, &other), &jreq);
    fnw_lookup_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.flights, 0);
    /* j's flight is gone: the next get leads again */
    ck_assert_int_eq(fnw_lookup_cache_get(c, "j", 1, &other, &val, &len, &err), FNW_LOOKUP_LEAD);
    ck_assert_ptr_eq(fnw_lookup_cache_leave(c, &other), NULL); /* no request set yet */
    fnw_lookup_cache_free(c);
}
END_TEST

START_TEST(test_failure_is_not_stored)
{
    fnw_lookup_cache *c = mk(10, 0, 0);
    fnw_lookup_waiter a = { 0 }, b = { 0 };
    const void *val;
    size_t len;
    fnw_error err;
    ck_assert_int_eq(fnw_lookup_cache_get(c, "k", 1, &a, &val, &len, &err), FNW_LOOKUP_LEAD);
    ck_assert_int_eq(fnw_lookup_cache_get(c, "k", 1, &b, &val, &len, &err), FNW_LOOKUP_JOIN);
    fnw_lookup_flight *f = a.flight;
    fnw_lookup_cache_settle(c, f, NULL, 0, 0); /* the leader failed */
    /* both are handed the failure, in order */
    ck_assert_ptr_eq(fnw_lookup_cache_next(c, f), &a);
    ck_assert_ptr_eq(fnw_lookup_cache_next(c, f), &b);
    ck_assert_ptr_null(fnw_lookup_cache_next(c, f));
    /* and a retry asks again */
    ck_assert_int_eq(fnw_lookup_cache_get(c, "k", 1, &a, &val, &len, &err), FNW_LOOKUP_LEAD);
    f = a.flight;
    fnw_lookup_cache_settle(c, f, "x", 1, 1);
    ck_assert_ptr_eq(fnw_lookup_cache_next(c, f), &a);
    ck_assert_ptr_null(fnw_lookup_cache_next(c, f));
    /* drop removes a stored answer */
    fnw_lookup_cache_drop(c, "k", 1);
    ck_assert_int_eq(fnw_lookup_cache_get(c, "k", 1, &a, &val, &len, &err), FNW_LOOKUP_LEAD);
    ck_assert_ptr_null(fnw_lookup_cache_leave(c, &a));
    fnw_lookup_cache_stats s;
    fnw_lookup_cache_stats_get(c, &s);
    ck_assert_uint_eq(s.entries, 0);
    ck_assert_uint_eq(s.bytes, 0);
    fnw_lookup_cache_free(c);
}
END_TEST

START_TEST(test_counters_and_binary_keys)
{
    fnw_counter_set set = { 0 };
    fnw_op_env env = { .counters = &set };
    fnw_error err;
    fnw_lookup_cache_config cfg = { .max_rows = 2, .now_ms = fake_clock };
    cfg.hits = fnw_op_counter(&env, "cache_hits", &err);
    cfg.misses = fnw_op_counter(&env, "cache_misses", &err);
    cfg.evictions = fnw_op_counter(&env, "cache_evictions", &err);
    cfg.stored = fnw_op_counter(&env, "cache_stored", &err);
    cfg.dropped = fnw_op_counter(&env, "cache_dropped", &err);
    fnw_lookup_cache *c = fnw_lookup_cache_new(&cfg, &err);
    ck_assert_ptr_nonnull(c);
    /* keys differing only after a NUL byte, or only in length, are different keys */
    const char k1[] = { 'a', 0, 'b' }, k2[] = { 'a', 0, 'c' };
    fnw_lookup_waiter w = { 0 };
    const void *val;
    size_t len;
    const char *keys[] = { k1, k2, k1 };
    size_t lens[] = { 3, 3, 1 };
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(fnw_lookup_cache_get(c, keys[i], lens[i], &w, &val, &len, &err), FNW_LOOKUP_LEAD);
        fnw_lookup_flight *f = w.flight;
        fnw_lookup_cache_settle(c, f, &i, sizeof i, 1);
        while (fnw_lookup_cache_next(c, f))
            ;
    }
    ck_assert_int_eq(fnw_lookup_cache_get(c, k2, 3, &w, &val, &len, &err), FNW_LOOKUP_HIT);
    int got;
    memcpy(&got, val, sizeof got); /* answers are bytes: no alignment */
    ck_assert_int_eq(got, 1);
    ck_assert_int_eq(fnw_counter_value(cfg.hits), 1);
    ck_assert_int_eq(fnw_counter_value(cfg.misses), 3);
    ck_assert_int_eq(fnw_counter_value(cfg.evictions), 1);
    ck_assert_int_eq(fnw_counter_value(cfg.stored), 3);
    fnw_lookup_cache_drop(c, k2, 3);
    ck_assert_int_eq(fnw_counter_value(cfg.dropped), 1);
    fnw_lookup_cache_free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("lookup_cache");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_hit_miss_and_lru);
    tcase_add_test(tc, test_ttl);
    tcase_add_test(tc, test_byte_bound);
    tcase_add_test(tc, test_coalescing_shares_the_answer);
    tcase_add_test(tc, test_failure_is_not_stored);
    tcase_add_test(tc, test_counters_and_binary_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
