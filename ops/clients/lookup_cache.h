/* ops/clients/lookup_cache.h — a per-operation-instance cache of a
 * service's answers by request (key bytes -> answer bytes), with request
 * coalescing: the `redis` and `http` operations use it in per-element mode
 * (options cache_max_rows, cache_ttl_ms, cache_missing, cache_max_bytes).
 *
 * The cache. A hash table (seeded hash, chains, doubled as it fills: O(1)
 * lookup) of entries in one LRU list (O(1) touch and eviction). An entry
 * lives ttl_ms from when it was stored (0: until evicted); an expired entry
 * is a miss and is removed when it is looked up or reaches the LRU tail.
 * Bounds: at most max_rows entries and at most max_bytes bytes of keys and
 * answers together; storing beyond either evicts the least recently used
 * entries first, and an answer bigger than max_bytes alone is not stored.
 * An evicted entry's memory is reused by the entry stored in its place, so
 * a full cache churning keys does not allocate.
 *
 * Coalescing. A miss makes a flight: the caller (the leader) sends the one
 * request for the key; every later get of the same key while the flight is
 * out joins it as a waiter instead of sending its own. When the answer or
 * the failure comes, the operation calls fnw_lookup_cache_settle (which
 * stores the answer when asked to and takes the flight off the table, so a
 * get during the hand-out starts afresh or hits) and then hands the answer
 * to every waiter it pops with fnw_lookup_cache_next. A waiter that is
 * cancelled (its call timed out, the bundle failed) leaves with
 * fnw_lookup_cache_leave; when the last waiter of a flight still out
 * leaves, the caller gets the flight's request back to cancel it.
 * Failures are never stored; the operation decides what is stored (a "not
 * found" answer only with cache_missing).
 *
 * Counters (fnw_counter, may be NULL): hits, misses (a get that led a new
 * request), coalesced (a get that joined a flight), evictions (entries
 * pushed out by a bound), expired (entries dropped for their age), stored
 * (answers kept), dropped (answers a row could not use, removed with
 * fnw_lookup_cache_drop). All only grow (Prometheus counters): the
 * entries held are stored - evictions - expired - dropped. The same
 * figures are in fnw_lookup_cache_stats.
 *
 * Threading: the loop's thread only; nothing is locked.
 */
#ifndef FNW_LOOKUP_CACHE_H
#define FNW_LOOKUP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "fnworker.h"

#define FNW_LOOKUP_CACHE_MAX_ROWS ((int64_t)1 << 24)
#define FNW_LOOKUP_CACHE_DEFAULT_BYTES ((int64_t)64 << 20)
#define FNW_LOOKUP_CACHE_MAX_BYTES ((int64_t)1 << 40)

typedef struct fnw_lookup_cache fnw_lookup_cache;
typedef struct fnw_lookup_flight fnw_lookup_flight;

/* One call waiting for a flight's answer; embedded in the caller's call
 * context, valid until popped by fnw_lookup_cache_next or left. */
typedef struct fnw_lookup_waiter {
    struct fnw_lookup_waiter *prev, *next;
    fnw_lookup_flight *flight; /* NULL when waiting on nothing */
    void *user;
} fnw_lookup_waiter;

typedef struct fnw_lookup_cache_config {
    int64_t max_rows;  /* >= 1 */
    int64_t max_bytes; /* keys + answers; 0 = FNW_LOOKUP_CACHE_DEFAULT_BYTES */
    int64_t ttl_ms;    /* 0 = no expiry */
    /* the clock, in ms (tests inject one); NULL = CLOCK_MONOTONIC */
    int64_t (*now_ms)(void *clock);
    void *clock;
    fnw_counter *hits, *misses, *coalesced, *evictions, *expired, *stored, *dropped;
    void *owner; /* the operation's, for fnw_lookup_cache_owner */
} fnw_lookup_cache_config;

typedef struct fnw_lookup_cache_stats {
    uint64_t hits, misses, coalesced, evictions, expired;
    size_t entries, bytes, flights;
} fnw_lookup_cache_stats;

/* NULL with err set for a bad config or no memory. */
fnw_lookup_cache *fnw_lookup_cache_new(const fnw_lookup_cache_config *cfg, fnw_error *err);
/* Frees every entry and flight (waiters still listed are dropped as is:
 * call it when no call is out). */
void fnw_lookup_cache_free(fnw_lookup_cache *c);

enum {
    FNW_LOOKUP_HIT = 0,  /* *val, *len: the answer, valid until the cache is next changed */
    FNW_LOOKUP_LEAD = 1, /* w leads a new flight: send the request, fnw_lookup_cache_set_request */
    FNW_LOOKUP_JOIN = 2, /* w waits on the flight already out for the key */
};

/* Looks key up: a hit, or w leads or joins the key's flight. -1 (err set)
 * only when out of memory. */
int fnw_lookup_cache_get(fnw_lookup_cache *c, const void *key, size_t klen, fnw_lookup_waiter *w,
                         const void **val, size_t *len, fnw_error *err);

/* The leader's request handle, given back by fnw_lookup_cache_leave. */
void fnw_lookup_cache_set_request(fnw_lookup_flight *f, void *req);

/* The flight's answer came (or its failure: store 0): with store, keeps a
 * copy of the len bytes at val under the flight's key. The flight leaves
 * the table; pop its waiters with fnw_lookup_cache_next. */
void fnw_lookup_cache_settle(fnw_lookup_cache *c, fnw_lookup_flight *f, const void *val, size_t len,
                             int store);

/* The next waiter of a settled flight (unlinked), or NULL when none is left,
 * and then the flight is freed: call it until NULL. */
fnw_lookup_waiter *fnw_lookup_cache_next(fnw_lookup_cache *c, fnw_lookup_flight *f);

/* w stops waiting (cancelled). Returns the flight's request when w was the
 * last waiter of a flight still out (the flight is gone: cancel the
 * request; its answer must not be settled), else NULL. */
void *fnw_lookup_cache_leave(fnw_lookup_cache *c, fnw_lookup_waiter *w);

/* Removes key's entry, if any (an answer a row could not use: the retry
 * asks the service again). */
void fnw_lookup_cache_drop(fnw_lookup_cache *c, const void *key, size_t klen);

/* The config's owner, from a flight (a reply callback's user). */
void *fnw_lookup_cache_owner(const fnw_lookup_flight *f);

/* An operation's cache from its options (cache_max_rows: 0 or absent = no
 * cache, *out NULL; cache_ttl_ms; cache_max_bytes; cache_missing into
 * *cache_missing), with the counters cache_hits, cache_misses,
 * cache_coalesced, cache_evictions, cache_expired, cache_stored and
 * cache_dropped
 * registered. Refuses every cache option in batch mode, naming it. The
 * message names the option. */
int fnw_lookup_cache_open(const fnw_op_env *env, const char *op_name, void *owner, fnw_lookup_cache **out,
                          int *cache_missing, fnw_error *err);

void fnw_lookup_cache_stats_get(const fnw_lookup_cache *c, fnw_lookup_cache_stats *out);

#endif
