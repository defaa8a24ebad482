/* worker/pool_stats.h — figures for the worker pool that started this
 * worker (`fnworker pool`, pool/children.h). The pool passes a pipe as the
 * fd named by FNW_POOL_STATS_FD; once a second the worker writes one line
 * of totals to it:
 *   bundles=N bundle_errors=N records_in=N records_out=N calls=N call_failures=N active_bundles=N
 * and, once, the line "connected" when the control channel to the runner
 * is up (the pool stops a worker that does not say so within its
 * --start-timeout).
 * and after it one series line per operation step it ran (transform and
 * operation), its figures since the worker started, in the format of
 * codecs/metric_names.h ("op1 <transform> <operation> key=value ...").
 * At most FNW_METRIC_SERIES_MAX series: the steps past the first
 * FNW_METRIC_SERIES_MAX - 1 add up in one series named FNW_METRIC_OTHER,
 * so the totals stay right whatever the job's number of transforms.
 * Counters and latency are added when a bundle ends; the gauges are read
 * from the running bundles at each report (fnw_pool_stats_set_refresh).
 * Without the variable (a worker Flink started itself) nothing is written
 * or kept. The totals are added once per finished bundle, never per record. */
#ifndef FNW_POOL_STATS_H
#define FNW_POOL_STATS_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

#include "codecs/metric_names.h"
#include "worker/processors.h"

#define FNW_POOL_STATS_ENV "FNW_POOL_STATS_FD"

struct fnw_pool_stats;
/* Called by each report before it writes, so that the gauges of the
 * series (calls in flight, breaker state, concurrency limit, batch target)
 * are the running bundles' now, not their last ones' at its end: the owner
 * calls fnw_pool_stats_refresh_proc for each running processor. */
typedef void (*fnw_pool_stats_refresh_fn)(void *user, struct fnw_pool_stats *s);

/* Embedded by the worker; the fields are private to pool_stats.c. */
typedef struct fnw_pool_stats {
    struct ev_loop *loop;
    int fd; /* -1: not started by a pool */
    ev_timer timer;
    uint64_t bundles, bundle_errors, records_in, records_out, calls, call_failures;
    size_t active;
    fnw_metric_series *series; /* FNW_METRIC_SERIES_MAX, allocated with the first bundle */
    size_t nseries;
    size_t next_series; /* the first to write next time (a full pipe stopped the last report) */
    fnw_pool_stats_refresh_fn refresh;
    void *refresh_user;
} fnw_pool_stats;

/* Reads FNW_POOL_STATS_FD; starts the once-a-second report when it is set. */
void fnw_pool_stats_init(fnw_pool_stats *s, struct ev_loop *loop);
void fnw_pool_stats_free(fnw_pool_stats *s);
/* The control channel is up: tells the pool (once). */
void fnw_pool_stats_connected(fnw_pool_stats *s);
/* A bundle ended (failed: error) on proc, whose engines still hold its figures. */
void fnw_pool_stats_add_bundle(fnw_pool_stats *s, const fnw_processor *proc, int failed);
/* One step's figures of a finished bundle into its series (add_bundle
 * calls it for each step; nothing without a pool). */
void fnw_pool_stats_add_step(fnw_pool_stats *s, const char *transform, const char *operation,
                             const fnw_engine_metrics *m);
static inline void fnw_pool_stats_set_refresh(fnw_pool_stats *s, fnw_pool_stats_refresh_fn fn, void *user)
{
    s->refresh = fn;
    s->refresh_user = user;
}
/* The gauges of proc's steps (of one step), as they are now, into their
 * series; the high-water mark stays the last finished bundle's. */
void fnw_pool_stats_refresh_proc(fnw_pool_stats *s, const fnw_processor *proc);
void fnw_pool_stats_refresh_step(fnw_pool_stats *s, const char *transform, const char *operation,
                                 const fnw_engine_metrics *m);
/* The per-step series kept so far (for tests). */
static inline size_t fnw_pool_stats_series(const fnw_pool_stats *s, const fnw_metric_series **out)
{
    *out = s->series;
    return s->nseries;
}
static inline void fnw_pool_stats_set_active(fnw_pool_stats *s, size_t active)
{
    s->active = active;
}

#endif
