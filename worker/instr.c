/* worker/instr.c — the data plane's book of instruction ids (see instr.h):
 * a chained hash table that doubles as it fills, and two age-ordered queues
 * (early entries, tombstones) that the bounds and the expiry walk from the
 * oldest end. Every operation is constant time apart from table growth. */
#include "worker/instr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INITIAL_BUCKETS 64

void fnw_instr_limits_default(fnw_instr_limits *l)
{
    l->early_bytes = (size_t)4 << 20;
    l->early_total = (size_t)8 << 20;
    l->early_count = 1024;
    l->early_ttl_s = 30;
    l->tomb_count = 4096;
    l->tomb_ttl_s = 120;
}

static uint64_t hash_id(const char *id, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)id[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* ---- queues ------------------------------------------------------------------ */

static void queue_push(fnw_instr_queue *q, fnw_instr *e, double now)
{
    e->qprev = q->tail;
    e->qnext = NULL;
    if (q->tail)
        q->tail->qnext = e;
    else
        q->head = e;
    q->tail = e;
    q->n++;
    e->queued = 1;
    e->since = now;
}

static void queue_remove(fnw_instr_queue *q, fnw_instr *e)
{
    if (e->qprev)
        e->qprev->qnext = e->qnext;
    else
        q->head = e->qnext;
    if (e->qnext)
        e->qnext->qprev = e->qprev;
    else
        q->tail = e->qprev;
    q->n--;
    e->qprev = e->qnext = NULL;
    e->queued = 0;
}

static fnw_instr_queue *queue_of(fnw_instr_book *b, const fnw_instr *e)
{
    if (!e->queued)
        return NULL;
    return e->state == FNW_INSTR_EARLY ? &b->early : &b->tombs;
}

static void unqueue(fnw_instr_book *b, fnw_instr *e)
{
    fnw_instr_queue *q = queue_of(b, e);
    if (q)
        queue_remove(q, e);
}

/* ---- table ------------------------------------------------------------------- */

static int table_grow(fnw_instr_book *b)
{
    size_t n = b->n_buckets * 2;
    fnw_instr **nb = calloc(n, sizeof *nb);
    if (!nb)
        return -1;
    for (size_t i = 0; i < b->n_buckets; i++) {
        fnw_instr *e = b->buckets[i];
        while (e) {
            fnw_instr *next = e->hnext;
            size_t k = (size_t)e->hash & (n - 1);
            e->hnext = nb[k];
            nb[k] = e;
            e = next;
        }
    }
    free(b->buckets);
    b->buckets = nb;
    b->n_buckets = n;
    return 0;
}

static void table_remove(fnw_instr_book *b, fnw_instr *e)
{
    fnw_instr **pp = &b->buckets[(size_t)e->hash & (b->n_buckets - 1)];
    while (*pp && *pp != e)
        pp = &(*pp)->hnext;
    if (*pp) {
        *pp = e->hnext;
        b->count--;
    }
}

/* A tombstone past the count or age bound is forgotten. */
static void forget(fnw_instr_book *b, fnw_instr *e)
{
    unqueue(b, e);
    table_remove(b, e);
    free(e);
}

static fnw_instr *entry_new(fnw_instr_book *b, const char *id, size_t len, uint64_t h, fnw_instr_state st)
{
    if (b->count >= b->n_buckets && table_grow(b) < 0 && b->count >= 4 * b->n_buckets)
        return NULL; /* a full table still works, only longer chains */
    fnw_instr *e = calloc(1, sizeof *e + len + 1);
    if (!e)
        return NULL;
    e->hash = h;
    e->state = st;
    e->id_len = len;
    memcpy(e->id, id, len);
    e->id[len] = '\0';
    size_t k = (size_t)h & (b->n_buckets - 1);
    e->hnext = b->buckets[k];
    b->buckets[k] = e;
    b->count++;
    return e;
}

/* ---- state changes ------------------------------------------------------------- */

static void make_tombstone(fnw_instr_book *b, fnw_instr *e, fnw_instr_state st, double now)
{
    unqueue(b, e);
    e->state = st;
    queue_push(&b->tombs, e, now);
    while (b->tombs.n > b->lim.tomb_count)
        forget(b, b->tombs.head);
}

void fnw_instr_drop(fnw_instr_book *b, fnw_instr *e, fnw_instr_why why, double now)
{
    if (e->state != FNW_INSTR_EARLY && e->state != FNW_INSTR_LIVE)
        return;
    e->why = why;
    if (b->on_drop && e->data)
        b->on_drop(b->user, e);
    e->data = NULL;
    if (e->state == FNW_INSTR_EARLY)
        b->early_bytes -= e->early_bytes;
    e->early_bytes = 0;
    make_tombstone(b, e, FNW_INSTR_DROPPED, now);
}

void fnw_instr_finish(fnw_instr_book *b, fnw_instr *e, double now)
{
    if (e->state == FNW_INSTR_EARLY)
        b->early_bytes -= e->early_bytes;
    e->early_bytes = 0;
    make_tombstone(b, e, e->state == FNW_INSTR_DROPPED ? FNW_INSTR_DROPPED : FNW_INSTR_DONE, now);
}

/* ---- public ---------------------------------------------------------------------- */

int fnw_instr_init(fnw_instr_book *b, const fnw_instr_limits *lim, fnw_instr_drop_cb on_drop, void *user)
{
    memset(b, 0, sizeof *b);
    fnw_instr_limits_default(&b->lim);
    if (lim) {
        if (lim->early_bytes)
            b->lim.early_bytes = lim->early_bytes;
        if (lim->early_total)
            b->lim.early_total = lim->early_total;
        if (lim->early_count)
            b->lim.early_count = lim->early_count;
        if (lim->early_ttl_s > 0)
            b->lim.early_ttl_s = lim->early_ttl_s;
        if (lim->tomb_count)
            b->lim.tomb_count = lim->tomb_count;
        if (lim->tomb_ttl_s > 0)
            b->lim.tomb_ttl_s = lim->tomb_ttl_s;
    }
    if (b->lim.early_total < b->lim.early_bytes)
        b->lim.early_total = b->lim.early_bytes;
    b->on_drop = on_drop;
    b->user = user;
    b->n_buckets = INITIAL_BUCKETS;
    b->buckets = calloc(b->n_buckets, sizeof *b->buckets);
    return b->buckets ? 0 : -1;
}

void fnw_instr_free(fnw_instr_book *b, void (*free_data)(void *user, fnw_instr *e))
{
    for (size_t i = 0; i < b->n_buckets && b->buckets; i++) {
        fnw_instr *e = b->buckets[i];
        while (e) {
            fnw_instr *next = e->hnext;
            if (free_data && e->data)
                free_data(b->user, e);
            free(e);
            e = next;
        }
    }
    free(b->buckets);
    memset(b, 0, sizeof *b);
}

fnw_instr *fnw_instr_find(const fnw_instr_book *b, const char *id, size_t len)
{
    uint64_t h = hash_id(id, len);
    for (fnw_instr *e = b->buckets[(size_t)h & (b->n_buckets - 1)]; e; e = e->hnext)
        if (e->hash == h && e->id_len == len && memcmp(e->id, id, len) == 0)
            return e;
    return NULL;
}

fnw_instr *fnw_instr_get(fnw_instr_book *b, const char *id, size_t len, double now)
{
    fnw_instr *e = fnw_instr_find(b, id, len);
    if (e)
        return e;
    while (b->early.n >= b->lim.early_count)
        fnw_instr_drop(b, b->early.head, FNW_INSTR_TOO_MANY, now);
    e = entry_new(b, id, len, hash_id(id, len), FNW_INSTR_EARLY);
    if (e)
        queue_push(&b->early, e, now);
    return e;
}

fnw_instr *fnw_instr_live(fnw_instr_book *b, const char *id, size_t len, double now)
{
    fnw_instr *e = fnw_instr_find(b, id, len);
    if (!e)
        return entry_new(b, id, len, hash_id(id, len), FNW_INSTR_LIVE);
    if (e->state == FNW_INSTR_EARLY) {
        unqueue(b, e);
        b->early_bytes -= e->early_bytes;
        e->early_bytes = 0;
        e->state = FNW_INSTR_LIVE;
    }
    return e;
}

int fnw_instr_charge(fnw_instr_book *b, fnw_instr *e, size_t n, double now)
{
    if (e->state != FNW_INSTR_EARLY)
        return 0;
    if (n > b->lim.early_bytes - e->early_bytes) {
        fnw_instr_drop(b, e, FNW_INSTR_OVER_INSTRUCTION, now);
        return -1;
    }
    /* make room by giving up the oldest other early data */
    while (n > b->lim.early_total - b->early_bytes) {
        fnw_instr *old = b->early.head;
        if (old == e)
            old = e->qnext;
        if (!old)
            break;
        fnw_instr_drop(b, old, FNW_INSTR_OVER_TOTAL, now);
    }
    if (n > b->lim.early_total - b->early_bytes) {
        fnw_instr_drop(b, e, FNW_INSTR_OVER_TOTAL, now);
        return -1;
    }
    e->early_bytes += n;
    b->early_bytes += n;
    return 0;
}

void fnw_instr_uncharge(fnw_instr_book *b, fnw_instr *e, size_t n)
{
    if (e->state != FNW_INSTR_EARLY)
        return;
    if (n > e->early_bytes)
        n = e->early_bytes;
    e->early_bytes -= n;
    b->early_bytes -= n;
}

void fnw_instr_expire(fnw_instr_book *b, double now)
{
    while (b->early.head && now - b->early.head->since >= b->lim.early_ttl_s)
        fnw_instr_drop(b, b->early.head, FNW_INSTR_EXPIRED, now);
    while (b->tombs.head && now - b->tombs.head->since >= b->lim.tomb_ttl_s)
        forget(b, b->tombs.head);
}

int fnw_instr_idle(const fnw_instr_book *b)
{
    return b->early.n == 0 && b->tombs.n == 0;
}

const char *fnw_instr_why_text(const fnw_instr_book *b, fnw_instr_why why, char *buf, size_t n)
{
    switch (why) {
    case FNW_INSTR_OVER_INSTRUCTION:
        snprintf(buf, n, "more than the early-data bound of %zu bytes for one instruction",
                 b->lim.early_bytes);
        break;
    case FNW_INSTR_OVER_TOTAL:
        snprintf(buf, n,
                 "the early data of all instructions went over its bound of %zu bytes "
                 "and this instruction's was the oldest",
                 b->lim.early_total);
        break;
    case FNW_INSTR_TOO_MANY:
        snprintf(buf, n,
                 "more than %zu instructions had early data at once and this "
                 "instruction's was the oldest",
                 b->lim.early_count);
        break;
    case FNW_INSTR_EXPIRED:
        snprintf(buf, n, "no process_bundle request for it arrived within %g s (--early-data-ttl)",
                 b->lim.early_ttl_s);
        break;
    case FNW_INSTR_NO_MEMORY:
        snprintf(buf, n, "out of memory holding it");
        break;
    default:
        snprintf(buf, n, "it was not dropped");
        break;
    }
    return buf;
}
