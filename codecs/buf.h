/* codecs/buf.h — a growable byte buffer for encoding output.
 *
 * One buffer is reused across many records (its memory is kept between
 * fnw_buf_clear calls), so encoding does not allocate per record. Appends
 * fail (return -1) only when growth would pass the buffer's limit or malloc
 * fails; the buffer is then unchanged.
 */
#ifndef FNW_BUF_H
#define FNW_BUF_H

#include <stddef.h>
#include <stdint.h>

#define FNW_BUF_DEFAULT_LIMIT ((size_t)2 << 30)

typedef struct fnw_buf {
    uint8_t *p;
    size_t len;
    size_t cap;
    size_t limit; /* 0 = 2 GiB */
} fnw_buf;

void fnw_buf_init(fnw_buf *b, size_t limit);
void fnw_buf_free(fnw_buf *b);
static inline void fnw_buf_clear(fnw_buf *b)
{
    b->len = 0;
}
int fnw_buf_reserve(fnw_buf *b, size_t extra); /* ensure cap >= len + extra */
int fnw_buf_append(fnw_buf *b, const void *p, size_t n);
int fnw_buf_put_u8(fnw_buf *b, uint8_t v);
int fnw_buf_put_be16(fnw_buf *b, uint16_t v);
int fnw_buf_put_be32(fnw_buf *b, uint32_t v);
int fnw_buf_put_be64(fnw_buf *b, uint64_t v);
int fnw_buf_put_varint(fnw_buf *b, uint64_t v);
/* 1 when extra more bytes stay within b's limit: a reserve of extra that
 * failed all the same failed for want of memory (for error messages). */
static inline int fnw_buf_within_limit(const fnw_buf *b, size_t extra)
{
    size_t limit = b->limit ? b->limit : FNW_BUF_DEFAULT_LIMIT;
    return extra <= SIZE_MAX - b->len && b->len + extra <= limit;
}
/* Hands the bytes to the caller (who must free() them) and empties b. */
uint8_t *fnw_buf_steal(fnw_buf *b, size_t *len);

#endif
