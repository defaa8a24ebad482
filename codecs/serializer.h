/* codecs/serializer.h — Flink's Java type serializers, byte for byte: decode,
 * skip and encode one value of a fnw_type (flink-protocol.md §4.4-4.5).
 *
 * All three are bounded by the input: a length field larger than what
 * remains fails with a message naming the type and the byte offset, before
 * anything is allocated. Nothing here does I/O.
 */
#ifndef FNW_SERIALIZER_H
#define FNW_SERIALIZER_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/arena.h"
#include "codecs/buf.h"
#include "codecs/error.h"
#include "codecs/type.h"
#include "codecs/value.h"

/* Most elements a LIST may claim when its element type takes zero bytes
 * (e.g. an empty TUPLE): the input cannot bound those, so this does. */
#define FNW_SER_MAX_EMPTY_ELEMENTS (1u << 20)

/* A type's skip program, compiled once from a finished type tree (when a
 * descriptor is planned, not on the data path) and read-only afterwards,
 * so any number of bundles may share it. It borrows t: free the plan
 * before the type. fnw_skip_plan_new returns NULL with a message if t is
 * NULL or memory runs out. */
typedef struct fnw_skip_plan fnw_skip_plan;
fnw_skip_plan *fnw_skip_plan_new(const fnw_type *t, fnw_error *err);
void fnw_skip_plan_free(fnw_skip_plan *pl);

/* Validates one encoded value of pl's type at p[0..n) and sets *used to its
 * length, without building it (the fast path for pass-through operations). */
int fnw_ser_skip(const fnw_skip_plan *pl, const uint8_t *p, size_t n, size_t *used, fnw_error *err);

/* The same answer, messages and *used from the recursive walk alone, without
 * the compiled program. For tests that check the two agree; use fnw_ser_skip. */
int fnw_ser_skip_generic(const fnw_type *t, const uint8_t *p, size_t n, size_t *used, fnw_error *err);

/* Decodes one value; strings/blobs point into p, containers come from a
 * (a may be NULL for types without containers). Accepts exactly what
 * fnw_ser_skip accepts. */
int fnw_ser_decode(const fnw_type *t, const uint8_t *p, size_t n, fnw_arena *a,
                   fnw_value *out, size_t *used, fnw_error *err);

/* Appends the encoding of v (which must match t) to out. On failure out is
 * left as it was. Nulls are written where the format has a null marker (ROW
 * fields, BASIC/OBJECT_ARRAY elements, MAP values) or a null encoding of its
 * own (BIG_INT, INSTANT, LOCAL_DATE/TIME/DATETIME); elsewhere they fail. */
int fnw_ser_encode(const fnw_type *t, const fnw_value *v, fnw_buf *out, fnw_error *err);

#endif
