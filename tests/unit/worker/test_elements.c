/* tests/unit/worker/test_elements.c — the hand-rolled Elements codec must read what
 * protobuf-c writes and write what protobuf-c reads. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/elements.h"
#include "base/pb.h"

typedef Org__Apache__Beam__Model__FnExecution__V1__Elements pb_Elements;
typedef Org__Apache__Beam__Model__FnExecution__V1__Elements__Data pb_Data;
typedef Org__Apache__Beam__Model__FnExecution__V1__Elements__Timers pb_Timers;

typedef struct seen {
    int n;
    fnw_elem_data d[8];
} seen;

static int collect(void *arg, const fnw_elem_data *d)
{
    seen *s = arg;
    if (s->n < 8)
        s->d[s->n] = *d;
    s->n++;
    return 0;
}

static uint8_t *pack_elements(pb_Data **data, size_t nd, pb_Timers **timers, size_t nt, size_t *len)
{
    pb_Elements e = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__ELEMENTS__INIT;
    e.n_data = nd;
    e.data = data;
    e.n_timers = nt;
    e.timers = timers;
    *len = PB(elements__get_packed_size)(&e);
    uint8_t *buf = malloc(*len);
    PB(elements__pack)(&e, buf);
    return buf;
}

START_TEST(reads_what_protobuf_writes)
{
    pb_Data a = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__ELEMENTS__DATA__INIT;
    a.instruction_id = "17";
    a.transform_id = "fn/read/input:0";
    a.data.data = (uint8_t *)"\x03" "abc";
    a.data.len = 4;
    pb_Data b = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__ELEMENTS__DATA__INIT;
    b.instruction_id = "17";
    b.transform_id = "fn/read/input:0";
    b.is_last = 1;
    pb_Timers t = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__ELEMENTS__TIMERS__INIT;
    t.instruction_id = "17";
    pb_Data *ds[2] = {&a, &b};
    pb_Timers *ts[1] = {&t};
    size_t len;
    uint8_t *buf = pack_elements(ds, 2, ts, 1, &len);
    seen s = {0};
    size_t timers = 0;
    fnw_error err;
    ck_assert_int_eq(fnw_elements_each(buf, len, collect, &s, &timers, &err), 0);
    ck_assert_int_eq(s.n, 2);
    ck_assert_int_eq((int)timers, 1);
    ck_assert_int_eq((int)s.d[0].instruction_len, 2);
    ck_assert(memcmp(s.d[0].instruction_id, "17", 2) == 0);
    ck_assert_int_eq((int)s.d[0].transform_len, 15);
    ck_assert_int_eq((int)s.d[0].data_len, 4);
    ck_assert(memcmp(s.d[0].data, "\x03" "abc", 4) == 0);
    ck_assert_int_eq(s.d[0].is_last, 0);
    ck_assert_int_eq(s.d[1].is_last, 1);
    ck_assert_int_eq((int)s.d[1].data_len, 0);
    free(buf);
}
END_TEST

START_TEST(writes_what_protobuf_reads)
{
    const uint8_t payload[] = {0x02, 0xAA, 0xBB};
    const char *sink = "fn/write/output:0";
    size_t sl = strlen(sink);
    size_t n1 = fnw_elements_data_size(1, sl, sizeof payload, 0);
    size_t n2 = fnw_elements_data_size(1, sl, 0, 1);
    uint8_t *buf = malloc(n1 + n2);
    uint8_t *w = fnw_elements_put_data(buf, "9", 1, sink, sl, payload, sizeof payload, 0);
    ck_assert_ptr_eq(w, buf + n1);
    w = fnw_elements_put_data(w, "9", 1, sink, sl, NULL, 0, 1);
    ck_assert_ptr_eq(w, buf + n1 + n2);
    pb_Elements *e = PB(elements__unpack)(NULL, n1 + n2, buf);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq((int)e->n_data, 2);
    ck_assert_str_eq(e->data[0]->instruction_id, "9");
    ck_assert_str_eq(e->data[0]->transform_id, sink);
    ck_assert_int_eq((int)e->data[0]->data.len, 3);
    ck_assert(memcmp(e->data[0]->data.data, payload, 3) == 0);
    ck_assert_int_eq(e->data[0]->is_last, 0);
    ck_assert_int_eq(e->data[1]->is_last, 1);
    PB(elements__free_unpacked)(e, NULL);
    free(buf);
}
END_TEST

START_TEST(head_plus_separate_data_is_the_same_entry)
{
    const uint8_t payload[300] = {7};
    size_t full = fnw_elements_data_size(2, 4, sizeof payload, 0);
    uint8_t a[512], b[512];
    fnw_elements_put_data(a, "42", 2, "sink", 4, payload, sizeof payload, 0);
    size_t head = fnw_elements_data_head_size(2, 4, sizeof payload);
    ck_assert_uint_eq(head + sizeof payload, full);
    uint8_t *w = fnw_elements_put_data_head(b, "42", 2, "sink", 4, sizeof payload);
    ck_assert_ptr_eq(w, b + head);
    memcpy(w, payload, sizeof payload);
    ck_assert(memcmp(a, b, full) == 0);
}
END_TEST

START_TEST(large_payload_sizes_match)
{
    size_t big = 3u << 20;
    uint8_t *payload = calloc(1, big);
    size_t n = fnw_elements_data_size(3, 5, big, 1);
    uint8_t *buf = malloc(n);
    ck_assert_ptr_eq(fnw_elements_put_data(buf, "123", 3, "sinkX", 5, payload, big, 1), buf + n);
    seen s = {0};
    size_t timers;
    fnw_error err;
    ck_assert_int_eq(fnw_elements_each(buf, n, collect, &s, &timers, &err), 0);
    ck_assert_int_eq(s.n, 1);
    ck_assert_uint_eq(s.d[0].data_len, big);
    ck_assert_int_eq(s.d[0].is_last, 1);
    free(buf);
    free(payload);
}
END_TEST

START_TEST(malformed_input_fails_cleanly)
{
    /* field 1, length 200, but only 3 bytes follow */
    const uint8_t lying[] = {0x0a, 0xC8, 0x01, 0x0a, 0x01, 'x'};
    seen s = {0};
    size_t timers;
    fnw_error err;
    ck_assert_int_eq(fnw_elements_each(lying, sizeof lying, collect, &s, &timers, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "claims 200 bytes"));
    /* an unterminated varint key */
    const uint8_t bad_key[] = {0xff, 0xff};
    ck_assert_int_eq(fnw_elements_each(bad_key, sizeof bad_key, collect, &s, &timers, &err), -1);
    /* every prefix of a valid message either parses or fails, never crashes */
    const uint8_t payload[] = {0x01, 0x07};
    size_t n = fnw_elements_data_size(2, 2, 2, 1);
    uint8_t buf[64];
    fnw_elements_put_data(buf, "id", 2, "tt", 2, payload, 2, 1);
    for (size_t cut = 0; cut < n; cut++) {
        seen t = {0};
        int rc = fnw_elements_each(buf, cut, collect, &t, &timers, &err);
        ck_assert(rc == 0 || rc == -1);
        if (rc == 0)
            ck_assert_int_eq(t.n, 0);
    }
    ck_assert_int_eq(s.n, 0);
}
END_TEST

/* A head for no data bytes still carries the (empty) data field: the size
 * promised is what is written, and the entry's own length covers it. */
START_TEST(head_for_empty_data_is_what_its_size_says)
{
    uint8_t buf[64];
    memset(buf, 0xEE, sizeof buf);
    size_t head = fnw_elements_data_head_size(1, 1, 0);
    uint8_t *w = fnw_elements_put_data_head(buf, "7", 1, "t", 1, 0);
    ck_assert_uint_eq((size_t)(w - buf), head);
    ck_assert_uint_eq(head, 10);
    ck_assert_uint_eq(buf[head], 0xEE);   /* nothing written past it */
    ck_assert_uint_eq(buf[1], head - 2);  /* entry length: all after the key and itself */
    seen s = {0};
    size_t timers;
    fnw_error err;
    ck_assert_int_eq(fnw_elements_each(buf, head, collect, &s, &timers, &err), 0);
    ck_assert_int_eq(s.n, 1);
    ck_assert_uint_eq(s.d[0].instruction_len, 1);
    ck_assert_uint_eq(s.d[0].transform_len, 1);
    ck_assert_uint_eq(s.d[0].data_len, 0);
    ck_assert_int_eq(s.d[0].is_last, 0);
}
END_TEST

/* Where the data length, the entry body or an id crosses a varint size
 * boundary, head + data is still byte for byte the whole entry. */
START_TEST(head_sizes_match_at_varint_boundaries)
{
    static uint8_t payload[20000];
    static uint8_t a[21000], b[21000];
    const size_t lens[] = {1, 100, 114, 115, 116, 126, 127, 128, 129, 16383, 16384, 16500};
    char id[200];
    memset(id, 'i', sizeof id);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        for (size_t il = 0; il <= 130; il += 65) {
            size_t dl = lens[i];
            payload[0] = (uint8_t)i;
            size_t full = fnw_elements_data_size(il, 3, dl, 0);
            ck_assert_ptr_eq(fnw_elements_put_data(a, id, il, "snk", 3, payload, dl, 0), a + full);
            size_t head = fnw_elements_data_head_size(il, 3, dl);
            ck_assert_uint_eq(head + dl, full);
            uint8_t *w = fnw_elements_put_data_head(b, id, il, "snk", 3, dl);
            ck_assert_ptr_eq(w, b + head);
            memcpy(w, payload, dl);
            ck_assert(memcmp(a, b, full) == 0);
        }
    }
}
END_TEST

/* Empty ids are left out and read back as empty; an is_last entry without
 * data reads as such. */
START_TEST(empty_ids_and_bare_is_last)
{
    uint8_t buf[16];
    size_t n = fnw_elements_data_size(0, 0, 0, 1);
    ck_assert_uint_eq(n, 4);
    ck_assert_ptr_eq(fnw_elements_put_data(buf, "", 0, "", 0, NULL, 0, 1), buf + n);
    seen s = {0};
    size_t timers;
    fnw_error err;
    ck_assert_int_eq(fnw_elements_each(buf, n, collect, &s, &timers, &err), 0);
    ck_assert_int_eq(s.n, 1);
    ck_assert_uint_eq(s.d[0].instruction_len, 0);
    ck_assert_str_eq(s.d[0].transform_id, "");
    ck_assert_int_eq(s.d[0].is_last, 1);
    ck_assert_uint_eq(s.d[0].data_len, 0);
}
END_TEST

/* Fields we do not know (any wire type we can skip) are skipped; a group
 * (wire type 3) is refused with its position. */
START_TEST(unknown_fields_are_skipped_groups_refused)
{
    const uint8_t msg[] = {
        0x0a, 19,                                  /* Data, 19 bytes: */
        0x0a, 0x01, 'x',                           /*   instruction_id "x" */
        0x29, 1, 2, 3, 4, 5, 6, 7, 8,              /*   field 5 fixed64 */
        0x35, 1, 2, 3, 4,                          /*   field 6 fixed32 */
        0x20, 0x01,                                /*   is_last */
        0x18, 0x05,                                /* field 3 varint at the top: skipped */
    };
    seen s = {0};
    size_t timers;
    fnw_error err;
    ck_assert_int_eq(fnw_elements_each(msg, sizeof msg, collect, &s, &timers, &err), 0);
    ck_assert_int_eq(s.n, 1);
    ck_assert_int_eq(s.d[0].is_last, 1);
    ck_assert_uint_eq(s.d[0].instruction_len, 1);
    const uint8_t group[] = {0x0b, 0x0c};
    ck_assert_int_eq(fnw_elements_each(group, sizeof group, collect, &s, &timers, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "wire type 3"));
}
END_TEST

static int refuse(void *arg, const fnw_elem_data *d)
{
    (*(int *)arg)++;
    return -1;
}

/* A callback that refuses an entry stops the walk. */
START_TEST(callback_failure_stops_the_walk)
{
    uint8_t buf[64];
    uint8_t *w = fnw_elements_put_data(buf, "1", 1, "t", 1, (const uint8_t *)"\x01z", 2, 0);
    w = fnw_elements_put_data(w, "1", 1, "t", 1, NULL, 0, 1);
    int calls = 0;
    size_t timers;
    fnw_error err;
    ck_assert_int_eq(fnw_elements_each(buf, (size_t)(w - buf), refuse, &calls, &timers, &err), -1);
    ck_assert_int_eq(calls, 1);
}
END_TEST

/* ---- Timers entries and raw spans ------------------------------------------------- */

typedef struct walked {
    int n_data, n_timers;
    fnw_elem_data d[8];
    fnw_elem_timers t[8];
    const uint8_t *raw[16]; /* every entry's span, in message order */
    size_t raw_len[16];
    int n_raw;
} walked;

static int walk_data(void *arg, const fnw_elem_data *d)
{
    walked *w = arg;
    ck_assert_int_lt(w->n_raw, 16);
    w->d[w->n_data++ & 7] = *d;
    w->raw[w->n_raw] = d->raw;
    w->raw_len[w->n_raw++] = d->raw_len;
    return 0;
}

static int walk_timers(void *arg, const fnw_elem_timers *t)
{
    walked *w = arg;
    ck_assert_int_lt(w->n_raw, 16);
    w->t[w->n_timers++ & 7] = *t;
    w->raw[w->n_raw] = t->raw;
    w->raw_len[w->n_raw++] = t->raw_len;
    return 0;
}

static const fnw_elem_visitor walker = {walk_data, walk_timers};

/* Timers entries are read with every field; each entry's raw span is its
 * exact bytes: the spans follow each other and cover the message, and each
 * span alone reads back as the same entry. */
START_TEST(timers_are_read_with_their_raw_spans)
{
    pb_Data a = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__ELEMENTS__DATA__INIT;
    a.instruction_id = "bundle-7";
    a.transform_id = "transform-0";
    a.data.data = (uint8_t *)"\x02" "xy";
    a.data.len = 3;
    pb_Timers t = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__ELEMENTS__TIMERS__INIT;
    t.instruction_id = "bundle-7";
    t.transform_id = "transform-0";
    t.timer_family_id = "timer";
    t.timers.data = (uint8_t *)"\x04" "tick";
    t.timers.len = 5;
    pb_Timers last = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__ELEMENTS__TIMERS__INIT;
    last.instruction_id = "bundle-7";
    last.transform_id = "transform-0";
    last.timer_family_id = "timer";
    last.is_last = 1;
    pb_Data *ds[1] = {&a};
    pb_Timers *ts[2] = {&t, &last};
    size_t len;
    uint8_t *buf = pack_elements(ds, 1, ts, 2, &len);
    walked w = {0};
    fnw_error err;
    ck_assert_int_eq(fnw_elements_walk(buf, len, &walker, &w, &err), 0);
    ck_assert_int_eq(w.n_data, 1);
    ck_assert_int_eq(w.n_timers, 2);
    const fnw_elem_timers *x = &w.t[0];
    ck_assert_uint_eq(x->instruction_len, 8);
    ck_assert(memcmp(x->instruction_id, "bundle-7", 8) == 0);
    ck_assert_uint_eq(x->transform_len, 11);
    ck_assert(memcmp(x->transform_id, "transform-0", 11) == 0);
    ck_assert_uint_eq(x->family_len, 5);
    ck_assert(memcmp(x->family_id, "timer", 5) == 0);
    ck_assert_uint_eq(x->timers_len, 5);
    ck_assert(memcmp(x->timers, "\x04" "tick", 5) == 0);
    ck_assert_int_eq(x->is_last, 0);
    ck_assert_int_eq(w.t[1].is_last, 1);
    ck_assert_uint_eq(w.t[1].timers_len, 0);
    /* spans: adjacent, covering everything */
    ck_assert_int_eq(w.n_raw, 3);
    ck_assert_ptr_eq(w.raw[0], buf);
    for (int i = 1; i < w.n_raw; i++)
        ck_assert_ptr_eq(w.raw[i], w.raw[i - 1] + w.raw_len[i - 1]);
    ck_assert_ptr_eq(w.raw[2] + w.raw_len[2], buf + len);
    /* a span alone is an Elements of that one entry */
    walked one = {0};
    ck_assert_int_eq(fnw_elements_walk(w.t[0].raw, w.t[0].raw_len, &walker, &one, &err), 0);
    ck_assert_int_eq(one.n_timers, 1);
    ck_assert_int_eq(one.n_data, 0);
    ck_assert_ptr_eq(one.t[0].timers, x->timers);
    pb_Elements *e = PB(elements__unpack)(NULL, w.d[0].raw_len, w.d[0].raw);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->n_data, 1);
    ck_assert_str_eq(e->data[0]->instruction_id, "bundle-7");
    PB(elements__free_unpacked)(e, NULL);
    /* fnw_elements_each counts them */
    seen s = {0};
    size_t timers = 0;
    ck_assert_int_eq(fnw_elements_each(buf, len, collect, &s, &timers, &err), 0);
    ck_assert_int_eq((int)timers, 2);
    ck_assert_ptr_eq(s.d[0].raw, buf);
    free(buf);
}
END_TEST

/* A Timers entry that is not protobuf is refused with the entry's place and
 * what is wrong in it; the entries before it were handed out. */
START_TEST(malformed_timers_are_refused_saying_where)
{
    uint8_t msg[64];
    uint8_t *w = fnw_elements_put_data(msg, "1", 1, "t", 1, (const uint8_t *)"\x01z", 2, 0);
    size_t at = (size_t)(w - msg);
    const uint8_t bad[] = {0x12, 0x05, 0x0a, 0x01, '1', 0x22, 0x07}; /* timers claims 7 bytes, none follow */
    memcpy(w, bad, sizeof bad);
    size_t n = at + sizeof bad;
    walked got = {0};
    fnw_error err;
    ck_assert_int_eq(fnw_elements_walk(msg, n, &walker, &got, &err), -1);
    ck_assert_int_eq(got.n_data, 1);
    ck_assert_int_eq(got.n_timers, 0);
    char want[96];
    snprintf(want, sizeof want, "Elements: the Timers entry at byte %zu is malformed (7 bytes): ", at);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "got: %s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "field 4 claims 7 bytes, 0 remain"));
    /* a bad varint inside, and a group inside */
    const uint8_t bad_varint[] = {0x12, 0x03, 0x28, 0xff, 0xff};
    ck_assert_int_eq(fnw_elements_walk(bad_varint, sizeof bad_varint, &walker, &got, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "Timers entry at byte 0"));
    ck_assert_ptr_nonnull(strstr(err.msg, "bad varint at byte 1"));
    const uint8_t group[] = {0x12, 0x02, 0x0b, 0x0c};
    ck_assert_int_eq(fnw_elements_walk(group, sizeof group, &walker, &got, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "Timers entry at byte 0"));
    ck_assert_ptr_nonnull(strstr(err.msg, "wire type 3"));
    size_t timers;
    seen s = {0};
    ck_assert_int_eq(fnw_elements_each(group, sizeof group, collect, &s, &timers, &err), -1);
    /* a malformed Data entry says so too */
    const uint8_t bad_data[] = {0x0a, 0x02, 0x1a, 0x05};
    ck_assert_int_eq(fnw_elements_walk(bad_data, sizeof bad_data, &walker, &got, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "the Data entry at byte 0 is malformed"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("elements");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, reads_what_protobuf_writes);
    tcase_add_test(tc, writes_what_protobuf_reads);
    tcase_add_test(tc, head_plus_separate_data_is_the_same_entry);
    tcase_add_test(tc, large_payload_sizes_match);
    tcase_add_test(tc, malformed_input_fails_cleanly);
    tcase_add_test(tc, head_for_empty_data_is_what_its_size_says);
    tcase_add_test(tc, head_sizes_match_at_varint_boundaries);
    tcase_add_test(tc, empty_ids_and_bare_is_last);
    tcase_add_test(tc, unknown_fields_are_skipped_groups_refused);
    tcase_add_test(tc, callback_failure_stops_the_walk);
    tcase_add_test(tc, timers_are_read_with_their_raw_spans);
    tcase_add_test(tc, malformed_timers_are_refused_saying_where);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
