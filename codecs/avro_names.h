/* codecs/avro_names.h — checks that an Avro schema (JSON text) defines each
 * named type once, before the schema is handed to libavro (which, given a
 * second record, enum or fixed of one full name, fails or accepts it but
 * leaks the first definition).
 *
 * Full names follow the Avro specification: a name containing a dot is the
 * full name; otherwise it is qualified by the type's "namespace" attribute,
 * or, without one, by the namespace of the nearest enclosing named type (an
 * empty namespace means none). Only the names, the nesting depth and the
 * number of fields per record (FNW_TYPE_MAX_FIELDS, as for a Flink row) are
 * checked here; everything else about the schema is left to libavro.
 */
#ifndef FNW_AVRO_NAMES_H
#define FNW_AVRO_NAMES_H

#include <stddef.h>

#include "codecs/error.h"

/* Deepest nesting of schemas (records, unions, arrays, maps) accepted. */
#define FNW_AVRO_NAMES_MAX_DEPTH 256

/* 0 if json parses, defines no full name twice and stays within the limits;
 * else -1 with a message naming the duplicate or the limit (or why the text
 * could not be read). */
int fnw_avro_names_check(const char *json, size_t len, fnw_error *err);

#endif
