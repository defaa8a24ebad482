/* codecs/decimal.h — decimal numbers as text. Pure: text in, a number or
 * text out; no allocation.
 *
 * fnw_decimal_read: an unsigned decimal out of a text line, the one number
 * grammar of the pool's launcher protocol (pool/wire.c and the worker's
 * side of it, worker/relay_child.c): "0", or a digit 1-9 and more digits
 * (no sign, no leading zero, no overflow), ending at a space or at the end
 * of the string.
 *
 * fnw_decimal_quantize: the text of a Flink DECIMAL(p, s) value, as the
 * Table runner's DecimalDataSerializer reads it (new BigDecimal(text), then
 * DecimalData.fromBigDecimal(bd, p, s)) and PyFlink's DecimalCoderImpl
 * writes it (str(value.quantize(10**-s)) under a context of precision p).
 * Input: Java's BigDecimal grammar: an optional sign, digits with at most
 * one '.', at least one digit, an optional exponent [eE][+-]digits ("1.5",
 * "-.5", "5.", "1E+3", "12e-2"; no spaces, no NaN or Infinity).
 * Output: the value rounded to s digits after the point, written as Java's
 * BigDecimal.toString() writes it: plain ("12.50", "0.00", "1000") unless
 * the adjusted exponent is below -6 ("1E-7", "1.5E-8", "0E-7"); never a
 * negative zero.
 */
#ifndef FNW_DECIMAL_H
#define FNW_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"

/* The decimal at *p, at most max, into *out; *p moves past it and past the
 * one space after it. -1 (nothing moved) when *p holds no such number. */
int fnw_decimal_read(const char **p, unsigned long long max, unsigned long long *out);
/* The same number, ending at any byte that is not a digit: *p moves past
 * the digits only (the pool's stats line, pool/wire.c, reads lists). */
int fnw_decimal_scan(const char **p, unsigned long long max, unsigned long long *out);

typedef enum fnw_decimal_rounding {
    /* Java's RoundingMode.HALF_UP, what DecimalData.fromBigDecimal does to
     * text with more digits than the scale: 1.25 -> 1.3, -1.25 -> -1.3 */
    FNW_DECIMAL_HALF_UP = 0,
    /* Python decimal's default ROUND_HALF_EVEN, what PyFlink's
     * DecimalCoderImpl does before it writes: 1.25 -> 1.2, 1.35 -> 1.4 */
    FNW_DECIMAL_HALF_EVEN = 1,
} fnw_decimal_rounding;

/* Room fnw_decimal_quantize needs for any DECIMAL(p <= 38, s) (with the NUL). */
#define FNW_DECIMAL_TEXT_MAX 64

/* 1 if s[0..n) is a number in Java's BigDecimal grammar (above). */
int fnw_decimal_valid(const char *s, size_t n);

/* s[0..n) rounded to scale digits after the point, written into out (cap
 * >= FNW_DECIMAL_TEXT_MAX, NUL-terminated); *len = its length. precision
 * 1..38, scale 0..precision. Fails with a message naming the value when
 * the text is not a number, or when the rounded value needs more than
 * precision digits ("value 12345.67 does not fit DECIMAL(4, 1)"): Flink
 * would read such a value as null (fromBigDecimal), PyFlink raises. */
int fnw_decimal_quantize(const char *s, size_t n, int32_t precision, int32_t scale, fnw_decimal_rounding mode,
                         char *out, size_t cap, size_t *len, fnw_error *err);

#endif
