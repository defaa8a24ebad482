/* tests/unit/pool/test_pool_children.c — the pool's worker table
 * (pool/children.c) with a stand-in worker script: a worker's stdout and
 * stderr reach its owner and its exit code comes once, after both streams
 * ended; the counts follow; a full pool and a running id are refused with a
 * message; stopping sends SIGTERM (exit 128+15) and escalates to SIGKILL for
 * a worker that ignores it; a detached worker gets no more events but is
 * still reaped and counted; /metrics text names each running worker with its
 * resident memory, its id escaped; the figures a worker writes on its stats
 * pipe (fd 3, named by FNW_POOL_STATS_FD) are kept and shown. Runs the default libev loop until each
 * expected event, so nothing depends on timing. */
#include <check.h>
#include <ev.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/children.h"
#include "pool/pool_report.h"
#include "tests/unit/check_run.h"

static char dir[64], exe[128];
static struct ev_loop *loop;
static char out[2][256];
static int exits, last_code;

static void on_output(void *ctx, fnw_child *c, int stream, const char *data, size_t n)
{
    strncat(out[stream - 1], data, n < 200 ? n : 200);
}

static void on_exit_cb(void *ctx, fnw_child *c, int code)
{
    exits++;
    last_code = code;
}

static const fnw_child_events events = {on_output, on_exit_cb, NULL};

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/fnw-children-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(exe, sizeof exe, "%s/worker", dir);
    FILE *f = fopen(exe, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\n"
          "for a; do case $a in\n"
          "  --sleep) exec sleep 30 ;;\n"
          "  --stubborn) trap '' TERM; echo ready; exec sleep 30 ;;\n"
          "  --stats) echo \"bundles=5 bundle_errors=1 records_in=70 records_out=60 calls=9 "
          "call_failures=1 active_bundles=2\" >&3; echo \"$FNW_POOL_STATS_FD\"; exec sleep 30 ;;\n"
          "esac; done\n"
          "echo \"out $*\"\n"
          "echo \"err $1\" >&2\n"
          "exit 3\n", f);
    fclose(f);
    chmod(exe, 0755);
    loop = ev_default_loop(0);
    memset(out, 0, sizeof out);
    exits = 0;
    last_code = -1;
}

static void teardown(void)
{
    unlink(exe);
    rmdir(dir);
}

static void run_until_exits(int n)
{
    while (exits < n)
        ev_run(loop, EVRUN_ONCE);
}

START_TEST(output_then_exit_code)
{
    fnw_children *cs = fnw_children_new(loop, exe, 4, 0);
    fnw_error err = {{0}};
    const char *args[] = {"--log-level=debug"};
    fnw_child *c = fnw_children_start(cs, "w1", "localhost:9", args, 1, &events, FNW_CHILD_BY_ID, &err);
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(fnw_children_id(c), "w1");
    ck_assert_int_gt(fnw_children_pid(c), 0);
    ck_assert_uint_eq(fnw_children_get_stats(cs).running, 1);
    run_until_exits(1);
    ck_assert_str_eq(out[0], "out --id=w1 --provision_endpoint=localhost:9 --log-level=debug\n");
    ck_assert_str_eq(out[1], "err --id=w1\n");
    ck_assert_int_eq(last_code, 3);
    fnw_children_stats s = fnw_children_get_stats(cs);
    ck_assert_uint_eq(s.running, 0);
    ck_assert_uint_eq(s.started, 1);
    ck_assert_uint_eq(s.exited, 1);
    ck_assert_ptr_null(fnw_children_next(cs, NULL));
    fnw_children_free(cs);
}
END_TEST

START_TEST(full_pool_and_duplicate_id)
{
    fnw_children *cs = fnw_children_new(loop, exe, 2, 0);
    fnw_error err = {{0}};
    const char *sleep_arg[] = {"--sleep"};
    fnw_child *a = fnw_children_start(cs, "a", "h:1", sleep_arg, 1, &events, FNW_CHILD_BY_ID, &err);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_null(fnw_children_start(cs, "a", "h:1", NULL, 0, &events, FNW_CHILD_BY_ID, &err));
    ck_assert_str_eq(err.msg, "a worker with id 'a' is already running");
    ck_assert_ptr_nonnull(fnw_children_start(cs, "b", "h:1", sleep_arg, 1, &events, FNW_CHILD_BY_ID, &err));
    ck_assert_ptr_null(fnw_children_start(cs, "c", "h:1", NULL, 0, &events, FNW_CHILD_BY_ID, &err));
    ck_assert_str_eq(err.msg, "the pool is full: 2 workers are running (--max-workers 2)");
    fnw_children_stats s = fnw_children_get_stats(cs);
    ck_assert_uint_eq(s.running, 2);
    ck_assert_uint_eq(s.rejected_full, 1);
    ck_assert_ptr_eq(fnw_children_find(cs, "a"), a);
    fnw_children_stop_all(cs);
    run_until_exits(2);
    ck_assert_int_eq(last_code, 128 + SIGTERM);
    ck_assert_uint_eq(fnw_children_get_stats(cs).exited, 2);
    /* a free slot again */
    ck_assert_ptr_nonnull(fnw_children_start(cs, "c", "h:1", NULL, 0, &events, FNW_CHILD_BY_ID, &err));
    run_until_exits(3);
    fnw_children_free(cs);
}
END_TEST

/* Launcher-owned workers (flags 0) may share an id: Flink numbers its
 * workers per job and TaskManager, so two TaskManagers sharing a pool both
 * send "1-1". fnw_children_find sees only FNW_CHILD_BY_ID workers. */
START_TEST(owned_workers_share_an_id)
{
    fnw_children *cs = fnw_children_new(loop, exe, 3, 0);
    fnw_error err = {{0}};
    const char *sleep_arg[] = {"--sleep"};
    ck_assert_ptr_nonnull(fnw_children_start(cs, "1-1", "h:1", sleep_arg, 1, &events, 0, &err));
    ck_assert_ptr_nonnull(fnw_children_start(cs, "1-1", "h:2", sleep_arg, 1, &events, 0, &err));
    ck_assert_ptr_null(fnw_children_find(cs, "1-1"));
    fnw_child *b = fnw_children_start(cs, "1-1", "h:3", sleep_arg, 1, &events, FNW_CHILD_BY_ID, &err);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_eq(fnw_children_find(cs, "1-1"), b);
    ck_assert_uint_eq(fnw_children_get_stats(cs).running, 3);
    fnw_children_stop_all(cs);
    run_until_exits(3);
    fnw_children_free(cs);
}
END_TEST

START_TEST(sigkill_after_ignored_sigterm)
{
    fnw_children *cs = fnw_children_new(loop, exe, 1, 0);
    fnw_error err = {{0}};
    const char *args[] = {"--stubborn"};
    fnw_child *c = fnw_children_start(cs, "s", "h:1", args, 1, &events, FNW_CHILD_BY_ID, &err);
    ck_assert_ptr_nonnull(c);
    while (!strstr(out[0], "ready"))     /* the trap is set */
        ev_run(loop, EVRUN_ONCE);
    fnw_children_stop(cs, c);
    run_until_exits(1);
    ck_assert_int_eq(last_code, 128 + SIGKILL);
    fnw_children_free(cs);
}
END_TEST

START_TEST(detached_worker_still_reaped)
{
    fnw_children *cs = fnw_children_new(loop, exe, 1, 0);
    fnw_error err = {{0}};
    const char *args[] = {"--sleep"};
    fnw_child *c = fnw_children_start(cs, "d", "h:1", args, 1, &events, FNW_CHILD_BY_ID, &err);
    fnw_children_detach(c);
    fnw_children_stop(cs, c);
    while (fnw_children_get_stats(cs).exited < 1)
        ev_run(loop, EVRUN_ONCE);
    ck_assert_int_eq(exits, 0);
    ck_assert_uint_eq(fnw_children_get_stats(cs).running, 0);
    fnw_children_free(cs);
}
END_TEST

START_TEST(metrics_name_running_workers)
{
    fnw_children *cs = fnw_children_new(loop, exe, 2, 0);
    fnw_error err = {{0}};
    const char *args[] = {"--sleep"};
    fnw_child *c = fnw_children_start(cs, "q\"x", "h:1", args, 1, &events, FNW_CHILD_BY_ID, &err);
    ck_assert_ptr_nonnull(c);
    size_t len = 0;
    char *text = fnw_pool_report_metrics(cs, 0, ev_now(loop), &len);
    char want[128];
    snprintf(want, sizeof want, "fnworker_pool_worker_rss_bytes{worker_id=\"q\\\"x\",pid=\"%d\"} ",
             (int)fnw_children_pid(c));
    ck_assert_msg(strstr(text, want), "no '%s' in:\n%s", want, text);
    ck_assert_ptr_nonnull(strstr(text, "\nfnworker_pool_workers_running 1\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nfnworker_pool_workers_max 2\n"));
    ck_assert_uint_eq(len, strlen(text));
    free(text);
    fnw_children_free(cs);   /* kills and reaps what still runs */
}
END_TEST

START_TEST(figures_from_the_stats_pipe)
{
    fnw_children *cs = fnw_children_new(loop, exe, 1, 0);
    fnw_error err = {{0}};
    const char *args[] = {"--stats"};
    fnw_child *c = fnw_children_start(cs, "f", "h:1", args, 1, &events, FNW_CHILD_BY_ID, &err);
    ck_assert_ptr_nonnull(c);
    while (!fnw_children_figures(c)->known || !strchr(out[0], '\n'))
        ev_run(loop, EVRUN_ONCE);
    ck_assert_str_eq(out[0], "3\n");           /* FNW_POOL_STATS_FD names fd 3 */
    ck_assert_uint_eq(fnw_children_figures(c)->bundles, 5);
    ck_assert_uint_eq(fnw_children_figures(c)->active_bundles, 2);
    size_t len = 0;
    char *text = fnw_pool_report_metrics(cs, 0, ev_now(loop), &len);
    char want[128];
    snprintf(want, sizeof want, "fnworker_pool_worker_records_in_total{worker_id=\"f\",pid=\"%d\"} 70\n",
             (int)fnw_children_pid(c));
    ck_assert_msg(strstr(text, want), "no '%s' in:\n%s", want, text);
    free(text);
    fnw_children_free(cs);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool_children");
    TCase *tc = tcase_create("children");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, output_then_exit_code);
    tcase_add_test(tc, full_pool_and_duplicate_id);
    tcase_add_test(tc, owned_workers_share_an_id);
    tcase_add_test(tc, sigkill_after_ignored_sigterm);
    tcase_add_test(tc, detached_worker_still_reaped);
    tcase_add_test(tc, metrics_name_running_workers);
    tcase_add_test(tc, figures_from_the_stats_pipe);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
