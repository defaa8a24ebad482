/* worker/worker.c — the worker process: it owns every unit, dispatches the
 * runner's instructions, tracks the bundles in progress and stops in order
 * (see worker.h).
 *
 * Units and who tells whom: boot (worker/boot.h) connects and reports the
 * control channel ready or boot failed; control (worker/control.h) hands
 * in requests and says when its stream closed; the descriptor cache
 * (worker/descriptors.h) hands back bundles that waited for their
 * descriptor; a bundle (worker/bundle.h) reports when it is done, and its
 * processor then goes back to its descriptor's pool or is discarded
 * (worker/processors.h). Each reports through a callback table fixed when
 * this file sets it up; none of them calls into this file otherwise.
 */
#include "worker/worker.h"

#include <ev.h>
#include <grpc/grpc.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/operation.h"
#include "worker/boot.h"
#include "worker/bundle.h"
#include "worker/control.h"
#include "worker/data.h"
#include "worker/descriptors.h"
#include "worker/log.h"
#include "base/handoff.h"
#include "base/pb.h"
#include "worker/pool_stats.h"
#include "worker/processors.h"
#include "worker/relay.h"
#include "base/pump.h"
#include "base/rpc.h"

/* A bundle in progress, and the descriptor whose pool gets its processor
 * back. */
typedef struct active_bundle {
    struct active_bundle *next;
    fnw_bundle *b;
    fnw_descriptor *descriptor;
    char *instruction_id;
} active_bundle;

typedef struct fnw_worker {
    struct ev_loop *loop;
    const fnw_flags *flags;
    fnw_logger log;
    fnw_handoff *handoff; /* the loop's: every thread's work reaches the loop here */
    fnw_pump *pump;       /* the loop's completion-queue thread, shared with kserve */
    fnw_rpc rpc;
    fnw_registry registry;
    fnw_data_mgr data;
    fnw_boot boot;
    fnw_control *control;
    fnw_descriptors descriptors;
    fnw_relay *relay; /* NULL with --relay=off */
    active_bundle *active;
    ev_timer stop_timer;
    ev_timer idle_timer; /* returns freed memory once bundles stop */
    double stop_started;
    ev_signal sig_term, sig_int, sig_quit;
    fnw_pool_stats stats; /* for the worker pool that started us, if one did */
    int stopping;
    int exit_code;
} fnw_worker;

static void worker_stop(fnw_worker *w, int code);

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
    if (w->relay)
        fnw_relay_drop(w->relay, iid);
    respond_error(w, iid, msg);
    fnw_inbound_finish(&w->data, iid);
}

static void respond_bundle_ok(fnw_worker *w, const char *iid, const fnw_metric_set *ms)
{
    pb_ProcessBundleResponse pbr = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROCESS_BUNDLE_RESPONSE__INIT;
    pbr.n_monitoring_infos = fnw_metrics_count(ms);
    pbr.monitoring_infos = fnw_metrics_infos(ms);
    pb_InstructionResponse r = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__INIT;
    r.instruction_id = (char *)iid;
    r.response_case = RESP_CASE(PROCESS_BUNDLE);
    r.process_bundle = &pbr;
    fnw_control_respond(w->control, &r);
}

/* ---- bundles ------------------------------------------------------------------------------ */

static active_bundle *active_take(fnw_worker *w, fnw_bundle *b)
{
    active_bundle **pp = &w->active;
    while (*pp && (*pp)->b != b)
        pp = &(*pp)->next;
    active_bundle *ab = *pp;
    if (ab)
        *pp = ab->next;
    return ab;
}

static size_t count_active(const fnw_worker *w)
{
    size_t n = 0;
    for (const active_bundle *a = w->active; a; a = a->next)
        n++;
    return n;
}

static void bundle_finished(void *user, fnw_bundle *b, const char *error, const fnw_metric_set *ms)
{
    fnw_worker *w = user;
    active_bundle *ab = active_take(w, b);
    const char *iid = ab ? ab->instruction_id : fnw_bundle_instruction(b);
    fnw_processor *proc = fnw_bundle_processor(b);
    fnw_processors *pool = ab && ab->descriptor ? fnw_descriptors_processors(ab->descriptor) : NULL;
    fnw_pool_stats_add_bundle(&w->stats, proc, error != NULL);
    if (error) {
        respond_error(w, iid, error);
        fnw_bundle_free(b);
        fnw_processors_close(proc); /* a failed chain is not reused */
    } else {
        fnw_debug(&w->log, "instruction %s finished", iid);
        respond_bundle_ok(w, iid, ms);
        fnw_bundle_free(b);
        if (pool)
            fnw_processors_put(pool, proc);
        else
            fnw_processors_close(proc);
    }
    /* a bundle that failed before it claimed its input leaves data behind */
    fnw_inbound_finish(&w->data, iid);
    if (ab)
        free(ab->instruction_id);
    free(ab);
    fnw_pool_stats_set_active(&w->stats, count_active(w));
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

/* A processor for the bundle: an idle one of d, or a new one. */
static fnw_processor *take_processor(fnw_worker *w, fnw_descriptor *d, const char *iid)
{
    fnw_processor *proc;
    fnw_error err;
    if (fnw_processors_take(fnw_descriptors_processors(d), w->loop, fnw_descriptors_plan(d), &proc, &err) < 0) {
        char msg[FNW_ERROR_MAX + 128];
        snprintf(msg, sizeof msg, "instruction %s, descriptor %s: %s", iid, fnw_descriptors_id(d), err.msg);
        fail_instruction(w, iid, msg);
        return NULL;
    }
    return proc;
}

static void start_bundle(fnw_worker *w, fnw_descriptor *d, const char *iid)
{
    /* Beam's runner waits for our Data stream before it looks at any
     * response, so open it even for a bundle that fails right away. */
    fnw_data_conn *conn = NULL;
    if (fnw_descriptors_data_url(d))
        conn = fnw_data_connect(&w->data, fnw_descriptors_data_url(d));
    if (fnw_descriptors_relayed(d) && w->relay) {
        if (conn)
            fnw_relay_start(w->relay, iid, conn);
        else
            fail_instruction(w, iid,
                             "a relayed descriptor names no data endpoint (or memory ran out opening it)");
        return;
    }
    if (w->relay)
        fnw_relay_drop(w->relay, iid);
    if (fnw_descriptors_error(d)) {
        char msg[FNW_ERROR_MAX + 128];
        snprintf(msg, sizeof msg, "instruction %s: %s", iid, fnw_descriptors_error(d));
        fail_instruction(w, iid, msg);
        return;
    }
    fnw_processor *proc = take_processor(w, d, iid);
    if (!proc)
        return;
    active_bundle *ab = calloc(1, sizeof *ab);
    if (ab)
        ab->instruction_id = strdup(iid);
    if (ab && ab->instruction_id)
        ab->b = fnw_bundle_start(w->loop, &w->log, &w->data, proc, iid, bundle_finished, w);
    if (!ab || !ab->b) {
        if (ab)
            free(ab->instruction_id);
        free(ab);
        fnw_processors_close(proc);
        char msg[256];
        snprintf(msg, sizeof msg, "instruction %s: out of memory starting the bundle", iid);
        fail_instruction(w, iid, msg);
        return;
    }
    ab->descriptor = d;
    ab->next = w->active;
    w->active = ab;
    fnw_bundle_watch(ab->b, w->flags->lull_seconds);
    fnw_pool_stats_set_active(&w->stats, count_active(w));
}

/* ---- descriptors ---------------------------------------------------------------------- */

static void descriptor_ready(void *user, fnw_descriptor *d, const char *iid)
{
    start_bundle(user, d, iid);
}

static int descriptor_relayed(void *user, fnw_descriptor *d, const pb_ProcessBundleDescriptor *pb,
                              fnw_error *err)
{
    fnw_worker *w = user;
    return fnw_relay_add_descriptor(w->relay, pb, err);
}

static const fnw_descriptors_events descriptor_events = { descriptor_ready, NULL };
static const fnw_descriptors_events descriptor_events_relay = { descriptor_ready, descriptor_relayed };

typedef struct fetch_ctx {
    fnw_worker *w;
    fnw_descriptor *d;
} fetch_ctx;

static void descriptor_fetched(void *user, pb_ProcessBundleDescriptor *pb, const char *why)
{
    fetch_ctx f = *(fetch_ctx *)user;
    free(user);
    if (!f.w->stopping)
        fnw_descriptors_arrived(&f.w->descriptors, f.d, pb, why);
    if (pb)
        fnw_control_free_descriptor(pb);
}

static void fetch_descriptor(fnw_worker *w, fnw_descriptor *d)
{
    fetch_ctx *f = malloc(sizeof *f);
    if (f) {
        f->w = w;
        f->d = d;
    }
    if (!f || fnw_control_fetch_descriptor(w->control, fnw_descriptors_id(d), descriptor_fetched, f) < 0) {
        free(f);
        fnw_descriptors_arrived(&w->descriptors, d, NULL, "could not start GetProcessBundleDescriptor");
    }
}

/* ---- instructions ---------------------------------------------------------------------- */

static void handle_process_bundle(fnw_worker *w, const pb_InstructionRequest *req)
{
    const char *iid = req->instruction_id;
    const pb_ProcessBundleRequest *pb = req->process_bundle;
    fnw_descriptor *d = fnw_descriptors_get(&w->descriptors, pb->process_bundle_descriptor_id);
    if (!d || fnw_inbound_expect(&w->data, iid) < 0) {
        fail_instruction(w, iid, "out of memory accepting a process_bundle request");
        return;
    }
    /* its descriptor may turn out relayed: keep the request (cache tokens
     * and all) to hand on */
    if (w->relay && (!fnw_descriptors_known(d) || fnw_descriptors_relayed(d)) &&
        fnw_relay_hold(w->relay, req) < 0) {
        fail_instruction(w, iid, "out of memory accepting a process_bundle request");
        return;
    }
    if (fnw_descriptors_known(d)) {
        start_bundle(w, d, iid);
        return;
    }
    int r = fnw_descriptors_wait(&w->descriptors, d, iid);
    if (r < 0)
        fail_instruction(w, iid, "out of memory queueing a process_bundle request");
    else if (r > 0)
        fetch_descriptor(w, d);
}

static void handle_register(fnw_worker *w, const pb_InstructionRequest *req)
{
    for (size_t i = 0; i < req->register_->n_process_bundle_descriptor; i++) {
        const pb_ProcessBundleDescriptor *pb = req->register_->process_bundle_descriptor[i];
        fnw_descriptor *d = fnw_descriptors_get(&w->descriptors, pb->id);
        if (d)
            fnw_descriptors_set(&w->descriptors, d, pb);
    }
    pb_RegisterResponse rr = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__REGISTER_RESPONSE__INIT;
    pb_InstructionResponse r = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__INIT;
    r.instruction_id = req->instruction_id;
    r.response_case = RESP_CASE(REGISTER);
    r.register_ = &rr;
    fnw_control_respond(w->control, &r);
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
        handle_process_bundle(w, req);
        break;
    case REQ_CASE(REGISTER):
        handle_register(w, req);
        break;
    default:
        if (w->relay && fnw_relay_forward(w->relay, req))
            break; /* it names a relayed bundle: the Python worker answers */
        fnw_control_describe_unsupported(req, msg, sizeof msg);
        respond_error(w, req->instruction_id, msg);
        break;
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
        fnw_err(&w->log,
                "lost the control stream to %s (status %d: %s) with %zu bundle(s) in "
                "progress; exiting",
                fnw_boot_control_url(&w->boot), (int)code, details, n);
        worker_stop(w, 1);
    }
}

/* ---- boot ------------------------------------------------------------------------------- */

static void boot_control_ready(void *user, grpc_channel *ch)
{
    fnw_worker *w = user;
    fnw_control_handler h = { w, control_request, control_closed };
    w->control = fnw_control_start(&w->rpc, ch, &w->log, &h);
    fnw_pool_stats_connected(&w->stats);
    fnw_info(&w->log, "fnworker %s (worker %s) connected to control %s", FNW_VERSION, w->flags->id,
             fnw_boot_control_url(&w->boot));
}

static void boot_failed(void *user)
{
    worker_stop(user, 1);
}

static const fnw_boot_events boot_events = { boot_control_ready, boot_failed };

/* ---- stop ------------------------------------------------------------------------------------ */

static void stop_poll_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_worker *w = t->data;
    double waited = ev_now(loop) - w->stop_started;
    if (waited > 0.3 && fnw_log_streaming(&w->log))
        fnw_log_free(&w->log); /* the runner did not close it: cancel */
    if (waited > 0.3)
        fnw_data_cancel(&w->data); /* likewise the Data streams */
    int live = fnw_rpc_live_calls(&w->rpc);
    if (live <= 0 || waited > 1.5) {
        if (live > 0)
            fnw_warn(&w->log, "stopping with %d gRPC call(s) still open", live);
        ev_timer_stop(loop, t);
        ev_break(loop, EVBREAK_ALL);
    }
}

static void stop_bundles(fnw_worker *w)
{
    while (w->active) {
        active_bundle *a = w->active;
        w->active = a->next;
        fnw_processor *proc = fnw_bundle_processor(a->b);
        fnw_bundle_stop(a->b);
        fnw_bundle_free(a->b);
        fnw_processors_close(proc);
        free(a->instruction_id);
        free(a);
    }
}

static void worker_stop(fnw_worker *w, int code)
{
    if (w->stopping)
        return;
    w->stopping = 1;
    w->exit_code = code;
    w->stop_started = ev_now(w->loop);
    fnw_boot_stop(&w->boot);
    ev_timer_stop(w->loop, &w->idle_timer);
    stop_bundles(w);
    if (w->relay)
        fnw_relay_stop(w->relay);
    if (w->control)
        fnw_control_stop(w->control);
    fnw_rpc_cancel_unary(&w->rpc);
    fnw_data_stop(&w->data);
    fnw_log_stop(&w->log);
    ev_signal_stop(w->loop, &w->sig_term);
    ev_signal_stop(w->loop, &w->sig_int);
    ev_signal_stop(w->loop, &w->sig_quit);
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

/* The pool's report is due: the running bundles' gauges (pool_stats.h). */
static void refresh_stats(void *user, fnw_pool_stats *s)
{
    fnw_worker *w = user;
    for (active_bundle *a = w->active; a; a = a->next)
        fnw_pool_stats_refresh_proc(s, fnw_bundle_processor(a->b));
}

/* SIGQUIT: everything in flight to the log, and carry on (as a JVM's thread
 * dump does). */
static void dump_cb(struct ev_loop *loop, ev_signal *s, int revents)
{
    fnw_worker *w = s->data;
    size_t n = 0;
    for (active_bundle *a = w->active; a; a = a->next)
        n++;
    fnw_info(&w->log,
             "SIGQUIT: %zu bundle(s) in progress, %zu log entries queued; the worker "
             "keeps running",
             n, fnw_log_queued(&w->log));
    for (active_bundle *a = w->active; a; a = a->next)
        fnw_bundle_dump(a->b);
    if (w->relay)
        fnw_relay_dump(w->relay);
}

/* ---- run ------------------------------------------------------------------------------------- */

static void watch_signal(fnw_worker *w, ev_signal *s, int signum)
{
    ev_signal_init(s, signal_cb, signum);
    s->data = w;
    ev_signal_start(w->loop, s);
}

/* A JVM blocks SIGQUIT in its threads (it keeps it for thread dumps), and a
 * process it launches (Flink's, through Beam's ProcessManager) inherits
 * that mask: unblock the signals the worker watches, before gRPC starts
 * threads, so any thread may take them for the loop. */
static void unblock_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGQUIT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/* ---- the relay ------------------------------------------------------------------------ */

static void relay_respond(void *user, grpc_slice response)
{
    fnw_worker *w = user;
    if (w->control)
        fnw_control_send_response(w->control, response);
    else
        grpc_slice_unref(response);
}

static void relay_fail(void *user, const char *iid, const char *msg)
{
    fail_instruction(user, iid, msg);
}

static const uint8_t *relay_provision(void *user, size_t *n)
{
    fnw_worker *w = user;
    return fnw_boot_provision(&w->boot, n);
}

static const fnw_relay_events relay_events = { NULL, relay_respond, relay_fail, relay_provision };

static void relay_setup(fnw_worker *w)
{
    if (!w->flags->relay)
        return;
    fnw_relay_config rc = { w->flags->id, NULL, w->flags->semi_persist_dir, w->flags->connect_timeout_s,
                            w->flags->relay_fd };
    fnw_relay_events ev = relay_events;
    ev.user = w;
    w->relay = fnw_relay_new(w->loop, &w->log, &w->rpc, &w->data, &rc, &ev);
    if (!w->relay)
        fnw_err(&w->log, "out of memory setting up the relay: Python functions will fail");
}

/* Everything but the data plane, which is set up first (it can fail). */
static void worker_setup(fnw_worker *w)
{
    fnw_handoff_hold(w->handoff); /* the worker's loop ends by ev_break only */
    fnw_rpc_log_sink sink = fnw_log_rpc_sink(&w->log);
    fnw_rpc_init(&w->rpc, fnw_pump_cq(w->pump), "worker_id", w->flags->id, &sink);
    relay_setup(w);
    fnw_descriptors_init(&w->descriptors, &w->registry, &w->log,
                         w->relay ? &descriptor_events_relay : &descriptor_events, w);
    fnw_boot_init(&w->boot, w->loop, w->flags, &w->log, &w->rpc, &boot_events, w);
    ev_timer_init(&w->idle_timer, idle_cb, 0.2, 0);
    w->idle_timer.data = w;
    watch_signal(w, &w->sig_term, SIGTERM);
    watch_signal(w, &w->sig_int, SIGINT);
    ev_signal_init(&w->sig_quit, dump_cb, SIGQUIT);
    w->sig_quit.data = w;
    ev_signal_start(w->loop, &w->sig_quit);
    fnw_pool_stats_init(&w->stats, w->loop);
    fnw_pool_stats_set_refresh(&w->stats, refresh_stats, w);
}

/* Everything is cancelled: release, let the tags come back. */
static void worker_teardown(fnw_worker *w)
{
    fnw_pool_stats_free(&w->stats);
    fnw_control_free(w->control);
    w->control = NULL;
    fnw_relay_free(w->relay); /* the child is killed if it still runs */
    w->relay = NULL;
    fnw_data_free(&w->data);
    fnw_log_free(&w->log);
    fnw_descriptors_free(&w->descriptors);
    fnw_boot_free(&w->boot);
    fnw_rpc_free(&w->rpc);
    fnw_handoff_release(w->handoff);
    fnw_handoff_loop_free(w->loop); /* the pump delivers the last completions, which run */
}

int fnw_worker_run(const fnw_flags *flags, const fnw_registry *ops)
{
    fnw_worker *w = calloc(1, sizeof *w);
    if (!w)
        return 1;
    signal(SIGPIPE, SIG_IGN);
    unblock_signals();
    /* gRPC's threads each get a malloc arena by default; two keep the
     * footprint small without contention that matters here */
    mallopt(M_ARENA_MAX, 2);
    grpc_init();
    w->loop = ev_default_loop(EVFLAG_AUTO);
    w->flags = flags;
    w->registry = *ops;
    fnw_log_init(&w->log, w->loop, flags->level);
    fnw_data_config dc = { flags->flush_bytes, flags->flush_ms, 0, flags->connect_timeout_s, { 0 } };
    dc.early.early_ttl_s = flags->early_data_ttl_s;
    w->pump = fnw_pump_of(w->loop);
    w->handoff = fnw_handoff_of(w->loop);
    if (!w->pump || !w->handoff || fnw_data_init(&w->data, w->loop, &w->rpc, &w->log, &dc) < 0) {
        fnw_err(&w->log, "out of memory (or no thread) at start-up; exiting");
        fnw_log_free(&w->log);
        fnw_handoff_loop_free(w->loop);
        ev_loop_destroy(w->loop);
        free(w);
        grpc_shutdown();
        return 1;
    }
    worker_setup(w);

    fnw_boot_start(&w->boot);
    ev_run(w->loop, 0);

    worker_teardown(w);
    int code = w->exit_code;
    ev_loop_destroy(w->loop);
    free(w);
    grpc_shutdown();
    return code;
}
