/* runtime/blocking_pool.h — the threads that run blocking operations
 * (fnworker.h, invoke_blocking), internal to the runtime.
 *
 * A pool is a fixed number of threads taking jobs from one queue in
 * submission order: a hand-off without a loop (base/handoff.h), whose
 * takers are the threads, sleeping on its condition variable until a job
 * comes; so the pool has no lock of its own. A job's run() executes on a
 * pool thread and must hand the job back to its owner itself (through the
 * owner's loop's hand-off): the pool knows nothing about calls or loops.
 * Threads start on the first submit, so a process without blocking
 * operations has none. A thread is
 * never interrupted: a job that was submitted runs to its end, unless its
 * owner withdraws it while it is still queued.
 *
 * The process has one shared pool (fnw_blocking_pool_shared), sized by the
 * worker's --blocking-threads before its first use; tests may make their own.
 * Everything but run() is called on the loop thread.
 */
#ifndef FNW_BLOCKING_POOL_H
#define FNW_BLOCKING_POOL_H

#include <stddef.h>

#include "base/handoff.h"

#define FNW_BLOCKING_THREADS_DEFAULT 4
#define FNW_BLOCKING_THREADS_MAX 256

typedef struct fnw_blocking_job fnw_blocking_job;
struct fnw_blocking_job {
    fnw_handoff_item link; /* the pool's queue, then the owner's loop's hand-off */
    void (*run)(fnw_blocking_job *job);
    const void *owner; /* what fnw_blocking_pool_withdraw matches */
};

typedef struct fnw_blocking_pool fnw_blocking_pool;

fnw_blocking_pool *fnw_blocking_pool_new(size_t threads);
/* Runs what is still queued, then joins every thread. */
void fnw_blocking_pool_free(fnw_blocking_pool *p);
/* Queues job (starting the threads on first use); -1 when no thread could
 * be started. */
int fnw_blocking_pool_submit(fnw_blocking_pool *p, fnw_blocking_job *job);
/* Takes back every queued job of owner (not yet on a thread); returns them
 * linked by link.next. */
fnw_blocking_job *fnw_blocking_pool_withdraw(fnw_blocking_pool *p, const void *owner);
size_t fnw_blocking_pool_queued(fnw_blocking_pool *p);
size_t fnw_blocking_pool_size(const fnw_blocking_pool *p);

/* The process's pool: threads for the pool made by the next
 * fnw_blocking_pool_shared() (1..FNW_BLOCKING_THREADS_MAX). */
void fnw_blocking_pool_configure(size_t threads);
/* Made on first use; NULL when out of memory. */
fnw_blocking_pool *fnw_blocking_pool_shared(void);
/* Frees the process's pool (after every engine is freed). */
void fnw_blocking_pool_shared_free(void);

#endif
