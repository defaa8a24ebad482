/* bench/rig.c — the runner-side gRPC server (see rig.h): its life
 * cycle, the completion loop (new calls are sorted by method and checked for
 * the expected worker_id, receives go to rig_services.c, sends and closes
 * to rig_call.c), polling with the source's wake-up and the tick, and the
 * session and bundle calls the benchmark makes. rig_internal.h says how the
 * three files share the rig's state.
 */
#include "bench/rig.h"

#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/rig_internal.h"

#define M_PROVISION "/org.apache.beam.model.fn_execution.v1.ProvisionService/GetProvisionInfo"
#define M_CONTROL "/org.apache.beam.model.fn_execution.v1.BeamFnControl/Control"
#define M_DESCRIPTOR "/org.apache.beam.model.fn_execution.v1.BeamFnControl/GetProcessBundleDescriptor"
#define M_DATA "/org.apache.beam.model.fn_execution.v1.BeamFnData/Data"
#define M_LOGGING "/org.apache.beam.model.fn_execution.v1.BeamFnLogging/Logging"

const char *bench_rig_url(const bench_rig *r)
{
    return r->url;
}

/* ---- completions --------------------------------------------------------------------- */

static void request_new_call(bench_rig *r);

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
    rig_call_batch(c, &close_op, 1, &c->t_close);
    grpc_op meta = {0};
    meta.op = GRPC_OP_SEND_INITIAL_METADATA;
    rig_call_batch(c, &meta, 1, &c->t_meta);
    if (c->kind == K_UNKNOWN) {
        rig_call_send_status(c, GRPC_STATUS_UNIMPLEMENTED, "the benchmark runner does not serve this method");
        return;
    }
    if (c->kind == K_CONTROL)
        r->control = c;
    if (c->kind == K_DATA) {
        r->data = c;
        rig_feed_data(r);
    }
    rig_call_arm_recv(c);
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
            rig_call_send_status(c, GRPC_STATUS_OK, NULL);
        else
            rig_call_send_status(c, GRPC_STATUS_INVALID_ARGUMENT, "expected one request message");
        return;
    }
    grpc_slice msg = rig_call_take_message(c);
    rig_on_message(c, msg);
    grpc_slice_unref(msg);
    if (c->kind != K_PROVISION && c->kind != K_DESCRIPTOR)
        rig_call_arm_recv(c);
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
        rig_call_drop_queue(c);
        return;
    }
    rig_call_pump_send(c);
    if (c == c->rig->data)
        rig_feed_data(c->rig);
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
            rig_call_drop_queue(c);
        }
        if (r->control == c)
            r->control = NULL;
        if (r->data == c)
            r->data = NULL;
        break;
    default: break;
    }
    if (c->closed && c->pending == 0)
        rig_call_free(c);
}

static void request_new_call(bench_rig *r)
{
    rig_call *c = rig_call_new(r);
    if (!c)
        return;
    grpc_call_error e = grpc_server_request_call(r->server, &c->call, &c->details, &c->md, r->cq,
                                                 r->cq, &c->t_new);
    if (e != GRPC_CALL_OK) {
        fprintf(stderr, "bench: grpc_server_request_call failed (%d)\n", (int)e);
        rig_call_free(c);
        return;
    }
    r->listening = c;
}

/* ---- data feeding ------------------------------------------------------------------------ */
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
        rig_feed_data(r);
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
        rig_call_send_status(r->control, GRPC_STATUS_OK, NULL);
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

int bench_rig_bundle_done(const bench_bundle *b)
{
    return b->got_response && (b->got_sink_last || b->error[0]);
}

int bench_rig_control_open(const bench_rig *r)
{
    return r->control != NULL;
}

bench_bundle *rig_find_bundle(bench_rig *r, const char *iid, size_t n)
{
    for (int i = 0; i < r->n_bundles; i++) {
        bench_bundle *b = r->bundles[i];
        if (strlen(b->iid) == n && !memcmp(b->iid, iid, n))
            return b;
    }
    return NULL;
}

int bench_rig_start_bundle(bench_rig *r, bench_bundle *b)
{
    snprintf(b->iid, sizeof b->iid, "bundle-%llu", (unsigned long long)++r->bundle_seq);
    b->sent_records = b->sent_bytes = b->sent_msgs = b->out_msgs = 0;
    b->t_last_sent = b->t_response = b->t_sink_last = 0;
    b->got_response = b->got_sink_last = b->last_queued = 0;
    b->wake_at = 0;
    b->out_msg_seq = 0;
    b->n_monitoring = 0;
    b->error[0] = '\0';
    if (b->counters)
        memset(b->counters, 0, sizeof *b->counters);
    bench_walker_init(&b->out, b->expect_out_len, b->on_ts, b->ts_arg);
    bench_walker_set_check(&b->out, b->on_rec, b->rec_arg);
    if (!r->control) {
        snprintf(b->error, sizeof b->error, "the worker has no Control stream open");
        return -1;
    }
    if (r->n_bundles == BENCH_RIG_MAX_BUNDLES) {
        snprintf(b->error, sizeof b->error, "the rig tracks %d bundles already", BENCH_RIG_MAX_BUNDLES);
        return -1;
    }
    r->bundles[r->n_bundles++] = b;
    b->t_start = bench_now();
    rig_call_enqueue(r->control, pack_request(b->iid, b->descriptor_id));
    rig_feed_data(r);
    return 0;
}

int bench_rig_finish_bundle(bench_rig *r, bench_bundle *b)
{
    for (int i = 0; i < r->n_bundles; i++)
        if (r->bundles[i] == b) {
            memmove(&r->bundles[i], &r->bundles[i + 1], (size_t)(r->n_bundles - i - 1) * sizeof b);
            r->n_bundles--;
            break;
        }
    if (r->n_bundles == 0)
        r->src_wake = 0;
    if (b->error[0])
        return -1;
    if (b->out.bad_value) {
        snprintf(b->error, sizeof b->error, "%s: %llu of %llu output records have wrong values", b->iid,
                 (unsigned long long)b->out.bad_value, (unsigned long long)b->out.records);
        return -1;
    }
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

int bench_rig_run_bundle(bench_rig *r, bench_bundle *b, double timeout_s)
{
    if (bench_rig_start_bundle(r, b) < 0)
        return -1;
    double end = b->t_start + timeout_s;
    while (!bench_rig_bundle_done(b)) {
        if (!r->control) {
            snprintf(b->error, sizeof b->error, "the Control stream closed during %s%s%s", b->iid,
                     r->last_log_error[0] ? "; last worker error: " : "", r->last_log_error);
            break;
        }
        if (bench_now() > end) {
            snprintf(b->error, sizeof b->error,
                     "%s timed out after %.0f s (sent %llu records%s, got %llu, response %s, sink is_last %s)",
                     b->iid, timeout_s, (unsigned long long)b->sent_records,
                     b->last_queued ? " and is_last" : "", (unsigned long long)b->out.records,
                     b->got_response ? "yes" : "no", b->got_sink_last ? "yes" : "no");
            break;
        }
        bench_rig_poll(r, 0.05);
    }
    return bench_rig_finish_bundle(r, b);
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
        rig_call_free(r->live);
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
