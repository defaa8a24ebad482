/* base/handoff.h — the hand-off: the one place where threads meet, and so
 * the only product code with a lock (with the blocking pool's job queue,
 * which is a hand-off too).
 *
 * A loop has exactly one hand-off (fnw_handoff_of: it is kept in the loop's
 * userdata, made on first use). Every thread that produces work for the
 * loop puts items into it: the completion-queue thread (base/pump.h: every
 * gRPC completion of the worker, of kserve and of the sidecar pool's
 * server), the blocking pool's threads (a blocking operation's results).
 * The loop is woken by one coalescing ev_async: many puts between two loop
 * iterations cost one wake-up, and the loop then runs each item's done(),
 * one at a time, oldest first. Nothing else is shared between threads: the
 * loop thread alone starts gRPC batches, parses messages and touches
 * engine or bundle state.
 *
 * Items are intrusive (the producer embeds fnw_handoff_item in its own
 * struct), so a put never allocates, never fails and never waits. The
 * queue is bounded by construction: an item is queued at most once (a gRPC
 * tag is re-armed, a blocking call resubmitted, only from its done()), so
 * a queue never holds more than the items its producers own, and those are
 * bounded by their owners (one batch of each kind per gRPC call, the
 * capacities of the blocking operations).
 *
 * Ownership: the producer owns an item until it puts it; from the put on
 * the producer thread must not touch it, and the loop thread owns it when
 * done() runs. done() may put the item again, free it, free its owner.
 *
 * The ev_async is always started (no wake-up is lost) but keeps ev_run
 * going only while someone holds the hand-off (fnw_handoff_hold: a
 * loop-side owner that expects items back), so an idle loop's ev_run
 * returns.
 *
 * A hand-off made with fnw_handoff_init has no loop: its takers are threads
 * that wait on its condition variable (the blocking pool's job queue).
 */
#ifndef FNW_HANDOFF_H
#define FNW_HANDOFF_H

#include <ev.h>
#include <pthread.h>
#include <stddef.h>

typedef struct fnw_handoff_item fnw_handoff_item;
struct fnw_handoff_item {
    fnw_handoff_item *next;                     /* the hand-off's while queued */
    void (*done)(fnw_handoff_item *it, int ok); /* run on the loop thread */
    int ok;                                     /* what the producer put with it */
};

typedef struct fnw_handoff {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    fnw_handoff_item *head, *tail;
    size_t count;
    int closed;
    unsigned waiters;     /* loop thread in fnw_handoff_take_if */
    struct ev_loop *loop; /* NULL: takers are threads */
    ev_async wake;
    unsigned holds;  /* loop thread only */
    void *companion; /* see fnw_handoff_set_companion */
    void (*companion_stop)(void *companion);
} fnw_handoff;

/* ---- a loop's hand-off ------------------------------------------------------ */
/* loop's one hand-off, made on first use (loop thread); NULL when out of
 * memory. */
fnw_handoff *fnw_handoff_of(struct ev_loop *loop);
/* Whoever destroys loop calls this first, once every producer has stopped
 * putting: stops the companion (the loop's completion-queue thread, which
 * delivers what is still pending), runs what is queued, frees the hand-off. */
void fnw_handoff_loop_free(struct ev_loop *loop);
/* While held (a count: hold and release pair up), the wake-up keeps ev_run
 * going; unheld, items still run whenever the loop runs. Loop thread. */
void fnw_handoff_hold(fnw_handoff *h);
void fnw_handoff_release(fnw_handoff *h);
/* Loop thread: runs every queued item's done(), oldest first (the wake-up
 * does this). */
void fnw_handoff_drain(fnw_handoff *h);
/* Loop thread: waits for a queued item for which match(it, user) holds and
 * takes it out without running it (an owner being freed collects what its
 * threads still hand back). */
fnw_handoff_item *fnw_handoff_take_if(fnw_handoff *h, int (*match)(const fnw_handoff_item *, void *),
                                      void *user);
/* The one thing a loop's hand-off keeps for the loop besides its items: the
 * loop's completion-queue thread (base/pump.c), so that a loop has one.
 * stop(companion) runs first in fnw_handoff_loop_free. */
void fnw_handoff_set_companion(fnw_handoff *h, void *companion, void (*stop)(void *companion));
void *fnw_handoff_companion(const fnw_handoff *h);

/* ---- a queue taken by threads (the blocking pool's jobs) ---------------------- */
void fnw_handoff_init(fnw_handoff *h);
/* Items still queued are the caller's to have taken. */
void fnw_handoff_free(fnw_handoff *h);
/* The oldest item, waiting for one; NULL once closed and empty. */
fnw_handoff_item *fnw_handoff_take(fnw_handoff *h);
/* Takers get NULL once the queue is empty, instead of waiting. */
void fnw_handoff_close(fnw_handoff *h);

/* ---- either kind --------------------------------------------------------------- */
/* Any thread: append it (it->ok = ok) and wake a taker, or the loop. */
void fnw_handoff_put(fnw_handoff *h, fnw_handoff_item *it, int ok);
/* The oldest item, or NULL at once (not run). */
fnw_handoff_item *fnw_handoff_poll(fnw_handoff *h);
/* Removes every queued item for which match(it, user) holds and returns them
 * as a list (linked by next), oldest first. */
fnw_handoff_item *fnw_handoff_remove_if(fnw_handoff *h, int (*match)(const fnw_handoff_item *, void *),
                                        void *user);
size_t fnw_handoff_count(fnw_handoff *h);

#endif
