/* bench/pbwire.h — the protobuf wire format by hand, for the
 * benchmark driver and the null worker.
 *
 * The driver builds descriptors whose payloads nest as bytes four levels deep
 * (descriptor > transform > ParDo > function > OperationSpec), and it reads
 * and writes the Elements messages that carry every record. Writing fields
 * into fnw_buf buffers keeps the nesting readable; reading hands out pointers
 * into the received bytes (no allocation, no copy). It is a second
 * implementation next to the worker's own codec on purpose: the benchmark
 * must not inherit the worker's bugs.
 */
#ifndef BENCH_PBWIRE_H
#define BENCH_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/buf.h"

enum { BENCH_WT_VARINT = 0, BENCH_WT_I64 = 1, BENCH_WT_LEN = 2, BENCH_WT_I32 = 5 };

/* Writers: each returns 0, or -1 when the buffer cannot grow. */
int bench_pb_varint(fnw_buf *b, uint32_t field, uint64_t v);
int bench_pb_bytes(fnw_buf *b, uint32_t field, const void *p, size_t n);
int bench_pb_str(fnw_buf *b, uint32_t field, const char *s);
int bench_pb_sub(fnw_buf *b, uint32_t field, const fnw_buf *sub);
/* One entry of a map<string, string|bytes> field (key = 1, value = 2). */
int bench_pb_map_entry(fnw_buf *b, uint32_t field, const char *key, const void *val, size_t vlen);

/* Writes a field key / varint at p (room for 10 bytes); returns bytes used. */
size_t bench_pb_put_varint(uint8_t *p, uint64_t v);
size_t bench_pb_varint_size(uint64_t v);

/* Reader over p[0..n). */
typedef struct bench_pb_reader {
    const uint8_t *p, *end;
} bench_pb_reader;

typedef struct bench_pb_field {
    uint32_t field;
    int wire;
    uint64_t v;            /* BENCH_WT_VARINT */
    const uint8_t *data;   /* BENCH_WT_LEN */
    size_t len;
} bench_pb_field;

static inline void bench_pb_reader_init(bench_pb_reader *r, const void *p, size_t n)
{
    r->p = p;
    r->end = (const uint8_t *)p + n;
}

/* Reads the next field: 1 = got one, 0 = end of input, -1 = malformed. */
int bench_pb_next(bench_pb_reader *r, bench_pb_field *f);

#endif
