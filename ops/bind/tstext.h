/* ops/bind/tstext.h — the text form of a Table TIMESTAMP / TIMESTAMP_LTZ
 * value (SQL_TIMESTAMP / LOCAL_ZONED_TIMESTAMP: epoch ms + nanos of the ms,
 * fnworker.h), as the bindings read it from and write it into services:
 * ISO-8601, "YYYY-MM-DDTHH:MM:SS[.fraction]", a TIMESTAMP as if in UTC, a
 * TIMESTAMP_LTZ (an instant) with a trailing 'Z'.
 *
 * Reading takes a space instead of the 'T', 1 to 9 fraction digits, and an
 * optional 'Z' on either kind; years 0000..9999 (Flink's TIMESTAMP range).
 * Fraction digits beyond the type's precision are dropped (TIMESTAMP(3)
 * keeps milliseconds; an unset precision, a DataStream SQL_TIMESTAMP, is 3).
 * Writing gives as many fraction digits as the precision (3 when unset).
 * Pure: no allocation.
 */
#ifndef FNW_TSTEXT_H
#define FNW_TSTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/type.h"

/* Room fnw_tstext_format needs (with the NUL). */
#define FNW_TSTEXT_MAX 48

/* p[0..n) as a timestamp of type t: 0 with *ms and *nanos (of the ms,
 * 0..999999), or -1 when it is not such text. */
int fnw_tstext_parse(const fnw_type *t, const char *p, size_t n, int64_t *ms, uint32_t *nanos);

/* The text of ms + nanos (of the ms) for type t into out (>= FNW_TSTEXT_MAX
 * bytes, NUL-terminated); returns its length. */
size_t fnw_tstext_format(const fnw_type *t, int64_t ms, uint32_t nanos, char *out);

#endif
