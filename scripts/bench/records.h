/* scripts/bench/records.h — the records the benchmark sends and how it
 * counts what comes back.
 *
 * Input records are Flink's runner rows for the data type ROW<STRING, INT>
 * (what Flink's Python operators send): varint(len) + Row(LONG ts, LONG wm,
 * Row(STRING, INT)). A chunk is many of them encoded once, back to back,
 * about 1 MB, and sent again and again. Outputs are counted by walking the
 * varint framing across Data messages (a record may span messages);
 * the walker can also pick each output's timestamp (Row(LONG ts, ...):
 * mask byte, then 8 bytes big-endian) for latency measurements, and checks
 * every record has the length the workload implies.
 */
#ifndef BENCH_RECORDS_H
#define BENCH_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/buf.h"

/* Payload bytes (without the varint prefix) of one input record whose
 * STRING has str_len bytes; the output row of identity/echo is 8 shorter
 * (no watermark). */
size_t bench_record_payload_len(size_t str_len);

/* Appends one input record: varint(len) + Row(ts, wm, Row(s, v)), where s is
 * str_len bytes derived from `seed`. */
int bench_record_put(fnw_buf *b, int64_t ts, int64_t wm, size_t str_len, uint64_t seed,
                     int32_t v);

/* Fills b with whole records (ts = 1000 + i, wm = Long.MIN_VALUE) until it
 * holds at least target bytes, as Flink fills its 1 MB buffer; *n gets the
 * count. */
int bench_chunk_build(fnw_buf *b, size_t str_len, size_t target, uint64_t *n);

typedef void (*bench_ts_fn)(void *arg, int64_t ts);

typedef struct bench_walker {
    uint64_t records;
    uint64_t bytes;
    uint64_t bad_len;        /* records whose length was not expect_len */
    uint64_t expect_len;     /* 0 = any */
    uint64_t skip;           /* bytes of the current payload still ahead */
    uint64_t vacc;
    unsigned vshift;
    int in_varint;
    int malformed;
    bench_ts_fn on_ts;       /* NULL = do not decode timestamps */
    void *ts_arg;
    uint8_t head[9];
    unsigned head_n;         /* < 9 while capturing the current record's head */
} bench_walker;

void bench_walker_init(bench_walker *w, uint64_t expect_len, bench_ts_fn on_ts, void *ts_arg);
/* Consumes p[0..n) of the byte stream. */
void bench_walker_feed(bench_walker *w, const uint8_t *p, size_t n);
/* 0 if the stream ended on a record boundary and every record was well
 * formed (and of the expected length), else -1. */
int bench_walker_check(const bench_walker *w);

#endif
