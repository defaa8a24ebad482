/* scripts/bench/rig.c — the runner-side gRPC server (see rig.h).
 *
 * Every call is a rig_call with one tag per op kind (new, initial metadata,
 * receive, send, close); a call is freed when RECV_CLOSE_ON_SERVER came back
 * and no op is in flight. Sends go through a per-call queue and are chained;
 * the data stream pulls from the running bundle's source instead of being
 * queued up front, so the next 1 MB is built only when it can be sent.
 */
#include "scripts/bench/rig.h"

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "org/apache/beam/model/fn_execution/v1/beam_fn_api.pb-c.h"
#include "org/apache/beam/model/fn_execution/v1/beam_provision_api.pb-c.h"
#include "scripts/bench/descriptor.h"
#include "scripts/bench/elements.h"

#define PBN(name) org__apache__beam__model__fn_execution__v1__##name
typedef Org__Apache__Beam__Model__FnExecution__V1__InstructionRequest pb_Request;
typedef Org__Apache__Beam__Model__FnExecution__V1__InstructionResponse pb_Response;
typedef Org__Apache__Beam__Model__FnExecution__V1__ProcessBundleRequest pb_ProcessBundle;
typedef Org__Apache__Beam__Model__FnExecution__V1__GetProcessBundleDescriptorRequest pb_DescReq;
typedef Org__Apache__Beam__Model__FnExecution__V1__GetProvisionInfoResponse pb_ProvResp;
typedef Org__Apache__Beam__Model__FnExecution__V1__ProvisionInfo pb_ProvInfo;
typedef Org__Apache__Beam__Model__Pipeline__V1__ApiServiceDescriptor pb_Api;
typedef Org__Apache__Beam__Model__FnExecution__V1__LogEntry__List pb_LogList;

#define M_PROVISION "/org.apache.beam.model.fn_execution.v1.ProvisionService/GetProvisionInfo"
#define M_CONTROL "/org.apache.beam.model.fn_execution.v1.BeamFnControl/Control"
#define M_DESCRIPTOR "/org.apache.beam.model.fn_execution.v1.BeamFnControl/GetProcessBundleDescriptor"
#define M_DATA "/org.apache.beam.model.fn_execution.v1.BeamFnData/Data"
#define M_LOGGING "/org.apache.beam.model.fn_execution.v1.BeamFnLogging/Logging"

typedef enum { K_UNKNOWN, K_PROVISION, K_DESCRIPTOR, K_CONTROL, K_DATA, K_LOGGING } call_kind;
enum { OP_NEW, OP_META, OP_RECV, OP_SEND, OP_CLOSE, OP_SHUTDOWN };

struct rig_call;
typedef struct rig_tag {
    struct rig_call *c;
    int op;
} rig_tag;

typedef struct out_msg {
    struct out_msg *next;
    grpc_byte_buffer *bb;            /* NULL: send the status */
} out_msg;

typedef struct rig_call {
    bench_rig *rig;
    call_kind kind;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
    rig_tag t_new, t_meta, t_recv, t_send, t_close;
    int pending;
    grpc_byte_buffer *recv_bb;
    grpc_byte_buffer *send_bb;
    int send_active, recv_active;
    out_msg *q_head, *q_tail;
    int status_queued, status_code;
    grpc_slice status_details;
    int cancelled, closed, dead;
    struct rig_call *next_live;
} rig_call;

typedef struct desc_entry {
    struct desc_entry *next;
    char *id;
    uint8_t *bytes;
    size_t n;
} desc_entry;

struct bench_rig {
    grpc_server *server;
    grpc_completion_queue *cq;
    char url[64];
    int verbose;
    rig_call *listening;
    rig_call *live;
    desc_entry *descs;
    rig_tag t_shutdown;
    int shutdown_done;
    /* session */
    char worker_id[64];
    rig_call *control, *data;
    uint64_t bad_worker_id, stray_responses, stray_data, log_entries, log_errors;
    char last_log_error[256];
    /* bundle */
    bench_bundle *bundle;
    uint64_t bundle_seq;
    int last_queued;
    double src_wake;
    /* tick */
    double tick_interval, next_tick;
    void (*tick)(void *arg, double now);
    void *tick_arg;
};

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *bench_rig_url(const bench_rig *r)
{
    return r->url;
}

/* ---- call plumbing ---------------------------------------------------------------- */

static void request_new_call(bench_rig *r);

static rig_call *call_new(bench_rig *r)
{
    rig_call *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->rig = r;
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->md);
    c->t_new = (rig_tag){c, OP_NEW};
    c->t_meta = (rig_tag){c, OP_META};
    c->t_recv = (rig_tag){c, OP_RECV};
    c->t_send = (rig_tag){c, OP_SEND};
    c->t_close = (rig_tag){c, OP_CLOSE};
    c->status_details = grpc_empty_slice();
    c->next_live = r->live;
    r->live = c;
    return c;
}

static void drop_queue(rig_call *c)
{
    while (c->q_head) {
        out_msg *m = c->q_head;
        c->q_head = m->next;
        if (m->bb)
            grpc_byte_buffer_destroy(m->bb);
        free(m);
    }
    c->q_tail = NULL;
}

static void call_free(rig_call *c)
{
    bench_rig *r = c->rig;
    for (rig_call **pp = &r->live; *pp; pp = &(*pp)->next_live)
        if (*pp == c) {
            *pp = c->next_live;
            break;
        }
    if (r->control == c)
        r->control = NULL;
    if (r->data == c)
        r->data = NULL;
    drop_queue(c);
    if (c->recv_bb)
        grpc_byte_buffer_destroy(c->recv_bb);
    if (c->send_bb)
        grpc_byte_buffer_destroy(c->send_bb);
    grpc_slice_unref(c->status_details);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->md);
    if (c->call)
        grpc_call_unref(c->call);
    free(c);
}

static int start(rig_call *c, grpc_op *ops, size_t n, rig_tag *tag)
{
    grpc_call_error e = grpc_call_start_batch(c->call, ops, n, tag, NULL);
    if (e != GRPC_CALL_OK) {
        fprintf(stderr, "bench: grpc_call_start_batch failed (%d)\n", (int)e);
        c->dead = 1;
        return -1;
    }
    c->pending++;
    return 0;
}

static void arm_recv(rig_call *c)
{
    if (c->dead || c->recv_active)
        return;
    grpc_op op = {0};
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->recv_bb;
    if (start(c, &op, 1, &c->t_recv) == 0)
        c->recv_active = 1;
}

static void pump_send(rig_call *c)
{
    if (c->send_active || !c->q_head || c->dead)
        return;
    out_msg *m = c->q_head;
    c->q_head = m->next;
    if (!c->q_head)
        c->q_tail = NULL;
    grpc_op op = {0};
    if (m->bb) {
        op.op = GRPC_OP_SEND_MESSAGE;
        op.data.send_message.send_message = m->bb;
        c->send_bb = m->bb;
    } else {
        op.op = GRPC_OP_SEND_STATUS_FROM_SERVER;
        op.data.send_status_from_server.status = (grpc_status_code)c->status_code;
        op.data.send_status_from_server.status_details = &c->status_details;
    }
    free(m);
    if (start(c, &op, 1, &c->t_send) == 0)
        c->send_active = 1;
    else if (c->send_bb) {
        grpc_byte_buffer_destroy(c->send_bb);
        c->send_bb = NULL;
    }
}

static void enqueue(rig_call *c, grpc_byte_buffer *bb)
{
    if (c->dead || c->status_queued) {
        if (bb)
            grpc_byte_buffer_destroy(bb);
        return;
    }
    out_msg *m = calloc(1, sizeof *m);
    if (!m) {
        if (bb)
            grpc_byte_buffer_destroy(bb);
        return;
    }
    m->bb = bb;
    if (c->q_tail)
        c->q_tail->next = m;
    else
        c->q_head = m;
    c->q_tail = m;
    pump_send(c);
}

static void send_status(rig_call *c, grpc_status_code code, const char *details)
{
    if (c->status_queued || c->dead)
        return;
    c->status_code = (int)code;
    grpc_slice_unref(c->status_details);
    c->status_details = grpc_slice_from_copied_string(details ? details : "");
    enqueue(c, NULL);
    c->status_queued = 1;
}

static void send_bytes(rig_call *c, const uint8_t *p, size_t n)
{
    grpc_slice s = grpc_slice_from_copied_buffer((const char *)p, n);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    enqueue(c, bb);
}

static grpc_slice take_message(rig_call *c)
{
    grpc_byte_buffer_reader rd;
    grpc_slice s = grpc_empty_slice();
    if (grpc_byte_buffer_reader_init(&rd, c->recv_bb)) {
        s = grpc_byte_buffer_reader_readall(&rd);
        grpc_byte_buffer_reader_destroy(&rd);
    }
    grpc_byte_buffer_destroy(c->recv_bb);
    c->recv_bb = NULL;
    return s;
}

/* ---- the services ------------------------------------------------------------------ */

static void on_provision(rig_call *c, grpc_slice msg)
{
    bench_rig *r = c->rig;
    pb_Api ctl = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    pb_Api log = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    pb_ProvInfo info = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROVISION_INFO__INIT;
    pb_ProvResp resp = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__GET_PROVISION_INFO_RESPONSE__INIT;
    ctl.url = r->url;
    log.url = r->url;
    info.control_endpoint = &ctl;
    info.logging_endpoint = &log;
    info.retrieval_token = "bench";
    resp.info = &info;
    size_t n = PBN(get_provision_info_response__get_packed_size)(&resp);
    uint8_t *p = malloc(n ? n : 1);
    if (!p) {
        send_status(c, GRPC_STATUS_INTERNAL, "out of memory");
        return;
    }
    PBN(get_provision_info_response__pack)(&resp, p);
    send_bytes(c, p, n);
    free(p);
    send_status(c, GRPC_STATUS_OK, NULL);
    (void)msg;
}

static void on_descriptor_request(rig_call *c, grpc_slice msg)
{
    pb_DescReq *q = PBN(get_process_bundle_descriptor_request__unpack)(
        NULL, GRPC_SLICE_LENGTH(msg), GRPC_SLICE_START_PTR(msg));
    if (!q) {
        send_status(c, GRPC_STATUS_INVALID_ARGUMENT, "not a GetProcessBundleDescriptorRequest");
        return;
    }
    desc_entry *e = c->rig->descs;
    while (e && strcmp(e->id, q->process_bundle_descriptor_id))
        e = e->next;
    if (e) {
        send_bytes(c, e->bytes, e->n);
        send_status(c, GRPC_STATUS_OK, NULL);
    } else {
        char m[256];
        snprintf(m, sizeof m, "ProcessBundleDescriptor with id %s not found",
                 q->process_bundle_descriptor_id);
        send_status(c, GRPC_STATUS_NOT_FOUND, m);
    }
    PBN(get_process_bundle_descriptor_request__free_unpacked)(q, NULL);
}

static void on_instruction_response(rig_call *c, grpc_slice msg)
{
    bench_rig *r = c->rig;
    pb_Response *resp = PBN(instruction_response__unpack)(NULL, GRPC_SLICE_LENGTH(msg),
                                                          GRPC_SLICE_START_PTR(msg));
    bench_bundle *b = r->bundle;
    if (!resp) {
        if (b && !b->got_response) {
            snprintf(b->error, sizeof b->error, "the worker sent an unparsable InstructionResponse");
            b->got_response = 1;
        }
        return;
    }
    if (b && !b->got_response && !strcmp(resp->instruction_id, b->iid)) {
        b->got_response = 1;
        b->t_response = bench_now();
        if (resp->error && *resp->error)
            snprintf(b->error, sizeof b->error, "%s", resp->error);
        else if (resp->response_case !=
                 ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__RESPONSE_PROCESS_BUNDLE)
            snprintf(b->error, sizeof b->error, "the response to %s is not a ProcessBundleResponse",
                     b->iid);
        else if (resp->process_bundle)
            b->n_monitoring = resp->process_bundle->n_monitoring_infos;
    } else {
        r->stray_responses++;
    }
    PBN(instruction_response__free_unpacked)(resp, NULL);
}

static int on_data_entry(void *arg, const bench_elem_data *d)
{
    bench_rig *r = arg;
    bench_bundle *b = r->bundle;
    size_t il = strlen(b ? b->iid : "");
    if (!b || d->instruction_len != il || memcmp(d->instruction_id, b->iid, il) ||
        d->transform_len != strlen(BENCH_SINK_ID) ||
        memcmp(d->transform_id, BENCH_SINK_ID, d->transform_len)) {
        r->stray_data++;
        return 0;
    }
    if (b->got_sink_last) {
        r->stray_data++;    /* data after is_last */
        return 0;
    }
    if (d->data_len)
        bench_walker_feed(&b->out, d->data, d->data_len);
    if (d->is_last) {
        b->got_sink_last = 1;
        b->t_sink_last = bench_now();
    }
    return 0;
}

static void on_data(rig_call *c, grpc_slice msg)
{
    bench_rig *r = c->rig;
    if (r->bundle)
        r->bundle->out_msgs++;
    if (bench_elements_each(GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), on_data_entry, r) < 0) {
        if (r->bundle && !r->bundle->error[0])
            snprintf(r->bundle->error, sizeof r->bundle->error,
                     "the worker sent a malformed Elements message (%zu bytes)",
                     (size_t)GRPC_SLICE_LENGTH(msg));
        r->stray_data++;
    }
}

static void on_log(rig_call *c, grpc_slice msg)
{
    bench_rig *r = c->rig;
    pb_LogList *l = (pb_LogList *)protobuf_c_message_unpack(&PBN(log_entry__list__descriptor), NULL,
                                                            GRPC_SLICE_LENGTH(msg), GRPC_SLICE_START_PTR(msg));
    if (!l)
        return;
    for (size_t i = 0; i < l->n_log_entries; i++) {
        const Org__Apache__Beam__Model__FnExecution__V1__LogEntry *e = l->log_entries[i];
        r->log_entries++;
        if ((int)e->severity >= 6) {
            r->log_errors++;
            snprintf(r->last_log_error, sizeof r->last_log_error, "%s", e->message ? e->message : "");
        }
        if (r->verbose)
            fprintf(stderr, "  worker log [%d] %s\n", (int)e->severity, e->message ? e->message : "");
    }
    protobuf_c_message_free_unpacked(&l->base, NULL);
}

static void feed_data(bench_rig *r);

static void on_message(rig_call *c, grpc_slice msg)
{
    switch (c->kind) {
    case K_PROVISION: on_provision(c, msg); break;
    case K_DESCRIPTOR: on_descriptor_request(c, msg); break;
    case K_CONTROL: on_instruction_response(c, msg); break;
    case K_DATA: on_data(c, msg); break;
    case K_LOGGING: on_log(c, msg); break;
    default: break;
    }
}

/* ---- completions --------------------------------------------------------------------- */

static call_kind kind_of(const grpc_call_details *d)
{
    static const struct { const char *m; call_kind k; } map[] = {
        {M_PROVISION, K_PROVISION}, {M_CONTROL, K_CONTROL}, {M_DESCRIPTOR, K_DESCRIPTOR},
        {M_DATA, K_DATA}, {M_LOGGING, K_LOGGING},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!grpc_slice_str_cmp(d->method, map[i].m))
            return map[i].k;
    return K_UNKNOWN;
}

static int has_worker_id(const rig_call *c, const char *want)
{
    for (size_t i = 0; i < c->md.count; i++)
        if (!grpc_slice_str_cmp(c->md.metadata[i].key, "worker_id"))
            return !grpc_slice_str_cmp(c->md.metadata[i].value, want);
    return 0;
}

static void on_new_call(rig_call *c, int ok)
{
    bench_rig *r = c->rig;
    r->listening = NULL;
    if (!ok) {
        c->closed = 1;   /* server shutting down; nothing else in flight */
        return;
    }
    request_new_call(r);
    c->kind = kind_of(&c->details);
    if (!has_worker_id(c, r->worker_id))
        r->bad_worker_id++;
    grpc_op close_op = {0};
    close_op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    close_op.data.recv_close_on_server.cancelled = &c->cancelled;
    start(c, &close_op, 1, &c->t_close);
    grpc_op meta = {0};
    meta.op = GRPC_OP_SEND_INITIAL_METADATA;
    start(c, &meta, 1, &c->t_meta);
    if (c->kind == K_UNKNOWN) {
        send_status(c, GRPC_STATUS_UNIMPLEMENTED, "the benchmark runner does not serve this method");
        return;
    }
    if (c->kind == K_CONTROL)
        r->control = c;
    if (c->kind == K_DATA) {
        r->data = c;
        feed_data(r);
    }
    arm_recv(c);
}

static void on_recv(rig_call *c, int ok)
{
    c->recv_active = 0;
    if (!ok || !c->recv_bb) {
        /* The client half-closed (or the call broke): answer with a status. */
        if (c->recv_bb) {
            grpc_byte_buffer_destroy(c->recv_bb);
            c->recv_bb = NULL;
        }
        if (c->kind != K_PROVISION && c->kind != K_DESCRIPTOR)
            send_status(c, GRPC_STATUS_OK, NULL);
        else
            send_status(c, GRPC_STATUS_INVALID_ARGUMENT, "expected one request message");
        return;
    }
    grpc_slice msg = take_message(c);
    on_message(c, msg);
    grpc_slice_unref(msg);
    if (c->kind != K_PROVISION && c->kind != K_DESCRIPTOR)
        arm_recv(c);
}

static void on_send(rig_call *c, int ok)
{
    c->send_active = 0;
    if (c->send_bb) {
        grpc_byte_buffer_destroy(c->send_bb);
        c->send_bb = NULL;
    }
    if (!ok) {
        c->dead = 1;
        drop_queue(c);
        return;
    }
    pump_send(c);
    if (c == c->rig->data)
        feed_data(c->rig);
}

static void dispatch(bench_rig *r, grpc_event ev)
{
    rig_tag *t = ev.tag;
    if (t->op == OP_SHUTDOWN) {
        r->shutdown_done = 1;
        return;
    }
    rig_call *c = t->c;
    if (t->op != OP_NEW)
        c->pending--;
    switch (t->op) {
    case OP_NEW: on_new_call(c, ev.success); break;
    case OP_META: break;
    case OP_RECV: on_recv(c, ev.success); break;
    case OP_SEND: on_send(c, ev.success); break;
    case OP_CLOSE:
        c->closed = 1;
        if (c->cancelled) {
            c->dead = 1;
            drop_queue(c);
        }
        if (r->control == c)
            r->control = NULL;
        if (r->data == c)
            r->data = NULL;
        break;
    default: break;
    }
    if (c->closed && c->pending == 0)
        call_free(c);
}

static void request_new_call(bench_rig *r)
{
    rig_call *c = call_new(r);
    if (!c)
        return;
    grpc_call_error e = grpc_server_request_call(r->server, &c->call, &c->details, &c->md, r->cq,
                                                 r->cq, &c->t_new);
    if (e != GRPC_CALL_OK) {
        fprintf(stderr, "bench: grpc_server_request_call failed (%d)\n", (int)e);
        call_free(c);
        return;
    }
    r->listening = c;
}

/* ---- data feeding ------------------------------------------------------------------------ */

static grpc_byte_buffer *frame(const char *iid, grpc_slice body, int last_entry)
{
    uint8_t hdr[2 * BENCH_ELEM_HEADER_MAX];
    grpc_slice parts[3];
    size_t n = 0, k = 0;
    if (GRPC_SLICE_LENGTH(body)) {
        k = bench_elements_data_header(hdr, iid, BENCH_SOURCE_ID, GRPC_SLICE_LENGTH(body));
        parts[n++] = grpc_slice_from_copied_buffer((const char *)hdr, k);
        parts[n++] = body;
    } else {
        grpc_slice_unref(body);
    }
    if (last_entry) {
        size_t l = bench_elements_last_entry(hdr + k, iid, BENCH_SOURCE_ID);
        parts[n++] = grpc_slice_from_copied_buffer((const char *)hdr + k, l);
    }
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(parts, n);   /* takes its own refs */
    for (size_t i = 0; i < n; i++)
        grpc_slice_unref(parts[i]);
    return bb;
}

static void feed_data(bench_rig *r)
{
    rig_call *c = r->data;
    bench_bundle *b = r->bundle;
    if (!c || !b || c->dead || c->send_active || c->q_head || r->last_queued)
        return;
    double now = bench_now();
    grpc_slice body;
    uint64_t n = 0;
    double wake = 0;
    int rc = b->src.next(b->src.self, now, &body, &n, &wake);
    if (rc > 0) {
        b->sent_records += n;
        b->sent_bytes += GRPC_SLICE_LENGTH(body);
        b->sent_msgs++;
        r->src_wake = 0;
        enqueue(c, frame(b->iid, body, 0));
    } else if (rc == 0) {
        r->src_wake = wake > now ? wake : now + 1e-4;
    } else {
        r->last_queued = 1;
        r->src_wake = 0;
        b->t_last_sent = bench_now();
        enqueue(c, frame(b->iid, grpc_empty_slice(), 1));
    }
}

/* ---- polling --------------------------------------------------------------------------- */

void bench_rig_poll(bench_rig *r, double max_wait_s)
{
    double now = bench_now();
    double until = now + max_wait_s;
    if (r->src_wake > 0 && r->src_wake < until)
        until = r->src_wake;
    if (r->tick && r->next_tick < until)
        until = r->next_tick;
    double wait = until - now;
    if (wait < 0)
        wait = 0;
    gpr_timespec dl = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                   gpr_time_from_micros((int64_t)(wait * 1e6), GPR_TIMESPAN));
    grpc_event ev = grpc_completion_queue_next(r->cq, dl, NULL);
    if (ev.type == GRPC_OP_COMPLETE)
        dispatch(r, ev);
    now = bench_now();
    if (r->src_wake > 0 && now >= r->src_wake) {
        r->src_wake = 0;
        feed_data(r);
    }
    if (r->tick && now >= r->next_tick) {
        r->next_tick = now + r->tick_interval;
        r->tick(r->tick_arg, now);
    }
}

void bench_rig_set_tick(bench_rig *r, double interval_s, void (*fn)(void *arg, double now), void *arg)
{
    r->tick = fn;
    r->tick_arg = arg;
    r->tick_interval = interval_s;
    r->next_tick = bench_now() + interval_s;
}

/* ---- sessions and bundles ---------------------------------------------------------------- */

void bench_rig_expect_worker(bench_rig *r, const char *worker_id)
{
    snprintf(r->worker_id, sizeof r->worker_id, "%s", worker_id);
    r->control = NULL;
    r->data = NULL;
    r->bad_worker_id = r->stray_responses = r->stray_data = 0;
    r->log_entries = r->log_errors = 0;
    r->last_log_error[0] = '\0';
}

int bench_rig_wait_control(bench_rig *r, double timeout_s)
{
    double end = bench_now() + timeout_s;
    while (!r->control && bench_now() < end)
        bench_rig_poll(r, 0.05);
    return r->control != NULL;
}

void bench_rig_end_control(bench_rig *r)
{
    if (r->control)
        send_status(r->control, GRPC_STATUS_OK, NULL);
}

int bench_rig_session_problems(const bench_rig *r, char *msg, size_t n)
{
    if (!r->bad_worker_id && !r->stray_responses && !r->stray_data)
        return 0;
    snprintf(msg, n, "%llu call(s) without worker_id '%s', %llu unexpected response(s), "
             "%llu stray or late data entr(ies)", (unsigned long long)r->bad_worker_id, r->worker_id,
             (unsigned long long)r->stray_responses, (unsigned long long)r->stray_data);
    return 1;
}

void bench_rig_log_counts(const bench_rig *r, uint64_t *entries, uint64_t *errors)
{
    *entries = r->log_entries;
    *errors = r->log_errors;
}

static grpc_byte_buffer *pack_request(const char *iid, const char *descriptor_id)
{
    pb_ProcessBundle pb = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROCESS_BUNDLE_REQUEST__INIT;
    pb_Request req = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_REQUEST__INIT;
    pb.process_bundle_descriptor_id = (char *)descriptor_id;
    req.instruction_id = (char *)iid;
    req.request_case = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_REQUEST__REQUEST_PROCESS_BUNDLE;
    req.process_bundle = &pb;
    size_t n = PBN(instruction_request__get_packed_size)(&req);
    grpc_slice s = grpc_slice_malloc(n);
    PBN(instruction_request__pack)(&req, GRPC_SLICE_START_PTR(s));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    return bb;
}

static int bundle_done(const bench_bundle *b)
{
    return b->got_response && (b->got_sink_last || b->error[0]);
}

int bench_rig_run_bundle(bench_rig *r, bench_bundle *b, double timeout_s)
{
    snprintf(b->iid, sizeof b->iid, "bundle-%llu", (unsigned long long)++r->bundle_seq);
    b->sent_records = b->sent_bytes = b->sent_msgs = b->out_msgs = 0;
    b->t_last_sent = b->t_response = b->t_sink_last = 0;
    b->got_response = b->got_sink_last = 0;
    b->n_monitoring = 0;
    b->error[0] = '\0';
    bench_walker_init(&b->out, b->expect_out_len, b->on_ts, b->ts_arg);
    if (!r->control) {
        snprintf(b->error, sizeof b->error, "the worker has no Control stream open");
        return -1;
    }
    r->bundle = b;
    r->last_queued = 0;
    r->src_wake = 0;
    b->t_start = bench_now();
    enqueue(r->control, pack_request(b->iid, b->descriptor_id));
    feed_data(r);
    double end = b->t_start + timeout_s;
    while (!bundle_done(b)) {
        if (!r->control) {
            snprintf(b->error, sizeof b->error, "the Control stream closed during %s%s%s", b->iid,
                     r->last_log_error[0] ? "; last worker error: " : "", r->last_log_error);
            break;
        }
        if (bench_now() > end) {
            snprintf(b->error, sizeof b->error,
                     "%s timed out after %.0f s (sent %llu records%s, got %llu, response %s, sink is_last %s)",
                     b->iid, timeout_s, (unsigned long long)b->sent_records,
                     r->last_queued ? " and is_last" : "", (unsigned long long)b->out.records,
                     b->got_response ? "yes" : "no", b->got_sink_last ? "yes" : "no");
            break;
        }
        bench_rig_poll(r, 0.05);
    }
    r->bundle = NULL;
    r->src_wake = 0;
    if (b->error[0])
        return -1;
    if (bench_walker_check(&b->out) < 0) {
        snprintf(b->error, sizeof b->error,
                 "%s: the output stream is not well framed (%llu records, %llu not of the expected %llu bytes, "
                 "ended mid-record: %s)", b->iid, (unsigned long long)b->out.records,
                 (unsigned long long)b->out.bad_len, (unsigned long long)b->expect_out_len,
                 b->out.skip || b->out.in_varint ? "yes" : "no");
        return -1;
    }
    return 0;
}

/* ---- life cycle ---------------------------------------------------------------------------- */

int bench_rig_add_descriptor(bench_rig *r, const char *id, const uint8_t *bytes, size_t n)
{
    desc_entry *e = calloc(1, sizeof *e);
    if (!e || !(e->id = strdup(id)) || !(e->bytes = malloc(n ? n : 1))) {
        if (e)
            free(e->id);
        free(e);
        return -1;
    }
    memcpy(e->bytes, bytes, n);
    e->n = n;
    e->next = r->descs;
    r->descs = e;
    return 0;
}

bench_rig *bench_rig_new(int verbose, fnw_error *err)
{
    bench_rig *r = calloc(1, sizeof *r);
    if (!r) {
        fnw_error_set(err, "out of memory");
        return NULL;
    }
    r->verbose = verbose;
    grpc_init();
    grpc_arg args[2];
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = -1;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].value.integer = -1;
    grpc_channel_args ch_args = {2, args};
    r->server = grpc_server_create(&ch_args, NULL);
    r->cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(r->server, r->cq, NULL);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    int port = grpc_server_add_http2_port(r->server, "127.0.0.1:0", creds);
    grpc_server_credentials_release(creds);
    if (port <= 0) {
        fnw_error_set(err, "could not listen on 127.0.0.1 (grpc_server_add_http2_port failed)");
        grpc_server_destroy(r->server);
        grpc_completion_queue_destroy(r->cq);
        grpc_shutdown();
        free(r);
        return NULL;
    }
    snprintf(r->url, sizeof r->url, "127.0.0.1:%d", port);
    grpc_server_start(r->server);
    r->t_shutdown = (rig_tag){NULL, OP_SHUTDOWN};
    request_new_call(r);
    return r;
}

void bench_rig_free(bench_rig *r)
{
    if (!r)
        return;
    grpc_server_shutdown_and_notify(r->server, r->cq, &r->t_shutdown);
    grpc_server_cancel_all_calls(r->server);
    double end = bench_now() + 5;
    while ((!r->shutdown_done || r->live) && bench_now() < end)
        bench_rig_poll(r, 0.05);
    grpc_server_destroy(r->server);
    grpc_completion_queue_shutdown(r->cq);
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(r->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type == GRPC_OP_COMPLETE)
            dispatch(r, ev);
    }
    grpc_completion_queue_destroy(r->cq);
    while (r->live)
        call_free(r->live);
    while (r->descs) {
        desc_entry *e = r->descs;
        r->descs = e->next;
        free(e->id);
        free(e->bytes);
        free(e);
    }
    grpc_shutdown();
    free(r);
}
