/* tests/unit/test_servers.h — for the service clients' tests: start and stop
 * the real test servers through the helpers in tests/servers/ (run from the
 * repository root, as `make unit` does), and run a loop until a condition
 * holds.
 *
 * Servers are started in a Check unchecked fixture, i.e. in the runner's
 * own process, so the fixture's teardown stops them even when a test fails
 * or crashes in its forked child; the helpers also get this process's id
 * (--owner) and stop their server by themselves when it is gone.
 */
#ifndef FNW_TEST_SERVERS_H
#define FNW_TEST_SERVERS_H

#include <arpa/inet.h>
#include <check.h>
#include <ev.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* 1 when every program is on the PATH (sbin included); else prints one
 * line naming what is missing and returns 0. */
static inline int srv_have(const char *test, const char *const *progs)
{
    for (int i = 0; progs[i]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "PATH=\"$PATH:/usr/sbin:/sbin\" command -v %s >/dev/null 2>&1", progs[i]);
        if (system(cmd) != 0) {
            printf("%s: skipped: %s is not installed (scripts/install-deps.sh installs it)\n", test, progs[i]);
            return 0;
        }
    }
    return 1;
}

/* Runs `sh tests/servers/<script> <verb> <dir> <args>`; returns its exit
 * status and its first output line in out (when out is not NULL). */
static inline int srv_cmd(const char *script, const char *verb, const char *dir, const char *args,
                          char *out, size_t n)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "sh tests/servers/%s %s '%s' %s", script, verb, dir, args ? args : "");
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[256] = "";
    if (!fgets(line, sizeof line, p))
        line[0] = '\0';
    char rest[256];
    while (fgets(rest, sizeof rest, p))
        ;
    int st = pclose(p);
    line[strcspn(line, "\n")] = '\0';
    if (out && n) {
        size_t len = strlen(line) < n ? strlen(line) : n - 1;
        memcpy(out, line, len);
        out[len] = '\0';
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A fresh directory for one server's files. */
static inline void srv_dir(char *dir, size_t n, const char *name)
{
    snprintf(dir, n, "/tmp/fnw-%s-XXXXXX", name);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
}

static inline void srv_rmdir(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* Runs the loop until *flag is set; fails the test when guard_s seconds
 * pass first (a hang guard far above any expected time, not a timing check). */
static inline void srv_guard_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    *(int *)t->data = 1;
}

static inline void srv_run_until(struct ev_loop *loop, const int *flag, double guard_s)
{
    int expired = 0;
    ev_timer guard;
    ev_timer_init(&guard, srv_guard_cb, guard_s, 0.);
    guard.data = &expired;
    ev_timer_start(loop, &guard);
    while (!*flag && !expired)
        ev_run(loop, EVRUN_ONCE);
    ev_timer_stop(loop, &guard);
    ck_assert_msg(*flag, "nothing happened within %.0f s", guard_s);
}

/* Runs the loop for at least s seconds of loop time. */
static inline void srv_run_for(struct ev_loop *loop, double s)
{
    int done = 0;
    ev_timer t;
    ev_timer_init(&t, srv_guard_cb, s, 0.);
    t.data = &done;
    ev_timer_start(loop, &t);
    while (!done)
        ev_run(loop, EVRUN_ONCE);
}

/* A loopback port nothing listens on (bound, read, closed). */
static inline int srv_closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        perror("srv_closed_port");
        exit(1);
    }
    close(fd);
    return ntohs(a.sin_port);
}

#endif
