/* base/handoff.h — a queue that carries work items from one thread to
 * another: the only place in the runtime where threads meet, and so the only
 * place with a lock.
 *
 * Items are intrusive (the producer embeds fnw_handoff_item in its own
 * struct), so putting never allocates and never fails, and the queue holds
 * at most as many items as exist: its owners bound that number (the blocking
 * pool never has more calls out than the capacities of its operations).
 * A taker either waits on the queue's condition variable (a pool thread) or
 * is woken on its loop by one coalescing ev_async (fnw_handoff_init_wake),
 * like the pump's mailbox: many puts between two loop iterations cost one
 * wake-up, and the loop drains them all with fnw_handoff_poll.
 */
#ifndef FNW_HANDOFF_H
#define FNW_HANDOFF_H

#include <ev.h>
#include <pthread.h>
#include <stddef.h>

typedef struct fnw_handoff_item fnw_handoff_item;
struct fnw_handoff_item {
    fnw_handoff_item *next;
};

typedef struct fnw_handoff {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    fnw_handoff_item *head, *tail;
    size_t count;
    int closed;
    struct ev_loop *loop;        /* NULL: takers wait on cond only */
    ev_async wake;
} fnw_handoff;

/* A queue whose takers wait on its condition variable. */
void fnw_handoff_init(fnw_handoff *h);
/* A queue drained on loop: cb runs there (wake.data = data) after puts. The
 * watcher is started and stopped with fnw_handoff_wake_start/stop (loop
 * thread), so an idle queue does not keep ev_run going. */
void fnw_handoff_init_wake(fnw_handoff *h, struct ev_loop *loop,
                           void (*cb)(struct ev_loop *, ev_async *, int), void *data);
void fnw_handoff_wake_start(fnw_handoff *h);
void fnw_handoff_wake_stop(fnw_handoff *h);
/* Stops the watcher; items still queued are the caller's to have taken. */
void fnw_handoff_free(fnw_handoff *h);

/* Any thread: append it and wake one taker (and the loop). */
void fnw_handoff_put(fnw_handoff *h, fnw_handoff_item *it);
/* The oldest item, waiting for one; NULL once closed and empty. */
fnw_handoff_item *fnw_handoff_take(fnw_handoff *h);
/* The oldest item, or NULL at once. */
fnw_handoff_item *fnw_handoff_poll(fnw_handoff *h);
/* Removes every queued item for which match(it, user) holds and returns them
 * as a list (linked by next), oldest first. */
fnw_handoff_item *fnw_handoff_remove_if(fnw_handoff *h, int (*match)(const fnw_handoff_item *, void *),
                                        void *user);
size_t fnw_handoff_count(fnw_handoff *h);
/* Takers get NULL once the queue is empty, instead of waiting. */
void fnw_handoff_close(fnw_handoff *h);

#endif
