/* codecs/type.h — a Flink DataStream type (the TypeInfo proto of
 * flink-fn-execution.proto) as a plain C tree that the serializers walk.
 *
 * Kinds use the TypeInfo.TypeName numbers, so a proto value maps 1:1.
 * Ownership: a type tree is built once per descriptor (not on the data path)
 * with malloc, owned by whoever built it, and released with fnw_type_free().
 * Once built, a tree is immutable: the serializers only read it, and skip
 * programs compiled from it (serializer.h) borrow it, so bundles on any
 * thread may share it.
 */
#ifndef FNW_TYPE_H
#define FNW_TYPE_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"

typedef enum fnw_kind {
    FNW_ROW = 0, FNW_STRING = 1, FNW_BYTE = 2, FNW_BOOLEAN = 3, FNW_SHORT = 4,
    FNW_INT = 5, FNW_LONG = 6, FNW_FLOAT = 7, FNW_DOUBLE = 8, FNW_CHAR = 9,
    FNW_BIG_INT = 10, FNW_BIG_DEC = 11, FNW_SQL_DATE = 12, FNW_SQL_TIME = 13,
    FNW_SQL_TIMESTAMP = 14, FNW_BASIC_ARRAY = 15, FNW_PRIMITIVE_ARRAY = 16,
    FNW_TUPLE = 17, FNW_LIST = 18, FNW_MAP = 19, FNW_PICKLED_BYTES = 20,
    FNW_OBJECT_ARRAY = 21, FNW_INSTANT = 22, FNW_AVRO = 23, FNW_LOCAL_DATE = 24,
    FNW_LOCAL_TIME = 25, FNW_LOCAL_DATETIME = 26,
    FNW_KIND_COUNT
} fnw_kind;

typedef struct fnw_type fnw_type;
struct fnw_type {
    fnw_kind kind;
    uint32_t nchildren;
    /* ROW, TUPLE: the fields; BASIC/PRIMITIVE/OBJECT_ARRAY, LIST: [element];
     * MAP: [key, value]; others: none. */
    fnw_type **children;
    char **names;             /* ROW: field names (never NULL; may be "") */
    char *avro_schema_json;   /* AVRO: the schema text from AvroTypeInfo */
    void *avro_schema;        /* AVRO: parsed schema (avro_schema_t) */
    void *avro_program;       /* AVRO: compiled datum walker (avro_datum.h) */
};

/* Deepest type tree fnw_type_from_proto accepts (and the serializers walk). */
#define FNW_TYPE_MAX_DEPTH 64

/* Builders (for tests and the proto conversion). A child is adopted when
 * fnw_type_add_child succeeds (on failure the caller still owns it). ROW
 * children take a field name (NULL = ""); other kinds ignore it. */
fnw_type *fnw_type_new(fnw_kind kind);
int fnw_type_add_child(fnw_type *t, fnw_type *child, const char *name, fnw_error *err);
int fnw_type_set_avro_schema(fnw_type *t, const char *json, fnw_error *err);
void fnw_type_free(fnw_type *t);

/* Deep copy (NULL if out of memory or t is NULL). */
fnw_type *fnw_type_clone(const fnw_type *t);

/* 1 if equal: kinds, children recursively, ROW field names and AVRO schemas
 * (Flink's RowTypeInfo equality includes the names). */
int fnw_type_equal(const fnw_type *a, const fnw_type *b);
/* Same, but ROW field names may differ (the byte format does not use them). */
int fnw_type_equal_ignoring_names(const fnw_type *a, const fnw_type *b);
/* Depth of the tree: 1 for a scalar. */
int fnw_type_depth(const fnw_type *t);
const char *fnw_kind_name(fnw_kind k);
/* Writes a readable form like "ROW<name STRING, n INT>" (truncated to n,
 * always NUL-terminated when n > 0); returns the length written. */
size_t fnw_type_format(const fnw_type *t, char *buf, size_t n);

/* From the protobuf-c TypeInfo (org.apache.flink.fn_execution.v1.TypeInfo),
 * declared as void* so this header needs no generated code; see typeinfo.c. */
int fnw_type_from_proto(const void *typeinfo, fnw_type **out, fnw_error *err);

#endif
