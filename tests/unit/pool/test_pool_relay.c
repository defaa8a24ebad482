/* tests/unit/pool/test_pool_relay.c — launcher protocol version 2 in the
 * pool: the worker's relay link (pool/relay_link.c) and the launcher
 * endpoint around it (pool/launcher.c).
 *
 * The link, with a socket pair standing in for the worker: SPAWN and KILL
 * reach the launcher written afresh, the launcher's SPAWNED, C and
 * CHILDEXIT reach the worker; a SPAWN off loopback, with a bad id, a number
 * that does not grow or a third running child is answered SPAWNFAIL and not
 * passed on; KILL goes out once per child, not for unknown ones; launcher
 * lines about unknown or ended children and unknown lines are dropped, a
 * duplicate SPAWNED too; when the worker's end closes, every child still
 * running gets KILL; output lines beyond the bound are dropped while the
 * worker does not read, CHILDEXIT never, and the next line says how many
 * were dropped.
 *
 * The endpoint, with a stand-in worker script and the test as the
 * launcher over TCP: a version 1 request starts the worker with
 * --relay=off and says so (an E line); a version 2 request gives it
 * --relay-fd=4, and its SPAWN arrives on the connection, the launcher's
 * answers on its fd 4; a worker that ends with a child still running makes
 * the pool send KILL before EXIT.
 *
 * And the whole chain with the real parts on both ends: this binary, run
 * by the pool as its worker (a --relay-fd argument makes main() a worker),
 * asks through worker/relay_child.c's pool back-end, the in-process
 * launcher endpoint passes it on, and the real launcher script
 * (scripts/pyflink-udf-runner.sh, run from the repository's root as
 * `make unit` does) starts a fake python: the worker sees its pid, its
 * output and its exit code, and stops a second one (signal 15). */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <ev.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pool/children.h"
#include "pool/launcher.h"
#include "pool/listen.h"
#include "pool/relay_link.h"
#include "pool/wire.h"
#include "worker/relay_child.h"
#include "tests/unit/check_run.h"

static struct ev_loop *loop;
static char to_l[1 << 16]; /* what the link sent to the launcher */

static void on_to_launcher(void *ctx, const char *line, size_t len)
{
    strncat(to_l, line, len);
}

static const fnw_relay_link_events lev = {on_to_launcher, NULL};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs the loop and reads fd (nonblocking) into buf until it holds needle
 * (or, needle NULL, for 0.2 s); fails after 10 s. */
static void pump(int fd, char *buf, size_t cap, const char *needle)
{
    double until = now_s() + (needle ? 10.0 : 0.2);
    while (now_s() < until) {
        ev_run(loop, EVRUN_NOWAIT);
        size_t len = strlen(buf);
        if (fd >= 0 && len + 1 < cap) {
            ssize_t n = recv(fd, buf + len, cap - len - 1, MSG_DONTWAIT);
            if (n > 0)
                buf[len + (size_t)n] = '\0';
        }
        if (needle && (strstr(buf, needle) || strstr(to_l, needle)))
            return;
        usleep(1000);
    }
    if (needle)
        ck_abort_msg("no '%s' within 10 s; worker got: %.400s; launcher got: %.400s", needle, buf, to_l);
}

static void say(int fd, const char *text)
{
    ck_assert_int_eq(send(fd, text, strlen(text), MSG_NOSIGNAL), (ssize_t)strlen(text));
}

static fnw_relay_link *new_link(int *wfd)
{
    fnw_error err = {{0}};
    fnw_relay_link *k = fnw_relay_link_new(loop, "w1", &lev, wfd, &err);
    ck_assert_ptr_nonnull(k);
    ck_assert_int_ge(*wfd, 0);
    ck_assert_int_eq(fcntl(*wfd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    return k;
}

static void setup(void)
{
    loop = ev_default_loop(0);
    to_l[0] = '\0';
}

START_TEST(lines_pass_both_ways)
{
    int wfd;
    fnw_relay_link *k = new_link(&wfd);
    char got[8192] = "";
    say(wfd, "SPAWN 1 w1-py-0af 127.0.0.1:40123\n");
    pump(-1, got, sizeof got, "SPAWN 1 w1-py-0af 127.0.0.1:40123\n");
    ck_assert_str_eq(to_l, "SPAWN 1 w1-py-0af 127.0.0.1:40123\n");
    ck_assert_uint_eq(fnw_relay_link_running(k), 1);
    static const char answers[] = "SPAWNED 1 4242\nC 1 starting\r\nC 1 \nC 1 a\0b\nCHILDEXIT 1 137\n";
    fnw_relay_link_from_launcher(k, answers, sizeof answers - 1);
    pump(wfd, got, sizeof got, "CHILDEXIT 1 137\n");
    ck_assert_str_eq(got, "SPAWNED 1 4242\nC 1 starting\nC 1 \nC 1 a?b\nCHILDEXIT 1 137\n");
    ck_assert_uint_eq(fnw_relay_link_running(k), 0);
    /* the child ended: its late lines are dropped */
    fnw_relay_link_from_launcher(k, "C 1 late\nCHILDEXIT 1 0\n", 23);
    got[0] = '\0';
    pump(wfd, got, sizeof got, NULL);
    ck_assert_str_eq(got, "");
    fnw_relay_link_free(k);
    close(wfd);
}
END_TEST

START_TEST(refused_spawns_answered)
{
    int wfd;
    fnw_relay_link *k = new_link(&wfd);
    char got[8192] = "";
    say(wfd, "SPAWN 1 a 10.0.0.1:80\n");
    pump(wfd, got, sizeof got, "SPAWNFAIL 1 ");
    ck_assert_ptr_nonnull(strstr(got, "SPAWNFAIL 1 the fnworker pool refused it: SPAWN 1: the endpoint "
                                      "'10.0.0.1:80' is not <host>:<port> on loopback"));
    say(wfd, "SPAWN 2 a;reboot 127.0.0.1:80\n");
    pump(wfd, got, sizeof got, "SPAWNFAIL 2 ");
    ck_assert_ptr_nonnull(strstr(got, "SPAWNFAIL 2 the fnworker pool refused it: SPAWN 2: the relay id holds"));
    say(wfd, "SPAWN 3 a 127.0.0.1:80\nSPAWN 3 b 127.0.0.1:80\n");
    pump(wfd, got, sizeof got, "SPAWNFAIL 3 ");
    ck_assert_ptr_nonnull(strstr(got, "SPAWNFAIL 3 the fnworker pool refused it: child numbers must grow (the last was 3)"));
    say(wfd, "SPAWN 4 b 127.0.0.1:80\nSPAWN 5 c 127.0.0.1:80\n");
    pump(wfd, got, sizeof got, "SPAWNFAIL 5 ");
    ck_assert_ptr_nonnull(strstr(got, "SPAWNFAIL 5 the fnworker pool refused it: 2 Python workers of this "
                                      "worker still run (at most 2)"));
    ck_assert_str_eq(to_l, "SPAWN 3 a 127.0.0.1:80\nSPAWN 4 b 127.0.0.1:80\n");
    /* KILL once per child, none for a child it does not know */
    say(wfd, "KILL 3\nKILL 3\nKILL 9\nKILL 5\nGARBAGE\n");
    pump(-1, got, sizeof got, NULL);
    ck_assert_str_eq(to_l, "SPAWN 3 a 127.0.0.1:80\nSPAWN 4 b 127.0.0.1:80\nKILL 3\n");
    /* a line too long is refused whole; the next one is read */
    char longline[3000];
    memset(longline, 'x', sizeof longline);
    ck_assert_int_eq(send(wfd, longline, sizeof longline, 0), (ssize_t)sizeof longline);
    say(wfd, "\nKILL 4\n");
    pump(-1, got, sizeof got, "KILL 4\n");
    /* the launcher: unknown children, duplicates and other lines are dropped */
    got[0] = '\0';
    const char *l = "SPAWNED 9 1\nSPAWNED 3 10\nSPAWNED 3 11\nO 3 x\nEXIT 0\nC 5 x\nCHILDEXIT 3 143\n";
    fnw_relay_link_from_launcher(k, l, strlen(l));
    pump(wfd, got, sizeof got, "CHILDEXIT 3 143\n");
    ck_assert_str_eq(got, "SPAWNED 3 10\nCHILDEXIT 3 143\n");
    /* a launcher line longer than the bound is cut, the rest of it dropped */
    static char big[FNW_WIRE_LINE_MAX + 300];
    memcpy(big, "C 4 ", 4);
    memset(big + 4, 'y', sizeof big - 5);
    big[sizeof big - 1] = '\n';
    got[0] = '\0';
    fnw_relay_link_from_launcher(k, big, sizeof big);
    fnw_relay_link_from_launcher(k, "C 4 next\n", 9);
    pump(wfd, got, sizeof got, "C 4 next\n");
    ck_assert_uint_eq(strlen(got), FNW_WIRE_LINE_MAX + 64 + 1 + 9);
    fnw_relay_link_free(k);
    close(wfd);
}
END_TEST

START_TEST(worker_gone_kills_children)
{
    int wfd;
    fnw_relay_link *k = new_link(&wfd);
    char got[256] = "";
    say(wfd, "SPAWN 1 a 127.0.0.1:1\nKILL 1\nSPAWN 2 b [::1]:2\n");
    pump(-1, got, sizeof got, "SPAWN 2 b [::1]:2\n");
    close(wfd);
    pump(-1, got, sizeof got, "SPAWN 2 b [::1]:2\nKILL 2\n");
    ck_assert_str_eq(to_l, "SPAWN 1 a 127.0.0.1:1\nKILL 1\nSPAWN 2 b [::1]:2\nKILL 2\n");
    /* the launcher's last words go nowhere */
    fnw_relay_link_from_launcher(k, "CHILDEXIT 2 0\nC 1 x\n", 20);
    fnw_relay_link_close(k); /* twice: no second KILL */
    pump(-1, got, sizeof got, NULL);
    ck_assert_str_eq(to_l, "SPAWN 1 a 127.0.0.1:1\nKILL 1\nSPAWN 2 b [::1]:2\nKILL 2\n");
    fnw_relay_link_free(k);
}
END_TEST

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

START_TEST(output_bounded_childexit_kept)
{
    int wfd;
    fnw_relay_link *k = new_link(&wfd);
    char small[256] = "";
    say(wfd, "SPAWN 1 a 127.0.0.1:1\n");
    pump(-1, small, sizeof small, "SPAWN 1 a");
    /* 4000 lines of 2 KB (8 MB) while the worker reads nothing */
    static char line[2100];
    memcpy(line, "C 1 ", 4);
    memset(line + 4, 'z', 2047);
    line[2051] = '\n';
    for (int i = 0; i < 4000; i++)
        fnw_relay_link_from_launcher(k, line, 2052);
    fnw_relay_link_from_launcher(k, "CHILDEXIT 1 9\n", 14);
    size_t cap = 16u << 20;
    char *got = calloc(1, cap);
    pump(wfd, got, cap, "CHILDEXIT 1 9\n");
    int lines = count(got, "C 1 zzz");
    ck_assert_int_lt(lines, 4000);
    ck_assert_int_gt(lines, 50);
    /* what arrived fits the bound and the socket's own buffers */
    ck_assert_uint_lt(strlen(got), FNW_RELAY_LINK_OUT_MAX + (4u << 20));
    const char *end = got + strlen(got) - strlen("CHILDEXIT 1 9\n");
    ck_assert_str_eq(end, "CHILDEXIT 1 9\n");
    /* the next child's first line says how many were dropped */
    say(wfd, "SPAWN 2 b 127.0.0.1:1\n");
    pump(-1, small, sizeof small, "SPAWN 2 b");
    got[0] = '\0';
    fnw_relay_link_from_launcher(k, "C 2 hello\n", 10);
    pump(wfd, got, cap, "C 2 hello\n");
    char want[200];
    snprintf(want, sizeof want, "C 2 [fnworker pool: %d lines of the Python worker's output were not passed to "
                                "fnworker, which read too slowly; the boot log has them]\nC 2 hello\n",
             4000 - lines);
    ck_assert_str_eq(got, want);
    free(got);
    fnw_relay_link_free(k);
    close(wfd);
}
END_TEST

/* ---- the launcher endpoint ------------------------------------------------------------ */

static char dir[64], exe[160];

static void write_worker(const char *body)
{
    snprintf(dir, sizeof dir, "/tmp/fnw-relay-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(exe, sizeof exe, "%s/worker", dir);
    FILE *f = fopen(exe, "w");
    ck_assert_ptr_nonnull(f);
    fputs(body, f);
    fclose(f);
    chmod(exe, 0755);
}

typedef struct endpoint {
    fnw_children *cs;
    fnw_launcher *l;
    int client;
    fnw_pool_token token;
    fnw_worker_args_allow allow;
} endpoint;

static void endpoint_open(endpoint *e, const char *request)
{
    fnw_error err = {{0}};
    char bound[128];
    memset(e, 0, sizeof *e);
    e->cs = fnw_children_new(loop, exe, 4, 0);
    int fd = fnw_listen_tcp("127.0.0.1:0", bound, sizeof bound, &err);
    ck_assert_int_ge(fd, 0);
    fnw_launcher_policy policy = {&e->token, &e->allow};
    e->l = fnw_launcher_new(loop, e->cs, fd, &policy);
    char host[64], port[16];
    ck_assert_int_eq(fnw_listen_split(bound, host, sizeof host, port, sizeof port), 0);
    e->client = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    sa.sin_addr.s_addr = htonl(0x7f000001);
    ck_assert_int_eq(connect(e->client, (struct sockaddr *)&sa, sizeof sa), 0);
    say(e->client, request);
}

static void endpoint_close(endpoint *e)
{
    close(e->client);
    pump(-1, to_l, sizeof to_l, NULL);
    fnw_launcher_free(e->l);
    fnw_children_free(e->cs);
    unlink(exe);
    rmdir(dir);
}

START_TEST(version1_worker_runs_relay_off)
{
    write_worker("#!/bin/sh\necho \"argv $*\"\n");
    endpoint e;
    endpoint_open(&e, "FNWPOOL 1 START\nid=v1\nprovision_endpoint=localhost:1\n\n");
    char got[4096] = "";
    pump(e.client, got, sizeof got, "EXIT 0\n");
    ck_assert_ptr_nonnull(strstr(got, "O argv --id=v1 --provision_endpoint=localhost:1 --relay=off\n"));
    ck_assert_ptr_nonnull(strstr(got, "E fnworker pool: this launcher speaks launcher protocol version 1, so the "
                                      "worker runs with --relay=off: a job's Python functions that are not "
                                      "fnworker operations fail"));
    endpoint_close(&e);
}
END_TEST

START_TEST(version2_spawn_over_the_connection)
{
    /* the worker asks for child 1, prints the answers it gets on fd 4, and
     * leaves once CHILDEXIT came; then asks for child 2 and ends at once */
    write_worker("#!/bin/bash\n"
                 "echo \"argv $*\"\n"
                 "[ \"${!#}\" = --relay-fd=4 ] || exit 2\n"
                 "echo 'SPAWN 1 relay-1 127.0.0.1:5' >&4\n"
                 "while IFS= read -r line <&4; do echo \"got $line\"; case $line in CHILDEXIT*) break;; esac; done\n"
                 "echo 'SPAWN 2 relay-2 127.0.0.1:5' >&4\n"
                 "sleep 0.3\n"
                 "exit 0\n");
    endpoint e;
    endpoint_open(&e, "FNWPOOL 2 START\nid=v2\nprovision_endpoint=localhost:1\n\n");
    char got[8192] = "";
    pump(e.client, got, sizeof got, "SPAWN 1 relay-1 127.0.0.1:5\n");
    ck_assert_ptr_nonnull(strstr(got, "O argv --id=v2 --provision_endpoint=localhost:1 --relay-fd=4\n"));
    say(e.client, "SPAWNED 1 777\nC 1 Traceback: boom\nCHILDEXIT 1 1\n");
    pump(e.client, got, sizeof got, "SPAWN 2 relay-2 127.0.0.1:5\n");
    ck_assert_ptr_nonnull(strstr(got, "O got SPAWNED 1 777\nO got C 1 Traceback: boom\nO got CHILDEXIT 1 1\n"));
    /* child 2 still runs when its worker ends: KILL, then EXIT */
    pump(e.client, got, sizeof got, "EXIT 0\n");
    const char *kill2 = strstr(got, "KILL 2\n"), *exit0 = strstr(got, "EXIT 0\n");
    ck_assert_ptr_nonnull(kill2);
    ck_assert_ptr_nonnull(exit0);
    ck_assert(kill2 < exit0);
    ck_assert_ptr_null(strstr(got, "version 1"));
    endpoint_close(&e);
}
END_TEST

/* ---- the whole chain: relay_child -> pool -> launcher script -> python ---------------- */

static int w_exits, w_pid;
static char w_how[200];

static void w_on_exit(void *user, int pid, const char *how)
{
    w_exits++;
    w_pid = pid;
    snprintf(w_how, sizeof w_how, "%s", how);
}

/* The worker's side, as fnworker runs it in pool mode; its stdout reaches
 * the launcher's boot log. */
static int worker_main(int fd)
{
    struct ev_loop *lp = ev_default_loop(0);
    fnw_relay_child_events ev = {NULL, w_on_exit};
    fnw_relay_child *c = fnw_relay_child_new_remote(lp, NULL, &ev, fd);
    fnw_relay_child_config cfg = {0};
    fnw_error err = {{0}};
    cfg.relay_id = "relay-exit3";
    cfg.provision_url = "127.0.0.1:40123";
    if (!c || fnw_relay_child_start(c, &cfg, &err) < 0) {
        printf("worker: start failed: %s\n", err.msg);
        return 1;
    }
    while (w_exits < 1)
        ev_run(lp, EVRUN_ONCE);
    char last[4096];
    fnw_relay_child_last_output(c, last, sizeof last);
    for (char *p = last; *p; p++)
        if (*p == '\n')
            *p = '|';
    printf("worker: child 1 (pid %d) ended: %s\nworker: its last output: %s\n", w_pid, w_how, last);
    fflush(stdout);
    cfg.relay_id = "relay-sleep";
    if (fnw_relay_child_start(c, &cfg, &err) < 0) {
        printf("worker: second start failed: %s\n", err.msg);
        return 1;
    }
    while (!fnw_relay_child_pid(c) && w_exits < 2)
        ev_run(lp, EVRUN_ONCE);
    printf("worker: child 2 runs as pid %d\n", fnw_relay_child_pid(c));
    fflush(stdout);
    fnw_relay_child_stop(c);
    while (w_exits < 2)
        ev_run(lp, EVRUN_ONCE);
    printf("worker: child 2 (pid %d) ended: %s\n", w_pid, w_how);
    fnw_relay_child_free(c);
    return 0;
}

static int launcher_done;
static void on_launcher_exit(struct ev_loop *lp, ev_child *w, int revents)
{
    launcher_done = 1;
    ev_child_stop(lp, w);
}

START_TEST(real_worker_side_and_launcher)
{
    if (access("scripts/pyflink-udf-runner.sh", R_OK) != 0 || access("/bin/bash", X_OK) != 0) {
        ck_abort_msg("run from the repository's root (scripts/pyflink-udf-runner.sh), with bash");
    }
    char self[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert_int_gt(n, 0);
    self[n] = '\0';
    write_worker("#!/bin/sh\n"
                 "for a; do case $a in --id=*) id=${a#--id=} ;; esac; done\n"
                 "echo \"fake python argv: $*\"\n"
                 "echo \"fake python pid $$\" >&2\n"
                 "case $id in relay-exit3) exit 3 ;; *) exec sleep 60 ;; esac\n");
    char python[160], bootdir[128], log[200];
    snprintf(python, sizeof python, "%s/python", dir);
    rename(exe, python);
    snprintf(bootdir, sizeof bootdir, "%s", dir);
    snprintf(log, sizeof log, "%s/flink-python-udf-boot.log", dir);
    snprintf(exe, sizeof exe, "%s", python); /* removed at the end */

    fnw_error err = {{0}};
    char bound[128];
    fnw_pool_token token = {0};
    fnw_worker_args_allow allow = {{0}, 0};
    fnw_children *cs = fnw_children_new(loop, self, 2, 0);
    int lfd = fnw_listen_tcp("127.0.0.1:0", bound, sizeof bound, &err);
    ck_assert_int_ge(lfd, 0);
    fnw_launcher_policy policy = {&token, &allow};
    fnw_launcher *l = fnw_launcher_new(loop, cs, lfd, &policy);
    setenv("FNW_POOL_ADDRESS", bound, 1);
    setenv("python", python, 1);
    setenv("BOOT_LOG_DIR", bootdir, 1);
    char *argv[] = {"bash", "scripts/pyflink-udf-runner.sh", "--id=chain", "--provision_endpoint=localhost:1", NULL};
    pid_t pid;
    extern char **environ;
    posix_spawn_file_actions_t fa; /* the boot log has it all; keep `make unit` quiet */
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    ck_assert_int_eq(posix_spawn(&pid, "/bin/bash", &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    ev_child cw;
    ev_child_init(&cw, on_launcher_exit, pid, 0);
    ev_child_start(loop, &cw);
    double until = now_s() + 40;
    while (!launcher_done && now_s() < until)
        ev_run(loop, EVRUN_ONCE);
    int code = cw.rstatus;
    fnw_launcher_free(l);
    fnw_children_free(cs);
    char text[16384] = "";
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    unlink(log);
    ck_assert_msg(launcher_done && WIFEXITED(code) && WEXITSTATUS(code) == 0, "launcher: %d; boot log:\n%s", code, text);
    int py1 = 0, w1 = 0, py2 = 0, w2 = 0;
    const char *p = strstr(text, "fake python pid ");
    ck_assert_msg(p && sscanf(p, "fake python pid %d", &py1) == 1, "%s", text);
    p = strstr(text, "worker: child 1 (pid ");
    ck_assert_msg(p && sscanf(p, "worker: child 1 (pid %d) ended: exit code 3", &w1) == 1, "%s", text);
    ck_assert_int_eq(py1, w1);
    ck_assert_msg(strstr(text, "worker: its last output: fake python argv: -m pyflink.fn_execution.beam.beam_boot "
                               "--id=relay-exit3 --provision_endpoint=127.0.0.1:40123|fake python pid "),
                  "%s", text);
    p = strstr(text, "worker: child 2 runs as pid ");
    ck_assert_msg(p && sscanf(p, "worker: child 2 runs as pid %d", &py2) == 1 && py2 > 0, "%s", text);
    p = strstr(text, "worker: child 2 (pid ");
    ck_assert_msg(p && sscanf(p, "worker: child 2 (pid %d) ended", &w2) == 1, "%s", text);
    ck_assert_int_eq(py2, w2);
    ck_assert_msg(strstr(text, "ended: signal 15 (Terminated)"), "%s", text);
    ck_assert_int_ne(kill(py2, 0), 0);
    unlink(exe);
    rmdir(dir);
}
END_TEST

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* started by the pool as its worker */
        if (strncmp(argv[i], "--relay-fd=", 11) == 0)
            return worker_main(atoi(argv[i] + 11));
    Suite *s = suite_create("pool_relay");
    TCase *tc = tcase_create("relay");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, lines_pass_both_ways);
    tcase_add_test(tc, refused_spawns_answered);
    tcase_add_test(tc, worker_gone_kills_children);
    tcase_add_test(tc, output_bounded_childexit_kept);
    tcase_add_test(tc, version1_worker_runs_relay_off);
    tcase_add_test(tc, version2_spawn_over_the_connection);
    tcase_add_test(tc, real_worker_side_and_launcher);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
