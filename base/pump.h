/* base/pump.h — the thread that drains one gRPC completion queue.
 *
 * gRPC core 1.51 has no pollable fd for a completion queue, so one thread
 * blocks in grpc_completion_queue_next and forwards every completion to the
 * loop through the mailbox. It does nothing else: it never starts batches
 * and never touches worker state. It exits when the queue is shut down.
 */
#ifndef FNW_PUMP_H
#define FNW_PUMP_H

#include <grpc/grpc.h>
#include <pthread.h>

#include "base/mailbox.h"

/* Embedded by its owner; the fields are private to pump.c. */
typedef struct fnw_pump {
    grpc_completion_queue *cq;
    fnw_mailbox *mailbox;
    pthread_t thread;
    int started;
} fnw_pump;

int fnw_pump_start(fnw_pump *p, fnw_mailbox *m);
/* The queue every gRPC call of the worker is created on. */
static inline grpc_completion_queue *fnw_pump_cq(const fnw_pump *p)
{
    return p->cq;
}
/* Shuts the queue down, joins the thread, destroys the queue. Every call on
 * the queue must have been finished (all tags returned) before this. */
void fnw_pump_stop(fnw_pump *p);

#endif
