/* runtime/entry.h — what the runtime keeps per element (fnw_entry) and the
 * pool entries come from; internal to the runtime. Inside runtime/ "entry"
 * means this and nothing else: one input the runtime holds, with its staged
 * outputs.
 *
 * An entry holds a copy of one input (its bytes in storage the entry keeps
 * and reuses) and the outputs staged for it by the current attempt of the
 * call that carries it. Entries come from a per-engine free list, so after
 * warm-up nothing is allocated per record.
 *
 * An entry is held by the queue (from admission until it is emitted) and by
 * the call that carries it (until the operation hands the call back, which
 * for a timed-out call can be after the entry was emitted); it returns to
 * the free list when neither holds it. This header knows nothing of calls
 * or engines: both use it, it uses neither.
 */
#ifndef FNW_ENTRY_H
#define FNW_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/queue.h"
#include "runtime/record.h"

typedef struct fnw_span {
    uint32_t off, len;
    uint8_t is_null;
} fnw_span;

typedef struct fnw_entry {
    fnw_qnode q;    /* queue link; also the free/overflow link */
    fnw_record rec; /* rec.data points into in (or is NULL) */
    uint8_t *in;    /* input bytes (owned, reused) */
    size_t in_cap;
    uint8_t *out; /* staged output bytes (owned, reused) */
    size_t out_len, out_cap;
    fnw_span *spans; /* staged outputs */
    uint32_t nspans, spans_cap;
    uint64_t index; /* position within the bundle */
    uint8_t held_by_queue, held_by_call;
    size_t spare;                            /* storage counted in the pool's spare while free */
    struct fnw_entry *live_prev, *live_next; /* live list; live_next links the free list */
} fnw_entry;

/* Copies rec's bytes into the entry. -1 when out of memory. */
int fnw_entry_set_input(fnw_entry *en, const fnw_record *rec);
/* Stages one output (data NULL = null value). -1 when out of memory. */
int fnw_entry_add_output(fnw_entry *en, const uint8_t *data, size_t len);
static inline void fnw_entry_clear_outputs(fnw_entry *en)
{
    en->out_len = 0;
    en->nspans = 0;
}

/* Storage an entry keeps when it returns to the free list, so that a pool
 * holds what its traffic needs instead of creeping, entry by entry, towards
 * (entries x the largest records ever seen):
 *  - buffers whose capacity is over FNW_ENTRY_KEEP_BYTES (grown by records
 *    over about 1 KiB), or more than FNW_ENTRY_KEEP_SPANS outputs, are
 *    always given back;
 *  - an entry whose buffers are all within FNW_ENTRY_SMALL_BYTES (records
 *    up to about 128 bytes) always keeps them;
 *  - the ones between are kept while the free list's storage of such
 *    entries stays within FNW_ENTRY_POOL_SPARE_BYTES, else given back. */
#define FNW_ENTRY_KEEP_BYTES 2048
#define FNW_ENTRY_KEEP_SPANS 64
#define FNW_ENTRY_SMALL_BYTES 256
#define FNW_ENTRY_POOL_SPARE_BYTES ((size_t)256 << 10)

/* Every entry not on the free list is on the live list, so a failed bundle
 * can drop them all. */
typedef struct fnw_entry_pool {
    fnw_entry *live;
    fnw_entry *free;
    size_t spare; /* storage of free entries over the small size */
} fnw_entry_pool;

void fnw_entry_pool_init(fnw_entry_pool *p);
/* Frees the pool's memory, whoever still holds an entry. */
void fnw_entry_pool_free(fnw_entry_pool *p);
/* A cleared entry on the live list (NULL when out of memory). */
fnw_entry *fnw_entry_pool_get(fnw_entry_pool *p);
void fnw_entry_pool_put(fnw_entry_pool *p, fnw_entry *en);
/* Drop one holder; the entry goes back to the free list with the last. */
void fnw_entry_unhold_queue(fnw_entry_pool *p, fnw_entry *en);
void fnw_entry_unhold_call(fnw_entry_pool *p, fnw_entry *en);
/* Every live entry back to the free list, whoever held it. */
void fnw_entry_pool_put_all(fnw_entry_pool *p);

#endif
