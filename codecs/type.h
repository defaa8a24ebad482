/* codecs/type.h — a Flink DataStream type (the TypeInfo proto of
 * flink-fn-execution.proto) as a plain C tree that the serializers walk.
 * Operations see fnw_type as opaque, through the read accessors of
 * fnworker.h (type_access.c); this header gives the tree's fields to the
 * code inside the tree, with the builders and the proto conversion.
 *
 * Kinds use the TypeInfo.TypeName numbers, so a proto value maps 1:1.
 * Ownership: a type tree is built once per descriptor (not on the data path)
 * with malloc, owned by whoever built it, and released with fnw_type_free().
 * Once built, a tree is immutable: the serializers only read it, and skip
 * programs compiled from it (ser.h) borrow it, so bundles on any
 * thread may share it.
 */
#ifndef FNW_TYPE_H
#define FNW_TYPE_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"
#include "fnworker.h"

struct fnw_type {
    fnw_kind kind;
    uint32_t nchildren;
    uint32_t cap; /* slots allocated in children (and names) */
    /* ROW, TUPLE: the fields; BASIC/PRIMITIVE/OBJECT_ARRAY, LIST: [element];
     * MAP: [key, value]; others: none. */
    fnw_type **children;
    char **names;           /* ROW: field names (never NULL; may be "") */
    char *avro_schema_json; /* AVRO: the schema text from AvroTypeInfo */
    void *avro_schema;      /* AVRO: parsed schema (avro_schema_t) */
    void *avro_program;     /* AVRO: compiled datum walker (avro_program.h) */
    /* The Table (SQL) parameters (fnw_type_precision in fnworker.h): 0 =
     * unset, the DataStream meaning. SQL_TIMESTAMP, LOCAL_ZONED_TIMESTAMP:
     * precision 0..9; BIG_DEC: precision 1..38, scale 0..precision. */
    int32_t precision, scale;
};

/* Most digits of a DECIMAL (Flink's DecimalType.MAX_PRECISION). */
#define FNW_TYPE_MAX_DECIMAL_PRECISION 38
/* Most fractional second digits of a TIMESTAMP / TIMESTAMP_LTZ. */
#define FNW_TYPE_MAX_TIMESTAMP_PRECISION 9
/* Whether a SQL_TIMESTAMP / LOCAL_ZONED_TIMESTAMP of t takes 12 bytes (ms
 * then nanos of the ms) rather than 8 (Flink's TimestampData.isCompact). */
static inline int fnw_type_timestamp_has_nanos(const fnw_type *t)
{
    return (t->kind == FNW_SQL_TIMESTAMP || t->kind == FNW_LOCAL_ZONED_TIMESTAMP) && t->precision > 3;
}

/* Deepest type tree fnw_typeinfo_to_type accepts (and the serializers walk). */
#define FNW_TYPE_MAX_DEPTH 64

/* Most fields of one ROW or TUPLE fnw_typeinfo_to_type accepts: a real Flink
 * row has tens to hundreds; the cap keeps a hostile descriptor from making
 * the worker build millions of type nodes. */
#define FNW_TYPE_MAX_FIELDS 65535

/* Builders (for tests and the proto conversion). A child is adopted when
 * fnw_type_add_child succeeds (on failure the caller still owns it). ROW
 * children take a field name (NULL = ""); other kinds ignore it. */
fnw_type *fnw_type_new(fnw_kind kind);
int fnw_type_add_child(fnw_type *t, fnw_type *child, const char *name, fnw_error *err);
int fnw_type_set_avro_schema(fnw_type *t, const char *json, fnw_error *err);
/* Sets the Table parameters: SQL_TIMESTAMP / LOCAL_ZONED_TIMESTAMP take a
 * precision 0..9 (scale 0); BIG_DEC a precision 1..38 and a scale
 * 0..precision (or both 0: unset). Fails naming the type otherwise. */
int fnw_type_set_precision(fnw_type *t, int32_t precision, int32_t scale, fnw_error *err);
void fnw_type_free(fnw_type *t);

/* Deep copy (NULL if out of memory or t is NULL). */
fnw_type *fnw_type_clone(const fnw_type *t);

/* fnw_type_equal (fnworker.h), but ROW field names may differ (the byte
 * format does not use them). */
int fnw_type_equal_ignoring_names(const fnw_type *a, const fnw_type *b);
/* Depth of the tree: 1 for a scalar. */
int fnw_type_depth(const fnw_type *t);

/* From the protobuf-c TypeInfo (org.apache.flink.fn_execution.v1.TypeInfo),
 * declared as void* so this header needs no generated code; see typeinfo.c. */
int fnw_typeinfo_to_type(const void *typeinfo, fnw_type **out, fnw_error *err);

#endif
