/* codecs/ser.h — Flink's Java type serializers, byte for byte: skip
 * (validate and measure), decode and encode one value of an fnw_type, in the
 * format Flink's DataStream serializers write (big-endian fixed widths,
 * int32 lengths and counts, a null mask before a ROW's fields).
 *
 * The unit's files: ser_skip.c (the generic skip), skip_program.c (the compiled
 * skip program and fnw_skip_program_run), ser_field.c (one field of a ROW
 * value, located without decoding), ser_decode.c, ser_encode.c, and what they share,
 * ser_internal.h and ser.c.
 *
 * All three are bounded by the input: a length field larger than what
 * remains fails with a message naming the type and the byte offset, before
 * anything is allocated. Nothing here does I/O.
 */
#ifndef FNW_SER_H
#define FNW_SER_H

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
 * bundle descriptor is read, not on the data path) and read-only afterwards,
 * so any number of bundles may share it. It borrows t: free the program
 * before the type. fnw_skip_program_new returns NULL with a message if t is
 * NULL or memory runs out. */
typedef struct fnw_skip_program fnw_skip_program;
fnw_skip_program *fnw_skip_program_new(const fnw_type *t, fnw_error *err);
void fnw_skip_program_free(fnw_skip_program *sp);

/* Validates one encoded value of sp's type at p[0..n) and sets *used to its
 * length, without building it (the fast path for pass-through operations). */
int fnw_skip_program_run(const fnw_skip_program *sp, const uint8_t *p, size_t n, size_t *used, fnw_error *err);

/* One field of a ROW type, compiled once like a skip program (from a
 * finished type tree, never on the data path; it borrows row): finds that
 * field's bytes inside an encoded value of the row without decoding it and
 * without allocating. fnw_ser_field_new fails (NULL, with a message) if row
 * is not a ROW with a field at index, or memory runs out. */
typedef struct fnw_ser_field fnw_ser_field;
fnw_ser_field *fnw_ser_field_new(const fnw_type *row, uint32_t index, fnw_error *err);
void fnw_ser_field_free(fnw_ser_field *f);
/* The field's type (borrowed from the row). */
const fnw_type *fnw_ser_field_type(const fnw_ser_field *f);
/* p[0..n) is exactly one value of the row, as fnw_skip_program_run accepted
 * it (only the fields before this one are walked again; the last field's
 * bytes are the rest): *fp and *flen are the field's bytes inside p, *fp
 * NULL when the field is null. Fails with a message on bytes that are not
 * such a value. */
int fnw_ser_field_get(const fnw_ser_field *f, const uint8_t *p, size_t n, const uint8_t **fp, size_t *flen,
                      fnw_error *err);

/* The same answer, messages and *used from the recursive walk alone, without
 * the compiled program. For tests that check the two agree; use fnw_skip_program_run. */
int fnw_ser_skip_generic(const fnw_type *t, const uint8_t *p, size_t n, size_t *used, fnw_error *err);

/* Decodes one value; strings/blobs point into p, containers come from a
 * (a may be NULL for types without containers). Accepts exactly what
 * fnw_skip_program_run accepts, except a value whose decoded form would take more
 * than fnw_ser_decode_budget(n) bytes of the arena: zero-width elements
 * (e.g. LIST<LIST<TUPLE<>>>) cost no input bytes, so without this bound 164
 * input bytes could cost a gigabyte. Such a value fails with "arena limit
 * reached", naming the budget. */
#define FNW_SER_DECODE_BYTES_PER_INPUT_BYTE 256u
static inline size_t fnw_ser_decode_budget(size_t n)
{
    size_t per = FNW_SER_DECODE_BYTES_PER_INPUT_BYTE;
    return n > (SIZE_MAX - 65536) / per ? SIZE_MAX : 65536 + n * per;
}
int fnw_ser_decode(const fnw_type *t, const uint8_t *p, size_t n, fnw_arena *a, fnw_value *out, size_t *used,
                   fnw_error *err);

/* Appends the encoding of v (which must match t) to out. On failure out is
 * left as it was. Nulls are written where the format has a null marker (ROW
 * fields, BASIC/OBJECT_ARRAY elements, MAP values) or a null encoding of its
 * own (BIG_INT, INSTANT, LOCAL_DATE/TIME/DATETIME); elsewhere they fail.
 * A DECIMAL(p, s) (BIG_DEC with a precision) is written rounded HALF_UP to
 * s digits after the point, and fails when it needs more than p digits
 * (fnw_decimal_quantize); a TIMESTAMP / TIMESTAMP_LTZ of precision <= 3
 * drops the value's nanos, one of precision 4..9 fails on nanos above
 * 999999. */
int fnw_ser_encode(const fnw_type *t, const fnw_value *v, fnw_buf *out, fnw_error *err);

#endif
