/* codecs/arena.h — bump allocator for memory whose lifetime is a bundle, a
 * batch or a call. Operations see an arena as an opaque pointer with the
 * allocation functions of fnworker.h; this header adds its layout and its
 * lifecycle for the code that owns one.
 *
 * Hot paths never malloc per record: they allocate from an arena and drop
 * everything at once with fnw_arena_reset() (keeps the first block for reuse)
 * or fnw_arena_free(). Blocks grow geometrically; one allocation larger than
 * a block gets a block of its own. An arena has a byte limit: an allocation
 * that would exceed it fails (returns NULL) instead of growing without bound,
 * so a hostile length in input data cannot make us allocate it.
 *
 * Ownership: the arena owns every byte it hands out. Not thread-safe; an
 * arena belongs to one thread (the loop thread).
 */
#ifndef FNW_ARENA_H
#define FNW_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "fnworker.h"

typedef struct fnw_arena_block fnw_arena_block;

struct fnw_arena {
    fnw_arena_block *head; /* current block (blocks form a list) */
    size_t block_size;     /* size of the next block to allocate */
    size_t used_total;     /* bytes handed out since the last reset */
    size_t limit;          /* max bytes handed out; 0 = 1 GiB */
};

void fnw_arena_init(fnw_arena *a, size_t first_block, size_t limit);
/* 1 when n more bytes stay within a's limit: an allocation of n that
 * failed all the same failed for want of memory (for error messages). */
static inline int fnw_arena_within_limit(const fnw_arena *a, size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    return need >= n && need <= a->limit - a->used_total;
}
void fnw_arena_reset(fnw_arena *a); /* drop all but the largest block */
void fnw_arena_free(fnw_arena *a);

#endif
