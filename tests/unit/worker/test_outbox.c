/* tests/unit/worker/test_outbox.c — an outbox frames records and sends them in
 * Elements messages: when the buffer would pass flush_bytes, when the flush
 * timer fires, when the loop is about to wait (flush when idle, after the
 * message being written), and at the end together with is_last (several
 * outboxes in one message); a failed or closed stream is reported to the
 * finisher (fake stream, no network). */
#include <check.h>
#include <ev.h>

#include "tests/unit/check_run.h"
#include "tests/unit/fake_data_io.h"

static struct ev_loop *loop;
static fnw_data_mgr mgr;
static fnw_data_conn *conn;

static void setup(void)
{
    loop = ev_loop_new(EVFLAG_AUTO);
    fnw_data_config cfg = {0};
    cfg.flush_bytes = 100;
    fake_data_init(&mgr, loop, &cfg);
    conn = fnw_data_connect(&mgr, "fake:2");
    ck_assert_ptr_nonnull(conn);
}

static void teardown(void)
{
    fnw_data_stop(&mgr);
    fnw_data_free(&mgr);
    ev_loop_destroy(loop);
}

/* ---- reading back what was sent ---------------------------------------------------- */

typedef struct entries {
    int n;
    fnw_elem_data d[8];
} entries;

static int collect(void *arg, const fnw_elem_data *d)
{
    entries *e = arg;
    ck_assert_int_lt(e->n, 8);
    e->d[e->n++] = *d;
    return 0;
}

static entries sent_entries(size_t i)
{
    ck_assert_uint_lt(i, fake_last->n_sent);
    entries e = {0};
    size_t timers;
    fnw_error err;
    ck_assert_int_eq(fnw_elements_each(fake_last->sent[i].p, fake_last->sent[i].n, collect, &e,
                                       &timers, &err), 0);
    return e;
}

static int span_is(const char *p, size_t n, const char *s)
{
    return n == strlen(s) && memcmp(p, s, n) == 0;
}

/* Counts the records framed in data, checking each is `len` bytes of `fill`. */
static int count_records(const uint8_t *p, size_t n, size_t len, uint8_t fill)
{
    int records = 0;
    size_t pos = 0;
    while (pos < n) {
        uint64_t l;
        int k = fnw_varint_read(p + pos, n - pos, &l);
        ck_assert_int_gt(k, 0);
        ck_assert_uint_eq(l, len);
        for (size_t j = 0; j < len; j++)
            ck_assert_uint_eq(p[pos + (size_t)k + j], fill);
        pos += (size_t)k + len;
        records++;
    }
    ck_assert_uint_eq(pos, n);
    return records;
}

static void put(fnw_outbox *ob, size_t len, uint8_t fill)
{
    uint8_t *w = fnw_data_outbox_reserve(ob, len);
    ck_assert_ptr_nonnull(w);
    memset(w, fill, len);
}

static int done_calls, done_ok;
static void on_done(void *arg, int ok)
{
    done_calls++;
    done_ok = ok;
}

/* ---- tests -------------------------------------------------------------------------- */

/* Records are sent once the next one would take the buffer past
 * flush_bytes, not before, each message for (instruction, transform). */
/* Stopping half-closes a Data stream (the runner's data service sees the
 * worker hang up, as it does when PyFlink's worker ends); only
 * fnw_data_cancel, for a runner that does not close it, cancels. */
START_TEST(stop_half_closes_and_cancel_cancels)
{
    ck_assert_ptr_nonnull(fake_last);
    fnw_data_stop(&mgr);
    ck_assert_int_eq(fake_last->send_closed, 1);
    ck_assert_int_eq(fake_last->cancelled, 0);
    fnw_data_cancel(&mgr);
    ck_assert_int_eq(fake_last->cancelled, 1);
}
END_TEST

START_TEST(flushes_at_flush_bytes)
{
    fnw_outbox *ob = fnw_data_outbox_new(conn, "1", "out");
    put(ob, 40, 'a');
    put(ob, 40, 'a');
    ck_assert_uint_eq(fake_last->n_sent, 0);   /* 82 bytes: below 100 */
    put(ob, 40, 'b');                          /* 82 + 41 would pass it */
    ck_assert_uint_eq(fake_last->n_sent, 1);
    entries e = sent_entries(0);
    ck_assert_int_eq(e.n, 1);
    ck_assert(span_is(e.d[0].instruction_id, e.d[0].instruction_len, "1"));
    ck_assert(span_is(e.d[0].transform_id, e.d[0].transform_len, "out"));
    ck_assert_int_eq(e.d[0].is_last, 0);
    ck_assert_int_eq(count_records(e.d[0].data, e.d[0].data_len, 40, 'a'), 2);
    fnw_data_outbox_free(ob);
}
END_TEST

/* Finishing sends what is buffered and is_last in one message; done runs
 * when the stream reports it written. */
START_TEST(finish_sends_the_rest_with_is_last)
{
    fnw_outbox *ob = fnw_data_outbox_new(conn, "1", "out");
    put(ob, 3, 'c');
    put(ob, 0, 0);
    done_calls = 0;
    fnw_data_outbox_finish(&ob, 1, on_done, NULL);
    ck_assert_uint_eq(fake_last->n_sent, 1);
    entries e = sent_entries(0);
    ck_assert_int_eq(e.n, 2);
    ck_assert_int_eq(e.d[0].is_last, 0);
    ck_assert_uint_eq(e.d[0].data_len, 5);
    ck_assert(memcmp(e.d[0].data, "\x03" "ccc" "\x00", 5) == 0);
    ck_assert_int_eq(e.d[1].is_last, 1);
    ck_assert_uint_eq(e.d[1].data_len, 0);
    ck_assert(span_is(e.d[1].instruction_id, e.d[1].instruction_len, "1"));
    ck_assert_int_eq(done_calls, 0);
    fake_last->sent[0].done(fake_last->sent[0].arg, 1);
    ck_assert_int_eq(done_calls, 1);
    ck_assert_int_eq(done_ok, 1);
    fnw_data_outbox_free(ob);
}
END_TEST

/* An outbox with nothing buffered finishes with is_last alone; several
 * outboxes finish in one message. */
START_TEST(finish_of_several_outboxes_is_one_message)
{
    fnw_outbox *obs[2] = {fnw_data_outbox_new(conn, "1", "main"), fnw_data_outbox_new(conn, "1", "side")};
    put(obs[1], 2, 's');
    fnw_data_outbox_finish(obs, 2, NULL, NULL);
    ck_assert_uint_eq(fake_last->n_sent, 1);
    entries e = sent_entries(0);
    ck_assert_int_eq(e.n, 3);
    ck_assert(span_is(e.d[0].transform_id, e.d[0].transform_len, "side"));
    ck_assert_int_eq(count_records(e.d[0].data, e.d[0].data_len, 2, 's'), 1);
    ck_assert(span_is(e.d[1].transform_id, e.d[1].transform_len, "main"));
    ck_assert_int_eq(e.d[1].is_last, 1);
    ck_assert(span_is(e.d[2].transform_id, e.d[2].transform_len, "side"));
    ck_assert_int_eq(e.d[2].is_last, 1);
    fnw_data_outbox_free(obs[0]);
    fnw_data_outbox_free(obs[1]);
}
END_TEST

/* The first unsent byte arms the connection's flush timer; when it fires,
 * every outbox with buffered records is sent. */
START_TEST(flush_timer_sends_what_waits)
{
    fnw_outbox *a = fnw_data_outbox_new(conn, "1", "out"), *b = fnw_data_outbox_new(conn, "2", "out");
    ck_assert(!ev_is_active(&conn->flush_timer));
    put(a, 5, 'a');
    ck_assert(ev_is_active(&conn->flush_timer));
    put(b, 5, 'b');
    ev_timer_stop(loop, &conn->flush_timer);
    ev_invoke(loop, &conn->flush_timer, EV_TIMER);   /* fire it now, whatever the clock */
    ck_assert_uint_eq(fake_last->n_sent, 1);
    entries e = sent_entries(0);
    ck_assert_int_eq(e.n, 2);
    ck_assert_int_eq(e.d[0].is_last + e.d[1].is_last, 0);
    fnw_data_outbox_finish(&a, 1, NULL, NULL);   /* nothing left but is_last */
    e = sent_entries(1);
    ck_assert_int_eq(e.n, 1);
    ck_assert_int_eq(e.d[0].is_last, 1);
    fnw_data_outbox_free(a);
    fnw_data_outbox_free(b);
}
END_TEST

/* When the loop is about to wait, what was written in its turn goes out on
 * every connection, in one message per connection, without waiting for
 * the flush timer; the watcher stops once nothing waits. */
START_TEST(flushes_when_the_loop_is_idle)
{
    fnw_outbox *a = fnw_data_outbox_new(conn, "1", "out"), *b = fnw_data_outbox_new(conn, "2", "out");
    put(a, 5, 'a');
    put(b, 5, 'b');
    put(a, 5, 'a');
    ck_assert_uint_eq(fake_last->n_sent, 0);   /* nothing goes while the turn runs */
    ck_assert(ev_is_active(&mgr.idle));
    ev_run(loop, EVRUN_NOWAIT);                /* the turn ends: the prepare watcher runs */
    ck_assert_uint_eq(fake_last->n_sent, 1);
    entries e = sent_entries(0);
    ck_assert_int_eq(e.n, 2);
    for (int i = 0; i < 2; i++) {   /* instruction 1 has two 'a' records, 2 one 'b' */
        int one = span_is(e.d[i].instruction_id, e.d[i].instruction_len, "1");
        ck_assert_int_eq(count_records(e.d[i].data, e.d[i].data_len, 5, one ? 'a' : 'b'), one ? 2 : 1);
    }
    ck_assert(!ev_is_active(&mgr.idle));
    ev_run(loop, EVRUN_NOWAIT);                /* nothing more to send */
    ck_assert_uint_eq(fake_last->n_sent, 1);
    put(a, 5, 'c');                            /* the next turn's output arms it again */
    ck_assert(ev_is_active(&mgr.idle));
    ev_run(loop, EVRUN_NOWAIT);
    ck_assert_uint_eq(fake_last->n_sent, 2);
    fnw_data_outbox_free(a);
    fnw_data_outbox_free(b);
}
END_TEST

/* While a message is being written, output waits for it (and joins the
 * next message) instead of going out as one small message per loop turn. */
START_TEST(idle_flush_waits_for_the_message_being_written)
{
    fnw_outbox *ob = fnw_data_outbox_new(conn, "1", "out");
    fake_last->writing = 1;
    put(ob, 5, 'a');
    ev_run(loop, EVRUN_NOWAIT);
    put(ob, 5, 'a');
    ev_run(loop, EVRUN_NOWAIT);
    ck_assert_uint_eq(fake_last->n_sent, 0);
    ck_assert(ev_is_active(&mgr.idle));        /* still armed */
    fake_last->writing = 0;                    /* the write completed */
    ev_run(loop, EVRUN_NOWAIT);
    ck_assert_uint_eq(fake_last->n_sent, 1);
    entries e = sent_entries(0);
    ck_assert_int_eq(count_records(e.d[0].data, e.d[0].data_len, 5, 'a'), 2);
    ck_assert(!ev_is_active(&mgr.idle));
    fnw_data_outbox_free(ob);
}
END_TEST

/* A record larger than flush_bytes goes out alone, in one piece. */
START_TEST(big_record_goes_out_whole)
{
    fnw_outbox *ob = fnw_data_outbox_new(conn, "1", "out");
    put(ob, 10, 'x');
    put(ob, 500, 'y');
    ck_assert_uint_eq(fake_last->n_sent, 1);
    put(ob, 10, 'z');
    ck_assert_uint_eq(fake_last->n_sent, 2);
    entries e = sent_entries(1);
    ck_assert_int_eq(count_records(e.d[0].data, e.d[0].data_len, 500, 'y'), 1);
    fnw_data_outbox_free(ob);
}
END_TEST

/* After the stream closed, finishing reports failure at once; congestion is
 * the stream's. */
START_TEST(finish_on_a_closed_stream_fails)
{
    fnw_outbox *ob = fnw_data_outbox_new(conn, "1", "out");
    fake_last->congested = 1;
    ck_assert(fnw_data_conn_congested(conn));
    fake_last->congested = 0;
    ck_assert(!fnw_data_conn_congested(conn));
    put(ob, 3, 'c');
    fake_last->h.on_closed(fake_last->h.user, GRPC_STATUS_UNAVAILABLE, "reset");
    ck_assert_ptr_nonnull(strstr(fnw_data_conn_error(conn), "reset"));
    done_calls = 0;
    done_ok = 1;
    fnw_data_outbox_finish(&ob, 1, on_done, NULL);
    ck_assert_int_eq(done_calls, 1);
    ck_assert_int_eq(done_ok, 0);
    fnw_data_outbox_free(ob);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("outbox");
    TCase *tc = tcase_create("outbox");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, flushes_at_flush_bytes);
    tcase_add_test(tc, stop_half_closes_and_cancel_cancels);
    tcase_add_test(tc, finish_sends_the_rest_with_is_last);
    tcase_add_test(tc, finish_of_several_outboxes_is_one_message);
    tcase_add_test(tc, flush_timer_sends_what_waits);
    tcase_add_test(tc, big_record_goes_out_whole);
    tcase_add_test(tc, flushes_when_the_loop_is_idle);
    tcase_add_test(tc, idle_flush_waits_for_the_message_being_written);
    tcase_add_test(tc, finish_on_a_closed_stream_fails);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
