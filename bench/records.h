/* bench/records.h — the records the benchmark sends and how it
 * counts what comes back.
 *
 * Input records are Flink's runner rows for the data type ROW<STRING, INT>
 * (what Flink's Python operators send): varint(len) + Row(LONG ts, LONG wm,
 * Row(STRING, INT)). A chunk is many of them encoded once, back to back,
 * about 1 MB, and sent again and again. Outputs are counted by walking the
 * varint framing across Data messages (a record may span messages);
 * the walker can also pick each output's timestamp (Row(LONG ts, ...):
 * mask byte, then 8 bytes big-endian) for latency measurements, hand each
 * whole (small) output record to a check, and checks every record has the
 * length the workload implies.
 *
 * Feature records (the kserve workload) are Row(LONG ts, LONG wm, Row(LONG
 * id, PRIMITIVE_ARRAY<FLOAT> x)) with dim features x[j] = ((id + j) % 7) / 2,
 * the same values the kserve direct client sends.
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

/* Payload bytes of one feature record with dim features. */
size_t bench_feature_payload_len(int dim);
/* Feature j of the record with this id. */
float bench_feature_value(uint64_t id, int j);
/* Appends one feature record: varint(len) + Row(ts, wm, Row(id, x)). */
int bench_feature_put(fnw_buf *b, int64_t ts, int64_t wm, uint64_t id, int dim);
/* As bench_chunk_build, with feature records (id = i). */
int bench_feature_chunk_build(fnw_buf *b, int dim, size_t target, uint64_t *n);

#define BENCH_REC_MAX 64     /* largest output record handed to a bench_rec_fn */

typedef void (*bench_ts_fn)(void *arg, int64_t ts);
/* One output record's payload (without its varint); returns 0, or -1 when
 * the record is wrong (the walker counts it in bad_value). */
typedef int (*bench_rec_fn)(void *arg, const uint8_t *p, size_t n);

typedef struct bench_walker {
    uint64_t records;
    uint64_t bytes;
    uint64_t bad_len;        /* records whose length was not expect_len */
    uint64_t bad_value;      /* records on_rec refused */
    uint64_t expect_len;     /* 0 = any */
    uint64_t skip;           /* bytes of the current payload still ahead */
    uint64_t vacc;
    unsigned vshift;
    int in_varint;
    int malformed;
    bench_ts_fn on_ts;       /* NULL = do not decode timestamps */
    void *ts_arg;
    bench_rec_fn on_rec;     /* NULL = no value check */
    void *rec_arg;
    uint8_t head[BENCH_REC_MAX];
    unsigned head_n;         /* < head_want while capturing the current record's head */
    unsigned head_want;      /* 9 (the timestamp), or the whole record for on_rec */
} bench_walker;

void bench_walker_init(bench_walker *w, uint64_t expect_len, bench_ts_fn on_ts, void *ts_arg);
/* Hands every output record to on_rec (records over BENCH_REC_MAX bytes are malformed). */
void bench_walker_set_check(bench_walker *w, bench_rec_fn on_rec, void *rec_arg);
/* Consumes p[0..n) of the byte stream. */
void bench_walker_feed(bench_walker *w, const uint8_t *p, size_t n);
/* 0 if the stream ended on a record boundary and every record was well
 * formed (of the expected length, accepted by on_rec), else -1. */
int bench_walker_check(const bench_walker *w);

#endif
