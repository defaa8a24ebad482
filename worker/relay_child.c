/* worker/relay_child.c — PyFlink's Python worker as fnworker's child (see
 * relay_child.h): the spawn, the output pipe and its rings, reaping,
 * stopping, the restart backoff.
 *
 * Spawn: every signal blocked, fork, then in the child only
 * async-signal-safe calls (sigaction,
 * sigprocmask, prctl, getppid, dup2, fcntl, close_range or close, execve,
 * write, _exit) before the exec, because gRPC's threads may hold locks the
 * child would inherit. Everything the child needs (the argv, the candidate
 * paths of $PATH, the default signal action) is built before the fork.
 * posix_spawn cannot set PR_SET_PDEATHSIG, and a shell or trampoline in
 * between would be the process that gets it instead of Python. */
#include "worker/relay_child.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codecs/decimal.h"
#include "codecs/utf8.h"

extern char **environ;

#define BEAM_BOOT "pyflink.fn_execution.beam.beam_boot"
#define DRAIN_MAX (1u << 20) /* bytes read at the child's exit, at most */
#define READ_CHUNK 16384     /* bytes read per wake-up */
#define CUT_MARK "..."
#define REMOTE_LINE_MAX (FNW_RELAY_CHILD_LINE_MAX + 64) /* "C <n> " and a cut output line */
#define REMOTE_OUT_MAX 4096                             /* requests waiting for the socket */
#define REMOTE_ARG_MAX 256                              /* a relay id or an endpoint, in bytes */

/* Lines in arrival order, bounded by count and bytes; the oldest go first. */
typedef struct ring {
    char buf[FNW_RELAY_CHILD_RING_BYTES];
    size_t len[FNW_RELAY_CHILD_RING_LINES];
    uint64_t seq[FNW_RELAY_CHILD_RING_LINES];
    size_t n, used, max_lines;
} ring;

struct fnw_relay_child {
    struct ev_loop *loop;
    fnw_logger *log;
    fnw_relay_child_events ev;

    pid_t pid;  /* 0: none runs */
    int out_fd; /* the output pipe's read end; -1 when closed */
    ev_io out_w;
    ev_child child_w;
    ev_timer kill_timer;
    int stop_requested;
    double started_at; /* monotonic */
    double kill_after_s, quick_death_s, backoff_s;
    char *python; /* the running child's interpreter, for messages */

    /* the line being read */
    char line[FNW_RELAY_CHILD_LINE_MAX + sizeof CUT_MARK];
    size_t line_len;
    int line_cut;

    uint64_t seq;
    ring out, logs;

    unsigned quick_deaths;
    double backoff_until; /* monotonic; 0: none */

    /* the ask-the-launcher back-end (fnw_relay_child_new_remote) */
    int remote;
    int active; /* a child was started and has not ended (pid may be 0 until SPAWNED) */
    int rfd;    /* the pool's socket; -1 once closed */
    ev_io rd_w, wr_w;
    ev_timer lost_timer; /* after KILL: stop waiting for CHILDEXIT; 0 s: the socket failed */
    unsigned n;          /* the number of the current (or last) child */
    char rline[REMOTE_LINE_MAX];
    size_t rlen;
    int rcut;
    char wbuf[REMOTE_OUT_MAX];
    size_t wlen;
    char cmd[600]; /* what the launcher runs, for the boot log */

    int in_callback, free_pending; /* fnw_relay_child_free from inside on_exit */
};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- rings and text ---------------------------------------------------- */

static void ring_drop_first(ring *r)
{
    size_t l = r->len[0];
    memmove(r->buf, r->buf + l, r->used - l);
    memmove(r->len, r->len + 1, (r->n - 1) * sizeof r->len[0]);
    memmove(r->seq, r->seq + 1, (r->n - 1) * sizeof r->seq[0]);
    r->used -= l;
    r->n--;
}

static void ring_push(ring *r, uint64_t seq, const char *s, size_t len)
{
    if (len > sizeof r->buf)
        len = sizeof r->buf;
    while (r->n && (r->n == r->max_lines || r->used + len > sizeof r->buf))
        ring_drop_first(r);
    memcpy(r->buf + r->used, s, len);
    r->len[r->n] = len;
    r->seq[r->n] = seq;
    r->used += len;
    r->n++;
}

/* Makes s[0..n) printable valid UTF-8 in place: a byte that starts no valid
 * sequence, or a control character, becomes '?' (a tab stays; a newline
 * stays when keep_newlines; a carriage return before a newline or at the
 * end goes). Returns the new length. */
static size_t sanitize(char *s, size_t n, int keep_newlines)
{
    uint8_t *p = (uint8_t *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint8_t b = p[i];
        if (b < 0x80) {
            if (b == '\r' && (i + 1 == n || p[i + 1] == '\n')) {
                i++;
                continue;
            }
            int ok = b == '\t' || (b == '\n' && keep_newlines) || (b >= 0x20 && b != 0x7f);
            p[o++] = ok ? b : '?';
            i++;
            continue;
        }
        size_t k = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
        if (k && i + k <= n && fnw_utf8_valid(p + i, k)) {
            memmove(p + o, p + i, k);
            o += k;
            i += k;
        } else {
            p[o++] = '?';
            i++;
        }
    }
    return o;
}

/* One complete output line (the line buffer): to stderr and the ring. */
static void finish_line(fnw_relay_child *c)
{
    size_t n = sanitize(c->line, c->line_len, 0);
    if (c->line_cut) {
        memcpy(c->line + n, CUT_MARK, sizeof CUT_MARK - 1);
        n += sizeof CUT_MARK - 1;
    }
    if (!c->remote) /* the launcher shows its child's lines in the boot log itself */
        fprintf(stderr, "python[%d]: %.*s\n", (int)c->pid, (int)n, c->line);
    ring_push(&c->out, ++c->seq, c->line, n);
    c->line_len = 0;
    c->line_cut = 0;
}

static void take_output(fnw_relay_child *c, const char *data, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (data[i] == '\n') {
            finish_line(c);
        } else if (c->line_len < FNW_RELAY_CHILD_LINE_MAX) {
            c->line[c->line_len++] = data[i];
        } else {
            c->line_cut = 1;
        }
    }
}

void fnw_relay_child_note_log(fnw_relay_child *c, const char *line)
{
    if (!c || !line)
        return;
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    char buf[FNW_RELAY_CHILD_LINE_MAX + sizeof CUT_MARK];
    size_t o = 0;
    if (n > FNW_RELAY_CHILD_LINE_MAX) { /* keep the end: a traceback names the exception last */
        memcpy(buf, CUT_MARK, sizeof CUT_MARK - 1);
        o = sizeof CUT_MARK - 1;
        line += n - FNW_RELAY_CHILD_LINE_MAX;
        n = FNW_RELAY_CHILD_LINE_MAX;
    }
    memcpy(buf + o, line, n);
    n = o + sanitize(buf + o, n, 1);
    ring_push(&c->logs, ++c->seq, buf, n);
}

size_t fnw_relay_child_last_output(const fnw_relay_child *c, char *buf, size_t cap)
{
    if (!cap)
        return 0;
    buf[0] = '\0';
    if (!c)
        return 0;
    /* both rings merged in arrival order */
    struct {
        const char *s;
        size_t len;
    } e[FNW_RELAY_CHILD_RING_LINES + FNW_RELAY_CHILD_LOG_ENTRIES];
    size_t n = 0, i = 0, j = 0, oi = 0, oj = 0;
    while (i < c->out.n || j < c->logs.n) {
        if (j == c->logs.n || (i < c->out.n && c->out.seq[i] < c->logs.seq[j])) {
            e[n].s = c->out.buf + oi;
            e[n].len = c->out.len[i];
            oi += c->out.len[i++];
        } else {
            e[n].s = c->logs.buf + oj;
            e[n].len = c->logs.len[j];
            oj += c->logs.len[j++];
        }
        n++;
    }
    if (!n)
        return 0;
    /* the newest entries that fit; the newest alone keeps its end */
    size_t first = n, total = 0, room = cap - 1;
    while (first > 0 && total + e[first - 1].len + (first < n) <= room) {
        total += e[first - 1].len + (first < n);
        first--;
    }
    if (first == n) {
        size_t l = e[n - 1].len < room ? e[n - 1].len : room;
        memcpy(buf, e[n - 1].s + e[n - 1].len - l, l);
        buf[l] = '\0';
        return l;
    }
    size_t o = 0;
    for (size_t k = first; k < n; k++) {
        if (k > first)
            buf[o++] = '\n';
        memcpy(buf + o, e[k].s, e[k].len);
        o += e[k].len;
    }
    buf[o] = '\0';
    return o;
}

/* ---- the child's end --------------------------------------------------- */

static void close_output(fnw_relay_child *c)
{
    if (c->out_fd < 0)
        return;
    ev_io_stop(c->loop, &c->out_w);
    close(c->out_fd);
    c->out_fd = -1;
}

/* Reads what the pipe holds without blocking; closes it at EOF. max bounds
 * the bytes read. */
static void read_output(fnw_relay_child *c, size_t max)
{
    char buf[READ_CHUNK];
    size_t got = 0;
    while (c->out_fd >= 0 && got < max) {
        ssize_t n = read(c->out_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            close_output(c);
            break;
        }
        take_output(c, buf, (size_t)n);
        got += (size_t)n;
    }
}

static void on_output(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    fnw_relay_child *c = w->data;
    read_output(c, READ_CHUNK);
}

static void describe_status(int status, char *how, size_t cap)
{
    if (WIFEXITED(status))
        snprintf(how, cap, "exit code %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(how, cap, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(how, cap, "wait status %d", status);
}

static int child_ended(fnw_relay_child *c, const char *how);
static void really_free(fnw_relay_child *c);

static void on_child(struct ev_loop *loop, ev_child *w, int revents)
{
    (void)revents;
    fnw_relay_child *c = w->data;
    ev_child_stop(loop, w);
    /* what the child wrote before it ended is all in the pipe now (a
     * process it left behind may hold the pipe open: read, do not wait) */
    read_output(c, DRAIN_MAX);
    close_output(c);
    if (c->line_len || c->line_cut)
        finish_line(c);
    char how[160];
    describe_status(w->rstatus, how, sizeof how);
    child_ended(c, how);
}

/* Both back-ends: the child ended; the backoff's count; on_exit. Returns 1
 * when on_exit freed c. */
static int child_ended(fnw_relay_child *c, const char *how)
{
    ev_timer_stop(c->loop, &c->kill_timer);
    ev_timer_stop(c->loop, &c->lost_timer);
    double now = mono_now();
    if (!c->stop_requested) {
        if (now - c->started_at < c->quick_death_s) {
            if (++c->quick_deaths >= FNW_RELAY_CHILD_QUICK_DEATHS)
                c->backoff_until = now + c->backoff_s;
        } else {
            c->quick_deaths = 0;
        }
    }
    int pid = (int)c->pid;
    c->pid = 0;
    c->active = 0;
    c->stop_requested = 0;
    if (!c->ev.on_exit)
        return 0;
    c->in_callback = 1; /* a free from inside waits until it returns */
    c->ev.on_exit(c->ev.user, pid, how);
    c->in_callback = 0;
    if (!c->free_pending)
        return 0;
    really_free(c);
    return 1;
}

static void on_kill_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    fnw_relay_child *c = t->data;
    if (!c->pid)
        return;
    fnw_warn(c->log, "relay: PyFlink's Python worker (pid %d) did not stop within %g s of SIGTERM; killing it",
             (int)c->pid, c->kill_after_s);
    kill(c->pid, SIGKILL);
}

/* ---- the spawn --------------------------------------------------------- */

/* errno of a failed exec, in words; no locale, no allocation (the child
 * calls it after the fork). */
static const char *exec_error(int e)
{
    switch (e) {
    case ENOENT:
    case ENOTDIR:
        return "not found";
    case EACCES:
        return "permission denied (not executable?)";
    case ENOEXEC:
        return "not an executable the system can run";
    case ELOOP:
        return "too many levels of symbolic links";
    case ENAMETOOLONG:
        return "file name too long";
    case E2BIG:
        return "argument list or environment too long";
    case ENOMEM:
        return "out of memory";
    case ETXTBSY:
        return "text file busy";
    default:
        return "cannot be executed";
    }
}

static void write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void write_str(int fd, const char *s)
{
    write_all(fd, s, strlen(s)); /* strlen is async-signal-safe */
}

typedef struct spawn_plan {
    char *const *argv;
    char **paths; /* the files to try, in order (execvp's search, done before the fork) */
    size_t n_paths;
    const char *python;
    int out_fd;   /* the pipe's write end (>= 3) */
    pid_t parent; /* getppid() must stay this, or the parent died before prctl */
    int open_max;
} spawn_plan;

/* In the child: async-signal-safe calls only. Never returns. */
__attribute__((noreturn)) static void child_exec(const spawn_plan *p)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl); /* memset is async-signal-safe */
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            sigaction(s, &dfl, NULL); /* glibc's own signals refuse: fine */
    /* every signal was blocked across the fork: one that came meanwhile is
     * delivered now, to the default action, not to a copy of the parent's
     * handler (libev's would write into the parent's signal pipe) */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        _exit(127);
    if (getppid() != p->parent) /* the parent died before prctl: as if it came */
        kill(getpid(), SIGKILL);
    if (dup2(p->out_fd, 1) < 0 || dup2(p->out_fd, 2) < 0)
        _exit(127);
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
#endif
        for (int fd = 3; fd < p->open_max; fd++)
            close(fd);
    int err = ENOENT, eacces = 0;
    for (size_t i = 0; i < p->n_paths; i++) {
        execve(p->paths[i], p->argv, environ);
        err = errno;
        if (err == EACCES)
            eacces = 1;
        else if (err != ENOENT && err != ENOTDIR)
            break; /* as execvp: only a missing file moves on to the next directory */
    }
    if (eacces && (err == ENOENT || err == ENOTDIR))
        err = EACCES;
    write_str(2, p->python);
    write_str(2, ": ");
    write_str(2, exec_error(err));
    if (p->n_paths == 0 || strchr(p->python, '/') == NULL)
        write_str(2, " (looked in $PATH)");
    write_str(2, "\n");
    _exit(127);
}

static void free_paths(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

/* execvp's candidates for name: name itself when it has a '/', else each
 * directory of $PATH (an empty entry is the working directory). */
static int plan_paths(const char *name, char ***out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!*name)
        return 0;
    if (strchr(name, '/')) {
        char **p = malloc(sizeof *p);
        if (!p || !(p[0] = strdup(name))) {
            free(p);
            return -1;
        }
        *out = p;
        *n_out = 1;
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/bin:/usr/bin";
    size_t n = 1;
    for (const char *s = path; *s; s++)
        n += *s == ':';
    char **p = calloc(n, sizeof *p);
    if (!p)
        return -1;
    size_t k = 0;
    const char *s = path;
    for (;;) {
        const char *e = strchr(s, ':');
        size_t dl = e ? (size_t)(e - s) : strlen(s);
        size_t len = (dl ? dl : 1) + 1 + strlen(name) + 1;
        if (!(p[k] = malloc(len))) {
            free_paths(p, k);
            return -1;
        }
        snprintf(p[k], len, "%.*s/%s", (int)(dl ? dl : 1), dl ? s : ".", name);
        k++;
        if (!e)
            break;
        s = e + 1;
    }
    *out = p;
    *n_out = k;
    return 0;
}

/* A pipe whose ends are both >= 3 (so dup2 onto 1 and 2 never meets
 * itself), close-on-exec; the read end nonblocking. */
static int output_pipe(int fds[2])
{
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        if (fds[i] >= 3)
            continue;
        int hi = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
        if (hi < 0) {
            close(fds[0]);
            close(fds[1]);
            return -1;
        }
        close(fds[i]);
        fds[i] = hi;
    }
    int fl = fcntl(fds[0], F_GETFL);
    if (fl < 0 || fcntl(fds[0], F_SETFL, fl | O_NONBLOCK) != 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    return 0;
}

static int open_max(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 20))
        return 1 << 20;
    return (int)rl.rlim_cur;
}

/* ---- the ask-the-launcher back-end (pool mode) ------------------------- */

static void remote_close(fnw_relay_child *c)
{
    if (c->rfd < 0)
        return;
    ev_io_stop(c->loop, &c->rd_w);
    ev_io_stop(c->loop, &c->wr_w);
    close(c->rfd);
    c->rfd = -1;
    c->wlen = 0;
}

/* The socket failed or closed: a child it ran is lost. Reported from a
 * zero timer, so start and stop never call on_exit themselves. */
static void remote_lost(fnw_relay_child *c)
{
    remote_close(c);
    if (c->active) {
        ev_timer_stop(c->loop, &c->lost_timer);
        ev_timer_set(&c->lost_timer, 0., 0.);
        ev_timer_start(c->loop, &c->lost_timer);
    }
}

static ssize_t sock_write(int fd, const char *p, size_t n)
{
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK)
        w = write(fd, p, n);
    return w;
}

/* Writes what waits; 0, or -1 when the socket failed (then closed). */
static int remote_flush(fnw_relay_child *c)
{
    while (c->wlen) {
        ssize_t w = sock_write(c->rfd, c->wbuf, c->wlen);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            ev_io_start(c->loop, &c->wr_w);
            return 0;
        }
        if (w <= 0) {
            remote_lost(c);
            return -1;
        }
        memmove(c->wbuf, c->wbuf + w, c->wlen - (size_t)w);
        c->wlen -= (size_t)w;
    }
    ev_io_stop(c->loop, &c->wr_w);
    return 0;
}

static void on_remote_writable(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    remote_flush(w->data);
}

/* Queues one request line and writes what it can; -1 when it does not fit
 * or the socket is closed. */
static int remote_send(fnw_relay_child *c, const char *line)
{
    size_t n = strlen(line);
    if (c->rfd < 0 || c->wlen + n > sizeof c->wbuf)
        return -1;
    memcpy(c->wbuf + c->wlen, line, n);
    c->wlen += n;
    return remote_flush(c);
}

static int valid_arg(const char *s, const char *extra)
{
    size_t n = strlen(s);
    if (n == 0 || n > REMOTE_ARG_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
              ch == '_' || ch == '-' || strchr(extra, ch)))
            return 0;
    }
    return 1;
}

static int remote_start(fnw_relay_child *c, const fnw_relay_child_config *cfg, double now, fnw_error *err)
{
    if (c->rfd < 0)
        return fnw_error_set(err, "relay: cannot start PyFlink's Python worker: the pool's connection for it "
                                  "(--relay-fd) is closed (the pool or its launcher went away)");
    /* the launcher checks them too; here they must not break the line */
    if (!valid_arg(cfg->relay_id, ""))
        return fnw_error_set(err, "relay: the relay id '%.64s' is not 1 to %d of [A-Za-z0-9._-]",
                             cfg->relay_id, REMOTE_ARG_MAX);
    if (!valid_arg(cfg->provision_url, ":[]"))
        return fnw_error_set(err, "relay: the provision endpoint '%.64s' is not a host:port",
                             cfg->provision_url);
    char line[2 * REMOTE_ARG_MAX + 64];
    unsigned n = c->n + 1;
    snprintf(line, sizeof line, "SPAWN %u %s %s\n", n, cfg->relay_id, cfg->provision_url);
    if (remote_send(c, line) != 0)
        return fnw_error_set(err, "relay: cannot ask the launcher to start PyFlink's Python worker: %s",
                             c->rfd < 0 ? "the pool's connection (--relay-fd) closed"
                                        : "too many requests wait");
    c->n = n;
    c->active = 1;
    c->pid = 0;
    c->started_at = now;
    c->stop_requested = 0;
    free(c->python);
    c->python = strdup("$python");
    snprintf(c->cmd, sizeof c->cmd, "$python -m " BEAM_BOOT " --id=%s --provision_endpoint=%s", cfg->relay_id,
             cfg->provision_url);
    fnw_info(c->log, "relay: asking the launcher to start PyFlink's Python worker (%u): %s", n, c->cmd);
    return 0;
}

static void remote_stop(fnw_relay_child *c)
{
    c->stop_requested = 1;
    if (ev_is_active(&c->lost_timer))
        return;
    char line[64];
    snprintf(line, sizeof line, "KILL %u\n", c->n);
    if (remote_send(c, line) != 0) {
        remote_lost(c);
        return;
    }
    /* the launcher sends SIGTERM, then SIGKILL; its CHILDEXIT should follow */
    ev_timer_set(&c->lost_timer, 2 * c->kill_after_s, 0.);
    ev_timer_start(c->loop, &c->lost_timer);
}

static void on_lost_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    fnw_relay_child *c = t->data;
    if (!c->active)
        return;
    char how[200];
    if (c->rfd < 0)
        snprintf(how, sizeof how, "lost: the pool's connection (--relay-fd) closed");
    else
        snprintf(how, sizeof how, "lost: the launcher did not report its end within %g s of KILL",
                 2 * c->kill_after_s);
    child_ended(c, how);
}

/* One line from the pool (NUL-terminated at len, cut when longer than the
 * buffer). Lines of an earlier child, unknown or malformed lines are
 * dropped. Returns 1 when on_exit freed c. */
static int remote_line(fnw_relay_child *c, char *line, size_t len, int cut)
{
    const char *sp = strchr(line, ' ');
    if (!sp)
        return 0;
    size_t vlen = (size_t)(sp - line);
    const char *p = sp + 1;
    unsigned long long n, v;
    if (fnw_decimal_read(&p, UINT32_MAX, &n) != 0 || !c->active || n != c->n) {
        fnw_debug(c->log, "relay: ignored a line from the pool: %.80s", line);
        return 0;
    }
    if (vlen == 1 && line[0] == 'C') {
        size_t l = len - (size_t)(p - line);
        if (l > FNW_RELAY_CHILD_LINE_MAX) {
            l = FNW_RELAY_CHILD_LINE_MAX;
            cut = 1;
        }
        memcpy(c->line, p, l);
        c->line_len = l;
        c->line_cut = cut;
        finish_line(c);
    } else if (vlen == 7 && memcmp(line, "SPAWNED", 7) == 0) {
        if (c->pid || fnw_decimal_read(&p, INT32_MAX, &v) != 0 || v == 0 || *p)
            return 0;
        c->pid = (pid_t)v;
        fnw_info(c->log, "relay: starting PyFlink's Python worker: %s (pid %d, started by the launcher)",
                 c->cmd, (int)c->pid);
    } else if (vlen == 9 && memcmp(line, "SPAWNFAIL", 9) == 0) {
        size_t l = len - (size_t)(p - line);
        if (l > FNW_RELAY_CHILD_LINE_MAX)
            l = FNW_RELAY_CHILD_LINE_MAX;
        char how[FNW_RELAY_CHILD_LINE_MAX + 64];
        size_t h = (size_t)snprintf(how, sizeof how, "could not be started: ");
        memcpy(how + h, p, l);
        l = sanitize(how + h, l, 0);
        how[h + l] = '\0';
        ring_push(&c->out, ++c->seq, how, h + l); /* the last output says so too */
        return child_ended(c, how);
    } else if (vlen == 9 && memcmp(line, "CHILDEXIT", 9) == 0) {
        if (fnw_decimal_read(&p, 255, &v) != 0 || *p)
            return 0;
        char how[160];
        if (v > 128 && v - 128 < NSIG) /* the shell's convention: 128 + the signal */
            snprintf(how, sizeof how, "signal %d (%s)", (int)(v - 128), strsignal((int)(v - 128)));
        else
            snprintf(how, sizeof how, "exit code %d", (int)v);
        return child_ended(c, how);
    }
    return 0;
}

static void on_remote_readable(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    fnw_relay_child *c = w->data;
    char buf[READ_CHUNK];
    ssize_t n = read(c->rfd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        remote_close(c);
        if (c->active) {
            char how[] = "lost: the pool's connection (--relay-fd) closed";
            child_ended(c, how);
        }
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] != '\n') {
            if (c->rlen < sizeof c->rline - 1)
                c->rline[c->rlen++] = buf[i];
            else
                c->rcut = 1;
            continue;
        }
        c->rline[c->rlen] = '\0';
        size_t len = c->rlen;
        int cut = c->rcut;
        c->rlen = 0;
        c->rcut = 0;
        if (remote_line(c, c->rline, len, cut)) /* on_exit freed c */
            return;
    }
}

static void remote_free(fnw_relay_child *c)
{
    if (c->active && c->rfd >= 0) { /* best effort: the pool also stops it when this socket closes */
        char line[64];
        int l = snprintf(line, sizeof line, "KILL %u\n", c->n);
        if (c->wlen == 0) /* else a request is half written: the pool sees the socket close */
            (void)sock_write(c->rfd, line, (size_t)l);
    }
    remote_close(c);
}

fnw_relay_child *fnw_relay_child_new_remote(struct ev_loop *loop, fnw_logger *log,
                                            const fnw_relay_child_events *ev, int fd)
{
    if (fd < 0)
        return NULL;
    fnw_relay_child *c = fnw_relay_child_new(loop, log, ev);
    if (!c) {
        close(fd);
        return NULL;
    }
    c->remote = 1;
    c->rfd = fd;
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    ev_io_set(&c->rd_w, fd, EV_READ);
    ev_io_set(&c->wr_w, fd, EV_WRITE);
    ev_io_start(loop, &c->rd_w);
    return c;
}

/* ---- the interface ----------------------------------------------------- */

fnw_relay_child *fnw_relay_child_new(struct ev_loop *loop, fnw_logger *log, const fnw_relay_child_events *ev)
{
    fnw_relay_child *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->loop = loop;
    c->log = log;
    if (ev)
        c->ev = *ev;
    c->out_fd = -1;
    c->out.max_lines = FNW_RELAY_CHILD_RING_LINES;
    c->logs.max_lines = FNW_RELAY_CHILD_LOG_ENTRIES;
    ev_init(&c->out_w, on_output);
    c->out_w.data = c;
    ev_init(&c->child_w, on_child);
    c->child_w.data = c;
    ev_init(&c->kill_timer, on_kill_timer);
    c->kill_timer.data = c;
    ev_init(&c->lost_timer, on_lost_timer);
    c->lost_timer.data = c;
    c->rfd = -1;
    ev_init(&c->rd_w, on_remote_readable);
    c->rd_w.data = c;
    ev_init(&c->wr_w, on_remote_writable);
    c->wr_w.data = c;
    return c;
}

int fnw_relay_child_pid(const fnw_relay_child *c)
{
    return c ? (int)c->pid : 0;
}

int fnw_relay_child_running(const fnw_relay_child *c)
{
    return c && c->active;
}

/* "<python> -m <beam_boot> --id=..." for the boot log and messages. */
static void describe_command(char *const *argv, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; argv[i] && o + 1 < cap; i++) {
        int n = snprintf(out + o, cap - o, "%s%s", i ? " " : "", argv[i]);
        if (n < 0)
            break;
        o += (size_t)n < cap - o ? (size_t)n : cap - o - 1;
    }
}

static char *flag_arg(const char *flag, const char *value)
{
    size_t a = strlen(flag), b = strlen(value);
    char *s = malloc(a + b + 1);
    if (s) {
        memcpy(s, flag, a);
        memcpy(s + a, value, b + 1);
    }
    return s;
}

static int refuse_backoff(fnw_relay_child *c, double now, fnw_error *err)
{
    char last[600];
    size_t n = fnw_relay_child_last_output(c, last, sizeof last);
    return fnw_error_set(err,
                         "PyFlink's Python worker ('%s -m " BEAM_BOOT
                         "') ended within %g s of its start %u times "
                         "in a row; it is not started again for another %.0f s. Its last output: %s",
                         fnw_relay_child_python(c), c->quick_death_s, c->quick_deaths,
                         c->backoff_until - now + 0.5, n ? last : "(none)");
}

int fnw_relay_child_start(fnw_relay_child *c, const fnw_relay_child_config *cfg, fnw_error *err)
{
    if (c->active)
        return fnw_error_set(err, "PyFlink's Python worker already runs (pid %d)", (int)c->pid);
    if (!cfg || !cfg->relay_id || !cfg->provision_url)
        return fnw_error_set(err,
                             "relay: starting PyFlink's Python worker needs a relay id and a provision endpoint");
    double now = mono_now();
    if (c->backoff_until > now)
        return refuse_backoff(c, now, err);

    const char *python = cfg->python;
    if (!python || !*python)
        python = getenv("python");
    if (!python || !*python)
        python = "python";
    c->kill_after_s = cfg->kill_after_s > 0 ? cfg->kill_after_s : FNW_RELAY_CHILD_KILL_AFTER_S;
    c->quick_death_s = cfg->quick_death_s > 0 ? cfg->quick_death_s : FNW_RELAY_CHILD_QUICK_DEATH_S;
    c->backoff_s = cfg->backoff_s > 0 ? cfg->backoff_s : FNW_RELAY_CHILD_BACKOFF_S;
    if (c->remote)
        return remote_start(c, cfg, now, err);

    int rc = -1;
    char *id_arg = NULL, *ep_arg = NULL, *dir_arg = NULL, *py = strdup(python);
    char **paths = NULL;
    size_t n_paths = 0;
    int fds[2] = { -1, -1 };
    if (!py || !(id_arg = flag_arg("--id=", cfg->relay_id)) ||
        !(ep_arg = flag_arg("--provision_endpoint=", cfg->provision_url)) ||
        (cfg->semi_persist_dir && !(dir_arg = flag_arg("--semi_persist_dir=", cfg->semi_persist_dir))) ||
        plan_paths(python, &paths, &n_paths) != 0) {
        fnw_error_set(err, "relay: out of memory starting PyFlink's Python worker");
        goto out;
    }
    char *argv[] = { py, "-m", BEAM_BOOT, id_arg, ep_arg, dir_arg, NULL };
    if (output_pipe(fds) != 0) {
        fnw_error_set(err, "relay: cannot start PyFlink's Python worker: pipe: %s", strerror(errno));
        goto out;
    }
    spawn_plan plan = { .argv = argv,
                        .paths = paths,
                        .n_paths = n_paths,
                        .python = py,
                        .out_fd = fds[1],
                        .parent = getpid(),
                        .open_max = open_max() };
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    pid_t pid = fork();
    if (pid == 0)
        child_exec(&plan);
    int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (pid < 0) {
        errno = fork_errno;
        fnw_error_set(err, "relay: cannot start PyFlink's Python worker: fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        goto out;
    }
    close(fds[1]);
    c->pid = pid;
    c->active = 1;
    c->started_at = now;
    c->stop_requested = 0;
    c->line_len = 0;
    c->line_cut = 0;
    close_output(c);
    c->out_fd = fds[0];
    ev_io_set(&c->out_w, fds[0], EV_READ);
    ev_io_start(c->loop, &c->out_w);
    ev_child_set(&c->child_w, pid, 0);
    ev_child_start(c->loop, &c->child_w);
    free(c->python);
    c->python = py;
    py = NULL;
    char cmd[1024];
    describe_command(argv, cmd, sizeof cmd);
    fnw_info(c->log, "relay: starting PyFlink's Python worker: %s (pid %d)", cmd, (int)pid);
    rc = 0;
out:
    free_paths(paths, n_paths);
    free(py);
    free(id_arg);
    free(ep_arg);
    free(dir_arg);
    return rc;
}

void fnw_relay_child_stop(fnw_relay_child *c)
{
    if (!c || !c->active)
        return;
    if (c->remote) {
        remote_stop(c);
        return;
    }
    c->stop_requested = 1;
    kill(c->pid, SIGTERM);
    if (!ev_is_active(&c->kill_timer)) {
        ev_timer_set(&c->kill_timer, c->kill_after_s, 0.);
        ev_timer_start(c->loop, &c->kill_timer);
    }
}

void fnw_relay_child_free(fnw_relay_child *c)
{
    if (!c)
        return;
    if (c->in_callback) {
        c->free_pending = 1;
        return;
    }
    really_free(c);
}

static void really_free(fnw_relay_child *c)
{
    ev_timer_stop(c->loop, &c->kill_timer);
    ev_timer_stop(c->loop, &c->lost_timer);
    if (c->remote) {
        remote_free(c);
        free(c->python);
        free(c);
        return;
    }
    ev_child_stop(c->loop, &c->child_w);
    if (c->pid) {
        kill(c->pid, SIGKILL);
        int status;
        while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
            ; /* ECHILD: libev reaped it already */
    }
    close_output(c);
    free(c->python);
    free(c);
}

const char *fnw_relay_child_python(const fnw_relay_child *c)
{
    return c && c->python ? c->python : "python";
}
