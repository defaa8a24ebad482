/* codecs/avro_datum.h — delimits one Avro binary datum (which Flink writes
 * without a length prefix) by walking it with its schema.
 *
 * The schema (parsed by libavro) is compiled once into a flat plan of nodes
 * so the walk makes no libavro calls and never allocates. The walk checks
 * every length, count, union branch and enum index against the schema and
 * the remaining bytes; recursive schemas are bounded by FNW_AVRO_MAX_DEPTH.
 * A plan is immutable after compilation and owned by its fnw_type.
 */
#ifndef FNW_AVRO_DATUM_H
#define FNW_AVRO_DATUM_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"

#define FNW_AVRO_MAX_DEPTH 256
/* Most items of a zero-width Avro type (null, empty record) one array or
 * map block may claim (they cost no bytes, so the input cannot bound them). */
#define FNW_AVRO_MAX_EMPTY_ITEMS (1u << 20)

typedef struct fnw_avro_plan fnw_avro_plan;

/* schema is an avro_schema_t; the plan does not keep a reference to it. */
int fnw_avro_plan_compile(void *schema, fnw_avro_plan **out, fnw_error *err);
void fnw_avro_plan_free(fnw_avro_plan *pl);
/* Fewest bytes a datum can take (0 means every datum takes 0 bytes). */
uint32_t fnw_avro_plan_min_size(const fnw_avro_plan *pl);

/* Walks one datum starting at p (end = end of input; base = where offsets in
 * error messages count from). Returns the first byte after the datum, or
 * NULL with err set. */
const uint8_t *fnw_avro_walk(const fnw_avro_plan *pl, const uint8_t *p, const uint8_t *end,
                             const uint8_t *base, fnw_error *err);
/* Convenience: the datum's length in *used. */
int fnw_avro_skip(const fnw_avro_plan *pl, const uint8_t *p, size_t n, size_t *used, fnw_error *err);

#endif
