/* tests/unit/worker/test_inbound_relay.c — the data plane's side of the relay
 * to PyFlink's Python worker: every Data and Timers entry of a relayed
 * instruction reaches the tap byte for byte and in arrival order, a Flink
 * message that mixes native and relayed instructions is split, a message of
 * relayed entries only is passed on as it is, what was held before the
 * instruction was known to be relayed goes to the tap when it is, timers held
 * for a native bundle are dropped with a warning, the relay's hold pauses
 * receives on top of the inbound limit, and the child's output reaches the
 * stream unchanged (fake clock, fake stream: no network). */
#include <check.h>
#include <ev.h>
#include <stdio.h>
#include <unistd.h>

#include "tests/unit/check_run.h"
#include "tests/unit/fake_data_io.h"
#include "base/pb.h"

typedef Org__Apache__Beam__Model__FnExecution__V1__Elements pb_Elements;
typedef Org__Apache__Beam__Model__FnExecution__V1__Elements__Timers pb_Timers;

/* ---- the tap ------------------------------------------------------------------------ */

#define TAP_MAX 16

typedef struct tap_log {
    grpc_slice got[TAP_MAX];
    fnw_data_conn *from[TAP_MAX];
    int n;
    int writable, failed;
    char failure[512];
    const char *finish_on_elements; /* finish this instruction from the callback */
} tap_log;

static struct ev_loop *loop;
static fnw_data_mgr mgr;
static fnw_data_conn *conn;
static tap_log tl;
static FILE *err_log;

static void tap_elements(void *user, fnw_data_conn *from, grpc_slice elements)
{
    tap_log *t = user;
    ck_assert_int_lt(t->n, TAP_MAX);
    t->from[t->n] = from;
    t->got[t->n++] = elements;
    if (t->finish_on_elements)
        fnw_inbound_finish(&mgr, t->finish_on_elements);
}

static void tap_writable(void *user, fnw_data_conn *c)
{
    ((tap_log *)user)->writable++;
}

static void tap_failed(void *user, fnw_data_conn *c, const char *msg)
{
    tap_log *t = user;
    t->failed++;
    snprintf(t->failure, sizeof t->failure, "%s", msg);
}

/* ---- messages ----------------------------------------------------------------------- */

typedef struct msg {
    uint8_t p[8192];
    size_t n;
} msg;

static void add_data(msg *m, const char *iid, const char *tid, const void *data, size_t n, int last)
{
    size_t il = strlen(iid), tl2 = strlen(tid);
    size_t k = fnw_elements_data_size(il, tl2, n, last);
    ck_assert_uint_le(m->n + k, sizeof m->p);
    fnw_elements_put_data(m->p + m->n, iid, il, tid, tl2, data, n, last);
    m->n += k;
}

/* A Timers entry as protobuf-c writes it (an Elements of that one entry is
 * exactly the entry). */
static void add_timers(msg *m, const char *iid, const char *tid, const char *family, const void *timers,
                       size_t n, int last)
{
    pb_Timers t = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__ELEMENTS__TIMERS__INIT;
    t.instruction_id = (char *)iid;
    t.transform_id = (char *)tid;
    t.timer_family_id = (char *)family;
    t.timers.data = (uint8_t *)timers;
    t.timers.len = n;
    t.is_last = last;
    pb_Timers *ts[1] = {&t};
    pb_Elements e = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__ELEMENTS__INIT;
    e.n_timers = 1;
    e.timers = ts;
    size_t k = PB(elements__get_packed_size)(&e);
    ck_assert_uint_le(m->n + k, sizeof m->p);
    PB(elements__pack)(&e, m->p + m->n);
    m->n += k;
}

static void add_raw(msg *m, const msg *from)
{
    memcpy(m->p + m->n, from->p, from->n);
    m->n += from->n;
}

/* Delivers m as one received message. */
static void deliver(const msg *m)
{
    grpc_slice s = grpc_slice_from_copied_buffer((const char *)m->p, m->n);
    fake_last->h.on_message(fake_last->h.user, s);
    grpc_slice_unref(s);
}

static int got_equals(int i, const msg *want)
{
    return i < tl.n && GRPC_SLICE_LENGTH(tl.got[i]) == want->n &&
           memcmp(GRPC_SLICE_START_PTR(tl.got[i]), want->p, want->n) == 0;
}

/* ---- fixture ------------------------------------------------------------------------- */

static void setup_with(const fnw_data_config *cfg)
{
    err_log = tmpfile();
    ck_assert_ptr_nonnull(err_log);
    ck_assert_int_ge(dup2(fileno(err_log), 2), 0); /* log entries without a logger go to stderr */
    memset(&tl, 0, sizeof tl);
    loop = ev_loop_new(EVFLAG_AUTO);
    fake_data_init(&mgr, loop, cfg);
    fnw_data_tap tap = {&tl, tap_elements, tap_writable, tap_failed};
    fnw_data_set_tap(&mgr, &tap);
    conn = fnw_data_connect(&mgr, "fake:1");
    ck_assert_ptr_nonnull(conn);
    ck_assert_ptr_nonnull(fake_last);
}

static void setup(void)
{
    fnw_data_config cfg = {0};
    cfg.inbound_limit = 1000;
    cfg.early.early_bytes = 400;
    cfg.early.early_total = 1000;
    cfg.early.early_ttl_s = 30;
    setup_with(&cfg);
}

static void teardown(void)
{
    for (int i = 0; i < tl.n; i++)
        grpc_slice_unref(tl.got[i]);
    fnw_data_stop(&mgr);
    fnw_data_free(&mgr);
    ev_loop_destroy(loop);
    fclose(err_log);
}

/* Everything logged so far. */
static const char *logged(void)
{
    static char text[16384];
    fflush(stderr);
    long end = ftell(err_log);
    size_t n = (size_t)(end < 0 ? 0 : end);
    if (n >= sizeof text)
        n = sizeof text - 1;
    rewind(err_log);
    n = fread(text, 1, n, err_log);
    text[n] = '\0';
    fseek(err_log, 0, SEEK_END);
    return text;
}

static void relay(const char *iid)
{
    fnw_error err;
    ck_assert_int_eq(fnw_inbound_expect(&mgr, iid), 0);
    ck_assert_msg(fnw_inbound_relay(&mgr, iid, &err) == 0, "relay %s: %s", iid, err.msg);
}

typedef struct reader {
    int inputs, failures;
} reader;

static void on_input(void *user)
{
    ((reader *)user)->inputs++;
}

static void on_failed(void *user, const char *message)
{
    ((reader *)user)->failures++;
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

/* ---- live relaying ------------------------------------------------------------------- */

/* Data and Timers entries of a relayed instruction reach the tap byte for
 * byte, message by message, in the order they came; none is held or counted. */
START_TEST(relayed_entries_arrive_in_order)
{
    relay("r1");
    msg a = {0}, b = {0}, c = {0};
    add_data(&a, "r1", "transform-0", "\x02xy", 3, 0);
    add_timers(&a, "r1", "transform-0", "timer", "\x01t", 2, 0);
    add_data(&a, "r1", "transform-0", "\x01z", 2, 0);
    add_timers(&b, "r1", "transform-0", "timer", NULL, 0, 1);
    add_data(&c, "r1", "transform-0", NULL, 0, 1);
    deliver(&a);
    deliver(&b);
    deliver(&c);
    ck_assert_int_eq(tl.n, 3);
    ck_assert(got_equals(0, &a));
    ck_assert(got_equals(1, &b));
    ck_assert(got_equals(2, &c));
    ck_assert_ptr_eq(tl.from[0], conn);
    ck_assert_uint_eq(conn->inbound_bytes, 0);
    ck_assert_uint_eq(mgr.book.early_bytes, 0);
    /* and protobuf reads what the tap got as the entries Flink sent */
    pb_Elements *e = PB(elements__unpack)(NULL, GRPC_SLICE_LENGTH(tl.got[0]), GRPC_SLICE_START_PTR(tl.got[0]));
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->n_data, 2);
    ck_assert_uint_eq(e->n_timers, 1);
    ck_assert_str_eq(e->timers[0]->timer_family_id, "timer");
    ck_assert_uint_eq(e->timers[0]->timers.len, 2);
    PB(elements__free_unpacked)(e, NULL);
}
END_TEST

/* A message of relayed entries only is handed on as it is: the same bytes
 * in memory, no copy. */
START_TEST(an_all_relayed_message_is_passed_as_it_is)
{
    relay("r1");
    relay("r2");
    static uint8_t big[600];
    memset(big, 7, sizeof big);
    msg a = {0};
    add_data(&a, "r1", "transform-0", big, sizeof big, 0);
    add_timers(&a, "r2", "transform-0", "timer", "\x01t", 2, 0);
    add_data(&a, "r2", "transform-0", big, 100, 1);
    grpc_slice s = grpc_slice_from_copied_buffer((const char *)a.p, a.n);
    fake_last->h.on_message(fake_last->h.user, s);
    ck_assert_int_eq(tl.n, 1);
    ck_assert_ptr_eq(GRPC_SLICE_START_PTR(tl.got[0]), GRPC_SLICE_START_PTR(s));
    ck_assert_uint_eq(GRPC_SLICE_LENGTH(tl.got[0]), a.n);
    grpc_slice_unref(s); /* the tap's reference keeps the bytes */
    ck_assert(got_equals(0, &a));
}
END_TEST

/* A message that mixes native and relayed instructions is split: the native
 * bundle reads its records, the tap gets an Elements of the rest, in order. */
START_TEST(a_mixed_message_is_split)
{
    reader r = {0};
    fnw_inbox *ib = claim("n1", &r);
    relay("r1");
    static uint8_t big[700];
    memset(big, 9, sizeof big);
    msg a = {0}, want = {0}, part = {0};
    add_data(&a, "n1", "in", "\x01" "a", 2, 0);
    add_data(&part, "r1", "transform-0", "\x02pq", 3, 0);
    add_timers(&part, "r1", "transform-0", "timer", "\x01t", 2, 0);
    add_raw(&a, &part);
    add_raw(&want, &part);
    add_data(&a, "n1", "in", "\x01" "b", 2, 0);
    part.n = 0;
    add_data(&part, "r1", "transform-0", big, sizeof big, 1);
    add_raw(&a, &part);
    add_raw(&want, &part);
    add_timers(&a, "n1", "in", "timer", "\x01t", 2, 0); /* a native bundle's timers: ignored */
    add_data(&a, "n1", "in", NULL, 0, 1);
    grpc_slice sl = grpc_slice_from_copied_buffer((const char *)a.p, a.n);
    fake_last->h.on_message(fake_last->h.user, sl);
    ck_assert_int_eq(tl.n, 1);
    ck_assert_msg(got_equals(0, &want), "the tap got %zu bytes, want %zu", GRPC_SLICE_LENGTH(tl.got[0]),
                  want.n);
    /* a copy: the message may go */
    ck_assert(GRPC_SLICE_START_PTR(tl.got[0]) < GRPC_SLICE_START_PTR(sl) ||
              GRPC_SLICE_START_PTR(tl.got[0]) >= GRPC_SLICE_END_PTR(sl));
    grpc_slice_unref(sl);
    fnw_frame f;
    ck_assert_int_eq(r.inputs, 1);
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_RECORD);
    ck_assert_uint_eq(f.p[0], 'a');
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_RECORD);
    ck_assert_uint_eq(f.p[0], 'b');
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_END);
    ck_assert_ptr_nonnull(strstr(logged(), "ignored 1 timer entries for bundles of fnworker operations"));
    fnw_inbound_release(ib);
}
END_TEST

/* A run of relayed entries that ends the message is not the whole message:
 * only it goes to the tap. */
START_TEST(a_relayed_tail_is_copied_alone)
{
    reader r = {0};
    fnw_inbox *ib = claim("n1", &r);
    relay("r1");
    msg a = {0}, want = {0};
    add_data(&a, "n1", "in", "\x01" "a", 2, 0);
    add_data(&want, "r1", "t", "\x01q", 2, 0);
    add_timers(&want, "r1", "t", "f", NULL, 0, 1);
    add_raw(&a, &want);
    deliver(&a);
    ck_assert_int_eq(tl.n, 1);
    ck_assert(got_equals(0, &want));
    fnw_inbound_release(ib);
}
END_TEST

/* Relayed bytes leave at once: a message far over the inbound limit does
 * not pause receives. */
START_TEST(relayed_bytes_do_not_count_against_the_limit)
{
    relay("r1");
    static uint8_t big[3000];
    msg a = {0};
    add_data(&a, "r1", "t", big, sizeof big, 0);
    deliver(&a);
    ck_assert_int_eq(tl.n, 1);
    ck_assert_int_eq(fake_last->paused, 0);
    ck_assert_uint_eq(conn->inbound_bytes, 0);
}
END_TEST

/* ---- held until the instruction is known to be relayed --------------------------------- */

/* Early data (two messages, then is_last) and early timers go to the tap
 * when the instruction turns out relayed: one Data entry per transform with
 * the bytes joined, then is_last in an empty entry of its own (Beam's SDK
 * harness drops the data of an entry that has is_last: a real PyFlink lost
 * a bundle's input that way), then the Timers entries as they came; nothing
 * stays held or counted. */
START_TEST(early_data_and_timers_go_to_the_tap_at_relay)
{
    msg a = {0}, b = {0}, c = {0}, t1 = {0}, t2 = {0};
    add_data(&a, "e1", "transform-0", "\x02" "ab", 3, 0);
    add_timers(&t1, "e1", "transform-0", "timer", "\x03" "tm1", 4, 0);
    add_raw(&a, &t1);
    add_data(&a, "e1", "side", "\x01" "s", 2, 0); /* another transform: its own entry */
    add_data(&b, "e1", "transform-0", "\x01" "c", 2, 0);
    add_data(&c, "e1", "transform-0", NULL, 0, 1);
    add_timers(&t2, "e1", "transform-0", "timer", NULL, 0, 1);
    add_raw(&c, &t2);
    deliver(&a);
    deliver(&b);
    deliver(&c);
    ck_assert_int_eq(tl.n, 0);
    ck_assert_uint_gt(mgr.book.early_bytes, 0);
    relay("e1");
    ck_assert_int_eq(tl.n, 1);
    ck_assert_ptr_eq(tl.from[0], conn);
    pb_Elements *e = PB(elements__unpack)(NULL, GRPC_SLICE_LENGTH(tl.got[0]), GRPC_SLICE_START_PTR(tl.got[0]));
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->n_data, 3);
    int main_at = strcmp(e->data[0]->transform_id, "transform-0") == 0 ? 0 : 1;
    int side_at = main_at == 0 ? 2 : 0;
    ck_assert_str_eq(e->data[main_at]->instruction_id, "e1");
    ck_assert_str_eq(e->data[main_at]->transform_id, "transform-0");
    ck_assert_uint_eq(e->data[main_at]->data.len, 5);
    ck_assert(memcmp(e->data[main_at]->data.data, "\x02" "ab\x01" "c", 5) == 0);
    ck_assert_int_eq(e->data[main_at]->is_last, 0);
    ck_assert_str_eq(e->data[main_at + 1]->transform_id, "transform-0");
    ck_assert_uint_eq(e->data[main_at + 1]->data.len, 0);
    ck_assert_int_eq(e->data[main_at + 1]->is_last, 1);
    ck_assert_str_eq(e->data[side_at]->transform_id, "side");
    ck_assert_uint_eq(e->data[side_at]->data.len, 2);
    ck_assert_int_eq(e->data[side_at]->is_last, 0);
    ck_assert_uint_eq(e->n_timers, 2);
    ck_assert_str_eq(e->timers[0]->timer_family_id, "timer");
    ck_assert_int_eq(e->timers[0]->is_last, 0);
    ck_assert_int_eq(e->timers[1]->is_last, 1);
    PB(elements__free_unpacked)(e, NULL);
    /* the Timers entries are the bytes Flink sent, at the end of the message */
    const uint8_t *g = GRPC_SLICE_START_PTR(tl.got[0]);
    size_t gn = GRPC_SLICE_LENGTH(tl.got[0]);
    ck_assert_uint_ge(gn, t1.n + t2.n);
    ck_assert(memcmp(g + gn - t1.n - t2.n, t1.p, t1.n) == 0);
    ck_assert(memcmp(g + gn - t2.n, t2.p, t2.n) == 0);
    ck_assert_uint_eq(mgr.book.early_bytes, 0);
    ck_assert_uint_eq(conn->inbound_bytes, 0);
    /* what comes next goes straight through */
    msg d = {0};
    add_timers(&d, "e1", "transform-0", "timer", "\x01x", 2, 0);
    deliver(&d);
    ck_assert_int_eq(tl.n, 2);
    ck_assert(got_equals(1, &d));
}
END_TEST

/* Data and timers that arrive while the descriptor is fetched (the
 * instruction is expected, nobody reads it yet) are held against the
 * inbound limit, pausing receives past it, and go to the tap at relay,
 * which lifts the pause. */
START_TEST(held_while_the_descriptor_is_fetched)
{
    ck_assert_int_eq(fnw_inbound_expect(&mgr, "l1"), 0);
    static uint8_t big[1100];
    big[0] = 0x7f;
    msg a = {0};
    add_data(&a, "l1", "transform-0", big, sizeof big, 0);
    add_timers(&a, "l1", "transform-0", "timer", "\x01t", 2, 0);
    deliver(&a);
    ck_assert_int_eq(tl.n, 0);
    ck_assert_uint_ge(conn->inbound_bytes, sizeof big);
    ck_assert_int_eq(fake_last->paused, 1);
    fnw_error err;
    ck_assert_int_eq(fnw_inbound_relay(&mgr, "l1", &err), 0);
    ck_assert_int_eq(tl.n, 1);
    ck_assert_uint_eq(conn->inbound_bytes, 0);
    ck_assert_int_eq(fake_last->paused, 0);
    pb_Elements *e = PB(elements__unpack)(NULL, GRPC_SLICE_LENGTH(tl.got[0]), GRPC_SLICE_START_PTR(tl.got[0]));
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->n_data, 1);
    ck_assert_uint_eq(e->data[0]->data.len, sizeof big);
    ck_assert_int_eq(e->data[0]->is_last, 0);
    ck_assert_uint_eq(e->n_timers, 1);
    PB(elements__free_unpacked)(e, NULL);
}
END_TEST

/* An is_last-only stream is relayed as an is_last entry; an instruction with
 * nothing held sends the tap nothing. */
START_TEST(a_bare_is_last_is_kept_and_nothing_held_sends_nothing)
{
    msg a = {0};
    add_data(&a, "e2", "transform-0", NULL, 0, 1);
    deliver(&a);
    relay("e2");
    ck_assert_int_eq(tl.n, 1);
    ck_assert(got_equals(0, &a));
    relay("e3");
    ck_assert_int_eq(tl.n, 1);
    msg b = {0};
    add_data(&b, "e7", "transform-0", NULL, 0, 0); /* an entry, but nothing in it */
    deliver(&b);
    relay("e7");
    ck_assert_int_eq(tl.n, 1);
    ck_assert_uint_eq(conn->inbound_bytes, 0);
}
END_TEST

/* Timers count against the early-data bounds like data: past them the
 * instruction's early input is dropped, and relaying it fails saying so. */
START_TEST(early_timers_are_bounded)
{
    static uint8_t big[450];
    msg a = {0};
    add_timers(&a, "e4", "transform-0", "timer", big, sizeof big, 0);
    deliver(&a);
    ck_assert_uint_eq(mgr.book.early_bytes, 0);
    ck_assert_int_eq(fnw_inbound_expect(&mgr, "e4"), 0);
    fnw_error err;
    ck_assert_int_eq(fnw_inbound_relay(&mgr, "e4", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "early-data bound of 400 bytes"));
    ck_assert_int_eq(tl.n, 0);
}
END_TEST

/* Early timers expire with their instruction's early data. */
START_TEST(early_timers_expire)
{
    msg a = {0};
    add_timers(&a, "e5", "transform-0", "timer", "\x01t", 2, 0);
    deliver(&a);
    ck_assert_uint_gt(mgr.book.early_bytes, 0);
    fake_now += 31;
    fnw_inbound_expire(&mgr);
    ck_assert_uint_eq(mgr.book.early_bytes, 0);
    ck_assert_int_eq(fnw_inbound_expect(&mgr, "e5"), 0);
    fnw_error err;
    ck_assert_int_eq(fnw_inbound_relay(&mgr, "e5", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "within 30 s"));
}
END_TEST

/* A native bundle that claims its input while timers were held for it drops
 * them with a warning (fnworker operations have no timers) and reads its
 * data as before. */
START_TEST(held_timers_of_a_native_bundle_are_dropped_with_a_warning)
{
    msg a = {0};
    add_timers(&a, "n2", "in", "timer", "\x01t", 2, 0);
    add_data(&a, "n2", "in", "\x01" "d", 2, 1);
    add_timers(&a, "n2", "in", "timer", NULL, 0, 1);
    deliver(&a);
    reader r = {0};
    fnw_inbox *ib = claim("n2", &r);
    ck_assert_ptr_nonnull(strstr(logged(), "instruction n2: ignored 2 timer entries"));
    ck_assert_ptr_nonnull(strstr(logged(), "timers are not supported by fnworker operations"));
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_RECORD);
    ck_assert_uint_eq(f.p[0], 'd');
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_END);
    ck_assert_int_eq(tl.n, 0);
    fnw_inbound_release(ib);
    ck_assert_uint_eq(conn->inbound_bytes, 0);
}
END_TEST

/* ---- the end of a relayed instruction ------------------------------------------------ */

/* After fnw_inbound_finish, data and timers for a relayed instruction are
 * dropped as they arrive; a message mixing them with live ones passes only
 * the live ones. */
START_TEST(data_after_finish_is_dropped)
{
    relay("r1");
    relay("r2");
    fnw_inbound_finish(&mgr, "r1");
    msg a = {0}, want = {0};
    add_data(&a, "r1", "t", "\x01q", 2, 0);
    add_timers(&a, "r1", "t", "f", "\x01t", 2, 0);
    deliver(&a);
    ck_assert_int_eq(tl.n, 0);
    add_data(&want, "r2", "t", "\x01w", 2, 0);
    add_raw(&a, &want);
    deliver(&a);
    ck_assert_int_eq(tl.n, 1);
    ck_assert(got_equals(0, &want));
    ck_assert_uint_eq(conn->inbound_bytes, 0);
    ck_assert_uint_eq(mgr.book.early_bytes, 0);
}
END_TEST

/* An instruction that ends before it is known to be relayed or native (its
 * bundle failed first) frees the timers held for it; later ones are dropped. */
START_TEST(finish_frees_held_timers)
{
    ck_assert_int_eq(fnw_inbound_expect(&mgr, "l3"), 0);
    msg a = {0};
    add_timers(&a, "l3", "transform-0", "timer", "\x01t", 2, 0);
    deliver(&a);
    ck_assert_uint_gt(conn->inbound_bytes, 0);
    fnw_inbound_finish(&mgr, "l3");
    ck_assert_uint_eq(conn->inbound_bytes, 0);
    deliver(&a);
    ck_assert_uint_eq(conn->inbound_bytes, 0);
    ck_assert_uint_eq(mgr.book.early_bytes, 0);
    fnw_error err;
    ck_assert_int_eq(fnw_inbound_relay(&mgr, "l3", &err), -1);
    ck_assert_int_eq(tl.n, 0);
}
END_TEST

/* The tap may finish the instruction while its held input is handed over. */
START_TEST(the_tap_may_finish_during_the_flush)
{
    msg a = {0};
    add_data(&a, "e6", "t", "\x01q", 2, 0);
    deliver(&a);
    tl.finish_on_elements = "e6";
    relay("e6");
    ck_assert_int_eq(tl.n, 1);
    deliver(&a);
    ck_assert_int_eq(tl.n, 1);
}
END_TEST

/* What cannot be relayed says why: a native bundle reads it, it already
 * ran; a relayed instruction cannot be claimed by a native bundle. */
START_TEST(what_cannot_be_relayed_says_why)
{
    reader r = {0};
    fnw_inbox *ib = claim("n3", &r);
    fnw_error err;
    ck_assert_int_eq(fnw_inbound_relay(&mgr, "n3", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "already reads"));
    fnw_inbound_release(ib);
    ck_assert_int_eq(fnw_inbound_relay(&mgr, "n3", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "already ran"));
    relay("r3");
    fnw_data_listener l = {&r, on_input, on_failed};
    ck_assert_ptr_null(fnw_inbound_claim(conn, "r3", "in", &l, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "relayed"));
    fnw_data_set_tap(&mgr, NULL);
    ck_assert_int_eq(fnw_inbound_expect(&mgr, "r4"), 0);
    ck_assert_int_eq(fnw_inbound_relay(&mgr, "r4", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no relay"));
    msg a = {0};
    add_data(&a, "r3", "t", "\x01q", 2, 0); /* relayed, but the tap is gone: dropped, said */
    deliver(&a);
    ck_assert_int_eq(tl.n, 0);
    ck_assert_ptr_nonnull(strstr(logged(), "the tap was removed"));
}
END_TEST

/* ---- malformed input ------------------------------------------------------------------ */

/* A malformed Timers entry ends the message with an error naming it; the
 * relayed entries before it still reach the tap. */
START_TEST(a_malformed_timers_entry_is_refused)
{
    relay("r1");
    msg a = {0}, good = {0};
    add_data(&good, "r1", "t", "\x01q", 2, 0);
    add_raw(&a, &good);
    size_t at = a.n;
    const uint8_t bad[] = {0x12, 0x06, 0x0a, 0x02, 'r', '1', 0x22, 0x09}; /* timers claims 9 bytes, 0 left */
    memcpy(a.p + a.n, bad, sizeof bad);
    a.n += sizeof bad;
    add_data(&a, "r1", "t", "\x01z", 2, 0); /* after the bad entry: not taken */
    deliver(&a);
    ck_assert_int_eq(tl.n, 1);
    ck_assert(got_equals(0, &good));
    char want[128];
    snprintf(want, sizeof want, "the Timers entry at byte %zu is malformed", at);
    const char *text = logged();
    ck_assert_msg(strstr(text, want) != NULL, "log: %s", text);
    ck_assert_ptr_nonnull(strstr(text, "field 4 claims 9 bytes, 0 remain"));
}
END_TEST

/* ---- flow control and output ----------------------------------------------------------- */

/* The relay's hold pauses receives on every connection; releasing it
 * resumes them, except where the inbound limit still holds them. */
START_TEST(hold_pauses_receives_on_top_of_the_limit)
{
    fnw_data_conn *c2 = fnw_data_connect(&mgr, "fake:2");
    fnw_stream *s2 = fake_last;
    fnw_stream *s1 = c2->next == conn ? conn->stream : NULL;
    ck_assert_ptr_nonnull(s1);
    fnw_data_hold(&mgr, 1);
    ck_assert_int_eq(s1->paused, 1);
    ck_assert_int_eq(s2->paused, 1);
    fnw_data_hold(&mgr, 0);
    ck_assert_int_eq(s1->paused, 0);
    ck_assert_int_eq(s2->paused, 0);
    /* under the limit (if over half of it): the hold's release resumes */
    ck_assert_int_eq(fnw_inbound_expect(&mgr, "l2"), 0);
    static uint8_t mid[700];
    fnw_data_hold(&mgr, 1);
    fake_deliver(s1, "l2", "in", mid, sizeof mid, 0);
    ck_assert_uint_gt(conn->inbound_bytes, 500);
    fnw_data_hold(&mgr, 0);
    ck_assert_int_eq(s1->paused, 0);
    fnw_inbound_finish(&mgr, "l2");
    ck_assert_uint_eq(conn->inbound_bytes, 0);
    /* over the limit on conn: the hold's release leaves it paused */
    reader r = {0};
    fnw_inbox *ib = claim("n4", &r);
    static uint8_t rec[1200];
    int k = fnw_varint_write(rec, sizeof rec - 2);
    ck_assert_int_eq(k, 2);
    fnw_data_hold(&mgr, 1);
    fake_last = s1;
    fake_deliver(s1, "n4", "in", rec, sizeof rec, 0);
    ck_assert_int_eq(s1->paused, 1);
    fnw_data_hold(&mgr, 0);
    ck_assert_int_eq(s1->paused, 1);
    ck_assert_int_eq(s2->paused, 0);
    /* reading below the limit resumes it, unless held again */
    fnw_frame f;
    fnw_data_hold(&mgr, 1);
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_RECORD);
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_MORE);
    ck_assert_uint_eq(conn->inbound_bytes, 0);
    ck_assert_int_eq(s1->paused, 1);
    fnw_data_hold(&mgr, 0);
    ck_assert_int_eq(s1->paused, 0);
    fnw_inbound_release(ib);
}
END_TEST

/* A stream reopened while the hold is on starts paused. */
START_TEST(a_reopened_stream_keeps_the_hold)
{
    fnw_data_hold(&mgr, 1);
    fnw_stream *s = fake_last;
    s->h.on_closed(s->h.user, GRPC_STATUS_UNAVAILABLE, "reset");
    ck_assert_int_eq(tl.failed, 1);
    ck_assert_ptr_nonnull(strstr(tl.failure, "reset"));
    ck_assert_ptr_eq(fnw_data_connect(&mgr, "fake:1"), conn);
    ck_assert_ptr_nonnull(fake_last);
    ck_assert_int_eq(fake_last->paused, 1);
    fnw_data_hold(&mgr, 0);
    ck_assert_int_eq(fake_last->paused, 0);
}
END_TEST

static int sent_ok = -1;
static void on_sent(void *arg, int ok)
{
    sent_ok = ok;
    (*(int *)arg)++;
}

/* The child's Elements go out on the stream unchanged, and the tap hears
 * when a congested stream can take more; without a stream the send fails
 * at once. */
START_TEST(send_elements_reaches_the_stream)
{
    msg a = {0};
    add_data(&a, "r1", "transform-1", "\x01o", 2, 0);
    add_timers(&a, "r1", "transform-0", "timer", "\x01t", 2, 0);
    int calls = 0;
    fnw_data_send_elements(conn, grpc_slice_from_copied_buffer((const char *)a.p, a.n), on_sent, &calls);
    ck_assert_uint_eq(fake_last->n_sent, 1);
    ck_assert_uint_eq(fake_last->sent[0].n, a.n);
    ck_assert(memcmp(fake_last->sent[0].p, a.p, a.n) == 0);
    ck_assert_ptr_eq(fake_last->sent[0].arg, &calls);
    fake_last->sent[0].done(fake_last->sent[0].arg, 1);
    ck_assert_int_eq(calls, 1);
    fake_last->h.on_writable(fake_last->h.user);
    ck_assert_int_eq(tl.writable, 1);
    fnw_stream *s = fake_last;
    s->h.on_closed(s->h.user, GRPC_STATUS_UNAVAILABLE, "gone");
    fnw_data_send_elements(conn, grpc_slice_from_copied_buffer((const char *)a.p, a.n), on_sent, &calls);
    ck_assert_int_eq(calls, 2);
    ck_assert_int_eq(sent_ok, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("inbound_relay");
    TCase *tc = tcase_create("relay");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, relayed_entries_arrive_in_order);
    tcase_add_test(tc, an_all_relayed_message_is_passed_as_it_is);
    tcase_add_test(tc, a_mixed_message_is_split);
    tcase_add_test(tc, a_relayed_tail_is_copied_alone);
    tcase_add_test(tc, relayed_bytes_do_not_count_against_the_limit);
    tcase_add_test(tc, early_data_and_timers_go_to_the_tap_at_relay);
    tcase_add_test(tc, held_while_the_descriptor_is_fetched);
    tcase_add_test(tc, a_bare_is_last_is_kept_and_nothing_held_sends_nothing);
    tcase_add_test(tc, early_timers_are_bounded);
    tcase_add_test(tc, early_timers_expire);
    tcase_add_test(tc, held_timers_of_a_native_bundle_are_dropped_with_a_warning);
    tcase_add_test(tc, data_after_finish_is_dropped);
    tcase_add_test(tc, finish_frees_held_timers);
    tcase_add_test(tc, the_tap_may_finish_during_the_flush);
    tcase_add_test(tc, what_cannot_be_relayed_says_why);
    tcase_add_test(tc, a_malformed_timers_entry_is_refused);
    tcase_add_test(tc, hold_pauses_receives_on_top_of_the_limit);
    tcase_add_test(tc, a_reopened_stream_keeps_the_hold);
    tcase_add_test(tc, send_elements_reaches_the_stream);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
