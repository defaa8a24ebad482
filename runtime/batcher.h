/* runtime/batcher.h — collects admitted elements into batches for batch mode
 * (ASYNC_BATCH), internal to the runtime.
 *
 * A batch is handed to the flush callback when it reaches its size, when
 * timeout_ms has passed since its first element (a loop timer), or when the
 * owner calls fnw_batcher_flush() (bundle end, capacity reached). Each batch
 * has a generation number; the timer is tagged with the generation of the
 * batch that started it, so a timer left over from a flushed batch can never
 * flush a later one early.
 *
 * With a latency target (runtime/batch_tuner.h) the owner changes the size
 * (up to the size given at init, for which the slots are reserved) and the
 * timeout between batches with fnw_batcher_tune(); a batch already holding
 * the new size or more is sent by its next add. A gate (fnw_batcher_set_gate)
 * holds a batch that is due (full, or its timer fired) while the owner has
 * no free call slot: it keeps filling up to the reserved slots (when those
 * are full it goes anyway) until the owner flushes it; held says the batch
 * just flushed had waited so.
 *
 * Items are opaque pointers the batcher does not own. The flush callback
 * gets the batcher's item array: it must copy what it needs before doing
 * anything that could add to the batcher again.
 */
#ifndef FNW_BATCHER_H
#define FNW_BATCHER_H

#include <stddef.h>
#include <stdint.h>

#include <ev.h>

typedef void (*fnw_batcher_flush_fn)(void *user, void **items, size_t n);

typedef struct fnw_batcher {
    struct ev_loop *loop;
    size_t size;      /* flush at this many items */
    size_t cap;       /* slots reserved: the largest size */
    double timeout_s; /* 0 = no timer */
    void **items;
    size_t n;
    uint64_t gen;       /* generation of the batch being filled */
    uint64_t timer_gen; /* generation the running timer belongs to */
    ev_timer timer;
    fnw_batcher_flush_fn flush;
    void *user;
    int (*gate)(void *user); /* NULL: always open */
    int due;                 /* the batch is due but the gate was closed */
    int held;                /* the batch flushed last had been held */
} fnw_batcher;

int fnw_batcher_init(fnw_batcher *b, struct ev_loop *loop, size_t size, int64_t timeout_ms,
                     fnw_batcher_flush_fn flush, void *user);
void fnw_batcher_free(fnw_batcher *b);
/* Adds one item; flushes when the batch is full. */
void fnw_batcher_add(fnw_batcher *b, void *item);
/* Flushes the partial batch (nothing when empty). */
void fnw_batcher_flush(fnw_batcher *b);
/* Sets the size (1 .. the size given at init) and the timeout (seconds,
 * > 0) for the batches from now on; the timer already running keeps its
 * time. */
void fnw_batcher_tune(fnw_batcher *b, size_t size, double timeout_s);
/* Installs the gate (see above); it gets the flush callback's user. */
void fnw_batcher_set_gate(fnw_batcher *b, int (*gate)(void *user));
static inline int fnw_batcher_due(const fnw_batcher *b)
{
    return b->due;
}
/* Drops the partial batch without flushing it. */
void fnw_batcher_clear(fnw_batcher *b);
static inline size_t fnw_batcher_count(const fnw_batcher *b)
{
    return b->n;
}

#endif
