/* codecs/bytes.h — big-endian loads and stores (Java DataOutput order) as
 * inline memcpy + byte swap, so the serializers' hot loops make no calls.
 * Internal to codecs/ and its users; no state. */
#ifndef FNW_BYTES_H
#define FNW_BYTES_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FNW_BE16(x) (x)
#define FNW_BE32(x) (x)
#define FNW_BE64(x) (x)
#else
#define FNW_BE16(x) __builtin_bswap16(x)
#define FNW_BE32(x) __builtin_bswap32(x)
#define FNW_BE64(x) __builtin_bswap64(x)
#endif

static inline uint16_t fnw_load_be16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return FNW_BE16(v);
}

static inline uint32_t fnw_load_be32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return FNW_BE32(v);
}

static inline uint64_t fnw_load_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return FNW_BE64(v);
}

static inline void fnw_store_be16(uint8_t *p, uint16_t v)
{
    v = FNW_BE16(v);
    memcpy(p, &v, 2);
}

static inline void fnw_store_be32(uint8_t *p, uint32_t v)
{
    v = FNW_BE32(v);
    memcpy(p, &v, 4);
}

static inline void fnw_store_be64(uint8_t *p, uint64_t v)
{
    v = FNW_BE64(v);
    memcpy(p, &v, 8);
}

#endif
