/* base/server.c — a gRPC server whose calls complete on the loop (see
 * server.h). Each call record walks: requested -> (read) -> answered, or
 * requested -> taken as a stream; every batch completes through the loop's
 * hand-off, and the record is freed when its last batch is back. */
#include "base/server.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/handoff.h"
#include "base/pump.h"

enum { CALL_REQUESTED, CALL_READING, CALL_ANSWERING };

struct fnw_server_call {
    fnw_handoff_item tag;
    fnw_server *srv;
    int stage;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
    char *method;
    grpc_byte_buffer *recv, *send;
    grpc_slice status_details;
    int cancelled;
    fnw_server_read_cb read_cb;
    void *read_user;
};

struct fnw_server {
    struct ev_loop *loop;
    fnw_handoff *handoff; /* the loop's, held while the server lives */
    fnw_pump *pump;       /* the loop's */
    grpc_server *server;
    fnw_server_events ev;
    fnw_handoff_item shutdown_tag;
    int live_calls, shut_down, stopping, started;
};

static void request_next(fnw_server *s);

static void call_free(fnw_server_call *c)
{
    if (c->call)
        grpc_call_unref(c->call);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->md);
    if (c->recv)
        grpc_byte_buffer_destroy(c->recv);
    if (c->send)
        grpc_byte_buffer_destroy(c->send);
    grpc_slice_unref(c->status_details);
    free(c->method);
    c->srv->live_calls--;
    free(c);
}

static void call_arrived(fnw_server_call *c)
{
    fnw_server *s = c->srv;
    if (!s->stopping)
        request_next(s);
    c->method = grpc_slice_to_c_string(c->details.method);
    if (!c->method || s->stopping) {
        grpc_call_cancel(c->call, NULL);
        call_free(c);
        return;
    }
    s->ev.on_call(s->ev.user, c);
}

static void call_read(fnw_server_call *c, int ok)
{
    grpc_byte_buffer_reader r;
    grpc_slice msg = grpc_empty_slice();
    if (ok && c->recv && grpc_byte_buffer_reader_init(&r, c->recv)) {
        msg = grpc_byte_buffer_reader_readall(&r);
        grpc_byte_buffer_reader_destroy(&r);
    }
    if (!ok) {
        c->read_cb(c->read_user, c, 0, msg);
        grpc_call_cancel(c->call, NULL);
        call_free(c);
        return;
    }
    c->read_cb(c->read_user, c, 1, msg);
    grpc_slice_unref(msg);
}

static void call_done(fnw_handoff_item *tag, int ok)
{
    fnw_server_call *c = (fnw_server_call *)tag;
    switch (c->stage) {
    case CALL_REQUESTED:
        if (ok)
            call_arrived(c);
        else
            call_free(c); /* the server is shutting down */
        return;
    case CALL_READING:
        call_read(c, ok);
        return;
    default:
        call_free(c);
    }
}

static void request_next(fnw_server *s)
{
    fnw_server_call *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->tag.done = call_done;
    c->srv = s;
    c->status_details = grpc_empty_slice();
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->md);
    grpc_completion_queue *cq = fnw_pump_cq(s->pump);
    s->live_calls++;
    if (grpc_server_request_call(s->server, &c->call, &c->details, &c->md, cq, cq, &c->tag) != GRPC_CALL_OK)
        call_free(c);
}

const char *fnw_server_method(const fnw_server_call *c)
{
    return c->method;
}

int fnw_server_has_header(const fnw_server_call *c, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = strlen(value);
    for (size_t i = 0; i < c->md.count; i++) {
        grpc_slice k = c->md.metadata[i].key, v = c->md.metadata[i].value;
        if (GRPC_SLICE_LENGTH(k) == kl && !memcmp(GRPC_SLICE_START_PTR(k), key, kl) &&
            GRPC_SLICE_LENGTH(v) == vl && !memcmp(GRPC_SLICE_START_PTR(v), value, vl))
            return 1;
    }
    return 0;
}

void fnw_server_read(fnw_server_call *c, fnw_server_read_cb cb, void *user)
{
    c->read_cb = cb;
    c->read_user = user;
    c->stage = CALL_READING;
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->recv;
    if (grpc_call_start_batch(c->call, &op, 1, &c->tag, NULL) != GRPC_CALL_OK)
        call_read(c, 0);
}

void fnw_server_answer(fnw_server_call *c, grpc_status_code status, const char *details, grpc_slice response)
{
    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    if (status == GRPC_STATUS_OK) {
        c->send = grpc_raw_byte_buffer_create(&response, 1);
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->send;
    }
    grpc_slice_unref(response);
    c->status_details = grpc_slice_from_copied_string(details ? details : "");
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = status;
    ops[n++].data.send_status_from_server.status_details = &c->status_details;
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
    c->stage = CALL_ANSWERING;
    if (grpc_call_start_batch(c->call, ops, n, &c->tag, NULL) != GRPC_CALL_OK) {
        grpc_call_cancel(c->call, NULL);
        call_free(c);
    }
}

fnw_stream *fnw_server_take_stream(fnw_server_call *c, fnw_rpc *rpc, const fnw_stream_handler *h)
{
    grpc_call *call = c->call;
    c->call = NULL;
    call_free(c);
    return fnw_stream_accept(rpc, call, h);
}

static void shutdown_done(fnw_handoff_item *tag, int ok)
{
    fnw_server *s = (fnw_server *)((char *)tag - offsetof(fnw_server, shutdown_tag));
    s->shut_down = 1;
}

fnw_server *fnw_server_new(struct ev_loop *loop, const char *addr, size_t max_message,
                           const fnw_server_events *ev, int *port, char *why, size_t cap)
{
    fnw_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    s->loop = loop;
    s->ev = *ev;
    s->shutdown_tag.done = shutdown_done;
    if (!(s->handoff = fnw_handoff_of(loop)) || !(s->pump = fnw_pump_of(loop))) {
        snprintf(why, cap, "cannot start the completion queue thread");
        free(s);
        return NULL;
    }
    grpc_arg arg = { GRPC_ARG_INTEGER, GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, { .integer = (int)max_message } };
    grpc_channel_args args = { 1, &arg };
    s->server = grpc_server_create(&args, NULL);
    fnw_handoff_hold(s->handoff);
    grpc_server_register_completion_queue(s->server, fnw_pump_cq(s->pump), NULL);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    *port = grpc_server_add_http2_port(s->server, addr, creds);
    grpc_server_credentials_release(creds);
    if (*port <= 0) {
        snprintf(why, cap, "cannot listen on %s", addr);
        fnw_server_free(s);
        return NULL;
    }
    grpc_server_start(s->server);
    s->started = 1;
    request_next(s);
    return s;
}

void fnw_server_free(fnw_server *s)
{
    if (!s)
        return;
    s->stopping = 1;
    if (s->started) {
        grpc_server_shutdown_and_notify(s->server, fnw_pump_cq(s->pump), &s->shutdown_tag);
        grpc_server_cancel_all_calls(s->server);
        while (!s->shut_down || s->live_calls > 0)
            ev_run(s->loop, EVRUN_ONCE);
    }
    grpc_server_destroy(s->server);
    fnw_handoff_release(s->handoff);
    free(s);
}
