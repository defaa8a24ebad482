/* tests/unit/worker/test_inbound.c — what arrives on a data connection reaches the
 * right inbox and wakes only the bundle reading it; the connection's own
 * events reach every bundle on it; receives pause while too much is held;
 * early data is kept within its bounds and for its time only (fake clock,
 * fake stream: no network). */
#include <check.h>
#include <ev.h>
#include <stdio.h>

#include "tests/unit/check_run.h"
#include "tests/unit/fake_data_io.h"

typedef struct reader {
    int inputs, failures;
    char failure[512];
} reader;

static void on_input(void *user)
{
    ((reader *)user)->inputs++;
}

static void on_failed(void *user, const char *message)
{
    reader *r = user;
    r->failures++;
    snprintf(r->failure, sizeof r->failure, "%s", message);
}

static struct ev_loop *loop;
static fnw_data_mgr mgr;
static fnw_data_conn *conn;

static void setup_with(const fnw_data_config *cfg)
{
    loop = ev_loop_new(EVFLAG_AUTO);
    fake_data_init(&mgr, loop, cfg);
    conn = fnw_data_connect(&mgr, "fake:1");
    ck_assert_ptr_nonnull(conn);
    ck_assert_ptr_nonnull(fake_last);
}

static void setup(void)
{
    fnw_data_config cfg = {0};
    setup_with(&cfg);
}

static void teardown(void)
{
    fnw_data_stop(&mgr);
    fnw_data_free(&mgr);
    ev_loop_destroy(loop);
}

static fnw_inbox *claim(const char *iid, reader *r)
{
    fnw_data_listener l = {r, on_input, on_failed};
    fnw_error err;
    ck_assert_int_eq(fnw_inbound_expect(&mgr, iid), 0);
    fnw_inbox *ib = fnw_inbound_claim(conn, iid, "in", &l, &err);
    ck_assert_msg(ib != NULL, "claim %s: %s", iid, err.msg);
    return ib;
}

/* ---- waking ----------------------------------------------------------------------- */

/* A message for one instruction wakes its bundle only; is_last wakes too;
 * data for an instruction nobody reads yet wakes nobody. */
START_TEST(only_the_target_inbox_is_woken)
{
    reader a = {0}, b = {0};
    fnw_inbox *ia = claim("1", &a);
    fnw_inbox *ibb = claim("2", &b);
    fake_deliver(fake_last, "1", "in", "\x03" "abc", 4, 0);
    ck_assert_int_eq(a.inputs, 1);
    ck_assert_int_eq(b.inputs, 0);
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ia, &f), FNW_INBOX_RECORD);
    ck_assert_uint_eq(f.n, 3);
    ck_assert(memcmp(f.p, "abc", 3) == 0);
    fake_deliver(fake_last, "2", "in", NULL, 0, 1);
    ck_assert_int_eq(a.inputs, 1);
    ck_assert_int_eq(b.inputs, 1);
    ck_assert_int_eq(fnw_inbox_next(ibb, &f), FNW_INBOX_END);
    fake_deliver(fake_last, "9", "in", "\x01" "z", 2, 0);   /* early data */
    ck_assert_int_eq(a.inputs + b.inputs, 2);
    fnw_inbound_release(ia);
    fnw_inbound_release(ibb);
}
END_TEST

/* One message with entries for both bundles wakes each once. */
START_TEST(one_message_wakes_each_target_once)
{
    reader a = {0}, b = {0};
    fnw_inbox *ia = claim("1", &a);
    fnw_inbox *ibb = claim("2", &b);
    uint8_t buf[128];
    uint8_t *w = fnw_elements_put_data(buf, "1", 1, "in", 2, (const uint8_t *)"\x01x", 2, 0);
    w = fnw_elements_put_data(w, "1", 1, "in", 2, (const uint8_t *)"\x01y", 2, 1);
    w = fnw_elements_put_data(w, "2", 1, "in", 2, (const uint8_t *)"\x01z", 2, 0);
    grpc_slice msg = grpc_slice_from_copied_buffer((const char *)buf, (size_t)(w - buf));
    fake_last->h.on_message(fake_last->h.user, msg);
    grpc_slice_unref(msg);
    ck_assert_int_eq(a.inputs, 1);
    ck_assert_int_eq(b.inputs, 1);
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ia, &f), FNW_INBOX_RECORD);
    ck_assert_int_eq(fnw_inbox_next(ia, &f), FNW_INBOX_RECORD);
    ck_assert_uint_eq(f.p[0], 'y');
    ck_assert_int_eq(fnw_inbox_next(ia, &f), FNW_INBOX_END);
    fnw_inbound_release(ia);
    fnw_inbound_release(ibb);
}
END_TEST

/* The connection taking output again wakes every bundle on it; the
 * connection closing fails every one of them, saying why. */
START_TEST(connection_events_reach_every_bundle)
{
    reader a = {0}, b = {0};
    fnw_inbox *ia = claim("1", &a);
    fnw_inbox *ibb = claim("2", &b);
    fake_last->h.on_writable(fake_last->h.user);
    ck_assert_int_eq(a.inputs, 1);
    ck_assert_int_eq(b.inputs, 1);
    fnw_stream *s = fake_last;
    s->h.on_closed(s->h.user, GRPC_STATUS_UNAVAILABLE, "gone");
    ck_assert_int_eq(a.failures, 1);
    ck_assert_int_eq(b.failures, 1);
    ck_assert_ptr_nonnull(strstr(a.failure, "gone"));
    ck_assert_ptr_nonnull(fnw_data_conn_error(conn));
    fnw_inbound_release(ia);
    fnw_inbound_release(ibb);
}
END_TEST

/* A failed data stream stays failed while a bundle of it still holds its
 * inbox; the next bundle after that gets a fresh stream, which carries data
 * again. */
START_TEST(a_failed_stream_is_reopened_for_the_next_bundle)
{
    reader a = {0}, b = {0};
    fnw_inbox *ia = claim("1", &a);
    fnw_stream *first = fake_last;
    first->h.on_closed(first->h.user, GRPC_STATUS_UNAVAILABLE, "reset by peer");
    ck_assert_int_eq(a.failures, 1);
    ck_assert_ptr_eq(fnw_data_connect(&mgr, "fake:1"), conn);
    ck_assert_ptr_nonnull(fnw_data_conn_error(conn));   /* bundle 1 still holds its inbox */
    fnw_inbound_release(ia);
    ck_assert_ptr_eq(fnw_data_connect(&mgr, "fake:1"), conn);
    ck_assert_ptr_null(fnw_data_conn_error(conn));
    ck_assert_ptr_nonnull(fake_last);
    fnw_inbox *ib = claim("2", &b);
    fake_deliver(fake_last, "2", "in", "\x03" "abc", 4, 1);
    ck_assert_int_ge(b.inputs, 1);
    ck_assert_int_eq(b.failures, 0);
    fnw_inbound_release(ib);
}
END_TEST

/* A bundle that frees its inbox while others are being woken (here: the
 * other's inbox, from its own callback) does not upset the walk. */
static fnw_inbox *victim;
static void free_victim(void *user)
{
    ((reader *)user)->inputs++;
    if (victim) {
        fnw_inbound_release(victim);
        victim = NULL;
    }
}

START_TEST(a_listener_may_free_an_inbox_being_woken)
{
    reader a = {0}, b = {0};
    fnw_inbox *ibb = claim("2", &b);
    fnw_data_listener l = {&a, free_victim, on_failed};
    fnw_error err;
    ck_assert_int_eq(fnw_inbound_expect(&mgr, "1"), 0);
    fnw_inbox *ia = fnw_inbound_claim(conn, "1", "in", &l, &err);
    ck_assert_ptr_nonnull(ia);
    victim = ibb;
    uint8_t buf[128];
    uint8_t *w = fnw_elements_put_data(buf, "2", 1, "in", 2, (const uint8_t *)"\x01x", 2, 0);
    w = fnw_elements_put_data(w, "1", 1, "in", 2, (const uint8_t *)"\x01y", 2, 0);
    grpc_slice msg = grpc_slice_from_copied_buffer((const char *)buf, (size_t)(w - buf));
    fake_last->h.on_message(fake_last->h.user, msg);   /* "1" is woken first (newest mark) */
    grpc_slice_unref(msg);
    ck_assert_int_eq(a.inputs, 1);
    ck_assert_int_eq(b.inputs, 0);   /* freed before its turn */
    ck_assert_ptr_null(victim);
    fnw_inbound_release(ia);
}
END_TEST

/* Writes over the stack below the caller's frame, where the frames of the
 * calls it made before lived. */
static void __attribute__((noinline)) scribble_stack(void)
{
    volatile uint8_t junk[8192];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = 0xA5;
}

/* A message small enough for gRPC to keep inline (its bytes inside the
 * slice struct, which the caller owns and reuses) is copied into the inbox:
 * the record read after the delivery returned is still the one sent. */
START_TEST(an_inlined_message_is_copied)
{
    reader a = {0};
    fnw_inbox *ia = claim("1", &a);
    uint8_t rec[12];
    rec[0] = 11;
    memset(rec + 1, 'r', 11);
    ck_assert_uint_le(fnw_elements_data_size(1, 2, sizeof rec, 0), GRPC_SLICE_INLINED_SIZE);
    fake_deliver(fake_last, "1", "in", rec, sizeof rec, 0); /* most of its message: kept by reference */
    scribble_stack();
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ia, &f), FNW_INBOX_RECORD);
    ck_assert_uint_eq(f.n, 11);
    ck_assert(memcmp(f.p, rec + 1, 11) == 0);
    fnw_inbound_release(ia);
}
END_TEST

/* ---- flow control ------------------------------------------------------------------- */

/* Receives pause once the bytes held for running bundles reach the limit
 * and resume once the bundle has read them. */
START_TEST(receives_pause_while_too_much_is_held)
{
    reader a = {0};
    fnw_inbox *ia = claim("1", &a);
    static uint8_t rec[1200];
    int k = fnw_varint_write(rec, sizeof rec - 2);
    ck_assert_int_eq(k, 2);
    fake_deliver(fake_last, "1", "in", rec, sizeof rec, 0);
    ck_assert_int_eq(fake_last->paused, 1);
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ia, &f), FNW_INBOX_RECORD);
    ck_assert_uint_eq(f.n, sizeof rec - 2);
    ck_assert_int_eq(fake_last->paused, 1);   /* the record is still in use */
    ck_assert_int_eq(fnw_inbox_next(ia, &f), FNW_INBOX_MORE);
    ck_assert_int_eq(fake_last->paused, 0);
    ck_assert_uint_eq(conn->inbound_bytes, 0);
    fnw_inbound_release(ia);
}
END_TEST

/* ---- early data ---------------------------------------------------------------------- */

/* Early data within its bounds is kept for the bundle that starts later. */
START_TEST(early_data_is_kept_for_its_bundle)
{
    fake_deliver(fake_last, "5", "in", "\x02" "hi", 3, 1);
    reader a = {0};
    fnw_inbox *ia = claim("5", &a);
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ia, &f), FNW_INBOX_RECORD);
    ck_assert(memcmp(f.p, "hi", 2) == 0);
    ck_assert_int_eq(fnw_inbox_next(ia, &f), FNW_INBOX_END);
    fnw_inbound_release(ia);
}
END_TEST

/* Early data over its per-instruction bound is dropped, and the bundle that
 * starts for it fails saying so. */
START_TEST(early_data_over_its_bound_is_dropped)
{
    static uint8_t big[150];
    fake_deliver(fake_last, "5", "in", big, sizeof big, 0);
    ck_assert_int_eq(fnw_inbound_expect(&mgr, "5"), 0);
    reader a = {0};
    fnw_data_listener l = {&a, on_input, on_failed};
    fnw_error err;
    ck_assert_ptr_null(fnw_inbound_claim(conn, "5", "in", &l, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "early-data bound of 100 bytes"));
    ck_assert_ptr_nonnull(strstr(err.msg, "dropped 150 bytes"));
}
END_TEST

/* Early data waits early_ttl_s on the clock, no longer. */
START_TEST(early_data_expires)
{
    fake_deliver(fake_last, "6", "in", "\x01" "a", 2, 0);
    fake_now += 20;
    fake_deliver(fake_last, "7", "in", "\x01" "b", 2, 0);
    fake_now += 11;            /* "6" waited 31 s, "7" 11 s */
    fnw_inbound_expire(&mgr);
    ck_assert_int_eq(fnw_inbound_expect(&mgr, "6"), 0);
    reader a = {0}, b = {0};
    fnw_data_listener l = {&a, on_input, on_failed};
    fnw_error err;
    ck_assert_ptr_null(fnw_inbound_claim(conn, "6", "in", &l, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "within 30 s"));
    fnw_inbox *ib7 = claim("7", &b);
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ib7, &f), FNW_INBOX_RECORD);
    ck_assert_uint_eq(f.p[0], 'b');
    fnw_inbound_release(ib7);
}
END_TEST

/* Data for an instruction that is over is dropped as it arrives: nothing is
 * held, and claiming it again fails. */
START_TEST(data_for_a_finished_instruction_is_dropped)
{
    fnw_inbound_finish(&mgr, "8");
    fake_deliver(fake_last, "8", "in", "\x01" "a", 2, 0);
    ck_assert_uint_eq(conn->inbound_bytes, 0);
    ck_assert_uint_eq(mgr.book.early_bytes, 0);
    reader a = {0};
    fnw_data_listener l = {&a, on_input, on_failed};
    fnw_error err;
    ck_assert_ptr_null(fnw_inbound_claim(conn, "8", "in", &l, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "already ran"));
}
END_TEST

static void setup_small(void)
{
    fnw_data_config cfg = {0};
    cfg.inbound_limit = 1000;
    cfg.early.early_bytes = 100;
    cfg.early.early_total = 1000;
    cfg.early.early_ttl_s = 30;
    setup_with(&cfg);
}

int main(void)
{
    Suite *s = suite_create("inbound");
    TCase *tc = tcase_create("inbound");
    tcase_add_checked_fixture(tc, setup_small, teardown);
    tcase_add_test(tc, only_the_target_inbox_is_woken);
    tcase_add_test(tc, one_message_wakes_each_target_once);
    tcase_add_test(tc, connection_events_reach_every_bundle);
    tcase_add_test(tc, a_failed_stream_is_reopened_for_the_next_bundle);
    tcase_add_test(tc, a_listener_may_free_an_inbox_being_woken);
    tcase_add_test(tc, an_inlined_message_is_copied);
    tcase_add_test(tc, receives_pause_while_too_much_is_held);
    tcase_add_test(tc, early_data_is_kept_for_its_bundle);
    tcase_add_test(tc, early_data_over_its_bound_is_dropped);
    tcase_add_test(tc, early_data_expires);
    tcase_add_test(tc, data_for_a_finished_instruction_is_dropped);
    suite_add_tcase(s, tc);
    TCase *tc2 = tcase_create("defaults");
    tcase_add_checked_fixture(tc2, setup, teardown);
    tcase_add_test(tc2, early_data_is_kept_for_its_bundle);
    suite_add_tcase(s, tc2);
    return fnw_check_run(s);
}
