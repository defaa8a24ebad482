/* runtime/entry.c — entries (entry.h): their byte storage (the copied input
 * and the staged outputs, grown geometrically and kept across reuse within
 * the limits of entry.h) and the pool they live in, so steady state
 * allocates nothing. */
#include <stdlib.h>
#include <string.h>

#include "runtime/entry.h"

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64 / elem + 1;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem)
            return -1;
        n *= 2;
    }
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

int fnw_entry_set_input(fnw_entry *en, const fnw_record *rec)
{
    en->rec.timestamp = rec->timestamp;
    en->rec.watermark = rec->watermark;
    en->rec.len = rec->len;
    if (!rec->data) {
        en->rec.data = NULL;
        return 0;
    }
    if (grow((void **)&en->in, &en->in_cap, rec->len ? rec->len : 1, 1) != 0)
        return -1;
    if (rec->len)
        memcpy(en->in, rec->data, rec->len);
    en->rec.data = en->in;
    return 0;
}

int fnw_entry_add_output(fnw_entry *en, const uint8_t *data, size_t len)
{
    if (len > UINT32_MAX || en->out_len + len > UINT32_MAX)
        return -1;
    size_t spans_cap = en->spans_cap;
    if (grow((void **)&en->spans, &spans_cap, (size_t)en->nspans + 1, sizeof *en->spans) != 0)
        return -1;
    en->spans_cap = (uint32_t)spans_cap;
    if (data && len && grow((void **)&en->out, &en->out_cap, en->out_len + len, 1) != 0)
        return -1;
    fnw_span *s = &en->spans[en->nspans++];
    s->off = (uint32_t)en->out_len;
    s->len = data ? (uint32_t)len : 0;
    s->is_null = data == NULL;
    if (data && len) {
        memcpy(en->out + en->out_len, data, len);
        en->out_len += len;
    }
    return 0;
}

static void entry_free_storage(fnw_entry *en)
{
    free(en->in);
    free(en->out);
    free(en->spans);
    en->in = en->out = NULL;
    en->spans = NULL;
    en->in_cap = en->out_cap = en->out_len = 0;
    en->nspans = en->spans_cap = 0;
}

void fnw_entry_pool_init(fnw_entry_pool *p)
{
    p->live = p->free = NULL;
    p->spare = 0;
}

fnw_entry *fnw_entry_pool_get(fnw_entry_pool *p)
{
    fnw_entry *en = p->free;
    if (en) {
        p->free = en->live_next;
        p->spare -= en->spare;
        en->spare = 0;
    } else if (!(en = calloc(1, sizeof *en)))
        return NULL;
    en->live_prev = NULL;
    en->live_next = p->live;
    if (p->live)
        p->live->live_prev = en;
    p->live = en;
    en->held_by_queue = en->held_by_call = 0;
    fnw_entry_clear_outputs(en);
    return en;
}

/* Decides what en keeps on its way to the free list (entry.h). */
static void entry_trim(fnw_entry_pool *p, fnw_entry *en)
{
    if (en->in_cap > FNW_ENTRY_KEEP_BYTES || en->out_cap > FNW_ENTRY_KEEP_BYTES ||
        en->spans_cap > FNW_ENTRY_KEEP_SPANS) {
        entry_free_storage(en);
        return;
    }
    if (en->in_cap <= FNW_ENTRY_SMALL_BYTES && en->out_cap <= FNW_ENTRY_SMALL_BYTES)
        return;
    size_t s = en->in_cap + en->out_cap + (size_t)en->spans_cap * sizeof *en->spans;
    if (p->spare + s > FNW_ENTRY_POOL_SPARE_BYTES) {
        entry_free_storage(en);
        return;
    }
    en->spare = s;
    p->spare += s;
}

void fnw_entry_pool_put(fnw_entry_pool *p, fnw_entry *en)
{
    entry_trim(p, en);
    if (en->live_prev)
        en->live_prev->live_next = en->live_next;
    else
        p->live = en->live_next;
    if (en->live_next)
        en->live_next->live_prev = en->live_prev;
    en->live_prev = NULL;
    en->live_next = p->free;
    p->free = en;
}

void fnw_entry_unhold_queue(fnw_entry_pool *p, fnw_entry *en)
{
    en->held_by_queue = 0;
    if (!en->held_by_call)
        fnw_entry_pool_put(p, en);
}

void fnw_entry_unhold_call(fnw_entry_pool *p, fnw_entry *en)
{
    en->held_by_call = 0;
    if (!en->held_by_queue)
        fnw_entry_pool_put(p, en);
}

void fnw_entry_pool_put_all(fnw_entry_pool *p)
{
    while (p->live) {
        fnw_entry *en = p->live;
        en->held_by_queue = en->held_by_call = 0;
        fnw_entry_pool_put(p, en);
    }
}

void fnw_entry_pool_free(fnw_entry_pool *p)
{
    fnw_entry_pool_put_all(p);
    while (p->free) {
        fnw_entry *en = p->free;
        p->free = en->live_next;
        entry_free_storage(en);
        free(en);
    }
}
