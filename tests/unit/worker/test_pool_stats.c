/* tests/unit/worker/test_pool_stats.c — what a worker started by the pool
 * writes on its stats pipe (worker/pool_stats.h): the totals line, then one
 * series line per operation step with its figures since the worker started
 * (counters added over bundles, gauges the last bundle's, the latency in the
 * Prometheus buckets of codecs/metric_names.h), at most
 * FNW_METRIC_SERIES_MAX series whatever the number of transforms, the rest
 * added up in one "(other)" series; and nothing kept without a pool. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/pool_stats.h"

static fnw_engine_metrics step(int64_t in)
{
    fnw_engine_metrics m;
    memset(&m, 0, sizeof m);
    m.concurrency_limit = m.breaker_state = m.batch_target = -1;
    m.records_in = m.records_out = m.calls = m.successes = in;
    return m;
}

/* A pool_stats whose pipe's read end is *rd. */
static void start(fnw_pool_stats *s, struct ev_loop *loop, int *rd)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    int fd = fcntl(p[1], F_DUPFD, 10); /* >= 3, like the pool's fd 3 */
    close(p[1]);
    char v[16];
    snprintf(v, sizeof v, "%d", fd);
    setenv(FNW_POOL_STATS_ENV, v, 1);
    fnw_pool_stats_init(s, loop);
    unsetenv(FNW_POOL_STATS_ENV);
    ck_assert_int_eq(s->fd, fd);
    *rd = p[0];
}

static const fnw_metric_series *find(const fnw_pool_stats *s, const char *transform)
{
    const fnw_metric_series *all;
    size_t n = fnw_pool_stats_series(s, &all);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(all[i].transform, transform))
            return &all[i];
    return NULL;
}

START_TEST(steps_add_up_over_bundles)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_pool_stats s;
    int rd;
    start(&s, loop, &rd);
    fnw_counter hits = { "cache_hits", 4 };
    fnw_engine_metrics a = step(10);
    a.counters = &hits;
    a.ncounters = 1;
    a.inflight_high_water = 7;
    a.batch_size = (fnw_dist){ 2, 10, 4, 6 };
    fnw_hist_add(&a.call_latency_us, 80);     /* le 100 µs */
    fnw_hist_add(&a.call_latency_us, 3000);   /* le 5 ms */
    fnw_hist_add(&a.call_latency_us, 90000);  /* le 100 ms: its bucket is 81920..90111 */
    fnw_hist_add(&a.call_latency_us, 99000);  /* le 250 ms: its bucket, 98304..106495, straddles 100 ms */
    a.call_latency_sum_us = 80 + 3000 + 90000 + 99000;
    fnw_pool_stats_add_step(&s, "T1", "http", &a);
    fnw_engine_metrics b = step(5);
    b.counters = &hits;
    b.ncounters = 1;
    b.inflight_high_water = 3;
    b.breaker_state = 1;
    fnw_pool_stats_add_step(&s, "T1", "http", &b);
    fnw_pool_stats_add_step(&s, "T2", "redis", &b);

    const fnw_metric_series *x = find(&s, "T1");
    ck_assert_ptr_nonnull(x);
    ck_assert_str_eq(x->operation, "http");
    ck_assert_int_eq(x->value[FNW_M_RECORDS_IN], 15);
    ck_assert_int_eq(x->value[FNW_M_REQUESTS], 15);
    ck_assert_int_eq(x->value[FNW_M_INFLIGHT_HIGH_WATER], 3); /* a gauge: the last bundle's */
    ck_assert_int_eq(x->value[FNW_M_BREAKER_STATE], 1);
    ck_assert_int_eq(x->value[FNW_M_CONCURRENCY_LIMIT], -1);
    ck_assert_int_eq(x->value[FNW_M_BATCH_SIZE], 2);
    ck_assert_int_eq(x->dist_sum[FNW_M_BATCH_SIZE], 10);
    ck_assert_int_eq(x->lat[0], 1);  /* 100 µs */
    ck_assert_int_eq(x->lat[5], 1);  /* 5 ms */
    ck_assert_int_eq(x->lat[9], 1);  /* 100 ms */
    ck_assert_int_eq(x->lat[10], 1); /* 250 ms */
    ck_assert_int_eq(x->lat_sum_us, 192080);
    ck_assert_int_eq((int)x->ncounters, 1);
    ck_assert_int_eq(x->counters[0].value, 8);
    ck_assert_ptr_nonnull(find(&s, "T2"));

    /* the report: the totals line, then one line per series */
    ev_run(loop, EVRUN_NOWAIT); /* the timer starts at once */
    char buf[16384];
    ssize_t n = read(rd, buf, sizeof buf - 1);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    ck_assert_msg(!strncmp(buf, "bundles=", 8), "%s", buf);
    ck_assert_ptr_nonnull(strstr(buf, "\nop1 T1 http records_in=15 "));
    ck_assert_ptr_nonnull(strstr(buf, " lat=1,0,0,0,0,1,0,0,0,1,1,0,0,0,0,0,0,0,0 lat_sum_us=192080 "));
    ck_assert_ptr_nonnull(strstr(buf, " breaker_state=1 batch_target=-1 c.cache_hits=8\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\nop1 T2 redis records_in=5 "));
    fnw_pool_stats_free(&s);
    close(rd);
    ev_loop_destroy(loop);
}
END_TEST

START_TEST(many_transforms_fold_into_other)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_pool_stats s;
    int rd;
    start(&s, loop, &rd);
    fnw_engine_metrics m = step(1);
    for (int i = 0; i < 10000; i++) {
        char t[32];
        snprintf(t, sizeof t, "transform-%d", i);
        fnw_pool_stats_add_step(&s, t, "echo", &m);
    }
    const fnw_metric_series *all;
    ck_assert_int_eq((int)fnw_pool_stats_series(&s, &all), FNW_METRIC_SERIES_MAX);
    const fnw_metric_series *other = &all[FNW_METRIC_SERIES_MAX - 1];
    ck_assert_str_eq(other->transform, FNW_METRIC_OTHER);
    ck_assert_str_eq(other->operation, FNW_METRIC_OTHER);
    ck_assert_int_eq(other->value[FNW_M_RECORDS_IN], 10000 - (FNW_METRIC_SERIES_MAX - 1));
    int64_t total = 0;
    for (int i = 0; i < FNW_METRIC_SERIES_MAX; i++)
        total += all[i].value[FNW_M_RECORDS_IN];
    ck_assert_int_eq(total, 10000); /* nothing lost */
    /* a step seen before still finds its own series */
    fnw_pool_stats_add_step(&s, "transform-3", "echo", &m);
    ck_assert_int_eq(find(&s, "transform-3")->value[FNW_M_RECORDS_IN], 2);
    /* a label longer than the bound is cut, and still finds its series */
    char longname[FNW_METRIC_LABEL_MAX + 40];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    fnw_pool_stats_free(&s);
    close(rd);
    start(&s, loop, &rd);
    fnw_pool_stats_add_step(&s, longname, "echo", &m);
    fnw_pool_stats_add_step(&s, longname, "echo", &m);
    ck_assert_int_eq((int)fnw_pool_stats_series(&s, &all), 1);
    ck_assert_int_eq((int)strlen(all[0].transform), FNW_METRIC_LABEL_MAX);
    ck_assert_int_eq(all[0].value[FNW_M_RECORDS_IN], 2);
    fnw_pool_stats_free(&s);
    close(rd);
    ev_loop_destroy(loop);
}
END_TEST

/* A bundle still running: the report asks for its gauges first. */
static fnw_engine_metrics running;
static void refresh(void *user, fnw_pool_stats *s)
{
    (*(int *)user)++;
    fnw_pool_stats_refresh_step(s, "T1", "http", &running);
}

START_TEST(gauges_are_the_running_bundles)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_pool_stats s;
    int rd, calls = 0;
    start(&s, loop, &rd);
    fnw_engine_metrics done = step(10);
    done.inflight_high_water = 6;
    fnw_pool_stats_add_step(&s, "T1", "http", &done); /* a bundle ended: no call out, breaker closed */
    fnw_pool_stats_set_refresh(&s, refresh, &calls);
    running = step(3);
    running.inflight_calls = 40;
    running.breaker_state = 1;
    running.inflight_high_water = 2;
    ev_invoke(loop, &s.timer, EV_TIMER);
    ck_assert_int_eq(calls, 1);
    char buf[8192];
    ssize_t n = read(rd, buf, sizeof buf - 1);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    /* the gauges now, the counters and the high-water mark of finished bundles */
    ck_assert_ptr_nonnull(strstr(buf, "op1 T1 http records_in=10 "));
    ck_assert_ptr_nonnull(strstr(buf, " inflight_high_water=6 inflight_calls=40 concurrency_limit=-1 breaker_state=1 "));
    fnw_pool_stats_free(&s);
    close(rd);
    ev_loop_destroy(loop);
}
END_TEST

/* A pool that reads slower than a second's lines: each report starts where
 * the full pipe stopped the last one, so every series still arrives. */
START_TEST(a_full_pipe_rotates_the_series)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_pool_stats s;
    int rd;
    start(&s, loop, &rd);
    ck_assert_int_ge(fcntl(s.fd, F_SETPIPE_SZ, 4096), 4096); /* a few lines' worth */
    int pipe_sz = fcntl(s.fd, F_GETPIPE_SZ);
    fnw_engine_metrics m = step(1);
    char t[FNW_METRIC_LABEL_MAX + 1];
    for (int i = 0; i < FNW_METRIC_SERIES_MAX - 1; i++) {
        memset(t, 'a' + i % 26, FNW_METRIC_LABEL_MAX);
        snprintf(t, sizeof t, "%02d", i); /* "NN" and then the fill: distinct, 128 bytes */
        t[2] = 'x';
        t[FNW_METRIC_LABEL_MAX] = '\0';
        fnw_pool_stats_add_step(&s, t, "echo", &m);
    }
    int seen[FNW_METRIC_SERIES_MAX] = { 0 };
    int reports = 0, distinct = 0;
    char buf[1 << 16];
    while (distinct < FNW_METRIC_SERIES_MAX - 1 && reports < 200) {
        ev_invoke(loop, &s.timer, EV_TIMER); /* one report */
        reports++;
        ssize_t n = read(rd, buf, sizeof buf - 1);
        ck_assert_int_gt(n, 0);
        ck_assert_int_le(n, pipe_sz);
        buf[n] = '\0';
        for (char *p = strstr(buf, "\nop1 "); p; p = strstr(p + 1, "\nop1 ")) {
            int i = (p[5] - '0') * 10 + (p[6] - '0');
            ck_assert(i >= 0 && i < FNW_METRIC_SERIES_MAX - 1);
            distinct += !seen[i];
            seen[i] = 1;
        }
    }
    ck_assert_int_eq(distinct, FNW_METRIC_SERIES_MAX - 1);
    ck_assert_int_gt(reports, 1); /* the pipe could not take them at once */
    fnw_pool_stats_free(&s);
    close(rd);
    ev_loop_destroy(loop);
}
END_TEST

START_TEST(nothing_kept_without_a_pool)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_pool_stats s;
    unsetenv(FNW_POOL_STATS_ENV);
    fnw_pool_stats_init(&s, loop);
    fnw_engine_metrics m = step(1);
    fnw_pool_stats_add_step(&s, "T", "echo", &m);
    const fnw_metric_series *all;
    ck_assert_int_eq((int)fnw_pool_stats_series(&s, &all), 0);
    ck_assert_ptr_null(all);
    fnw_pool_stats_free(&s);
    ev_loop_destroy(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool_stats");
    TCase *tc = tcase_create("series");
    tcase_add_test(tc, steps_add_up_over_bundles);
    tcase_add_test(tc, many_transforms_fold_into_other);
    tcase_add_test(tc, a_full_pipe_rotates_the_series);
    tcase_add_test(tc, gauges_are_the_running_bundles);
    tcase_add_test(tc, nothing_kept_without_a_pool);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
