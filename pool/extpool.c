/* pool/extpool.c — the BeamFnExternalWorkerPool server (see extpool.h).
 *
 * The gRPC server is base/server.c's, whose calls complete on the loop:
 * each StartWorker/StopWorker call reads its one request, is answered on
 * the loop thread and freed by the server. */
#include "pool/extpool.h"

#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pb.h"
#include "base/server.h"

#define METHOD_PREFIX "/org.apache.beam.model.fn_execution.v1.BeamFnExternalWorkerPool/"
#define EXTPOOL_MAX_MESSAGE (64 * 1024) /* a StartWorkerRequest is a few hundred bytes */

typedef Org__Apache__Beam__Model__FnExecution__V1__StartWorkerRequest pb_StartWorkerRequest;
typedef Org__Apache__Beam__Model__FnExecution__V1__StartWorkerResponse pb_StartWorkerResponse;
typedef Org__Apache__Beam__Model__FnExecution__V1__StopWorkerRequest pb_StopWorkerRequest;
typedef Org__Apache__Beam__Model__FnExecution__V1__StopWorkerResponse pb_StopWorkerResponse;

struct fnw_extpool {
    fnw_children *children;
    fnw_server *server;
    int draining;
};

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
static grpc_slice pack_response(const char *error)
{
    pb_StartWorkerResponse resp = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__START_WORKER_RESPONSE__INIT;
    resp.error = (char *)error;
    size_t len = org__apache__beam__model__fn_execution__v1__start_worker_response__get_packed_size(&resp);
    grpc_slice s = grpc_slice_malloc(len);
    org__apache__beam__model__fn_execution__v1__start_worker_response__pack(&resp, GRPC_SLICE_START_PTR(s));
    return s;
}

static int method_is(const char *method, const char *name)
{
    size_t pl = strlen(METHOD_PREFIX);
    return strncmp(method, METHOD_PREFIX, pl) == 0 && strcmp(method + pl, name) == 0;
}

static void answer(void *user, fnw_server_call *c, int ok, grpc_slice msg)
{
    fnw_extpool *x = user;
    if (!ok)
        return;
    char error[FNW_ERROR_MAX] = "";
    const char *m = fnw_server_method(c);
    if (method_is(m, "StartWorker"))
        start_worker(x, GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), error, sizeof error);
    else
        stop_worker(x, GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), error, sizeof error);
    if (error[0])
        fprintf(stderr, "fnworker pool: %s\n", error);
    fnw_server_answer(c, GRPC_STATUS_OK, NULL, pack_response(error));
}

static void on_call(void *user, fnw_server_call *c)
{
    const char *m = fnw_server_method(c);
    if (method_is(m, "StartWorker") || method_is(m, "StopWorker"))
        fnw_server_read(c, answer, user);
    else
        fnw_server_answer(c, GRPC_STATUS_UNIMPLEMENTED, "", grpc_empty_slice());
}

fnw_extpool *fnw_extpool_new(struct ev_loop *loop, fnw_children *children, const char *addr, char *bound,
                             size_t bound_len, fnw_error *err)
{
    fnw_extpool *x = calloc(1, sizeof *x);
    if (!x) {
        fnw_error_set(err, "out of memory");
        return NULL;
    }
    x->children = children;
    grpc_init(); /* the server's; the loop's pump keeps its own reference */
    fnw_server_events ev = { x, on_call };
    int port = 0;
    char why[256];
    x->server = fnw_server_new(loop, addr, EXTPOOL_MAX_MESSAGE, &ev, &port, why, sizeof why);
    if (!x->server) {
        fnw_error_set(err, "%s", why);
        grpc_shutdown();
        free(x);
        return NULL;
    }
    snprintf(bound, bound_len, "%s", addr);
    const char *colon = strrchr(addr, ':');
    if (colon)
        snprintf(bound, bound_len, "%.*s:%d", (int)(colon - addr), addr, port);
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
    fnw_server_free(x->server);
    grpc_shutdown();
    free(x);
}
