/* tests/unit/ser_vectors.h — what the serializer tests share: hex vectors,
 * type builders for containers, a per-test arena and buffer, and the
 * checks that hold one encoding against encode, decode and skip at once
 * (check_vector), against decode and skip (check_decodes), or expect all
 * of them to refuse it (expect_fail, expect_encode_fail). Skip goes through
 * a freshly compiled skip program (skip_once.h), whose fallbacks end in the
 * generic walk, so a message checked here is the generic walk's. */
#ifndef FNW_SER_VECTORS_H
#define FNW_SER_VECTORS_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "codecs/ser.h"
#include "tests/unit/skip_once.h"
#include "tests/unit/type_build.h"

static inline size_t hex(const char *s, uint8_t *out)
{
    size_t n = 0;
    int hi = -1;
    for (; *s; s++) {
        int d;
        if (*s >= '0' && *s <= '9') d = *s - '0';
        else if (*s >= 'a' && *s <= 'f') d = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F') d = *s - 'A' + 10;
        else continue;
        if (hi < 0) {
            hi = d;
        } else {
            out[n++] = (uint8_t)(hi << 4 | d);
            hi = -1;
        }
    }
    ck_assert_msg(hi < 0, "odd hex string %s", s);
    return n;
}

static inline char *tohex(const uint8_t *p, size_t n)
{
    static char buf[8192];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 4 < sizeof buf; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%02x ", p[i]);
    buf[o] = '\0';
    return buf;
}

/* Containers of one and two element types. */
static inline fnw_type *T1(fnw_kind k, fnw_type *c)
{
    fnw_type *t = T(k);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(t, c, NULL, &err), 0);
    return t;
}

static inline fnw_type *T2(fnw_kind k, fnw_type *a, fnw_type *b)
{
    fnw_type *t = T1(k, a);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(t, b, NULL, &err), 0);
    return t;
}

/* Each test's arena and output buffer (setup/teardown as a checked fixture). */
static fnw_arena arena;
static fnw_buf out;

static inline void setup(void)
{
    fnw_arena_init(&arena, 1024, 1 << 20);
    fnw_buf_init(&out, 0);
}

static inline void teardown(void)
{
    fnw_arena_free(&arena);
    fnw_buf_free(&out);
}

/* Skip and decode of bytes[0..n) must both fail with a message. */
static inline void expect_fail(const fnw_type *t, const uint8_t *b, size_t n, const char *want_in_msg)
{
    fnw_error err = { "" };
    size_t used = 0;
    ck_assert_msg(skip_once(t, b, n, &used, &err) == -1, "skip accepted %s", tohex(b, n));
    ck_assert_msg(err.msg[0] != '\0', "skip failed without a message");
    if (want_in_msg)
        ck_assert_msg(strstr(err.msg, want_in_msg), "skip message '%s' lacks '%s'", err.msg, want_in_msg);
    fnw_error err2 = { "" };
    fnw_value v;
    ck_assert_msg(fnw_ser_decode(t, b, n, &arena, &v, &used, &err2) == -1, "decode accepted %s", tohex(b, n));
    ck_assert_msg(err2.msg[0] != '\0', "decode failed without a message");
    if (want_in_msg)
        ck_assert_msg(strstr(err2.msg, want_in_msg), "decode message '%s' lacks '%s'", err2.msg, want_in_msg);
    fnw_arena_reset(&arena);
}

/* Decode and skip of the hex bytes accept exactly them and give v. */
static inline void check_decodes(const fnw_type *t, const char *hx, const fnw_value *v)
{
    uint8_t b[4096];
    size_t n = hex(hx, b);
    b[n] = 0xee;   /* a following byte must not be consumed */
    fnw_error err = { "" };
    size_t used = 999;
    ck_assert_msg(skip_once(t, b, n + 1, &used, &err) == 0, "skip %s: %s", hx, err.msg);
    ck_assert_uint_eq(used, n);
    used = 999;
    ck_assert_msg(skip_once(t, b, n, &used, &err) == 0, "skip %s: %s", hx, err.msg);
    ck_assert_uint_eq(used, n);
    fnw_value got;
    used = 999;
    ck_assert_msg(fnw_ser_decode(t, b, n + 1, &arena, &got, &used, &err) == 0, "decode %s: %s", hx, err.msg);
    ck_assert_uint_eq(used, n);
    ck_assert_msg(fnw_value_equal(t, &got, v), "decoded value of %s differs", hx);
    for (size_t k = 0; k < n; k++)
        expect_fail(t, b, k, NULL);
    fnw_arena_reset(&arena);
}

/* The full contract for a canonical encoding: encode(v) == hx, plus
 * check_decodes, plus decode-then-encode reproduces the bytes. */
static inline void check_vector(const fnw_type *t, const fnw_value *v, const char *hx)
{
    uint8_t b[4096];
    size_t n = hex(hx, b);
    fnw_error err = { "" };
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_buf_put_u8(&out, 0x99), 0);   /* encode appends */
    ck_assert_msg(fnw_ser_encode(t, v, &out, &err) == 0, "encode: %s", err.msg);
    ck_assert_msg(out.len == n + 1 && memcmp(out.p + 1, b, n) == 0, "encoded %s, want %s",
                  tohex(out.p + 1, out.len - 1), hx);
    check_decodes(t, hx, v);
    fnw_value got;
    size_t used;
    ck_assert_int_eq(fnw_ser_decode(t, b, n, &arena, &got, &used, &err), 0);
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(t, &got, &out, &err), 0);
    ck_assert_msg(out.len == n && memcmp(out.p, b, n) == 0, "re-encoded %s", tohex(out.p, out.len));
    fnw_arena_reset(&arena);
}

/* Encode of v fails with a message and leaves the buffer as it was. */
static inline void expect_encode_fail(const fnw_type *t, const fnw_value *v, const char *want_in_msg)
{
    fnw_error err = { "" };
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_buf_append(&out, "ab", 2), 0);
    ck_assert_int_eq(fnw_ser_encode(t, v, &out, &err), -1);
    ck_assert_uint_eq(out.len, 2);   /* left as it was */
    ck_assert_msg(strstr(err.msg, want_in_msg), "encode message '%s' lacks '%s'", err.msg, want_in_msg);
}

#endif
