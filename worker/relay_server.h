/* worker/relay_server.h — the loopback gRPC server PyFlink's Python worker
 * (fnworker's child, worker/relay_child.h) takes for its runner: Provision,
 * Control (with GetProcessBundleDescriptor), Data and Logging, the services
 * Beam's SDK harness calls. State is not served: the child talks to
 * Flink's State service directly (worker/relay.h says why).
 *
 * Every call must carry the child's worker_id metadata (Beam's SDK sends
 * it on each of these calls); any other call is refused with
 * PERMISSION_DENIED, so another local process cannot take the child's
 * place. The server answers the two unary calls through its owner's
 * callbacks and hands the three streams to the owner, which takes each
 * with fnw_server_take_stream (base/server.h). Loop thread only.
 */
#ifndef FNW_RELAY_SERVER_H
#define FNW_RELAY_SERVER_H

#include <ev.h>

#include "base/server.h"
#include "codecs/error.h"
#include "worker/log.h"

typedef struct fnw_relay_server fnw_relay_server;

typedef enum fnw_relay_stream_kind {
    FNW_RELAY_CONTROL,
    FNW_RELAY_DATA,
    FNW_RELAY_LOGGING,
} fnw_relay_stream_kind;

typedef struct fnw_relay_server_events {
    void *user;
    /* GetProvisionInfo: the packed GetProvisionInfoResponse (taken), or a
     * status other than OK and why. */
    grpc_status_code (*provision)(void *user, grpc_slice *resp, char *why, size_t cap);
    /* GetProcessBundleDescriptor(id): the packed descriptor (taken), or a
     * status and why. */
    grpc_status_code (*descriptor)(void *user, const char *id, grpc_slice *resp, char *why, size_t cap);
    /* A Control, Data or Logging stream call: take it or refuse it. */
    void (*on_stream)(void *user, fnw_relay_stream_kind kind, fnw_server_call *c);
} fnw_relay_server_events;

/* The largest message the child may send: the Control limit
 * (FNW_CONTROL_MAX_MESSAGE), which a Data message never comes near. */
#define FNW_RELAY_MAX_MESSAGE ((size_t)64 << 20)

/* Listens on 127.0.0.1 (a free port); url gets "127.0.0.1:<port>".
 * worker_id and ev are borrowed for the server's life. */
fnw_relay_server *fnw_relay_server_new(struct ev_loop *loop, fnw_logger *log, const char *worker_id,
                                       const fnw_relay_server_events *ev, char *url, size_t cap,
                                       fnw_error *err);
void fnw_relay_server_free(fnw_relay_server *s);

#endif
