/* bench/suite_http.c — W13: the built-in `http` operation against a
 * local nginx (tests/servers/nginx.sh, one worker process, keep-alive):
 *   W13a  GET per element, capacity 64 over 16 connections, 200k records
 *   W13w  wrk on the same URL with the same 16 connections (the server's and
 *         the loopback's bound as a plain HTTP client sees it); wrk is the
 *         Debian package wrk: without it the row says it is missing
 *   W13b  POST per element (a JSON body per row) to nginx's /sink
 *   W13c  the same rows in batch mode, 64 rows per POST (one JSON array)
 *   W13f  flood: W13a's operation against a slow server (the Python test
 *         server's /delay?ms=20, tests/servers/pyhttp.sh: at most 800
 *         answers/s over 16 connections) fed 10 KB records as fast as the
 *         driver can for 5 s; peak RSS <= 64 MB
 * Every row shows the worker's CPU per record and its peak RSS. Targets:
 * W13a >= 70% of W13w, W13c >= 10x W13b, W13f peak RSS <= 64 MB.
 * Every output is verified like any workload's (the operation copies the
 * input fields: no result fields, so outputs equal inputs). Without nginx
 * the W13 rows say it is not installed.
 */
#include "bench/suite_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/descriptor.h"

#define W13_CONNS 16
#define W13_CAPACITY 64
#define W13_BATCH 64

/* Starts nginx in a fresh temp dir; 0 and its HTTP port, 1 when nginx is
 * not installed, -1 on failure (why in err). */
static int nginx_start(char *dir, size_t n, int *port, char *err, size_t errn)
{
    snprintf(dir, n, "/tmp/fnw-bench-nginx-XXXXXX");
    if (!mkdtemp(dir))
        return snprintf(err, errn, "cannot make a temp dir"), -1;
    char cmd[700], line[128] = "";
    snprintf(cmd, sizeof cmd, "sh tests/servers/nginx.sh start %s --owner %ld 2>/dev/null", dir, (long)getpid());
    FILE *p = popen(cmd, "r");
    if (!p)
        return snprintf(err, errn, "cannot run tests/servers/nginx.sh"), -1;
    if (!fgets(line, sizeof line, p))
        line[0] = '\0';
    int st = pclose(p);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        return 1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || sscanf(line, "%d", port) != 1)
        return snprintf(err, errn, "tests/servers/nginx.sh did not start nginx (run from the repository root)"), -1;
    return 0;
}

static void nginx_stop(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "sh tests/servers/nginx.sh stop %s; rm -rf %s", dir, dir);
    if (system(cmd) != 0)
        fprintf(stderr, "W13: stopping nginx in %s failed\n", dir);
}

/* wrk's Requests/sec on url with conns connections for secs seconds; -1
 * when wrk is not installed or gave no figure. */
static double wrk_rate(const char *url, int conns, int secs)
{
    if (system("command -v wrk >/dev/null 2>&1") != 0)
        return -1;
    char cmd[600], line[256];
    snprintf(cmd, sizeof cmd, "wrk -t1 -c%d -d%ds %s 2>&1", conns, secs, url);
    FILE *p = popen(cmd, "r");
    double rate = -1;
    if (!p)
        return -1;
    while (fgets(line, sizeof line, p))
        if (sscanf(line, "Requests/sec: %lf", &rate) == 1)
            break;
    while (fgets(line, sizeof line, p))
        ;
    pclose(p);
    return rate;
}

/* The http operation: per element unless batch > 0. Strings must outlive it. */
static bench_op op_http(const char *url, const char *body, int batch)
{
    bench_op op = {0};
    op.operation = "http";
    op.unordered = 1;
    op.capacity = batch ? batch * W13_CONNS : W13_CAPACITY;
    op.timeout_ms = 60000;
    op.batched = batch > 0;
    op.batch_size = batch;
    bench_op_set(&op, "url", url);
    bench_op_set(&op, "max_connections", "16");
    if (body)
        bench_op_set(&op, "body", body);
    if (batch)
        bench_op_set(&op, "batch_body", "{\"inputs\": {items}}");
    return op;
}

static double w13_point(bench_suite *s, const char *id, const char *what, const bench_op *op, uint64_t n)
{
    char err[1200];
    bench_run r;
    suite_progress("running %s\n", id);
    suite_measure(s, 0, id, op, SMALL, &n, 1, 100000, &r, err, sizeof err);
    bench_row *row = suite_rate_row(s, id, what, &r, 0, err);
    if (row) {
        snprintf(row->target, sizeof row->target, "(info)");
        suite_show_peak_rss(row, &r);
    }
    return err[0] ? 0 : suite_rate_of(&r);
}

static void w13_missing(bench_suite *s, const char *why)
{
    bench_row *row = bench_report_add(&s->rep, "W13", "http op vs nginx");
    if (!row)
        return;
    snprintf(row->result, sizeof row->result, "not run");
    snprintf(row->target, sizeof row->target, "(info)");
    bench_row_note(row, "%s", why);
    row->verdict = BENCH_INFO;
}

/* W13f: starts the Python test server, floods W13a's operation at its
 * /delay?ms=20, stops the server. */
static void w13_flood(bench_suite *s)
{
    char dir[] = "/tmp/fnw-bench-pyhttp-XXXXXX", cmd[600], line[128] = "", err[1200] = "";
    suite_flood_out fo;
    memset(&fo, 0, sizeof fo);
    suite_progress("running %s\n", "W13f");
    if (!mkdtemp(dir))
        return;
    snprintf(cmd, sizeof cmd, "sh tests/servers/pyhttp.sh start %s --owner %ld 2>/dev/null", dir, (long)getpid());
    FILE *p = popen(cmd, "r");
    if (p && !fgets(line, sizeof line, p))
        line[0] = '\0';
    int st = p ? pclose(p) : -1, port = 0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || sscanf(line, "%d", &port) != 1) {
        snprintf(err, sizeof err, "tests/servers/pyhttp.sh did not start the Python test server");
    } else {
        static char url[128];
        snprintf(url, sizeof url, "http://127.0.0.1:%d/delay?ms=20", port);
        bench_op op = op_http(url, NULL, 0);
        suite_flood(s, "W13f", &op, 9974, 5, NULL, NULL, NULL, &fo, err, sizeof err);
    }
    suite_flood_row(s, "W13f", "flood W13a's op, server answers after 20 ms", &fo,
                    "5 s flood of 10 KB records; Python server /delay?ms=20, 16 connections, c64", err);
    snprintf(cmd, sizeof cmd, "sh tests/servers/pyhttp.sh stop %s; rm -rf %s", dir, dir);
    if (system(cmd) != 0)
        fprintf(stderr, "W13f: stopping the Python server in %s failed\n", dir);
}

void suite_w13(bench_suite *s)
{
    char dir[256], err[256] = "";
    int port = 0;
    int rc = nginx_start(dir, sizeof dir, &port, err, sizeof err);
    if (rc != 0) {
        w13_missing(s, rc > 0 ? "nginx is not installed (Debian package nginx-light)" : err);
        return;
    }
    static char get_url[128], sink_url[128];
    snprintf(get_url, sizeof get_url, "http://127.0.0.1:%d/json/a", port);
    snprintf(sink_url, sizeof sink_url, "http://127.0.0.1:%d/sink", port);
    static const char body[] = "{{\"s\": {f0}, \"n\": {f1}}}";
    uint64_t n = suite_scaled(s, 200000);
    bench_op get = op_http(get_url, NULL, 0);
    double a = w13_point(s, "W13a", "http GET per element c64, 16 conns, nginx", &get, n);
    suite_progress("running %s\n", "W13w");
    double w = wrk_rate(get_url, W13_CONNS, s->smoke ? 1 : 5);
    bench_row *row = bench_report_add(&s->rep, "W13w", "wrk -c16 on W13a's URL");
    if (row) {
        snprintf(row->target, sizeof row->target, "(info)");
        row->verdict = BENCH_INFO;
        if (w > 0) {
            bench_fmt_rate(row->result, sizeof row->result, w, "req/s");
            bench_row_kv(row, "requests_per_s", w);
            bench_row_note(row, "W13a is %.0f%% of this", a > 0 ? 100.0 * a / w : 0.0);
        } else {
            snprintf(row->result, sizeof row->result, "not run");
            bench_row_note(row, "wrk is not installed (Debian package wrk)");
        }
    }
    bench_row *ra = suite_find_row(s, "W13a");
    if (ra && w > 0 && !suite_failed(ra)) {
        snprintf(ra->vs_ceiling, sizeof ra->vs_ceiling, "%.0f%% of W13w", 100.0 * a / w);
        snprintf(ra->target, sizeof ra->target, ">= 70%% of W13w");
        bench_row_kv(ra, "ratio_to_w13w", a / w);
        bench_row_judge(ra, a >= 0.7 * w, 0);
    }
    bench_op post = op_http(sink_url, body, 0);
    double b = w13_point(s, "W13b", "http POST per element c64, 16 conns, nginx", &post, n);
    bench_op batch = op_http(sink_url, body, W13_BATCH);
    double c = w13_point(s, "W13c", "http POST batch 64, c1024, 16 conns, nginx", &batch, n);
    bench_row *rc_row = suite_find_row(s, "W13c");
    if (rc_row && b > 0 && c > 0 && !suite_failed(rc_row)) {
        snprintf(rc_row->vs_ceiling, sizeof rc_row->vs_ceiling, "%.1fx W13b", c / b);
        snprintf(rc_row->target, sizeof rc_row->target, ">= 10x W13b");
        bench_row_kv(rc_row, "ratio_to_w13b", c / b);
        bench_row_judge(rc_row, c >= 10 * b, 0);
    }
    nginx_stop(dir);
    w13_flood(s);
}
