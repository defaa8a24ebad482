/* pool/children.c — the pool's worker processes (see children.h).
 *
 * Workers are started with posix_spawn (a fork and an exec of the fnworker
 * binary; safe in a process that runs gRPC threads), each in its own process
 * group with default signal handling, stdout and stderr on two pipes. */
#include "pool/children.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pool/pool_token.h"

extern char **environ;

#define DRAIN_AFTER_EXIT_S 1.0

struct fnw_child {
    fnw_children *owner;
    int used;
    pid_t pid;
    char id[FNW_CHILDREN_ID_MAX];
    ev_io out[2]; /* stdout, stderr; fd -1 once closed */
    ev_io stats;  /* the stats pipe; fd -1 once closed */
    char stats_line[FNW_METRIC_LINE_MAX];
    size_t stats_len;
    fnw_wire_figures figures;
    fnw_metric_series *series[FNW_METRIC_SERIES_MAX]; /* malloc'd as lines arrive */
    size_t nseries;
    ev_child exit_w;
    ev_timer kill_timer;  /* SIGKILL after a SIGTERM */
    ev_timer drain_timer; /* stop waiting for the pipes after exit */
    ev_timer start_timer; /* the start deadline, stopped by its "connected" line */
    fnw_child_events ev;
    int exited, status, paused, term_sent;
    int by_id; /* FNW_CHILD_BY_ID: fnw_children_find knows it */
    double started_at;
};

struct fnw_children {
    struct ev_loop *loop;
    char *exe;
    unsigned max;
    double start_timeout_s;
    fnw_children_stats stats;
    fnw_child *slots;
};

fnw_children *fnw_children_new(struct ev_loop *loop, const char *exe, unsigned max_workers,
                               double start_timeout_s)
{
    fnw_children *cs = calloc(1, sizeof *cs);
    if (!cs)
        return NULL;
    cs->slots = calloc(max_workers, sizeof *cs->slots);
    cs->exe = strdup(exe);
    if (!cs->slots || !cs->exe) {
        free(cs->slots);
        free(cs->exe);
        free(cs);
        return NULL;
    }
    cs->loop = loop;
    cs->max = max_workers;
    cs->start_timeout_s = start_timeout_s;
    cs->stats.max = max_workers;
    return cs;
}

static void close_stream(fnw_child *c, int i)
{
    if (c->out[i].fd < 0)
        return;
    ev_io_stop(c->owner->loop, &c->out[i]);
    close(c->out[i].fd);
    ev_io_set(&c->out[i], -1, EV_READ);
}

static void close_stats(fnw_child *c)
{
    if (c->stats.fd < 0)
        return;
    ev_io_stop(c->owner->loop, &c->stats);
    close(c->stats.fd);
    ev_io_set(&c->stats, -1, EV_READ);
}

static void release(fnw_child *c)
{
    fnw_children *cs = c->owner;
    close_stream(c, 0);
    close_stream(c, 1);
    close_stats(c);
    ev_child_stop(cs->loop, &c->exit_w);
    ev_timer_stop(cs->loop, &c->kill_timer);
    ev_timer_stop(cs->loop, &c->drain_timer);
    ev_timer_stop(cs->loop, &c->start_timer);
    for (size_t i = 0; i < c->nseries; i++)
        free(c->series[i]);
    cs->stats.series_kept -= (unsigned)c->nseries;
    c->nseries = 0;
    c->used = 0;
    cs->stats.running--;
    cs->stats.exited++;
}

static int exit_code(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

/* Both streams ended and the process is reaped: tell the owner, free. */
static void maybe_finish(fnw_child *c)
{
    if (!c->exited || c->out[0].fd >= 0 || c->out[1].fd >= 0)
        return;
    fnw_child_events ev = c->ev;
    int code = exit_code(c->status);
    if (ev.on_exit)
        ev.on_exit(ev.ctx, c, code);
    else
        fprintf(stderr, "fnworker pool: worker %s (pid %d) exited with code %d\n", c->id, (int)c->pid, code);
    release(c);
}

static void default_output(fnw_child *c, int stream, const char *data, size_t n)
{
    /* unowned workers (started over gRPC) write through the pool's stderr */
    (void)stream;
    fprintf(stderr, "[worker %s] %.*s", c->id, (int)n, data);
}

static void on_readable(struct ev_loop *loop, ev_io *w, int revents)
{
    fnw_child *c = w->data;
    int i = w == &c->out[0] ? 0 : 1;
    char buf[16384];
    ssize_t n = read(w->fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        close_stream(c, i);
        maybe_finish(c);
        return;
    }
    if (c->ev.on_output)
        c->ev.on_output(c->ev.ctx, c, i + 1, buf, (size_t)n);
    else
        default_output(c, i + 1, buf, (size_t)n);
}

/* A series line: replaces the step's last one, or takes a new slot while
 * the worker's and the pool's bounds allow. */
static void keep_series(fnw_child *c, const char *line)
{
    fnw_children *cs = c->owner;
    fnw_metric_series s;
    if (fnw_wire_series_parse(line, &s) != 0)
        return;
    for (size_t i = 0; i < c->nseries; i++) {
        if (strcmp(c->series[i]->transform, s.transform) == 0 &&
            strcmp(c->series[i]->operation, s.operation) == 0) {
            *c->series[i] = s;
            return;
        }
    }
    fnw_metric_series *x = NULL;
    if (c->nseries < FNW_METRIC_SERIES_MAX && cs->stats.series_kept < FNW_CHILDREN_SERIES_MAX)
        x = malloc(sizeof *x);
    if (!x) {
        cs->stats.series_dropped++;
        return;
    }
    *x = s;
    c->series[c->nseries++] = x;
    cs->stats.series_kept++;
}

/* Keeps the figures of the last complete line; a line too long is dropped. */
static void on_stats(struct ev_loop *loop, ev_io *w, int revents)
{
    fnw_child *c = w->data;
    char buf[1024];
    ssize_t n = read(w->fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        close_stats(c);
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] != '\n') {
            if (c->stats_len < sizeof c->stats_line - 1)
                c->stats_line[c->stats_len++] = buf[i];
            else
                c->stats_len = sizeof c->stats_line; /* overlong: ignore it */
            continue;
        }
        if (c->stats_len < sizeof c->stats_line) {
            c->stats_line[c->stats_len] = '\0';
            if (strcmp(c->stats_line, FNW_WIRE_CONNECTED) == 0)
                ev_timer_stop(loop, &c->start_timer);
            else if (strncmp(c->stats_line, "op", 2) == 0)
                keep_series(c, c->stats_line);
            else
                fnw_wire_figures_parse(c->stats_line, &c->figures);
        }
        c->stats_len = 0;
    }
}

static void on_drain_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_child *c = t->data; /* a process the worker left behind holds the pipes */
    close_stream(c, 0);
    close_stream(c, 1);
    maybe_finish(c);
}

static void on_exit_status(struct ev_loop *loop, ev_child *w, int revents)
{
    fnw_child *c = w->data;
    ev_child_stop(loop, w);
    ev_timer_stop(loop, &c->kill_timer);
    c->exited = 1;
    c->status = w->rstatus;
    if (c->out[0].fd >= 0 || c->out[1].fd >= 0) {
        if (c->paused) { /* nobody reads: do not wait for the pipes */
            close_stream(c, 0);
            close_stream(c, 1);
        } else {
            ev_timer_start(loop, &c->drain_timer);
        }
    }
    maybe_finish(c);
}

static void on_kill_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_child *c = t->data;
    if (!c->exited) {
        fprintf(stderr, "fnworker pool: worker %s (pid %d) ignored SIGTERM for %.1f s; killing it\n", c->id,
                (int)c->pid, FNW_CHILDREN_KILL_AFTER_S);
        kill(c->pid, SIGKILL);
    }
}

/* The start deadline passed without the worker's "connected" line. */
static void on_start_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_child *c = t->data;
    fnw_children *cs = c->owner;
    if (c->exited || c->term_sent)
        return;
    char msg[FNW_CHILDREN_ID_MAX + 200];
    int n = snprintf(msg, sizeof msg,
                     "fnworker pool: worker %s (pid %d) did not connect to its "
                     "runner within %g s of starting (--start-timeout); stopping it\n",
                     c->id, (int)c->pid, cs->start_timeout_s);
    if (n > (int)sizeof msg - 1)
        n = (int)sizeof msg - 1;
    fputs(msg, stderr);
    if (c->ev.on_output) /* the launcher shows it in the boot log */
        c->ev.on_output(c->ev.ctx, c, 2, msg, (size_t)n);
    cs->stats.start_timeouts++;
    fnw_children_stop(cs, c);
}

static fnw_child *free_slot(fnw_children *cs)
{
    for (unsigned i = 0; i < cs->max; i++)
        if (!cs->slots[i].used)
            return &cs->slots[i];
    return NULL;
}

static int inherited(const char *var)
{
    static const char *const not_inherited[] = { "FNW_POOL_STATS_FD=", FNW_POOL_TOKEN_ENV "=",
                                                 FNW_POOL_TOKEN_FILE_ENV "=" };
    for (size_t i = 0; i < sizeof not_inherited / sizeof not_inherited[0]; i++)
        if (strncmp(var, not_inherited[i], strlen(not_inherited[i])) == 0)
            return 0;
    return 1;
}

/* The pool's environment with FNW_POOL_STATS_FD=3, without the launcher
 * token (one allocation). */
static char **worker_env(void)
{
    static char stats_var[] = "FNW_POOL_STATS_FD=3";
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = malloc((n + 2) * sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (inherited(environ[i]))
            env[k++] = environ[i];
    env[k++] = stats_var;
    env[k] = NULL;
    return env;
}

/* relay_fd >= 0: it becomes the worker's FNW_CHILDREN_RELAY_FD. */
static int spawn_worker(fnw_children *cs, char **argv, const int fds[3], int relay_fd, pid_t *pid,
                        fnw_error *err)
{
    char **env = worker_env();
    if (!env)
        return fnw_error_set(err, "out of memory");
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_adddup2(&fa, fds[2], 3);
    if (relay_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, relay_fd, FNW_CHILDREN_RELAY_FD);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, 0);
    int rc = posix_spawn(pid, cs->exe, &fa, &attr, argv, env);
    free(env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
        return fnw_error_set(err, "cannot start %s: %s", cs->exe, strerror(rc));
    return 0;
}

/* argv: exe, --id=, --provision_endpoint=, args..., [--relay-fd=N,] NULL;
 * in one allocation. */
static char **build_argv(const char *exe, const char *id, const char *ep, const char *const *args,
                         size_t n_args, int relay)
{
    size_t n = 3 + n_args + (relay ? 1 : 0), bytes = (n + 1) * sizeof(char *);
    size_t text = strlen(exe) + strlen(id) + strlen(ep) + 64;
    for (size_t i = 0; i < n_args; i++)
        text += strlen(args[i]) + 1;
    char **argv = malloc(bytes + text);
    if (!argv)
        return NULL;
    char *p = (char *)argv + bytes;
    argv[0] = p;
    p += sprintf(p, "%s", exe) + 1;
    argv[1] = p;
    p += sprintf(p, "--id=%s", id) + 1;
    argv[2] = p;
    p += sprintf(p, "--provision_endpoint=%s", ep) + 1;
    for (size_t i = 0; i < n_args; i++) {
        argv[3 + i] = p;
        p += sprintf(p, "%s", args[i]) + 1;
    }
    if (relay) {
        argv[3 + n_args] = p;
        p += sprintf(p, "--relay-fd=%d", FNW_CHILDREN_RELAY_FD) + 1;
    }
    argv[n] = NULL;
    return argv;
}

static void watch_child(fnw_children *cs, fnw_child *c, const int fds[3])
{
    for (int i = 0; i < 3; i++)
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    for (int i = 0; i < 2; i++) {
        ev_io_init(&c->out[i], on_readable, fds[i], EV_READ);
        c->out[i].data = c;
        ev_io_start(cs->loop, &c->out[i]);
    }
    ev_io_init(&c->stats, on_stats, fds[2], EV_READ);
    c->stats.data = c;
    ev_io_start(cs->loop, &c->stats);
    ev_child_init(&c->exit_w, on_exit_status, c->pid, 0);
    c->exit_w.data = c;
    ev_child_start(cs->loop, &c->exit_w);
    ev_timer_init(&c->kill_timer, on_kill_timeout, FNW_CHILDREN_KILL_AFTER_S, 0);
    c->kill_timer.data = c;
    ev_timer_init(&c->drain_timer, on_drain_timeout, DRAIN_AFTER_EXIT_S, 0);
    c->drain_timer.data = c;
    ev_timer_init(&c->start_timer, on_start_timeout, cs->start_timeout_s, 0);
    c->start_timer.data = c;
    if (cs->start_timeout_s > 0)
        ev_timer_start(cs->loop, &c->start_timer);
}

static int check_start(fnw_children *cs, const char *id, unsigned flags, fnw_error *err)
{
    if (strlen(id) >= FNW_CHILDREN_ID_MAX)
        return fnw_error_set(err, "worker id longer than %d bytes", FNW_CHILDREN_ID_MAX - 1);
    if ((flags & FNW_CHILD_BY_ID) && fnw_children_find(cs, id))
        return fnw_error_set(err, "a worker with id '%s' is already running", id);
    if (!free_slot(cs)) {
        cs->stats.rejected_full++;
        return fnw_error_set(err, "the pool is full: %u workers are running (--max-workers %u)",
                             cs->stats.running, cs->max);
    }
    return 0;
}

fnw_child *fnw_children_start_relayed(fnw_children *cs, const char *id, const char *provision_endpoint,
                                      const char *const *args, size_t n_args, int relay_fd,
                                      const fnw_child_events *ev, unsigned flags, fnw_error *err)
{
    if (check_start(cs, id, flags, err) < 0)
        return NULL;
    int p[3][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 } }; /* stdout, stderr, stats */
    char **argv = build_argv(cs->exe, id, provision_endpoint, args, n_args, relay_fd >= 0);
    pid_t pid = 0;
    int rc = -1, relay = -1;
    /* above the numbers the worker's descriptors take, so no dup2 of the
     * spawn overwrites it before it is itself moved */
    if (relay_fd >= 0 && (relay = fcntl(relay_fd, F_DUPFD_CLOEXEC, 10)) < 0)
        fnw_error_set(err, "cannot pass the relay socket: %s", strerror(errno));
    else if (!argv)
        fnw_error_set(err, "out of memory");
    else if (pipe2(p[0], O_CLOEXEC) < 0 || pipe2(p[1], O_CLOEXEC) < 0 || pipe2(p[2], O_CLOEXEC) < 0)
        fnw_error_set(err, "cannot create a pipe: %s", strerror(errno));
    else
        rc = spawn_worker(cs, argv, (int[3]){ p[0][1], p[1][1], p[2][1] }, relay, &pid, err);
    free(argv);
    if (relay >= 0)
        close(relay);
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 2; i++)
            if (p[k][i] >= 0 && (rc < 0 || i == 1))
                close(p[k][i]);
    if (rc < 0) {
        cs->stats.failed_to_start++;
        return NULL;
    }
    fnw_child *c = free_slot(cs);
    memset(c, 0, sizeof *c);
    c->owner = cs;
    c->used = 1;
    c->pid = pid;
    snprintf(c->id, sizeof c->id, "%s", id);
    c->by_id = (flags & FNW_CHILD_BY_ID) != 0;
    c->ev = *ev;
    c->started_at = ev_now(cs->loop);
    watch_child(cs, c, (int[3]){ p[0][0], p[1][0], p[2][0] });
    cs->stats.running++;
    cs->stats.started++;
    return c;
}

fnw_child *fnw_children_start(fnw_children *cs, const char *id, const char *provision_endpoint,
                              const char *const *args, size_t n_args, const fnw_child_events *ev,
                              unsigned flags, fnw_error *err)
{
    return fnw_children_start_relayed(cs, id, provision_endpoint, args, n_args, -1, ev, flags, err);
}

void fnw_children_stop(fnw_children *cs, fnw_child *c)
{
    if (c->exited || c->term_sent)
        return;
    c->term_sent = 1;
    kill(c->pid, SIGTERM);
    ev_timer_start(cs->loop, &c->kill_timer);
}

void fnw_children_detach(fnw_child *c)
{
    c->ev.on_output = NULL;
    c->ev.on_exit = NULL;
    c->ev.ctx = NULL;
    if (c->paused)
        fnw_children_pause(c->owner, c, 0);
}

void fnw_children_pause(fnw_children *cs, fnw_child *c, int paused)
{
    c->paused = paused;
    for (int i = 0; i < 2; i++) {
        if (c->out[i].fd < 0)
            continue;
        if (paused)
            ev_io_stop(cs->loop, &c->out[i]);
        else
            ev_io_start(cs->loop, &c->out[i]);
    }
}

void fnw_children_stop_all(fnw_children *cs)
{
    for (unsigned i = 0; i < cs->max; i++)
        if (cs->slots[i].used)
            fnw_children_stop(cs, &cs->slots[i]);
}

unsigned fnw_children_signal_all(fnw_children *cs, int sig)
{
    unsigned n = 0;
    for (unsigned i = 0; i < cs->max; i++)
        if (cs->slots[i].used && !cs->slots[i].exited && kill(cs->slots[i].pid, sig) == 0)
            n++;
    return n;
}

fnw_child *fnw_children_find(fnw_children *cs, const char *id)
{
    for (unsigned i = 0; i < cs->max; i++)
        if (cs->slots[i].used && cs->slots[i].by_id && strcmp(cs->slots[i].id, id) == 0)
            return &cs->slots[i];
    return NULL;
}

fnw_child *fnw_children_next(fnw_children *cs, fnw_child *prev)
{
    unsigned i = prev ? (unsigned)(prev - cs->slots) + 1 : 0;
    for (; i < cs->max; i++)
        if (cs->slots[i].used)
            return &cs->slots[i];
    return NULL;
}

fnw_children_stats fnw_children_get_stats(const fnw_children *cs)
{
    return cs->stats;
}

pid_t fnw_children_pid(const fnw_child *c)
{
    return c->pid;
}

const char *fnw_children_id(const fnw_child *c)
{
    return c->id;
}

double fnw_children_started_at(const fnw_child *c)
{
    return c->started_at;
}

void fnw_children_free(fnw_children *cs)
{
    if (!cs)
        return;
    for (unsigned i = 0; i < cs->max; i++) {
        fnw_child *c = &cs->slots[i];
        if (!c->used)
            continue;
        if (!c->exited) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, NULL, 0);
        }
        c->exited = 1;
        release(c);
    }
    free(cs->slots);
    free(cs->exe);
    free(cs);
}

const fnw_wire_figures *fnw_children_figures(const fnw_child *c)
{
    return &c->figures;
}

size_t fnw_children_series(const fnw_child *c, fnw_metric_series *const **out)
{
    *out = c->series;
    return c->nseries;
}
