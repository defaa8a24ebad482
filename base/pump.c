/* base/pump.c — the completion-queue thread of a loop (see pump.h). */
#include "base/pump.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/handoff.h"

struct fnw_pump {
    grpc_completion_queue *cq;
    fnw_handoff *handoff;
    pthread_t thread;
};

static void *pump_main(void *arg)
{
    fnw_pump *p = arg;
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(p->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type == GRPC_OP_COMPLETE)
            fnw_handoff_put(p->handoff, ev.tag, ev.success);
    }
    return NULL;
}

/* The hand-off's companion stop: every call on the queue has been finished
 * or cancelled; their last completions are delivered before the thread ends. */
static void pump_stop(void *arg)
{
    fnw_pump *p = arg;
    grpc_completion_queue_shutdown(p->cq);
    pthread_join(p->thread, NULL);
    grpc_completion_queue_destroy(p->cq);
    free(p);
    grpc_shutdown();
}

fnw_pump *fnw_pump_of(struct ev_loop *loop)
{
    fnw_handoff *h = fnw_handoff_of(loop);
    if (!h)
        return NULL;
    fnw_pump *p = fnw_handoff_companion(h);
    if (p)
        return p;
    if (!(p = calloc(1, sizeof *p)))
        return NULL;
    grpc_init();
    p->handoff = h;
    p->cq = grpc_completion_queue_create_for_next(NULL);
    if (!p->cq || pthread_create(&p->thread, NULL, pump_main, p) != 0) {
        if (p->cq)
            grpc_completion_queue_destroy(p->cq);
        free(p);
        grpc_shutdown();
        return NULL;
    }
    fnw_handoff_set_companion(h, p, pump_stop);
    return p;
}

grpc_completion_queue *fnw_pump_cq(const fnw_pump *p)
{
    return p->cq;
}
