/* ops/kserve/tensor/dtype.h — the tensor datatypes of the Open Inference
 * Protocol (KServe v2 / Triton) and how one element of each is read and
 * written: its wire name, its byte size in raw contents, which Flink kinds
 * can carry it, and the checked conversions between an element's wire form
 * and an fnw_value.
 *
 * Raw contents are little-endian, elements packed without padding; BYTES
 * elements are a 4-byte little-endian length and that many bytes. FP16 and
 * BF16 have no Flink kind: their elements stay raw bytes (two per element)
 * in a PRIMITIVE_ARRAY<BYTE> field.
 *
 * Numbers convert with range checks: an integer that does not fit the
 * target (a UINT64 above LONG's range, -1 into UINT8, 300 into BYTE) fails
 * with a message naming the value and the datatype; floats convert to the
 * float kinds (FP64 into FLOAT rounds, as Java's cast does).
 */
#ifndef FNW_DTYPE_H
#define FNW_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"
#include "fnworker.h"

typedef enum fnw_dtype {
    FNW_DT_BOOL,
    FNW_DT_INT8,
    FNW_DT_INT16,
    FNW_DT_INT32,
    FNW_DT_INT64,
    FNW_DT_UINT8,
    FNW_DT_UINT16,
    FNW_DT_UINT32,
    FNW_DT_UINT64,
    FNW_DT_FP16,
    FNW_DT_BF16,
    FNW_DT_FP32,
    FNW_DT_FP64,
    FNW_DT_BYTES,
    FNW_DT_COUNT
} fnw_dtype;

/* "BOOL", "INT8", ...; the protocol's spelling. */
const char *fnw_dtype_name(fnw_dtype d);
/* The datatype spelled by the len bytes at s (exact, upper case); -1 if none. */
int fnw_dtype_parse(const char *s, size_t len);
/* Bytes per element in raw contents; 0 for BYTES (variable). */
size_t fnw_dtype_size(fnw_dtype d);
/* 1 when elements are raw bytes only (FP16, BF16). */
int fnw_dtype_is_raw_only(fnw_dtype d);

/* 1 when a value of kind k can carry one element of d: BOOL in BOOLEAN;
 * the integer datatypes in BYTE, SHORT, INT, LONG; FP32 and FP64 in FLOAT
 * and DOUBLE, and from the integer kinds too when to_wire (row to tensor);
 * BYTES in STRING or PRIMITIVE_ARRAY (of BYTE: the caller checks the
 * element). FP16 and BF16 in no kind (they stay raw bytes). */
int fnw_dtype_fits_kind(fnw_dtype d, fnw_kind k, int to_wire);
/* The datatype a field of kind k maps to when the option gives none: BOOLEAN
 * BOOL, BYTE INT8, SHORT INT16, INT INT32, LONG INT64, FLOAT FP32, DOUBLE
 * FP64, STRING BYTES; -1 for any other kind. */
int fnw_dtype_default_for(fnw_kind k);

/* One element as the wire carries it, before it becomes a value. */
typedef struct fnw_elem {
    enum { FNW_ELEM_INT, FNW_ELEM_UINT, FNW_ELEM_FLOAT, FNW_ELEM_BYTES } tag;
    union {
        int64_t i;
        uint64_t u;
        double d;
        struct {
            const uint8_t *p;
            uint32_t n;
        } b;
    } v;
} fnw_elem;

/* Writes value v (one element, of a kind fnw_dtype_fits_kind accepted) as d
 * into out (fnw_dtype_size(d) bytes; not for BYTES). -1 when the value is
 * out of d's range. */
int fnw_dtype_write(fnw_dtype d, const fnw_value *v, uint8_t *out, fnw_error *err);
/* The fixed-size element of d at p (little-endian). */
fnw_elem fnw_dtype_read(fnw_dtype d, const uint8_t *p);
/* Element e of datatype d as a value of kind k (BYTES elements borrow e's
 * bytes). -1 when it is out of k's range. */
int fnw_dtype_to_value(fnw_dtype d, const fnw_elem *e, fnw_kind k, fnw_value *out, fnw_error *err);

#endif
