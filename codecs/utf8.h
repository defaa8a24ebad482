/* codecs/utf8.h — UTF-8 for the text fnworker writes and checks: encoding
 * one code point, and the strict validity check (shortest form, no
 * surrogates, at most U+10FFFF). No allocation, no I/O. */
#ifndef FNW_UTF8_H
#define FNW_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Writes code point cp (at most U+10FFFF; the caller maps a surrogate or an
 * out-of-range value to U+FFFD first if it can meet one) into out, which
 * holds at least 4 bytes; returns the number of bytes written (1-4). */
size_t fnw_utf8_encode(uint32_t cp, char *out);

/* 1 when p[0..n) is valid UTF-8, else 0. */
int fnw_utf8_valid(const uint8_t *p, size_t n);

#endif
