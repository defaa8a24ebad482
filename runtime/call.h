/* runtime/call.h — what the engine keeps per element (fnw_entry) and per
 * operation call (fnw_call); internal to the runtime.
 *
 * An entry holds a copy of one input (its bytes in storage the entry keeps
 * and reuses) and the outputs staged for it by the current attempt. Entries
 * and calls come from per-engine free lists, so after warm-up nothing is
 * allocated per record.
 *
 * An entry is held by the queue (from admission until it is emitted) and by
 * the call that carries it (until the operation hands the call back, which
 * for a timed-out call can be after the entry was emitted); it returns to
 * the free list when neither holds it.
 */
#ifndef FNW_CALL_H
#define FNW_CALL_H

#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "codecs/arena.h"
#include "codecs/buf.h"
#include "codecs/type.h"
#include "runtime/operation.h"
#include "runtime/queue.h"
#include "runtime/record.h"

typedef struct fnw_engine fnw_engine;

typedef struct fnw_span {
    uint32_t off, len;
    uint8_t is_null;
} fnw_span;

typedef struct fnw_entry {
    fnw_qnode q;                 /* queue link; also the free/overflow link */
    fnw_record rec;              /* rec.data points into in (or is NULL) */
    uint8_t *in;                 /* input bytes (owned, reused) */
    size_t in_cap;
    uint8_t *out;                /* staged output bytes (owned, reused) */
    size_t out_len, out_cap;
    fnw_span *spans;             /* staged outputs */
    uint32_t nspans, spans_cap;
    uint64_t index;              /* position within the bundle */
    uint8_t held_by_queue, held_by_call;
    struct fnw_entry *live_prev, *live_next;  /* live list; live_next links the free list */
} fnw_entry;

/* Copies rec's bytes into the entry. -1 when out of memory. */
int fnw_entry_set_input(fnw_entry *en, const fnw_record *rec);
/* Stages one output (data NULL = null value). -1 when out of memory. */
int fnw_entry_add_output(fnw_entry *en, const uint8_t *data, size_t len);
static inline void fnw_entry_clear_outputs(fnw_entry *en) { en->out_len = 0; en->nspans = 0; }

/* Every entry not on the free list is on the live list, so a failed bundle
 * can drop them all. */
typedef struct fnw_entry_pool {
    fnw_entry *live;
    fnw_entry *free;
} fnw_entry_pool;

/* A cleared entry on the live list (NULL when out of memory). */
fnw_entry *fnw_entry_get(fnw_entry_pool *p);
void fnw_entry_put(fnw_entry_pool *p, fnw_entry *en);
/* Drop one holder; the entry goes back to the free list with the last. */
void fnw_entry_unhold_queue(fnw_entry_pool *p, fnw_entry *en);
void fnw_entry_unhold_call(fnw_entry_pool *p, fnw_entry *en);
/* Every live entry back to the free list, whoever held it. */
void fnw_entry_release_all(fnw_entry_pool *p);
/* Frees the pool's memory (after fnw_entry_release_all). */
void fnw_entry_pool_free(fnw_entry_pool *p);

typedef enum fnw_call_state {
    FNW_CALL_IDLE = 0,      /* on the free list */
    FNW_CALL_RUNNING,       /* an attempt is with the operation */
    FNW_CALL_BACKOFF,       /* waiting for the retry timer */
    FNW_CALL_TIMING_OUT,    /* inside the operation's on_timeout hook */
    FNW_CALL_ZOMBIE,        /* timed out while with the operation; its completion is ignored */
    FNW_CALL_CANCELLED,     /* being cancelled */
} fnw_call_state;

struct fnw_call {
    fnw_engine *e;
    struct ev_loop *loop;
    const fnw_type *input_type, *output_type;
    fnw_buf *scratch;             /* the engine's encode buffer */
    uint8_t state;
    uint8_t direct;               /* sync fast path: input is the caller's record */
    int attempt;
    uint64_t emitted;             /* outputs of the current attempt */
    int64_t last_backoff;
    ev_tstamp started;
    ev_timer timeout_w;
    ev_timer retry_w;
    void *op_data;
    fnw_arena arena;
    const fnw_record *direct_rec;
    uint64_t direct_index;
    struct fnw_call *prev, *next; /* active list, or free list (next) */
    size_t n, cap;
    fnw_entry *in[];              /* cap slots */
};

/* Engine side of the call API (engine.c). */
void fnw_engine_call_complete(fnw_call *c);
void fnw_engine_call_fail(fnw_call *c, const char *message);
int fnw_engine_call_emit_direct(fnw_call *c, const uint8_t *data, size_t len);
void fnw_engine_call_oom(fnw_call *c);

#endif
