/* tests/unit/test_elements.c — the hand-rolled Elements codec must read what
 * protobuf-c writes and write what protobuf-c reads. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdlib.h>
#include <string.h>

#include "worker/elements.h"
#include "worker/pb.h"

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

int main(void)
{
    Suite *s = suite_create("elements");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, reads_what_protobuf_writes);
    tcase_add_test(tc, writes_what_protobuf_reads);
    tcase_add_test(tc, head_plus_separate_data_is_the_same_entry);
    tcase_add_test(tc, large_payload_sizes_match);
    tcase_add_test(tc, malformed_input_fails_cleanly);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
