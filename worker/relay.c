/* worker/relay.c — bundles relayed to PyFlink's Python worker (see relay.h).
 *
 * The relay keeps one record per instruction it owns: a process_bundle held
 * while its descriptor is fetched, then relayed (sent to the child once its
 * Control stream is up), or an auxiliary request (progress, split,
 * finalize) sent to the child. A record ends when the child answers it or
 * when the child is lost; then the answer, or the failure, goes to Flink.
 */
#include "worker/relay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "codecs/pb_nesting.h"
#include "worker/relay_child.h"
#include "worker/relay_route.h"
#include "worker/relay_server.h"

#define RELAY_QUEUE_MAX ((size_t)64 << 20) /* bytes for the child before its Data stream is up */
#define BOOT_MODULE "pyflink.fn_execution.beam.beam_boot"
#define LOSE_GRACE_S 1.0 /* how long a closed stream waits for the child's exit status */

typedef struct relay_instr {
    struct relay_instr *next;
    char *iid;
    grpc_slice request; /* the packed InstructionRequest, until sent */
    int held;           /* its descriptor is not known yet */
    int sent;           /* the child has it */
    int bundle;         /* a process_bundle (else progress, split or finalize) */
} relay_instr;

typedef struct relay_desc {
    struct relay_desc *next;
    char *id;
    grpc_slice bytes; /* the child's copy */
} relay_desc;

typedef struct queued {
    struct queued *next;
    grpc_slice msg;
} queued;

struct fnw_relay {
    struct ev_loop *loop;
    fnw_logger *log;
    fnw_rpc *rpc;
    fnw_data_mgr *data;
    fnw_relay_config cfg;
    fnw_relay_events ev;
    char id[160]; /* the child's worker_id */
    char url[64]; /* the relay server's address */
    fnw_relay_server *srv;
    fnw_relay_child *child;
    int child_up; /* a child runs, or the launcher was asked for one */
    fnw_stream *ctl, *dat, *logs;
    relay_desc *descs;
    relay_instr *instrs;
    fnw_data_conn *conn; /* Flink's Data connection for relayed instructions */
    queued *q_head, *q_tail;
    size_t q_bytes;
    int holding; /* the data plane was told to stop reading */
    ev_timer connect_timer;
    ev_timer lose_timer; /* a stream of the child ended: its exit status may follow */
    char lose_reason[512];
    int stopping;
};

/* ---- records ------------------------------------------------------------------- */

static relay_instr *instr_find(fnw_relay *r, const char *iid, int bundle)
{
    for (relay_instr *e = r->instrs; e; e = e->next)
        if (e->bundle == bundle && !strcmp(e->iid, iid))
            return e;
    return NULL;
}

static void instr_unlink(fnw_relay *r, relay_instr *e)
{
    relay_instr **pp = &r->instrs;
    while (*pp && *pp != e)
        pp = &(*pp)->next;
    if (*pp)
        *pp = e->next;
    grpc_slice_unref(e->request);
    free(e->iid);
    free(e);
}

static relay_instr *instr_add(fnw_relay *r, const char *iid, grpc_slice request, int bundle)
{
    relay_instr *e = calloc(1, sizeof *e);
    if (e && !(e->iid = strdup(iid))) {
        free(e);
        e = NULL;
    }
    if (!e) {
        grpc_slice_unref(request);
        return NULL;
    }
    e->request = request;
    e->bundle = bundle;
    relay_instr **pp = &r->instrs; /* arrival order: the child gets them in the order Flink sent them */
    while (*pp)
        pp = &(*pp)->next;
    *pp = e;
    return e;
}

static grpc_slice pack_request(const pb_InstructionRequest *req)
{
    size_t n = PB(instruction_request__get_packed_size)(req);
    grpc_slice s = grpc_slice_malloc(n);
    PB(instruction_request__pack)(req, GRPC_SLICE_START_PTR(s));
    return s;
}

static int pid_of(const fnw_relay *r)
{
    return r->child ? fnw_relay_child_pid(r->child) : 0;
}

/* ---- failing what the child held ------------------------------------------------ */

/* Every record not held fails with the reason and the child's last words. */
static void fail_all(fnw_relay *r, const char *reason)
{
    char last[8192] = "";
    if (r->child)
        fnw_relay_child_last_output(r->child, last, sizeof last);
    size_t cap = strlen(reason) + strlen(last) + 256;
    char *msg = malloc(cap);
    if (msg)
        snprintf(msg, cap, "%s. Its last output:\n%s", reason, *last ? last : "(none)");
    relay_instr *e = r->instrs;
    while (e) {
        relay_instr *next = e->next;
        if (!e->held) {
            char *iid = strdup(e->iid);
            int bundle = e->bundle;
            instr_unlink(r, e);
            if (iid)
                r->ev.fail(r->ev.user, iid, bundle && msg ? msg : reason);
            free(iid);
        }
        e = next;
    }
    free(msg);
}

static void drop_queue(fnw_relay *r)
{
    while (r->q_head) {
        queued *q = r->q_head;
        r->q_head = q->next;
        grpc_slice_unref(q->msg);
        free(q);
    }
    r->q_tail = NULL;
    r->q_bytes = 0;
}

static void set_holding(fnw_relay *r, int on)
{
    if (r->holding != on) {
        r->holding = on;
        fnw_data_hold(r->data, on);
    }
}

/* The child's streams end; the child itself may still run. */
static void close_streams(fnw_relay *r)
{
    fnw_stream_free(r->ctl);
    fnw_stream_free(r->dat);
    fnw_stream_free(r->logs);
    r->ctl = r->dat = r->logs = NULL;
    drop_queue(r);
    set_holding(r, 0);
    ev_timer_stop(r->loop, &r->connect_timer);
}

/* The child is gone or useless: fail what it held, stop it. */
static void lose_child(fnw_relay *r, const char *reason)
{
    close_streams(r);
    fail_all(r, reason);
    if (r->child_up && r->child)
        fnw_relay_child_stop(r->child);
}

/* ---- the child process ---------------------------------------------------------- */

static void child_exited(void *user, int pid, const char *how)
{
    fnw_relay *r = user;
    char reason[512];
    int connected = r->ctl || ev_is_active(&r->lose_timer); /* its Control stream came up */
    ev_timer_stop(r->loop, &r->lose_timer);
    r->child_up = 0;
    if (r->stopping) {
        close_streams(r);
        return;
    }
    if (connected)
        snprintf(reason, sizeof reason,
                 "PyFlink's Python worker (pid %d) died (%s) while it ran this bundle; fnworker starts a new one "
                 "for the next bundle",
                 pid, how);
    else
        snprintf(reason, sizeof reason,
                 "this job has Python functions that are not fnworker operations, and PyFlink's Python worker "
                 "did not start: '%s -m %s' ended (%s) before it connected. Install PyFlink where fnworker runs, "
                 "or set python.executable to a Python that has it",
                 fnw_relay_child_python(r->child), BOOT_MODULE, how);
    fnw_err(r->log, "relay: PyFlink's Python worker (pid %d) ended (%s)", pid, how);
    lose_child(r, reason);
}

static void connect_timeout_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_relay *r = t->data;
    if (r->ctl)
        return;
    char reason[512];
    snprintf(reason, sizeof reason,
             "PyFlink's Python worker (pid %d, '%s -m %s') did not connect to fnworker within %.0f s "
             "(--connect-timeout)",
             pid_of(r), fnw_relay_child_python(r->child), BOOT_MODULE, r->cfg.connect_timeout_s);
    fnw_err(r->log, "relay: %s", reason);
    lose_child(r, reason);
}

/* A fresh worker id for the next child: "<fnworker id>-py-<32 hex>". A new
 * one per child, so a leftover of an earlier child cannot come back as the
 * new one (the relay server checks it on every call). -1: no randomness. */
static int new_child_id(fnw_relay *r)
{
    unsigned char rnd[16] = { 0 };
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return -1;
    int n = snprintf(r->id, sizeof r->id, "%.100s-py-", r->cfg.worker_id ? r->cfg.worker_id : "fnworker");
    for (size_t i = 0; i < sizeof rnd && n > 0 && (size_t)n + 2 < sizeof r->id; i++)
        n += snprintf(r->id + n, sizeof r->id - (size_t)n, "%02x", rnd[i]);
    return 0;
}

/* 0 when a child runs (or was just started); -1 with err when none can. */
static int ensure_child(fnw_relay *r, fnw_error *err)
{
    if (r->child_up)
        return 0;
    if (!r->child) {
        fnw_relay_child_events ev = { r, child_exited };
        r->child = r->cfg.launcher_fd >= 0
                       ? fnw_relay_child_new_remote(r->loop, r->log, &ev, r->cfg.launcher_fd)
                       : fnw_relay_child_new(r->loop, r->log, &ev);
        if (!r->child)
            return fnw_error_set(err, "out of memory starting PyFlink's Python worker");
    }
    if (new_child_id(r) < 0)
        return fnw_error_set(err, "no randomness for the Python worker's id (getrandom failed)");
    fnw_relay_child_config cfg = { r->cfg.python, r->id, r->url, r->cfg.semi_persist_dir, 0, 0, 0 };
    if (fnw_relay_child_start(r->child, &cfg, err) < 0)
        return -1;
    r->child_up = 1;
    ev_timer_set(&r->connect_timer, r->cfg.connect_timeout_s > 0 ? r->cfg.connect_timeout_s : 60, 0);
    ev_timer_start(r->loop, &r->connect_timer);
    return 0;
}

/* ---- Control ------------------------------------------------------------------ */

static void send_pending(fnw_relay *r)
{
    if (!r->ctl)
        return;
    for (relay_instr *e = r->instrs; e; e = e->next) {
        if (e->held || e->sent)
            continue;
        e->sent = 1;
        fnw_stream_send(r->ctl, e->request, NULL, NULL);
        e->request = grpc_empty_slice();
    }
}

static void ctl_message(void *user, grpc_slice msg)
{
    fnw_relay *r = user;
    char iid[256];
    if (!fnw_pb_nesting_find_top_string(GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), 1, iid,
                                        sizeof iid)) {
        fnw_warn(r->log, "relay: dropped a response of PyFlink's Python worker without an instruction id");
        return;
    }
    relay_instr *e = instr_find(r, iid, 0);
    if (!e)
        e = instr_find(r, iid, 1);
    if (!e || !e->sent) {
        fnw_warn(r->log,
                 "relay: dropped a response of PyFlink's Python worker for instruction %s, which it "
                 "does not hold",
                 iid);
        return;
    }
    int bundle = e->bundle;
    instr_unlink(r, e);
    r->ev.respond(r->ev.user, grpc_slice_ref(msg));
    if (bundle)
        fnw_inbound_finish(r->data, iid);
}

/* A stream of the child ended while fnworker runs. The child is most likely
 * dying: its streams are dropped now, and what it held fails when its exit
 * status arrives (child_exited says how it died), or after LOSE_GRACE_S with
 * this reason (and the child is stopped) if it lives on. */
static void stream_lost(fnw_relay *r, const char *which, grpc_status_code code, const char *details)
{
    if (r->stopping || ev_is_active(&r->lose_timer))
        return;
    snprintf(r->lose_reason, sizeof r->lose_reason,
             "PyFlink's Python worker (pid %d) closed its %s stream (gRPC status %d%s%s) while it ran this bundle",
             pid_of(r), which, (int)code, details && *details ? ": " : "", details ? details : "");
    fnw_warn(r->log, "relay: %s", r->lose_reason);
    close_streams(r);
    ev_timer_set(&r->lose_timer, LOSE_GRACE_S, 0);
    ev_timer_start(r->loop, &r->lose_timer);
}

static void lose_timeout_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_relay *r = t->data;
    lose_child(r, r->lose_reason);
}

static void ctl_closed(void *user, grpc_status_code code, const char *details)
{
    stream_lost(user, "Control", code, details);
}

/* ---- Data ----------------------------------------------------------------------- */

static void dat_message(void *user, grpc_slice msg)
{
    fnw_relay *r = user;
    if (!r->conn) {
        fnw_warn(r->log,
                 "relay: dropped %zu bytes of output from PyFlink's Python worker: no bundle is relayed",
                 (size_t)GRPC_SLICE_LENGTH(msg));
        return;
    }
    fnw_data_send_elements(r->conn, grpc_slice_ref(msg), NULL, NULL);
    if (fnw_data_conn_congested(r->conn))
        fnw_stream_pause_recv(r->dat, 1); /* until Flink's stream drains (tap_writable) */
}

static void dat_writable(void *user)
{
    fnw_relay *r = user;
    if (!r->q_head)
        set_holding(r, 0);
}

static void dat_closed(void *user, grpc_status_code code, const char *details)
{
    stream_lost(user, "Data", code, details);
}

static void to_child(fnw_relay *r, grpc_slice msg)
{
    if (r->dat) {
        fnw_stream_send(r->dat, msg, NULL, NULL);
        if (fnw_stream_congested(r->dat))
            set_holding(r, 1); /* dat_writable resumes */
        return;
    }
    queued *q = malloc(sizeof *q);
    if (!q) {
        fnw_err(r->log, "relay: out of memory: dropped %zu bytes for PyFlink's Python worker",
                (size_t)GRPC_SLICE_LENGTH(msg));
        grpc_slice_unref(msg);
        return;
    }
    q->msg = msg;
    q->next = NULL;
    if (r->q_tail)
        r->q_tail->next = q;
    else
        r->q_head = q;
    r->q_tail = q;
    r->q_bytes += GRPC_SLICE_LENGTH(msg);
    if (r->q_bytes > RELAY_QUEUE_MAX)
        set_holding(r, 1);
}

static void flush_queue(fnw_relay *r)
{
    while (r->q_head && r->dat) {
        queued *q = r->q_head;
        r->q_head = q->next;
        fnw_stream_send(r->dat, q->msg, NULL, NULL);
        free(q);
    }
    r->q_tail = NULL;
    r->q_bytes = 0;
    set_holding(r, r->dat && fnw_stream_congested(r->dat));
}

/* The data plane's tap: Flink's entries for relayed instructions. */
static void tap_elements(void *user, fnw_data_conn *from, grpc_slice elements)
{
    fnw_relay *r = user;
    if (!r->child_up && !r->dat) {
        grpc_slice_unref(elements); /* nothing can take them: their bundles have failed */
        return;
    }
    to_child(r, elements);
}

static void tap_writable(void *user, fnw_data_conn *c)
{
    fnw_relay *r = user;
    if (r->dat && c == r->conn)
        fnw_stream_pause_recv(r->dat, 0);
}

static void tap_failed(void *user, fnw_data_conn *c, const char *msg)
{
    fnw_relay *r = user;
    if (c != r->conn)
        return;
    char reason[768];
    snprintf(reason, sizeof reason, "the Data stream to Flink failed: %s", msg);
    fail_all(r, reason);
}

/* ---- Logging -------------------------------------------------------------------- */

static fnw_level level_of(int severity)
{
    /* LogEntry.Severity: TRACE 1, DEBUG 2, INFO 3, NOTICE 4, WARN 5, ERROR 6, CRITICAL 7 */
    if (severity >= 6)
        return FNW_LOG_ERROR;
    if (severity == 5)
        return FNW_LOG_WARN;
    if (severity >= 3 || severity == 0)
        return FNW_LOG_INFO;
    return FNW_LOG_DEBUG;
}

static void logs_message(void *user, grpc_slice msg)
{
    fnw_relay *r = user;
    pb_LogEntryList *l = (pb_LogEntryList *)protobuf_c_message_unpack(&PB(log_entry__list__descriptor), NULL,
                                                                      GRPC_SLICE_LENGTH(msg),
                                                                      GRPC_SLICE_START_PTR(msg));
    if (!l)
        return;
    for (size_t i = 0; i < l->n_log_entries; i++) {
        const pb_LogEntry *e = l->log_entries[i];
        const char *text = e->message ? e->message : "";
        const char *where = e->log_location ? e->log_location : "";
        if (strrchr(where, '/'))
            where = strrchr(where, '/') + 1; /* sdk_worker.py:197, not the site-packages path */
        const char *trace = e->trace && *e->trace ? e->trace : NULL;
        fnw_log(r->log, level_of(e->severity),
                e->instruction_id && *e->instruction_id ? e->instruction_id : NULL,
                e->transform_id && *e->transform_id ? e->transform_id : NULL, "python[%d] %s: %s%s%s",
                pid_of(r), where, text, trace ? "\n" : "", trace ? trace : "");
        if (r->child && e->severity >= 3) {
            char line[1024];
            snprintf(line, sizeof line, "%s%s%s", text, trace ? " | " : "", trace ? trace : "");
            fnw_relay_child_note_log(r->child, line);
        }
    }
    protobuf_c_message_free_unpacked(&l->base, NULL);
}

static void logs_closed(void *user, grpc_status_code code, const char *details)
{
    fnw_relay *r = user;
    fnw_stream_free(r->logs);
    r->logs = NULL;
}

/* ---- the server ------------------------------------------------------------------ */

static void refuse_stream(fnw_server_call *c, const char *why)
{
    fnw_server_answer(c, GRPC_STATUS_ALREADY_EXISTS, why, grpc_empty_slice());
}

static void on_stream(void *user, fnw_relay_stream_kind kind, fnw_server_call *c)
{
    fnw_relay *r = user;
    if (r->stopping || !r->child_up) {
        fnw_server_answer(c, GRPC_STATUS_UNAVAILABLE, "fnworker is not running a Python worker",
                          grpc_empty_slice());
        return;
    }
    if (kind == FNW_RELAY_CONTROL) {
        if (r->ctl) {
            refuse_stream(c, "the Python worker already has a Control stream");
            return;
        }
        fnw_stream_handler h = { r, ctl_message, NULL, ctl_closed };
        r->ctl = fnw_server_take_stream(c, r->rpc, &h);
        ev_timer_stop(r->loop, &r->connect_timer);
        fnw_info(r->log, "relay: PyFlink's Python worker (pid %d) connected", pid_of(r));
        send_pending(r);
    } else if (kind == FNW_RELAY_DATA) {
        if (r->dat) {
            refuse_stream(c, "the Python worker already has a Data stream");
            return;
        }
        fnw_stream_handler h = { r, dat_message, dat_writable, dat_closed };
        r->dat = fnw_server_take_stream(c, r->rpc, &h);
        flush_queue(r);
    } else {
        if (r->logs) {
            refuse_stream(c, "the Python worker already has a Logging stream");
            return;
        }
        fnw_stream_handler h = { r, logs_message, NULL, logs_closed };
        r->logs = fnw_server_take_stream(c, r->rpc, &h);
    }
}

static grpc_status_code serve_provision(void *user, grpc_slice *resp, char *why, size_t cap)
{
    fnw_relay *r = user;
    size_t n = 0;
    const uint8_t *p = r->ev.provision(r->ev.user, &n);
    pb_GetProvisionInfoResponse *pr = n ? PB(get_provision_info_response__unpack)(NULL, n, p) : NULL;
    pb_GetProvisionInfoResponse empty =
        ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__GET_PROVISION_INFO_RESPONSE__INIT;
    pb_GetProvisionInfoResponse *use = pr ? pr : &empty;
    pb_ProvisionInfo info = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROVISION_INFO__INIT;
    if (!use->info)
        use->info = &info;
    pb_ApiServiceDescriptor *old_ctl = use->info->control_endpoint, *old_log = use->info->logging_endpoint;
    pb_ApiServiceDescriptor ctl = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    pb_ApiServiceDescriptor lg = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    ctl.url = lg.url = r->url;
    use->info->control_endpoint = &ctl;
    use->info->logging_endpoint = &lg;
    size_t len = PB(get_provision_info_response__get_packed_size)(use);
    *resp = grpc_slice_malloc(len);
    PB(get_provision_info_response__pack)(use, GRPC_SLICE_START_PTR(*resp));
    use->info->control_endpoint = old_ctl;
    use->info->logging_endpoint = old_log;
    if (use->info == &info)
        use->info = NULL;
    if (pr)
        PB(get_provision_info_response__free_unpacked)(pr, NULL);
    return GRPC_STATUS_OK;
}

static grpc_status_code serve_descriptor(void *user, const char *id, grpc_slice *resp, char *why, size_t cap)
{
    fnw_relay *r = user;
    for (relay_desc *d = r->descs; d; d = d->next)
        if (!strcmp(d->id, id)) {
            *resp = grpc_slice_ref(d->bytes);
            return GRPC_STATUS_OK;
        }
    snprintf(why, cap, "fnworker relays no descriptor '%s'", id);
    return GRPC_STATUS_NOT_FOUND;
}

static int ensure_server(fnw_relay *r, fnw_error *err)
{
    if (r->srv)
        return 0;
    static const fnw_relay_server_events sev = { NULL, serve_provision, serve_descriptor, on_stream };
    fnw_relay_server_events ev = sev;
    ev.user = r;
    r->srv = fnw_relay_server_new(r->loop, r->log, r->id, &ev, r->url, sizeof r->url, err);
    if (!r->srv)
        return fnw_error_prefix(err, "cannot start the relay for PyFlink's Python worker");
    fnw_info(r->log, "relay: serving PyFlink's Python worker on %s", r->url);
    return 0;
}

/* ---- the interface ----------------------------------------------------------------- */

fnw_relay *fnw_relay_new(struct ev_loop *loop, fnw_logger *log, fnw_rpc *rpc, fnw_data_mgr *data,
                         const fnw_relay_config *cfg, const fnw_relay_events *ev)
{
    fnw_relay *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->loop = loop;
    r->log = log;
    r->rpc = rpc;
    r->data = data;
    r->cfg = *cfg;
    r->ev = *ev;
    if (new_child_id(r) < 0) {
        free(r);
        return NULL;
    }
    ev_timer_init(&r->connect_timer, connect_timeout_cb, 60, 0);
    r->connect_timer.data = r;
    ev_timer_init(&r->lose_timer, lose_timeout_cb, LOSE_GRACE_S, 0);
    r->lose_timer.data = r;
    fnw_data_tap tap = { r, tap_elements, tap_writable, tap_failed };
    fnw_data_set_tap(data, &tap);
    return r;
}

int fnw_relay_add_descriptor(fnw_relay *r, const pb_ProcessBundleDescriptor *pb, fnw_error *err)
{
    if (ensure_server(r, err) < 0)
        return -1;
    relay_desc *d = NULL;
    for (d = r->descs; d; d = d->next)
        if (!strcmp(d->id, pb->id))
            break;
    grpc_slice bytes;
    if (fnw_relay_route_rewrite(pb, r->url, &bytes, err) < 0)
        return -1;
    if (d) {
        grpc_slice_unref(d->bytes);
        d->bytes = bytes;
        return 0;
    }
    d = calloc(1, sizeof *d);
    if (d && !(d->id = strdup(pb->id))) {
        free(d);
        d = NULL;
    }
    if (!d) {
        grpc_slice_unref(bytes);
        return fnw_error_set(err, "out of memory");
    }
    d->bytes = bytes;
    d->next = r->descs;
    r->descs = d;
    return 0;
}

int fnw_relay_hold(fnw_relay *r, const pb_InstructionRequest *req)
{
    if (instr_find(r, req->instruction_id, 1))
        return 0;
    relay_instr *e = instr_add(r, req->instruction_id, pack_request(req), 1);
    if (!e)
        return -1;
    e->held = 1;
    return 0;
}

void fnw_relay_drop(fnw_relay *r, const char *iid)
{
    relay_instr *e = instr_find(r, iid, 1);
    if (e && e->held)
        instr_unlink(r, e);
}

void fnw_relay_start(fnw_relay *r, const char *iid, fnw_data_conn *conn)
{
    relay_instr *e = instr_find(r, iid, 1);
    if (!e || !e->held) {
        r->ev.fail(r->ev.user, iid, "fnworker lost this bundle's request before it could relay it");
        return;
    }
    fnw_error err;
    if (r->stopping) {
        instr_unlink(r, e);
        r->ev.fail(r->ev.user, iid, "fnworker is stopping");
        return;
    }
    if (ensure_child(r, &err) < 0 || fnw_inbound_relay(r->data, iid, &err) < 0) {
        instr_unlink(r, e);
        char msg[FNW_ERROR_MAX + 64];
        snprintf(msg, sizeof msg, "%s", err.msg);
        r->ev.fail(r->ev.user, iid, msg);
        return;
    }
    e->held = 0;
    r->conn = conn;
    send_pending(r);
}

int fnw_relay_forward(fnw_relay *r, const pb_InstructionRequest *req)
{
    const char *target = NULL;
    switch (req->request_case) {
    case REQ_CASE(PROCESS_BUNDLE_PROGRESS):
        target = req->process_bundle_progress->instruction_id;
        break;
    case REQ_CASE(PROCESS_BUNDLE_SPLIT):
        target = req->process_bundle_split->instruction_id;
        break;
    case REQ_CASE(FINALIZE_BUNDLE):
        target = req->finalize_bundle->instruction_id;
        break;
    default:
        return 0;
    }
    relay_instr *b = target ? instr_find(r, target, 1) : NULL;
    if (!b || b->held)
        return 0;
    if (!instr_add(r, req->instruction_id, pack_request(req), 0))
        return 0;
    send_pending(r);
    return 1;
}

size_t fnw_relay_in_flight(const fnw_relay *r)
{
    size_t n = 0;
    for (const relay_instr *e = r->instrs; e; e = e->next)
        n += e->bundle && !e->held;
    return n;
}

void fnw_relay_dump(const fnw_relay *r)
{
    fnw_info(r->log,
             "relay: PyFlink's Python worker pid %d (%s), %zu relayed bundle(s), %zu bytes queued for it",
             pid_of(r),
             r->ctl        ? "connected"
             : r->child_up ? "starting"
                           : "not running",
             fnw_relay_in_flight(r), r->q_bytes);
    for (const relay_instr *e = r->instrs; e; e = e->next)
        if (!e->held)
            fnw_info(r->log, "relay:   instruction %s (%s, %s)", e->iid, e->bundle ? "bundle" : "request",
                     e->sent ? "sent" : "waiting for the Python worker");
}

void fnw_relay_stop(fnw_relay *r)
{
    if (r->stopping)
        return;
    r->stopping = 1;
    ev_timer_stop(r->loop, &r->connect_timer);
    ev_timer_stop(r->loop, &r->lose_timer);
    if (r->ctl)
        fnw_stream_close_send(r->ctl); /* the SDK harness exits when its Control stream ends */
    fnw_stream_free(r->dat);
    fnw_stream_free(r->logs);
    r->dat = r->logs = NULL;
    drop_queue(r);
    if (r->child_up && r->child)
        fnw_relay_child_stop(r->child);
}

void fnw_relay_free(fnw_relay *r)
{
    if (!r)
        return;
    r->stopping = 1;
    ev_timer_stop(r->loop, &r->lose_timer);
    close_streams(r);
    fnw_relay_server_free(r->srv);
    fnw_relay_child_free(r->child);
    while (r->instrs)
        instr_unlink(r, r->instrs);
    while (r->descs) {
        relay_desc *d = r->descs;
        r->descs = d->next;
        grpc_slice_unref(d->bytes);
        free(d->id);
        free(d);
    }
    free(r);
}
