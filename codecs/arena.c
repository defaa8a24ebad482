/* codecs/arena.c — bump allocator (see arena.h). */
#include "codecs/arena.h"

#include <stdlib.h>
#include <string.h>

struct fnw_arena_block {
    fnw_arena_block *next;
    size_t cap;
    size_t used;
    _Alignas(16) unsigned char data[];
};

#define ARENA_DEFAULT_LIMIT ((size_t)1 << 30)

void fnw_arena_init(fnw_arena *a, size_t first_block, size_t limit)
{
    a->head = NULL;
    a->block_size = first_block ? first_block : 4096;
    a->used_total = 0;
    a->limit = limit ? limit : ARENA_DEFAULT_LIMIT;
}

static fnw_arena_block *arena_new_block(fnw_arena *a, size_t need)
{
    size_t cap = a->block_size;
    if (cap < need)
        cap = need;
    fnw_arena_block *b = malloc(sizeof *b + cap);
    if (!b)
        return NULL;
    b->cap = cap;
    b->used = 0;
    b->next = a->head;
    a->head = b;
    if (a->block_size < (1u << 20))
        a->block_size *= 2;
    return b;
}

void *fnw_arena_alloc(fnw_arena *a, size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n || need > a->limit - a->used_total)
        return NULL;
    fnw_arena_block *b = a->head;
    if (!b || b->cap - b->used < need) {
        b = arena_new_block(a, need);
        if (!b)
            return NULL;
    }
    void *p = b->data + b->used;
    b->used += need;
    a->used_total += need;
    return p;
}

void *fnw_arena_memdup(fnw_arena *a, const void *p, size_t n)
{
    void *q = fnw_arena_alloc(a, n ? n : 1);
    if (q && n)
        memcpy(q, p, n);
    return q;
}

char *fnw_arena_strdup(fnw_arena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    return fnw_arena_memdup(a, s, n);
}

void fnw_arena_reset(fnw_arena *a)
{
    fnw_arena_block *keep = a->head; /* the newest block is the largest */
    if (!keep)
        return;
    fnw_arena_block *b = keep->next;
    while (b) {
        fnw_arena_block *next = b->next;
        free(b);
        b = next;
    }
    keep->next = NULL;
    keep->used = 0;
    a->used_total = 0;
}

void fnw_arena_free(fnw_arena *a)
{
    fnw_arena_block *b = a->head;
    while (b) {
        fnw_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->used_total = 0;
}
