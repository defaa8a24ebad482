/* base/pump.h — the completion-queue thread: one per loop, shared by
 * everything on that loop that speaks gRPC (the worker's planes, every
 * kserve operation instance, the sidecar pool's server).
 *
 * gRPC core 1.51 has no pollable fd for a completion queue, so one thread
 * blocks in grpc_completion_queue_next and puts every completion into the
 * loop's hand-off (base/handoff.h): the tag of every batch started on the
 * queue must be a fnw_handoff_item, whose done(it, success) then runs on
 * the loop. The thread does nothing else: it never starts batches and never
 * touches anyone's state.
 *
 * The pump is started by the first fnw_pump_of(loop) and kept with the
 * loop's hand-off; fnw_handoff_loop_free(loop) stops it (shuts the queue
 * down, which delivers every pending completion first, joins the thread,
 * destroys the queue). It holds a gRPC reference (grpc_init) of its own, so
 * a user of the queue may grpc_shutdown before the loop ends.
 */
#ifndef FNW_PUMP_H
#define FNW_PUMP_H

#include <ev.h>
#include <grpc/grpc.h>

typedef struct fnw_pump fnw_pump;

/* loop's pump, started on first use (loop thread); NULL when no thread or
 * queue could be made. */
fnw_pump *fnw_pump_of(struct ev_loop *loop);
/* The queue every gRPC call on the loop is created on (a server registers
 * it with grpc_server_register_completion_queue). */
grpc_completion_queue *fnw_pump_cq(const fnw_pump *p);

#endif
