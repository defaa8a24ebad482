/* codecs/varint.h — Beam's varint (unsigned LEB128 of the 64-bit two's
 * complement value, at most 10 bytes), used for record framing on the data
 * plane and in metric payloads. No I/O. */
#ifndef FNW_VARINT_H
#define FNW_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define FNW_VARINT_MAX 10

int fnw_varint_read_long(const uint8_t *p, size_t n, uint64_t *out);
int fnw_varint_write_long(uint8_t *p, uint64_t v);

/* Reads one varint from p[0..n). Returns bytes consumed (1..10), 0 if the
 * input ends before the varint does, -1 if it is longer than 10 bytes.
 * (Inline for the one-byte case, which every record length under 128 is.) */
static inline int fnw_varint_read(const uint8_t *p, size_t n, uint64_t *out)
{
    if (n > 0 && p[0] < 0x80) {
        *out = p[0];
        return 1;
    }
    return fnw_varint_read_long(p, n, out);
}

/* Writes v at p (which must have FNW_VARINT_MAX bytes); returns bytes written. */
static inline int fnw_varint_write(uint8_t *p, uint64_t v)
{
    if (v < 0x80) {
        p[0] = (uint8_t)v;
        return 1;
    }
    return fnw_varint_write_long(p, v);
}
int fnw_varint_size(uint64_t v);

#endif
