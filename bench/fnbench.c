/* bench/fnbench.c — the benchmark driver: plays Flink's runner side
 * against build/fnworker (and against the null worker, for the ceiling),
 * prints a table of every workload with its target and PASS/MISS, and
 * writes results.json plus the data files bench/plots.gp draws.
 *
 *   fnbench [--smoke] [--only W1,W2,...] [--scale X] [--no-ipr]
 *           [--worker PATH] [--null-worker PATH] [--out DIR]
 *           [--bundle N] [--wrapper CMD] [--verbose]
 *
 * --smoke      a few thousand records through a few workloads, every
 *              count checked (< 20 s); for `make check`
 * --only       run only these workloads (ceilings C* always run)
 * --scale      multiply record counts and durations (e.g. 0.1 for a quick look)
 * --no-ipr     skip the callgrind instructions-per-record runs
 * --bundle     records per bundle in W1-W4 and W11 (default 1,000,000)
 * --wrapper    command prefix for the real worker (e.g. "perf record -g -o F --")
 *
 * Exit status: 0 when the worker behaved (PASS/MISS are reported, not
 * fatal), 1 when it misbehaved (error response, wrong record count, bad
 * exit), 2 for bad usage.
 */
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench/suite.h"

static void usage(void)
{
    fprintf(stderr, "usage: fnbench [--smoke] [--only W1,W2,...] [--scale X] [--no-ipr] [--bundle N]\n"
                    "               [--worker PATH] [--null-worker PATH] [--out DIR] [--wrapper CMD] [--verbose]\n");
}

static void machine(char *out, size_t n)
{
    char model[160] = "unknown CPU", line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
                snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
                model[strcspn(model, "\n")] = '\0';
                break;
            }
        fclose(f);
    }
    struct utsname u;
    uname(&u);
    snprintf(out, n, "%ld cores (%s), Linux %s; driver and worker share them", sysconf(_SC_NPROCESSORS_ONLN),
             model, u.release);
}

int main(int argc, char **argv)
{
    static char self_dir[512], def_worker[600], def_null[600], def_direct[600];
    char argv0[512];
    snprintf(argv0, sizeof argv0, "%s", argv[0]);
    snprintf(self_dir, sizeof self_dir, "%s", dirname(argv0));
    snprintf(def_worker, sizeof def_worker, "%s/../fnworker", self_dir);
    snprintf(def_null, sizeof def_null, "%s/null_worker", self_dir);
    snprintf(def_direct, sizeof def_direct, "%s/kserve_direct", self_dir);

    bench_suite s;
    memset(&s, 0, sizeof s);
    s.env.worker_bin = def_worker;
    s.env.null_bin = def_null;
    s.env.kserve_direct_bin = def_direct;
    s.env.out_dir = self_dir;
    s.scale = 1;
    s.ipr = 1;
    s.bundle = 1000000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--smoke")) {
            s.smoke = 1;
        } else if (!strcmp(a, "--no-ipr")) {
            s.ipr = 0;
        } else if (!strcmp(a, "--verbose")) {
            s.env.verbose = 1;
        } else if (v && !strcmp(a, "--only")) {
            s.only = v, i++;
        } else if (v && !strcmp(a, "--scale")) {
            s.scale = atof(v), i++;
        } else if (v && !strcmp(a, "--bundle")) {
            s.bundle = strtoull(v, NULL, 10), i++;
        } else if (v && !strcmp(a, "--worker")) {
            s.env.worker_bin = v, i++;
        } else if (v && !strcmp(a, "--null-worker")) {
            s.env.null_bin = v, i++;
        } else if (v && !strcmp(a, "--out")) {
            s.env.out_dir = v, i++;
        } else if (v && !strcmp(a, "--wrapper")) {
            s.wrapper = v, i++;
        } else {
            usage();
            return 2;
        }
    }
    if (s.scale <= 0 || s.bundle == 0) {
        usage();
        return 2;
    }
    for (int i = 0; i < 2; i++) {
        const char *bin = i ? s.env.null_bin : s.env.worker_bin;
        if (access(bin, X_OK) != 0) {
            fprintf(stderr, "fnbench: %s is not an executable (run `make all bench-tools`)\n", bin);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    fnw_error err;
    s.env.rig = bench_rig_new(s.env.verbose, &err);
    if (!s.env.rig) {
        fprintf(stderr, "fnbench: %s\n", err.msg);
        return 1;
    }
    double t0 = bench_now();
    if (s.smoke) {
        s.ipr = 0;
        bench_suite_smoke(&s);
        for (int i = 0; i < s.rep.n; i++)   /* smoke checks behaviour, not speed */
            if (s.rep.rows[i].verdict != BENCH_FAIL)
                s.rep.rows[i].verdict = BENCH_INFO;
    } else {
        bench_suite_run(&s);
    }
    double elapsed = bench_now() - t0;
    char m[400], path[600];
    machine(m, sizeof m);
    char title[600];
    char scale[64] = "";
    if ((s.scale != 1 || s.bundle != 1000000) && !s.smoke)
        snprintf(scale, sizeof scale, " (record counts x%g, %llu-record bundles)", s.scale,
                 (unsigned long long)s.bundle);
    snprintf(title, sizeof title, "fnworker benchmark%s%s — %s; ceiling = same driver against the null worker",
             s.smoke ? " (smoke)" : "", scale, m);
    bench_report_print(&s.rep, elapsed, title);
    snprintf(path, sizeof path, "%s/%s", s.env.out_dir, s.smoke ? "smoke-results.json" : "results.json");
    if (bench_report_json(&s.rep, path, m, elapsed) < 0)
        fprintf(stderr, "fnbench: could not write %s\n", path);
    else
        printf("results: %s\n", path);
    int failures = bench_report_failures(&s.rep);
    bench_report_free(&s.rep);
    bench_env_free_chunks(&s.env);
    bench_rig_free(s.env.rig);
    return failures ? 1 : 0;
}
