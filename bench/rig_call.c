/* bench/rig_call.c — one gRPC server call of the rig (rig_internal.h):
 * a rig_call carries one tag per op kind (new, initial metadata, receive,
 * send, close) and is freed when RECV_CLOSE_ON_SERVER came back and no op is
 * in flight. Sends go through a per-call queue and are chained: one send in
 * flight, the next started from the previous one's completion, the status
 * last. Also bench_now, the monotonic clock every part of the rig reads.
 * Calls nothing else of the rig, so the services and the completion loop
 * both build on it.
 */
#include "bench/rig_internal.h"

#include <grpc/byte_buffer_reader.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

rig_call *rig_call_new(bench_rig *r)
{
    rig_call *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->rig = r;
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->md);
    c->t_new = (rig_tag){c, OP_NEW};
    c->t_meta = (rig_tag){c, OP_META};
    c->t_recv = (rig_tag){c, OP_RECV};
    c->t_send = (rig_tag){c, OP_SEND};
    c->t_close = (rig_tag){c, OP_CLOSE};
    c->status_details = grpc_empty_slice();
    c->next_live = r->live;
    r->live = c;
    return c;
}

void rig_call_drop_queue(rig_call *c)
{
    while (c->q_head) {
        out_msg *m = c->q_head;
        c->q_head = m->next;
        if (m->bb)
            grpc_byte_buffer_destroy(m->bb);
        free(m);
    }
    c->q_tail = NULL;
}

void rig_call_free(rig_call *c)
{
    bench_rig *r = c->rig;
    for (rig_call **pp = &r->live; *pp; pp = &(*pp)->next_live)
        if (*pp == c) {
            *pp = c->next_live;
            break;
        }
    if (r->control == c)
        r->control = NULL;
    if (r->data == c)
        r->data = NULL;
    rig_call_drop_queue(c);
    if (c->recv_bb)
        grpc_byte_buffer_destroy(c->recv_bb);
    if (c->send_bb)
        grpc_byte_buffer_destroy(c->send_bb);
    grpc_slice_unref(c->status_details);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->md);
    if (c->call)
        grpc_call_unref(c->call);
    free(c);
}

int rig_call_batch(rig_call *c, grpc_op *ops, size_t n, rig_tag *tag)
{
    grpc_call_error e = grpc_call_start_batch(c->call, ops, n, tag, NULL);
    if (e != GRPC_CALL_OK) {
        fprintf(stderr, "bench: grpc_call_start_batch failed (%d)\n", (int)e);
        c->dead = 1;
        return -1;
    }
    c->pending++;
    return 0;
}

void rig_call_arm_recv(rig_call *c)
{
    if (c->dead || c->recv_active)
        return;
    grpc_op op = {0};
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->recv_bb;
    if (rig_call_batch(c, &op, 1, &c->t_recv) == 0)
        c->recv_active = 1;
}

void rig_call_pump_send(rig_call *c)
{
    if (c->send_active || !c->q_head || c->dead)
        return;
    out_msg *m = c->q_head;
    c->q_head = m->next;
    if (!c->q_head)
        c->q_tail = NULL;
    grpc_op op = {0};
    if (m->bb) {
        op.op = GRPC_OP_SEND_MESSAGE;
        op.data.send_message.send_message = m->bb;
        c->send_bb = m->bb;
    } else {
        op.op = GRPC_OP_SEND_STATUS_FROM_SERVER;
        op.data.send_status_from_server.status = (grpc_status_code)c->status_code;
        op.data.send_status_from_server.status_details = &c->status_details;
    }
    free(m);
    if (rig_call_batch(c, &op, 1, &c->t_send) == 0)
        c->send_active = 1;
    else if (c->send_bb) {
        grpc_byte_buffer_destroy(c->send_bb);
        c->send_bb = NULL;
    }
}

void rig_call_enqueue(rig_call *c, grpc_byte_buffer *bb)
{
    if (c->dead || c->status_queued) {
        if (bb)
            grpc_byte_buffer_destroy(bb);
        return;
    }
    out_msg *m = calloc(1, sizeof *m);
    if (!m) {
        if (bb)
            grpc_byte_buffer_destroy(bb);
        return;
    }
    m->bb = bb;
    if (c->q_tail)
        c->q_tail->next = m;
    else
        c->q_head = m;
    c->q_tail = m;
    rig_call_pump_send(c);
}

void rig_call_send_status(rig_call *c, grpc_status_code code, const char *details)
{
    if (c->status_queued || c->dead)
        return;
    c->status_code = (int)code;
    grpc_slice_unref(c->status_details);
    c->status_details = grpc_slice_from_copied_string(details ? details : "");
    rig_call_enqueue(c, NULL);
    c->status_queued = 1;
}

void rig_call_send_bytes(rig_call *c, const uint8_t *p, size_t n)
{
    grpc_slice s = grpc_slice_from_copied_buffer((const char *)p, n);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    rig_call_enqueue(c, bb);
}

grpc_slice rig_call_take_message(rig_call *c)
{
    grpc_byte_buffer_reader rd;
    grpc_slice s = grpc_empty_slice();
    if (grpc_byte_buffer_reader_init(&rd, c->recv_bb)) {
        s = grpc_byte_buffer_reader_readall(&rd);
        grpc_byte_buffer_reader_destroy(&rd);
    }
    grpc_byte_buffer_destroy(c->recv_bb);
    c->recv_bb = NULL;
    return s;
}
