/* pool/children.h — the worker processes of the pool: a fixed table of
 * slots (at most max_workers), starting a worker (posix_spawn of the fnworker
 * binary, so a crashing worker never takes the pool down), relaying its
 * stdout/stderr to whoever started it, stopping it (SIGTERM, then SIGKILL
 * after FNW_CHILDREN_KILL_AFTER_S), reaping it, and the counts /metrics
 * shows. Each worker also gets a stats pipe (fd 3, named by
 * FNW_POOL_STATS_FD) on which it reports its figures once a second; the
 * latest are kept per worker, and its per-operation series lines (parsed
 * by fnw_wire_series_parse, kept within FNW_CHILDREN_SERIES_MAX over all
 * workers, freed with the worker). Runs on the pool's libev loop; the owner of each worker hears about
 * it through the fnw_child_events it gave when starting it.
 *
 * Start deadline: a worker writes the line "connected" on its stats pipe
 * once its control channel to the runner is up (worker/pool_stats.h). One
 * that has not done so start_timeout_s after it started is stopped like
 * any other (its owner hears why on the worker's stderr stream), so a
 * client cannot hold a slot with a worker that never gets anywhere.
 *
 * Workers inherit the pool's environment except FNW_POOL_STATS_FD (set to
 * 3) and the launcher token's variables (pool/pool_token.h).
 */
#ifndef FNW_POOL_CHILDREN_H
#define FNW_POOL_CHILDREN_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codecs/error.h"
#include "pool/wire.h"

#define FNW_CHILDREN_KILL_AFTER_S 1.5
#define FNW_CHILDREN_ID_MAX 256
/* The worker's end of its relay socket (pool/relay_link.h), passed as
 * --relay-fd=4; fd 3 is the stats pipe. */
#define FNW_CHILDREN_RELAY_FD 4

typedef struct fnw_child fnw_child;

/* What a worker's owner hears; ctx is the owner's. on_output gets raw bytes
 * (stream 1 = stdout, 2 = stderr); when the owner passes NULL, the output
 * goes to the pool's own stderr. on_exit comes once, after both streams
 * ended: code is the exit status, or 128 + signal; the child is freed after
 * it returns. */
typedef struct fnw_child_events {
    void (*on_output)(void *ctx, fnw_child *c, int stream, const char *data, size_t n);
    void (*on_exit)(void *ctx, fnw_child *c, int code);
    void *ctx;
} fnw_child_events;

typedef struct fnw_children_stats {
    unsigned running, max;
    uint64_t started, exited, failed_to_start, rejected_full, start_timeouts;
    /* series lines not kept: the worker's FNW_METRIC_SERIES_MAX or the
     * pool's FNW_CHILDREN_SERIES_MAX were full */
    uint64_t series_dropped;
    unsigned series_kept; /* series held now, over all workers */
} fnw_children_stats;

/* Series (codecs/metric_names.h) the pool keeps over all its workers: a
 * bound on its memory (about 1.3 KB each) and on its /metrics answer. */
#define FNW_CHILDREN_SERIES_MAX 1024

typedef struct fnw_children fnw_children;

/* exe is the worker binary (the pool's own); max_workers >= 1;
 * start_timeout_s 0: no start deadline. */
fnw_children *fnw_children_new(struct ev_loop *loop, const char *exe, unsigned max_workers,
                               double start_timeout_s);
/* Kills (SIGKILL) and reaps whatever still runs, without events. */
void fnw_children_free(fnw_children *cs);

/* How a started worker is known. FNW_CHILD_BY_ID: its id names it for
 * fnw_children_find (Beam's StopWorker), so a second worker with that id is
 * refused while it runs. 0: its owner holds it (a launcher connection); Flink
 * numbers its workers per job and per TaskManager ("1-1", "2-1", ...), so
 * several TaskManagers or jobs sharing a pool send the same ids, and those
 * workers may share an id. */
#define FNW_CHILD_BY_ID 1u

/* Starts `exe --id=ID --provision_endpoint=EP args...`. Fails when the pool
 * is full, the id is already running (FNW_CHILD_BY_ID) or posix_spawn/pipe fail. */
fnw_child *fnw_children_start(fnw_children *cs, const char *id, const char *provision_endpoint,
                              const char *const *args, size_t n_args, const fnw_child_events *ev,
                              unsigned flags, fnw_error *err);
/* The same, and relay_fd (when >= 0) becomes the worker's fd
 * FNW_CHILDREN_RELAY_FD, named by a last argument --relay-fd=4. The caller
 * keeps relay_fd (and closes it once started). */
fnw_child *fnw_children_start_relayed(fnw_children *cs, const char *id, const char *provision_endpoint,
                                      const char *const *args, size_t n_args, int relay_fd,
                                      const fnw_child_events *ev, unsigned flags, fnw_error *err);
/* SIGTERM now, SIGKILL if it still runs FNW_CHILDREN_KILL_AFTER_S later. */
void fnw_children_stop(fnw_children *cs, fnw_child *c);
/* The owner goes away: no further events for this child (it is still
 * stopped and reaped). */
void fnw_children_detach(fnw_child *c);
/* Stops reading the child's output while paused (the owner's buffer is full). */
void fnw_children_pause(fnw_children *cs, fnw_child *c, int paused);
void fnw_children_stop_all(fnw_children *cs);
/* Sends sig to every running worker; returns how many got it. */
unsigned fnw_children_signal_all(fnw_children *cs, int sig);

/* The running worker started FNW_CHILD_BY_ID with this id, or NULL. */
fnw_child *fnw_children_find(fnw_children *cs, const char *id);
fnw_children_stats fnw_children_get_stats(const fnw_children *cs);
/* Running workers, in slot order: each call returns the next after prev
 * (NULL: the first), NULL at the end. */
fnw_child *fnw_children_next(fnw_children *cs, fnw_child *prev);
pid_t fnw_children_pid(const fnw_child *c);
const char *fnw_children_id(const fnw_child *c);
double fnw_children_started_at(const fnw_child *c);
/* The worker's latest figures (known = 0 until its first stats line). */
const fnw_wire_figures *fnw_children_figures(const fnw_child *c);
/* The worker's latest series lines, one per operation step; returns how
 * many there are. */
size_t fnw_children_series(const fnw_child *c, fnw_metric_series *const **out);

#endif
