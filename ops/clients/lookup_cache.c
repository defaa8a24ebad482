/* ops/clients/lookup_cache.c — the lookup cache and its request
 * coalescing (lookup_cache.h): one chained hash table of entries (with
 * their LRU list), one of flights, a seeded hash, and the bounds. */
#include "ops/clients/lookup_cache.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define MIN_BUCKETS 64
#define INIT_BUCKETS ((size_t)1 << 16)
#define MAX_BUCKETS ((size_t)1 << 25)
#define SPARE_FLIGHTS 4096 /* flights at most = calls in flight (the capacity) */

typedef struct node {
    struct node *chain;
    uint64_t hash;
    size_t klen;
    const unsigned char *key;
} node;

typedef struct entry {
    node n;
    struct entry *prev, *next; /* LRU: head = most recently used */
    size_t vlen, cap;          /* mem: key then answer, cap bytes */
    int64_t expires;           /* INT64_MAX: never */
    unsigned char mem[];
} entry;

struct fnw_lookup_flight {
    node n;
    fnw_lookup_cache *cache;
    fnw_lookup_waiter *first, *last;
    void *req;
    int settled;
    size_t cap;
    unsigned char *keybuf;
    fnw_lookup_flight *spare_next;
};

typedef struct table {
    node **b;
    size_t mask, count;
} table;

struct fnw_lookup_cache {
    fnw_lookup_cache_config cfg;
    uint64_t seed;
    table entries, flights;
    entry *head, *tail;
    size_t bytes;
    fnw_lookup_flight *spare;
    size_t nspare;
    fnw_lookup_cache_stats st;
};

/* ---- hashing ------------------------------------------------------------------------ */

static uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t fmix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* murmur3-like over 8-byte words, keyed by a per-cache random seed: keys
 * come from job data, so chains must not be predictable. */
static uint64_t hash_key(uint64_t seed, const unsigned char *p, size_t n)
{
    const uint64_t k1 = 0x87c37b91114253d5ULL, k2 = 0x4cf5ad432745937fULL;
    uint64_t h = seed ^ (n * k1);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        h ^= rotl(v * k1, 31) * k2;
        h = rotl(h, 27) * 5 + 0x52dce729;
    }
    uint64_t t = 0;
    for (size_t k = 0; i + k < n; k++)
        t |= (uint64_t)p[i + k] << (8 * k);
    h ^= rotl(t * k1, 31) * k2;
    return fmix(h ^ n);
}

/* ---- tables --------------------------------------------------------------------------- */

/* Buckets for `expect` nodes up front (at most INIT_BUCKETS: 512 KiB), so a
 * cache filling up rarely rehashes (each rehash touches every node). */
static int table_init(table *t, size_t expect)
{
    size_t nb = MIN_BUCKETS;
    while (nb < INIT_BUCKETS && nb * 3 / 4 < expect)
        nb *= 2;
    t->b = calloc(nb, sizeof *t->b);
    t->mask = nb - 1;
    t->count = 0;
    return t->b ? 0 : -1;
}

static node *table_find(const table *t, uint64_t h, const void *key, size_t klen)
{
    for (node *n = t->b[h & t->mask]; n; n = n->chain)
        if (n->hash == h && n->klen == klen && memcmp(n->key, key, klen) == 0)
            return n;
    return NULL;
}

/* Doubles the buckets when the table is more than 3/4 full (short chains:
 * each node a lookup passes is a likely cache miss); a failed allocation
 * keeps the old size (chains only get longer). */
static void table_grow(table *t)
{
    size_t nb = t->mask + 1;
    if (t->count <= nb / 4 * 3 || nb >= MAX_BUCKETS)
        return;
    node **b = calloc(nb * 2, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < nb; i++)
        for (node *n = t->b[i], *next; n; n = next) {
            next = n->chain;
            node **slot = &b[n->hash & (nb * 2 - 1)];
            n->chain = *slot;
            *slot = n;
        }
    free(t->b);
    t->b = b;
    t->mask = nb * 2 - 1;
}

static void table_put(table *t, node *n)
{
    node **slot = &t->b[n->hash & t->mask];
    n->chain = *slot;
    *slot = n;
    t->count++;
    table_grow(t);
}

static void table_remove(table *t, node *n)
{
    for (node **p = &t->b[n->hash & t->mask]; *p; p = &(*p)->chain)
        if (*p == n) {
            *p = n->chain;
            t->count--;
            return;
        }
}

/* ---- entries ------------------------------------------------------------------------- */

static int64_t now_ms(const fnw_lookup_cache *c)
{
    if (c->cfg.now_ms)
        return c->cfg.now_ms(c->cfg.clock);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void lru_unlink(fnw_lookup_cache *c, entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push_head(fnw_lookup_cache *c, entry *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    c->head = e;
    if (!c->tail)
        c->tail = e;
}

enum { GONE_EVICTED, GONE_EXPIRED, GONE_DROPPED };

/* Takes e out of the table, the list and the figures; the caller frees or reuses it. */
static void entry_unlink(fnw_lookup_cache *c, entry *e, int why)
{
    table_remove(&c->entries, &e->n);
    lru_unlink(c, e);
    c->bytes -= e->n.klen + e->vlen;
    c->st.entries--;
    if (why == GONE_EVICTED) {
        c->st.evictions++;
        fnw_counter_add(c->cfg.evictions, 1);
    } else if (why == GONE_EXPIRED) {
        c->st.expired++;
        fnw_counter_add(c->cfg.expired, 1);
    } else {
        fnw_counter_add(c->cfg.dropped, 1);
    }
}

static void store(fnw_lookup_cache *c, const node *k, const void *val, size_t len)
{
    size_t need = k->klen + len;
    if (need < k->klen || need > (uint64_t)c->cfg.max_bytes)
        return;
    /* No entry for the key can exist here: a flight is made only when the
     * key has no live entry, only its own settle stores the key, and a get
     * while it is out joins it rather than making another. */
    entry *spare = NULL;
    int64_t now = now_ms(c);
    while (c->tail &&
           ((int64_t)c->st.entries + 1 > c->cfg.max_rows || c->bytes + need > (size_t)c->cfg.max_bytes)) {
        entry *v = c->tail;
        entry_unlink(c, v, v->expires <= now ? GONE_EXPIRED : GONE_EVICTED);
        if (!spare || spare->cap < v->cap) {
            free(spare);
            spare = v;
        } else {
            free(v);
        }
    }
    entry *e = spare;
    if (!e || e->cap < need) {
        size_t cap = need < 64 ? 64 : need;
        entry *grown = realloc(e, sizeof *e + cap);
        if (!grown) {
            free(e);
            return; /* out of memory: not cached, the answer is still handed out */
        }
        e = grown;
        e->cap = cap;
    }
    memcpy(e->mem, k->key, k->klen);
    if (len)
        memcpy(e->mem + k->klen, val, len);
    e->n.hash = k->hash;
    e->n.klen = k->klen;
    e->n.key = e->mem;
    e->vlen = len;
    e->expires = c->cfg.ttl_ms > 0 ? now + c->cfg.ttl_ms : INT64_MAX;
    table_put(&c->entries, &e->n);
    lru_push_head(c, e);
    c->bytes += need;
    c->st.entries++;
    fnw_counter_add(c->cfg.stored, 1);
}

/* ---- flights ------------------------------------------------------------------------- */

static fnw_lookup_flight *flight_new(fnw_lookup_cache *c, uint64_t h, const void *key, size_t klen)
{
    fnw_lookup_flight *f = c->spare;
    if (f) {
        c->spare = f->spare_next;
        c->nspare--;
    } else if (!(f = calloc(1, sizeof *f))) {
        return NULL;
    }
    if (f->cap < klen) {
        unsigned char *k = realloc(f->keybuf, klen);
        if (!k) {
            free(f->keybuf);
            free(f);
            return NULL;
        }
        f->keybuf = k;
        f->cap = klen;
    }
    if (klen)
        memcpy(f->keybuf, key, klen);
    f->n = (node){ .hash = h, .klen = klen, .key = f->keybuf };
    f->cache = c;
    f->first = f->last = NULL;
    f->req = NULL;
    f->settled = 0;
    return f;
}

static void flight_free(fnw_lookup_cache *c, fnw_lookup_flight *f)
{
    c->st.flights--;
    if (c->nspare < SPARE_FLIGHTS && f->cap <= 4096) {
        f->spare_next = c->spare;
        c->spare = f;
        c->nspare++;
        return;
    }
    free(f->keybuf);
    free(f);
}

static void waiter_link(fnw_lookup_flight *f, fnw_lookup_waiter *w)
{
    w->flight = f;
    w->next = NULL;
    w->prev = f->last;
    if (f->last)
        f->last->next = w;
    else
        f->first = w;
    f->last = w;
}

static void waiter_unlink(fnw_lookup_flight *f, fnw_lookup_waiter *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        f->first = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        f->last = w->prev;
    w->prev = w->next = NULL;
    w->flight = NULL;
}

/* ---- the interface --------------------------------------------------------------------- */

fnw_lookup_cache *fnw_lookup_cache_new(const fnw_lookup_cache_config *cfg, fnw_error *err)
{
    if (cfg->max_rows < 1 || cfg->max_rows > FNW_LOOKUP_CACHE_MAX_ROWS) {
        fnw_error_set(err, "cache_max_rows must be 1..%lld", (long long)FNW_LOOKUP_CACHE_MAX_ROWS);
        return NULL;
    }
    if (cfg->max_bytes < 0 || cfg->max_bytes > FNW_LOOKUP_CACHE_MAX_BYTES || cfg->ttl_ms < 0) {
        fnw_error_set(err, "cache_max_bytes must be 1..%lld and cache_ttl_ms at least 0",
                      (long long)FNW_LOOKUP_CACHE_MAX_BYTES);
        return NULL;
    }
    fnw_lookup_cache *c = calloc(1, sizeof *c);
    if (!c) {
        fnw_error_set(err, "out of memory for the lookup cache");
        return NULL;
    }
    c->cfg = *cfg;
    if (c->cfg.max_bytes == 0)
        c->cfg.max_bytes = FNW_LOOKUP_CACHE_DEFAULT_BYTES;
    if (getrandom(&c->seed, sizeof c->seed, GRND_NONBLOCK) != (ssize_t)sizeof c->seed)
        c->seed = (uint64_t)(uintptr_t)c ^ (uint64_t)now_ms(c) * 0x9e3779b97f4a7c15ULL;
    if (table_init(&c->entries, (size_t)c->cfg.max_rows) != 0 || table_init(&c->flights, 0) != 0) {
        fnw_lookup_cache_free(c);
        fnw_error_set(err, "out of memory for the lookup cache");
        return NULL;
    }
    return c;
}

void fnw_lookup_cache_free(fnw_lookup_cache *c)
{
    if (!c)
        return;
    for (entry *e = c->head, *next; e; e = next) {
        next = e->next;
        free(e);
    }
    if (c->flights.b)
        for (size_t i = 0; i <= c->flights.mask; i++)
            for (node *n = c->flights.b[i], *next; n; n = next) {
                next = n->chain;
                free(((fnw_lookup_flight *)n)->keybuf);
                free(n);
            }
    for (fnw_lookup_flight *f = c->spare, *next; f; f = next) {
        next = f->spare_next;
        free(f->keybuf);
        free(f);
    }
    free(c->entries.b);
    free(c->flights.b);
    free(c);
}

int fnw_lookup_cache_get(fnw_lookup_cache *c, const void *key, size_t klen, fnw_lookup_waiter *w,
                         const void **val, size_t *len, fnw_error *err)
{
    uint64_t h = hash_key(c->seed, key, klen);
    entry *e = (entry *)table_find(&c->entries, h, key, klen);
    if (e && c->cfg.ttl_ms > 0 && e->expires <= now_ms(c)) {
        entry_unlink(c, e, GONE_EXPIRED);
        free(e);
        e = NULL;
    }
    if (e) {
        if (c->head != e) {
            lru_unlink(c, e);
            lru_push_head(c, e);
        }
        c->st.hits++;
        fnw_counter_add(c->cfg.hits, 1);
        *val = e->mem + e->n.klen;
        *len = e->vlen;
        return FNW_LOOKUP_HIT;
    }
    fnw_lookup_flight *f = (fnw_lookup_flight *)table_find(&c->flights, h, key, klen);
    if (f) {
        waiter_link(f, w);
        c->st.coalesced++;
        fnw_counter_add(c->cfg.coalesced, 1);
        return FNW_LOOKUP_JOIN;
    }
    if (!(f = flight_new(c, h, key, klen)))
        return fnw_error_set(err, "out of memory for the lookup cache");
    c->st.flights++;
    table_put(&c->flights, &f->n);
    waiter_link(f, w);
    c->st.misses++;
    fnw_counter_add(c->cfg.misses, 1);
    return FNW_LOOKUP_LEAD;
}

void fnw_lookup_cache_set_request(fnw_lookup_flight *f, void *req)
{
    f->req = req;
}

void fnw_lookup_cache_settle(fnw_lookup_cache *c, fnw_lookup_flight *f, const void *val, size_t len,
                             int store_it)
{
    if (f->settled)
        return;
    table_remove(&c->flights, &f->n);
    f->settled = 1;
    f->req = NULL;
    if (store_it)
        store(c, &f->n, val, len);
}

fnw_lookup_waiter *fnw_lookup_cache_next(fnw_lookup_cache *c, fnw_lookup_flight *f)
{
    fnw_lookup_waiter *w = f->first;
    if (w) {
        waiter_unlink(f, w);
        return w;
    }
    flight_free(c, f);
    return NULL;
}

void *fnw_lookup_cache_leave(fnw_lookup_cache *c, fnw_lookup_waiter *w)
{
    fnw_lookup_flight *f = w->flight;
    if (!f)
        return NULL;
    waiter_unlink(f, w);
    if (f->settled || f->first)
        return NULL;
    void *req = f->req;
    table_remove(&c->flights, &f->n);
    flight_free(c, f);
    return req;
}

void fnw_lookup_cache_drop(fnw_lookup_cache *c, const void *key, size_t klen)
{
    entry *e = (entry *)table_find(&c->entries, hash_key(c->seed, key, klen), key, klen);
    if (e) {
        entry_unlink(c, e, GONE_DROPPED);
        free(e);
    }
}

void fnw_lookup_cache_stats_get(const fnw_lookup_cache *c, fnw_lookup_cache_stats *out)
{
    *out = c->st;
    out->bytes = c->bytes;
}

void *fnw_lookup_cache_owner(const fnw_lookup_flight *f)
{
    return f->cache->cfg.owner;
}

static const char *const cache_options[] = { "cache_max_rows", "cache_ttl_ms", "cache_max_bytes",
                                             "cache_missing", NULL };

int fnw_lookup_cache_open(const fnw_op_env *env, const char *op_name, void *owner, fnw_lookup_cache **out,
                          int *cache_missing, fnw_error *err)
{
    const fnw_options *o = env->options;
    *out = NULL;
    *cache_missing = 0;
    for (size_t i = 0; env->batched && cache_options[i]; i++)
        if (fnw_options_get(o, cache_options[i]))
            return fnw_error_set(err,
                                 "operation '%s': option '%s' works in per-element mode only (the cache keeps "
                                 "one answer per row's request; in mode BATCH a request carries many rows): "
                                 "remove it or use mode PER_ELEMENT",
                                 op_name, cache_options[i]);
    int64_t rows, ttl, bytes;
    if (fnw_options_int(o, "cache_max_rows", 0, 0, FNW_LOOKUP_CACHE_MAX_ROWS, &rows, err) ||
        fnw_options_int(o, "cache_ttl_ms", 0, 0, (int64_t)365 * 24 * 3600 * 1000, &ttl, err) ||
        fnw_options_int(o, "cache_max_bytes", FNW_LOOKUP_CACHE_DEFAULT_BYTES, 1, FNW_LOOKUP_CACHE_MAX_BYTES,
                        &bytes, err) ||
        fnw_options_bool(o, "cache_missing", 0, cache_missing, err)) {
        fnw_error why = *err;
        return fnw_error_set(err, "operation '%s': %s", op_name, why.msg);
    }
    if (rows == 0) {
        for (size_t i = 1; cache_options[i]; i++)
            if (fnw_options_get(o, cache_options[i]))
                return fnw_error_set(err,
                                     "operation '%s': option '%s' needs option 'cache_max_rows' (the number of "
                                     "answers the cache keeps; 0 or absent: no cache)",
                                     op_name, cache_options[i]);
        return 0;
    }
    fnw_lookup_cache_config cfg = { .max_rows = rows, .max_bytes = bytes, .ttl_ms = ttl, .owner = owner };
    fnw_counter **slots[] = { &cfg.hits,    &cfg.misses, &cfg.coalesced, &cfg.evictions,
                              &cfg.expired, &cfg.stored, &cfg.dropped };
    const char *names[] = { "cache_hits",    "cache_misses", "cache_coalesced", "cache_evictions",
                            "cache_expired", "cache_stored", "cache_dropped" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        fnw_error why;
        if (env->counters && !(*slots[i] = fnw_op_counter(env, names[i], &why)))
            return fnw_error_set(err, "operation '%s': %s", op_name, why.msg);
    }
    fnw_error why;
    if (!(*out = fnw_lookup_cache_new(&cfg, &why)))
        return fnw_error_set(err, "operation '%s': %s", op_name, why.msg);
    return 0;
}
