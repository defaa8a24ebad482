/* tests/unit/worker/test_inbox.c — an inbox hands out whole records however the
 * stream was cut into chunks: in place when a record lies in one chunk,
 * assembled when it spans chunks (the varint length too), and it refuses
 * bad framing (a stream that ends inside a record, an oversized or
 * overlong length) with a message instead of waiting or allocating. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_run.h"
#include "worker/inbox_internal.h"

/* ---- a fake stream --------------------------------------------------------------- */

static size_t freed_bytes, freed_chunks;

static void on_freed(fnw_inbox *ib, size_t held)
{
    freed_bytes += held;
    freed_chunks++;
}

static fnw_inbox *inbox_new(void)
{
    fnw_inbox *ib = calloc(1, sizeof *ib);
    ck_assert_ptr_nonnull(ib);
    fnw_inbox_reader_init(ib, on_freed);
    freed_bytes = freed_chunks = 0;
    return ib;
}

static void inbox_free(fnw_inbox *ib)
{
    fnw_inbox_reader_free(ib);
    free(ib);
}

static void feed(fnw_inbox *ib, const uint8_t *p, size_t n)
{
    ck_assert_int_eq(fnw_inbox_append_copy(ib, p, n), 0);
}

/* Records of these lengths, each filled with bytes that name it: lengths of
 * one, two and three varint bytes, empty ones between. */
static const size_t LENS[] = {0, 1, 5, 0, 127, 128, 300, 0, 2, 16384, 3};
#define N_LENS (sizeof LENS / sizeof LENS[0])
/* The same without the long one, for tests that cut at every byte. */
#define N_SHORT 9
static const size_t SHORT_AFTER[] = {2, 3};  /* the records after it */

static size_t encode(uint8_t *out, const size_t *lens, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        w += (size_t)fnw_varint_write(out + w, lens[i]);
        for (size_t j = 0; j < lens[i]; j++)
            out[w + j] = (uint8_t)(i * 31 + j);
        w += lens[i];
    }
    return w;
}

static const size_t *lens_now = LENS;
static size_t n_now = N_LENS;

static void check_record(const fnw_frame *f, size_t i)
{
    ck_assert_uint_eq(f->n, lens_now[i]);
    size_t bad = 0;
    for (size_t j = 0; j < f->n; j++)
        bad += f->p[j] != (uint8_t)(i * 31 + j);
    ck_assert_uint_eq(bad, 0);
}

/* Reads every record available; returns how many, checking each. */
static size_t read_all(fnw_inbox *ib, size_t *next)
{
    fnw_frame f;
    size_t got = 0;
    fnw_inbox_status s;
    while ((s = fnw_inbox_next(ib, &f)) == FNW_INBOX_RECORD) {
        ck_assert_uint_lt(*next, n_now);
        check_record(&f, (*next)++);
        got++;
    }
    ck_assert_int_eq(s, FNW_INBOX_MORE);
    return got;
}

static uint8_t stream[40000];

/* ---- tests ------------------------------------------------------------------------ */

/* The stream cut in two at every byte position, the second part arriving
 * after the first was read as far as it goes: every record comes out once,
 * in order, and then the end. */
START_TEST(split_at_every_byte)
{
    size_t lens[N_SHORT + 2];
    memcpy(lens, LENS, N_SHORT * sizeof *lens);
    memcpy(lens + N_SHORT, SHORT_AFTER, sizeof SHORT_AFTER);
    lens_now = lens;
    n_now = N_SHORT + 2;
    size_t total = encode(stream, lens, n_now);
    for (size_t cut = 0; cut <= total; cut++) {
        fnw_inbox *ib = inbox_new();
        size_t next = 0;
        feed(ib, stream, cut);
        read_all(ib, &next);
        feed(ib, stream + cut, total - cut);
        read_all(ib, &next);
        ck_assert_uint_eq(next, n_now);
        ib->got_last = 1;
        fnw_frame f;
        ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_END);
        ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_END);
        ck_assert_uint_eq(freed_bytes, total);
        ck_assert_uint_eq(ib->bytes, 0);
        inbox_free(ib);
    }
    lens_now = LENS;
    n_now = N_LENS;
}
END_TEST

/* One byte per chunk: every varint length (1, 2 and 3 bytes long) is split
 * across chunks; all chunks arrive before reading starts. */
START_TEST(one_byte_chunks)
{
    size_t total = encode(stream, LENS, N_LENS);
    fnw_inbox *ib = inbox_new();
    for (size_t i = 0; i < total; i++)
        feed(ib, stream + i, 1);
    size_t next = 0;
    ck_assert_uint_eq(read_all(ib, &next), N_LENS);
    ck_assert_uint_eq(freed_chunks, total);
    inbox_free(ib);
}
END_TEST

/* One byte at a time, reading after each: no record comes out early. */
START_TEST(trickle_reads_nothing_early)
{
    size_t lens3[] = {300, 0, 20000};
    static uint8_t buf[21000];
    size_t total = encode(buf, lens3, 3);
    fnw_inbox *ib = inbox_new();
    size_t got = 0, ends[3];
    ends[0] = 2 + 300;
    ends[1] = ends[0] + 1;
    ends[2] = total;
    for (size_t i = 0; i < total; i++) {
        feed(ib, buf + i, 1);
        fnw_frame f;
        fnw_inbox_status s = fnw_inbox_next(ib, &f);
        if (i + 1 == ends[got]) {
            ck_assert_int_eq(s, FNW_INBOX_RECORD);
            ck_assert_uint_eq(f.n, lens3[got]);
            got++;
        } else if (got < 3) {
            ck_assert_int_eq(s, FNW_INBOX_MORE);
        }
    }
    ck_assert_uint_eq(got, 3);
    inbox_free(ib);
}
END_TEST

/* Empty records: alone in a chunk, many in one chunk, at a chunk's end. */
START_TEST(empty_records)
{
    const uint8_t zeros[5] = {0};
    fnw_inbox *ib = inbox_new();
    feed(ib, zeros, 1);
    feed(ib, zeros, 5);
    fnw_frame f;
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_RECORD);
        ck_assert_uint_eq(f.n, 0);
    }
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_MORE);
    ib->got_last = 1;
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_END);
    inbox_free(ib);
}
END_TEST

/* A record inside one chunk is handed out in place, not copied, and stays
 * readable while more chunks arrive. */
START_TEST(whole_record_is_not_copied)
{
    const uint8_t two[] = {3, 'a', 'b', 'c', 1, 'z'};
    fnw_inbox *ib = inbox_new();
    feed(ib, two, sizeof two);
    const uint8_t *base = ib->head->p;
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_RECORD);
    ck_assert_ptr_eq(f.p, base + 1);
    feed(ib, two, sizeof two);
    ck_assert(memcmp(f.p, "abc", 3) == 0);
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_RECORD);
    ck_assert_ptr_eq(f.p, base + 5);
    ck_assert_uint_eq(ib->carry.cap, 0);   /* nothing was assembled */
    inbox_free(ib);
}
END_TEST

/* A chunk's held bytes are given back once it has been read past, not
 * before: the record just handed out may still point into it. */
START_TEST(chunks_freed_after_reading_past_them)
{
    const uint8_t one[] = {2, 'h', 'i'};
    fnw_inbox *ib = inbox_new();
    grpc_slice msg = grpc_slice_from_copied_buffer((const char *)one, sizeof one);
    ck_assert_int_eq(fnw_inbox_append_ref(ib, msg, GRPC_SLICE_START_PTR(msg), sizeof one, 1000), 0);
    grpc_slice_unref(msg);
    ck_assert_uint_eq(ib->bytes, 1000);
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_RECORD);
    ck_assert(memcmp(f.p, "hi", 2) == 0);
    ck_assert_uint_eq(freed_bytes, 0);
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_MORE);
    ck_assert_uint_eq(freed_bytes, 1000);
    ck_assert_uint_eq(ib->bytes, 0);
    inbox_free(ib);
}
END_TEST

/* is_last inside a record (its length or its bytes) is an error saying how
 * much of it arrived, and stays one. */
START_TEST(last_inside_a_record_fails)
{
    const uint8_t part[] = {1, 'x', 5, 'a', 'b'};
    fnw_inbox *ib = inbox_new();
    feed(ib, part, sizeof part);
    ib->got_last = 1;
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_RECORD);
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_BAD);
    ck_assert_ptr_nonnull(strstr(fnw_inbox_error(ib), "cut short"));
    ck_assert_ptr_nonnull(strstr(fnw_inbox_error(ib), "3 bytes of it arrived"));
    feed(ib, part, sizeof part);   /* nothing after an error is read */
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_BAD);
    inbox_free(ib);

    const uint8_t half_varint[] = {0x80};
    ib = inbox_new();
    feed(ib, half_varint, 1);
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_MORE);
    ib->got_last = 1;
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_BAD);
    ck_assert_ptr_nonnull(strstr(fnw_inbox_error(ib), "1 bytes of it arrived"));
    inbox_free(ib);
}
END_TEST

/* A length over the bound is refused at once, whether it lies in one chunk
 * or spans two, without allocating anything near its size. */
START_TEST(oversized_length_fails_without_allocating)
{
    uint8_t big[16];
    int k = fnw_varint_write(big, FNW_INBOX_MAX_RECORD + 1);
    for (int cut = 0; cut <= k; cut++) {
        fnw_inbox *ib = inbox_new();
        feed(ib, big, (size_t)cut);
        feed(ib, big + cut, (size_t)k - (size_t)cut);
        feed(ib, (const uint8_t *)"xyz", 3);
        fnw_frame f;
        ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_BAD);
        ck_assert_ptr_nonnull(strstr(fnw_inbox_error(ib), "has a bad length prefix"));
        ck_assert_ptr_nonnull(strstr(fnw_inbox_error(ib), "claims 1073741825 bytes"));
        ck_assert_uint_lt(ib->carry.cap, 4096);
        inbox_free(ib);
    }
    /* a length just under the bound waits for its bytes, also without
     * reserving them */
    fnw_inbox *ib = inbox_new();
    k = fnw_varint_write(big, FNW_INBOX_MAX_RECORD);
    feed(ib, big, (size_t)k);
    feed(ib, (const uint8_t *)"xyz", 3);
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_MORE);
    ck_assert_uint_lt(ib->carry.cap, 4096);
    inbox_free(ib);
}
END_TEST

/* More than 10 varint bytes is not a length. */
START_TEST(overlong_varint_fails)
{
    uint8_t ff[11];
    memset(ff, 0xff, sizeof ff);
    for (size_t cut = 0; cut <= sizeof ff; cut++) {
        fnw_inbox *ib = inbox_new();
        feed(ib, ff, cut);
        feed(ib, ff + cut, sizeof ff - cut);
        fnw_frame f;
        ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_BAD);
        ck_assert_ptr_nonnull(strstr(fnw_inbox_error(ib), "longer than 10 bytes"));
        inbox_free(ib);
    }
}
END_TEST

/* Nothing at all, then is_last: the end, no error. */
START_TEST(empty_stream_ends)
{
    fnw_inbox *ib = inbox_new();
    fnw_frame f;
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_MORE);
    feed(ib, NULL, 0);
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_MORE);
    ib->got_last = 1;
    ck_assert_int_eq(fnw_inbox_next(ib, &f), FNW_INBOX_END);
    inbox_free(ib);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("inbox");
    TCase *tc = tcase_create("framing");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, split_at_every_byte);
    tcase_add_test(tc, one_byte_chunks);
    tcase_add_test(tc, trickle_reads_nothing_early);
    tcase_add_test(tc, empty_records);
    tcase_add_test(tc, whole_record_is_not_copied);
    tcase_add_test(tc, chunks_freed_after_reading_past_them);
    tcase_add_test(tc, last_inside_a_record_fails);
    tcase_add_test(tc, oversized_length_fails_without_allocating);
    tcase_add_test(tc, overlong_varint_fails);
    tcase_add_test(tc, empty_stream_ends);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
