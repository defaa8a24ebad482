/* worker/worker.c — boot, instructions, descriptor cache, stop (see worker.h). */
#include "worker/worker.h"

#include <ev.h>
#include <grpc/grpc.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/pb_nesting.h"
#include "runtime/operation.h"
#include "worker/bundle.h"
#include "worker/control.h"
#include "worker/data.h"
#include "worker/log_options.h"
#include "worker/logging.h"
#include "worker/mailbox.h"
#include "worker/pb.h"
#include "worker/plan.h"
#include "worker/pump.h"
#include "worker/rpc.h"

/* A descriptor as the worker knows it: its plan (or why it has none), the
 * processors idle for it, and the bundles waiting for it to arrive (in
 * arrival order). */
typedef struct pending_bundle {
    struct pending_bundle *next;
    char *instruction_id;
} pending_bundle;

struct fnw_worker;

typedef struct descriptor_entry {
    struct descriptor_entry *next;
    struct fnw_worker *w;
    char *id;
    fnw_plan *plan;
    char *error;
    char *data_url;           /* known even when the plan failed */
    int fetching;
    fnw_processor *idle;
    pending_bundle *pending, *pending_tail;
} descriptor_entry;

typedef struct active_bundle {
    struct active_bundle *next;
    fnw_bundle *b;
    descriptor_entry *entry;
    char *instruction_id;
} active_bundle;

typedef struct fnw_worker {
    struct ev_loop *loop;
    const fnw_flags *flags;
    fnw_logger log;
    fnw_mailbox mailbox;
    fnw_pump pump;
    fnw_rpc rpc;
    fnw_registry registry;
    fnw_data_mgr data;
    grpc_channel *provision_ch, *control_ch, *logging_ch;
    fnw_control *control;
    fnw_ready_wait *control_wait;
    char *control_url, *logging_url;
    descriptor_entry *entries;
    active_bundle *active;
    double boot_deadline;
    ev_timer retry_timer;
    double retry_delay;       /* provisioning backoff, 0.1 s doubling to 2 s */
    ev_timer stop_timer;
    ev_timer idle_timer;      /* returns freed memory once bundles stop */
    double stop_started;
    ev_signal sig_term, sig_int;
    int stopping;
    int exit_code;
} fnw_worker;

static void worker_stop(fnw_worker *w, int code);
static void start_bundle(fnw_worker *w, descriptor_entry *e, const char *iid);

/* ---- responses ---------------------------------------------------------------------- */

static void respond_error(fnw_worker *w, const char *iid, const char *msg)
{
    fnw_log(&w->log, FNW_LOG_ERROR, iid, NULL, "%s", msg);
    if (w->control)
        fnw_control_respond_error(w->control, iid, msg);
}

/* The instruction failed before a bundle read its input: answer it, and let
 * the data plane drop what arrived or will arrive for it. */
static void fail_instruction(fnw_worker *w, const char *iid, const char *msg)
{
    respond_error(w, iid, msg);
    fnw_data_finish(&w->data, iid);
}

static void respond_bundle_ok(fnw_worker *w, const char *iid, const fnw_metric_set *ms)
{
    pb_ProcessBundleResponse pbr = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROCESS_BUNDLE_RESPONSE__INIT;
    pbr.n_monitoring_infos = ms->n;
    pbr.monitoring_infos = ms->infos;
    pb_InstructionResponse r = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__INIT;
    r.instruction_id = (char *)iid;
    r.response_case = RESP_CASE(PROCESS_BUNDLE);
    r.process_bundle = &pbr;
    fnw_control_respond(w->control, &r);
}

/* ---- descriptors ---------------------------------------------------------------------- */

static descriptor_entry *entry_get(fnw_worker *w, const char *id)
{
    for (descriptor_entry *e = w->entries; e; e = e->next)
        if (!strcmp(e->id, id))
            return e;
    descriptor_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->id = strdup(id);
    e->w = w;
    e->next = w->entries;
    w->entries = e;
    return e;
}

static void entry_set_descriptor(fnw_worker *w, descriptor_entry *e,
                                 const pb_ProcessBundleDescriptor *d, const char *why)
{
    fnw_error err;
    e->fetching = 0;
    if (!d) {
        free(e->error);
        e->error = strdup(why);
        return;
    }
    fnw_plan_free(e->plan);
    e->plan = NULL;
    free(e->error);
    e->error = NULL;
    free(e->data_url);
    e->data_url = fnw_plan_data_url(d);
    if (fnw_plan_build(d, &w->registry, &e->plan, &err) < 0)
        e->error = strdup(err.msg);
    else
        fnw_info(&w->log, "descriptor %s: %zu operation(s), input from %s, data endpoint %s", e->id,
                 e->plan->n_steps, e->plan->source_id, e->plan->data_url);
}

static void descriptor_arrived(void *user, pb_ProcessBundleDescriptor *d, const char *why)
{
    descriptor_entry *e = user;
    fnw_worker *wk = e->w;
    if (wk->stopping) {
        if (d)
            fnw_control_free_descriptor(d);
        return;
    }
    entry_set_descriptor(wk, e, d, why);
    if (d)
        fnw_control_free_descriptor(d);
    pending_bundle *p = e->pending;
    e->pending = e->pending_tail = NULL;
    while (p) {
        pending_bundle *next = p->next;
        start_bundle(wk, e, p->instruction_id);
        free(p->instruction_id);
        free(p);
        p = next;
    }
}

/* ---- bundles ------------------------------------------------------------------------------ */

static void bundle_finished(void *user, fnw_bundle *b, const char *error, const fnw_metric_set *ms)
{
    fnw_worker *w = user;
    active_bundle **pp = &w->active, *ab = NULL;
    while (*pp && (*pp)->b != b)
        pp = &(*pp)->next;
    if (*pp) {
        ab = *pp;
        *pp = ab->next;
    }
    const char *iid = ab ? ab->instruction_id : fnw_bundle_instruction(b);
    fnw_processor *proc = fnw_bundle_processor(b);
    if (error) {
        respond_error(w, iid, error);
        fnw_bundle_free(b);
        fnw_processor_destroy(proc);   /* a failed chain is not reused */
    } else {
        fnw_debug(&w->log, "instruction %s finished", iid);
        respond_bundle_ok(w, iid, ms);
        fnw_bundle_free(b);
        if (ab && ab->entry) {
            proc->busy = 0;
            proc->next = ab->entry->idle;
            ab->entry->idle = proc;
        } else {
            fnw_processor_destroy(proc);
        }
    }
    /* a bundle that failed before it claimed its input leaves data behind */
    fnw_data_finish(&w->data, iid);
    if (ab)
        free(ab->instruction_id);
    free(ab);
    if (!w->active && !w->stopping) {
        ev_timer_stop(w->loop, &w->idle_timer);
        ev_timer_set(&w->idle_timer, 0.5, 0);
        ev_timer_start(w->loop, &w->idle_timer);
    }
}

/* Half a second without a bundle: give the memory bundles used back to the
 * system (not sooner: back-to-back bundles would fault it in again). */
static void idle_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_worker *w = t->data;
    if (!w->active)
        malloc_trim(0);
}

static void start_bundle(fnw_worker *w, descriptor_entry *e, const char *iid)
{
    /* Beam's runner waits for our Data stream before it looks at any
     * response, so open it even for a bundle that fails right away. */
    if (e->data_url)
        fnw_data_connect(&w->data, e->data_url);
    if (e->error) {
        char msg[FNW_ERROR_MAX + 128];
        snprintf(msg, sizeof msg, "instruction %s: %s", iid, e->error);
        fail_instruction(w, iid, msg);
        return;
    }
    fnw_processor *proc = e->idle;
    if (proc) {
        e->idle = proc->next;
    } else {
        fnw_error err;
        if (fnw_processor_create(w->loop, e->plan, &proc, &err) < 0) {
            char msg[FNW_ERROR_MAX + 128];
            snprintf(msg, sizeof msg, "instruction %s, descriptor %s: %s", iid, e->id, err.msg);
            fail_instruction(w, iid, msg);
            return;
        }
    }
    proc->busy = 1;
    proc->next = NULL;
    active_bundle *ab = calloc(1, sizeof *ab);
    if (ab)
        ab->instruction_id = strdup(iid);
    if (ab && ab->instruction_id)
        ab->b = fnw_bundle_start(w->loop, &w->log, &w->data, proc, iid, bundle_finished, w);
    if (!ab || !ab->b) {
        if (ab)
            free(ab->instruction_id);
        free(ab);
        fnw_processor_destroy(proc);
        char msg[256];
        snprintf(msg, sizeof msg, "instruction %s: out of memory starting the bundle", iid);
        fail_instruction(w, iid, msg);
        return;
    }
    ab->entry = e;
    ab->next = w->active;
    w->active = ab;
}

static void handle_process_bundle(fnw_worker *w, const char *iid, const pb_ProcessBundleRequest *pb)
{
    descriptor_entry *e = entry_get(w, pb->process_bundle_descriptor_id);
    if (!e || fnw_data_expect(&w->data, iid) < 0) {
        fail_instruction(w, iid, "out of memory accepting a process_bundle request");
        return;
    }
    if (e->plan || e->error) {
        start_bundle(w, e, iid);
        return;
    }
    pending_bundle *p = calloc(1, sizeof *p);
    if (p)
        p->instruction_id = strdup(iid);
    if (!p || !p->instruction_id) {
        free(p);
        fail_instruction(w, iid, "out of memory queueing a process_bundle request");
        return;
    }
    if (e->pending_tail)
        e->pending_tail->next = p;
    else
        e->pending = p;
    e->pending_tail = p;
    if (!e->fetching) {
        e->fetching = 1;
        if (fnw_control_fetch_descriptor(w->control, e->id, descriptor_arrived, e) < 0)
            descriptor_arrived(e, NULL, "could not start GetProcessBundleDescriptor");
    }
}

static void handle_register(fnw_worker *w, const pb_InstructionRequest *req)
{
    for (size_t i = 0; i < req->register_->n_process_bundle_descriptor; i++) {
        const pb_ProcessBundleDescriptor *d = req->register_->process_bundle_descriptor[i];
        descriptor_entry *e = entry_get(w, d->id);
        if (e)
            entry_set_descriptor(w, e, d, NULL);
    }
    pb_RegisterResponse rr = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__REGISTER_RESPONSE__INIT;
    pb_InstructionResponse r = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__INIT;
    r.instruction_id = req->instruction_id;
    r.response_case = RESP_CASE(REGISTER);
    r.register_ = &rr;
    fnw_control_respond(w->control, &r);
}

static const char *request_kind(int c)
{
    switch (c) {
    case REQ_CASE(PROCESS_BUNDLE_PROGRESS): return "process_bundle_progress";
    case REQ_CASE(PROCESS_BUNDLE_SPLIT): return "process_bundle_split";
    case REQ_CASE(FINALIZE_BUNDLE): return "finalize_bundle";
    case REQ_CASE(MONITORING_INFOS): return "monitoring_infos";
    case REQ_CASE(HARNESS_MONITORING_INFOS): return "harness_monitoring_infos";
    case REQ_CASE(SAMPLE_DATA): return "sample_data";
    }
    return NULL;
}

static void control_request(void *user, pb_InstructionRequest *req)
{
    fnw_worker *w = user;
    char msg[512];
    if (w->stopping) {
        fnw_control_free_request(req);
        return;
    }
    switch (req->request_case) {
    case REQ_CASE(PROCESS_BUNDLE):
        handle_process_bundle(w, req->instruction_id, req->process_bundle);
        break;
    case REQ_CASE(REGISTER):
        handle_register(w, req);
        break;
    case REQ_CASE(_NOT_SET):
        snprintf(msg, sizeof msg, "instruction %s has no request set (or one this worker does not "
                 "know); fnworker handles process_bundle and register", req->instruction_id);
        respond_error(w, req->instruction_id, msg);
        break;
    default: {
        const char *kind = request_kind(req->request_case);
        snprintf(msg, sizeof msg, "fnworker does not support %s requests (instruction %s); it "
                 "handles process_bundle and register", kind ? kind : "this kind of",
                 req->instruction_id);
        respond_error(w, req->instruction_id, msg);
        break;
    }
    }
    fnw_control_free_request(req);
}

static void control_closed(void *user, grpc_status_code code, const char *details)
{
    fnw_worker *w = user;
    if (w->stopping)
        return;
    if (code == GRPC_STATUS_OK) {
        fnw_info(&w->log, "the runner closed the control stream; exiting");
        worker_stop(w, 0);
    } else {
        size_t n = 0;
        for (active_bundle *a = w->active; a; a = a->next)
            n++;
        fnw_err(&w->log, "lost the control stream to %s (status %d: %s) with %zu bundle(s) in "
                "progress; exiting", w->control_url, (int)code, details, n);
        worker_stop(w, 1);
    }
}

/* ---- boot ------------------------------------------------------------------------------- */

static void control_ready(void *user, int ready)
{
    fnw_worker *w = user;
    w->control_wait = NULL;
    if (w->stopping)
        return;
    if (!ready) {
        fnw_err(&w->log, "could not connect to the control endpoint %s within %.0f s; exiting",
                w->control_url, w->flags->connect_timeout_s);
        worker_stop(w, 1);
        return;
    }
    fnw_control_handler h = {w, control_request, control_closed};
    w->control = fnw_control_open(&w->rpc, w->control_ch, &h);
    fnw_info(&w->log, "fnworker %s (worker %s) connected to control %s", FNW_VERSION,
             w->flags->id, w->control_url);
}

static void connect_planes(fnw_worker *w)
{
    if (w->logging_url && *w->logging_url) {
        w->logging_ch = fnw_rpc_channel(w->logging_url);
        fnw_log_connect(&w->log, &w->rpc, w->logging_ch);
    }
    w->control_ch = fnw_rpc_channel(w->control_url);
    double left = w->boot_deadline - ev_now(w->loop);
    w->control_wait = fnw_rpc_wait_ready(&w->rpc, w->control_ch, left > 1 ? left : 1,
                                         control_ready, w);
}

static void request_provision(fnw_worker *w);

static void provision_retry_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    request_provision(t->data);
}

static int take_provision(fnw_worker *w, grpc_slice resp)
{
    fnw_error err;   /* pipeline_options is a Struct, which nests without a limit */
    if (fnw_pb_check_nesting(&PB(get_provision_info_response__descriptor), GRPC_SLICE_START_PTR(resp),
                             GRPC_SLICE_LENGTH(resp), &err) < 0) {
        fnw_err(&w->log, "GetProvisionInfo: %s", err.msg);
        return -1;
    }
    pb_GetProvisionInfoResponse *r = PB(get_provision_info_response__unpack)(
        NULL, GRPC_SLICE_LENGTH(resp), GRPC_SLICE_START_PTR(resp));
    if (!r)
        return -1;
    pb_ProvisionInfo *info = r->info;
    fnw_log_request lr;
    fnw_log_request_read(info ? info->pipeline_options : NULL, &lr);
    fnw_log_request_apply(&w->log, &lr, w->flags->log_level);
    if (info && info->control_endpoint && *info->control_endpoint->url && !w->control_url)
        w->control_url = strdup(info->control_endpoint->url);
    if (info && info->logging_endpoint && *info->logging_endpoint->url && !w->logging_url)
        w->logging_url = strdup(info->logging_endpoint->url);
    PB(get_provision_info_response__free_unpacked)(r, NULL);
    return 0;
}

static void provision_done(void *user, grpc_status_code code, const char *details, grpc_slice resp)
{
    fnw_worker *w = user;
    if (w->stopping)
        return;
    if (code == GRPC_STATUS_OK) {
        if (take_provision(w, resp) < 0) {
            fnw_err(&w->log, "GetProvisionInfo from %s returned bytes that are not a "
                    "GetProvisionInfoResponse; exiting", w->flags->provision_endpoint);
            worker_stop(w, 1);
            return;
        }
        if (!w->control_url) {
            fnw_err(&w->log, "the provision info from %s names no control endpoint; exiting",
                    w->flags->provision_endpoint);
            worker_stop(w, 1);
            return;
        }
        connect_planes(w);
        return;
    }
    double now = ev_now(w->loop);
    if (now >= w->boot_deadline) {
        fnw_err(&w->log, "could not get provisioning info from %s within %.0f s (last status %d: %s); "
                "exiting", w->flags->provision_endpoint, w->flags->connect_timeout_s, (int)code, details);
        worker_stop(w, 1);
        return;
    }
    fnw_debug(&w->log, "GetProvisionInfo from %s failed (status %d: %s); retrying in %.1f s",
              w->flags->provision_endpoint, (int)code, details, w->retry_delay);
    ev_timer_set(&w->retry_timer, w->retry_delay, 0);
    if (w->retry_delay < 2.0)
        w->retry_delay *= 2;
    ev_timer_start(w->loop, &w->retry_timer);
}

static void request_provision(fnw_worker *w)
{
    pb_GetProvisionInfoRequest req = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__GET_PROVISION_INFO_REQUEST__INIT;
    size_t n = PB(get_provision_info_request__get_packed_size)(&req);
    grpc_slice s = grpc_slice_malloc(n);
    PB(get_provision_info_request__pack)(&req, GRPC_SLICE_START_PTR(s));
    double left = w->boot_deadline - ev_now(w->loop);
    if (fnw_unary_call(&w->rpc, w->provision_ch, FNW_METHOD_PROVISION, s, left > 0.2 ? left : 0.2, 1,
                       provision_done, w) < 0) {
        fnw_err(&w->log, "could not start GetProvisionInfo; exiting");
        worker_stop(w, 1);
    }
}

static void boot(fnw_worker *w)
{
    const fnw_flags *f = w->flags;
    for (size_t i = 0; i < f->n_unknown; i++)
        fnw_warn(&w->log, "ignoring unknown flag %s", f->unknown[i]);
    w->boot_deadline = ev_now(w->loop) + f->connect_timeout_s;
    w->retry_delay = 0.1;
    if (f->control_endpoint)
        w->control_url = strdup(f->control_endpoint);
    if (f->logging_endpoint)
        w->logging_url = strdup(f->logging_endpoint);
    if (f->provision_endpoint) {
        w->provision_ch = fnw_rpc_channel(f->provision_endpoint);
        request_provision(w);
    } else {
        connect_planes(w);
    }
}

/* ---- stop ------------------------------------------------------------------------------------ */

static void stop_poll_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_worker *w = t->data;
    double waited = ev_now(loop) - w->stop_started;
    if (waited > 0.3 && w->log.stream)
        fnw_log_free(&w->log);           /* the runner did not close it: cancel */
    if (w->rpc.live_calls <= 0 || waited > 1.5) {
        if (w->rpc.live_calls > 0)
            fnw_warn(&w->log, "stopping with %d gRPC call(s) still open", w->rpc.live_calls);
        ev_timer_stop(loop, t);
        ev_break(loop, EVBREAK_ALL);
    }
}

static void worker_stop(fnw_worker *w, int code)
{
    if (w->stopping)
        return;
    w->stopping = 1;
    w->exit_code = code;
    w->stop_started = ev_now(w->loop);
    fnw_ready_cancel(w->control_wait);
    w->control_wait = NULL;
    ev_timer_stop(w->loop, &w->retry_timer);
    ev_timer_stop(w->loop, &w->idle_timer);
    while (w->active) {
        active_bundle *a = w->active;
        w->active = a->next;
        fnw_processor *proc = fnw_bundle_processor(a->b);
        fnw_bundle_abandon(a->b);
        fnw_bundle_free(a->b);
        fnw_processor_destroy(proc);
        free(a->instruction_id);
        free(a);
    }
    if (w->control)
        fnw_control_shutdown(w->control);
    fnw_rpc_cancel_unary(&w->rpc);
    fnw_data_stop(&w->data);
    fnw_log_shutdown(&w->log);
    ev_signal_stop(w->loop, &w->sig_term);
    ev_signal_stop(w->loop, &w->sig_int);
    ev_timer_init(&w->stop_timer, stop_poll_cb, 0.01, 0.01);
    w->stop_timer.data = w;
    ev_timer_start(w->loop, &w->stop_timer);
}

static void signal_cb(struct ev_loop *loop, ev_signal *s, int revents)
{
    fnw_worker *w = s->data;
    fnw_info(&w->log, "received %s; stopping", s->signum == SIGTERM ? "SIGTERM" : "SIGINT");
    worker_stop(w, 0);
}

static void free_entries(fnw_worker *w)
{
    descriptor_entry *e = w->entries;
    while (e) {
        descriptor_entry *next = e->next;
        while (e->idle) {
            fnw_processor *p = e->idle;
            e->idle = p->next;
            fnw_processor_destroy(p);
        }
        while (e->pending) {
            pending_bundle *p = e->pending;
            e->pending = p->next;
            free(p->instruction_id);
            free(p);
        }
        e->pending_tail = NULL;
        fnw_plan_free(e->plan);
        free(e->error);
        free(e->data_url);
        free(e->id);
        free(e);
        e = next;
    }
    w->entries = NULL;
}

/* ---- run ------------------------------------------------------------------------------------- */

int fnw_worker_run(const fnw_flags *flags, const fnw_registry *ops)
{
    fnw_worker *w = calloc(1, sizeof *w);
    if (!w)
        return 1;
    signal(SIGPIPE, SIG_IGN);
    /* gRPC's threads each get a malloc arena by default; two keep the
     * footprint small without contention that matters here */
    mallopt(M_ARENA_MAX, 2);
    grpc_init();
    w->loop = ev_default_loop(EVFLAG_AUTO);
    w->flags = flags;
    fnw_log_init(&w->log, w->loop, flags->level);
    fnw_data_config dc = {flags->flush_bytes, flags->flush_ms, 0, flags->connect_timeout_s, {0}};
    dc.early.early_ttl_s = flags->early_data_ttl_s;
    if (fnw_data_init(&w->data, w->loop, &w->rpc, &w->log, &dc) < 0) {
        fnw_err(&w->log, "out of memory at start-up; exiting");
        fnw_log_free(&w->log);
        ev_loop_destroy(w->loop);
        free(w);
        grpc_shutdown();
        return 1;
    }
    fnw_mailbox_init(&w->mailbox, w->loop);
    fnw_pump_start(&w->pump, &w->mailbox);
    w->rpc.cq = w->pump.cq;
    w->rpc.worker_id = flags->id;
    w->rpc.log = &w->log;
    w->registry = *ops;
    ev_timer_init(&w->idle_timer, idle_cb, 0.2, 0);
    w->idle_timer.data = w;
    ev_timer_init(&w->retry_timer, provision_retry_cb, 0.2, 0);
    w->retry_timer.data = w;
    ev_signal_init(&w->sig_term, signal_cb, SIGTERM);
    w->sig_term.data = w;
    ev_signal_start(w->loop, &w->sig_term);
    ev_signal_init(&w->sig_int, signal_cb, SIGINT);
    w->sig_int.data = w;
    ev_signal_start(w->loop, &w->sig_int);

    boot(w);
    ev_run(w->loop, 0);

    /* teardown: everything is cancelled; release, let the tags come back */
    fnw_control_free(w->control);
    w->control = NULL;
    fnw_data_free(&w->data);
    fnw_log_free(&w->log);
    free_entries(w);
    if (w->provision_ch)
        grpc_channel_destroy(w->provision_ch);
    if (w->control_ch)
        grpc_channel_destroy(w->control_ch);
    if (w->logging_ch)
        grpc_channel_destroy(w->logging_ch);
    fnw_pump_stop(&w->pump);
    fnw_mailbox_drain(&w->mailbox);
    fnw_mailbox_destroy(&w->mailbox);
    int code = w->exit_code;
    free(w->control_url);
    free(w->logging_url);
    ev_loop_destroy(w->loop);
    free(w);
    grpc_shutdown();
    return code;
}
