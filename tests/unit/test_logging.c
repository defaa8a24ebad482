/* tests/unit/test_logging.c — the logger's queue, without a Logging stream
 * (entries wait for one): entries below the level are not kept, and the
 * level can change at any time; the queue is bounded, what does not fit is
 * counted as dropped (never blocks); after fnw_log_stop nothing more is
 * queued; worker/rpc.h's failures arrive as ERROR entries through the sink
 * the logger hands it. Lines also go to stderr, which these tests send to
 * /dev/null. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <stdio.h>

#include "worker/logging.h"

typedef struct fixture {
    struct ev_loop *loop;
    fnw_logger lg;
} fixture;

static void fx_init(fixture *f, fnw_level level)
{
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
    f->loop = ev_loop_new(EVFLAG_AUTO);
    fnw_log_init(&f->lg, f->loop, level);
}

static void fx_free(fixture *f)
{
    fnw_log_free(&f->lg);
    ev_loop_destroy(f->loop);
}

START_TEST(entries_below_the_level_are_not_kept)
{
    fixture f;
    fx_init(&f, FNW_LOG_INFO);
    ck_assert_int_eq(fnw_log_level(&f.lg), FNW_LOG_INFO);
    fnw_debug(&f.lg, "not kept");
    ck_assert_uint_eq(fnw_log_queued(&f.lg), 0);
    fnw_info(&f.lg, "kept");
    fnw_warn(&f.lg, "kept");
    fnw_err(&f.lg, "kept, and no stream to flush it to");
    ck_assert_uint_eq(fnw_log_queued(&f.lg), 3);
    fnw_log_set_level(&f.lg, FNW_LOG_ERROR);
    fnw_warn(&f.lg, "not kept any more");
    ck_assert_uint_eq(fnw_log_queued(&f.lg), 3);
    fnw_log_set_level(&f.lg, FNW_LOG_DEBUG);
    fnw_debug(&f.lg, "kept now");
    ck_assert_uint_eq(fnw_log_queued(&f.lg), 4);
    ck_assert_uint_eq(fnw_log_dropped(&f.lg), 0);   /* filtered is not dropped */
    ck_assert(!fnw_log_streaming(&f.lg));
    fx_free(&f);
}
END_TEST

START_TEST(a_full_queue_counts_what_it_drops)
{
    fixture f;
    fx_init(&f, FNW_LOG_INFO);
    for (int i = 0; i < FNW_LOG_QUEUE_MAX + 5; i++)
        fnw_info(&f.lg, "entry %d", i);
    ck_assert_uint_eq(fnw_log_queued(&f.lg), FNW_LOG_QUEUE_MAX);
    ck_assert_uint_eq(fnw_log_dropped(&f.lg), 5);
    fx_free(&f);
    ck_assert_uint_eq(fnw_log_queued(&f.lg), 0);
}
END_TEST

START_TEST(nothing_is_queued_after_stop)
{
    fixture f;
    fx_init(&f, FNW_LOG_INFO);
    fnw_info(&f.lg, "before");
    fnw_log_stop(&f.lg);
    fnw_err(&f.lg, "after: stderr only");
    ck_assert_uint_eq(fnw_log_queued(&f.lg), 1);
    fx_free(&f);
}
END_TEST

START_TEST(rpc_failures_arrive_as_errors)
{
    fixture f;
    fx_init(&f, FNW_LOG_ERROR);
    fnw_rpc_log_sink sink = fnw_log_rpc_sink(&f.lg);
    ck_assert_ptr_eq(sink.user, &f.lg);
    sink.error(sink.user, "grpc_call_start_batch failed (3)");
    ck_assert_uint_eq(fnw_log_queued(&f.lg), 1);
    fx_free(&f);
}
END_TEST

START_TEST(without_a_logger_entries_go_to_stderr_only)
{
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
    fnw_info(NULL, "no logger");
    fnw_err(NULL, "no logger");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("logging");
    TCase *tc = tcase_create("queue");
    tcase_add_test(tc, entries_below_the_level_are_not_kept);
    tcase_add_test(tc, a_full_queue_counts_what_it_drops);
    tcase_add_test(tc, nothing_is_queued_after_stop);
    tcase_add_test(tc, rpc_failures_arrive_as_errors);
    tcase_add_test(tc, without_a_logger_entries_go_to_stderr_only);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
