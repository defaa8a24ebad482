/* pool/pool.c — the pool process: flags, its libev loop, the endpoints,
 * signals and the orderly drain (see pool.h). It owns every pool unit; the
 * units know only the worker table (pool/children.h) and what they are
 * given here. */
#include "pool/pool.h"

#include <ev.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/handoff.h"
#include "pool/children.h"
#include "pool/extpool.h"
#include "pool/pool_http.h"
#include "pool/launcher.h"
#include "pool/listen.h"
#include "pool/pool_flags.h"
#include "pool/pool_report.h"
#include "pool/pool_token.h"

typedef struct pool {
    struct ev_loop *loop;
    fnw_pool_flags flags;
    fnw_pool_token token;
    fnw_children *children;
    fnw_launcher *launcher;
    fnw_extpool *grpc;
    fnw_pool_http *http;
    ev_signal sig_term, sig_int;
    ev_timer grace, poll, last_call;
    int draining, stopping;
    double last_dump; /* when /debug/state last signalled the workers */
} pool;

#define FNW_POOL_DUMP_INTERVAL_S 10.0

static char *src_metrics(void *ctx, size_t *len)
{
    pool *p = ctx;
    return fnw_pool_report_metrics(p->children, p->draining, ev_now(p->loop), len);
}

/* At most one dump per FNW_POOL_DUMP_INTERVAL_S: each writes every
 * worker's state into its log (and the boot log), so a client asking in a
 * loop would flood them. */
static char *src_state(void *ctx, size_t *len, unsigned *status)
{
    pool *p = ctx;
    double now = ev_now(p->loop);
    if (p->last_dump > 0 && now - p->last_dump < FNW_POOL_DUMP_INTERVAL_S) {
        char *msg = NULL;
        int n = asprintf(&msg,
                         "a state dump was requested %.1f s ago; the next one is "
                         "possible in %.1f s (at most one per %g s)\n",
                         now - p->last_dump, FNW_POOL_DUMP_INTERVAL_S - (now - p->last_dump),
                         FNW_POOL_DUMP_INTERVAL_S);
        *status = 429;
        *len = n > 0 ? (size_t)n : 0;
        return n > 0 ? msg : NULL;
    }
    p->last_dump = now;
    unsigned n = fnw_children_signal_all(p->children, SIGQUIT);
    return fnw_pool_report_state(p->children, p->draining, now, n, len);
}

static int src_serving(void *ctx)
{
    return !((pool *)ctx)->draining;
}

/* While draining: leave the loop once no worker runs and every launcher
 * has its EXIT line (or, after the grace period, once no worker runs). */
static void on_poll(struct ev_loop *loop, ev_timer *t, int revents)
{
    pool *p = t->data;
    if (fnw_children_get_stats(p->children).running == 0 &&
        (p->stopping || !p->launcher || fnw_launcher_connections(p->launcher) == 0))
        ev_break(loop, EVBREAK_ALL);
}

/* Workers were killed long ago: whatever still holds on, leave. */
static void on_last_call(struct ev_loop *loop, ev_timer *t, int revents)
{
    ev_break(loop, EVBREAK_ALL);
}

static void stop_workers(pool *p)
{
    if (p->stopping)
        return;
    p->stopping = 1;
    fprintf(stderr, "fnworker pool: stopping %u workers\n", fnw_children_get_stats(p->children).running);
    fnw_children_stop_all(p->children);
    ev_timer_init(&p->last_call, on_last_call, FNW_CHILDREN_KILL_AFTER_S + 2.0, 0);
    p->last_call.data = p;
    ev_timer_start(p->loop, &p->last_call);
}

static void on_grace_over(struct ev_loop *loop, ev_timer *t, int revents)
{
    pool *p = t->data;
    fprintf(stderr, "fnworker pool: grace period of %g s over\n", p->flags.grace_period_s);
    stop_workers(p);
}

static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
    pool *p = s->data;
    if (p->draining) {
        stop_workers(p);
        return;
    }
    p->draining = 1;
    fnw_children_stats st = fnw_children_get_stats(p->children);
    fprintf(stderr, "fnworker pool: %s: not accepting new workers; %u running get %g s to finish\n",
            s->signum == SIGTERM ? "SIGTERM" : "SIGINT", st.running, p->flags.grace_period_s);
    if (p->launcher)
        fnw_launcher_stop(p->launcher);
    if (p->grpc)
        fnw_extpool_drain(p->grpc);
    ev_timer_init(&p->grace, on_grace_over, p->flags.grace_period_s, 0);
    p->grace.data = p;
    ev_timer_start(loop, &p->grace);
    ev_timer_init(&p->poll, on_poll, 0, 0.05);
    p->poll.data = p;
    ev_timer_start(loop, &p->poll);
}

static int open_endpoints(pool *p, fnw_error *err)
{
    char bound[300];
    if (p->flags.listen) {
        int fd = fnw_listen_tcp(p->flags.listen, bound, sizeof bound, err);
        fnw_launcher_policy policy = { &p->token, &p->flags.allow };
        if (fd < 0 || !(p->launcher = fnw_launcher_new(p->loop, p->children, fd, &policy)))
            return fnw_error_prefix(err, "--listen");
        fprintf(stderr, "fnworker pool: launcher endpoint on %s (%s)\n", bound,
                p->token.set ? "requests must carry the token" : "no token asked for");
    }
    if (p->flags.http_listen) {
        fnw_pool_http_source src = { src_metrics, src_state, src_serving, p };
        int fd = fnw_listen_tcp(p->flags.http_listen, bound, sizeof bound, err);
        if (fd < 0 || !(p->http = fnw_pool_http_new(p->loop, fd, &src, err)))
            return fnw_error_prefix(err, "--http-listen");
        fprintf(stderr, "fnworker pool: HTTP endpoint on %s (/metrics, /healthz, /debug/state)\n", bound);
    }
    if (p->flags.grpc_listen) {
        if (!(p->grpc = fnw_extpool_new(p->loop, p->children, p->flags.grpc_listen, bound, sizeof bound, err)))
            return fnw_error_prefix(err, "--grpc-listen");
        fprintf(stderr, "fnworker pool: BeamFnExternalWorkerPool on %s\n", bound);
    }
    return 0;
}

static void watch_signal(pool *p, ev_signal *s, int signum)
{
    ev_signal_init(s, on_signal, signum);
    s->data = p;
    ev_signal_start(p->loop, s);
}

static void pool_free(pool *p)
{
    fnw_launcher_free(p->launcher);
    fnw_extpool_free(p->grpc);
    fnw_pool_http_free(p->http);
    fnw_children_free(p->children);
    fnw_pool_token_clear(&p->token);
    if (p->loop)
        fnw_handoff_loop_free(p->loop); /* stops the loop's pump, if the server started one */
}

static int pool_run(pool *p, const char *exe)
{
    fnw_error err = { { 0 } };
    p->loop = ev_default_loop(0);
    p->children = fnw_children_new(p->loop, exe, p->flags.max_workers, p->flags.start_timeout_s);
    if (!p->children || open_endpoints(p, &err) < 0) {
        fprintf(stderr, "fnworker pool: %s\n", p->children ? err.msg : "out of memory");
        pool_free(p);
        return 1;
    }
    watch_signal(p, &p->sig_term, SIGTERM);
    watch_signal(p, &p->sig_int, SIGINT);
    fprintf(stderr, "fnworker pool: ready (at most %u workers of %s)\n", p->flags.max_workers, exe);
    ev_run(p->loop, 0);
    fnw_children_stats st = fnw_children_get_stats(p->children);
    fprintf(stderr, "fnworker pool: stopped (%llu workers started, %llu exited)\n",
            (unsigned long long)st.started, (unsigned long long)st.exited);
    pool_free(p);
    return 0;
}

int fnw_pool_main(int argc, char **argv)
{
    pool p;
    fnw_error err = { { 0 } };
    memset(&p, 0, sizeof p);
    if (fnw_pool_flags_parse(&p.flags, argc, argv, &err) < 0) {
        fprintf(stderr, "fnworker pool: %s\n", err.msg);
        return 2;
    }
    if (p.flags.help) {
        fnw_pool_flags_usage("fnworker");
        return 0;
    }
    if (fnw_pool_token_load(&p.token, p.flags.token_file, &err) < 0) {
        fprintf(stderr, "fnworker pool: %s\n", err.msg);
        return 2;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!p.flags.worker_bin && n <= 0) {
        fprintf(stderr, "fnworker pool: cannot find this binary (/proc/self/exe); give --worker-bin\n");
        return 1;
    }
    self[n > 0 ? n : 0] = '\0';
    const char *exe = p.flags.worker_bin ? p.flags.worker_bin : self;
    if (access(exe, X_OK) != 0) {
        fprintf(stderr, "fnworker pool: the worker binary %s is not executable (--worker-bin)\n", exe);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    return pool_run(&p, exe);
}
