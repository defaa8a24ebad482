/* tests/unit/codecs/test_schema.c — Flink's Table Schema proto as fnw_type
 * trees (codecs/schema.c) and the bytes the serializers then read and
 * write for Table rows: every Schema type, hand-worked and held against
 * encode, decode and skip at once (ser_vectors.h). The vectors marked
 * "PyFlink" are the bytes PyFlink 2.3's own coders (coder_impl_slow.py:
 * FlattenRowCoderImpl, RowCoderImpl, TimestampCoderImpl,
 * LocalZonedTimestampCoderImpl, DecimalCoderImpl, GenericArrayCoderImpl,
 * MapCoderImpl) wrote for the same values. Then the descriptors fnworker
 * refuses, with the field path in the message. */
#include <check.h>
#include <stdlib.h>

#include "codecs/schema.h"
#include "org/apache/flink/fn_execution/v1/flink-fn-execution.pb-c.h"
#include "tests/unit/check_run.h"
#include "tests/unit/ser_vectors.h"

typedef Org__Apache__Flink__FnExecution__V1__Schema SC;
typedef Org__Apache__Flink__FnExecution__V1__Schema__FieldType FT;
typedef Org__Apache__Flink__FnExecution__V1__Schema__Field FLD;

#define SN(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__SCHEMA__TYPE_NAME__##x
#define CASE(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__SCHEMA__FIELD_TYPE__TYPE_INFO_##x

/* Protobuf nodes are allocated here and freed all at once after each test. */
#define POOL_MAX 4096
static void *pool[POOL_MAX];
static int npool;

static void *palloc(size_t n)
{
    ck_assert_int_lt(npool, POOL_MAX);
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

static FT *ft(int name)
{
    FT *t = palloc(sizeof *t);
    org__apache__flink__fn_execution__v1__schema__field_type__init(t);
    t->type_name = name;
    t->nullable = 1;
    return t;
}

static FT *ft_ts(int name, int precision)
{
    FT *t = ft(name);
    if (name == SN(TIMESTAMP)) {
        t->timestamp_info = palloc(sizeof *t->timestamp_info);
        org__apache__flink__fn_execution__v1__schema__timestamp_info__init(t->timestamp_info);
        t->timestamp_info->precision = precision;
        t->type_info_case = CASE(TIMESTAMP_INFO);
    } else {
        t->local_zoned_timestamp_info = palloc(sizeof *t->local_zoned_timestamp_info);
        org__apache__flink__fn_execution__v1__schema__local_zoned_timestamp_info__init(
            t->local_zoned_timestamp_info);
        t->local_zoned_timestamp_info->precision = precision;
        t->type_info_case = CASE(LOCAL_ZONED_TIMESTAMP_INFO);
    }
    return t;
}

static FT *ft_dec(int precision, int scale)
{
    FT *t = ft(SN(DECIMAL));
    t->decimal_info = palloc(sizeof *t->decimal_info);
    org__apache__flink__fn_execution__v1__schema__decimal_info__init(t->decimal_info);
    t->decimal_info->precision = precision;
    t->decimal_info->scale = scale;
    t->type_info_case = CASE(DECIMAL_INFO);
    return t;
}

static FT *ft_varchar(int length)
{
    FT *t = ft(SN(VARCHAR));
    t->var_char_info = palloc(sizeof *t->var_char_info);
    org__apache__flink__fn_execution__v1__schema__var_char_info__init(t->var_char_info);
    t->var_char_info->length = length;
    t->type_info_case = CASE(VAR_CHAR_INFO);
    return t;
}

static FT *ft_arr(FT *elem)
{
    FT *t = ft(SN(BASIC_ARRAY));
    t->collection_element_type = elem;
    t->type_info_case = CASE(COLLECTION_ELEMENT_TYPE);
    return t;
}

static FT *ft_map(FT *k, FT *v)
{
    FT *t = ft(SN(MAP));
    t->map_info = palloc(sizeof *t->map_info);
    org__apache__flink__fn_execution__v1__schema__map_info__init(t->map_info);
    t->map_info->key_type = k;
    t->map_info->value_type = v;
    t->type_info_case = CASE(MAP_INFO);
    return t;
}

/* A Schema of n fields: names[i], types[i]. */
static SC *schema(int n, const char *const *names, FT *const *types)
{
    SC *s = palloc(sizeof *s);
    org__apache__flink__fn_execution__v1__schema__init(s);
    s->n_fields = (size_t)n;
    s->fields = palloc(sizeof(FLD *) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        FLD *f = palloc(sizeof *f);
        org__apache__flink__fn_execution__v1__schema__field__init(f);
        f->name = (char *)names[i];
        f->type = types[i];
        s->fields[i] = f;
    }
    return s;
}

static FT *ft_row(int n, const char *const *names, FT *const *types)
{
    FT *t = ft(SN(ROW));
    t->row_schema = schema(n, names, types);
    t->type_info_case = CASE(ROW_SCHEMA);
    return t;
}

static char *fmt(const fnw_type *t)
{
    static char buf[1024];
    fnw_type_format(t, buf, sizeof buf);
    return buf;
}

/* The Schema packed and unpacked again (the bytes Flink sends), converted. */
static fnw_type *from_schema(const SC *s)
{
    size_t n = org__apache__flink__fn_execution__v1__schema__get_packed_size(s);
    uint8_t *b = palloc(n ? n : 1);
    org__apache__flink__fn_execution__v1__schema__pack(s, b);
    SC *u = org__apache__flink__fn_execution__v1__schema__unpack(NULL, n, b);
    ck_assert_ptr_nonnull(u);
    fnw_type *t = NULL;
    fnw_error err = { "" };
    ck_assert_msg(fnw_schema_to_type(u, &t, &err) == 0, "fnw_schema_to_type: %s", err.msg);
    org__apache__flink__fn_execution__v1__schema__free_unpacked(u, NULL);
    return t;
}

static void schema_fails(const SC *s, const char *want)
{
    fnw_type *t = (fnw_type *)1;
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_schema_to_type(s, &t, &err), -1);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
}

static void field_type_fails(const FT *f, const char *want)
{
    fnw_type *t = (fnw_type *)1;
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_schema_field_type_to_type(f, &t, &err), -1);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
}

static fnw_type *from_field_type(const FT *f)
{
    fnw_type *t = NULL;
    fnw_error err = { "" };
    ck_assert_msg(fnw_schema_field_type_to_type(f, &t, &err) == 0, "%s", err.msg);
    return t;
}

START_TEST(scalars_as_a_flatten_row)
{
    static const char *const names[] = { "tiny", "small", "i", "big", "b", "f", "d", "s", "bin", "dt", "tm" };
    FT *types[] = { ft(SN(TINYINT)), ft(SN(SMALLINT)), ft(SN(INT)),       ft(SN(BIGINT)),
                    ft(SN(BOOLEAN)), ft(SN(FLOAT)),    ft(SN(DOUBLE)),    ft_varchar(20),
                    ft(SN(VARBINARY)), ft(SN(DATE)),   ft(SN(TIME)) };
    fnw_type *t = from_schema(schema(11, names, types));
    ck_assert_str_eq(fmt(t), "ROW<tiny BYTE, small SHORT, i INT, big LONG, b BOOLEAN, f FLOAT, d DOUBLE, "
                             "s STRING, bin PRIMITIVE_ARRAY<BYTE>, dt SQL_DATE, tm SQL_TIME>");
    fnw_value items[] = {
        fnw_value_int(FNW_BYTE, -2),
        fnw_value_int(FNW_SHORT, 300),
        fnw_value_int(FNW_INT, -1),
        fnw_value_int(FNW_LONG, INT64_C(1) << 40),
        fnw_value_int(FNW_BOOLEAN, 1),
        fnw_value_float(1.5f),
        fnw_value_double(-2.0),
        fnw_value_bytes(FNW_STRING, "h\xc3\xa9", 3),
        fnw_value_bytes(FNW_PRIMITIVE_ARRAY, "\x01\x02", 2),
        fnw_value_int(FNW_SQL_DATE, 19000),  /* 2022-01-08 */
        fnw_value_int(FNW_SQL_TIME, 3723004) /* 01:02:03.004 */
    };
    fnw_value row = fnw_value_row(FNW_INSERT, items, 11);
    /* PyFlink: FlattenRowCoderImpl (the header of a row without field names,
     * row kind 0) writes what a ROW with row kind INSERT is */
    check_vector(t, &row,
                 "0000 fe 012c ffffffff 0000010000000000 01 3fc00000 c000000000000000 00000003 68c3a9 "
                 "00000002 0102 00004a38 0038cefc");
    fnw_type_free(t);
    pool_free();
}
END_TEST

START_TEST(timestamps_by_precision)
{
    static const char *const names[] = { "t3", "t6", "t9", "l3", "l6" };
    FT *types[] = { ft_ts(SN(TIMESTAMP), 3), ft_ts(SN(TIMESTAMP), 6), ft_ts(SN(TIMESTAMP), 9),
                    ft_ts(SN(LOCAL_ZONED_TIMESTAMP), 3), ft_ts(SN(LOCAL_ZONED_TIMESTAMP), 6) };
    fnw_type *t = from_schema(schema(5, names, types));
    ck_assert_str_eq(fmt(t), "ROW<t3 TIMESTAMP(3), t6 TIMESTAMP(6), t9 TIMESTAMP(9), l3 TIMESTAMP_LTZ(3), "
                             "l6 TIMESTAMP_LTZ(6)>");
    ck_assert_int_eq(fnw_type_kind(fnw_type_child(t, 3)), FNW_LOCAL_ZONED_TIMESTAMP);
    ck_assert_int_eq(fnw_type_precision(fnw_type_child(t, 1)), 6);
    ck_assert_int_eq(fnw_type_scale(fnw_type_child(t, 1)), 0);
    /* 2023-11-14 22:13:20.123456: 1700000000123 ms and 456000 ns */
    int64_t ms = INT64_C(1700000000123);
    fnw_value items[] = {
        fnw_value_timestamp(FNW_SQL_TIMESTAMP, ms, 0),
        fnw_value_timestamp(FNW_SQL_TIMESTAMP, ms, 456000),
        fnw_value_timestamp(FNW_SQL_TIMESTAMP, ms, 456000),
        fnw_value_timestamp(FNW_LOCAL_ZONED_TIMESTAMP, ms, 0),
        fnw_value_timestamp(FNW_LOCAL_ZONED_TIMESTAMP, ms, 456000),
    };
    fnw_value row = fnw_value_row(FNW_INSERT, items, 5);
    /* PyFlink: precision <= 3 is 8 bytes, above it 8 + 4 (nanos of the ms) */
    check_vector(t, &row,
                 "00 0000018bcfe5687b 0000018bcfe5687b 0006f540 0000018bcfe5687b 0006f540 "
                 "0000018bcfe5687b 0000018bcfe5687b 0006f540");
    /* nanos beyond the microsecond (PyFlink's datetime cannot hold them) */
    fnw_value t9 = fnw_value_timestamp(FNW_SQL_TIMESTAMP, -1, 999999);
    check_vector(fnw_type_child(t, 2), &t9, "ffffffffffffffff 000f423f");
    /* precision 3 has no room for nanos: dropped, as PyFlink drops them */
    fnw_value t3 = fnw_value_timestamp(FNW_SQL_TIMESTAMP, 1, 5);
    fnw_buf_clear(&out);
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_ser_encode(fnw_type_child(t, 0), &t3, &out, &err), 0);
    ck_assert_str_eq(tohex(out.p, out.len), "00 00 00 00 00 00 00 01 ");
    /* nanos of the ms past 999999 would be refused by Flink's TimestampData */
    fnw_value bad = fnw_value_timestamp(FNW_SQL_TIMESTAMP, 1, 1000000);
    expect_encode_fail(fnw_type_child(t, 1), &bad, "nanos within the millisecond 1000000 not in [0, 999999]");
    bad.kind = FNW_LOCAL_ZONED_TIMESTAMP;
    expect_encode_fail(fnw_type_child(t, 4), &bad, "not in [0, 999999]");
    /* a TIMESTAMP(6) whose nanos are missing is short */
    uint8_t b[8] = { 0 };
    expect_fail(fnw_type_child(t, 1), b, 8, "needs 12 bytes, 8 left");
    fnw_type_free(t);
    pool_free();
}
END_TEST

START_TEST(decimals_are_quantized)
{
    static const char *const names[] = { "price" };
    FT *types[] = { ft_dec(10, 2) };
    fnw_type *t = from_schema(schema(1, names, types));
    ck_assert_str_eq(fmt(t), "ROW<price DECIMAL(10, 2)>");
    const fnw_type *d = fnw_type_child(t, 0);
    ck_assert_int_eq(fnw_type_kind(d), FNW_BIG_DEC);
    ck_assert_int_eq(fnw_type_precision(d), 10);
    ck_assert_int_eq(fnw_type_scale(d), 2);
    /* text in scale: as it is (what the JVM writes, BigDecimal.toString) */
    fnw_value v = fnw_value_bytes(FNW_BIG_DEC, "1.50", 4);
    check_vector(d, &v, "00000004 312e3530");
    /* PyFlink: DecimalCoderImpl(10, 2) writes 3.14159 as "3.14" */
    fnw_value more = fnw_value_bytes(FNW_BIG_DEC, "3.14159", 7);
    fnw_buf_clear(&out);
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_ser_encode(d, &more, &out, &err), 0);
    ck_assert_str_eq(tohex(out.p, out.len), "00 00 00 04 33 2e 31 34 ");
    /* HALF_UP, as the JVM's DecimalData.fromBigDecimal rounds */
    fnw_value tie = fnw_value_bytes(FNW_BIG_DEC, "-2.345", 6);
    fnw_buf_clear(&out);
    ck_assert_int_eq(fnw_ser_encode(d, &tie, &out, &err), 0);
    ck_assert_str_eq(tohex(out.p, out.len), "00 00 00 05 2d 32 2e 33 35 ");
    fnw_value row = fnw_value_row(FNW_INSERT, &tie, 1);
    ck_assert_int_eq(fnw_ser_encode(t, &row, &out, &err), 0);
    /* too many digits, or no number: refused with the value and the field */
    fnw_type *small = from_field_type(ft_dec(4, 1));
    fnw_type *r = T(FNW_ROW);
    ck_assert_int_eq(fnw_type_add_child(r, small, "price", &err), 0);
    fnw_value big = fnw_value_bytes(FNW_BIG_DEC, "12345.67", 8);
    fnw_value brow = fnw_value_row(FNW_INSERT, &big, 1);
    expect_encode_fail(r, &brow, "ROW field 0 'price': encoding DECIMAL: value 12345.67 does not fit DECIMAL(4, 1)");
    fnw_value nan = fnw_value_bytes(FNW_BIG_DEC, "NaN", 3);
    expect_encode_fail(small, &nan, "value NaN is not a decimal number");
    fnw_type_free(r);
    fnw_type_free(t);
    pool_free();
}
END_TEST

START_TEST(row_with_nulls_keeps_its_kind)
{
    static const char *const names[] = { "a", "b", "c" };
    FT *types[] = { ft(SN(INT)), ft_varchar(10), ft(SN(BIGINT)) };
    fnw_type *t = from_schema(schema(3, names, types));
    fnw_value items[] = { fnw_value_int(FNW_INT, 5), fnw_value_null(FNW_STRING), fnw_value_int(FNW_LONG, 9) };
    fnw_value row = fnw_value_row(FNW_UPDATE_AFTER, items, 3);
    /* PyFlink: RowCoderImpl, row kind UPDATE_AFTER (0x40) and b null (0x10) */
    check_vector(t, &row, "50 00000005 0000000000000009");
    /* seven INT fields: the mask takes a second byte for the last one */
    static const char *const n7[] = { "f0", "f1", "f2", "f3", "f4", "f5", "f6" };
    FT *t7[7];
    for (int i = 0; i < 7; i++)
        t7[i] = ft(SN(INT));
    fnw_type *r7 = from_schema(schema(7, n7, t7));
    fnw_value v7[7];
    v7[0] = fnw_value_int(FNW_INT, 1);
    for (int i = 1; i < 7; i++)
        v7[i] = fnw_value_null(FNW_INT);
    fnw_value row7 = fnw_value_row(FNW_INSERT, v7, 7);
    check_vector(r7, &row7, "1f80 00000001"); /* PyFlink */
    for (int i = 1; i < 6; i++)
        v7[i] = fnw_value_int(FNW_INT, i + 1);
    check_vector(r7, &row7, "0080 00000001 00000002 00000003 00000004 00000005 00000006"); /* PyFlink */
    fnw_type_free(r7);
    fnw_type_free(t);
    pool_free();
}
END_TEST

START_TEST(nested_array_of_rows_and_a_map)
{
    static const char *const in_names[] = { "x", "y" };
    FT *in_types[] = { ft(SN(INT)), ft_varchar(5) };
    static const char *const names[] = { "items", "counts" };
    FT *types[] = { ft_arr(ft_row(2, in_names, in_types)), ft_map(ft_varchar(8), ft(SN(BIGINT))) };
    fnw_type *t = from_schema(schema(2, names, types));
    ck_assert_str_eq(fmt(t), "ROW<items BASIC_ARRAY<ROW<x INT, y STRING>>, counts MAP<STRING, LONG>>");
    const fnw_type *arr = fnw_type_child(t, 0), *map = fnw_type_child(t, 1);
    fnw_value r1[] = { fnw_value_int(FNW_INT, 1), fnw_value_str("a") };
    fnw_value r3[] = { fnw_value_null(FNW_INT), fnw_value_str("b") };
    fnw_value elems[] = { fnw_value_row(FNW_INSERT, r1, 2), fnw_value_null(FNW_ROW),
                          fnw_value_row(FNW_INSERT, r3, 2) };
    fnw_value av = fnw_value_items(FNW_BASIC_ARRAY, elems, 3);
    /* PyFlink: GenericArrayCoderImpl(RowCoderImpl) of [Row(1, 'a'), None, Row(None, 'b')] */
    check_vector(arr, &av, "00000003 01 00 00000001 00000001 61 00 01 20 00000001 62");
    fnw_value kv[] = { fnw_value_str("k"), fnw_value_int(FNW_LONG, 7), fnw_value_str("n"),
                       fnw_value_null(FNW_LONG) };
    fnw_value mv = fnw_value_items(FNW_MAP, kv, 2);
    /* PyFlink: MapCoderImpl(CharCoderImpl, BigIntCoderImpl) of {'k': 7, 'n': None} */
    check_vector(map, &mv, "00000002 00000001 6b 00 0000000000000007 00000001 6e 01");
    fnw_value both[] = { av, mv };
    fnw_value row = fnw_value_row(FNW_INSERT, both, 2);
    check_vector(t, &row,
                 "00 00000003 01 00 00000001 00000001 61 00 01 20 00000001 62 "
                 "00000002 00000001 6b 00 0000000000000007 00000001 6e 01");
    fnw_type_free(t);
    pool_free();
}
END_TEST

START_TEST(types_compare_and_copy_with_their_parameters)
{
    fnw_type *a = from_field_type(ft_dec(10, 2)), *b = from_field_type(ft_dec(10, 3));
    fnw_type *c = fnw_type_clone(a);
    ck_assert(!fnw_type_equal(a, b));
    ck_assert(fnw_type_equal(a, c));
    ck_assert_str_eq(fmt(c), "DECIMAL(10, 2)");
    fnw_type *t3 = from_field_type(ft_ts(SN(TIMESTAMP), 3)), *t6 = from_field_type(ft_ts(SN(TIMESTAMP), 6));
    ck_assert(!fnw_type_equal(t3, t6));
    /* TIMESTAMP(0) is unset's twin: 8 bytes, printed as DataStream's SQL_TIMESTAMP */
    fnw_type *t0 = from_field_type(ft_ts(SN(TIMESTAMP), 0));
    ck_assert_str_eq(fmt(t0), "SQL_TIMESTAMP");
    fnw_value v = fnw_value_int(FNW_SQL_TIMESTAMP, 1);
    check_vector(t0, &v, "0000000000000001");
    fnw_type *lz = from_field_type(ft_ts(SN(LOCAL_ZONED_TIMESTAMP), 9));
    ck_assert_str_eq(fmt(lz), "TIMESTAMP_LTZ(9)");
    fnw_type *bin = from_field_type(ft(SN(BINARY)));
    ck_assert_str_eq(fmt(bin), "PRIMITIVE_ARRAY<BYTE>");
    fnw_type *ch = from_field_type(ft(SN(CHAR)));
    ck_assert_str_eq(fmt(ch), "STRING");
    fnw_type_free(a);
    fnw_type_free(b);
    fnw_type_free(c);
    fnw_type_free(t3);
    fnw_type_free(t6);
    fnw_type_free(t0);
    fnw_type_free(lz);
    fnw_type_free(bin);
    fnw_type_free(ch);
    pool_free();
}
END_TEST

START_TEST(refusals_name_the_type_and_the_field)
{
    static const char *const names[] = { "id", "features" };
    FT *types[] = { ft(SN(INT)), ft_arr(ft(SN(MULTISET))) };
    schema_fails(schema(2, names, types),
                 "field 'features': BASIC_ARRAY element: MULTISET is not supported by fnworker (nor by PyFlink)");
    field_type_fails(ft(SN(NULL)), "NULL is not supported by fnworker (nor by PyFlink)");
    field_type_fails(ft(SN(ZONED_TIMESTAMP)), "ZONED_TIMESTAMP is not supported");
    field_type_fails(ft(99), "unknown Schema.TypeName 99");
    field_type_fails(ft(SN(DECIMAL)), "DECIMAL type without decimal_info");
    field_type_fails(ft(SN(BASIC_ARRAY)), "BASIC_ARRAY type without collection_element_type");
    field_type_fails(ft(SN(MAP)), "MAP type without map_info");
    field_type_fails(ft_map(ft(SN(INT)), NULL), "MAP type without value_type");
    field_type_fails(ft(SN(ROW)), "ROW type without row_schema");
    field_type_fails(ft(SN(TIMESTAMP)), "TIMESTAMP type without timestamp_info");
    field_type_fails(ft(SN(LOCAL_ZONED_TIMESTAMP)), "without local_zoned_timestamp_info");
    field_type_fails(ft_ts(SN(TIMESTAMP), 10), "TIMESTAMP precision 10 is not in 0..9");
    field_type_fails(ft_ts(SN(LOCAL_ZONED_TIMESTAMP), -1), "TIMESTAMP_LTZ precision -1 is not in 0..9");
    field_type_fails(ft_dec(0, 0), "DECIMAL precision 0 is not in 1..38");
    field_type_fails(ft_dec(39, 0), "DECIMAL precision 39 is not in 1..38");
    field_type_fails(ft_dec(5, 6), "DECIMAL(5, 6): the scale is not in 0..5");
    field_type_fails(NULL, "missing Schema.FieldType");
    /* the type_info must be the one the type needs */
    FT *wrong = ft_dec(5, 2);
    wrong->type_name = SN(TIMESTAMP);
    field_type_fails(wrong, "TIMESTAMP type without timestamp_info");
    /* a field without a type, deep inside */
    static const char *const in_names[] = { "x" };
    FT *in_types[] = { NULL };
    static const char *const outer[] = { "rows" };
    FT *outer_types[] = { ft_arr(ft_row(1, in_names, in_types)) };
    schema_fails(schema(1, outer, outer_types), "field 'rows': BASIC_ARRAY element: field 0 'x' has no type");
    fnw_error err;
    fnw_type *t = (fnw_type *)1;
    ck_assert_int_eq(fnw_schema_to_type(NULL, &t, &err), -1);
    ck_assert_str_eq(err.msg, "missing Schema");
    pool_free();
}
END_TEST

START_TEST(limits_of_depth_and_width)
{
    /* FNW_TYPE_MAX_DEPTH arrays around an INT: too deep by one */
    FT *f = ft(SN(INT));
    for (int i = 0; i < FNW_TYPE_MAX_DEPTH; i++)
        f = ft_arr(f);
    field_type_fails(f, "BASIC_ARRAY element: BASIC_ARRAY element: BASIC_ARRAY element: BASIC_ARRAY element: "
                        "BASIC_ARRAY element: BASIC_ARRAY element: BASIC_ARRAY element: BASIC_ARRAY element: ...: "
                        "Schema nests deeper than 64 levels");
    fnw_type *t = from_field_type(f->collection_element_type);
    ck_assert_int_eq(fnw_type_depth(t), FNW_TYPE_MAX_DEPTH);
    fnw_type_free(t);
    /* a schema's fields are one level below its ROW */
    static const char *const names[] = { "deep" };
    FT *types[] = { f->collection_element_type };
    schema_fails(schema(1, names, types), "nests deeper than 64 levels");
    /* more fields than a ROW may have: refused before any is converted */
    SC *wide = palloc(sizeof *wide);
    org__apache__flink__fn_execution__v1__schema__init(wide);
    wide->n_fields = FNW_TYPE_MAX_FIELDS + 1;
    wide->fields = palloc(sizeof(FLD *) * wide->n_fields);
    schema_fails(wide, "ROW type has 65536 fields; fnworker accepts at most 65535 fields per ROW");
    /* an empty schema is an empty ROW */
    fnw_type *e = from_schema(schema(0, NULL, NULL));
    ck_assert_str_eq(fmt(e), "ROW<>");
    fnw_value row = fnw_value_row(FNW_INSERT, NULL, 0);
    check_vector(e, &row, "00");
    fnw_type_free(e);
    pool_free();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("schema");
    TCase *tc = tcase_create("schema");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, scalars_as_a_flatten_row);
    tcase_add_test(tc, timestamps_by_precision);
    tcase_add_test(tc, decimals_are_quantized);
    tcase_add_test(tc, row_with_nulls_keeps_its_kind);
    tcase_add_test(tc, nested_array_of_rows_and_a_map);
    tcase_add_test(tc, types_compare_and_copy_with_their_parameters);
    tcase_add_test(tc, refusals_name_the_type_and_the_field);
    tcase_add_test(tc, limits_of_depth_and_width);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
