/* bench/records.c — input record encoding and output framing walk
 * (see records.h). */
#include "bench/records.h"

#include <string.h>

#define WM_NONE INT64_MIN

size_t bench_record_payload_len(size_t str_len)
{
    /* outer mask, ts, wm, inner mask, int32 length, string, int */
    return 1 + 8 + 8 + 1 + 4 + str_len + 4;
}

/* The length prefix, then Flink's (CURRENT_TIMESTAMP, CURRENT_WATERMARK,
 * NORMAL_DATA) row up to the data row's null mask; room is reserved. */
static void put_head(fnw_buf *b, size_t len, int64_t ts, int64_t wm)
{
    fnw_buf_put_varint(b, len);
    fnw_buf_put_u8(b, 0x00);
    fnw_buf_put_be64(b, (uint64_t)ts);
    fnw_buf_put_be64(b, (uint64_t)wm);
    fnw_buf_put_u8(b, 0x00);
}

int bench_record_put(fnw_buf *b, int64_t ts, int64_t wm, size_t str_len, uint64_t seed,
                     int32_t v)
{
    size_t len = bench_record_payload_len(str_len);
    if (fnw_buf_reserve(b, len + 10) < 0)
        return -1;
    put_head(b, len, ts, wm);
    fnw_buf_put_be32(b, (uint32_t)str_len);
    uint8_t *s = b->p + b->len;
    for (size_t i = 0; i < str_len; i++)
        s[i] = (uint8_t)('a' + (seed + i * 7) % 26);
    b->len += str_len;
    fnw_buf_put_be32(b, (uint32_t)v);
    return 0;
}

int bench_chunk_build(fnw_buf *b, size_t str_len, size_t target, uint64_t *n)
{
    /* Flink's rule: records are added until the buffer reaches the limit. */
    *n = 0;
    do {
        if (bench_record_put(b, 1000 + (int64_t)*n, WM_NONE, str_len, *n, (int32_t)*n) < 0)
            return -1;
        (*n)++;
    } while (b->len < target);
    return 0;
}

size_t bench_feature_payload_len(int dim)
{
    /* outer mask, ts, wm, inner mask, id, int32 count, the floats */
    return 1 + 8 + 8 + 1 + 8 + 4 + 4 * (size_t)dim;
}

float bench_feature_value(uint64_t id, int j)
{
    return (float)((id + (uint64_t)j) % 7) * 0.5f;
}

int bench_feature_put(fnw_buf *b, int64_t ts, int64_t wm, uint64_t id, int dim)
{
    size_t len = bench_feature_payload_len(dim);
    if (fnw_buf_reserve(b, len + 10) < 0)
        return -1;
    put_head(b, len, ts, wm);
    fnw_buf_put_be64(b, id);
    fnw_buf_put_be32(b, (uint32_t)dim);
    for (int j = 0; j < dim; j++) {
        float f = bench_feature_value(id, j);
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        fnw_buf_put_be32(b, u);
    }
    return 0;
}

int bench_feature_chunk_build(fnw_buf *b, int dim, size_t target, uint64_t *n)
{
    *n = 0;
    do {
        if (bench_feature_put(b, 1000 + (int64_t)*n, WM_NONE, *n, dim) < 0)
            return -1;
        (*n)++;
    } while (b->len < target);
    return 0;
}

void bench_walker_init(bench_walker *w, uint64_t expect_len, bench_ts_fn on_ts, void *ts_arg)
{
    memset(w, 0, sizeof *w);
    w->expect_len = expect_len;
    w->on_ts = on_ts;
    w->ts_arg = ts_arg;
    w->head_n = w->head_want = 9;
}

void bench_walker_set_check(bench_walker *w, bench_rec_fn on_rec, void *rec_arg)
{
    w->on_rec = on_rec;
    w->rec_arg = rec_arg;
}

static void start_record(bench_walker *w, uint64_t len)
{
    w->records++;
    w->skip = len;
    if (w->expect_len && len != w->expect_len)
        w->bad_len++;
    if (!w->on_ts && !w->on_rec)
        return;
    if (len < 9 || (w->on_rec && len > BENCH_REC_MAX)) {
        w->malformed = 1;
        return;
    }
    w->head_want = w->on_rec ? (unsigned)len : 9;
    w->head_n = 0;
}

static void capture_head(bench_walker *w, const uint8_t *p, size_t take)
{
    size_t room = w->head_want - w->head_n;
    size_t k = take < room ? take : room;
    memcpy(w->head + w->head_n, p, k);
    w->head_n += (unsigned)k;
    if (w->head_n < w->head_want)
        return;
    if (w->on_ts) {
        uint64_t ts = 0;
        for (int i = 1; i < 9; i++)
            ts = (ts << 8) | w->head[i];
        w->on_ts(w->ts_arg, (int64_t)ts);
    }
    if (w->on_rec && w->on_rec(w->rec_arg, w->head, w->head_n) < 0)
        w->bad_value++;
}

void bench_walker_feed(bench_walker *w, const uint8_t *p, size_t n)
{
    size_t i = 0;
    w->bytes += n;
    while (i < n) {
        if (w->skip > 0) {
            size_t take = w->skip < n - i ? (size_t)w->skip : n - i;
            if (w->head_n < w->head_want)
                capture_head(w, p + i, take);
            i += take;
            w->skip -= take;
            continue;
        }
        uint8_t c = p[i++];
        if (!w->in_varint && c < 0x80) {
            start_record(w, c);
            continue;
        }
        if (!w->in_varint) {
            w->in_varint = 1;
            w->vacc = 0;
            w->vshift = 0;
        }
        w->vacc |= (uint64_t)(c & 0x7f) << w->vshift;
        w->vshift += 7;
        if (!(c & 0x80)) {
            w->in_varint = 0;
            start_record(w, w->vacc);
        } else if (w->vshift >= 70) {
            w->malformed = 1;
            w->in_varint = 0;
        }
    }
}

int bench_walker_check(const bench_walker *w)
{
    return (w->malformed || w->in_varint || w->skip || w->bad_len || w->bad_value) ? -1 : 0;
}
