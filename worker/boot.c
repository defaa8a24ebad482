/* worker/boot.c — provisioning and connecting the planes (see boot.h). */
#include "worker/boot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/pb_nesting.h"
#include "worker/log_options.h"
#include "base/pb.h"

#define BACKOFF_FIRST_S 0.1
#define BACKOFF_GROW_BELOW_S 2.0

void fnw_boot_backoff_init(fnw_boot_backoff *bo, double now, double timeout_s)
{
    bo->deadline = now + timeout_s;
    bo->delay = BACKOFF_FIRST_S;
}

int fnw_boot_backoff_next(fnw_boot_backoff *bo, double now, double *delay_s)
{
    if (now >= bo->deadline)
        return -1;
    *delay_s = bo->delay;
    if (bo->delay < BACKOFF_GROW_BELOW_S)
        bo->delay *= 2;
    return 0;
}

double fnw_boot_backoff_left(const fnw_boot_backoff *bo, double now, double floor)
{
    double left = bo->deadline - now;
    return left > floor ? left : floor;
}

static void boot_fail(fnw_boot *b)
{
    if (!b->stopped)
        b->ev->on_failed(b->user);
}

/* ---- why a connection failed ----------------------------------------------------- */

static int has(const char *details, const char *what)
{
    return details && strcasestr(details, what) != NULL;
}

int fnw_boot_failure_reason(grpc_status_code code, const char *details, char *buf, size_t n)
{
    static const struct {
        const char *needle, *reason;
    } known[] = {
        { "connection refused", "connection refused" },
        { "dns resolution failed", "the host name does not resolve" },
        { "name or service not known", "the host name does not resolve" },
        { "domain name not found", "the host name does not resolve" },
        { "no route to host", "no route to host" },
        { "network is unreachable", "the network is unreachable" },
        { "connection reset", "the connection was reset" },
        { "connection timed out", "the connection attempt timed out" },
        { "socket closed", "the server closed the connection" },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (has(details, known[i].needle)) {
            snprintf(buf, n, "%s", known[i].reason);
            return 1;
        }
    if (code == GRPC_STATUS_DEADLINE_EXCEEDED) {
        snprintf(buf, n, "no answer (the connection or the call timed out)");
        return 1;
    }
    if (code == GRPC_STATUS_UNAVAILABLE) {
        snprintf(buf, n, "unavailable: %s", details && *details ? details : "no reason given");
        return 1;
    }
    snprintf(buf, n, "status %d: %s", (int)code, details && *details ? details : "no details");
    return 0;
}

/* ---- connecting ------------------------------------------------------------------ */

static void control_ready(void *user, int ready)
{
    fnw_boot *b = user;
    b->control_wait = NULL;
    if (b->stopped)
        return;
    if (!ready) {
        fnw_err(b->log,
                "cannot connect to %s (the control endpoint): %s; gave up after %.0f s "
                "(--connect-timeout); exiting",
                b->control_url, fnw_rpc_channel_state(b->control_ch), b->flags->connect_timeout_s);
        boot_fail(b);
        return;
    }
    b->ev->on_control_ready(b->user, b->control_ch);
}

static void connect_planes(fnw_boot *b)
{
    if (b->logging_url && *b->logging_url) {
        b->logging_ch = fnw_rpc_channel(b->logging_url);
        fnw_log_start(b->log, b->rpc, b->logging_ch);
    }
    b->control_ch = fnw_rpc_channel(b->control_url);
    double left = fnw_boot_backoff_left(&b->backoff, ev_now(b->loop), 1);
    b->control_wait = fnw_rpc_wait_ready(b->rpc, b->control_ch, left, control_ready, b);
}

/* ---- provisioning ---------------------------------------------------------------- */

static void request_provision(fnw_boot *b);

static void provision_retry_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    request_provision(t->data);
}

int fnw_boot_read_provision(fnw_boot *b, const uint8_t *p, size_t n)
{
    fnw_error err; /* pipeline_options is a Struct, which nests without a limit */
    if (fnw_pb_nesting_check(&PB(get_provision_info_response__descriptor), p, n, &err) < 0) {
        fnw_err(b->log, "GetProvisionInfo: %s", err.msg);
        return -1;
    }
    pb_GetProvisionInfoResponse *r = PB(get_provision_info_response__unpack)(NULL, n, p);
    if (!r)
        return -1;
    free(b->provision);
    b->provision_len = 0;
    if ((b->provision = malloc(n ? n : 1)) != NULL) {
        memcpy(b->provision, p, n);
        b->provision_len = n;
    }
    pb_ProvisionInfo *info = r->info;
    fnw_log_request lr;
    fnw_log_options_read(info ? info->pipeline_options : NULL, &lr);
    fnw_log_options_apply(b->log, &lr, b->flags->log_level);
    if (info && info->control_endpoint && *info->control_endpoint->url && !b->control_url)
        b->control_url = strdup(info->control_endpoint->url);
    if (info && info->logging_endpoint && *info->logging_endpoint->url && !b->logging_url)
        b->logging_url = strdup(info->logging_endpoint->url);
    PB(get_provision_info_response__free_unpacked)(r, NULL);
    return 0;
}

static void provision_answered(fnw_boot *b, grpc_slice resp)
{
    if (fnw_boot_read_provision(b, GRPC_SLICE_START_PTR(resp), GRPC_SLICE_LENGTH(resp)) < 0) {
        fnw_err(b->log,
                "GetProvisionInfo from %s returned bytes that are not a "
                "GetProvisionInfoResponse; exiting",
                b->flags->provision_endpoint);
        boot_fail(b);
        return;
    }
    if (!b->control_url) {
        fnw_err(b->log, "the provision info from %s names no control endpoint; exiting",
                b->flags->provision_endpoint);
        boot_fail(b);
        return;
    }
    connect_planes(b);
}

static void provision_done(void *user, grpc_status_code code, const char *details, grpc_slice resp)
{
    fnw_boot *b = user;
    if (b->stopped)
        return;
    if (code == GRPC_STATUS_OK) {
        provision_answered(b, resp);
        return;
    }
    double delay;
    if (fnw_boot_backoff_next(&b->backoff, ev_now(b->loop), &delay) < 0) {
        char why[256];
        if (fnw_boot_failure_reason(code, details, why, sizeof why))
            fnw_err(b->log,
                    "cannot connect to %s (the provision endpoint): %s; gave up after %.0f s "
                    "(--connect-timeout; gRPC status %d: %s); exiting",
                    b->flags->provision_endpoint, why, b->flags->connect_timeout_s, (int)code, details);
        else
            fnw_err(b->log,
                    "GetProvisionInfo from %s failed for %.0f s (--connect-timeout), last with %s; "
                    "exiting",
                    b->flags->provision_endpoint, b->flags->connect_timeout_s, why);
        boot_fail(b);
        return;
    }
    fnw_debug(b->log, "GetProvisionInfo from %s failed (status %d: %s); retrying in %.1f s",
              b->flags->provision_endpoint, (int)code, details, delay);
    ev_timer_set(&b->retry_timer, delay, 0);
    ev_timer_start(b->loop, &b->retry_timer);
}

static void request_provision(fnw_boot *b)
{
    pb_GetProvisionInfoRequest req =
        ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__GET_PROVISION_INFO_REQUEST__INIT;
    size_t n = PB(get_provision_info_request__get_packed_size)(&req);
    grpc_slice s = grpc_slice_malloc(n);
    PB(get_provision_info_request__pack)(&req, GRPC_SLICE_START_PTR(s));
    double left = fnw_boot_backoff_left(&b->backoff, ev_now(b->loop), 0.2);
    if (b->transport->provision(b->transport_ctx, b->flags->provision_endpoint, s, left, provision_done, b) <
        0) {
        fnw_err(b->log, "could not start GetProvisionInfo; exiting");
        boot_fail(b);
    }
}

/* The gRPC transport: ctx is the boot; the channel is made on first use. */
static int grpc_provision(void *ctx, const char *endpoint, grpc_slice request, double timeout_s,
                          fnw_unary_cb cb, void *user)
{
    fnw_boot *b = ctx;
    if (!b->provision_ch)
        b->provision_ch = fnw_rpc_channel(endpoint);
    /* Not wait-for-ready: an attempt on a channel that cannot connect fails
     * at once with gRPC's reason (connection refused, unknown host), which
     * the final message names; the backoff above spaces the attempts. */
    return fnw_rpc_unary(b->rpc, b->provision_ch, FNW_METHOD_PROVISION, request, timeout_s, 0, cb, user, NULL);
}

static const fnw_boot_transport grpc_transport = { grpc_provision };

/* ---- lifecycle ------------------------------------------------------------------- */

void fnw_boot_init(fnw_boot *b, struct ev_loop *loop, const fnw_flags *flags, fnw_logger *log, fnw_rpc *rpc,
                   const fnw_boot_events *ev, void *user)
{
    memset(b, 0, sizeof *b);
    b->loop = loop;
    b->flags = flags;
    b->log = log;
    b->rpc = rpc;
    b->ev = ev;
    b->user = user;
    b->transport = &grpc_transport;
    b->transport_ctx = b;
    ev_timer_init(&b->retry_timer, provision_retry_cb, 0.2, 0);
    b->retry_timer.data = b;
}

void fnw_boot_use_transport(fnw_boot *b, const fnw_boot_transport *t, void *ctx)
{
    b->transport = t;
    b->transport_ctx = ctx;
}

void fnw_boot_start(fnw_boot *b)
{
    const fnw_flags *f = b->flags;
    for (size_t i = 0; i < f->n_unknown; i++)
        fnw_warn(b->log, "ignoring unknown flag %s", f->unknown[i]);
    fnw_boot_backoff_init(&b->backoff, ev_now(b->loop), f->connect_timeout_s);
    if (f->control_endpoint)
        b->control_url = strdup(f->control_endpoint);
    if (f->logging_endpoint)
        b->logging_url = strdup(f->logging_endpoint);
    if (f->provision_endpoint) {
        request_provision(b);
    } else {
        connect_planes(b);
    }
}

void fnw_boot_stop(fnw_boot *b)
{
    b->stopped = 1;
    fnw_rpc_ready_cancel(b->control_wait);
    b->control_wait = NULL;
    ev_timer_stop(b->loop, &b->retry_timer);
}

void fnw_boot_free(fnw_boot *b)
{
    if (b->provision_ch)
        grpc_channel_destroy(b->provision_ch);
    if (b->control_ch)
        grpc_channel_destroy(b->control_ch);
    if (b->logging_ch)
        grpc_channel_destroy(b->logging_ch);
    b->provision_ch = b->control_ch = b->logging_ch = NULL;
    free(b->control_url);
    free(b->logging_url);
    b->control_url = b->logging_url = NULL;
    free(b->provision);
    b->provision = NULL;
    b->provision_len = 0;
}

const uint8_t *fnw_boot_provision(const fnw_boot *b, size_t *n)
{
    *n = b->provision_len;
    return b->provision;
}

const char *fnw_boot_control_url(const fnw_boot *b)
{
    return b->control_url;
}

const char *fnw_boot_logging_url(const fnw_boot *b)
{
    return b->logging_url;
}
