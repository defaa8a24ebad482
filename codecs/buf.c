/* codecs/buf.c — growable output buffer (see buf.h). Growth doubles the
 * capacity up to the buffer's limit; a failed append leaves it unchanged. */
#include "codecs/buf.h"

#include <stdlib.h>
#include <string.h>

#include "codecs/bytes.h"
#include "codecs/varint.h"

#define BUF_DEFAULT_LIMIT FNW_BUF_DEFAULT_LIMIT
#define BUF_MIN_CAP 256

void fnw_buf_init(fnw_buf *b, size_t limit)
{
    b->p = NULL;
    b->len = 0;
    b->cap = 0;
    b->limit = limit ? limit : BUF_DEFAULT_LIMIT;
}

void fnw_buf_free(fnw_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = 0;
    b->cap = 0;
}

static int buf_grow(fnw_buf *b, size_t need)
{
    size_t limit = b->limit ? b->limit : BUF_DEFAULT_LIMIT;
    if (need > limit)
        return -1;
    size_t cap = b->cap ? b->cap : BUF_MIN_CAP;
    while (cap < need)
        cap = cap > limit / 2 ? limit : cap * 2;
    if (cap > limit)
        cap = limit;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

int fnw_buf_reserve(fnw_buf *b, size_t extra)
{
    if (extra <= b->cap - b->len)
        return 0; /* cap never exceeds the limit */
    if (extra > SIZE_MAX - b->len)
        return -1;
    return buf_grow(b, b->len + extra);
}

int fnw_buf_append(fnw_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    if (fnw_buf_reserve(b, n) < 0)
        return -1;
    memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

int fnw_buf_put_u8(fnw_buf *b, uint8_t v)
{
    if (b->len == b->cap && fnw_buf_reserve(b, 1) < 0)
        return -1;
    b->p[b->len++] = v;
    return 0;
}

int fnw_buf_put_be16(fnw_buf *b, uint16_t v)
{
    if (fnw_buf_reserve(b, 2) < 0)
        return -1;
    fnw_store_be16(b->p + b->len, v);
    b->len += 2;
    return 0;
}

int fnw_buf_put_be32(fnw_buf *b, uint32_t v)
{
    if (fnw_buf_reserve(b, 4) < 0)
        return -1;
    fnw_store_be32(b->p + b->len, v);
    b->len += 4;
    return 0;
}

int fnw_buf_put_be64(fnw_buf *b, uint64_t v)
{
    if (fnw_buf_reserve(b, 8) < 0)
        return -1;
    fnw_store_be64(b->p + b->len, v);
    b->len += 8;
    return 0;
}

int fnw_buf_put_varint(fnw_buf *b, uint64_t v)
{
    if (fnw_buf_reserve(b, FNW_VARINT_MAX) < 0)
        return -1;
    b->len += (size_t)fnw_varint_write(b->p + b->len, v);
    return 0;
}

uint8_t *fnw_buf_steal(fnw_buf *b, size_t *len)
{
    uint8_t *p = b->p;
    if (len)
        *len = b->len;
    b->p = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}
