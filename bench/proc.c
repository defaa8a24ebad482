/* bench/proc.c — worker process launch and /proc readings (see proc.h). */
#include "bench/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ARGS 64

static int split_words(char *s, char **out, int max)
{
    int n = 0;
    for (char *tok = strtok(s, " \t"); tok && n < max; tok = strtok(NULL, " \t"))
        out[n++] = tok;
    return n;
}

int bench_proc_spawn(bench_proc *p, const char *wrapper, const char *bin, const char *id,
                     const char *url, const char *log_path, fnw_error *err)
{
    char idarg[128], urlarg[160];
    char *wcopy = strdup(wrapper ? wrapper : "");
    char *argv[MAX_ARGS + 4];
    if (!wcopy)
        return fnw_error_set(err, "out of memory");
    int n = split_words(wcopy, argv, MAX_ARGS);
    snprintf(idarg, sizeof idarg, "--id=%s", id);
    snprintf(urlarg, sizeof urlarg, "--provision_endpoint=%s", url);
    argv[n++] = (char *)bin;
    argv[n++] = idarg;
    argv[n++] = urlarg;
    argv[n] = NULL;
    int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) {
        free(wcopy);
        return fnw_error_set(err, "cannot open %s: %s", log_path, strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd);
        free(wcopy);
        return fnw_error_set(err, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
        execvp(argv[0], argv);
        fprintf(stderr, "bench: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd);
    free(wcopy);
    p->pid = pid;
    p->exited = 0;
    p->status = 0;
    return 0;
}

int bench_proc_poll(bench_proc *p)
{
    if (p->exited)
        return 1;
    int st;
    pid_t r = waitpid(p->pid, &st, WNOHANG);
    if (r == p->pid) {
        p->exited = 1;
        p->status = st;
    }
    return p->exited;
}

void bench_proc_signal(bench_proc *p, int sig)
{
    if (!p->exited && p->pid > 0)
        kill(p->pid, sig);
}

int bench_proc_exit_code(const bench_proc *p)
{
    if (!p->exited)
        return -1;
    if (WIFEXITED(p->status))
        return WEXITSTATUS(p->status);
    if (WIFSIGNALED(p->status))
        return 128 + WTERMSIG(p->status);
    return -1;
}

static uint64_t task_ns(pid_t pid, const char *tid)
{
    char f[320];
    snprintf(f, sizeof f, "/proc/%d/task/%s/schedstat", (int)pid, tid);
    FILE *fp = fopen(f, "r");
    if (!fp)
        return 0;
    unsigned long long ns = 0;
    if (fscanf(fp, "%llu", &ns) != 1)
        ns = 0;
    fclose(fp);
    return ns;
}

void bench_proc_threads(pid_t pid, bench_threads *t)
{
    char path[64];
    t->n = 0;
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && t->n < BENCH_MAX_THREADS) {
        if (e->d_name[0] == '.')
            continue;
        t->tid[t->n] = atoi(e->d_name);
        t->ns[t->n++] = task_ns(pid, e->d_name);
    }
    closedir(d);
}

double bench_threads_max_delta_s(const bench_threads *a, const bench_threads *b)
{
    uint64_t best = 0;
    for (int i = 0; i < b->n; i++) {
        uint64_t before = 0;
        for (int j = 0; j < a->n; j++)
            if (a->tid[j] == b->tid[i])
                before = a->ns[j];
        if (b->ns[i] > before && b->ns[i] - before > best)
            best = b->ns[i] - before;
    }
    return (double)best * 1e-9;
}

uint64_t bench_proc_cpu_ns(pid_t pid)
{
    bench_threads t;
    bench_proc_threads(pid, &t);
    uint64_t sum = 0;
    for (int i = 0; i < t.n; i++)
        sum += t.ns[i];
    return sum;
}

long bench_proc_status_kb(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    size_t fl = strlen(field);
    long kb = -1;
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, field, fl) && line[fl] == ':') {
            kb = strtol(line + fl + 1, NULL, 10);
            break;
        }
    fclose(fp);
    return kb;
}
