/* tests/unit/worker/test_log.c — the logger's queue, without a Logging stream
 * (entries wait for one): entries below the level are not kept, and the
 * level can change at any time; the queue is bounded, what does not fit is
 * counted as dropped (never blocks); after fnw_log_stop nothing more is
 * queued; base/rpc.h's failures arrive as ERROR entries through the sink
 * the logger hands it. Then over a fake stream: what waited is sent in
 * order when the stream starts, with its severity, ids and location; an
 * ERROR goes out at once, other entries with the next flush; the number
 * dropped is reported once the stream takes entries; stop sends what is
 * queued and half-closes; a stream the runner closes is reopened no sooner
 * than half a second later. Lines also go to stderr, which these tests
 * send to /dev/null. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "worker/log.h"
#include "base/pb.h"

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
    ck_assert_int_eq(fnw_log_get_level(&f.lg), FNW_LOG_INFO);
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

/* ---- over a fake stream ---------------------------------------------------------- */

#define MAX_SENT 64

typedef struct fake_stream {
    fnw_stream_handler h;
    int starts, close_sends, frees;
    pb_LogEntryList *sent[MAX_SENT];
    int n_sent;
    int stream_token;
} fake_stream;

static void *fake_start(void *ctx, const fnw_stream_handler *h)
{
    fake_stream *fs = ctx;
    fs->h = *h;
    fs->starts++;
    return &fs->stream_token;
}

static void fake_send(void *stream, grpc_slice msg)
{
    fake_stream *fs = (fake_stream *)((char *)stream - offsetof(fake_stream, stream_token));
    ck_assert_int_lt(fs->n_sent, MAX_SENT);
    fs->sent[fs->n_sent] = (pb_LogEntryList *)protobuf_c_message_unpack(
        &PB(log_entry__list__descriptor), NULL, GRPC_SLICE_LENGTH(msg), GRPC_SLICE_START_PTR(msg));
    ck_assert_ptr_nonnull(fs->sent[fs->n_sent]);
    fs->n_sent++;
    grpc_slice_unref(msg);
}

static void fake_close_send(void *stream)
{
    ((fake_stream *)((char *)stream - offsetof(fake_stream, stream_token)))->close_sends++;
}

static void fake_free(void *stream)
{
    ((fake_stream *)((char *)stream - offsetof(fake_stream, stream_token)))->frees++;
}

static const fnw_log_transport fake_transport = {fake_start, fake_send, fake_close_send, fake_free};

/* Entry k of everything sent, across batches; NULL past the end. */
static const pb_LogEntry *sent_entry(const fake_stream *fs, size_t k)
{
    for (int i = 0; i < fs->n_sent; i++) {
        if (k < fs->sent[i]->n_log_entries)
            return fs->sent[i]->log_entries[k];
        k -= fs->sent[i]->n_log_entries;
    }
    return NULL;
}

static size_t sent_total(const fake_stream *fs)
{
    size_t n = 0;
    for (int i = 0; i < fs->n_sent; i++)
        n += fs->sent[i]->n_log_entries;
    return n;
}

static void fake_free_all(fake_stream *fs)
{
    for (int i = 0; i < fs->n_sent; i++)
        protobuf_c_message_free_unpacked(&fs->sent[i]->base, NULL);
}

START_TEST(what_waited_is_sent_in_order_when_the_stream_starts)
{
    fixture f;
    fake_stream fs = {0};
    fx_init(&f, FNW_LOG_DEBUG);
    fnw_log(&f.lg, FNW_LOG_INFO, "i-1", "t-1", "first %d", 1);
    fnw_warn(&f.lg, "second");
    fnw_debug(&f.lg, "third");
    fnw_log_start_on(&f.lg, &fake_transport, &fs);
    ck_assert_int_eq(fs.starts, 1);
    ck_assert(fnw_log_streaming(&f.lg));
    ck_assert_uint_eq(sent_total(&fs), 3);
    ck_assert_uint_eq(fnw_log_queued(&f.lg), 0);
    const pb_LogEntry *e = sent_entry(&fs, 0);
    ck_assert_str_eq(e->message, "first 1");
    ck_assert_str_eq(e->instruction_id, "i-1");
    ck_assert_str_eq(e->transform_id, "t-1");
    ck_assert_int_eq(e->severity, FNW_LOG_INFO);
    ck_assert_msg(strstr(e->log_location, "test_log.c:") != NULL, "%s", e->log_location);
    ck_assert_ptr_nonnull(e->timestamp);
    ck_assert_str_eq(sent_entry(&fs, 1)->message, "second");
    ck_assert_int_eq(sent_entry(&fs, 1)->severity, FNW_LOG_WARN);
    ck_assert_str_eq(sent_entry(&fs, 2)->message, "third");
    fx_free(&f);
    ck_assert_int_eq(fs.frees, 1);
    fake_free_all(&fs);
}
END_TEST

START_TEST(errors_go_out_at_once_the_rest_with_the_next_flush)
{
    fixture f;
    fake_stream fs = {0};
    fx_init(&f, FNW_LOG_INFO);
    fnw_log_start_on(&f.lg, &fake_transport, &fs);
    fnw_info(&f.lg, "waits for the flush");
    ck_assert_uint_eq(sent_total(&fs), 0);
    fnw_err(&f.lg, "goes at once");
    ck_assert_uint_eq(sent_total(&fs), 2);          /* and takes what waited with it */
    ck_assert_str_eq(sent_entry(&fs, 0)->message, "waits for the flush");
    ck_assert_str_eq(sent_entry(&fs, 1)->message, "goes at once");
    fnw_info(&f.lg, "next flush");
    ck_assert_uint_eq(sent_total(&fs), 2);
    ev_run(f.loop, EVRUN_ONCE);                     /* the flush timer is the only watcher */
    ck_assert_uint_eq(sent_total(&fs), 3);
    ck_assert_str_eq(sent_entry(&fs, 2)->message, "next flush");
    fx_free(&f);
    fake_free_all(&fs);
}
END_TEST

START_TEST(the_number_dropped_is_reported_once_entries_flow)
{
    fixture f;
    fake_stream fs = {0};
    fx_init(&f, FNW_LOG_INFO);
    for (int i = 0; i < FNW_LOG_QUEUE_MAX + 7; i++)
        fnw_info(&f.lg, "entry %d", i);
    ck_assert_uint_eq(fnw_log_dropped(&f.lg), 7);
    fnw_log_start_on(&f.lg, &fake_transport, &fs);
    ck_assert_uint_eq(sent_total(&fs), FNW_LOG_QUEUE_MAX);
    ck_assert_str_eq(sent_entry(&fs, 0)->message, "entry 0");
    ck_assert_str_eq(sent_entry(&fs, FNW_LOG_QUEUE_MAX - 1)->message, "entry 9999");
    ck_assert_uint_eq(fnw_log_dropped(&f.lg), 0);
    ev_run(f.loop, EVRUN_ONCE);
    const pb_LogEntry *e = sent_entry(&fs, FNW_LOG_QUEUE_MAX);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->message, "7 log entries were dropped (queue full or out of memory)");
    ck_assert_int_eq(e->severity, FNW_LOG_WARN);
    fx_free(&f);
    fake_free_all(&fs);
}
END_TEST

START_TEST(stop_sends_what_is_queued_and_half_closes)
{
    fixture f;
    fake_stream fs = {0};
    fx_init(&f, FNW_LOG_INFO);
    fnw_log_start_on(&f.lg, &fake_transport, &fs);
    fnw_info(&f.lg, "last words");
    fnw_log_stop(&f.lg);
    ck_assert_uint_eq(sent_total(&fs), 1);
    ck_assert_int_eq(fs.close_sends, 1);
    fnw_info(&f.lg, "after stop: queued but the stream is half-closed");
    fs.h.on_closed(fs.h.user, GRPC_STATUS_OK, "");  /* the runner closes it */
    ck_assert_int_eq(fs.frees, 1);
    ck_assert(!fnw_log_streaming(&f.lg));
    fnw_info(&f.lg, "stderr only");
    ck_assert_int_eq(fs.starts, 1);                 /* not reopened while stopping */
    fx_free(&f);
    ck_assert_int_eq(fs.frees, 1);
    fake_free_all(&fs);
}
END_TEST

START_TEST(a_closed_stream_is_reopened_after_half_a_second)
{
    fixture f;
    fake_stream fs = {0};
    fx_init(&f, FNW_LOG_INFO);
    fnw_log_start_on(&f.lg, &fake_transport, &fs);
    double closed_at = ev_now(f.loop);
    fs.h.on_closed(fs.h.user, GRPC_STATUS_UNAVAILABLE, "gone");
    ck_assert_int_eq(fs.frees, 1);
    ck_assert(!fnw_log_streaming(&f.lg));
    ck_assert_uint_eq(fnw_log_queued(&f.lg), 1);   /* the warning about it waits */
    for (int i = 0; i < 100 && fs.starts < 2; i++)
        ev_run(f.loop, EVRUN_ONCE);
    ck_assert_int_eq(fs.starts, 2);
    ck_assert_double_ge_tol(ev_now(f.loop) - closed_at, 0.5, 1e-3);
    ck_assert_uint_eq(sent_total(&fs), 1);
    ck_assert_str_eq(sent_entry(&fs, 0)->message,
                     "the logging stream closed (status 14: gone); reopening it in 0.5 s");
    fx_free(&f);
    fake_free_all(&fs);
}
END_TEST

/* Found on a real Flink (tests/e2e worker.log): it ends the logging stream
 * with OK at every job's end, which the worker logged as a WARN with an empty
 * status text. */
START_TEST(the_runner_closing_the_stream_in_order_is_info)
{
    fixture f;
    fake_stream fs = {0};
    fx_init(&f, FNW_LOG_INFO);
    fnw_log_start_on(&f.lg, &fake_transport, &fs);
    fs.h.on_closed(fs.h.user, GRPC_STATUS_OK, "");
    for (int i = 0; i < 100 && fs.starts < 2; i++)
        ev_run(f.loop, EVRUN_ONCE);
    ck_assert_int_eq(fs.starts, 2);
    ck_assert_uint_eq(sent_total(&fs), 1);
    ck_assert_str_eq(sent_entry(&fs, 0)->message, "the runner closed the logging stream; reopening it in 0.5 s");
    ck_assert_int_eq(sent_entry(&fs, 0)->severity, FNW_LOG_INFO);
    fx_free(&f);
    fake_free_all(&fs);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("queue");
    tcase_add_test(tc, entries_below_the_level_are_not_kept);
    tcase_add_test(tc, a_full_queue_counts_what_it_drops);
    tcase_add_test(tc, nothing_is_queued_after_stop);
    tcase_add_test(tc, rpc_failures_arrive_as_errors);
    tcase_add_test(tc, without_a_logger_entries_go_to_stderr_only);
    tcase_add_test(tc, what_waited_is_sent_in_order_when_the_stream_starts);
    tcase_add_test(tc, errors_go_out_at_once_the_rest_with_the_next_flush);
    tcase_add_test(tc, the_number_dropped_is_reported_once_entries_flow);
    tcase_add_test(tc, stop_sends_what_is_queued_and_half_closes);
    tcase_add_test(tc, a_closed_stream_is_reopened_after_half_a_second);
    tcase_add_test(tc, the_runner_closing_the_stream_in_order_is_info);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
