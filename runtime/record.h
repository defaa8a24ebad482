/* runtime/record.h — one element as it moves between the data plane and the
 * operations of a chain: the Flink timestamp and watermark it arrived with,
 * and the Flink-serialized bytes of its data field.
 *
 * Ownership: a record never owns its bytes. Whoever hands a record to a
 * function guarantees the bytes for the duration of that call only; anyone
 * who keeps them longer copies them.
 */
#ifndef FNW_RECORD_H
#define FNW_RECORD_H

#include <stdint.h>

typedef struct fnw_record {
    int64_t timestamp;      /* StreamRecord timestamp; INT64_MIN when it has none */
    int64_t watermark;      /* operator watermark when the record arrived */
    const uint8_t *data;    /* Flink bytes of the data value; NULL when the value is null */
    uint32_t len;           /* byte length of data */
} fnw_record;

#endif
