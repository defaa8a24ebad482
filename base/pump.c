/* base/pump.c — completion-queue thread (see pump.h). */
#include "base/pump.h"

static void *pump_main(void *arg)
{
    fnw_pump *p = arg;
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(p->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type == GRPC_OP_COMPLETE)
            fnw_mailbox_post(p->mailbox, ev.tag, ev.success);
    }
    return NULL;
}

int fnw_pump_start(fnw_pump *p, fnw_mailbox *m)
{
    p->cq = grpc_completion_queue_create_for_next(NULL);
    p->mailbox = m;
    p->started = pthread_create(&p->thread, NULL, pump_main, p) == 0;
    return p->started ? 0 : -1;
}

void fnw_pump_stop(fnw_pump *p)
{
    if (!p->cq)
        return;
    grpc_completion_queue_shutdown(p->cq);
    if (p->started)
        pthread_join(p->thread, NULL);
    grpc_completion_queue_destroy(p->cq);
    p->cq = NULL;
    p->started = 0;
}
