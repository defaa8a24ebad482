/* codecs/schema.c — fnw_type from Flink's Table Schema proto (see
 * schema.h): the field coders PyFlink's coders.py from_proto builds, as the
 * DataStream kinds whose bytes they share. Rejects what from_proto rejects
 * (and the FieldTypes that lack the type_info their type needs), so a bad
 * descriptor fails when it is registered rather than on the first row. */
#include "codecs/schema.h"

#include "org/apache/flink/fn_execution/v1/flink-fn-execution.pb-c.h"

typedef Org__Apache__Flink__FnExecution__V1__Schema pb_schema;
typedef Org__Apache__Flink__FnExecution__V1__Schema__FieldType pb_field_type;
typedef Org__Apache__Flink__FnExecution__V1__Schema__Field pb_field;

#define SN(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__SCHEMA__TYPE_NAME__##x
#define FT(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__SCHEMA__FIELD_TYPE__TYPE_INFO_##x

static int convert(const pb_field_type *ft, int depth, fnw_type **out, fnw_error *err);

/* Messages name the path to the failing type ("field 'a': MAP value:
 * ..."), its first PATH_LEVELS steps and "..." for the rest, so that the
 * reason still fits the message when the type is deep. */
#define PATH_LEVELS 8
#define PATH(depth, ...) \
    ((depth) <= PATH_LEVELS       ? fnw_error_prefix(err, __VA_ARGS__) \
     : (depth) == PATH_LEVELS + 1 ? fnw_error_prefix(err, "...") \
                                  : -1)

/* The Schema.TypeName's own spelling, for messages. */
static const char *type_name(int n)
{
    static const char *const names[] = {
        "ROW",
        "TINYINT",
        "SMALLINT",
        "INT",
        "BIGINT",
        "DECIMAL",
        "FLOAT",
        "DOUBLE",
        "DATE",
        "TIME",
        "TIMESTAMP",
        "BOOLEAN",
        "BINARY",
        "VARBINARY",
        "CHAR",
        "VARCHAR",
        "BASIC_ARRAY",
        "MAP",
        "MULTISET",
        "LOCAL_ZONED_TIMESTAMP",
        "ZONED_TIMESTAMP",
        "NULL",
    };
    return n >= 0 && n < (int)(sizeof names / sizeof *names) ? names[n] : "UNKNOWN";
}

static int adopt(fnw_type *t, const pb_field_type *child_ft, const char *name, int depth, fnw_error *err)
{
    fnw_type *child = NULL;
    if (convert(child_ft, depth + 1, &child, err) < 0)
        return -1;
    if (fnw_type_add_child(t, child, name, err) < 0) {
        fnw_type_free(child);
        return -1;
    }
    return 0;
}

/* The fields of a Schema as the children of ROW t, named. */
static int add_fields(fnw_type *t, const pb_schema *s, int depth, fnw_error *err)
{
    if (s->n_fields > FNW_TYPE_MAX_FIELDS)
        return fnw_error_set(err, "ROW type has %zu fields; fnworker accepts at most %d fields per ROW",
                             s->n_fields, FNW_TYPE_MAX_FIELDS);
    for (size_t i = 0; i < s->n_fields; i++) {
        const pb_field *f = s->fields[i];
        const char *name = f && f->name ? f->name : "";
        if (!f || !f->type)
            return fnw_error_set(err, "field %zu '%s' has no type", i, name);
        if (adopt(t, f->type, name, depth, err) < 0)
            return PATH(depth, "field '%s'", name);
    }
    return 0;
}

/* A type_info the type cannot do without: NULL with a message when the
 * oneof holds something else or nothing. */
static int need_info(const pb_field_type *ft, int which, const void *info, const char *what, fnw_error *err)
{
    if ((int)ft->type_info_case == which && info)
        return 0;
    return fnw_error_set(err, "%s type without %s", type_name((int)ft->type_name), what);
}

static int convert_parts(fnw_type *t, const pb_field_type *ft, int depth, fnw_error *err)
{
    switch ((int)ft->type_name) {
    case SN(ROW):
        if (need_info(ft, FT(ROW_SCHEMA), ft->row_schema, "row_schema", err) < 0)
            return -1;
        return add_fields(t, ft->row_schema, depth, err);
    case SN(BASIC_ARRAY):
        if (need_info(ft, FT(COLLECTION_ELEMENT_TYPE), ft->collection_element_type, "collection_element_type",
                      err) < 0)
            return -1;
        if (adopt(t, ft->collection_element_type, NULL, depth, err) < 0)
            return PATH(depth, "BASIC_ARRAY element");
        return 0;
    case SN(MAP):
        if (need_info(ft, FT(MAP_INFO), ft->map_info, "map_info", err) < 0)
            return -1;
        if (!ft->map_info->key_type || !ft->map_info->value_type)
            return fnw_error_set(err, "MAP type without %s",
                                 ft->map_info->key_type ? "value_type" : "key_type");
        if (adopt(t, ft->map_info->key_type, NULL, depth, err) < 0)
            return PATH(depth, "MAP key");
        if (adopt(t, ft->map_info->value_type, NULL, depth, err) < 0)
            return PATH(depth, "MAP value");
        return 0;
    case SN(BINARY):
    case SN(VARBINARY): {
        /* BinaryCoder: the bytes of DataStream's PRIMITIVE_ARRAY<BYTE> */
        fnw_type *b = fnw_type_new(FNW_BYTE);
        if (!b)
            return fnw_error_set(err, "out of memory building a type");
        if (fnw_type_add_child(t, b, NULL, err) < 0) {
            fnw_type_free(b);
            return -1;
        }
        return 0;
    }
    case SN(DECIMAL):
        if (need_info(ft, FT(DECIMAL_INFO), ft->decimal_info, "decimal_info", err) < 0)
            return -1;
        if (ft->decimal_info->precision < 1) /* 0 would read as unset: a DataStream BIG_DEC */
            return fnw_error_set(err, "DECIMAL precision %d is not in 1..%d",
                                 (int)ft->decimal_info->precision, FNW_TYPE_MAX_DECIMAL_PRECISION);
        return fnw_type_set_precision(t, ft->decimal_info->precision, ft->decimal_info->scale, err);
    case SN(TIMESTAMP):
        if (need_info(ft, FT(TIMESTAMP_INFO), ft->timestamp_info, "timestamp_info", err) < 0)
            return -1;
        return fnw_type_set_precision(t, ft->timestamp_info->precision, 0, err);
    case SN(LOCAL_ZONED_TIMESTAMP):
        if (need_info(ft, FT(LOCAL_ZONED_TIMESTAMP_INFO), ft->local_zoned_timestamp_info,
                      "local_zoned_timestamp_info", err) < 0)
            return -1;
        return fnw_type_set_precision(t, ft->local_zoned_timestamp_info->precision, 0, err);
    default:
        return 0; /* the other kinds take no parameters; lengths (CHAR(n), ...) do not change the bytes */
    }
}

/* The fnw_kind whose coder from_proto uses for a Schema.TypeName; -1 for
 * those it refuses, -2 for a number that is no TypeName. */
static int kind_of(int n)
{
    switch (n) {
    case SN(ROW):
        return FNW_ROW;
    case SN(TINYINT):
        return FNW_BYTE;
    case SN(SMALLINT):
        return FNW_SHORT;
    case SN(INT):
        return FNW_INT;
    case SN(BIGINT):
        return FNW_LONG;
    case SN(DECIMAL):
        return FNW_BIG_DEC;
    case SN(FLOAT):
        return FNW_FLOAT;
    case SN(DOUBLE):
        return FNW_DOUBLE;
    case SN(DATE):
        return FNW_SQL_DATE;
    case SN(TIME):
        return FNW_SQL_TIME;
    case SN(TIMESTAMP):
        return FNW_SQL_TIMESTAMP;
    case SN(BOOLEAN):
        return FNW_BOOLEAN;
    case SN(BINARY):
    case SN(VARBINARY):
        return FNW_PRIMITIVE_ARRAY;
    case SN(CHAR):
    case SN(VARCHAR):
        return FNW_STRING;
    case SN(BASIC_ARRAY):
        return FNW_BASIC_ARRAY;
    case SN(MAP):
        return FNW_MAP;
    case SN(LOCAL_ZONED_TIMESTAMP):
        return FNW_LOCAL_ZONED_TIMESTAMP;
    case SN(MULTISET):
    case SN(ZONED_TIMESTAMP):
    case SN(NULL):
        return -1;
    default:
        return -2;
    }
}

static int convert(const pb_field_type *ft, int depth, fnw_type **out, fnw_error *err)
{
    *out = NULL;
    if (!ft)
        return fnw_error_set(err, "missing Schema.FieldType");
    if (depth > FNW_TYPE_MAX_DEPTH)
        return fnw_error_set(err, "Schema nests deeper than %d levels", FNW_TYPE_MAX_DEPTH);
    int n = (int)ft->type_name, k = kind_of(n);
    if (k == -1)
        return fnw_error_set(err, "%s is not supported by fnworker (nor by PyFlink)", type_name(n));
    if (k < 0)
        return fnw_error_set(err, "unknown Schema.TypeName %d", n);
    fnw_type *t = fnw_type_new((fnw_kind)k);
    if (!t)
        return fnw_error_set(err, "out of memory building a type");
    if (convert_parts(t, ft, depth, err) < 0) {
        fnw_type_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

int fnw_schema_to_type(const void *schema, fnw_type **out, fnw_error *err)
{
    *out = NULL;
    if (!schema)
        return fnw_error_set(err, "missing Schema");
    fnw_type *t = fnw_type_new(FNW_ROW);
    if (!t)
        return fnw_error_set(err, "out of memory building a type");
    if (add_fields(t, (const pb_schema *)schema, 1, err) < 0) {
        fnw_type_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

int fnw_schema_field_type_to_type(const void *field_type, fnw_type **out, fnw_error *err)
{
    return convert((const pb_field_type *)field_type, 1, out, err);
}
