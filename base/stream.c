/* base/stream.c — bidi gRPC streams on the loop thread (see stream.h for
 * the rules). */
#include "base/stream.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/support/alloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define container_of(p, T, m) ((T *)((char *)(p)-offsetof(T, m)))

#define STREAM_HIGH_WATER 4 /* messages queued (data: each up to --flush-bytes) */
#define STREAM_LOW_WATER 1

typedef struct send_node {
    struct send_node *next;
    grpc_byte_buffer *bb; /* NULL: the half-close marker */
    fnw_sent_cb done;
    void *arg;
} send_node;

struct fnw_stream {
    fnw_rpc *rpc;
    grpc_call *call;
    fnw_stream_handler h;
    grpc_metadata md;
    grpc_metadata_array recv_md;
    grpc_metadata_array trailing;
    grpc_status_code status;
    grpc_slice details;
    grpc_byte_buffer *recv_bb;
    fnw_handoff_item t_start, t_recv, t_send, t_status;
    send_node *q_head, *q_tail;
    send_node *in_flight;
    size_t queued;
    int outstanding; /* tags not yet returned */
    int recv_posted, recv_paused, recv_ended;
    int send_closed; /* half-close queued */
    int closed;      /* status received */
    int released;
    int was_congested;
    int in_callback; /* inside an owner callback: do not free yet */
    int counted;     /* included in rpc->live_calls */
    int server;      /* accepted by a server (fnw_stream_accept): the peer is a client */
    int cancelled;   /* server side: RECV_CLOSE_ON_SERVER said the call was cancelled */
};

static void stream_maybe_free(fnw_stream *s)
{
    if (s->outstanding == 0 && s->counted) {
        s->counted = 0; /* every tag is back: the call is over */
        s->rpc->live_calls--;
    }
    if (!s->released || s->outstanding > 0 || s->in_callback)
        return;
    send_node *n = s->q_head;
    while (n) {
        send_node *next = n->next;
        if (n->bb)
            grpc_byte_buffer_destroy(n->bb);
        free(n);
        n = next;
    }
    grpc_metadata_array_destroy(&s->recv_md);
    grpc_metadata_array_destroy(&s->trailing);
    grpc_slice_unref(s->details);
    grpc_slice_unref(s->md.value);
    grpc_call_unref(s->call);
    free(s);
}

static void stream_start_batch(fnw_stream *s, grpc_op *ops, size_t n, fnw_handoff_item *tag)
{
    s->outstanding++;
    grpc_call_error e = grpc_call_start_batch(s->call, ops, n, tag, NULL);
    if (e != GRPC_CALL_OK) {
        /* Treat as a failed completion, delivered through the hand-off's path
         * semantics: run it now. Only happens on programming errors. */
        char msg[64];
        snprintf(msg, sizeof msg, "grpc_call_start_batch failed (%d)", (int)e);
        fnw_rpc_report(s->rpc, msg);
        tag->done(tag, 0);
    }
}

static void stream_post_recv(fnw_stream *s)
{
    if (s->recv_posted || s->recv_paused || s->recv_ended || s->closed)
        return;
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &s->recv_bb;
    s->recv_posted = 1;
    stream_start_batch(s, &op, 1, &s->t_recv);
}

static void stream_send_next(fnw_stream *s)
{
    if (s->in_flight || !s->q_head || s->closed)
        return;
    send_node *n = s->q_head;
    s->q_head = n->next;
    if (!s->q_head)
        s->q_tail = NULL;
    s->in_flight = n;
    grpc_op op;
    memset(&op, 0, sizeof op);
    if (n->bb) {
        op.op = GRPC_OP_SEND_MESSAGE;
        op.data.send_message.send_message = n->bb;
    } else if (s->server) {
        op.op = GRPC_OP_SEND_STATUS_FROM_SERVER; /* a server ends its side with the status */
        op.data.send_status_from_server.status = GRPC_STATUS_OK;
    } else {
        op.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    }
    stream_start_batch(s, &op, 1, &s->t_send);
}

static void stream_start_done(fnw_handoff_item *tag, int ok)
{
    fnw_stream *s = container_of(tag, fnw_stream, t_start);
    s->outstanding--;
    stream_maybe_free(s);
}

static void stream_recv_done(fnw_handoff_item *tag, int ok)
{
    fnw_stream *s = container_of(tag, fnw_stream, t_recv);
    s->outstanding--;
    s->recv_posted = 0;
    grpc_byte_buffer *bb = s->recv_bb;
    s->recv_bb = NULL;
    if (!ok || !bb) {
        s->recv_ended = 1;
        if (bb)
            grpc_byte_buffer_destroy(bb);
        if (s->server && ok)
            fnw_stream_close_send(s); /* the client half-closed: end the call with OK */
        stream_maybe_free(s);
        return;
    }
    if (!s->released) {
        grpc_byte_buffer_reader r;
        if (grpc_byte_buffer_reader_init(&r, bb)) {
            grpc_slice msg = grpc_byte_buffer_reader_readall(&r);
            grpc_byte_buffer_reader_destroy(&r);
            s->in_callback++;
            s->h.on_message(s->h.user, msg);
            s->in_callback--;
            grpc_slice_unref(msg);
        }
    }
    grpc_byte_buffer_destroy(bb);
    if (!s->released)
        stream_post_recv(s);
    stream_maybe_free(s);
}

static void stream_send_done(fnw_handoff_item *tag, int ok)
{
    fnw_stream *s = container_of(tag, fnw_stream, t_send);
    s->outstanding--;
    send_node *n = s->in_flight;
    s->in_flight = NULL;
    if (n) {
        if (n->bb) {
            grpc_byte_buffer_destroy(n->bb);
            s->queued--;
        }
        s->in_callback++;
        if (n->done && !s->released)
            n->done(n->arg, ok);
        s->in_callback--;
        free(n);
    }
    if (ok)
        stream_send_next(s);
    if (s->was_congested && s->queued <= STREAM_LOW_WATER) {
        s->was_congested = 0;
        s->in_callback++;
        if (!s->released && s->h.on_writable)
            s->h.on_writable(s->h.user);
        s->in_callback--;
    }
    stream_maybe_free(s);
}

static void stream_fail_queue(fnw_stream *s)
{
    send_node *n = s->q_head;
    s->q_head = s->q_tail = NULL;
    while (n) {
        send_node *next = n->next;
        if (n->bb) {
            grpc_byte_buffer_destroy(n->bb);
            s->queued--;
        }
        if (n->done && !s->released)
            n->done(n->arg, 0);
        free(n);
        n = next;
    }
}

static void stream_status_done(fnw_handoff_item *tag, int ok)
{
    fnw_stream *s = container_of(tag, fnw_stream, t_status);
    s->outstanding--;
    s->closed = 1;
    if (s->server)
        s->status = s->cancelled ? GRPC_STATUS_CANCELLED : GRPC_STATUS_OK;
    s->in_callback++;
    stream_fail_queue(s);
    if (!s->released) {
        char *details = grpc_slice_to_c_string(s->details);
        s->h.on_closed(s->h.user, s->status, details);
        gpr_free(details);
    }
    s->in_callback--;
    stream_maybe_free(s);
}

static fnw_stream *stream_new(fnw_rpc *rpc, const fnw_stream_handler *h)
{
    fnw_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->rpc = rpc;
    s->h = *h;
    s->t_start.done = stream_start_done;
    s->t_recv.done = stream_recv_done;
    s->t_send.done = stream_send_done;
    s->t_status.done = stream_status_done;
    s->details = grpc_empty_slice();
    s->md.value = grpc_empty_slice();
    grpc_metadata_array_init(&s->recv_md);
    grpc_metadata_array_init(&s->trailing);
    return s;
}

fnw_stream *fnw_stream_accept(fnw_rpc *rpc, grpc_call *call, const fnw_stream_handler *h)
{
    fnw_stream *s = stream_new(rpc, h);
    if (!s) {
        grpc_call_cancel(call, NULL);
        grpc_call_unref(call);
        return NULL;
    }
    s->server = 1;
    s->call = call;
    rpc->live_calls++;
    s->counted = 1;

    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_SEND_INITIAL_METADATA;
    stream_start_batch(s, &op, 1, &s->t_start);

    grpc_op st;
    memset(&st, 0, sizeof st);
    st.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    st.data.recv_close_on_server.cancelled = &s->cancelled;
    stream_start_batch(s, &st, 1, &s->t_status);

    stream_post_recv(s);
    return s;
}

fnw_stream *fnw_stream_start(fnw_rpc *rpc, grpc_channel *ch, const char *method, const fnw_stream_handler *h,
                             int wait_for_ready)
{
    fnw_stream *s = stream_new(rpc, h);
    if (!s)
        return NULL;
    s->call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, rpc->cq,
                                       grpc_slice_from_static_string(method), NULL,
                                       gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    rpc->live_calls++;
    s->counted = 1;

    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    fnw_rpc_initial_metadata(rpc, &s->md, wait_for_ready, &ops[0]);
    ops[1].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[1].data.recv_initial_metadata.recv_initial_metadata = &s->recv_md;
    stream_start_batch(s, ops, 2, &s->t_start);

    grpc_op st;
    memset(&st, 0, sizeof st);
    st.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    st.data.recv_status_on_client.trailing_metadata = &s->trailing;
    st.data.recv_status_on_client.status = &s->status;
    st.data.recv_status_on_client.status_details = &s->details;
    stream_start_batch(s, &st, 1, &s->t_status);

    stream_post_recv(s);
    return s;
}

void fnw_stream_send_slices(fnw_stream *s, grpc_slice *slices, size_t n, fnw_sent_cb done, void *arg)
{
    send_node *node = (s->closed || s->send_closed) ? NULL : malloc(sizeof *node);
    if (!node) {
        for (size_t i = 0; i < n; i++)
            grpc_slice_unref(slices[i]);
        if (done)
            done(arg, 0);
        return;
    }
    node->next = NULL;
    node->bb = grpc_raw_byte_buffer_create(slices, n); /* takes its own refs */
    for (size_t i = 0; i < n; i++)
        grpc_slice_unref(slices[i]);
    node->done = done;
    node->arg = arg;
    if (s->q_tail)
        s->q_tail->next = node;
    else
        s->q_head = node;
    s->q_tail = node;
    s->queued++;
    if (s->queued >= STREAM_HIGH_WATER)
        s->was_congested = 1;
    stream_send_next(s);
}

void fnw_stream_send(fnw_stream *s, grpc_slice msg, fnw_sent_cb done, void *arg)
{
    fnw_stream_send_slices(s, &msg, 1, done, arg);
}

size_t fnw_stream_send_queued(const fnw_stream *s)
{
    return s->queued;
}

int fnw_stream_congested(const fnw_stream *s)
{
    return s->queued >= STREAM_HIGH_WATER;
}

void fnw_stream_pause_recv(fnw_stream *s, int paused)
{
    s->recv_paused = paused;
    if (!paused)
        stream_post_recv(s);
}

void fnw_stream_close_send(fnw_stream *s)
{
    if (s->send_closed || s->closed)
        return;
    s->send_closed = 1;
    send_node *n = calloc(1, sizeof *n);
    if (!n)
        return;
    if (s->q_tail)
        s->q_tail->next = n;
    else
        s->q_head = n;
    s->q_tail = n;
    stream_send_next(s);
}

void fnw_stream_cancel(fnw_stream *s)
{
    if (!s->closed)
        grpc_call_cancel(s->call, NULL);
}

void fnw_stream_free(fnw_stream *s)
{
    if (!s)
        return;
    s->released = 1;
    if (!s->closed)
        grpc_call_cancel(s->call, NULL);
    stream_maybe_free(s);
}
