/* codecs/varint.h — Beam's varint (unsigned LEB128 of the 64-bit two's
 * complement value, at most 10 bytes), used for record framing on the data
 * plane and in metric payloads. No I/O. */
#ifndef FNW_VARINT_H
#define FNW_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define FNW_VARINT_MAX 10

/* Reads one varint from p[0..n). Returns bytes consumed (1..10), 0 if the
 * input ends before the varint does, -1 if it is longer than 10 bytes. */
int fnw_varint_read(const uint8_t *p, size_t n, uint64_t *out);
/* Writes v at p (which must have FNW_VARINT_MAX bytes); returns bytes written. */
int fnw_varint_write(uint8_t *p, uint64_t v);
int fnw_varint_size(uint64_t v);

#endif
