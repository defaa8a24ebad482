/* worker/relay_server.c — the child's runner endpoints (see relay_server.h). */
#include "worker/relay_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pb.h"

struct fnw_relay_server {
    fnw_server *srv;
    fnw_logger *log;
    const char *worker_id;
    fnw_relay_server_events ev;
};

static void refuse(fnw_server_call *c, grpc_status_code code, const char *why)
{
    fnw_server_answer(c, code, why, grpc_empty_slice());
}

static void answer_descriptor(fnw_relay_server *s, fnw_server_call *c, grpc_slice req)
{
    pb_GetDescriptorRequest *r = PB(get_process_bundle_descriptor_request__unpack)(NULL,
                                                                                   GRPC_SLICE_LENGTH(req),
                                                                                   GRPC_SLICE_START_PTR(req));
    if (!r) {
        refuse(c, GRPC_STATUS_INVALID_ARGUMENT, "not a GetProcessBundleDescriptorRequest");
        return;
    }
    char why[512] = "";
    grpc_slice resp = grpc_empty_slice();
    grpc_status_code code = s->ev.descriptor(s->ev.user, r->process_bundle_descriptor_id, &resp, why,
                                             sizeof why);
    PB(get_process_bundle_descriptor_request__free_unpacked)(r, NULL);
    fnw_server_answer(c, code, why, resp);
}

static void unary_read(void *user, fnw_server_call *c, int ok, grpc_slice req)
{
    fnw_relay_server *s = user;
    if (!ok)
        return;
    if (!strcmp(fnw_server_method(c), FNW_METHOD_GET_DESCRIPTOR)) {
        answer_descriptor(s, c, req);
        return;
    }
    char why[512] = "";
    grpc_slice resp = grpc_empty_slice();
    grpc_status_code code = s->ev.provision(s->ev.user, &resp, why, sizeof why);
    fnw_server_answer(c, code, why, resp);
}

static void on_call(void *user, fnw_server_call *c)
{
    fnw_relay_server *s = user;
    const char *m = fnw_server_method(c);
    if (!fnw_server_has_header(c, "worker_id", s->worker_id)) {
        fnw_warn(s->log, "relay: refused a %s call without the Python worker's worker_id", m);
        refuse(c, GRPC_STATUS_PERMISSION_DENIED, "this endpoint serves fnworker's own Python worker only");
        return;
    }
    if (!strcmp(m, FNW_METHOD_PROVISION) || !strcmp(m, FNW_METHOD_GET_DESCRIPTOR))
        fnw_server_read(c, unary_read, s);
    else if (!strcmp(m, FNW_METHOD_CONTROL))
        s->ev.on_stream(s->ev.user, FNW_RELAY_CONTROL, c);
    else if (!strcmp(m, FNW_METHOD_DATA))
        s->ev.on_stream(s->ev.user, FNW_RELAY_DATA, c);
    else if (!strcmp(m, FNW_METHOD_LOGGING))
        s->ev.on_stream(s->ev.user, FNW_RELAY_LOGGING, c);
    else
        refuse(c, GRPC_STATUS_UNIMPLEMENTED, "fnworker's relay does not serve this method");
}

fnw_relay_server *fnw_relay_server_new(struct ev_loop *loop, fnw_logger *log, const char *worker_id,
                                       const fnw_relay_server_events *ev, char *url, size_t cap,
                                       fnw_error *err)
{
    fnw_relay_server *s = calloc(1, sizeof *s);
    if (!s) {
        fnw_error_set(err, "out of memory");
        return NULL;
    }
    s->log = log;
    s->worker_id = worker_id;
    s->ev = *ev;
    int port = 0;
    fnw_server_events se = { s, on_call };
    char why[256];
    s->srv = fnw_server_new(loop, "127.0.0.1:0", FNW_RELAY_MAX_MESSAGE, &se, &port, why, sizeof why);
    if (!s->srv) {
        fnw_error_set(err, "%s", why);
        free(s);
        return NULL;
    }
    snprintf(url, cap, "127.0.0.1:%d", port);
    return s;
}

void fnw_relay_server_free(fnw_relay_server *s)
{
    if (!s)
        return;
    fnw_server_free(s->srv);
    free(s);
}
