/* bench/suite_cache.c — W23: the lookup cache of the `redis` operation
 * (cache_max_rows) against a local redis-server, with and without the
 * cache, in one run.
 *
 * The benchmark's records are the same ~28.6k records (one 1 MB chunk)
 * sent again and again, their INT field f1 numbering them within the chunk
 * (records.c). The job is `GET {f1}` into f1, per element, UNORDERED,
 * capacity 1,000: with 10 chunks' worth of records, 10% of the rows have a
 * distinct key. Every key is loaded (key "i", value i), so the output
 * equals the input and every record is verified by length as elsewhere.
 *   W23u  uncached: one GET per row (the reference)
 *   W23   cache_max_rows 100,000: GETs counted server-side (INFO
 *         commandstats) over the whole session, warm-up (1,000 rows) included
 * Each runs 3 times in fresh sessions (a cold cache each time), alternating;
 * the best run of each is shown (the runs are short: 0.2-0.7 s).
 * Targets: W23's GETs <= 15% of its rows, and its rows/s >= 3x W23u's.
 */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/records.h"
#include "bench/session.h"
#include "bench/suite_internal.h"

#define SERVER_SCRIPT "tests/servers/redis.sh"
#define W23_WARMUP 1000
#define RUNS 3

static int last_line(const char *cmd, char *out, size_t n)
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

/* Records in one chunk of 8-char records: the distinct keys. */
static uint64_t chunk_records(void)
{
    size_t per = bench_record_payload_len(SMALL) + 1; /* + the 1-byte varint */
    return (BENCH_CHUNK_BYTES + per - 1) / per;
}

static int load_keys(int port, uint64_t n, char *err, size_t errn)
{
    redisContext *c = redisConnect("127.0.0.1", port);
    if (!c || c->err) {
        snprintf(err, errn, "cannot connect to redis-server on port %d", port);
        redisFree(c);
        return -1;
    }
    int rc = 0;
    for (uint64_t i = 0; i < n; i++)
        redisAppendCommand(c, "SET %llu %llu", (unsigned long long)i, (unsigned long long)i);
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        void *r = NULL;
        if (redisGetReply(c, &r) != REDIS_OK) {
            snprintf(err, errn, "loading key %llu failed: %s", (unsigned long long)i, c->errstr);
            rc = -1;
        }
        freeReplyObject(r);
    }
    redisFree(c);
    return rc;
}

/* GET calls the server has answered so far; -1 when it cannot tell. */
static long long get_calls(int port)
{
    redisContext *c = redisConnect("127.0.0.1", port);
    long long n = -1;
    if (c && !c->err) {
        redisReply *r = redisCommand(c, "INFO commandstats");
        const char *at = r && r->str ? strstr(r->str, "cmdstat_get:calls=") : NULL;
        n = at ? atoll(at + strlen("cmdstat_get:calls=")) : r ? 0 : -1;
        freeReplyObject(r);
    }
    redisFree(c);
    return n;
}

static bench_op op_lookup(const char *address, int cached)
{
    bench_op op = { 0 };
    op.operation = "redis";
    op.unordered = 1;
    op.timeout_ms = 60000;
    op.capacity = 1000;
    bench_op_set(&op, "address", address);
    bench_op_set(&op, "command", "GET {f1}");
    bench_op_set(&op, "result_field", "f1");
    if (cached)
        bench_op_set(&op, "cache_max_rows", "100000");
    return op;
}

/* One session (a fresh worker: a cold cache): warm-up, then n records;
 * *calls = GETs over both. */
static int run_one(bench_suite *s, const char *id, const bench_op *op, int port, uint64_t n, bench_run *r,
                   long long *calls, char *err, size_t errn)
{
    bench_session ss;
    memset(r, 0, sizeof *r);
    err[0] = '\0';
    long long before = get_calls(port);
    suite_progress("running %s\n", id);
    if (suite_session_start(s, &ss, 0, id, op, SMALL, W23_WARMUP) == 0)
        bench_session_run(&ss, SMALL, n, s->bundle, 0, r);
    int rc = suite_session_stop(&ss, err, errn);
    long long after = get_calls(port);
    *calls = before >= 0 && after >= 0 ? after - before : -1;
    return rc;
}

void suite_w23(bench_suite *s)
{
    char dir[] = "/tmp/fnbench-cache-XXXXXX", cmd[512], out[512], err[1200] = "", address[64];
    suite_progress("running %s\n", "W23");
    if (!mkdtemp(dir))
        return;
    snprintf(cmd, sizeof cmd, "sh %s start %s/srv --owner %d 2>&1", SERVER_SCRIPT, dir, (int)getpid());
    int rc = access(SERVER_SCRIPT, R_OK) == 0 ? last_line(cmd, out, sizeof out) : -1;
    int port = rc == 0 ? atoi(out) : 0;
    uint64_t keys = chunk_records();
    if (rc != 0 || port <= 0 || load_keys(port, keys, err, sizeof err) != 0) {
        bench_row *row = bench_report_add(&s->rep, "W23", "redis lookup cache, 10% distinct keys");
        if (row) {
            snprintf(row->result, sizeof row->result, "skipped");
            row->verdict = BENCH_INFO;
            bench_row_note(row, "%s", rc == 77 ? "redis-server is not installed" : err[0] ? err : out);
        }
    } else {
        snprintf(address, sizeof address, "127.0.0.1:%d", port);
        uint64_t n = 10 * keys;
        if (s->scale < 1)
            n = (uint64_t)((double)n * s->scale) < keys ? keys : (uint64_t)((double)n * s->scale);
        bench_run ru, rc_run;
        long long calls_u = -1, calls_c = -1;
        char err_u[1200] = "", err_c[1200] = "";
        memset(&ru, 0, sizeof ru);
        memset(&rc_run, 0, sizeof rc_run);
        bench_op u = op_lookup(address, 0), c = op_lookup(address, 1);
        /* best of 3 sessions each, alternating (the runs are short: the machine's noise) */
        for (int k = 0; k < RUNS; k++) {
            bench_run r;
            long long calls;
            char e[1200];
            if (run_one(s, "W23u", &u, port, n, &r, &calls, e, sizeof e) != 0 || e[0] || k == 0 ||
                suite_rate_of(&r) > suite_rate_of(&ru)) {
                if (k == 0 || !err_u[0]) {
                    ru = r;
                    calls_u = calls;
                    snprintf(err_u, sizeof err_u, "%s", e);
                }
            }
            if (run_one(s, "W23", &c, port, n, &r, &calls, e, sizeof e) != 0 || e[0] || k == 0 ||
                suite_rate_of(&r) > suite_rate_of(&rc_run)) {
                if (k == 0 || !err_c[0]) {
                    rc_run = r;
                    calls_c = calls;
                    snprintf(err_c, sizeof err_c, "%s", e);
                }
            }
        }
        double rate_u = suite_rate_of(&ru), rate_c = suite_rate_of(&rc_run);
        bench_row *row = suite_rate_row(s, "W23u", "redis GET {f1} per element c1000, uncached", &ru, 0, err_u);
        if (row) {
            suite_show_peak_rss(row, &ru);
            bench_row_kv(row, "redis_get_calls", (double)calls_u);
            snprintf(row->target, sizeof row->target, "(info: the reference)");
            if (!suite_failed(row))
                row->verdict = BENCH_INFO;
        }
        row = suite_rate_row(s, "W23", "the same with cache_max_rows 100000, 10% distinct keys", &rc_run, 0,
                             err_c);
        if (row) {
            double rows = (double)(n + W23_WARMUP);
            double share = calls_c >= 0 ? (double)calls_c / rows : -1;
            suite_show_peak_rss(row, &rc_run);
            if (rate_u > 0)
                snprintf(row->vs_ceiling, sizeof row->vs_ceiling, "%.1fx W23u, GETs %.1f%% of rows",
                         rate_c / rate_u, 100 * share);
            snprintf(row->target, sizeof row->target, ">= 3x W23u, GETs <= 15%% of rows");
            bench_row_kv(row, "redis_get_calls", (double)calls_c);
            bench_row_kv(row, "rows_with_warmup", rows);
            bench_row_kv(row, "get_share_of_rows", share);
            bench_row_kv(row, "ratio_to_uncached", rate_u > 0 ? rate_c / rate_u : 0);
            bench_row_note(row, "%llu distinct keys over %llu rows (+%d warm-up); uncached %lld GETs",
                           (unsigned long long)keys, (unsigned long long)n, W23_WARMUP, calls_u);
            bench_row_judge(row, rate_u > 0 && rate_c >= 3 * rate_u && share >= 0 && share <= 0.15,
                            suite_failed(row));
        }
    }
    if (port > 0) {
        snprintf(cmd, sizeof cmd, "sh %s stop %s/srv >/dev/null 2>&1", SERVER_SCRIPT, dir);
        if (system(cmd) != 0)
            fprintf(stderr, "W23: stopping redis-server failed\n");
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "W23: cannot remove %s\n", dir);
}
