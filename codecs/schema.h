/* codecs/schema.h — fnw_type from Flink's Table (SQL) row description: the
 * Schema message of flink-fn-execution.proto (Schema.Field,
 * Schema.FieldType), which the Table runner's coders (FlattenRowCoder,
 * RowCoder, and the field coders of PyFlink's coders.py from_proto) use.
 *
 * A Table type maps onto the DataStream kind whose bytes it shares:
 *   TINYINT BYTE, SMALLINT SHORT, INT INT, BIGINT LONG, BOOLEAN, FLOAT,
 *   DOUBLE, BINARY/VARBINARY PRIMITIVE_ARRAY<BYTE>, CHAR/VARCHAR STRING,
 *   DATE SQL_DATE, TIME SQL_TIME, TIMESTAMP(p) SQL_TIMESTAMP precision p,
 *   LOCAL_ZONED_TIMESTAMP(p) LOCAL_ZONED_TIMESTAMP precision p,
 *   DECIMAL(p, s) BIG_DEC precision p scale s, ROW ROW (field names kept),
 *   BASIC_ARRAY BASIC_ARRAY, MAP MAP.
 * MULTISET, ZONED_TIMESTAMP and NULL are refused (PyFlink has no coder for
 * them either), with an error naming the type and the field path.
 * Declared with void* like fnw_typeinfo_to_type (type.h), so this header
 * needs no generated code. Not on the data path: run once per descriptor.
 */
#ifndef FNW_SCHEMA_H
#define FNW_SCHEMA_H

#include "codecs/error.h"
#include "codecs/type.h"

/* A protobuf-c Schema (org.apache.flink.fn_execution.v1.Schema) -> a ROW
 * with one child per field, named as the field. *out is the caller's to
 * fnw_type_free; NULL on failure. The limits of type.h apply
 * (FNW_TYPE_MAX_DEPTH, FNW_TYPE_MAX_FIELDS). */
int fnw_schema_to_type(const void *schema, fnw_type **out, fnw_error *err);

/* A protobuf-c Schema.FieldType -> its fnw_type (the same mapping). */
int fnw_schema_field_type_to_type(const void *field_type, fnw_type **out, fnw_error *err);

#endif
