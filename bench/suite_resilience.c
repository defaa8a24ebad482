/* bench/suite_resilience.c — W21 and W22: calling a service the way
 * production needs (docs/resilience.md), the `http` operation against the
 * Python test server (tests/servers/pyhttp.sh), whose /stats counts calls
 * server-side:
 *   W21   per element, capacity 1000, to /limited?rps=100 (100 answers a
 *         second, then 429 + Retry-After: 1), 3000 records: adaptive concurrency
 *         (the default) must reach >= 90 rows/s with no failed bundle
 *   W21o  the same job with adaptive concurrency off: what it did (a 429 is
 *         then an ordinary failure and the bundle fails)
 *   W22   W22's service is down (500) for 10 s from 2 s after its first call;
 *         records paced at 400/s for 14 s in 1 s bundles; circuit breaker
 *         (5 failures, 2 s cool-down) + on_failure DEFAULT: no bundle fails
 *         and the calls during the outage are < 1% of those of
 *   W22n  the same job without the breaker (on_failure DEFAULT alone)
 * Every output is verified like any workload's: the operation copies the
 * input fields (no result fields) and the fallback has the same length.
 */
#include "bench/suite_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define W21_RPS 100
#define W22_RATE_TICK 2 /* records every 5 ms: 400/s */
#define W22_SECS 14

typedef struct pyhttp {
    char dir[64];
    int port;
} pyhttp;

static int pyhttp_start(pyhttp *h, char *err, size_t errn)
{
    char cmd[600], line[128] = "";
    snprintf(h->dir, sizeof h->dir, "/tmp/fnw-bench-res-XXXXXX");
    if (!mkdtemp(h->dir))
        return snprintf(err, errn, "cannot make a temp dir"), -1;
    snprintf(cmd, sizeof cmd, "sh tests/servers/pyhttp.sh start %s --owner %ld 2>/dev/null", h->dir,
             (long)getpid());
    FILE *p = popen(cmd, "r");
    if (p && !fgets(line, sizeof line, p))
        line[0] = '\0';
    int st = p ? pclose(p) : -1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || sscanf(line, "%d", &h->port) != 1)
        return snprintf(err, errn, "tests/servers/pyhttp.sh did not start the Python test server"), -1;
    return 0;
}

static void pyhttp_stop(const pyhttp *h)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "sh tests/servers/pyhttp.sh stop %s; rm -rf %s", h->dir, h->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "resilience: stopping the Python server in %s failed\n", h->dir);
}

/* The server's counts for key: calls, ok, refused (429), down (500). */
typedef struct svc_stats {
    long calls, ok, refused, down;
} svc_stats;

static void svc_stats_get(const pyhttp *h, const char *key, svc_stats *st)
{
    char cmd[400], line[256] = "";
    memset(st, 0, sizeof *st);
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,urllib.request as u;d=json.load(u.urlopen("
             "\"http://127.0.0.1:%d/stats?key=%s\"));print(d[\"calls\"],d[\"ok\"],d[\"refused\"],d[\"down\"])'",
             h->port, key);
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    if (fgets(line, sizeof line, p))
        sscanf(line, "%ld %ld %ld %ld", &st->calls, &st->ok, &st->refused, &st->down);
    pclose(p);
}

static bench_op op_http(const char *url, int capacity)
{
    bench_op op = { 0 };
    op.operation = "http";
    op.capacity = capacity;
    op.timeout_ms = 120000;
    bench_op_set(&op, "url", url);
    bench_op_set(&op, "max_connections", "64");
    return op;
}

/* ---- W21: a rate-limited service ------------------------------------------------------- */

static void w21_side(bench_suite *s, const pyhttp *h, int adaptive, double *rate, svc_stats *st, char *err,
                     size_t errn)
{
    static char url[2][160];
    char key[32];
    snprintf(key, sizeof key, "w21-%d-%ld", adaptive, (long)getpid());
    snprintf(url[adaptive], sizeof url[adaptive], "http://127.0.0.1:%d/limited?rps=%d&key=%s", h->port, W21_RPS,
             key);
    bench_op op = op_http(url[adaptive], 1000);
    op.adaptive_off = !adaptive;
    uint64_t n = (uint64_t)W21_RPS * (s->smoke ? 2 : 30);
    bench_run r;
    memset(&r, 0, sizeof r);
    *rate = 0;
    err[0] = '\0';
    bench_session ss;
    if (suite_session_start(s, &ss, 0, adaptive ? "W21" : "W21o", &op, SMALL, 50) == 0)
        bench_session_run(&ss, SMALL, n, n, 0, &r);
    suite_session_stop(&ss, err, errn);
    if (!err[0])
        *rate = suite_rate_of(&r);
    svc_stats_get(h, key, st);
}

void suite_w21(bench_suite *s)
{
    char err[1200] = "", err_off[1200] = "";
    pyhttp h;
    suite_progress("running %s\n", "W21");
    double a = 0, o = 0;
    svc_stats sa, so;
    memset(&sa, 0, sizeof sa);
    memset(&so, 0, sizeof so);
    int up = pyhttp_start(&h, err, sizeof err) == 0;
    if (up) {
        w21_side(s, &h, 1, &a, &sa, err, sizeof err);
        sleep(2); /* a fresh second window for the other side */
        w21_side(s, &h, 0, &o, &so, err_off, sizeof err_off);
        pyhttp_stop(&h);
    }
    bench_row *row = bench_report_add(&s->rep, "W21", "http per element c1000 vs a 100 req/s limit, adaptive");
    if (row) {
        bench_fmt_rate(row->result, sizeof row->result, a, "rows/s");
        snprintf(row->target, sizeof row->target, ">= 90%% of %d/s, 0 failed", W21_RPS);
        snprintf(row->vs_ceiling, sizeof row->vs_ceiling, "%.0f%% of the limit", 100.0 * a / W21_RPS);
        bench_row_kv(row, "rows_per_s", a);
        bench_row_kv(row, "ratio_to_limit", a / W21_RPS);
        bench_row_kv(row, "served", (double)sa.ok);
        bench_row_kv(row, "refused_429", (double)sa.refused);
        bench_row_note(row, "server: %ld answered, %ld refused with 429", sa.ok, sa.refused);
        if (err[0])
            bench_row_note(row, "%s", err);
        bench_row_judge(row, up && !err[0] && a >= 0.9 * W21_RPS, err[0] != 0);
    }
    row = bench_report_add(&s->rep, "W21o", "the same job, adaptive concurrency off");
    if (row) {
        row->verdict = BENCH_INFO;
        snprintf(row->target, sizeof row->target, "(info: fails or stalls)");
        if (err_off[0]) {
            snprintf(row->result, sizeof row->result, "bundle failed");
            bench_row_note(row, "%.300s", err_off);
        } else {
            bench_fmt_rate(row->result, sizeof row->result, o, "rows/s");
        }
        bench_row_kv(row, "failed", err_off[0] ? 1 : 0);
        bench_row_kv(row, "refused_429", (double)so.refused);
        bench_row_note(row, "server: %ld answered, %ld refused with 429", so.ok, so.refused);
    }
}

/* ---- W22: a service that goes down for 10 s -------------------------------------------- */

static int put_small(fnw_buf *b, int64_t ts_us, uint64_t seq)
{
    return bench_record_put(b, ts_us, INT64_MIN, SMALL, seq, (int32_t)seq);
}

static void w22_side(bench_suite *s, const pyhttp *h, int breaker, svc_stats *st, uint64_t *rows, char *err,
                     size_t errn)
{
    static char url[2][200];
    char key[32];
    snprintf(key, sizeof key, "w22-%d-%ld", breaker, (long)getpid());
    snprintf(url[breaker], sizeof url[breaker], "http://127.0.0.1:%d/outage?after=2&for=10&key=%s", h->port,
             key);
    bench_op op = op_http(url[breaker], 64);
    op.on_failure = 1; /* DEFAULT */
    /* the data row ROW<f0 STRING, f1 INT> with an 8-char string: the outputs keep their length */
    op.fallback_json = "{\"f0\":\"FALLBACK\",\"f1\":0}";
    if (breaker) {
        op.breaker_failures = 5;
        op.breaker_cooldown_ms = 2000;
    }
    bench_session ss;
    suite_pacer p;
    memset(&p, 0, sizeof p);
    p.period = 0.005;
    p.per_tick = W22_RATE_TICK;
    p.put = put_small;
    if (suite_session_start(s, &ss, 0, breaker ? "W22" : "W22n", &op, SMALL, 20) == 0) {
        p.out_len = bench_session_out_len(&ss, SMALL);
        suite_run_paced(&ss, s->smoke ? 3 : W22_SECS, 1.0, &p);
    }
    suite_session_stop(&ss, err, errn);
    *rows = p.n_lat;
    suite_pacer_free(&p);
    svc_stats_get(h, key, st);
}

void suite_w22(bench_suite *s)
{
    char err[1200] = "", err_n[1200] = "";
    pyhttp h;
    suite_progress("running %s\n", "W22");
    svc_stats sb, sn;
    uint64_t rb = 0, rn = 0;
    memset(&sb, 0, sizeof sb);
    memset(&sn, 0, sizeof sn);
    int up = pyhttp_start(&h, err, sizeof err) == 0;
    if (up) {
        w22_side(s, &h, 1, &sb, &rb, err, sizeof err);
        w22_side(s, &h, 0, &sn, &rn, err_n, sizeof err_n);
        pyhttp_stop(&h);
    }
    double share = sn.down > 0 ? (double)sb.down / (double)sn.down : 1;
    bench_row *row = bench_report_add(&s->rep, "W22", "10 s outage, breaker + fallback vs fallback alone");
    if (row) {
        snprintf(row->result, sizeof row->result, "%ld vs %ld calls while down", sb.down, sn.down);
        snprintf(row->target, sizeof row->target, "0 failed, < 1%% of W22n's calls");
        snprintf(row->vs_ceiling, sizeof row->vs_ceiling, "%.2f%% of W22n", 100.0 * share);
        bench_row_kv(row, "calls_down_breaker", (double)sb.down);
        bench_row_kv(row, "calls_down_no_breaker", (double)sn.down);
        bench_row_kv(row, "share", share);
        bench_row_kv(row, "rows_breaker", (double)rb);
        bench_row_kv(row, "rows_no_breaker", (double)rn);
        bench_row_note(row, "400 rows/s for %d s in 1 s bundles; rows out %llu (breaker) and %llu (none); "
                            "answered %ld and %ld",
                       W22_SECS, (unsigned long long)rb, (unsigned long long)rn, sb.ok, sn.ok);
        if (err[0])
            bench_row_note(row, "breaker side: %s", err);
        if (err_n[0])
            bench_row_note(row, "no-breaker side: %s", err_n);
        bench_row_judge(row, up && !err[0] && !err_n[0] && sn.down > 0 && share < 0.01, !up || err[0] != 0);
    }
}
