/* bench/proc.h — the worker process as the benchmark sees it:
 * launched the way Flink launches it (only --id and --provision_endpoint,
 * optionally behind a wrapper command such as valgrind), its output kept in
 * a log file, its CPU time (all threads, ns, from /proc/PID/task/STAR/schedstat)
 * and memory (/proc/PID/status) read while it runs, and its exit awaited.
 */
#ifndef BENCH_PROC_H
#define BENCH_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "codecs/error.h"

typedef struct bench_proc {
    pid_t pid;
    int exited;
    int status;     /* waitpid status once exited */
} bench_proc;

/* Starts wrapper... bin --id=ID --provision_endpoint=URL with stdout and
 * stderr appended to log_path. wrapper is a space-separated command prefix
 * or NULL. */
int bench_proc_spawn(bench_proc *p, const char *wrapper, const char *bin, const char *id,
                     const char *url, const char *log_path, fnw_error *err);
/* 1 once the process has exited (status kept), else 0. Never blocks. */
int bench_proc_poll(bench_proc *p);
void bench_proc_signal(bench_proc *p, int sig);
/* Exit code (0..255), 128+signal if killed, -1 while running. */
int bench_proc_exit_code(const bench_proc *p);

/* CPU time of every live thread of pid, in ns; 0 if unreadable. */
uint64_t bench_proc_cpu_ns(pid_t pid);
/* Per-thread CPU times of pid (up to 64 threads), to find a saturated one. */
#define BENCH_MAX_THREADS 64
typedef struct bench_threads {
    int n;
    int tid[BENCH_MAX_THREADS];
    uint64_t ns[BENCH_MAX_THREADS];
} bench_threads;
void bench_proc_threads(pid_t pid, bench_threads *t);
/* The largest CPU time one thread gained from a to b, in seconds. */
double bench_threads_max_delta_s(const bench_threads *a, const bench_threads *b);

/* A "Vm...:" line of /proc/PID/status in kB (e.g. "VmRSS"); -1 if absent. */
long bench_proc_status_kb(pid_t pid, const char *field);

#endif
