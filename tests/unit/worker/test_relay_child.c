/* tests/unit/worker/test_relay_child.c — PyFlink's Python worker as
 * fnworker's child, with a small shell script in a temp dir standing in for
 * `python` (it gets the fixed argv `-m pyflink.fn_execution.beam.beam_boot
 * --id=... --provision_endpoint=...`): the argv, the environment and the
 * working directory reach it, and nothing else does (no fd above 2, no
 * ignored or blocked signal); $python picks the interpreter; the boot log
 * line; its output lines reach stderr as python[<pid>]: and the ring (long
 * lines cut, bytes that are not printable UTF-8 replaced, the ring's line
 * and byte bounds, a last line without a newline); the log ring merged in
 * order, a long entry keeping its end, a small cap keeping the newest;
 * exit codes and signals as on_exit reports them; stop, and stop escalating
 * to SIGKILL for a child that ignores SIGTERM; a python that cannot be
 * executed ends with exit code 127 and says why; the backoff after three
 * quick deaths (and none for children asked to stop); free kills and reaps;
 * and a SIGKILLed parent takes the child with it (PR_SET_PDEATHSIG).
 *
 * Every test runs on ev_default_loop (libev reaps children only there) in
 * its own process (Check's fork mode, the default). */
#include <check.h>

#include "tests/unit/check_run.h"
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "worker/relay_child.h"

typedef struct fixture {
    struct ev_loop *loop;
    fnw_logger lg;
    fnw_relay_child *c;
    char dir[64];
    char err_path[128]; /* fnworker's stderr, as the test sees it */
    int exits;
    int exit_pid;
    char how[160];
    char path[4096], cwd[4096]; /* $PATH and the working directory, restored by fx_free */
} fixture;

static void on_exit_cb(void *user, int pid, const char *how)
{
    fixture *f = user;
    f->exits++;
    f->exit_pid = pid;
    snprintf(f->how, sizeof f->how, "%s", how);
}

static void fx_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    ck_assert_ptr_nonnull(getcwd(f->cwd, sizeof f->cwd));
    snprintf(f->dir, sizeof f->dir, "/tmp/fnw-relay-child-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    snprintf(f->err_path, sizeof f->err_path, "%s/stderr", f->dir);
    ck_assert_ptr_nonnull(freopen(f->err_path, "w", stderr));
    setvbuf(stderr, NULL, _IONBF, 0);
    f->loop = ev_default_loop(EVFLAG_AUTO);
    fnw_log_init(&f->lg, f->loop, FNW_LOG_INFO);
    fnw_relay_child_events ev = { .user = f, .on_exit = on_exit_cb };
    f->c = fnw_relay_child_new(f->loop, &f->lg, &ev);
    ck_assert_ptr_nonnull(f->c);
}

static void fx_free(fixture *f)
{
    fnw_relay_child_free(f->c);
    fnw_log_free(&f->lg);
    setenv("PATH", f->path, 1);
    ck_assert_int_eq(chdir(f->cwd), 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "/bin/rm -rf %s", f->dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Writes an executable script <dir>/<name> with body after the shebang;
 * returns its path (static buffer per call site is enough here). */
static const char *script(fixture *f, const char *name, const char *body)
{
    static char path[4][160];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, 160, "%s/%s", f->dir, name);
    FILE *fp = fopen(p, "w");
    ck_assert_ptr_nonnull(fp);
    fprintf(fp, "#!/bin/sh\n%s\n", body);
    fclose(fp);
    ck_assert_int_eq(chmod(p, 0755), 0);
    return p;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void tick(struct ev_loop *loop, ev_timer *t, int revents) {}

/* Runs the loop until *counter reaches want or timeout_s passes; 0 when it did. */
static int run_until_exits(fixture *f, int want, double timeout_s)
{
    ev_timer t;
    ev_timer_init(&t, tick, 0.01, 0.01);
    ev_timer_start(f->loop, &t);
    double end = now_s() + timeout_s;
    while (f->exits < want && now_s() < end)
        ev_run(f->loop, EVRUN_ONCE);
    ev_timer_stop(f->loop, &t);
    return f->exits >= want ? 0 : -1;
}

/* Runs the loop until the last output contains s. */
static int run_until_output(fixture *f, const char *s, double timeout_s)
{
    ev_timer t;
    ev_timer_init(&t, tick, 0.01, 0.01);
    ev_timer_start(f->loop, &t);
    double end = now_s() + timeout_s;
    char buf[16384];
    int found = 0;
    while (!found && now_s() < end) {
        ev_run(f->loop, EVRUN_ONCE);
        fnw_relay_child_last_output(f->c, buf, sizeof buf);
        found = strstr(buf, s) != NULL;
    }
    ev_timer_stop(f->loop, &t);
    return found ? 0 : -1;
}

static const char *last(fixture *f)
{
    static char buf[16384];
    fnw_relay_child_last_output(f->c, buf, sizeof buf);
    return buf;
}

static char *read_stderr(fixture *f)
{
    static char buf[65536];
    FILE *fp = fopen(f->err_path, "r");
    ck_assert_ptr_nonnull(fp);
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static fnw_relay_child_config cfg_for(const char *python)
{
    fnw_relay_child_config cfg = { .python = python,
                                   .relay_id = "w1-py-0123abcd",
                                   .provision_url = "127.0.0.1:40123" };
    return cfg;
}

#define ck_assert_contains(hay, needle) \
    do { \
        const char *h_ = (hay), *n_ = (needle); \
        ck_assert_msg(strstr(h_, n_) != NULL, "expected \"%s\" in:\n%s", n_, h_); \
    } while (0)

START_TEST(argv_environment_and_cwd_reach_the_child_and_nothing_else)
{
    fixture f;
    fx_init(&f);
    const char *py = script(&f, "python",
                            "echo \"argv: $*\"\n"
                            "echo \"env: $FNW_RELAY_CHILD_TEST\"\n"
                            "echo \"cwd: $(pwd)\"\n"
                            "[ -e /proc/$$/fd/9 ] && echo 'fd9: open' || echo 'fd9: closed'\n"
                            "grep -E '^(SigBlk|SigIgn):' /proc/self/status\n"
                            "echo 'to stderr' >&2\n"
                            "exit 0");
    setenv("python", py, 1); /* python NULL: $python */
    setenv("FNW_RELAY_CHILD_TEST", "reached", 1);
    ck_assert_int_eq(chdir(f.dir), 0);
    /* what the child must not get: an fd without close-on-exec (gRPC's are
     * not all marked), an ignored and a blocked signal */
    ck_assert_int_eq(dup2(open("/dev/null", O_RDONLY), 9), 9);
    signal(SIGUSR1, SIG_IGN);
    sigset_t blk;
    sigemptyset(&blk);
    sigaddset(&blk, SIGUSR2);
    sigprocmask(SIG_BLOCK, &blk, NULL);

    fnw_relay_child_config cfg = cfg_for(NULL);
    cfg.semi_persist_dir = "/tmp/semi";
    fnw_error err = { { 0 } };
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0);
    int pid = fnw_relay_child_pid(f.c);
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(run_until_exits(&f, 1, 5), 0);
    ck_assert_int_eq(f.exit_pid, pid);
    ck_assert_str_eq(f.how, "exit code 0");
    ck_assert_int_eq(fnw_relay_child_pid(f.c), 0);

    const char *out = last(&f);
    ck_assert_contains(out, "argv: -m pyflink.fn_execution.beam.beam_boot --id=w1-py-0123abcd "
                            "--provision_endpoint=127.0.0.1:40123 --semi_persist_dir=/tmp/semi\n");
    ck_assert_contains(out, "env: reached\n");
    char want[128];
    snprintf(want, sizeof want, "cwd: %s\n", f.dir);
    ck_assert_contains(out, want);
    ck_assert_contains(out, "fd9: closed");
    ck_assert_contains(out, "SigBlk:\t0000000000000000");
    /* no ignored signal, but glibc's own two (32, 33: its sigaction refuses
     * them, and the exec'd program's libc sets them up anew) */
    const char *ign = strstr(out, "SigIgn:\t");
    ck_assert_ptr_nonnull(ign);
    unsigned long long ignored = strtoull(ign + 8, NULL, 16);
    ck_assert_msg((ignored & ~0x180000000ull) == 0, "ignored signals: %llx", ignored);
    ck_assert_contains(out, "to stderr");

    const char *log = read_stderr(&f);
    snprintf(want, sizeof want, "python[%d]: env: reached\n", pid);
    ck_assert_contains(log, want);
    snprintf(want, sizeof want, "python[%d]: to stderr\n", pid);
    ck_assert_contains(log, want);
    char boot[512];
    snprintf(boot, sizeof boot,
             "relay: starting PyFlink's Python worker: %s -m pyflink.fn_execution.beam.beam_boot "
             "--id=w1-py-0123abcd --provision_endpoint=127.0.0.1:40123 --semi_persist_dir=/tmp/semi (pid %d)\n",
             py, pid);
    ck_assert_contains(log, boot);
    fx_free(&f);
}
END_TEST

START_TEST(python_defaults_to_python_on_the_path)
{
    fixture f;
    fx_init(&f);
    script(&f, "python", "echo \"I am $0\"; exit 0");
    unsetenv("python");
    char path[512];
    snprintf(path, sizeof path, "/nonexistent-fnw:%s:/usr/bin:/bin", f.dir);
    setenv("PATH", path, 1);
    fnw_relay_child_config cfg = cfg_for(NULL);
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_exits(&f, 1, 5), 0);
    ck_assert_str_eq(f.how, "exit code 0");
    char want[128];
    snprintf(want, sizeof want, "I am %s/python", f.dir);
    ck_assert_contains(last(&f), want);
    fx_free(&f);
}
END_TEST

START_TEST(output_lines_are_cut_cleaned_and_bounded)
{
    fixture f;
    fx_init(&f);
    const char *py = script(&f, "python",
                            "head -c 10000 /dev/zero | tr '\\0' x; echo\n"
                            "echo after-long\n"
                            "printf 'bad \\377 esc \\033[31m tab\\tok \\303\\251t\\303\\251 crlf\\r\\n'\n"
                            "printf 'no newline at the end'\n"
                            "exit 0");
    fnw_relay_child_config cfg = cfg_for(py);
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_exits(&f, 1, 5), 0);
    const char *out = last(&f);
    /* the long line: its first 4096 bytes and the cut mark */
    const char *x = strchr(out, 'x');
    ck_assert_ptr_nonnull(x);
    size_t run = strspn(x, "x");
    ck_assert_uint_eq(run, FNW_RELAY_CHILD_LINE_MAX);
    ck_assert(strncmp(x + run, "...\nafter-long\n", 15) == 0);
    ck_assert_contains(out, "bad ? esc ?[31m tab\tok \xc3\xa9t\xc3\xa9 crlf\nno newline at the end");
    ck_assert_uint_eq(out[strlen(out) - 1], 'd'); /* no trailing newline */
    fx_free(&f);

    /* the bounds: 50 lines, 8 KiB */
    fx_init(&f);
    py = script(&f, "python", "i=0; while [ $i -lt 60 ]; do echo line-$i; i=$((i+1)); done; exit 0");
    cfg = cfg_for(py);
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_exits(&f, 1, 5), 0);
    out = last(&f);
    ck_assert(strncmp(out, "line-10\n", 8) == 0);
    ck_assert_contains(out, "line-59");
    ck_assert_ptr_null(strstr(out, "line-9\n"));
    fx_free(&f);

    fx_init(&f);
    py = script(&f, "python",
                "for c in a b c; do head -c 3000 /dev/zero | tr '\\0' $c; echo; done\n"
                "echo short; exit 0");
    cfg = cfg_for(py);
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_exits(&f, 1, 5), 0);
    out = last(&f);
    ck_assert_ptr_null(strchr(out, 'a')); /* 4 lines of 9 KiB: the oldest went */
    ck_assert_contains(out, "bbb");
    ck_assert_contains(out, "ccc\nshort");
    fx_free(&f);
}
END_TEST

START_TEST(log_entries_merge_in_order_and_small_caps_keep_the_newest)
{
    fixture f;
    fx_init(&f);
    char buf[64];
    ck_assert_uint_eq(fnw_relay_child_last_output(f.c, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    const char *py = script(&f, "python", "echo from-stdout; exit 0");
    fnw_relay_child_config cfg = cfg_for(py);
    fnw_relay_child_note_log(f.c, "log-1");
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_exits(&f, 1, 5), 0);
    ck_assert_str_eq(last(&f), "log-1\nfrom-stdout");
    /* a cap too small for all: the newest entries that fit */
    ck_assert_uint_eq(fnw_relay_child_last_output(f.c, buf, 18), 17);
    ck_assert_str_eq(buf, "log-1\nfrom-stdout");
    ck_assert_uint_eq(fnw_relay_child_last_output(f.c, buf, 17), 11);
    ck_assert_str_eq(buf, "from-stdout");
    ck_assert_uint_eq(fnw_relay_child_last_output(f.c, buf, 5), 4);
    ck_assert_str_eq(buf, "dout"); /* the newest alone too long: its end */
    ck_assert_uint_eq(fnw_relay_child_last_output(f.c, buf, 1), 0);

    fnw_relay_child_note_log(f.c, "Traceback (most recent call last):\n  File \"x.py\"\nValueError: boom\n");
    ck_assert_str_eq(last(&f),
                     "log-1\nfrom-stdout\nTraceback (most recent call last):\n  File \"x.py\"\nValueError: boom");
    ck_assert_uint_eq(fnw_relay_child_last_output(f.c, buf, 17), 16);
    ck_assert_str_eq(buf, "ValueError: boom");

    /* a long entry keeps its end; the log ring keeps 20 entries */
    char big[FNW_RELAY_CHILD_LINE_MAX + 100];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    memcpy(big + sizeof big - 9, "END-HERE", 8);
    fnw_relay_child_note_log(f.c, big);
    const char *out = last(&f);
    ck_assert_contains(out, "boom\n...yyy");
    ck_assert_contains(out, "yyyEND-HERE");
    for (int i = 0; i < 25; i++) {
        snprintf(buf, sizeof buf, "entry-%d", i);
        fnw_relay_child_note_log(f.c, buf);
    }
    out = last(&f);
    ck_assert_ptr_null(strstr(out, "entry-4\n"));
    ck_assert(strncmp(out, "from-stdout\nentry-5\n", 20) == 0); /* log-1 went: 20 entries */
    fx_free(&f);
}
END_TEST

START_TEST(exit_codes_and_signals_are_reported)
{
    fixture f;
    fx_init(&f);
    const char *py = script(&f, "python", "echo bye; exit 3");
    fnw_relay_child_config cfg = cfg_for(py);
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_exits(&f, 1, 5), 0);
    ck_assert_str_eq(f.how, "exit code 3");
    ck_assert_str_eq(last(&f), "bye");

    py = script(&f, "python2", "echo dying; kill -9 $$");
    cfg = cfg_for(py);
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_exits(&f, 2, 5), 0);
    ck_assert_str_eq(f.how, "signal 9 (Killed)");
    ck_assert_str_eq(last(&f), "bye\ndying"); /* the ring spans children */
    fx_free(&f);
}
END_TEST

START_TEST(stop_terminates_and_escalates_to_sigkill)
{
    fixture f;
    fx_init(&f);
    const char *py = script(&f, "python", "echo ready; exec sleep 10");
    fnw_relay_child_config cfg = cfg_for(py);
    cfg.kill_after_s = 0.3;
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_output(&f, "ready", 5), 0);
    fnw_relay_child_stop(f.c);
    ck_assert_int_eq(run_until_exits(&f, 1, 5), 0);
    ck_assert_str_eq(f.how, "signal 15 (Terminated)"); /* not the SIGKILL 0.3 s later */

    /* one that ignores SIGTERM (exec keeps an ignored signal ignored) */
    py = script(&f, "python2", "trap '' TERM; echo ready2; exec sleep 10");
    cfg = cfg_for(py);
    cfg.kill_after_s = 0.3;
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    int pid = fnw_relay_child_pid(f.c);
    ck_assert_int_eq(run_until_output(&f, "ready2", 5), 0);
    double t0 = now_s();
    fnw_relay_child_stop(f.c);
    fnw_relay_child_stop(f.c); /* twice: still one SIGKILL timer */
    ck_assert_int_eq(run_until_exits(&f, 2, 5), 0);
    double took = now_s() - t0;
    ck_assert_str_eq(f.how, "signal 9 (Killed)");
    ck_assert_int_eq(f.exit_pid, pid);
    ck_assert_msg(took >= 0.29 && took < 2.0, "took %.3f s", took);
    char want[160];
    snprintf(want, sizeof want, "Python worker (pid %d) did not stop within 0.3 s of SIGTERM; killing it",
             pid);
    ck_assert_contains(read_stderr(&f), want);
    fnw_relay_child_stop(f.c); /* none runs: nothing */
    ck_assert_int_eq(f.exits, 2);
    fx_free(&f);
}
END_TEST

static int parent_sigterms;
static void on_parent_sigterm(struct ev_loop *loop, ev_signal *w, int revents)
{
    parent_sigterms++;
}

/* fnworker handles SIGTERM through libev, whose handler writes into the
 * loop's pipe. A SIGTERM that reaches the child between its fork and its
 * exec must not run a copy of that handler (the parent would shut down). */
START_TEST(a_sigterm_before_the_exec_stays_in_the_child)
{
    fixture f;
    fx_init(&f);
    ev_signal sw;
    ev_signal_init(&sw, on_parent_sigterm, SIGTERM);
    ev_signal_start(f.loop, &sw);
    const char *py = script(&f, "python", "exec sleep 10");
    fnw_relay_child_config cfg = cfg_for(py);
    for (int i = 1; i <= 30; i++) {
        ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
        fnw_relay_child_stop(f.c); /* at once: often before the exec */
        ck_assert_int_eq(run_until_exits(&f, i, 5), 0);
        ck_assert_str_eq(f.how, "signal 15 (Terminated)");
    }
    ck_assert_int_eq(parent_sigterms, 0);
    ev_signal_stop(f.loop, &sw);
    fx_free(&f);
}
END_TEST

START_TEST(a_python_that_cannot_run_ends_with_127_and_says_why)
{
    fixture f;
    fx_init(&f);
    fnw_relay_child_config cfg = cfg_for("/nonexistent-fnw/python3");
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_exits(&f, 1, 5), 0);
    ck_assert_str_eq(f.how, "exit code 127");
    ck_assert_str_eq(last(&f), "/nonexistent-fnw/python3: not found");

    setenv("PATH", "/nonexistent-fnw", 1);
    cfg = cfg_for("python-fnw-missing");
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_exits(&f, 2, 5), 0);
    ck_assert_str_eq(f.how, "exit code 127");
    ck_assert_contains(last(&f), "python-fnw-missing: not found (looked in $PATH)");

    char path[160];
    snprintf(path, sizeof path, "%s/not-executable", f.dir);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fclose(fp);
    cfg = cfg_for(path);
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_exits(&f, 3, 5), 0);
    ck_assert_str_eq(f.how, "exit code 127");
    char want[200];
    snprintf(want, sizeof want, "%s: permission denied", path);
    ck_assert_contains(last(&f), want);
    fx_free(&f);
}
END_TEST

START_TEST(three_quick_deaths_in_a_row_hold_restarts_off)
{
    fixture f;
    fx_init(&f);
    const char *py = script(&f, "python", "echo \"No module named 'pyflink'\"; exit 1");
    fnw_relay_child_config cfg = cfg_for(py);
    cfg.backoff_s = 0.5;
    fnw_error err = { { 0 } };
    for (int i = 1; i <= 3; i++) {
        ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0);
        ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), -1); /* one at a time */
        ck_assert_contains(err.msg, "already runs");
        ck_assert_int_eq(run_until_exits(&f, i, 5), 0);
    }
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), -1);
    ck_assert_int_eq(fnw_relay_child_pid(f.c), 0);
    ck_assert_contains(err.msg, "ended within 5 s of its start 3 times in a row");
    ck_assert_contains(err.msg, "not started again for another 1 s"); /* 0.5 s, rounded */
    ck_assert_contains(err.msg, "Its last output: No module named 'pyflink'");
    ck_assert_int_eq(f.exits, 3);

    usleep(550 * 1000); /* the backoff is over: one more try ... */
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0);
    ck_assert_int_eq(run_until_exits(&f, 4, 5), 0);
    /* ... and it died quickly again: held off at once */
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), -1);
    ck_assert_contains(err.msg, "4 times in a row");
    fx_free(&f);

    /* children asked to stop are no quick deaths; one that lived resets */
    fx_init(&f);
    py = script(&f, "python", "echo up; exec sleep 10");
    cfg = cfg_for(py);
    cfg.quick_death_s = 0.2;
    for (int i = 1; i <= 4; i++) {
        ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0);
        fnw_relay_child_stop(f.c);
        ck_assert_int_eq(run_until_exits(&f, i, 5), 0);
    }
    py = script(&f, "python2", "exit 1");
    cfg = cfg_for(py);
    cfg.quick_death_s = 0.2;
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0);
        ck_assert_int_eq(run_until_exits(&f, f.exits + 1, 5), 0);
    }
    py = script(&f, "python3", "sleep 0.3; exit 1");
    cfg = cfg_for(py);
    cfg.quick_death_s = 0.2;
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0); /* lives 0.3 s: resets the count */
    ck_assert_int_eq(run_until_exits(&f, f.exits + 1, 5), 0);
    py = script(&f, "python4", "exit 1");
    cfg = cfg_for(py);
    cfg.quick_death_s = 0.2;
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0);
        ck_assert_int_eq(run_until_exits(&f, f.exits + 1, 5), 0);
    }
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0); /* two in a row only */
    ck_assert_int_eq(run_until_exits(&f, f.exits + 1, 5), 0);
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), -1); /* now three */
    fx_free(&f);
}
END_TEST

START_TEST(free_kills_and_reaps_without_callbacks)
{
    fixture f;
    fx_init(&f);
    const char *py = script(&f, "python", "trap '' TERM; exec sleep 10");
    fnw_relay_child_config cfg = cfg_for(py);
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    int pid = fnw_relay_child_pid(f.c);
    fnw_relay_child_free(f.c);
    f.c = NULL;
    ck_assert_int_eq(kill(pid, 0), -1); /* reaped: no such process, not even a zombie */
    ck_assert_int_eq(errno, ESRCH);
    ck_assert_int_eq(f.exits, 0);
    fx_free(&f);
}
END_TEST

static void exit_then_free(void *user, int pid, const char *how)
{
    fixture *f = user;
    f->exits++;
    fnw_relay_child_free(f->c); /* allowed from inside on_exit */
    f->c = NULL;
}

START_TEST(on_exit_may_free_the_object)
{
    fixture f;
    fx_init(&f);
    fnw_relay_child_free(f.c);
    fnw_relay_child_events ev = { .user = &f, .on_exit = exit_then_free };
    f.c = fnw_relay_child_new(f.loop, &f.lg, &ev);
    const char *py = script(&f, "python", "echo x; exit 0");
    fnw_relay_child_config cfg = cfg_for(py);
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_int_eq(run_until_exits(&f, 1, 5), 0);
    ck_assert_ptr_null(f.c);
    fx_free(&f);
}
END_TEST

/* The middle process plays fnworker: it starts the child and gets SIGKILLed;
 * the test is the subreaper, so the orphaned child comes to it. */
START_TEST(a_killed_parent_takes_the_child_with_it)
{
    ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    char dir[] = "/tmp/fnw-relay-child-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char py[128];
    snprintf(py, sizeof py, "%s/python", dir);
    FILE *fp = fopen(py, "w");
    ck_assert_ptr_nonnull(fp);
    fprintf(fp, "#!/bin/sh\necho > %s/started\nexec sleep 30\n", dir);
    fclose(fp);
    ck_assert_int_eq(chmod(py, 0755), 0);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t middle = fork();
    ck_assert_int_ge(middle, 0);
    if (middle == 0) {
        close(p[0]);
        ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
        struct ev_loop *loop = ev_default_loop(EVFLAG_AUTO);
        fnw_relay_child *c = fnw_relay_child_new(loop, NULL, NULL);
        fnw_relay_child_config cfg = cfg_for(py);
        if (fnw_relay_child_start(c, &cfg, NULL) != 0)
            _exit(1);
        int pid = fnw_relay_child_pid(c);
        if (write(p[1], &pid, sizeof pid) != (ssize_t)sizeof pid)
            _exit(1);
        pause();
        _exit(0);
    }
    close(p[1]);
    int child = 0;
    ck_assert_int_eq(read(p[0], &child, sizeof child), (ssize_t)sizeof child);
    close(p[0]);
    ck_assert_int_gt(child, 0);
    char started[160];
    snprintf(started, sizeof started, "%s/started", dir);
    double until = now_s() + 3; /* the child runs the script: prctl is behind it */
    while (access(started, F_OK) != 0 && now_s() < until)
        usleep(5 * 1000);
    ck_assert_int_eq(access(started, F_OK), 0);
    ck_assert_int_eq(kill(middle, SIGKILL), 0);
    int st;
    ck_assert_int_eq(waitpid(middle, &st, 0), middle);
    double end = now_s() + 3;
    pid_t got = 0;
    while (got == 0 && now_s() < end) {
        got = waitpid(child, &st, WNOHANG);
        if (got == 0)
            usleep(10 * 1000);
    }
    if (got != child)
        kill(child, SIGKILL);
    ck_assert_int_eq(got, child);
    ck_assert(WIFSIGNALED(st));
    ck_assert_int_eq(WTERMSIG(st), SIGKILL);
    unlink(py);
    unlink(started);
    rmdir(dir);
}
END_TEST

/* ---- pool mode: the launcher, played by the test over a socketpair ---- */

static int fx_init_remote(fixture *f)
{
    fx_init(f);
    fnw_relay_child_free(f->c);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fnw_relay_child_events ev = { .user = f, .on_exit = on_exit_cb };
    f->c = fnw_relay_child_new_remote(f->loop, &f->lg, &ev, sv[0]);
    ck_assert_ptr_nonnull(f->c);
    return sv[1];
}

/* The next line the worker wrote ("" when none came within timeout_s). */
static const char *peer_line(fixture *f, int fd, double timeout_s)
{
    static char line[1024];
    size_t n = 0;
    double end = now_s() + timeout_s;
    while (now_s() < end && n < sizeof line - 1) {
        ev_run(f->loop, EVRUN_NOWAIT);
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 10) != 1)
            continue;
        char ch;
        if (read(fd, &ch, 1) != 1)
            break;
        if (ch == '\n')
            break;
        line[n++] = ch;
    }
    line[n] = '\0';
    return line;
}

static void peer_say(int fd, const char *s)
{
    ck_assert_int_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void run_for(fixture *f, double s)
{
    ev_timer t;
    ev_timer_init(&t, tick, 0.01, 0.01);
    ev_timer_start(f->loop, &t);
    double end = now_s() + s;
    while (now_s() < end)
        ev_run(f->loop, EVRUN_ONCE);
    ev_timer_stop(f->loop, &t);
}

START_TEST(remote_spawn_output_and_exit)
{
    fixture f;
    int peer = fx_init_remote(&f);
    fnw_relay_child_config cfg = cfg_for("/not/used/python");
    fnw_error err = { { 0 } };
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0);
    ck_assert_str_eq(peer_line(&f, peer, 2), "SPAWN 1 w1-py-0123abcd 127.0.0.1:40123");
    ck_assert(fnw_relay_child_running(f.c));
    ck_assert_int_eq(fnw_relay_child_pid(f.c), 0); /* until SPAWNED */
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), -1);
    ck_assert_contains(err.msg, "already runs");

    peer_say(peer, "SPAWNED 1 4242\nC 1 hello from python\nC 1 bad \377 byte\n"
                   "C 2 a line of another child\nC 0 stale\nNONSENSE\nC x y\n\nSPAWNED 1 5555\n");
    run_for(&f, 0.1);
    ck_assert_int_eq(fnw_relay_child_pid(f.c), 4242);
    ck_assert_str_eq(last(&f), "hello from python\nbad ? byte");
    /* a line longer than the ring's lines: cut, and the next still parses */
    char big[FNW_RELAY_CHILD_LINE_MAX + 2000];
    memset(big, 'z', sizeof big);
    memcpy(big, "C 1 ", 4);
    big[sizeof big - 1] = '\n';
    ck_assert_int_eq(write(peer, big, sizeof big), (ssize_t)sizeof big);
    peer_say(peer, "C 1 after the long one\nCHILDEXIT 1 3\n");
    ck_assert_int_eq(run_until_exits(&f, 1, 2), 0);
    ck_assert_int_eq(f.exit_pid, 4242);
    ck_assert_str_eq(f.how, "exit code 3");
    ck_assert(!fnw_relay_child_running(f.c));
    const char *out = last(&f);
    const char *z = strchr(out, 'z');
    ck_assert_ptr_nonnull(z);
    ck_assert_uint_eq(strspn(z, "z"), FNW_RELAY_CHILD_LINE_MAX);
    ck_assert_contains(out, "zzz...\nafter the long one");

    const char *log = read_stderr(&f);
    ck_assert_contains(log,
                       "relay: asking the launcher to start PyFlink's Python worker (1): $python -m "
                       "pyflink.fn_execution.beam.beam_boot --id=w1-py-0123abcd --provision_endpoint=127.0.0.1:40123");
    ck_assert_contains(log,
                       "relay: starting PyFlink's Python worker: $python -m pyflink.fn_execution.beam.beam_boot "
                       "--id=w1-py-0123abcd --provision_endpoint=127.0.0.1:40123 (pid 4242, started by the launcher)");
    ck_assert_ptr_null(strstr(log, "python[4242]")); /* the launcher writes its lines to the boot log */

    /* the next child is 2; a signal comes as 128 + N; lines of child 1 are stale now */
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0);
    ck_assert_str_eq(peer_line(&f, peer, 2), "SPAWN 2 w1-py-0123abcd 127.0.0.1:40123");
    peer_say(peer, "SPAWNED 2 77\nCHILDEXIT 1 0\nC 1 stale\n");
    run_for(&f, 0.05);
    ck_assert_int_eq(f.exits, 1);
    peer_say(peer, "CHILDEXIT 2 137\n");
    ck_assert_int_eq(run_until_exits(&f, 2, 2), 0);
    ck_assert_int_eq(f.exit_pid, 77);
    ck_assert_str_eq(f.how, "signal 9 (Killed)");
    ck_assert_ptr_null(strstr(last(&f), "stale"));
    close(peer);
    fx_free(&f);
}
END_TEST

START_TEST(remote_spawnfail_counts_for_the_backoff)
{
    fixture f;
    int peer = fx_init_remote(&f);
    fnw_relay_child_config cfg = cfg_for(NULL);
    cfg.backoff_s = 0.3;
    fnw_error err = { { 0 } };
    for (int i = 1; i <= 3; i++) {
        ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0);
        char want[80];
        snprintf(want, sizeof want, "SPAWN %d w1-py-0123abcd 127.0.0.1:40123", i);
        ck_assert_str_eq(peer_line(&f, peer, 2), want);
        snprintf(want, sizeof want, "SPAWNFAIL %d python: command not found\n", i);
        peer_say(peer, want);
        ck_assert_int_eq(run_until_exits(&f, i, 2), 0);
        ck_assert_int_eq(f.exit_pid, 0);
        ck_assert_str_eq(f.how, "could not be started: python: command not found");
    }
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), -1);
    ck_assert_contains(err.msg, "3 times in a row");
    ck_assert_contains(err.msg, "Its last output: could not be started: python: command not found");
    ck_assert_str_eq(peer_line(&f, peer, 0.05), ""); /* nothing asked */
    close(peer);
    fx_free(&f);
}
END_TEST

START_TEST(remote_stop_sends_kill_and_gives_up_without_an_answer)
{
    fixture f;
    int peer = fx_init_remote(&f);
    fnw_relay_child_config cfg = cfg_for(NULL);
    cfg.kill_after_s = 0.1;
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_str_eq(peer_line(&f, peer, 2), "SPAWN 1 w1-py-0123abcd 127.0.0.1:40123");
    peer_say(peer, "SPAWNED 1 99\n");
    run_for(&f, 0.05);
    fnw_relay_child_stop(f.c);
    fnw_relay_child_stop(f.c); /* once is enough */
    ck_assert_str_eq(peer_line(&f, peer, 2), "KILL 1");
    peer_say(peer, "CHILDEXIT 1 143\n");
    ck_assert_int_eq(run_until_exits(&f, 1, 2), 0);
    ck_assert_str_eq(f.how, "signal 15 (Terminated)");
    ck_assert_str_eq(peer_line(&f, peer, 0.05), ""); /* the second stop sent nothing */

    /* no CHILDEXIT: given up 2 * kill_after_s after KILL */
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_str_eq(peer_line(&f, peer, 2), "SPAWN 2 w1-py-0123abcd 127.0.0.1:40123");
    double t0 = now_s();
    fnw_relay_child_stop(f.c); /* before SPAWNED: the launcher stops it as soon as it runs */
    ck_assert_str_eq(peer_line(&f, peer, 2), "KILL 2");
    ck_assert_int_eq(run_until_exits(&f, 2, 1), 0);
    double took = now_s() - t0;
    ck_assert_msg(took >= 0.19 && took < 1, "took %.3f s", took);
    ck_assert_int_eq(f.exit_pid, 0);
    ck_assert_str_eq(f.how, "lost: the launcher did not report its end within 0.2 s of KILL");
    peer_say(peer, "CHILDEXIT 2 0\n"); /* late: ignored */
    run_for(&f, 0.05);
    ck_assert_int_eq(f.exits, 2);
    close(peer);
    fx_free(&f);
}
END_TEST

START_TEST(remote_socket_closing_ends_the_child_and_later_starts)
{
    fixture f;
    int peer = fx_init_remote(&f);
    fnw_relay_child_config cfg = cfg_for(NULL);
    fnw_error err = { { 0 } };
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0);
    ck_assert_str_eq(peer_line(&f, peer, 2), "SPAWN 1 w1-py-0123abcd 127.0.0.1:40123");
    peer_say(peer, "SPAWNED 1 4242\nC 1 partial line without");
    close(peer);
    ck_assert_int_eq(run_until_exits(&f, 1, 2), 0);
    ck_assert_int_eq(f.exit_pid, 4242);
    ck_assert_str_eq(f.how, "lost: the pool's connection (--relay-fd) closed");
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), -1);
    ck_assert_contains(err.msg, "(--relay-fd) is closed");
    fnw_relay_child_stop(f.c); /* nothing runs: nothing */
    fx_free(&f);
}
END_TEST

START_TEST(remote_refuses_what_would_break_the_line_and_free_sends_kill)
{
    fixture f;
    int peer = fx_init_remote(&f);
    fnw_error err = { { 0 } };
    fnw_relay_child_config cfg = cfg_for(NULL);
    cfg.relay_id = "w1 SPAWN 9 evil";
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), -1);
    ck_assert_contains(err.msg, "relay id 'w1 SPAWN 9 evil' is not");
    cfg = cfg_for(NULL);
    cfg.provision_url = "127.0.0.1:1\nKILL 1";
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), -1);
    ck_assert_contains(err.msg, "provision endpoint");
    ck_assert(!fnw_relay_child_running(f.c));
    cfg = cfg_for(NULL);
    cfg.provision_url = "[::1]:40123";
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, &err), 0);
    ck_assert_str_eq(peer_line(&f, peer, 2), "SPAWN 1 w1-py-0123abcd [::1]:40123");
    fnw_relay_child_free(f.c);
    f.c = NULL;
    ck_assert_str_eq(peer_line(&f, peer, 2), "KILL 1");
    char ch;
    ck_assert_int_eq(read(peer, &ch, 1), 0); /* and the socket is closed */
    ck_assert_int_eq(f.exits, 0);
    close(peer);
    fx_free(&f);
}
END_TEST

START_TEST(remote_on_exit_may_free_the_object_mid_read)
{
    fixture f;
    int peer = fx_init_remote(&f);
    fnw_relay_child_free(f.c);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close(peer);
    peer = sv[1];
    fnw_relay_child_events ev = { .user = &f, .on_exit = exit_then_free };
    f.c = fnw_relay_child_new_remote(f.loop, &f.lg, &ev, sv[0]);
    fnw_relay_child_config cfg = cfg_for(NULL);
    ck_assert_int_eq(fnw_relay_child_start(f.c, &cfg, NULL), 0);
    ck_assert_str_eq(peer_line(&f, peer, 2), "SPAWN 1 w1-py-0123abcd 127.0.0.1:40123");
    peer_say(peer, "SPAWNED 1 5\nCHILDEXIT 1 0\nC 1 after the end\nSPAWNED 1 6\n"); /* one read */
    ck_assert_int_eq(run_until_exits(&f, 1, 2), 0);
    ck_assert_ptr_null(f.c);
    char ch;
    ck_assert_int_eq(read(peer, &ch, 1), 0); /* freed: the socket is closed */
    close(peer);
    fx_free(&f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("relay_child");
    TCase *tc = tcase_create("spawn");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, argv_environment_and_cwd_reach_the_child_and_nothing_else);
    tcase_add_test(tc, python_defaults_to_python_on_the_path);
    tcase_add_test(tc, output_lines_are_cut_cleaned_and_bounded);
    tcase_add_test(tc, log_entries_merge_in_order_and_small_caps_keep_the_newest);
    tcase_add_test(tc, exit_codes_and_signals_are_reported);
    tcase_add_test(tc, stop_terminates_and_escalates_to_sigkill);
    tcase_add_test(tc, a_sigterm_before_the_exec_stays_in_the_child);
    tcase_add_test(tc, a_python_that_cannot_run_ends_with_127_and_says_why);
    tcase_add_test(tc, three_quick_deaths_in_a_row_hold_restarts_off);
    tcase_add_test(tc, free_kills_and_reaps_without_callbacks);
    tcase_add_test(tc, on_exit_may_free_the_object);
    tcase_add_test(tc, a_killed_parent_takes_the_child_with_it);
    suite_add_tcase(s, tc);
    TCase *rc = tcase_create("remote");
    tcase_set_timeout(rc, 20);
    tcase_add_test(rc, remote_spawn_output_and_exit);
    tcase_add_test(rc, remote_spawnfail_counts_for_the_backoff);
    tcase_add_test(rc, remote_stop_sends_kill_and_gives_up_without_an_answer);
    tcase_add_test(rc, remote_socket_closing_ends_the_child_and_later_starts);
    tcase_add_test(rc, remote_refuses_what_would_break_the_line_and_free_sends_kill);
    tcase_add_test(rc, remote_on_exit_may_free_the_object_mid_read);
    suite_add_tcase(s, rc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
