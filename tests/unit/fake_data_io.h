/* tests/unit/fake_data_io.h — a data plane without a network for unit
 * tests: the io table (worker/data_internal.h) replaced by a fake stream that
 * records what is sent and lets the test deliver messages, report the
 * stream writable or closed, and set the clock. */
#ifndef FNW_TEST_FAKE_DATA_IO_H
#define FNW_TEST_FAKE_DATA_IO_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/data_internal.h"
#include "worker/elements.h"

/* One input record as the data plane carries it, for a ROW<INT> input:
 * varint(21), Flink's row mask, timestamp and watermark (big-endian LONGs,
 * no watermark), the INT value. Writes 22 bytes at p; returns how many. */
static inline size_t fake_record_int(uint8_t *p, int64_t ts, int32_t v)
{
    size_t k = 0;
    p[k++] = 21;
    p[k++] = 0;
    for (int i = 7; i >= 0; i--)
        p[k++] = (uint8_t)((uint64_t)ts >> (8 * i));
    for (int i = 7; i >= 0; i--)
        p[k++] = (uint8_t)((uint64_t)INT64_MIN >> (8 * i));
    for (int i = 3; i >= 0; i--)
        p[k++] = (uint8_t)((uint32_t)v >> (8 * i));
    return k;
}

#define FAKE_MAX_SENT 16

typedef struct fake_sent {
    uint8_t *p;                /* the message's slices joined */
    size_t n;
    fnw_sent_cb done;
    void *arg;
} fake_sent;

struct fnw_stream {
    fnw_stream_handler h;
    int paused, pauses, cancelled, congested;
    int send_closed;   /* half-closed (fnw_data_stop) */
    size_t writing;    /* what send_queued reports: messages not yet written (set by a test) */
    fake_sent sent[FAKE_MAX_SENT];
    size_t n_sent;
};

static fnw_stream *fake_last;   /* the stream opened last */
static double fake_now;         /* the clock, in seconds */

static grpc_channel *fake_channel(const char *url)
{
    return NULL;
}

static void fake_channel_free(grpc_channel *ch)
{
}

static fnw_ready_wait *fake_wait_ready(fnw_rpc *rpc, grpc_channel *ch, double timeout_s,
                                       fnw_ready_cb cb, void *user)
{
    return NULL;
}

static void fake_ready_cancel(fnw_ready_wait *w)
{
}

static fnw_stream *fake_stream_start(fnw_rpc *rpc, grpc_channel *ch, const char *method,
                                     const fnw_stream_handler *h, int wait_for_ready)
{
    fnw_stream *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    s->h = *h;
    fake_last = s;
    return s;
}

static void fake_send(fnw_stream *s, grpc_slice *slices, size_t n, fnw_sent_cb done, void *arg)
{
    ck_assert_uint_lt(s->n_sent, FAKE_MAX_SENT);
    fake_sent *m = &s->sent[s->n_sent++];
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += GRPC_SLICE_LENGTH(slices[i]);
    m->p = malloc(total ? total : 1);
    m->n = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(m->p + m->n, GRPC_SLICE_START_PTR(slices[i]), GRPC_SLICE_LENGTH(slices[i]));
        m->n += GRPC_SLICE_LENGTH(slices[i]);
        grpc_slice_unref(slices[i]);
    }
    m->done = done;
    m->arg = arg;
}

static int fake_congested(const fnw_stream *s)
{
    return s->congested;
}

static void fake_pause_recv(fnw_stream *s, int paused)
{
    s->paused = paused;
    s->pauses++;
}

static void fake_cancel(fnw_stream *s)
{
    s->cancelled = 1;
}

static void fake_close_send(fnw_stream *s)
{
    s->send_closed = 1;
}

static void fake_stream_free(fnw_stream *s)
{
    for (size_t i = 0; i < s->n_sent; i++)
        free(s->sent[i].p);
    if (fake_last == s)
        fake_last = NULL;
    free(s);
}

static double fake_clock(struct ev_loop *loop)
{
    return fake_now;
}

static size_t fake_send_queued(const fnw_stream *s)
{
    return s->writing;
}

static const fnw_data_io fake_io = {
    fake_channel, fake_channel_free, fake_wait_ready, fake_ready_cancel, fake_stream_start,
    fake_send, fake_congested, fake_pause_recv, fake_cancel, fake_close_send,
    fake_stream_free, fake_clock, fake_send_queued,
};

/* A manager on the fake io; zero cfg fields take their defaults. */
static inline void fake_data_init(fnw_data_mgr *m, struct ev_loop *loop, const fnw_data_config *cfg)
{
    fake_now = 1000;
    ck_assert_int_eq(fnw_data_init(m, loop, NULL, NULL, cfg), 0);
    m->io = &fake_io;
    m->warn_since = fake_now;
}

/* Delivers one Elements message with one Data entry to s. */
static inline void fake_deliver(fnw_stream *s, const char *iid, const char *tid, const void *data,
                         size_t n, int is_last)
{
    size_t il = strlen(iid), tl = strlen(tid);
    grpc_slice msg = grpc_slice_malloc(fnw_elements_data_size(il, tl, n, is_last));
    fnw_elements_put_data(GRPC_SLICE_START_PTR(msg), iid, il, tid, tl, data, n, is_last);
    s->h.on_message(s->h.user, msg);
    grpc_slice_unref(msg);
}

#endif
