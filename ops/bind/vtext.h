/* ops/bind/vtext.h — one decoded field value written as text into a
 * request being built (a Redis argument, a URL, a header, a JSON body), with
 * the escaping that place needs. The template module (tmpl.h)
 * calls it for each placeholder; it has no notion of fields or options, so
 * its failures are short reasons the caller wraps with that context.
 *
 * Text of a value, by kind (the same in every escaping mode but JSON):
 *   STRING, BIG_DEC       its bytes (BIG_DEC is decimal text already)
 *   CHAR                  the UTF-8 of the UTF-16 unit (a lone surrogate
 *                         becomes U+FFFD)
 *   BOOLEAN               true / false
 *   BYTE SHORT INT LONG   decimal, '-' for negatives
 *   FLOAT DOUBLE          the shortest decimal that reads back to the same
 *                         number ("0.1", "1e+20", "-0"); NaN, Infinity and
 *                         -Infinity as Java spells them
 *   TIMESTAMP(p), TIMESTAMP_LTZ(p)  ISO-8601 with p fraction digits (3
 *                         when unset), as if in UTC; TIMESTAMP_LTZ ends in
 *                         'Z': 2024-01-31T12:00:00.123456Z (tstext.h)
 *   null                  nothing (the empty string)
 * Other kinds (ROW, MAP, arrays, dates, binary) have no text form: the
 * template compiler rejects them (fnw_vtext_renderable) before any data.
 *
 * Escaping modes (fnw_escape):
 *   RAW        the bytes unchanged (Redis arguments are binary-safe).
 *   URL_PATH   percent-encoding of every byte outside the RFC 3986
 *   URL_QUERY  unreserved set A-Z a-z 0-9 - . _ ~ (so '/', '?', '&', '=',
 *              '+', '%' and space are all encoded, "%20" for space); the two
 *              modes encode alike and exist so a caller says where it is.
 *   HEADER     the bytes unchanged, but a value holding CR, LF or NUL is
 *              refused (it would end the header and inject another).
 *   JSON       one JSON value: null; true/false; numbers as above except that
 *              NaN and the infinities become null (JSON has no spelling for
 *              them); STRING, CHAR, BIG_DEC and the timestamps as quoted strings with '"',
 *              '\' and control characters escaped (invalid UTF-8 is refused,
 *              not repaired); ROW as an object keyed by field name; arrays
 *              and LIST as arrays (PRIMITIVE_ARRAY<BYTE> as an array of
 *              numbers -128..127); MAP<STRING, _> as an object in entry order.
 * Writers only append to the caller's buffer: no allocation of their own.
 */
#ifndef FNW_VTEXT_H
#define FNW_VTEXT_H

#include "codecs/buf.h"
#include "codecs/type.h"
#include "codecs/value.h"

typedef enum fnw_escape {
    FNW_ESCAPE_RAW = 0,
    FNW_ESCAPE_URL_PATH,
    FNW_ESCAPE_URL_QUERY,
    FNW_ESCAPE_HEADER,
    FNW_ESCAPE_JSON,
} fnw_escape;

/* Name of a mode for messages ("raw", "URL path", ...). */
const char *fnw_vtext_escape_name(fnw_escape esc);

/* 1 if values of t can be written in mode esc (checked recursively for the
 * containers JSON allows). */
int fnw_vtext_renderable(const fnw_type *t, fnw_escape esc);

/* Appends v (of type t, which must be renderable in esc) to out. On failure
 * returns -1, sets *why to a static reason ("contains CR or LF", "is not
 * valid UTF-8", "does not fit the buffer") and leaves out->len where it was. */
int fnw_vtext_write(const fnw_type *t, const fnw_value *v, fnw_escape esc, fnw_buf *out, const char **why);

/* Appends bytes p[0..n) escaped for esc (literal text and values alike use
 * this; in JSON mode it writes them as a quoted string). Same failures. */
int fnw_vtext_write_bytes(const uint8_t *p, size_t n, fnw_escape esc, fnw_buf *out, const char **why);

/* Writes the shortest decimal that reads back to d (finite) into tmp (at
 * least 32 bytes, NUL-terminated); returns its length. */
size_t fnw_vtext_double(char *tmp, size_t cap, double d);


#endif
