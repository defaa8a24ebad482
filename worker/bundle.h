/* worker/bundle.h — one process_bundle instruction while it runs.
 *
 * A bundle runs on a processor (worker/processors.h) that it borrows for
 * its life; its owner decides afterwards whether the processor is reused.
 *
 * A bundle only frames input and output: it takes whole records from its
 * inbox (worker/inbox.h, which assembles a record that spans chunks),
 * decodes each and pushes it into the processor's steps, run as one chain
 * (runtime/chain.h, which moves records from step to step and drains them
 * step by step at the end) while the chain has space, writes what the last
 * step emits as Row(timestamp, data) to the main sink, and once the chain
 * has finished after is_last sends the remaining output with is_last on
 * every sink, waits until that message is written, and only then reports
 * done. Any failure (undecodable element, operation error,
 * lost data stream) reports done with an error naming the transform and the
 * element index.
 *
 * Loop thread only. The done callback runs from a clean stack (never inside
 * a push), and the bundle is freed by its owner after it.
 */
#ifndef FNW_BUNDLE_H
#define FNW_BUNDLE_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/engine.h"
#include "worker/data.h"
#include "worker/log.h"
#include "worker/metrics.h"
#include "worker/plan.h"
#include "worker/processors.h"

typedef struct fnw_bundle fnw_bundle;
/* error NULL on success; metrics valid during the call only. A failure is
 * always reported as one (its message is kept without allocating). */
typedef void (*fnw_bundle_done_cb)(void *user, fnw_bundle *b, const char *error,
                                   const fnw_metric_set *metrics);

/* NULL when out of memory (then done is never called). */
fnw_bundle *fnw_bundle_start(struct ev_loop *loop, fnw_logger *log, fnw_data_mgr *data, fnw_processor *proc,
                             const char *instruction_id, fnw_bundle_done_cb done, void *user);
const char *fnw_bundle_instruction(const fnw_bundle *b);
fnw_processor *fnw_bundle_processor(const fnw_bundle *b);
/* Stops without reporting (the worker is stopping): what is in flight in
 * the chain is aborted, and done is not called. */
void fnw_bundle_stop(fnw_bundle *b);
void fnw_bundle_free(fnw_bundle *b);


/* ---- what is in flight, for a hung bundle (--lull-seconds) and SIGQUIT ---- */
typedef struct fnw_bundle_progress {
    int64_t inputs_read;     /* records taken from the input so far */
    int64_t outputs_written; /* records the last step gave to the main sink */
    const char *state;       /* "reading input", "input ended, waiting for its calls", ... */
} fnw_bundle_progress;

void fnw_bundle_progress_get(const fnw_bundle *b, fnw_bundle_progress *p);
/* "instruction 3 (descriptor 1), reading input: 10 input(s) read, 2
 * output(s) written"; returns the length written. */
size_t fnw_bundle_describe(const fnw_bundle *b, char *buf, size_t n);
/* From now on, when nothing moves for lull_s seconds (0: never), logs one
 * WARN naming the bundle and, per step, the operation, transform, calls in
 * flight and the oldest one's age, and queue sizes; again every lull_s
 * seconds while nothing moves. */
void fnw_bundle_watch(fnw_bundle *b, double lull_s);
/* Logs (INFO) the bundle, each step's queues and every call in flight (at
 * most 50 per step). */
void fnw_bundle_dump(const fnw_bundle *b);

#endif
