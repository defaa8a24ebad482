/* worker/boot.h — getting the worker connected, as Flink's
 * ProcessEnvironment expects.
 *
 * With --provision_endpoint: GetProvisionInfo (with the worker_id header)
 * is retried with a growing pause (fnw_boot_backoff) until it answers or
 * --connect-timeout passes (each attempt fails at once when the channel
 * cannot connect, and the last failure's reason is logged, e.g. "cannot
 * connect to localhost:5: connection refused"); its answer names the control and logging
 * endpoints (flags given on the command line win) and may set the log
 * level through pipeline options. Without it, the endpoints come from the
 * flags. Then the Logging stream starts and the control channel is waited
 * for, bounded by what is left of --connect-timeout (at least a second).
 *
 * Boot tells its owner how it ended through fnw_boot_events: the control
 * channel is ready, or boot failed (the reason is logged; the worker exits
 * with code 1). Boot owns the channels it creates until fnw_boot_free.
 *
 * The provisioning call goes through a fnw_boot_transport: gRPC unless
 * fnw_boot_use_transport gave another (tests drive the retries with one).
 *
 * Loop thread only.
 */
#ifndef FNW_BOOT_H
#define FNW_BOOT_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/flags.h"
#include "worker/log.h"
#include "base/rpc.h"

/* The provisioning retry schedule: 0.1 s, then each pause doubles while it
 * is under 2 s (0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 3.2, ...), until the
 * deadline. Pure: the caller supplies the time. */
typedef struct fnw_boot_backoff {
    double deadline;
    double delay;
} fnw_boot_backoff;

void fnw_boot_backoff_init(fnw_boot_backoff *bo, double now, double timeout_s);
/* An attempt failed at now. -1: the deadline has passed, give up; 0:
 * *delay_s is the pause before the next attempt. */
int fnw_boot_backoff_next(fnw_boot_backoff *bo, double now, double *delay_s);
/* Seconds left before the deadline, never less than floor. */
double fnw_boot_backoff_left(const fnw_boot_backoff *bo, double now, double floor);

typedef struct fnw_boot_transport {
    /* One GetProvisionInfo call to endpoint; takes request. 0: cb runs
     * exactly once, later; -1: the call could not start (no callback). */
    int (*provision)(void *ctx, const char *endpoint, grpc_slice request, double timeout_s, fnw_unary_cb cb,
                     void *user);
} fnw_boot_transport;

typedef struct fnw_boot_events {
    /* The control channel is READY; ch stays boot's. */
    void (*on_control_ready)(void *user, grpc_channel *ch);
    /* Boot cannot complete; why was logged. */
    void (*on_failed)(void *user);
} fnw_boot_events;

/* Embedded by its owner; the fields are private to boot.c. */
typedef struct fnw_boot {
    struct ev_loop *loop;
    const fnw_flags *flags;
    fnw_logger *log;
    fnw_rpc *rpc;
    const fnw_boot_events *ev;
    void *user;
    const fnw_boot_transport *transport;
    void *transport_ctx;
    grpc_channel *provision_ch, *control_ch, *logging_ch;
    fnw_ready_wait *control_wait;
    char *control_url, *logging_url;
    uint8_t *provision; /* the GetProvisionInfoResponse as received (the relay serves it on) */
    size_t provision_len;
    fnw_boot_backoff backoff;
    ev_timer retry_timer;
    int stopped;
} fnw_boot;

/* Everything given is borrowed for boot's life. Starts nothing. */
void fnw_boot_init(fnw_boot *b, struct ev_loop *loop, const fnw_flags *flags, fnw_logger *log, fnw_rpc *rpc,
                   const fnw_boot_events *ev, void *user);
/* Provisions through t (borrowed) instead of gRPC; before fnw_boot_start. */
void fnw_boot_use_transport(fnw_boot *b, const fnw_boot_transport *t, void *ctx);
/* Warns about unknown flags and starts provisioning or connecting. */
void fnw_boot_start(fnw_boot *b);
/* No more events: cancels the retry timer and the control wait (the
 * provision call is cancelled with fnw_rpc_cancel_unary). */
void fnw_boot_stop(fnw_boot *b);
/* Destroys the channels; every call on them must be over. */
void fnw_boot_free(fnw_boot *b);

/* Takes the endpoints and log options from a packed
 * GetProvisionInfoResponse (endpoints the flags gave are kept). -1 when
 * the bytes are not one (logged). */
int fnw_boot_read_provision(fnw_boot *b, const uint8_t *p, size_t n);
/* What a failed call says about the connection, in words a user can act
 * on ("connection refused", "the host name does not resolve", "no answer
 * ..."), from gRPC's status and details. 1: it is a connection failure;
 * 0: the server answered with an error (buf has its status and details). */
int fnw_boot_failure_reason(grpc_status_code code, const char *details, char *buf, size_t n);

/* The control endpoint, once known; NULL before. */
const char *fnw_boot_control_url(const fnw_boot *b);
const char *fnw_boot_logging_url(const fnw_boot *b);
/* The GetProvisionInfoResponse the runner gave, as received; *n 0 (and
 * NULL) when the worker was started with endpoints instead. */
const uint8_t *fnw_boot_provision(const fnw_boot *b, size_t *n);

#endif
