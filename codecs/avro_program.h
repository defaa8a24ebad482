/* codecs/avro_program.h — delimits one AVRO value by walking it with its
 * schema. Flink's AvroSerializer writes a GenericRecord field with no length
 * prefix, in Flink's own encoding (its DataOutputEncoder), which is not Avro
 * binary: no zigzag varints anywhere.
 *
 *   null                  nothing
 *   boolean               1 byte
 *   int                   4 bytes, big-endian two's complement
 *   long                  8 bytes, big-endian
 *   float, double         IEEE 754, big-endian, 4 and 8 bytes
 *   enum, union           the symbol or branch index as a 4-byte big-endian int
 *   bytes, string         4-byte big-endian length, then that many bytes
 *   fixed                 its size in raw bytes
 *   record                its fields in schema order
 *   array, map            blocks: an item count as an unsigned base-128
 *                         varint (7 bits a byte, low group first, high bit
 *                         set on every byte but the last; not zigzag), that
 *                         many items (a map item is a string key, then the
 *                         value), and a count of 0 (one 0x00 byte) at the end.
 *                         Flink writes one block, or none when empty (so an
 *                         empty one is the single 0x00); readers accept more.
 *
 * The schema (parsed by libavro) is compiled once into a flat program of nodes
 * so the walk makes no libavro calls and never allocates. The walk checks
 * every length, count, union branch and enum index against the schema and
 * the remaining bytes; recursive schemas are bounded by FNW_AVRO_MAX_DEPTH.
 * A program is immutable after compilation and owned by its fnw_type.
 */
#ifndef FNW_AVRO_PROGRAM_H
#define FNW_AVRO_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"

#define FNW_AVRO_MAX_DEPTH 256
/* Most items of a zero-width Avro type (null, empty record) one array or
 * map block may claim (they cost no bytes, so the input cannot bound them). */
#define FNW_AVRO_MAX_EMPTY_ITEMS (1u << 20)

typedef struct fnw_avro_program fnw_avro_program;

/* schema is an avro_schema_t; the program does not keep a reference to it.
 * NULL with a message if the schema is missing, unsupported or memory runs out. */
fnw_avro_program *fnw_avro_program_new(void *schema, fnw_error *err);
void fnw_avro_program_free(fnw_avro_program *pl);
/* Fewest bytes a datum can take (0 means every datum takes 0 bytes). */
uint32_t fnw_avro_program_min_size(const fnw_avro_program *pl);

/* Walks one datum starting at p (end = end of input; base = where offsets in
 * error messages count from). Returns the first byte after the datum, or
 * NULL with err set. */
const uint8_t *fnw_avro_program_walk(const fnw_avro_program *pl, const uint8_t *p, const uint8_t *end,
                                     const uint8_t *base, fnw_error *err);
/* Convenience: the datum's length in *used. */
int fnw_avro_program_skip(const fnw_avro_program *pl, const uint8_t *p, size_t n, size_t *used,
                          fnw_error *err);

#endif
