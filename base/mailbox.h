/* base/mailbox.h — the one channel by which anything crosses threads.
 *
 * gRPC completion queues are drained by a pump thread (base/pump.c); the
 * libev loop thread owns everything else. The pump pushes each completed
 * operation's tag and success bit into this bounded ring and wakes the loop
 * with one coalescing ev_async; the loop drains the ring and runs each tag's
 * callback. Nothing else is shared between the threads: the loop thread is
 * the only one that starts gRPC batches, parses messages or touches bundle
 * state, so the runtime needs no locks.
 *
 * The ring is bounded. Every gRPC operation has at most one completion in
 * flight and the worker bounds its outstanding operations far below the
 * ring's size, so a full ring (the pump would wait on a condition variable)
 * does not happen in practice; if it did, the pump waits rather than drops.
 */
#ifndef FNW_MAILBOX_H
#define FNW_MAILBOX_H

#include <ev.h>
#include <pthread.h>

/* A completion target: the loop calls done(tag, ok) for each completion. */
typedef struct fnw_tag fnw_tag;
struct fnw_tag {
    void (*done)(fnw_tag *tag, int ok);
};

#define FNW_MAILBOX_SIZE 4096

/* Embedded by its owner; the fields are private to mailbox.c. */
typedef struct fnw_mailbox {
    pthread_mutex_t mu;
    pthread_cond_t not_full;
    struct { fnw_tag *tag; int ok; } ring[FNW_MAILBOX_SIZE];
    unsigned head, count;
    struct ev_loop *loop;
    ev_async wake;
} fnw_mailbox;

void fnw_mailbox_init(fnw_mailbox *m, struct ev_loop *loop);
/* Stops the wake watcher; queued completions are not run (drain first). */
void fnw_mailbox_free(fnw_mailbox *m);
/* Completions queued and not yet run (any thread). */
unsigned fnw_mailbox_pending(fnw_mailbox *m);
/* Any thread: queue a completion and wake the loop. */
void fnw_mailbox_post(fnw_mailbox *m, fnw_tag *tag, int ok);
/* Loop thread: run every queued completion (also done by the ev_async). */
void fnw_mailbox_drain(fnw_mailbox *m);

#endif
