/* base/rpc.c — gRPC channels, readiness waits, bidi streams and unary calls
 * on the loop thread (see rpc.h for the rules). */
#include "base/rpc.h"

#include <ev.h>
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define container_of(p, T, m) ((T *)((char *)(p) - offsetof(T, m)))

#define STREAM_HIGH_WATER 4     /* messages queued (data: each up to --flush-bytes) */
#define STREAM_LOW_WATER 1

static gpr_timespec deadline_in(double seconds)
{
    if (seconds <= 0)
        return gpr_inf_future(GPR_CLOCK_MONOTONIC);
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                        gpr_time_from_millis((int64_t)(seconds * 1000), GPR_TIMESPAN));
}

grpc_channel *fnw_rpc_channel(const char *url)
{
    grpc_arg args[5];
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = -1;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].value.integer = -1;
    /* reconnect quickly while we wait for the runner's servers at boot */
    args[2].type = GRPC_ARG_INTEGER;
    args[2].key = GRPC_ARG_MAX_RECONNECT_BACKOFF_MS;
    args[2].value.integer = 1000;
    /* A fixed HTTP/2 receive window: while the worker pauses reading (its
     * input queue is full) the transport may hold at most this much more,
     * instead of a window that BDP probing grows to many megabytes. */
    args[3].type = GRPC_ARG_INTEGER;
    args[3].key = GRPC_ARG_HTTP2_BDP_PROBE;
    args[3].value.integer = 0;
    args[4].type = GRPC_ARG_INTEGER;
    args[4].key = GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES;
    args[4].value.integer = 2 << 20;
    grpc_channel_args ca = {5, args};
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    grpc_channel *ch = grpc_channel_create(url, creds, &ca);
    grpc_channel_credentials_release(creds);
    return ch;
}

const char *fnw_rpc_channel_state(grpc_channel *ch)
{
    switch (grpc_channel_check_connectivity_state(ch, 0)) {
    case GRPC_CHANNEL_TRANSIENT_FAILURE:
        return "connecting fails (refused, unreachable or unknown host)";
    case GRPC_CHANNEL_CONNECTING:
        return "no answer (still connecting)";
    case GRPC_CHANNEL_READY:
        return "connected too late";
    case GRPC_CHANNEL_SHUTDOWN:
        return "the channel was shut down";
    default:
        return "not connected (idle)";
    }
}

void fnw_rpc_init(fnw_rpc *rpc, grpc_completion_queue *cq, const char *worker_id,
                  const fnw_rpc_log_sink *log)
{
    memset(rpc, 0, sizeof *rpc);
    rpc->cq = cq;
    rpc->worker_id = worker_id;
    if (log)
        rpc->log = *log;
}

int fnw_rpc_live_calls(const fnw_rpc *rpc)
{
    return rpc->live_calls;
}

static void rpc_report(fnw_rpc *rpc, const char *message)
{
    if (rpc->log.error)
        rpc->log.error(rpc->log.user, message);
    else
        fprintf(stderr, "fnworker ERROR %s\n", message);
}

/* ---- readiness -------------------------------------------------------------- */

struct fnw_ready_wait {
    fnw_tag tag;
    fnw_rpc *rpc;
    grpc_channel *ch;
    double deadline;          /* ev_time() seconds */
    fnw_ready_cb cb;
    void *user;
    int active;
};

static void ready_arm(fnw_ready_wait *w, grpc_connectivity_state st)
{
    double left = w->deadline - ev_time();
    if (left > 1.0)
        left = 1.0;
    if (left < 0.01)
        left = 0.01;
    grpc_channel_watch_connectivity_state(w->ch, st, deadline_in(left), w->rpc->cq, &w->tag);
}

static void ready_done(fnw_tag *tag, int ok)
{
    fnw_ready_wait *w = container_of(tag, fnw_ready_wait, tag);
    if (!w->active) {
        free(w);
        return;
    }
    grpc_connectivity_state st = grpc_channel_check_connectivity_state(w->ch, 1);
    if (st == GRPC_CHANNEL_READY || ev_time() >= w->deadline || st == GRPC_CHANNEL_SHUTDOWN) {
        w->cb(w->user, st == GRPC_CHANNEL_READY);
        free(w);
    } else {
        ready_arm(w, st);
    }
}

fnw_ready_wait *fnw_rpc_wait_ready(fnw_rpc *rpc, grpc_channel *ch, double timeout_s,
                                   fnw_ready_cb cb, void *user)
{
    fnw_ready_wait *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->tag.done = ready_done;
    w->rpc = rpc;
    w->ch = ch;
    w->deadline = ev_time() + timeout_s;
    w->cb = cb;
    w->user = user;
    w->active = 1;
    ready_arm(w, grpc_channel_check_connectivity_state(ch, 1));
    return w;
}

void fnw_ready_cancel(fnw_ready_wait *w)
{
    if (w)
        w->active = 0;
}

/* ---- streams ------------------------------------------------------------------ */

typedef struct send_node {
    struct send_node *next;
    grpc_byte_buffer *bb;     /* NULL: the half-close marker */
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
    fnw_tag t_start, t_recv, t_send, t_status;
    send_node *q_head, *q_tail;
    send_node *in_flight;
    size_t queued;
    int outstanding;          /* tags not yet returned */
    int recv_posted, recv_paused, recv_ended;
    int send_closed;          /* half-close queued */
    int closed;               /* status received */
    int released;
    int was_congested;
    int in_callback;          /* inside an owner callback: do not free yet */
    int counted;              /* included in rpc->live_calls */
};

static void stream_maybe_free(fnw_stream *s)
{
    if (s->outstanding == 0 && s->counted) {
        s->counted = 0;           /* every tag is back: the call is over */
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

static void stream_start_batch(fnw_stream *s, grpc_op *ops, size_t n, fnw_tag *tag)
{
    s->outstanding++;
    grpc_call_error e = grpc_call_start_batch(s->call, ops, n, tag, NULL);
    if (e != GRPC_CALL_OK) {
        /* Treat as a failed completion, delivered through the mailbox path
         * semantics: run it now. Only happens on programming errors. */
        char msg[64];
        snprintf(msg, sizeof msg, "grpc_call_start_batch failed (%d)", (int)e);
        rpc_report(s->rpc, msg);
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
    } else {
        op.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    }
    stream_start_batch(s, &op, 1, &s->t_send);
}

static void stream_start_done(fnw_tag *tag, int ok)
{
    fnw_stream *s = container_of(tag, fnw_stream, t_start);
    s->outstanding--;
    stream_maybe_free(s);
}

static void stream_recv_done(fnw_tag *tag, int ok)
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

static void stream_send_done(fnw_tag *tag, int ok)
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

static void stream_status_done(fnw_tag *tag, int ok)
{
    fnw_stream *s = container_of(tag, fnw_stream, t_status);
    s->outstanding--;
    s->closed = 1;
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

fnw_stream *fnw_stream_start(fnw_rpc *rpc, grpc_channel *ch, const char *method,
                            const fnw_stream_handler *h, int wait_for_ready)
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
    grpc_metadata_array_init(&s->recv_md);
    grpc_metadata_array_init(&s->trailing);
    s->md.key = grpc_slice_from_static_string("worker_id");
    s->md.value = grpc_slice_from_copied_string(rpc->worker_id);
    s->call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, rpc->cq,
                                       grpc_slice_from_static_string(method), NULL,
                                       gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    rpc->live_calls++;
    s->counted = 1;

    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = 1;
    ops[0].data.send_initial_metadata.metadata = &s->md;
    if (wait_for_ready)
        ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY |
                       GRPC_INITIAL_METADATA_WAIT_FOR_READY_EXPLICITLY_SET;
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
    node->bb = grpc_raw_byte_buffer_create(slices, n);   /* takes its own refs */
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

/* ---- unary ------------------------------------------------------------------------ */

typedef struct unary_call {
    fnw_tag tag;
    struct unary_call *next, **pprev;
    fnw_rpc *rpc;
    grpc_call *call;
    grpc_metadata md;
    grpc_metadata_array recv_md, trailing;
    grpc_byte_buffer *send_bb, *recv_bb;
    grpc_status_code status;
    grpc_slice details;
    fnw_unary_cb cb;
    void *user;
} unary_call;

static void unary_unlink(unary_call *u)
{
    *u->pprev = u->next;
    if (u->next)
        u->next->pprev = u->pprev;
}

/* Frees a call that is out of the cancel list. */
static void unary_free(unary_call *u)
{
    if (u->recv_bb)
        grpc_byte_buffer_destroy(u->recv_bb);
    grpc_byte_buffer_destroy(u->send_bb);
    grpc_metadata_array_destroy(&u->recv_md);
    grpc_metadata_array_destroy(&u->trailing);
    grpc_slice_unref(u->details);
    grpc_slice_unref(u->md.value);
    grpc_call_unref(u->call);
    u->rpc->live_calls--;
    free(u);
}

static void unary_done(fnw_tag *tag, int ok)
{
    unary_call *u = container_of(tag, unary_call, tag);
    grpc_slice resp = grpc_empty_slice();
    if (ok && u->status == GRPC_STATUS_OK && u->recv_bb) {
        grpc_byte_buffer_reader r;
        if (grpc_byte_buffer_reader_init(&r, u->recv_bb)) {
            resp = grpc_byte_buffer_reader_readall(&r);
            grpc_byte_buffer_reader_destroy(&r);
        }
    }
    unary_unlink(u);
    char *details = grpc_slice_to_c_string(u->details);
    grpc_status_code code = ok ? u->status : GRPC_STATUS_UNAVAILABLE;
    u->cb(u->user, code, details, resp);
    gpr_free(details);
    grpc_slice_unref(resp);
    unary_free(u);
}

int fnw_unary_call(fnw_rpc *rpc, grpc_channel *ch, const char *method, grpc_slice request,
                   double timeout_s, int wait_for_ready, fnw_unary_cb cb, void *user)
{
    unary_call *u = calloc(1, sizeof *u);
    if (!u) {
        grpc_slice_unref(request);
        return -1;
    }
    u->tag.done = unary_done;
    u->rpc = rpc;
    u->cb = cb;
    u->user = user;
    u->details = grpc_empty_slice();
    grpc_metadata_array_init(&u->recv_md);
    grpc_metadata_array_init(&u->trailing);
    u->md.key = grpc_slice_from_static_string("worker_id");
    u->md.value = grpc_slice_from_copied_string(rpc->worker_id);
    u->send_bb = grpc_raw_byte_buffer_create(&request, 1);
    grpc_slice_unref(request);
    u->call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, rpc->cq,
                                       grpc_slice_from_static_string(method), NULL,
                                       deadline_in(timeout_s), NULL);
    rpc->live_calls++;
    u->next = rpc->unary;
    if (u->next)
        u->next->pprev = &u->next;
    u->pprev = &rpc->unary;
    rpc->unary = u;
    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = 1;
    ops[0].data.send_initial_metadata.metadata = &u->md;
    if (wait_for_ready)
        ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY |
                       GRPC_INITIAL_METADATA_WAIT_FOR_READY_EXPLICITLY_SET;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = u->send_bb;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &u->recv_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &u->recv_bb;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &u->trailing;
    ops[5].data.recv_status_on_client.status = &u->status;
    ops[5].data.recv_status_on_client.status_details = &u->details;
    grpc_call_error e = grpc_call_start_batch(u->call, ops, 6, &u->tag, NULL);
    if (e != GRPC_CALL_OK) {
        unary_unlink(u);          /* nothing was started: no callback */
        unary_free(u);
        return -1;
    }
    return 0;
}

void fnw_rpc_cancel_unary(fnw_rpc *rpc)
{
    for (unary_call *u = rpc->unary; u; u = u->next)
        grpc_call_cancel(u->call, NULL);
}
