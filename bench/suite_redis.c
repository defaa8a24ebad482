/* bench/suite_redis.c — W12: the `redis` operation against a local
 * redis-server, next to redis-benchmark on the same server in the same run.
 *
 * The server is a throwaway one from tests/servers/redis.sh (run from the
 * repository root, as `make bench` does). The benchmark's records carry
 * 8-char strings that take 26 distinct values (records.c), so 26 keys are
 * loaded (key = the string, value = a number) and the operation runs
 * `GET {f0}` into the INT field f1: the output has the input's type and
 * length, so every record is verified as in the other workloads.
 *   W12e  per element, UNORDERED, capacity 1,000, 1M records
 *   W12b  batch mode, batch 256, capacity 10,000, 1M records (one MGET per batch)
 *   W12P  redis-benchmark -t get -P 256 (pipelined, 50 clients)
 *   W12C  redis-benchmark -t get -c 50 (no pipelining)
 *   W12f  flood: W12b's operation fed as fast as the driver can for 6 s
 *         while redis-server is stopped (SIGSTOP) from 1 s to 4 s: nothing
 *         completes for 3 s, so capacity must bound what the worker holds
 * Targets: W12b >= 70% of W12P, W12e >= 50% of W12C, W12f peak RSS <= 64 MB.
 * Every row shows the worker's CPU per record and its peak RSS. Without
 * redis-server or redis-benchmark, one INFO row says so.
 */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/suite_internal.h"

#define SERVER_SCRIPT "tests/servers/redis.sh"

/* Runs cmd, keeps the last line of its output in out; returns its exit status. */
static int run_last_line(const char *cmd, char *out, size_t n)
{
    FILE *f = popen(cmd, "r");
    char line[512];
    out[0] = '\0';
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (line[0] && line[0] != '\n')
            snprintf(out, n, "%s", line);
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Loads the 26 keys the records name (records.c: 'a' + (seed + 7 i) % 26). */
static int load_keys(int port, char *err, size_t n)
{
    redisContext *c = redisConnect("127.0.0.1", port);
    if (!c || c->err) {
        snprintf(err, n, "cannot connect to redis-server on port %d: %s", port, c ? c->errstr : "out of memory");
        redisFree(c);
        return -1;
    }
    int rc = 0;
    for (int seed = 0; seed < 26 && rc == 0; seed++) {
        char key[SMALL + 1], val[16];
        for (int i = 0; i < SMALL; i++)
            key[i] = (char)('a' + (seed + i * 7) % 26);
        key[SMALL] = '\0';
        snprintf(val, sizeof val, "%d", 1000 + seed);
        redisReply *r = redisCommand(c, "SET %s %s", key, val);
        if (!r || r->type == REDIS_REPLY_ERROR) {
            snprintf(err, n, "SET %s failed: %s", key, r ? r->str : c->errstr);
            rc = -1;
        }
        freeReplyObject(r);
    }
    redisFree(c);
    return rc;
}

/* requests/s of `redis-benchmark ... -q` (the GET line), 0 when it failed. */
static double redis_benchmark(int port, const char *args, uint64_t n)
{
    char cmd[256], last[512];
    snprintf(cmd, sizeof cmd, "redis-benchmark -h 127.0.0.1 -p %d -t get -n %llu %s -q 2>/dev/null | tr '\\r' '\\n'",
             port, (unsigned long long)n, args);
    if (run_last_line(cmd, last, sizeof last) != 0)
        return 0;
    const char *p = strstr(last, "GET: ");
    return p ? atof(p + 5) : 0;
}

static bench_op op_redis(const char *address, int batched)
{
    bench_op op = {0};
    op.operation = "redis";
    op.unordered = 1;
    op.timeout_ms = 60000;
    op.batched = batched;
    op.batch_size = batched ? 256 : 0;
    op.capacity = batched ? 10000 : 1000;
    bench_op_set(&op, "address", address);
    bench_op_set(&op, "command", "GET {f0}");
    bench_op_set(&op, "result_field", "f1");
    return op;
}

static void info_row(bench_suite *s, const char *id, const char *what, double rate)
{
    bench_row *row = bench_report_add(&s->rep, id, what);
    if (!row)
        return;
    bench_fmt_rate(row->result, sizeof row->result, rate, "req/s");
    bench_row_kv(row, "requests_per_s", rate);
    row->verdict = rate > 0 ? BENCH_INFO : BENCH_MISS;
    if (rate <= 0)
        bench_row_note(row, "redis-benchmark failed or printed no GET line");
}

/* One operation row, judged against share x the redis-benchmark figure. */
static void op_row(bench_suite *s, const char *id, const char *what, const bench_op *op, double ref,
                   const char *ref_name, double share)
{
    char err[1200];
    bench_run r;
    uint64_t n = suite_scaled(s, MILLION);
    suite_progress("running %s\n", id);
    suite_measure(s, 0, id, op, SMALL, &n, 1, s->bundle, &r, err, sizeof err);
    bench_row *row = suite_rate_row(s, id, what, &r, 0, err);
    if (!row)
        return;
    suite_show_peak_rss(row, &r);
    double rate = suite_rate_of(&r);
    if (ref > 0)
        snprintf(row->vs_ceiling, sizeof row->vs_ceiling, "%.0f%% of %s", 100 * rate / ref, ref_name);
    snprintf(row->target, sizeof row->target, ">= %.0f%% of %s", 100 * share, ref_name);
    bench_row_kv(row, "reference_requests_per_s", ref);
    bench_row_judge(row, ref > 0 && rate >= share * ref, suite_failed(row));
}

/* W12f's server pause: SIGSTOP at 1 s, SIGCONT at 4 s into the flood. */
typedef struct pause_plan {
    pid_t pid;
    int stopped, resumed;
} pause_plan;

static void pause_tick(void *arg, double t)
{
    pause_plan *p = arg;
    if (!p->stopped && t >= 1.0) {
        p->stopped = kill(p->pid, SIGSTOP) == 0;
    } else if (p->stopped && !p->resumed && t >= 4.0) {
        kill(p->pid, SIGCONT);
        p->resumed = 1;
    }
}

static void flood_row(bench_suite *s, const char *dir, const char *address)
{
    char path[600], err[1200] = "";
    snprintf(path, sizeof path, "%s/srv/redis.pid", dir);
    FILE *f = fopen(path, "r");
    pause_plan plan = {0};
    int pid = 0;
    if (f) {
        if (fscanf(f, "%d", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    suite_progress("running %s\n", "W12f");
    suite_flood_out fo;
    memset(&fo, 0, sizeof fo);
    if (pid <= 0) {
        snprintf(err, sizeof err, "no redis-server pid in %s", path);
    } else {
        plan.pid = (pid_t)pid;
        bench_op op = op_redis(address, 1);
        suite_flood(s, "W12f", &op, SMALL, s->smoke ? 5 : 6, NULL, pause_tick, &plan, &fo, err, sizeof err);
        if (plan.stopped && !plan.resumed)
            kill(plan.pid, SIGCONT);
        if (!plan.stopped && !err[0])
            snprintf(err, sizeof err, "could not stop redis-server (pid %d)", pid);
    }
    suite_flood_row(s, "W12f", "flood W12b's op, redis-server stopped 1-4 s", &fo,
                    "6 s flood of 35 B records; redis-server SIGSTOPped from 1 s to 4 s", err);
}

void suite_w12(bench_suite *s)
{
    char dir[] = "/tmp/fnbench-redis-XXXXXX", cmd[512], out[512], err[512] = "", address[64];
    suite_progress("running %s\n", "W12");
    if (!mkdtemp(dir))
        return;
    snprintf(cmd, sizeof cmd, "sh %s start %s/srv --owner %d 2>&1", SERVER_SCRIPT, dir, (int)getpid());
    int rc = access(SERVER_SCRIPT, R_OK) == 0 ? run_last_line(cmd, out, sizeof out) : -1;
    int port = rc == 0 ? atoi(out) : 0;
    if (rc != 0 || port <= 0 || system("command -v redis-benchmark >/dev/null 2>&1") != 0 ||
        load_keys(port, err, sizeof err) != 0) {
        bench_row *row = bench_report_add(&s->rep, "W12", "redis GET enrichment vs redis-benchmark");
        if (row) {
            snprintf(row->result, sizeof row->result, "skipped");
            row->verdict = BENCH_INFO;
            bench_row_note(row, "%s", rc == 77 ? "redis-server is not installed" : err[0] ? err :
                           rc != 0 ? out : "redis-benchmark is not installed");
        }
    } else {
        snprintf(address, sizeof address, "127.0.0.1:%d", port);
        double piped = redis_benchmark(port, "-P 256", suite_scaled(s, 2 * MILLION));
        double c50 = redis_benchmark(port, "-c 50", suite_scaled(s, 200000));
        info_row(s, "W12P", "redis-benchmark -t get -P 256 (50 clients)", piped);
        info_row(s, "W12C", "redis-benchmark -t get -c 50, no pipelining", c50);
        bench_op e = op_redis(address, 0), b = op_redis(address, 1);
        op_row(s, "W12e", "redis GET per-element UNORDERED c1000, 1M", &e, c50, "W12C", 0.5);
        op_row(s, "W12b", "redis GET batch 256 (MGET) c10k, 1M", &b, piped, "W12P", 0.7);
        flood_row(s, dir, address);
    }
    if (port > 0) {
        snprintf(cmd, sizeof cmd, "sh %s stop %s/srv >/dev/null 2>&1", SERVER_SCRIPT, dir);
        if (system(cmd) != 0)
            fprintf(stderr, "W12: stopping redis-server failed\n");
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "W12: cannot remove %s\n", dir);
}
