/* runtime/record.h — one element as it moves between the data plane and the
 * operations of a chain. fnw_record is public (fnworker.h): the Flink
 * timestamp and watermark it arrived with, and the Flink-serialized bytes of
 * its data field.
 *
 * Ownership: a record never owns its bytes. Whoever hands a record to a
 * function guarantees the bytes for the duration of that call only; anyone
 * who keeps them longer copies them.
 */
#ifndef FNW_RECORD_H
#define FNW_RECORD_H

#include "fnworker.h"

#endif
