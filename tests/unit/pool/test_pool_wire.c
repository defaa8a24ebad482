/* tests/unit/pool/test_pool_wire.c — the launcher protocol (pool/wire.c): a
 * request split across any number of reads parses to the same fields; the
 * bytes after the empty line are left to the caller; hostile input (control
 * characters, NUL, a missing or repeated field, a non-flag arg, too many
 * args, a request without end beyond the size limit) and an unknown version
 * or command are refused with a message naming the problem; worker output
 * is framed into one protocol line per line, long lines split, the
 * unfinished last line flushed; a worker's stats line parses, a malformed
 * one is refused; version 1 and 2 requests; the relay's lines (version 2):
 * SPAWN and KILL from the worker checked (a loopback endpoint, an id of
 * [A-Za-z0-9._-] of at most 256 bytes, a number 1 .. 2^32-1), the launcher's
 * SPAWNED, SPAWNFAIL, C and CHILDEXIT parsed, anything else refused. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/wire.h"
#include "tests/unit/check_run.h"

static fnw_wire_request req;
static fnw_error err;

static int feed_all(const char *text, size_t chunk, size_t *total_used)
{
    size_t n = strlen(text), off = 0;
    *total_used = 0;
    fnw_wire_request_init(&req);
    memset(&err, 0, sizeof err);
    while (off < n) {
        size_t k = n - off < chunk ? n - off : chunk, used = 0;
        int rc = fnw_wire_request_feed(&req, text + off, k, &used, &err);
        *total_used += used;
        if (rc != 0)
            return rc;
        off += k;
    }
    return 0;
}

static int parse(const char *text)
{
    size_t used;
    return feed_all(text, strlen(text) ? strlen(text) : 1, &used);
}

#define GOOD "FNWPOOL 1 START\nid=w-1\nprovision_endpoint=localhost:4567\narg=--log-level=debug\narg=--semi_persist_dir=/tmp\n\n"

START_TEST(request_in_any_split)
{
    for (size_t chunk = 1; chunk <= strlen(GOOD); chunk++) {
        size_t used;
        ck_assert_int_eq(feed_all(GOOD, chunk, &used), 1);
        ck_assert_uint_eq(used, strlen(GOOD));
        ck_assert_str_eq(req.id, "w-1");
        ck_assert_str_eq(req.provision_endpoint, "localhost:4567");
        ck_assert_uint_eq(req.n_args, 2);
        ck_assert_str_eq(req.args[0], "--log-level=debug");
        ck_assert_str_eq(req.args[1], "--semi_persist_dir=/tmp");
    }
}
END_TEST

START_TEST(crlf_lines_and_trailing_bytes)
{
    const char *text = "FNWPOOL 1 START\r\nid=a\r\nprovision_endpoint=h:1\r\n\r\nEXTRA";
    size_t used;
    ck_assert_int_eq(feed_all(text, strlen(text), &used), 1);
    ck_assert_uint_eq(used, strlen(text) - 5);
    ck_assert_str_eq(req.id, "a");
    ck_assert_str_eq(req.provision_endpoint, "h:1");
}
END_TEST

START_TEST(needs_more_until_empty_line)
{
    size_t used;
    fnw_wire_request_init(&req);
    ck_assert_int_eq(fnw_wire_request_feed(&req, "FNWPOOL 1 START\nid=a\n", 21, &used, &err), 0);
    ck_assert_uint_eq(used, 21);
}
END_TEST

static void refused(const char *text, const char *needle)
{
    ck_assert_int_eq(parse(text), -1);
    ck_assert_msg(strstr(err.msg, needle), "'%s' not in '%s'", needle, err.msg);
}

START_TEST(unknown_version_and_command)
{
    refused("FNWPOOL 3 START\nid=a\nprovision_endpoint=h:1\n\n", "unsupported protocol version 3");
    refused("FNWPOOL 0 START\nid=a\nprovision_endpoint=h:1\n\n", "this pool speaks versions 1 to 2");
    refused("FNWPOOL 2 STOP\n\n", "unknown command 'STOP' (version 2 knows START)");
    refused("FNWPOOL 1 STOP\n\n", "unknown command 'STOP'");
    refused("FNWPOOL x START\n\n", "malformed first line");
    refused("GET / HTTP/1.1\r\nHost: x\r\n\r\n", "not a fnworker pool request");
    refused("\n\n", "empty request");
}
END_TEST

/* Version 1 and 2 requests carry the same fields; the version is kept. */
START_TEST(versions_one_and_two)
{
    ck_assert_int_eq(parse("FNWPOOL 1 START\nid=a\nprovision_endpoint=h:1\n\n"), 1);
    ck_assert_int_eq(req.version, 1);
    ck_assert_int_eq(parse("FNWPOOL 2 START\nid=a\nprovision_endpoint=h:1\ntoken=t\narg=--log-level=x\n\n"), 1);
    ck_assert_int_eq(req.version, 2);
    ck_assert_str_eq(req.token, "t");
    ck_assert_uint_eq(req.n_args, 1);
}
END_TEST

static fnw_wire_relay_line rl;

static int worker_line(const char *line)
{
    memset(&err, 0, sizeof err);
    return fnw_wire_worker_line(line, &rl, &err);
}

static void worker_refused(const char *line, uint32_t n, const char *needle)
{
    ck_assert_msg(worker_line(line) == -1, "accepted: %s", line);
    ck_assert_uint_eq(rl.n, n);
    ck_assert_msg(strstr(err.msg, needle), "%s: '%s' not in '%s'", line, needle, err.msg);
}

/* What the worker may ask for: a loopback endpoint and a plain id only. */
START_TEST(worker_lines)
{
    ck_assert_int_eq(worker_line("SPAWN 1 w-1-py-0a9f.x_y 127.0.0.1:40123"), 0);
    ck_assert_int_eq(rl.verb, FNW_WIRE_SPAWN);
    ck_assert_uint_eq(rl.n, 1);
    ck_assert_int_eq((int)rl.text_len, 15);
    ck_assert_int_eq(strncmp(rl.id, "w-1-py-0a9f.x_y", rl.text_len), 0);
    ck_assert_str_eq(rl.endpoint, "127.0.0.1:40123");
    ck_assert_int_eq(worker_line("SPAWN 4294967295 a localhost:1"), 0);
    ck_assert_int_eq(worker_line("SPAWN 2 a [::1]:65535"), 0);
    ck_assert_int_eq(worker_line("SPAWN 2 a ::1:8080"), 0);
    ck_assert_int_eq(worker_line("KILL 7"), 0);
    ck_assert_int_eq(rl.verb, FNW_WIRE_KILL);
    ck_assert_uint_eq(rl.n, 7);
    char id[400], line[450];
    memset(id, 'a', 257);
    id[256] = '\0';
    snprintf(line, sizeof line, "SPAWN 3 %s 127.0.0.1:1", id);
    ck_assert_int_eq(worker_line(line), 0); /* 256 bytes */
    id[256] = 'a';
    id[257] = '\0';
    snprintf(line, sizeof line, "SPAWN 3 %s 127.0.0.1:1", id);
    worker_refused(line, 3, "the relay id is not 1 to 256 bytes");

    worker_refused("SPAWN 1 a 10.0.0.1:80", 1, "not <host>:<port> on loopback");
    worker_refused("SPAWN 1 a example.com:80", 1, "on loopback");
    worker_refused("SPAWN 1 a 127.0.0.1.evil:80", 1, "on loopback");
    worker_refused("SPAWN 1 a 127.0.0.1:0", 1, "on loopback");
    worker_refused("SPAWN 1 a 127.0.0.1:65536", 1, "on loopback");
    worker_refused("SPAWN 1 a 127.0.0.1:080", 1, "on loopback");
    worker_refused("SPAWN 1 a 127.0.0.1:", 1, "on loopback");
    worker_refused("SPAWN 1 a 127.0.0.1", 1, "on loopback");
    worker_refused("SPAWN 1 a 127.0.0.1:80 --x", 1, "on loopback");
    worker_refused("SPAWN 1 a;rm -rf / 127.0.0.1:80", 1, "other than [A-Za-z0-9._-]");
    worker_refused("SPAWN 1 $(id) 127.0.0.1:80", 1, "other than [A-Za-z0-9._-]");
    worker_refused("SPAWN 1 a\t 127.0.0.1:80", 1, "other than");
    worker_refused("SPAWN 1  127.0.0.1:80", 1, "not 1 to 256 bytes");
    worker_refused("SPAWN 1 a", 1, "no endpoint");
    worker_refused("SPAWN 0 a 127.0.0.1:1", 0, "number is not a decimal");
    worker_refused("SPAWN 01 a 127.0.0.1:1", 0, "number");
    worker_refused("SPAWN 4294967296 a 127.0.0.1:1", 0, "number");
    worker_refused("SPAWN -1 a 127.0.0.1:1", 0, "number");
    worker_refused("KILL 1 2", 1, "unexpected text");
    worker_refused("KILL 1 ", 1, "unexpected text");
    worker_refused("KILL x", 0, "number");
    worker_refused("SPAWNED 1 2", 0, "not a SPAWN or KILL line");
    worker_refused("", 0, "not a SPAWN or KILL line");
}
END_TEST

static int launcher_line(const char *line)
{
    return fnw_wire_launcher_line(line, strlen(line), &rl);
}

START_TEST(launcher_lines)
{
    ck_assert_int_eq(launcher_line("SPAWNED 1 4242"), 0);
    ck_assert_int_eq(rl.verb, FNW_WIRE_SPAWNED);
    ck_assert_int_eq(rl.value, 4242);
    ck_assert_int_eq(launcher_line("CHILDEXIT 2 0"), 0);
    ck_assert_int_eq(rl.verb, FNW_WIRE_CHILDEXIT);
    ck_assert_uint_eq(rl.n, 2);
    ck_assert_int_eq(rl.value, 0);
    ck_assert_int_eq(launcher_line("CHILDEXIT 2 137"), 0);
    ck_assert_int_eq(rl.value, 137);
    ck_assert_int_eq(launcher_line("C 3 Traceback (most recent call last):"), 0);
    ck_assert_int_eq(rl.verb, FNW_WIRE_C);
    ck_assert_str_eq(rl.text, "Traceback (most recent call last):");
    ck_assert_int_eq(launcher_line("C 3 "), 0);
    ck_assert_uint_eq(rl.text_len, 0);
    ck_assert_int_eq(launcher_line("C 3"), 0);
    ck_assert_uint_eq(rl.text_len, 0);
    ck_assert_int_eq(launcher_line("SPAWNFAIL 1 python not found"), 0);
    ck_assert_int_eq(rl.verb, FNW_WIRE_SPAWNFAIL);
    ck_assert_str_eq(rl.text, "python not found");
    static const char *const bad[] = { "SPAWNED 1", "SPAWNED 1 0", "SPAWNED 1 2147483648", "SPAWNED 1 2 3",
                                       "SPAWNED 1 -5", "CHILDEXIT 1 256", "CHILDEXIT 1", "CHILDEXIT 1 00",
                                       "CHILDEXIT 1 1 ", "C x hello", "C 0 hello", "O 1 x", "EXIT 0",
                                       "SPAWN 1 a 127.0.0.1:1", "KILL 1", "", "c 1 x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(launcher_line(bad[i]) == -1, "accepted: %s", bad[i]);
}
END_TEST

START_TEST(hostile_lines)
{
    refused("FNWPOOL 1 START\nid=a\x01" "b\nprovision_endpoint=h:1\n\n", "control character 0x01");
    refused("FNWPOOL 1 START\nid=a\nid=b\nprovision_endpoint=h:1\n\n", "'id' given twice");
    refused("FNWPOOL 1 START\nid=\nprovision_endpoint=h:1\n\n", "'id' is empty");
    refused("FNWPOOL 1 START\nprovision_endpoint=h:1\n\n", "no id field");
    refused("FNWPOOL 1 START\nid=a\n\n", "no provision_endpoint field");
    refused("FNWPOOL 1 START\nid=a\nprovision_endpoint=h:1\nshell=rm -rf /\n\n", "unknown field 'shell'");
    refused("FNWPOOL 1 START\nid=a\nprovision_endpoint=h:1\nnovalue\n\n", "expected key=value");
    refused("FNWPOOL 1 START\nid=a\nprovision_endpoint=h:1\narg=pool\n\n", "is not a --flag");
    size_t used;
    fnw_wire_request_init(&req);
    ck_assert_int_eq(fnw_wire_request_feed(&req, "FNWPOOL 1\0START\n\n", 17, &used, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "NUL"));
}
END_TEST

/* Bytes after the empty line are not the request's: a NUL there is not
 * refused, whether it arrives in the same read or a later one (found by
 * tests/fuzz/fuzz_pool_wire.c); a NUL before it still is, in any split. */
START_TEST(nul_only_refused_inside_the_request)
{
    static const char text[] = "FNWPOOL 1 START\nid=a\nprovision_endpoint=h:1\n\n\0after";
    size_t req_len = strlen(text);
    for (size_t chunk = 1; chunk <= sizeof text - 1; chunk++) {
        size_t off = 0, used = 0, total = 0;
        int rc = 0;
        fnw_wire_request_init(&req);
        while (rc == 0 && off < sizeof text - 1) {
            size_t k = sizeof text - 1 - off < chunk ? sizeof text - 1 - off : chunk;
            rc = fnw_wire_request_feed(&req, text + off, k, &used, &err);
            total += used;
            off += k;
        }
        ck_assert_msg(rc == 1, "chunk %zu: %d %s", chunk, rc, err.msg);
        ck_assert_uint_eq(total, req_len);
        ck_assert_str_eq(req.provision_endpoint, "h:1");
    }
    static const char inside[] = "FNWPOOL 1 START\nid=a\0\nprovision_endpoint=h:1\n\n";
    for (size_t chunk = 1; chunk <= sizeof inside - 1; chunk++) {
        size_t off = 0, used = 0;
        int rc = 0;
        fnw_wire_request_init(&req);
        while (rc == 0 && off < sizeof inside - 1) {
            size_t k = sizeof inside - 1 - off < chunk ? sizeof inside - 1 - off : chunk;
            rc = fnw_wire_request_feed(&req, inside + off, k, &used, &err);
            off += k;
        }
        ck_assert_int_eq(rc, -1);
        ck_assert_ptr_nonnull(strstr(err.msg, "NUL"));
    }
}
END_TEST

START_TEST(too_many_args)
{
    char text[4096] = "FNWPOOL 1 START\nid=a\nprovision_endpoint=h:1\n";
    for (int i = 0; i <= FNW_WIRE_MAX_ARGS; i++)
        strcat(text, "arg=--x=1\n");
    strcat(text, "\n");
    refused(text, "more than 32 arg fields");
}
END_TEST

START_TEST(oversized_request)
{
    static char big[FNW_WIRE_REQUEST_MAX + 100];
    strcpy(big, "FNWPOOL 1 START\nid=");
    size_t n = strlen(big);
    memset(big + n, 'x', sizeof big - n - 1);
    big[sizeof big - 1] = '\0';
    size_t used;
    ck_assert_int_eq(feed_all(big, 1000, &used), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "request larger than 16384 bytes"));
    ck_assert_uint_le(used, FNW_WIRE_REQUEST_MAX);
}
END_TEST

/* ---- framing ----------------------------------------------------------------- */

static char framed[3 * FNW_WIRE_LINE_MAX + 64];
static size_t framed_len;
static int n_lines;

static void collect(void *ctx, const char *line, size_t len)
{
    memcpy(framed + framed_len, line, len);
    framed_len += len;
    n_lines++;
}

START_TEST(framer_lines)
{
    fnw_wire_framer f;
    framed_len = 0;
    n_lines = 0;
    fnw_wire_framer_init(&f, 'E');
    fnw_wire_framer_feed(&f, "one\ntw", 6, collect, NULL);
    fnw_wire_framer_feed(&f, "o\n\nthr\0e", 8, collect, NULL);
    ck_assert_int_eq(n_lines, 3);
    fnw_wire_framer_flush(&f, collect, NULL);
    framed[framed_len] = '\0';
    ck_assert_str_eq(framed, "E one\nE two\nE \nE thr?e\n");
    fnw_wire_framer_flush(&f, collect, NULL);
    ck_assert_int_eq(n_lines, 4);
}
END_TEST

START_TEST(framer_splits_long_lines)
{
    static char line[FNW_WIRE_LINE_MAX + 10];
    fnw_wire_framer f;
    framed_len = 0;
    n_lines = 0;
    memset(line, 'a', sizeof line);
    line[sizeof line - 1] = '\n';
    fnw_wire_framer_init(&f, 'O');
    fnw_wire_framer_feed(&f, line, sizeof line, collect, NULL);
    ck_assert_int_eq(n_lines, 2);
    ck_assert_uint_eq(framed_len, (FNW_WIRE_LINE_MAX + 3) + (9 + 3));
    ck_assert_int_eq(framed[FNW_WIRE_LINE_MAX + 2], '\n');
    ck_assert_int_eq(framed[FNW_WIRE_LINE_MAX + 3], 'O');
}
END_TEST

START_TEST(worker_figures_line)
{
    fnw_wire_figures f = {0};
    ck_assert_int_eq(fnw_wire_figures_parse("bundles=3 bundle_errors=1 records_in=600 records_out=590 "
                                            "calls=12 call_failures=2 active_bundles=1", &f), 0);
    ck_assert_int_eq(f.known, 1);
    ck_assert_uint_eq(f.bundles, 3);
    ck_assert_uint_eq(f.bundle_errors, 1);
    ck_assert_uint_eq(f.records_in, 600);
    ck_assert_uint_eq(f.records_out, 590);
    ck_assert_uint_eq(f.calls, 12);
    ck_assert_uint_eq(f.call_failures, 2);
    ck_assert_uint_eq(f.active_bundles, 1);
    /* a malformed line leaves the last figures as they were */
    ck_assert_int_eq(fnw_wire_figures_parse("bundles=4 bundle_errors=x", &f), -1);
    ck_assert_int_eq(fnw_wire_figures_parse("bundles=4 bundle_errors=0 records_in=0 records_out=0 "
                                            "calls=0 call_failures=0 active_bundles=0 extra", &f), -1);
    ck_assert_uint_eq(f.bundles, 3);
}
END_TEST

/* A series with a bit of everything, as a worker would keep it. */
static fnw_metric_series sample_series(void)
{
    fnw_metric_series x;
    fnw_metric_series_init(&x, "my job/T \"1\"", "http");
    x.value[FNW_M_RECORDS_IN] = 600;
    x.value[FNW_M_REQUESTS] = 640;
    x.value[FNW_M_FAILED_TIMEOUT] = 3;
    x.value[FNW_M_BATCH_SIZE] = 10;
    x.dist_sum[FNW_M_BATCH_SIZE] = 600;
    x.value[FNW_M_INFLIGHT_CALLS] = 0;
    x.value[FNW_M_BREAKER_STATE] = 1;
    x.lat[0] = 5;
    x.lat[3] = 500;
    x.lat[FNW_METRIC_LE_N] = 1;
    x.lat_sum_us = 123456;
    fnw_metric_series_add_counter(&x, "cache_hits", 42);
    fnw_metric_series_add_counter(&x, "cache_misses", 7);
    return x;
}

START_TEST(series_line_round_trip)
{
    fnw_metric_series x = sample_series(), y;
    char line[FNW_METRIC_LINE_MAX];
    size_t n = fnw_metric_series_format(&x, line);
    ck_assert_uint_gt(n, 4);
    ck_assert_int_eq(line[n - 1], '\n');
    ck_assert_ptr_null(memchr(line, '\n', n - 1));
    static const char head[] = "op1 my%20job%2FT%20%221%22 http records_in=600 ";
    ck_assert_msg(strncmp(line, head, sizeof head - 1) == 0, "%s", line);
    line[n - 1] = '\0';
    memset(&y, 0x5a, sizeof y);
    ck_assert_int_eq(fnw_wire_series_parse(line, &y), 0);
    ck_assert_str_eq(y.transform, x.transform);
    ck_assert_str_eq(y.operation, "http");
    ck_assert_mem_eq(y.value, x.value, sizeof x.value);
    ck_assert_int_eq(y.dist_sum[FNW_M_BATCH_SIZE], 600);
    ck_assert_mem_eq(y.lat, x.lat, sizeof x.lat);
    ck_assert_int_eq(y.lat_sum_us, 123456);
    ck_assert_int_eq((int)y.ncounters, 2);
    ck_assert_str_eq(y.counters[1].name, "cache_misses");
    ck_assert_int_eq(y.counters[1].value, 7);
    ck_assert_int_eq(y.value[FNW_M_CONCURRENCY_LIMIT], -1); /* not applicable travels as -1 */
}
END_TEST

START_TEST(series_line_at_its_bounds_fits)
{
    fnw_metric_series x;
    char big[FNW_METRIC_LABEL_MAX + 50];
    memset(big, '\x01', sizeof big - 1); /* every byte encoded: three each */
    big[sizeof big - 1] = '\0';
    fnw_metric_series_init(&x, big, big);
    ck_assert_int_eq((int)strlen(x.transform), FNW_METRIC_LABEL_MAX);
    for (int i = 0; i < FNW_M_COUNT; i++)
        x.value[i] = x.dist_sum[i] = INT64_MAX;
    for (int b = 0; b <= FNW_METRIC_LE_N; b++)
        x.lat[b] = INT64_MAX;
    for (int k = 0; k < FNW_COUNTERS_MAX; k++) {
        char name[40];
        snprintf(name, sizeof name, "c%031d", k);
        ck_assert_int_eq(fnw_metric_series_add_counter(&x, name, INT64_MAX), 0);
    }
    ck_assert_int_eq(fnw_metric_series_add_counter(&x, "one_more", 1), -1);
    char line[FNW_METRIC_LINE_MAX];
    size_t n = fnw_metric_series_format(&x, line);
    ck_assert_uint_lt(n, FNW_METRIC_LINE_MAX);
    ck_assert_int_eq(line[n - 1], '\n');
    line[n - 1] = '\0';
    /* a control byte in a label is refused by the pool, even encoded */
    fnw_metric_series y;
    ck_assert_int_eq(fnw_wire_series_parse(line, &y), -1);
    fnw_metric_series_init(&x, "t", "o");
    for (int k = 0; k < FNW_COUNTERS_MAX; k++) {
        char name[40];
        snprintf(name, sizeof name, "c%031d", k);
        fnw_metric_series_add_counter(&x, name, INT64_MAX);
    }
    for (int i = 0; i < FNW_M_COUNT; i++)
        x.value[i] = INT64_MAX;
    n = fnw_metric_series_format(&x, line);
    line[n - 1] = '\0';
    ck_assert_int_eq(fnw_wire_series_parse(line, &y), 0);
    ck_assert_int_eq((int)y.ncounters, FNW_COUNTERS_MAX);
    ck_assert(y.value[FNW_M_RECORDS_IN] == INT64_MAX);
}
END_TEST

START_TEST(hostile_series_lines)
{
    fnw_metric_series y = sample_series(), before = y;
    static const char *const bad[] = {
        "op1",
        "op1 t",
        "op1 t o",                            /* no field */
        "op1  o records_in=1",                /* empty transform */
        "op2 t o records_in=1",               /* a version this pool does not read */
        "op1 t o records_in=-5",
        "op1 t o records_in=01",
        "op1 t o records_in=9223372036854775808",
        "op1 t o records_in=1x",
        "op1 t o records_in=",
        "op1 t o records_in=1 ",
        "op1 t o records_in=1  retries=2",
        "op1 t o breaker_state=-2",
        "op1 t%0A o records_in=1",            /* a newline in a label */
        "op1 t%zz o records_in=1",
        "op1 t%FF o records_in=1",            /* not UTF-8 */
        "op1 t o lat=1,2,3",
        "op1 t o lat=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20",
        "op1 t o c.Bad=1",
        "op1 t o c.=1",
        "op1 t o c.x=1 c.x=2",
        "op1 t o =1",
        "op1 t o RECORDS_IN=1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(fnw_wire_series_parse(bad[i], &y) == -1, "accepted: %s", bad[i]);
        ck_assert_msg(memcmp(&y, &before, sizeof y) == 0, "changed by: %s", bad[i]);
    }
    /* a key this pool does not know (a newer worker's) is skipped */
    ck_assert_int_eq(fnw_wire_series_parse("op1 t o future_thing=1,2 records_in=3", &y), 0);
    ck_assert_int_eq(y.value[FNW_M_RECORDS_IN], 3);
    ck_assert_int_eq(y.value[FNW_M_BREAKER_STATE], -1);
    /* too long */
    char *line = malloc(FNW_METRIC_LINE_MAX + 10);
    ck_assert_ptr_nonnull(line);
    strcpy(line, "op1 t o");
    size_t n = strlen(line);
    while (n + 12 < FNW_METRIC_LINE_MAX + 5) {
        memcpy(line + n, " zz_unknown=1", 13);
        n += 12;
    }
    line[n] = '\0';
    ck_assert_int_eq(fnw_wire_series_parse(line, &y), -1);
    free(line);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool_wire");
    TCase *tc = tcase_create("wire");
    tcase_add_test(tc, request_in_any_split);
    tcase_add_test(tc, crlf_lines_and_trailing_bytes);
    tcase_add_test(tc, needs_more_until_empty_line);
    tcase_add_test(tc, unknown_version_and_command);
    tcase_add_test(tc, versions_one_and_two);
    tcase_add_test(tc, worker_lines);
    tcase_add_test(tc, launcher_lines);
    tcase_add_test(tc, hostile_lines);
    tcase_add_test(tc, nul_only_refused_inside_the_request);
    tcase_add_test(tc, too_many_args);
    tcase_add_test(tc, oversized_request);
    tcase_add_test(tc, framer_lines);
    tcase_add_test(tc, framer_splits_long_lines);
    tcase_add_test(tc, worker_figures_line);
    tcase_add_test(tc, series_line_round_trip);
    tcase_add_test(tc, series_line_at_its_bounds_fits);
    tcase_add_test(tc, hostile_series_lines);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
