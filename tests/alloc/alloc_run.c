/* tests/alloc/alloc_run.c — the fork-per-N driver declared in
 * alloc_run.h. The child reports its outcome through a pipe (the result of
 * run(), whether the armed allocation failed, the count, the message); its
 * exit status is the sanitizers' verdict; its stderr goes to a temporary
 * file that is shown only when the run failed (or, with ALLOC_TRACE set,
 * always: it then holds the failing allocation's stack). ALLOC_VERBOSE=1
 * prints the outcome of every N. */
#include "tests/alloc/alloc_run.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Seconds a child may take before it counts as hung (ALLOC_TIMEOUT_S sets it). */
#define ALLOC_CHILD_TIMEOUT_S 60

/* Check's message channel (libcheck's check_msg.h): the unit tests' helpers
 * this driver reuses (the headers of tests/unit) call ck_assert, which reports every
 * passing assertion to the runner and exits when none is set up. A child
 * sets one up, so a passing assertion costs nothing and a failing one ends
 * the child with a non-zero status, which fails the run. */
void setup_messaging(void);

typedef struct outcome {
    int rc;                 /* run(): 0 or -1 */
    int verified;           /* verify() after a success */
    int failed;             /* the armed allocation failed */
    unsigned long count;    /* allocations counted */
    char msg[FNW_ERROR_MAX];
} outcome;

typedef struct tally {
    unsigned long errors, recovered, bad;
    int verbose;            /* ALLOC_VERBOSE: one line per N */
} tally;

static void child(const alloc_scenario *s, unsigned long n, int fd)
{
    outcome o;
    memset(&o, 0, sizeof o);
    const char *limit = getenv("ALLOC_TIMEOUT_S");
    alarm(limit && atoi(limit) > 0 ? (unsigned)atoi(limit) : ALLOC_CHILD_TIMEOUT_S);
    setup_messaging();
    void *fx = s->setup();
    if (!fx) {
        fprintf(stderr, "%s: setup failed\n", s->name);
        _exit(97);
    }
    fnw_error err;
    err.msg[0] = '\0';
    failmalloc_arm(n);
    o.rc = s->run(fx, &err);
    failmalloc_disarm();
    o.failed = failmalloc_failed();
    o.count = failmalloc_count();
    snprintf(o.msg, sizeof o.msg, "%s", err.msg);
    o.verified = o.rc == 0 && s->verify(fx);
    s->teardown(fx);
    if (write(fd, &o, sizeof o) != (ssize_t)sizeof o)
        _exit(98);
    close(fd);
    exit(0);    /* LeakSanitizer checks here */
}

static void show_log(FILE *log)
{
    char buf[4096];
    size_t k;
    fflush(log);
    rewind(log);
    while ((k = fread(buf, 1, sizeof buf, log)) > 0)
        fwrite(buf, 1, k, stderr);
}

/* Runs s with allocation n failing (0: none); fills *o. Returns 0 when the
 * child exited cleanly and reported, else -1 with why. */
static int run_child(const alloc_scenario *s, unsigned long n, outcome *o, char *why, size_t nwhy)
{
    int fds[2];
    FILE *log = tmpfile();
    if (!log || pipe(fds) < 0) {
        snprintf(why, nwhy, "pipe/tmpfile: %s", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fileno(log), 2);
        child(s, n, fds[1]);
    }
    close(fds[1]);
    memset(o, 0, sizeof *o);
    ssize_t got = read(fds[0], o, sizeof *o);
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    int ok = 0;
    if (WIFSIGNALED(st))
        snprintf(why, nwhy, "killed by signal %d%s", WTERMSIG(st),
                 WTERMSIG(st) == SIGALRM ? " (hung)" : "");
    else if (WEXITSTATUS(st) != 0)
        snprintf(why, nwhy, "exit status %d (a sanitizer report, or setup failed)", WEXITSTATUS(st));
    else if (got != (ssize_t)sizeof *o)
        snprintf(why, nwhy, "no outcome reported");
    else
        ok = 1;
    if (!ok || (n && getenv("ALLOC_TRACE")))
        show_log(log);
    fclose(log);
    return ok ? 0 : -1;
}

/* What is wrong with the outcome of the run with allocation n failing
 * (into why), or NULL when it is clean. */
static const char *misjudged(const outcome *o, unsigned long n, char *why, size_t nwhy)
{
    if (!o->failed)
        snprintf(why, nwhy, "allocation %lu was never made (%lu counted)", n, o->count);
    else if (o->rc == 0 && !o->verified)
        snprintf(why, nwhy, "succeeded with a wrong result");
    else if (o->rc == 0)
        return NULL;
    else if (o->rc != -1)
        snprintf(why, nwhy, "run returned %d", o->rc);
    else if (!o->msg[0])
        snprintf(why, nwhy, "failed without a message");
    else if (!strstr(o->msg, "out of memory"))
        snprintf(why, nwhy, "failed with a message that does not say \"out of memory\": %s", o->msg);
    else
        return NULL;
    return why;
}

/* Judges one armed run; returns 0 when it is clean. */
static int judge(const alloc_scenario *s, unsigned long n, tally *t)
{
    outcome o;
    char why[FNW_ERROR_MAX + 128] = "";
    if (run_child(s, n, &o, why, sizeof why) == 0 && !misjudged(&o, n, why, sizeof why)) {
        if (t->verbose && o.rc == 0)
            printf("alloc %s: N=%lu: recovered\n", s->name, n);
        else if (t->verbose)
            printf("alloc %s: N=%lu: error: %s\n", s->name, n, o.msg);
        if (o.rc == 0)
            t->recovered++;
        else
            t->errors++;
        return 0;
    }
    fprintf(stderr, "alloc %s: N=%lu: %s\n", s->name, n, why);
    t->bad++;
    return -1;
}

static int run_scenario(const alloc_scenario *s, long only, unsigned long stride)
{
    outcome o;
    char why[FNW_ERROR_MAX + 128] = "";
    if (run_child(s, 0, &o, why, sizeof why) < 0 || o.rc != 0 || !o.verified) {
        fprintf(stderr, "alloc %s: the run without failures does not succeed: %s\n", s->name,
                why[0] ? why : o.msg[0] ? o.msg : "wrong result");
        return -1;
    }
    unsigned long k = o.count;
    tally t = {0, 0, 0, getenv("ALLOC_VERBOSE") != NULL};
    if (only > 0)
        return judge(s, (unsigned long)only, &t);
    for (unsigned long n = 1; n <= k; n += stride)
        judge(s, n, &t);
    printf("alloc %s: %lu allocations; N=1..%lu (step %lu): %lu clean errors, %lu recovered, %lu bad\n", s->name,
           k, k, stride, t.errors, t.recovered, t.bad);
    return t.bad ? -1 : 0;
}

int alloc_main(const alloc_scenario *const *s, size_t n, int argc, char **argv)
{
    const char *env = getenv("ALLOC_STRIDE");
    unsigned long stride = env && atol(env) > 0 ? (unsigned long)atol(env) : 1;
    long only = argc > 2 ? atol(argv[2]) : 0;
    int rc = 0, ran = 0;
    for (size_t i = 0; i < n; i++) {
        if (argc > 1 && strcmp(argv[1], s[i]->name) != 0)
            continue;
        ran++;
        if (run_scenario(s[i], only, stride) < 0)
            rc = 1;
    }
    if (!ran) {
        fprintf(stderr, "no scenario named %s\n", argv[1]);
        return 2;
    }
    return rc;
}
