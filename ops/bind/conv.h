/* ops/bind/conv.h — turning a service's answer (a JSON value, or a
 * Redis-style reply, reply.h) into an fnw_value of the output field's
 * type, with explicit, checked rules. Every byte and item array of the result
 * comes from the caller's fnw_arena; nothing else is allocated.
 *
 * Target types (fnw_conv_check_type verifies them once, at open): STRING,
 * BYTE, SHORT, INT, LONG, FLOAT, DOUBLE, BOOLEAN, the Table types DECIMAL
 * (BIG_DEC), TIMESTAMP (SQL_TIMESTAMP) and TIMESTAMP_LTZ
 * (LOCAL_ZONED_TIMESTAMP); BASIC_ARRAY, OBJECT_ARRAY
 * and LIST of targets; PRIMITIVE_ARRAY of BYTE, SHORT, INT, LONG, FLOAT,
 * DOUBLE or BOOLEAN; ROW of targets; MAP<STRING, target>.
 *
 * From JSON (strict: JSON carries types, so they are honoured):
 *   null            a null value of any type where the format allows nulls
 *                   (the result itself, ROW fields, BASIC/OBJECT_ARRAY
 *                   elements, MAP values); inside LIST and PRIMITIVE_ARRAY
 *                   elements and as MAP keys it fails
 *   STRING          a JSON string as its UTF-8 bytes; any other JSON value
 *                   as its compact JSON text (so a nested object can be kept
 *                   whole: {"a":1} -> the string {"a":1})
 *   BYTE..LONG      a JSON integer in the type's range, or a JSON real that
 *                   is integral and in range (2.0 -> 2, 1e3 -> 1000); not
 *                   strings, not booleans
 *   FLOAT           any JSON number whose magnitude is at most FLT_MAX
 *                   (precision is rounded, range is checked)
 *   DOUBLE          any JSON number
 *   BOOLEAN         true / false only
 *   DECIMAL         a JSON number (a real by its shortest text: 0.1 -> "0.1")
 *                   or string in Java's BigDecimal grammar ("12.5", "1E+3");
 *                   with a scale, rounded HALF_UP to it (1.25 -> 1.3 at
 *                   scale 1), failing when it then needs more digits than
 *                   the precision
 *   TIMESTAMP, TIMESTAMP_LTZ  a JSON integer (epoch milliseconds) or ISO-8601
 *                   text "2024-01-31T12:00:00.123456" (' ' for 'T' and a
 *                   trailing 'Z' allowed; years 0000-9999); fraction digits
 *                   beyond the precision dropped (ops/bind/tstext.h)
 *   arrays, LIST    a JSON array, element by element
 *   PRIMITIVE_ARRAY<BYTE>  a JSON array of integers -128..127 (as BYTE)
 *   ROW             a JSON object, field by field name; a missing member is
 *                   a null field; members the ROW does not have are ignored
 *   MAP<STRING,_>   a JSON object, members in document order
 * From a Redis reply (lenient for strings: Redis stores everything as
 * strings, so numeric text converts):
 *   NIL             null, as for JSON null
 *   STRING          STRING: the bytes as they are (binary-safe, not checked
 *                   as UTF-8); BYTE..LONG: optional '-' then decimal digits,
 *                   nothing else (no spaces, no '+'), in range; FLOAT,
 *                   DOUBLE: decimal notation (e.g. "1.5", "-2e-3") or
 *                   inf/-inf/+inf (any case) as Redis writes infinities,
 *                   at most 63 bytes, FLOAT range-checked; never nan, hex
 *                   or a literal too large for a double (1e999);
 *                   BOOLEAN: "1"/"true" and "0"/"false"
 *                   DECIMAL, TIMESTAMP, TIMESTAMP_LTZ: the text as from JSON
 *   INTEGER         BYTE..LONG in range; FLOAT, DOUBLE; BOOLEAN from 0/1
 *                   only; STRING as decimal text;
 *                   DECIMAL, TIMESTAMP, TIMESTAMP_LTZ as from a JSON integer
 *   DOUBLE          FLOAT (range-checked), DOUBLE; BYTE..LONG when integral
 *                   and in range; STRING as the shortest decimal text;
 *                   DECIMAL as from a JSON real
 *   BOOL            BOOLEAN; STRING as true/false
 *   ARRAY           arrays and LIST element by element; ROW by position
 *                   (HMGET: as many elements as fields); MAP<STRING,_> from
 *                   key, value, key, value... (HGETALL), an even count,
 *                   keys being strings or numbers (never nil or arrays)
 * Any other pairing fails. A failure names the field (with the path below
 * it, e.g. 'user.tags[2]'), an excerpt of the value and the target type.
 * Excerpts stop after 60 characters ("..." marks the cut): strings are
 * quoted with '"', '\' and non-printable bytes escaped (\xHH); JSON objects
 * and arrays are shown as compact ASCII JSON text; Redis arrays by length.
 */
#ifndef FNW_CONV_H
#define FNW_CONV_H

#include <jansson.h>

#include "codecs/arena.h"
#include "codecs/buf.h"
#include "codecs/error.h"
#include "codecs/type.h"
#include "codecs/value.h"
#include "ops/bind/reply.h"

/* 0 if values can be converted into t (see the list above); field names the
 * output field in the message. */
int fnw_conv_check_type(const fnw_type *t, const char *field, fnw_error *err);

/* Converts j (NULL is taken as JSON null) into *out, a value of type t,
 * which must have passed fnw_conv_check_type (the per-element functions do
 * not walk the type again). */
int fnw_conv_json(const fnw_type *t, const json_t *j, const char *field, fnw_arena *a, fnw_value *out,
                  fnw_error *err);

/* on_failure DEFAULT's fallback_json (runtime/spec.h fnw_json_encode_fn):
 * JSON text -> the bytes of a value of t (Flink's serialization), by the
 * rules above, at open; a ROW's members must name fields of the row.
 * *is_null for JSON null. */
int fnw_conv_json_encode(const fnw_type *t, const char *json, fnw_buf *out, int *is_null, fnw_error *err);

/* Converts reply r into *out, a value of type t (checked as above). */
int fnw_conv_reply(const fnw_type *t, const fnw_reply *r, const char *field, fnw_arena *a, fnw_value *out,
                   fnw_error *err);

#endif
