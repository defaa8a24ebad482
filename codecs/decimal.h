/* codecs/decimal.h — reading an unsigned decimal out of a text line, the
 * one number grammar of the pool's launcher protocol (pool/wire.c and the
 * worker's side of it, worker/relay_child.c): "0", or a digit 1-9 and more
 * digits (no sign, no leading zero, no overflow), ending at a space or at
 * the end of the string. Pure: text in, a number out.
 */
#ifndef FNW_DECIMAL_H
#define FNW_DECIMAL_H

/* The decimal at *p, at most max, into *out; *p moves past it and past the
 * one space after it. -1 (nothing moved) when *p holds no such number. */
int fnw_decimal_read(const char **p, unsigned long long max, unsigned long long *out);

#endif
