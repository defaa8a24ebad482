/* base/rpc.c — gRPC channels, readiness waits and unary calls on the loop
 * thread (see rpc.h for the rules). */
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


#define container_of(p, T, m) ((T *)((char *)(p)-offsetof(T, m)))

#define RPC_SPARE_MAX 64 /* finished unary records kept for the next calls */

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
    grpc_channel_args ca = { 5, args };
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

void fnw_rpc_init(fnw_rpc *rpc, grpc_completion_queue *cq, const char *header, const char *value,
                  const fnw_rpc_log_sink *log)
{
    memset(rpc, 0, sizeof *rpc);
    rpc->cq = cq;
    rpc->header = header;
    rpc->value = value ? value : "";
    if (log)
        rpc->log = *log;
}

int fnw_rpc_live_calls(const fnw_rpc *rpc)
{
    return rpc->live_calls;
}

void fnw_rpc_report(fnw_rpc *rpc, const char *message)
{
    if (rpc->log.error)
        rpc->log.error(rpc->log.user, message);
    else
        fprintf(stderr, "fnworker ERROR %s\n", message);
}

void fnw_rpc_initial_metadata(const fnw_rpc *rpc, grpc_metadata *md, int wait_for_ready, grpc_op *op)
{
    md->key = grpc_slice_from_static_string(rpc->header ? rpc->header : "");
    md->value = rpc->header ? grpc_slice_from_copied_string(rpc->value) : grpc_empty_slice();
    op->op = GRPC_OP_SEND_INITIAL_METADATA;
    op->data.send_initial_metadata.count = rpc->header ? 1 : 0;
    op->data.send_initial_metadata.metadata = md;
    if (wait_for_ready)
        op->flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY | GRPC_INITIAL_METADATA_WAIT_FOR_READY_EXPLICITLY_SET;
}

/* ---- readiness -------------------------------------------------------------- */

struct fnw_ready_wait {
    fnw_handoff_item tag;
    fnw_rpc *rpc;
    grpc_channel *ch;
    double deadline; /* ev_time() seconds */
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

static void ready_done(fnw_handoff_item *tag, int ok)
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

fnw_ready_wait *fnw_rpc_wait_ready(fnw_rpc *rpc, grpc_channel *ch, double timeout_s, fnw_ready_cb cb,
                                   void *user)
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

void fnw_rpc_ready_cancel(fnw_ready_wait *w)
{
    if (w)
        w->active = 0;
}

/* ---- unary ------------------------------------------------------------------------ */

struct fnw_rpc_unary_call {
    fnw_handoff_item tag;
    fnw_rpc_unary_call *next, **pprev; /* rpc->unary while in flight; next: rpc->spare */
    fnw_rpc *rpc;                      /* NULL once the owner freed rpc */
    grpc_call *call;
    grpc_metadata md;
    grpc_metadata_array recv_md, trailing;
    grpc_byte_buffer *send_bb, *recv_bb;
    grpc_status_code status;
    grpc_slice details;
    fnw_unary_cb cb; /* NULL once given up */
    void *user;
};

static void unary_unlink(fnw_rpc_unary_call *u)
{
    *u->pprev = u->next;
    if (u->next)
        u->next->pprev = u->pprev;
    u->next = NULL;
    u->pprev = NULL;
}

/* Releases a call that is out of the in-flight list: its record is kept
 * for the next call while rpc has room, else freed. */
static void unary_free(fnw_rpc_unary_call *u)
{
    if (u->recv_bb)
        grpc_byte_buffer_destroy(u->recv_bb);
    grpc_byte_buffer_destroy(u->send_bb);
    grpc_metadata_array_destroy(&u->recv_md);
    grpc_metadata_array_destroy(&u->trailing);
    grpc_slice_unref(u->details);
    grpc_slice_unref(u->md.value);
    if (u->call)
        grpc_call_unref(u->call);
    fnw_rpc *rpc = u->rpc;
    if (!rpc) {
        free(u);
        return;
    }
    rpc->live_calls--;
    if (rpc->n_spare >= RPC_SPARE_MAX) {
        free(u);
        return;
    }
    u->next = rpc->spare;
    rpc->spare = u;
    rpc->n_spare++;
}

static void unary_done(fnw_handoff_item *tag, int ok)
{
    fnw_rpc_unary_call *u = container_of(tag, fnw_rpc_unary_call, tag);
    if (u->pprev)
        unary_unlink(u);
    if (!u->cb) { /* given up: only the record is left */
        unary_free(u);
        return;
    }
    grpc_slice resp = grpc_empty_slice();
    if (ok && u->status == GRPC_STATUS_OK && u->recv_bb) {
        grpc_byte_buffer_reader r;
        if (grpc_byte_buffer_reader_init(&r, u->recv_bb)) {
            resp = grpc_byte_buffer_reader_readall(&r);
            grpc_byte_buffer_reader_destroy(&r);
        }
    }
    char *details = grpc_slice_to_c_string(u->details);
    grpc_status_code code = ok ? u->status : GRPC_STATUS_UNAVAILABLE;
    u->cb(u->user, code, details, resp);
    gpr_free(details);
    grpc_slice_unref(resp);
    unary_free(u);
}

static fnw_rpc_unary_call *unary_record(fnw_rpc *rpc)
{
    fnw_rpc_unary_call *u = rpc->spare;
    if (u) {
        rpc->spare = u->next;
        rpc->n_spare--;
    } else if (!(u = malloc(sizeof *u))) {
        return NULL;
    }
    memset(u, 0, sizeof *u);
    return u;
}

int fnw_rpc_unary(fnw_rpc *rpc, grpc_channel *ch, const char *method, grpc_slice request, double timeout_s,
                  int wait_for_ready, fnw_unary_cb cb, void *user, fnw_rpc_unary_call **handle)
{
    fnw_rpc_unary_call *u = unary_record(rpc);
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
    u->send_bb = grpc_raw_byte_buffer_create(&request, 1);
    grpc_slice_unref(request);
    u->call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, rpc->cq,
                                       grpc_slice_from_static_string(method), NULL, deadline_in(timeout_s),
                                       NULL);
    rpc->live_calls++;
    u->next = rpc->unary;
    if (u->next)
        u->next->pprev = &u->next;
    u->pprev = &rpc->unary;
    rpc->unary = u;
    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    fnw_rpc_initial_metadata(rpc, &u->md, wait_for_ready, &ops[0]);
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
    grpc_call_error e = u->call ? grpc_call_start_batch(u->call, ops, 6, &u->tag, NULL) : GRPC_CALL_ERROR;
    if (e != GRPC_CALL_OK) {
        unary_unlink(u); /* nothing was started: no callback */
        unary_free(u);
        return -1;
    }
    if (handle)
        *handle = u;
    return 0;
}

void fnw_rpc_unary_cancel(fnw_rpc_unary_call *u)
{
    if (!u)
        return;
    u->cb = NULL;
    grpc_call_cancel(u->call, NULL);
}

void fnw_rpc_cancel_unary(fnw_rpc *rpc)
{
    for (fnw_rpc_unary_call *u = rpc->unary; u; u = u->next)
        grpc_call_cancel(u->call, NULL);
}

void fnw_rpc_free(fnw_rpc *rpc)
{
    while (rpc->unary) {
        fnw_rpc_unary_call *u = rpc->unary;
        unary_unlink(u);
        u->rpc = NULL; /* its completion frees it, without rpc */
        u->cb = NULL;
        grpc_call_cancel(u->call, NULL);
        rpc->live_calls--;
    }
    while (rpc->spare) {
        fnw_rpc_unary_call *u = rpc->spare;
        rpc->spare = u->next;
        free(u);
    }
    rpc->n_spare = 0;
}
