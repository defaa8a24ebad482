/* worker/processors.h — processors and the idle pool each descriptor keeps.
 *
 * A processor is a plan plus one engine per step of its chain, each engine
 * holding an open operation instance. Opening operations can be costly (a
 * connection pool, a loaded model), so a processor that finished a bundle
 * cleanly goes back to its descriptor's pool and the next bundle of that
 * descriptor takes it with its operations still open. A processor whose
 * bundle failed is discarded (its operations closed): its state is not
 * trusted. Bundles that run at the same time each take their own
 * processor, so the pool grows to the largest number of concurrent bundles
 * of its descriptor and no further.
 *
 * Loop thread only.
 */
#ifndef FNW_PROCESSORS_H
#define FNW_PROCESSORS_H

#include <ev.h>
#include <stddef.h>

#include "codecs/error.h"
#include "runtime/engine.h"
#include "worker/plan.h"

/* The fields are private to processors.c; the inline accessors below are
 * for the bundle's per-record path. */
typedef struct fnw_processor {
    struct fnw_processor *next; /* in its pool while idle */
    const fnw_plan *plan;       /* borrowed from the descriptor cache */
    fnw_engine **engines;       /* one per plan step */
    size_t n;
} fnw_processor;

/* Opens one engine per step of plan (plan must outlive the processor).
 * On failure err names the transform whose operation did not open. */
int fnw_processors_open(struct ev_loop *loop, const fnw_plan *plan, fnw_processor **out, fnw_error *err);
/* Closes every operation and frees p (NULL is fine). */
void fnw_processors_close(fnw_processor *p);

static inline const fnw_plan *fnw_processor_plan(const fnw_processor *p)
{
    return p->plan;
}
static inline size_t fnw_processor_steps(const fnw_processor *p)
{
    return p->n;
}
static inline fnw_engine *fnw_processor_engine(const fnw_processor *p, size_t i)
{
    return p->engines[i];
}
/* All of them, step order (what a bundle runs as one chain, runtime/chain.h). */
static inline fnw_engine *const *fnw_processor_engines(const fnw_processor *p)
{
    return p->engines;
}

/* The idle processors of one descriptor. Embedded by its owner; the fields
 * are private to processors.c. */
typedef struct fnw_processors {
    fnw_processor *idle;
    size_t n_idle;
} fnw_processors;

void fnw_processors_init(fnw_processors *pool);
/* An idle processor when there is one, else a new one for plan. */
int fnw_processors_take(fnw_processors *pool, struct ev_loop *loop, const fnw_plan *plan, fnw_processor **out,
                        fnw_error *err);
/* p's bundle succeeded: the next bundle may take it. */
void fnw_processors_put(fnw_processors *pool, fnw_processor *p);
/* p's bundle failed: it is freed, never reused. */
void fnw_processors_discard(fnw_processors *pool, fnw_processor *p);
size_t fnw_processors_idle(const fnw_processors *pool);
/* Frees every idle processor. */
void fnw_processors_free(fnw_processors *pool);

#endif
