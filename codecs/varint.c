/* codecs/varint.c — Beam varint (unsigned LEB128 of a 64-bit value). */
#include "codecs/varint.h"

int fnw_varint_read_long(const uint8_t *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    size_t lim = n < FNW_VARINT_MAX ? n : FNW_VARINT_MAX;
    for (size_t i = 0; i < lim; i++) {
        uint8_t b = p[i];
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return (int)i + 1;
        }
    }
    return n < FNW_VARINT_MAX ? 0 : -1;
}

int fnw_varint_write_long(uint8_t *p, uint64_t v)
{
    int i = 0;
    while (v >= 0x80) {
        p[i++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[i++] = (uint8_t)v;
    return i;
}

int fnw_varint_size(uint64_t v)
{
    int n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}
