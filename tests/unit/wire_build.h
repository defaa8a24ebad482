/* tests/unit/wire_build.h — protobuf wire bytes written by hand, back to
 * front, for tests that need messages protobuf-c could not pack or unpack
 * (nesting thousands deep) or bytes it would never write (hostile lengths).
 * A sub-message is written first and then wrapped as a field of the
 * message around it; fields of one message are written last to first. */
#ifndef FNW_WIRE_BUILD_H
#define FNW_WIRE_BUILD_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };
/* TypeInfo.TypeName numbers */
enum { TI_ROW = 0, TI_INT = 5, TI_LIST = 18, TI_MAP = 19 };

/* A message grows towards the front of buf: buf[start..cap) is what has
 * been written, so a sub-message is written first and then wrapped. */
typedef struct wire {
    uint8_t *buf;
    size_t cap, start;
} wire;

static inline wire wire_new(size_t cap)
{
    wire w = { malloc(cap), cap, cap };
    ck_assert_ptr_nonnull(w.buf);
    return w;
}

static inline const uint8_t *bytes(const wire *w) { return w->buf + w->start; }
static inline size_t len(const wire *w) { return w->cap - w->start; }

static inline void front(wire *w, const void *b, size_t n)
{
    ck_assert_uint_ge(w->start, n);
    w->start -= n;
    memcpy(w->buf + w->start, b, n);
}

static inline void front_varint(wire *w, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    front(w, b, n);
}

static inline void front_tag(wire *w, uint32_t field, int wt)
{
    front_varint(w, (uint64_t)field << 3 | (uint64_t)wt);
}

/* Everything written so far becomes length-delimited field `field`. */
static inline void wrap(wire *w, uint32_t field)
{
    front_varint(w, len(w));
    front_tag(w, field, WT_LEN);
}

static inline void front_uint(wire *w, uint32_t field, uint64_t v)
{
    front_varint(w, v);
    front_tag(w, field, WT_VARINT);
}

static inline void front_string(wire *w, uint32_t field, const char *s)
{
    front(w, s, strlen(s));
    front_varint(w, strlen(s));
    front_tag(w, field, WT_LEN);
}

/* TypeInfo LIST<LIST<...<INT>>>: levels TypeInfo messages in all. */
static inline void deep_list(wire *w, int levels)
{
    front_uint(w, 1, TI_INT);
    for (int i = 1; i < levels; i++) {
        wrap(w, 2);                  /* collection_element_type */
        front_uint(w, 1, TI_LIST);
    }
}

#endif
