/* runtime/chain.h — the engines of one fused Flink operator run as one:
 * what step i emits is pushed into step i + 1 inside the runtime, so the
 * caller only frames input (push into the chain) and output (the chain's
 * sink gets what the last step emits).
 *
 * Each step keeps its own engine (runtime/engine.h) and with it everything
 * per step: its ordering (ORDERED or UNORDERED with watermark segments: an
 * output carries its input's timestamp and watermark, so the next step
 * segments exactly as the first did), capacity, batching, timeouts,
 * retries, failure message naming its transform, and metrics. The chain
 * adds only what is between steps:
 *
 *   emit      step i's output is pushed into step i + 1; the last step's
 *             goes to sink.emit, straight from its engine.
 *   ready     sink.ready once every step has space again. A step that is
 *             full takes its upstream's outputs into its overflow list
 *             (nothing is dropped), and has_space is false until it has
 *             admitted them, so the caller stops taking input.
 *   finish    fnw_chain_finish() finishes step 0; when step i has finished
 *             (every input emitted) step i + 1 is finished; sink.finished
 *             comes when the last one has. Records in flight in several
 *             steps all come out before it.
 *   failed    the first step to fail ends the bundle: every other step is
 *             aborted (calls cancelled, queues dropped, no callbacks), then
 *             sink.failed gets the step's message. No callback follows.
 *
 * The engines are borrowed (the caller opens them and keeps them across
 * bundles); the chain is a few words per step and is made once per bundle
 * or once per set of engines. Loop thread only; the reentrancy rules are
 * the engine's: from inside a sink callback it is safe to push into,
 * finish, abort or free the chain.
 */
#ifndef FNW_CHAIN_H
#define FNW_CHAIN_H

#include <stddef.h>

#include "runtime/engine.h"
#include "runtime/record.h"

typedef struct fnw_chain_link fnw_chain_link;

/* The fields are private to chain.c; the inline functions below are for
 * the caller's per-record path. */
typedef struct fnw_chain {
    size_t n;
    fnw_engine **engines;
    fnw_chain_link *links;
    fnw_engine_sink sink;
    int failed; /* this bundle: a step failed; no more callbacks */
} fnw_chain;

/* A chain over engines[0..n-1] (n >= 1; the array is copied, the engines
 * are borrowed and must outlive the chain). NULL when out of memory. */
fnw_chain *fnw_chain_new(fnw_engine *const *engines, size_t n);
void fnw_chain_free(fnw_chain *c);

/* Begins a bundle on every step (bundle_label as fnw_engine_start's). */
void fnw_chain_start(fnw_chain *c, const fnw_engine_sink *sink, const char *bundle_label);
/* Every step has space: the caller may push. */
static inline int fnw_chain_has_space(const fnw_chain *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (!fnw_engine_has_space(c->engines[i]))
            return 0;
    return 1;
}
/* Into step 0. -1 when the bundle has failed. */
static inline int fnw_chain_push(fnw_chain *c, const fnw_record *in)
{
    return c->failed ? -1 : fnw_engine_push(c->engines[0], in);
}
/* End of input: drains the steps in order, then sink.finished. */
void fnw_chain_finish(fnw_chain *c);
/* The bundle failed elsewhere: every step is aborted, without callbacks. */
void fnw_chain_abort(fnw_chain *c);

size_t fnw_chain_steps(const fnw_chain *c);
fnw_engine *fnw_chain_engine(const fnw_chain *c, size_t i);

#endif
