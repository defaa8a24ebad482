/* bench/null_worker_stream.c — the null worker's gRPC client
 * plumbing (null_worker_internal.h): channels without a message size limit,
 * the worker_id header on every call, and one bidirectional stream with one
 * receive and one send in flight; sends wait in a queue whose length the
 * data stream watches to pause reading. A queued send may carry an
 * instruction id: the bundle is answered once that send completed (the
 * caller's on_stream_event does it). Also the six ops of a unary call.
 * Calls nothing else of the null worker.
 */
#include "bench/null_worker_internal.h"

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

grpc_metadata nw_worker_md(const nw *w)
{
    grpc_metadata m;
    memset(&m, 0, sizeof m);
    m.key = grpc_slice_from_static_string("worker_id");
    m.value = grpc_slice_from_static_string(w->id);
    return m;
}

grpc_channel *nw_channel(const char *url)
{
    grpc_arg a = {GRPC_ARG_INTEGER, GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, {.integer = -1}};
    grpc_channel_args args = {1, &a};
    grpc_channel_credentials *c = grpc_insecure_credentials_create();
    grpc_channel *ch = grpc_channel_create(url, c, &args);
    grpc_channel_credentials_release(c);
    return ch;
}

grpc_slice nw_readall(grpc_byte_buffer *bb)
{
    grpc_byte_buffer_reader r;
    grpc_slice s = grpc_empty_slice();
    if (grpc_byte_buffer_reader_init(&r, bb)) {
        s = grpc_byte_buffer_reader_readall(&r);
        grpc_byte_buffer_reader_destroy(&r);
    }
    return s;
}

/* ---- streams ------------------------------------------------------------------ */

void nw_stream_batch(stream *s, grpc_op *ops, size_t n, tag *t)
{
    if (grpc_call_start_batch(s->call, ops, n, t, NULL) == GRPC_CALL_OK)
        s->pending++;
    else
        fprintf(stderr, "null_worker: start_batch failed\n");
}

void nw_stream_arm_recv(stream *s)
{
    if (s->recv_active || s->done || s->recv_paused)
        return;
    grpc_op op = {0};
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &s->recv_bb;
    s->recv_active = 1;
    nw_stream_batch(s, &op, 1, &s->t_recv);
}

void nw_stream_pump(stream *s)
{
    if (s->send_active || !s->q_head || s->done)
        return;
    out_msg *m = s->q_head;
    s->q_head = m->next;
    if (!s->q_head)
        s->q_tail = NULL;
    s->q_len--;
    s->send_bb = m->bb;
    s->send_respond = m->respond_iid;
    free(m);
    grpc_op op = {0};
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = s->send_bb;
    s->send_active = 1;
    nw_stream_batch(s, &op, 1, &s->t_send);
}

void nw_stream_send(stream *s, grpc_byte_buffer *bb, const char *respond_iid)
{
    out_msg *m = calloc(1, sizeof *m);
    if (!m)
        return;
    m->bb = bb;
    m->respond_iid = respond_iid ? strdup(respond_iid) : NULL;
    if (s->q_tail)
        s->q_tail->next = m;
    else
        s->q_head = m;
    s->q_tail = m;
    s->q_len++;
    nw_stream_pump(s);
}

void nw_stream_start(nw *w, stream *s, grpc_channel *ch, const char *method,
                     void (*on_message)(stream *, grpc_slice))
{
    memset(s, 0, sizeof *s);
    s->w = w;
    s->on_message = on_message;
    s->t_meta = (tag){T_META, s, NULL};
    s->t_recv = (tag){T_RECV, s, NULL};
    s->t_send = (tag){T_SEND, s, NULL};
    s->t_status = (tag){T_STATUS, s, NULL};
    s->details = grpc_empty_slice();
    grpc_metadata_array_init(&s->md_in);
    grpc_metadata_array_init(&s->trailers);
    s->call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, w->cq,
                                       grpc_slice_from_static_string(method), NULL,
                                       gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    static grpc_metadata md;
    md = nw_worker_md(w);
    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = 1;
    ops[0].data.send_initial_metadata.metadata = &md;
    ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY | GRPC_INITIAL_METADATA_WAIT_FOR_READY_EXPLICITLY_SET;
    ops[1].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[1].data.recv_initial_metadata.recv_initial_metadata = &s->md_in;
    nw_stream_batch(s, ops, 2, &s->t_meta);
    grpc_op st = {0};
    st.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    st.data.recv_status_on_client.trailing_metadata = &s->trailers;
    st.data.recv_status_on_client.status = &s->status;
    st.data.recv_status_on_client.status_details = &s->details;
    nw_stream_batch(s, &st, 1, &s->t_status);
    nw_stream_arm_recv(s);
}


/* The six ops of one unary call: metadata, the request, half-close, and the
 * response's metadata, message and status. */
void nw_unary_ops(grpc_op ops[6], grpc_metadata *md, grpc_byte_buffer *req,
                  grpc_metadata_array *md_in, grpc_byte_buffer **resp,
                  grpc_metadata_array *trailers, grpc_status_code *status, grpc_slice *details)
{
    memset(ops, 0, 6 * sizeof *ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = 1;
    ops[0].data.send_initial_metadata.metadata = md;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = req;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = md_in;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = resp;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = trailers;
    ops[5].data.recv_status_on_client.status = status;
    ops[5].data.recv_status_on_client.status_details = details;
}

void nw_stream_free(stream *s)
{
    while (s->q_head) {
        out_msg *m = s->q_head;
        s->q_head = m->next;
        grpc_byte_buffer_destroy(m->bb);
        free(m->respond_iid);
        free(m);
    }
    grpc_metadata_array_destroy(&s->md_in);
    grpc_metadata_array_destroy(&s->trailers);
    grpc_slice_unref(s->details);
    grpc_call_unref(s->call);
}
