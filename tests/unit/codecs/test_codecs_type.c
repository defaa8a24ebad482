/* tests/unit/codecs/test_codecs_type.c — type trees: builders, equality (ROW field
 * names count), printing, cloning, and conversion from the protobuf-c
 * TypeInfo Flink sends (incl. after a pack/unpack round trip), with the
 * descriptors a DataStream job cannot have rejected by a clear message. */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/skip_once.h"
#include <stdlib.h>
#include <string.h>

#include "codecs/ser.h"
#include "codecs/type.h"
#include "org/apache/flink/fn_execution/v1/flink-fn-execution.pb-c.h"

typedef Org__Apache__Flink__FnExecution__V1__TypeInfo TI;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo TI_Row;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo__Field TI_Field;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__TupleTypeInfo TI_Tuple;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__MapTypeInfo TI_Map;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__AvroTypeInfo TI_Avro;

#define TN(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_NAME__##x
#define CASE(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_##x

/* Protobuf nodes are allocated here and freed all at once after each test. */
static void *pool[256];
static int npool;

static void *palloc(size_t n)
{
    ck_assert_int_lt(npool, 256);
    void *p = calloc(1, n);
    ck_assert_ptr_nonnull(p);
    pool[npool++] = p;
    return p;
}

static void pool_free(void)
{
    while (npool)
        free(pool[--npool]);
}

static TI *ti(int name)
{
    TI *t = palloc(sizeof *t);
    org__apache__flink__fn_execution__v1__type_info__init(t);
    t->type_name = name;
    return t;
}

static TI *ti_elem(int name, TI *elem)
{
    TI *t = ti(name);
    t->type_info_case = CASE(COLLECTION_ELEMENT_TYPE);
    t->collection_element_type = elem;
    return t;
}

static TI *ti_row(int n, const char **names, TI **types)
{
    TI *t = ti(TN(ROW));
    TI_Row *r = palloc(sizeof *r);
    org__apache__flink__fn_execution__v1__type_info__row_type_info__init(r);
    r->n_fields = (size_t)n;
    r->fields = palloc(sizeof(TI_Field *) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        TI_Field *f = palloc(sizeof *f);
        org__apache__flink__fn_execution__v1__type_info__row_type_info__field__init(f);
        f->field_name = (char *)names[i];
        f->field_type = types[i];
        r->fields[i] = f;
    }
    t->type_info_case = CASE(ROW_TYPE_INFO);
    t->row_type_info = r;
    return t;
}

static TI *ti_tuple(int n, TI **types)
{
    TI *t = ti(TN(TUPLE));
    TI_Tuple *tu = palloc(sizeof *tu);
    org__apache__flink__fn_execution__v1__type_info__tuple_type_info__init(tu);
    tu->n_field_types = (size_t)n;
    tu->field_types = types;
    t->type_info_case = CASE(TUPLE_TYPE_INFO);
    t->tuple_type_info = tu;
    return t;
}

static TI *ti_map(TI *k, TI *v)
{
    TI *t = ti(TN(MAP));
    TI_Map *m = palloc(sizeof *m);
    org__apache__flink__fn_execution__v1__type_info__map_type_info__init(m);
    m->key_type = k;
    m->value_type = v;
    t->type_info_case = CASE(MAP_TYPE_INFO);
    t->map_type_info = m;
    return t;
}

static TI *ti_avro(const char *schema)
{
    TI *t = ti(TN(AVRO));
    TI_Avro *a = palloc(sizeof *a);
    org__apache__flink__fn_execution__v1__type_info__avro_type_info__init(a);
    a->schema = (char *)schema;
    t->type_info_case = CASE(AVRO_TYPE_INFO);
    t->avro_type_info = a;
    return t;
}

static char *fmt(const fnw_type *t)
{
    static char buf[512];
    fnw_type_format(t, buf, sizeof buf);
    return buf;
}

static fnw_type *convert_ok(const TI *pb)
{
    fnw_type *t = NULL;
    fnw_error err = { "" };
    ck_assert_msg(fnw_typeinfo_to_type(pb, &t, &err) == 0, "conversion failed: %s", err.msg);
    ck_assert_ptr_nonnull(t);
    return t;
}

static void convert_fails(const TI *pb, const char *want)
{
    fnw_type *t = (fnw_type *)1;
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_typeinfo_to_type(pb, &t, &err), -1);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
}

/* The runner input row Row(LONG, LONG, Row(STRING, INT)) as Flink builds it. */
static TI *input_row_pb(void)
{
    static const char *inner_names[] = { "name", "n" };
    TI *inner_types[] = { ti(TN(STRING)), ti(TN(INT)) };
    TI **it = palloc(sizeof inner_types);
    memcpy(it, inner_types, sizeof inner_types);
    static const char *outer_names[] = { "f0", "f1", "f2" };
    TI *outer_types[] = { ti(TN(LONG)), ti(TN(LONG)), ti_row(2, inner_names, it) };
    TI **ot = palloc(sizeof outer_types);
    memcpy(ot, outer_types, sizeof outer_types);
    return ti_row(3, outer_names, ot);
}

START_TEST(from_proto_input_row)
{
    fnw_type *t = convert_ok(input_row_pb());
    ck_assert_str_eq(fmt(t), "ROW<f0 LONG, f1 LONG, f2 ROW<name STRING, n INT>>");
    ck_assert_int_eq(fnw_type_depth(t), 3);
    /* drives the serializer: the payload of Row(1000, MIN, Row("ab", 5)) */
    const uint8_t rec[] = { 0x00, 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x00,
                            0, 0, 0, 2, 'a', 'b', 0, 0, 0, 5 };
    size_t used;
    fnw_error err;
    ck_assert_int_eq(skip_once(t, rec, sizeof rec, &used, &err), 0);
    ck_assert_uint_eq(used, 28);
    fnw_type_free(t);
    pool_free();
}
END_TEST

START_TEST(from_proto_after_pack_unpack)
{
    TI *pb = input_row_pb();
    size_t n = org__apache__flink__fn_execution__v1__type_info__get_packed_size(pb);
    uint8_t *bytes = malloc(n);
    org__apache__flink__fn_execution__v1__type_info__pack(pb, bytes);
    TI *back = org__apache__flink__fn_execution__v1__type_info__unpack(NULL, n, bytes);
    ck_assert_ptr_nonnull(back);
    fnw_type *a = convert_ok(pb), *b = convert_ok(back);
    ck_assert(fnw_type_equal(a, b));
    org__apache__flink__fn_execution__v1__type_info__free_unpacked(back, NULL);
    free(bytes);
    fnw_type_free(a);
    fnw_type_free(b);
    pool_free();
}
END_TEST

START_TEST(from_proto_every_kind)
{
    int scalars[] = { TN(STRING), TN(BYTE), TN(BOOLEAN), TN(SHORT), TN(INT), TN(LONG), TN(FLOAT),
                      TN(DOUBLE), TN(CHAR), TN(BIG_INT), TN(BIG_DEC), TN(SQL_DATE), TN(SQL_TIME),
                      TN(SQL_TIMESTAMP), TN(PICKLED_BYTES), TN(INSTANT), TN(LOCAL_DATE), TN(LOCAL_TIME),
                      TN(LOCAL_DATETIME) };
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        fnw_type *t = convert_ok(ti(scalars[i]));
        ck_assert_int_eq(t->kind, scalars[i]);   /* kinds are the TypeName numbers */
        ck_assert_uint_eq(t->nchildren, 0);
        fnw_type_free(t);
    }
    fnw_type *t = convert_ok(ti_elem(TN(PRIMITIVE_ARRAY), ti(TN(BYTE))));
    ck_assert_str_eq(fmt(t), "PRIMITIVE_ARRAY<BYTE>");
    fnw_type_free(t);
    t = convert_ok(ti_elem(TN(BASIC_ARRAY), ti(TN(STRING))));
    ck_assert_str_eq(fmt(t), "BASIC_ARRAY<STRING>");
    fnw_type_free(t);
    t = convert_ok(ti_elem(TN(OBJECT_ARRAY), ti_elem(TN(LIST), ti(TN(INT)))));
    ck_assert_str_eq(fmt(t), "OBJECT_ARRAY<LIST<INT>>");
    fnw_type_free(t);
    t = convert_ok(ti_map(ti(TN(STRING)), ti_elem(TN(LIST), ti(TN(DOUBLE)))));
    ck_assert_str_eq(fmt(t), "MAP<STRING, LIST<DOUBLE>>");
    fnw_type_free(t);
    TI **tt = palloc(2 * sizeof(TI *));
    tt[0] = ti(TN(INT));
    tt[1] = ti(TN(STRING));
    t = convert_ok(ti_tuple(2, tt));
    ck_assert_str_eq(fmt(t), "TUPLE<INT, STRING>");
    fnw_type_free(t);
    t = convert_ok(ti_tuple(0, NULL));
    ck_assert_str_eq(fmt(t), "TUPLE<>");
    fnw_type_free(t);
    t = convert_ok(ti_avro("{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"}]}"));
    ck_assert_str_eq(fmt(t), "AVRO<User>");
    ck_assert_ptr_nonnull(t->avro_schema);
    ck_assert_ptr_nonnull(t->avro_program);
    fnw_type_free(t);
    /* DataStream's LOCAL_ZONED_TIMESTAMP: PyFlink's LocalZonedTimestampCoder(3) */
    t = convert_ok(ti(TN(LOCAL_ZONED_TIMESTAMP)));
    ck_assert_int_eq(fnw_type_kind(t), FNW_LOCAL_ZONED_TIMESTAMP);
    ck_assert_int_eq(fnw_type_precision(t), 3);
    ck_assert_str_eq(fmt(t), "TIMESTAMP_LTZ(3)");
    fnw_type_free(t);
    /* an empty row */
    t = convert_ok(ti_row(0, NULL, NULL));
    ck_assert_str_eq(fmt(t), "ROW<>");
    fnw_type_free(t);
    pool_free();
}
END_TEST

START_TEST(from_proto_rejects)
{
    convert_fails(ti(28), "unknown TypeInfo.type_name 28");
    convert_fails(ti(99), "unknown TypeInfo.type_name 99");
    convert_fails(ti(TN(LIST)), "LIST type without collection_element_type");
    convert_fails(ti(TN(BASIC_ARRAY)), "BASIC_ARRAY type without collection_element_type");
    convert_fails(ti(TN(ROW)), "ROW type without row_type_info");
    convert_fails(ti(TN(TUPLE)), "TUPLE type without tuple_type_info");
    convert_fails(ti(TN(MAP)), "MAP type without map_type_info");
    convert_fails(ti_map(ti(TN(INT)), NULL), "MAP type without value_type");
    convert_fails(ti(TN(AVRO)), "AVRO type without avro_type_info");
    convert_fails(ti_avro(""), "without a schema");
    convert_fails(ti_avro("{\"type\": \"nope\"}"), "invalid Avro schema");
    convert_fails(ti_elem(TN(PRIMITIVE_ARRAY), ti(TN(STRING))), "PRIMITIVE_ARRAY of STRING");
    convert_fails(ti_elem(TN(PRIMITIVE_ARRAY), ti_elem(TN(LIST), ti(TN(INT)))), "PRIMITIVE_ARRAY of LIST");
    /* a row field deep inside: the message says where */
    static const char *names[] = { "a", "when" };
    TI **ft = palloc(2 * sizeof(TI *));
    ft[0] = ti(TN(INT));
    ft[1] = ti_elem(TN(LIST), ti(TN(AVRO)));
    convert_fails(ti_row(2, names, ft), "ROW field 1 'when': LIST element: AVRO type without avro_type_info");
    convert_fails(NULL, "missing TypeInfo");
    pool_free();
}
END_TEST

START_TEST(from_proto_depth_limit)
{
    TI *t = ti(TN(INT));
    for (int i = 1; i < FNW_TYPE_MAX_DEPTH; i++)
        t = ti_elem(TN(LIST), t);   /* depth 64: accepted */
    fnw_type *ok = convert_ok(t);
    ck_assert_int_eq(fnw_type_depth(ok), 64);
    fnw_type_free(ok);
    convert_fails(ti_elem(TN(LIST), t), "deeper than 64");
    pool_free();
}
END_TEST

static fnw_type *row2(const char *n1, fnw_kind k1, const char *n2, fnw_kind k2)
{
    fnw_type *t = fnw_type_new(FNW_ROW);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(t, fnw_type_new(k1), n1, &err), 0);
    ck_assert_int_eq(fnw_type_add_child(t, fnw_type_new(k2), n2, &err), 0);
    return t;
}

START_TEST(equality_names_and_kinds)
{
    fnw_type *a = row2("name", FNW_STRING, "n", FNW_INT);
    fnw_type *b = row2("name", FNW_STRING, "n", FNW_INT);
    fnw_type *c = row2("name", FNW_STRING, "count", FNW_INT);
    fnw_type *d = row2("name", FNW_STRING, "n", FNW_LONG);
    ck_assert(fnw_type_equal(a, b));
    ck_assert(!fnw_type_equal(a, c));
    ck_assert(fnw_type_equal_ignoring_names(a, c));
    ck_assert(!fnw_type_equal(a, d));
    ck_assert(!fnw_type_equal_ignoring_names(a, d));
    fnw_type *e = fnw_type_new(FNW_ROW);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(e, fnw_type_new(FNW_STRING), "name", &err), 0);
    ck_assert(!fnw_type_equal_ignoring_names(a, e));   /* arity */
    fnw_type *cl = fnw_type_clone(a);
    ck_assert_ptr_nonnull(cl);
    ck_assert_ptr_ne(cl, a);
    ck_assert(fnw_type_equal(a, cl));
    ck_assert_str_eq(cl->names[1], "n");
    fnw_type_free(a);
    fnw_type_free(b);
    fnw_type_free(c);
    fnw_type_free(d);
    fnw_type_free(e);
    fnw_type_free(cl);

    /* AVRO compares schemas */
    fnw_type *x = fnw_type_new(FNW_AVRO), *y = fnw_type_new(FNW_AVRO), *z = fnw_type_new(FNW_AVRO);
    ck_assert_int_eq(fnw_type_set_avro_schema(x, "\"long\"", &err), 0);
    ck_assert_int_eq(fnw_type_set_avro_schema(y, "{\"type\": \"long\"}", &err), 0);
    ck_assert_int_eq(fnw_type_set_avro_schema(z, "\"string\"", &err), 0);
    ck_assert(fnw_type_equal(x, y));
    ck_assert(!fnw_type_equal(x, z));
    fnw_type *xc = fnw_type_clone(x);
    ck_assert(fnw_type_equal(x, xc));
    ck_assert_str_eq(fmt(xc), "AVRO<long>");
    fnw_type_free(x);
    fnw_type_free(y);
    fnw_type_free(z);
    fnw_type_free(xc);
}
END_TEST

START_TEST(builder_rules)
{
    fnw_error err;
    fnw_type *l = fnw_type_new(FNW_LIST);
    fnw_type *i1 = fnw_type_new(FNW_INT), *i2 = fnw_type_new(FNW_INT);
    ck_assert_int_eq(fnw_type_add_child(l, i1, NULL, &err), 0);
    ck_assert_int_eq(fnw_type_add_child(l, i2, NULL, &err), -1);   /* one element type only */
    ck_assert_ptr_nonnull(strstr(err.msg, "LIST takes 1 child type"));
    fnw_type *i3 = fnw_type_new(FNW_INT);
    ck_assert_int_eq(fnw_type_add_child(i2, i3, NULL, &err), -1);   /* scalars take none */
    fnw_type_free(i2);   /* neither was adopted: still ours */
    fnw_type_free(i3);
    fnw_type *m = fnw_type_new(FNW_MAP);
    ck_assert_int_eq(fnw_type_add_child(m, fnw_type_new(FNW_STRING), NULL, &err), 0);
    ck_assert_int_eq(fnw_type_add_child(m, fnw_type_new(FNW_INT), NULL, &err), 0);
    ck_assert_str_eq(fmt(m), "MAP<STRING, INT>");
    ck_assert_int_eq(fnw_type_set_avro_schema(m, "\"int\"", &err), -1);
    ck_assert_ptr_null(fnw_type_new((fnw_kind)28));
    /* names default to "" and print without a name */
    fnw_type *r = fnw_type_new(FNW_ROW);
    ck_assert_int_eq(fnw_type_add_child(r, fnw_type_new(FNW_INT), NULL, &err), 0);
    ck_assert_str_eq(r->names[0], "");
    ck_assert_str_eq(fmt(r), "ROW<INT>");
    /* truncation keeps a terminated prefix */
    char small[6];
    size_t n = fnw_type_format(m, small, sizeof small);
    ck_assert_uint_eq(n, 5);
    ck_assert_str_eq(small, "MAP<S");
    ck_assert_str_eq(fnw_kind_name(FNW_LOCAL_DATETIME), "LOCAL_DATETIME");
    ck_assert_str_eq(fnw_kind_name((fnw_kind)99), "UNKNOWN");
    fnw_type_free(l);
    fnw_type_free(m);
    fnw_type_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("type");
    TCase *tc = tcase_create("type");
    tcase_add_test(tc, from_proto_input_row);
    tcase_add_test(tc, from_proto_after_pack_unpack);
    tcase_add_test(tc, from_proto_every_kind);
    tcase_add_test(tc, from_proto_rejects);
    tcase_add_test(tc, from_proto_depth_limit);
    tcase_add_test(tc, equality_names_and_kinds);
    tcase_add_test(tc, builder_rules);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
