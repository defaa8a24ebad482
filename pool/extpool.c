/* pool/extpool.c — the BeamFnExternalWorkerPool server (see extpool.h).
 *
 * One call at a time is requested from gRPC (grpc_server_request_call); when
 * it arrives the next is requested, and the call reads its one message,
 * answers it and closes: two batches, each completing through the loop's
 * hand-off (base/handoff.h) from the loop's completion-queue thread
 * (base/pump.h), whose queue the server is registered with. A call is freed
 * when its last batch is back. */
#include "pool/extpool.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/handoff.h"
#include "base/pb.h"
#include "base/pump.h"

#define METHOD_PREFIX "/org.apache.beam.model.fn_execution.v1.BeamFnExternalWorkerPool/"

typedef Org__Apache__Beam__Model__FnExecution__V1__StartWorkerRequest pb_StartWorkerRequest;
typedef Org__Apache__Beam__Model__FnExecution__V1__StartWorkerResponse pb_StartWorkerResponse;
typedef Org__Apache__Beam__Model__FnExecution__V1__StopWorkerRequest pb_StopWorkerRequest;
typedef Org__Apache__Beam__Model__FnExecution__V1__StopWorkerResponse pb_StopWorkerResponse;

typedef struct srv_call {
    fnw_handoff_item tag;
    fnw_extpool *x;
    int stage; /* 0 requested, 1 reading, 2 answering */
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
    grpc_byte_buffer *recv, *send;
    grpc_slice status_details;
    int cancelled;
} srv_call;

struct fnw_extpool {
    struct ev_loop *loop;
    fnw_children *children;
    fnw_handoff *handoff; /* the loop's, held while the server lives */
    fnw_pump *pump;       /* the loop's */
    grpc_server *server;
    fnw_handoff_item shutdown_tag;
    int live_calls, shut_down, draining, stopping, started;
};

static void request_next(fnw_extpool *x);

static void call_free(srv_call *c)
{
    if (c->call)
        grpc_call_unref(c->call);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->md);
    if (c->recv)
        grpc_byte_buffer_destroy(c->recv);
    if (c->send)
        grpc_byte_buffer_destroy(c->send);
    c->x->live_calls--;
    free(c);
}

/* The request's bytes, or an empty slice. */
static grpc_slice read_message(srv_call *c)
{
    grpc_byte_buffer_reader r;
    if (!c->recv || !grpc_byte_buffer_reader_init(&r, c->recv))
        return grpc_empty_slice();
    grpc_slice s = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    return s;
}

static void start_worker(fnw_extpool *x, const uint8_t *data, size_t len, char *error, size_t n)
{
    fnw_error err = { { 0 } };
    pb_StartWorkerRequest *req =
        org__apache__beam__model__fn_execution__v1__start_worker_request__unpack(NULL, len, data);
    if (!req) {
        snprintf(error, n, "cannot parse the StartWorkerRequest");
        return;
    }
    const char *ep = req->provision_endpoint ? req->provision_endpoint->url : NULL;
    if (x->draining)
        snprintf(error, n, "the fnworker pool is shutting down");
    else if (!req->worker_id || !*req->worker_id)
        snprintf(error, n, "StartWorkerRequest without worker_id");
    else if (!ep || !*ep)
        snprintf(error, n, "StartWorkerRequest for worker '%s' without provision_endpoint", req->worker_id);
    else if (!fnw_children_start(x->children, req->worker_id, ep, NULL, 0,
                                 &(fnw_child_events){ NULL, NULL, NULL }, FNW_CHILD_BY_ID, &err))
        snprintf(error, n, "%s", err.msg);
    else
        fprintf(stderr, "fnworker pool: started worker %s for %s (StartWorker)\n", req->worker_id, ep);
    org__apache__beam__model__fn_execution__v1__start_worker_request__free_unpacked(req, NULL);
}

static void stop_worker(fnw_extpool *x, const uint8_t *data, size_t len, char *error, size_t n)
{
    pb_StopWorkerRequest *req = org__apache__beam__model__fn_execution__v1__stop_worker_request__unpack(NULL,
                                                                                                        len,
                                                                                                        data);
    if (!req) {
        snprintf(error, n, "cannot parse the StopWorkerRequest");
        return;
    }
    fnw_child *c = req->worker_id ? fnw_children_find(x->children, req->worker_id) : NULL;
    if (!c)
        snprintf(error, n, "no worker '%s' is running", req->worker_id ? req->worker_id : "");
    else
        fnw_children_stop(x->children, c);
    org__apache__beam__model__fn_execution__v1__stop_worker_request__free_unpacked(req, NULL);
}

/* Both responses are a single `string error = 1`. */
static grpc_byte_buffer *pack_response(const char *error)
{
    pb_StartWorkerResponse resp = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__START_WORKER_RESPONSE__INIT;
    resp.error = (char *)error;
    size_t len = org__apache__beam__model__fn_execution__v1__start_worker_response__get_packed_size(&resp);
    grpc_slice s = grpc_slice_malloc(len);
    org__apache__beam__model__fn_execution__v1__start_worker_response__pack(&resp, GRPC_SLICE_START_PTR(s));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    return bb;
}

static int method_is(const srv_call *c, const char *name)
{
    size_t pl = strlen(METHOD_PREFIX), nl = strlen(name);
    grpc_slice m = c->details.method;
    return GRPC_SLICE_LENGTH(m) == pl + nl && memcmp(GRPC_SLICE_START_PTR(m), METHOD_PREFIX, pl) == 0 &&
           memcmp(GRPC_SLICE_START_PTR(m) + pl, name, nl) == 0;
}

static void answer(srv_call *c)
{
    char error[FNW_ERROR_MAX] = "";
    grpc_status_code status = GRPC_STATUS_OK;
    grpc_slice msg = read_message(c);
    if (method_is(c, "StartWorker"))
        start_worker(c->x, GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), error, sizeof error);
    else if (method_is(c, "StopWorker"))
        stop_worker(c->x, GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), error, sizeof error);
    else
        status = GRPC_STATUS_UNIMPLEMENTED;
    grpc_slice_unref(msg);
    if (error[0])
        fprintf(stderr, "fnworker pool: %s\n", error);
    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    if (status == GRPC_STATUS_OK) {
        c->send = pack_response(error);
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->send;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n++].data.send_status_from_server.status = status;
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
    c->stage = 2;
    if (grpc_call_start_batch(c->call, ops, n, &c->tag, NULL) != GRPC_CALL_OK)
        call_free(c);
}

static void call_done(fnw_handoff_item *tag, int ok)
{
    srv_call *c = (srv_call *)tag;
    fnw_extpool *x = c->x;
    if (c->stage == 0) {
        if (!ok) { /* the server is shutting down */
            call_free(c);
            return;
        }
        if (!x->stopping)
            request_next(x);
        grpc_op op;
        memset(&op, 0, sizeof op);
        op.op = GRPC_OP_RECV_MESSAGE;
        op.data.recv_message.recv_message = &c->recv;
        c->stage = 1;
        if (grpc_call_start_batch(c->call, &op, 1, &c->tag, NULL) != GRPC_CALL_OK)
            call_free(c);
        return;
    }
    if (c->stage == 1 && ok) {
        answer(c);
        return;
    }
    call_free(c);
}

static void request_next(fnw_extpool *x)
{
    srv_call *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->tag.done = call_done;
    c->x = x;
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->md);
    grpc_completion_queue *cq = fnw_pump_cq(x->pump);
    x->live_calls++;
    if (grpc_server_request_call(x->server, &c->call, &c->details, &c->md, cq, cq, &c->tag) != GRPC_CALL_OK)
        call_free(c);
}

static void shutdown_done(fnw_handoff_item *tag, int ok)
{
    fnw_extpool *x = (fnw_extpool *)((char *)tag - offsetof(fnw_extpool, shutdown_tag));
    x->shut_down = 1;
}

fnw_extpool *fnw_extpool_new(struct ev_loop *loop, fnw_children *children, const char *addr, char *bound,
                             size_t bound_len, fnw_error *err)
{
    fnw_extpool *x = calloc(1, sizeof *x);
    if (!x) {
        fnw_error_set(err, "out of memory");
        return NULL;
    }
    grpc_init();
    x->loop = loop;
    x->children = children;
    x->shutdown_tag.done = shutdown_done;
    x->server = grpc_server_create(NULL, NULL);
    if (!(x->handoff = fnw_handoff_of(loop)) || !(x->pump = fnw_pump_of(loop))) {
        fnw_error_set(err, "cannot start the completion queue thread");
        fnw_extpool_free(x);
        return NULL;
    }
    fnw_handoff_hold(x->handoff);
    grpc_server_register_completion_queue(x->server, fnw_pump_cq(x->pump), NULL);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    int port = grpc_server_add_http2_port(x->server, addr, creds);
    grpc_server_credentials_release(creds);
    if (port <= 0) {
        fnw_error_set(err, "cannot listen on %s", addr);
        fnw_extpool_free(x);
        return NULL;
    }
    grpc_server_start(x->server);
    x->started = 1;
    char host[256], p[16];
    snprintf(bound, bound_len, "%s", addr);
    const char *colon = strrchr(addr, ':');
    if (colon && (size_t)(colon - addr) < sizeof host) {
        memcpy(host, addr, (size_t)(colon - addr));
        host[colon - addr] = '\0';
        snprintf(p, sizeof p, "%d", port);
        snprintf(bound, bound_len, "%s:%s", host, p);
    }
    request_next(x);
    return x;
}

void fnw_extpool_drain(fnw_extpool *x)
{
    x->draining = 1;
}

void fnw_extpool_free(fnw_extpool *x)
{
    if (!x)
        return;
    x->stopping = 1;
    if (x->server) {
        if (x->started) {
            grpc_server_shutdown_and_notify(x->server, fnw_pump_cq(x->pump), &x->shutdown_tag);
            grpc_server_cancel_all_calls(x->server);
            while (!x->shut_down || x->live_calls > 0)
                ev_run(x->loop, EVRUN_ONCE);
        }
        grpc_server_destroy(x->server);
    }
    if (x->handoff && x->pump)
        fnw_handoff_release(x->handoff);
    grpc_shutdown(); /* the loop's pump keeps its own reference until the loop ends */
    free(x);
}
