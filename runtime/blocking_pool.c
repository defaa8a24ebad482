/* runtime/blocking_pool.c — the threads of blocking operations
 * (blocking_pool.h). The job queue is a hand-off without a loop: the
 * threads wait on it, the loop thread puts into it and never waits. */
#include <pthread.h>
#include <stdlib.h>

#include "runtime/blocking_pool.h"

struct fnw_blocking_pool {
    fnw_handoff jobs;
    size_t size, started;
    pthread_t *threads;
};

static fnw_blocking_pool *shared;
static size_t shared_size = FNW_BLOCKING_THREADS_DEFAULT;

static void *pool_thread(void *arg)
{
    fnw_blocking_pool *p = arg;
    fnw_handoff_item *it;
    while ((it = fnw_handoff_take(&p->jobs)) != NULL) {
        fnw_blocking_job *job = (fnw_blocking_job *)it;
        job->run(job);
    }
    return NULL;
}

fnw_blocking_pool *fnw_blocking_pool_new(size_t threads)
{
    fnw_blocking_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->size = threads ? threads : 1;
    p->threads = calloc(p->size, sizeof *p->threads);
    if (!p->threads) {
        free(p);
        return NULL;
    }
    fnw_handoff_init(&p->jobs);
    return p;
}

void fnw_blocking_pool_free(fnw_blocking_pool *p)
{
    if (!p)
        return;
    fnw_handoff_close(&p->jobs);
    for (size_t i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
    fnw_handoff_free(&p->jobs);
    free(p->threads);
    free(p);
}

static int start_threads(fnw_blocking_pool *p)
{
    while (p->started < p->size) {
        if (pthread_create(&p->threads[p->started], NULL, pool_thread, p) != 0)
            break;
        p->started++;
    }
    return p->started > 0 ? 0 : -1;
}

int fnw_blocking_pool_submit(fnw_blocking_pool *p, fnw_blocking_job *job)
{
    if (p->started < p->size && start_threads(p) != 0)
        return -1;
    fnw_handoff_put(&p->jobs, &job->link, 1);
    return 0;
}

static int owned_by(const fnw_handoff_item *it, void *owner)
{
    return ((const fnw_blocking_job *)it)->owner == owner;
}

fnw_blocking_job *fnw_blocking_pool_withdraw(fnw_blocking_pool *p, const void *owner)
{
    return (fnw_blocking_job *)fnw_handoff_remove_if(&p->jobs, owned_by, (void *)owner);
}

size_t fnw_blocking_pool_queued(fnw_blocking_pool *p)
{
    return fnw_handoff_count(&p->jobs);
}

size_t fnw_blocking_pool_size(const fnw_blocking_pool *p)
{
    return p->size;
}

void fnw_blocking_pool_configure(size_t threads)
{
    if (threads < 1)
        threads = 1;
    if (threads > FNW_BLOCKING_THREADS_MAX)
        threads = FNW_BLOCKING_THREADS_MAX;
    shared_size = threads;
}

fnw_blocking_pool *fnw_blocking_pool_shared(void)
{
    if (!shared)
        shared = fnw_blocking_pool_new(shared_size);
    return shared;
}

void fnw_blocking_pool_shared_free(void)
{
    fnw_blocking_pool_free(shared);
    shared = NULL;
}
