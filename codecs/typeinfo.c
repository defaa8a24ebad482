/* codecs/typeinfo.c — fnw_type from Flink's TypeInfo proto (the type a
 * DataStream coder in the bundle descriptor names). Rejects what Flink's
 * DataStream serializers would not produce, so a bad descriptor fails when
 * the bundle descriptor is registered rather than on the first record. */
#include "codecs/type.h"

#include "org/apache/flink/fn_execution/v1/flink-fn-execution.pb-c.h"

typedef Org__Apache__Flink__FnExecution__V1__TypeInfo pb_type;

#define TI(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__##x

static int is_primitive_element(fnw_kind k)
{
    switch (k) {
    case FNW_BOOLEAN:
    case FNW_BYTE:
    case FNW_SHORT:
    case FNW_INT:
    case FNW_LONG:
    case FNW_FLOAT:
    case FNW_DOUBLE:
    case FNW_CHAR:
        return 1;
    default:
        return 0;
    }
}

static int convert(const pb_type *pb, int depth, fnw_type **out, fnw_error *err);

static int adopt(fnw_type *t, const pb_type *child_pb, const char *name, int depth, fnw_error *err)
{
    fnw_type *child = NULL;
    if (convert(child_pb, depth + 1, &child, err) < 0)
        return -1;
    if (fnw_type_add_child(t, child, name, err) < 0) {
        fnw_type_free(child);
        return -1;
    }
    return 0;
}

static int check_field_count(const char *kind, size_t n, fnw_error *err)
{
    if (n > FNW_TYPE_MAX_FIELDS)
        return fnw_error_set(err, "%s type has %zu fields; fnworker accepts at most %d fields per %s", kind,
                             n, FNW_TYPE_MAX_FIELDS, kind);
    return 0;
}

static int convert_children(fnw_type *t, const pb_type *pb, int depth, fnw_error *err)
{
    const char *kind = fnw_kind_name(t->kind);
    switch (t->kind) {
    case FNW_ROW:
        if (pb->type_info_case != TI(TYPE_INFO_ROW_TYPE_INFO) || !pb->row_type_info)
            return fnw_error_set(err, "ROW type without row_type_info");
        if (check_field_count(kind, pb->row_type_info->n_fields, err) < 0)
            return -1;
        for (size_t i = 0; i < pb->row_type_info->n_fields; i++) {
            const Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo__Field *f =
                pb->row_type_info->fields[i];
            if (!f || !f->field_type)
                return fnw_error_set(err, "ROW field %zu has no field_type", i);
            if (adopt(t, f->field_type, f->field_name, depth, err) < 0)
                return fnw_error_prefix(err, "ROW field %zu '%s'", i, f->field_name ? f->field_name : "");
        }
        return 0;
    case FNW_TUPLE:
        if (pb->type_info_case != TI(TYPE_INFO_TUPLE_TYPE_INFO) || !pb->tuple_type_info)
            return fnw_error_set(err, "TUPLE type without tuple_type_info");
        if (check_field_count(kind, pb->tuple_type_info->n_field_types, err) < 0)
            return -1;
        for (size_t i = 0; i < pb->tuple_type_info->n_field_types; i++) {
            if (!pb->tuple_type_info->field_types[i])
                return fnw_error_set(err, "TUPLE field %zu has no type", i);
            if (adopt(t, pb->tuple_type_info->field_types[i], NULL, depth, err) < 0)
                return fnw_error_prefix(err, "TUPLE field %zu", i);
        }
        return 0;
    case FNW_BASIC_ARRAY:
    case FNW_PRIMITIVE_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
        if (pb->type_info_case != TI(TYPE_INFO_COLLECTION_ELEMENT_TYPE) || !pb->collection_element_type)
            return fnw_error_set(err, "%s type without collection_element_type", kind);
        if (adopt(t, pb->collection_element_type, NULL, depth, err) < 0)
            return fnw_error_prefix(err, "%s element", kind);
        if (t->kind == FNW_PRIMITIVE_ARRAY && !is_primitive_element(t->children[0]->kind))
            return fnw_error_set(err,
                                 "PRIMITIVE_ARRAY of %s: elements must be BOOLEAN, BYTE, SHORT, INT, "
                                 "LONG, FLOAT, DOUBLE or CHAR",
                                 fnw_kind_name(t->children[0]->kind));
        return 0;
    case FNW_MAP:
        if (pb->type_info_case != TI(TYPE_INFO_MAP_TYPE_INFO) || !pb->map_type_info)
            return fnw_error_set(err, "MAP type without map_type_info");
        if (!pb->map_type_info->key_type || !pb->map_type_info->value_type)
            return fnw_error_set(err, "MAP type without %s",
                                 pb->map_type_info->key_type ? "value_type" : "key_type");
        if (adopt(t, pb->map_type_info->key_type, NULL, depth, err) < 0)
            return fnw_error_prefix(err, "MAP key");
        if (adopt(t, pb->map_type_info->value_type, NULL, depth, err) < 0)
            return fnw_error_prefix(err, "MAP value");
        return 0;
    case FNW_AVRO:
        if (pb->type_info_case != TI(TYPE_INFO_AVRO_TYPE_INFO) || !pb->avro_type_info)
            return fnw_error_set(err, "AVRO type without avro_type_info");
        return fnw_type_set_avro_schema(t, pb->avro_type_info->schema, err);
    default:
        return 0; /* scalars: a stray type_info is ignored */
    }
}

static int convert(const pb_type *pb, int depth, fnw_type **out, fnw_error *err)
{
    *out = NULL;
    if (!pb)
        return fnw_error_set(err, "missing TypeInfo");
    if (depth > FNW_TYPE_MAX_DEPTH)
        return fnw_error_set(err, "TypeInfo nests deeper than %d levels", FNW_TYPE_MAX_DEPTH);
    int name = (int)pb->type_name;
    if (name < 0 || name >= FNW_KIND_COUNT)
        return fnw_error_set(err, "unknown TypeInfo.type_name %d", name);
    fnw_type *t = fnw_type_new((fnw_kind)name);
    if (!t)
        return fnw_error_set(err, "out of memory building a type");
    /* PyFlink's from_type_info_proto: LocalZonedTimestampCoder(3), the
     * millisecond form (the TypeInfo carries no precision). */
    if (t->kind == FNW_LOCAL_ZONED_TIMESTAMP)
        t->precision = 3;
    if (convert_children(t, pb, depth, err) < 0) {
        fnw_type_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

int fnw_typeinfo_to_type(const void *typeinfo, fnw_type **out, fnw_error *err)
{
    return convert((const pb_type *)typeinfo, 1, out, err);
}
