/* worker/descriptors.h — the descriptor cache: what the worker knows about
 * each ProcessBundleDescriptor id the runner used.
 *
 * A descriptor is known once the runner registered it or a
 * GetProcessBundleDescriptor fetch returned: then it has a plan
 * (worker/plan.h) or the reason it has none, plus its data endpoint, which
 * is kept even when the plan failed (the runner waits for the worker's
 * Data stream before it reads any bundle's response, so a bundle that fails
 * at once must still open it). Until it is known, process_bundle requests
 * for it wait here in arrival order; the first of them asks the caller to
 * fetch it. When it arrives, every waiting bundle is handed back through
 * on_ready, first come first served, whether the descriptor planned or
 * failed; a failed descriptor answers each of them with its reason.
 *
 * A descriptor whose functions are all Python functions (not fnworker
 * operations) is not planned: it is handed to the relay (on_relayed), and
 * its bundles run in PyFlink's own Python worker (worker/relay.h).
 *
 * Each descriptor also keeps the pool of idle processors for its plan
 * (worker/processors.h).
 *
 * Loop thread only. This unit does not talk to the runner: fetching is the
 * caller's (fnw_descriptors_wait says when), and arrivals are handed in.
 */
#ifndef FNW_DESCRIPTORS_H
#define FNW_DESCRIPTORS_H

#include <stddef.h>

#include "runtime/operation.h"
#include "worker/log.h"
#include "base/pb.h"
#include "worker/plan.h"
#include "worker/processors.h"

typedef struct fnw_descriptor fnw_descriptor;

typedef struct fnw_descriptors_events {
    /* d is known now (plan or error): start the bundle instruction_id that
     * waited for it. Called once per waiting bundle, in arrival order. */
    void (*on_ready)(void *user, fnw_descriptor *d, const char *instruction_id);
    /* When set, each descriptor is routed first (worker/relay_route.h): one
     * with only Python functions is handed here instead of planned (0: it
     * is relayed; -1: its bundles fail with err), one that mixes both kinds
     * fails with the rule to use. NULL: every descriptor is planned (a
     * Python function then fails planning). */
    int (*on_relayed)(void *user, fnw_descriptor *d, const pb_ProcessBundleDescriptor *pb, fnw_error *err);
} fnw_descriptors_events;

/* Embedded by its owner; the fields are private to descriptors.c. */
typedef struct fnw_descriptors {
    fnw_descriptor *list;
    const fnw_registry *registry;
    fnw_logger *log;
    const fnw_descriptors_events *ev;
    void *user;
} fnw_descriptors;

/* reg, log and ev are borrowed for the cache's life. */
void fnw_descriptors_init(fnw_descriptors *c, const fnw_registry *reg, fnw_logger *log,
                          const fnw_descriptors_events *ev, void *user);
/* Frees every descriptor, its plan and idle processors; bundles still
 * waiting are dropped without on_ready. */
void fnw_descriptors_free(fnw_descriptors *c);

/* The descriptor with this id, added (unknown) when new; NULL when out of
 * memory. */
fnw_descriptor *fnw_descriptors_get(fnw_descriptors *c, const char *id);
/* The runner registered pb for d: plan it now (waiting bundles are not
 * started; a fetch in flight still delivers them). */
void fnw_descriptors_set(fnw_descriptors *c, fnw_descriptor *d, const pb_ProcessBundleDescriptor *pb);
/* A fetch for d ended: pb and no why, or why d cannot be had; then pb, if
 * not NULL, is what could be read of it, and gives only its data endpoint.
 * d becomes known and every bundle waiting for it goes to on_ready, in
 * arrival order. */
void fnw_descriptors_arrived(fnw_descriptors *c, fnw_descriptor *d, const pb_ProcessBundleDescriptor *pb,
                             const char *why);
/* Bundle instruction_id waits for d. 1: the caller should fetch d now (it
 * is the first to wait and no fetch is in flight); 0: queued behind a
 * fetch in flight; -1: out of memory (not queued). */
int fnw_descriptors_wait(fnw_descriptors *c, fnw_descriptor *d, const char *instruction_id);

const char *fnw_descriptors_id(const fnw_descriptor *d);
/* 1 once registered or fetched (plan or error). */
int fnw_descriptors_known(const fnw_descriptor *d);
/* 1 when PyFlink's Python worker runs it (no plan then). */
int fnw_descriptors_relayed(const fnw_descriptor *d);
/* The plan; NULL while unknown or when planning failed. */
const fnw_plan *fnw_descriptors_plan(const fnw_descriptor *d);
/* Why there is no plan; NULL while unknown or when it planned. */
const char *fnw_descriptors_error(const fnw_descriptor *d);
/* The data endpoint it names (even when planning failed), or NULL. */
const char *fnw_descriptors_data_url(const fnw_descriptor *d);
/* Bundles waiting for it. */
size_t fnw_descriptors_waiting(const fnw_descriptor *d);
/* Its idle processors. */
fnw_processors *fnw_descriptors_processors(fnw_descriptor *d);

#endif
