/* bench/pbwire.c — protobuf wire writer and reader (see pbwire.h). */
#include "bench/pbwire.h"

#include <string.h>

size_t bench_pb_put_varint(uint8_t *p, uint64_t v)
{
    size_t i = 0;
    while (v >= 0x80) {
        p[i++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[i++] = (uint8_t)v;
    return i;
}

size_t bench_pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static int put_key(fnw_buf *b, uint32_t field, int wire)
{
    return fnw_buf_put_varint(b, ((uint64_t)field << 3) | (uint64_t)wire);
}

int bench_pb_varint(fnw_buf *b, uint32_t field, uint64_t v)
{
    return put_key(b, field, BENCH_WT_VARINT) | fnw_buf_put_varint(b, v);
}

int bench_pb_bytes(fnw_buf *b, uint32_t field, const void *p, size_t n)
{
    return put_key(b, field, BENCH_WT_LEN) | fnw_buf_put_varint(b, n) | fnw_buf_append(b, p, n);
}

int bench_pb_str(fnw_buf *b, uint32_t field, const char *s)
{
    return bench_pb_bytes(b, field, s, strlen(s));
}

int bench_pb_sub(fnw_buf *b, uint32_t field, const fnw_buf *sub)
{
    return bench_pb_bytes(b, field, sub->p, sub->len);
}

int bench_pb_map_entry(fnw_buf *b, uint32_t field, const char *key, const void *val, size_t vlen)
{
    fnw_buf e;
    fnw_buf_init(&e, 0);
    int rc = bench_pb_str(&e, 1, key) | bench_pb_bytes(&e, 2, val, vlen) | bench_pb_sub(b, field, &e);
    fnw_buf_free(&e);
    return rc;
}

static int read_varint(bench_pb_reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10 && r->p < r->end; i++) {
        uint8_t c = *r->p++;
        v |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

int bench_pb_next(bench_pb_reader *r, bench_pb_field *f)
{
    if (r->p >= r->end)
        return 0;
    uint64_t key;
    if (read_varint(r, &key) < 0)
        return -1;
    f->field = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    f->v = 0;
    f->data = NULL;
    f->len = 0;
    switch (f->wire) {
    case BENCH_WT_VARINT:
        return read_varint(r, &f->v) < 0 ? -1 : 1;
    case BENCH_WT_I64:
    case BENCH_WT_I32: {
        size_t n = f->wire == BENCH_WT_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n)
            return -1;
        r->p += n;
        return 1;
    }
    case BENCH_WT_LEN: {
        uint64_t n;
        if (read_varint(r, &n) < 0 || n > (uint64_t)(r->end - r->p))
            return -1;
        f->data = r->p;
        f->len = (size_t)n;
        r->p += n;
        return 1;
    }
    default:
        return -1;
    }
}
