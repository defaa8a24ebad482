/* codecs/value.h — a decoded Flink value that operations read and build
 * without knowing the wire format. fnw_value, its field use by kind and its
 * builders are public (fnworker.h); this header adds what the tree uses on
 * values: BIG_INT conversions and deep comparison and copy.
 *
 * Decoding allocates only from the arena it is given, so a whole batch of
 * values is released at once.
 */
#ifndef FNW_VALUE_H
#define FNW_VALUE_H

#include <stdint.h>

#include "codecs/arena.h"
#include "codecs/error.h"
#include "codecs/type.h"
#include "fnworker.h"

/* ---- BIG_INT helpers (value.c) ---------------------------------------------
 * BIG_INT bytes are two's complement big-endian, possibly not minimal. */
/* Writes the minimal two's complement of v into out; returns its length (1..8). */
uint32_t fnw_value_bigint_from_i64(int64_t v, uint8_t out[8]);
/* 0 and *out = the number if it fits an int64; -1 if it does not or n == 0. */
int fnw_value_bigint_to_i64(const uint8_t *bytes, uint32_t n, int64_t *out);

/* ---- deep operations (value.c) -------------------------------------------- */
/* 1 if a and b (both of type t) hold the same value: FLOAT/DOUBLE compare
 * bitwise, BIG_INT numerically, containers element by element in order. */
int fnw_value_equal(const fnw_type *t, const fnw_value *a, const fnw_value *b);
/* Copies src (of type t) into dst with every byte and item array in arena a,
 * so dst outlives the buffer src was decoded from. */
int fnw_value_copy(const fnw_type *t, const fnw_value *src, fnw_arena *a, fnw_value *dst, fnw_error *err);

#endif
