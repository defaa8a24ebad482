/* codecs/row.h — the two rows Flink wraps around every DataStream element:
 * input  Row(LONG timestamp, LONG watermark, data)  (JVM -> worker)
 * output Row(LONG timestamp, data)                  (worker -> JVM)
 * Each is a ROW in the serializer's format: a null mask byte (two row-kind
 * bits, then one null bit per field), then the fields that are not null.
 */
#ifndef FNW_ROW_H
#define FNW_ROW_H

#include <stddef.h>
#include <stdint.h>

#include <string.h>

#include "codecs/buf.h"
#include "codecs/bytes.h"
#include "codecs/error.h"
#include "codecs/ser.h"
#include "codecs/type.h"

typedef struct fnw_input_row {
    int64_t timestamp;   /* INT64_MIN when null */
    int64_t watermark;   /* INT64_MIN when null */
    const uint8_t *data; /* the data field's bytes inside the record; NULL if null */
    size_t len;
} fnw_input_row;

/* Splits one input record payload (exactly n bytes, without the varint
 * prefix): reads the mask and the two LONGs, validates the data field with
 * fnw_skip_program_run and data_skip (compiled from the data type), and fails if
 * bytes are missing or left over. */
int fnw_row_split_input_full(const fnw_skip_program *data_skip, const uint8_t *p, size_t n,
                             fnw_input_row *out, fnw_error *err);
/* The same, inline for the common record (no null field: mask, two LONGs,
 * the data); anything else, and every error, goes to the full version. */
static inline int fnw_row_split_input(const fnw_skip_program *data_skip, const uint8_t *p, size_t n,
                                      fnw_input_row *out, fnw_error *err)
{
    size_t used;
    if (n > 17 && (p[0] & 0x38) == 0 && fnw_skip_program_run(data_skip, p + 17, n - 17, &used, err) == 0 &&
        used == n - 17) {
        out->timestamp = (int64_t)fnw_load_be64(p + 1);
        out->watermark = (int64_t)fnw_load_be64(p + 9);
        out->data = p + 17;
        out->len = used;
        return 0;
    }
    return fnw_row_split_input_full(data_skip, p, n, out, err);
}

/* Appends an output record payload (no varint prefix): mask, timestamp,
 * then data's bytes as given (data NULL = null value). */
int fnw_row_put_output(fnw_buf *out, int64_t timestamp, const uint8_t *data, size_t len);

/* Size of the output payload fnw_row_put_output would write. */
static inline size_t fnw_row_output_size(size_t data_len, int data_null)
{
    return 1 + 8 + (data_null ? 0 : data_len);
}

/* Writes the output payload into q, which has fnw_row_output_size bytes. */
static inline void fnw_row_write_output(uint8_t *q, int64_t timestamp, const uint8_t *data, size_t len)
{
    q[0] = data ? 0x00 : 0x10; /* the data field's null bit */
    fnw_store_be64(q + 1, (uint64_t)timestamp);
    if (data && len)
        memcpy(q + 9, data, len);
}

/* Checks that a coder's raw type is the runner input row ROW(LONG, LONG, T)
 * (or the output row ROW(LONG, T)) and returns T (borrowed from the tree). */
int fnw_row_unwrap_input_type(const fnw_type *raw, const fnw_type **data_type, fnw_error *err);
int fnw_row_unwrap_output_type(const fnw_type *raw, const fnw_type **data_type, fnw_error *err);

#endif
