/* tests/fuzz/gen_seeds_codecs.c — writes the seed corpora of the codec fuzz
 * targets (fuzz_record.c, fuzz_typeinfo.c, fuzz_avro.c) with the codecs'
 * own encoders, so each seed is a valid input the way the worker meets it:
 *
 *   gen_seeds_codecs DIR     writes DIR/record/, DIR/typeinfo/ and DIR/avro/
 *
 * Record seeds are one shape byte (record_shapes.h) then one value encoded
 * by fnw_ser_encode; TypeInfo seeds are TypeInfo messages packed by
 * protobuf-c; Avro seeds are a 2-byte big-endian schema length, the schema
 * JSON, then one datum in Flink's Avro encoding (codecs/avro_program.h).
 * The make fuzz-replay target builds this program so it keeps compiling; the
 * committed corpora were written by it (see tests/fuzz/README.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/bytes.h"
#include "codecs/ser.h"
#include "org/apache/flink/fn_execution/v1/flink-fn-execution.pb-c.h"
#include "tests/fuzz/record_shapes.h"

static int write_seed(const char *dir, const char *sub, const char *name, const void *p, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "gen_seeds_codecs: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

/* Encodes v as a value of shape s behind the shape byte and writes it. */
static int write_record(const char *dir, const char *name, int s, const fnw_value *v)
{
    fnw_type *t = shape_new(s);
    fnw_buf out;
    fnw_error err;
    fnw_buf_init(&out, 0);
    int rc = !t || fnw_buf_put_u8(&out, (uint8_t)s) < 0 || fnw_ser_encode(t, v, &out, &err) < 0;
    if (rc)
        fprintf(stderr, "gen_seeds_codecs: %s: %s\n", name, t ? err.msg : "out of memory");
    else
        rc = write_seed(dir, "record", name, out.p, out.len);
    fnw_buf_free(&out);
    fnw_type_free(t);
    return rc ? -1 : 0;
}

#define ITEMS(k, ...) fnw_value_items(k, (fnw_value[]){ __VA_ARGS__ }, \
                                      sizeof((fnw_value[]){ __VA_ARGS__ }) / sizeof(fnw_value))
/* MAP: key0, value0, key1, value1, ... (count = entries) */
#define MAP(...) fnw_value_items(FNW_MAP, (fnw_value[]){ __VA_ARGS__ }, \
                                 sizeof((fnw_value[]){ __VA_ARGS__ }) / sizeof(fnw_value) / 2)
#define ROW(...) fnw_value_row(FNW_INSERT, (fnw_value[]){ __VA_ARGS__ }, \
                               sizeof((fnw_value[]){ __VA_ARGS__ }) / sizeof(fnw_value))

static fnw_value local_datetime(void)
{
    fnw_value v = fnw_value_local_date(2024, 2, 29);
    v.kind = FNW_LOCAL_DATETIME;
    v.u.local.hour = 23;
    v.u.local.minute = 59;
    v.u.local.second = 58;
    v.u.local.nano = 123456789;
    return v;
}

static fnw_value local_time(void)
{
    fnw_value v = local_datetime();
    v.kind = FNW_LOCAL_TIME;
    return v;
}

static const uint8_t big[] = { 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t big_neg[] = { 0xfe, 0x00 };

static int rich_full(const char *dir)
{
    fnw_value row = ROW(
        fnw_value_int(FNW_BOOLEAN, 1), fnw_value_int(FNW_BYTE, -7), fnw_value_int(FNW_SHORT, 300),
        fnw_value_int(FNW_INT, -123456), fnw_value_int(FNW_LONG, INT64_MIN + 1), fnw_value_float(1.5f),
        fnw_value_double(-0.25), fnw_value_int(FNW_CHAR, 0x263a), fnw_value_str("h\xc3\xa9llo"),
        fnw_value_bytes(FNW_BIG_INT, big, sizeof big), fnw_value_bytes(FNW_BIG_DEC, "-12.345", 7),
        fnw_value_int(FNW_SQL_DATE, 19782), fnw_value_int(FNW_SQL_TIME, 86399999),
        fnw_value_int(FNW_SQL_TIMESTAMP, 1700000000123), fnw_value_instant(1700000000, 999999999),
        fnw_value_local_date(-5, 12, 31), local_time(), local_datetime(),
        fnw_value_bytes(FNW_PICKLED_BYTES, "\x80\x04K\x01.", 5),
        fnw_value_bytes(FNW_PRIMITIVE_ARRAY, "\x00\xff\x10", 3),
        ITEMS(FNW_PRIMITIVE_ARRAY, fnw_value_int(FNW_INT, 1), fnw_value_int(FNW_INT, -1)),
        ITEMS(FNW_PRIMITIVE_ARRAY, fnw_value_int(FNW_BOOLEAN, 0), fnw_value_int(FNW_BOOLEAN, 1)),
        ITEMS(FNW_LIST, fnw_value_str("a"), fnw_value_str("")),
        ITEMS(FNW_BASIC_ARRAY, fnw_value_int(FNW_LONG, 5), fnw_value_null(FNW_LONG)),
        ITEMS(FNW_OBJECT_ARRAY, ROW(fnw_value_int(FNW_BOOLEAN, 0), fnw_value_bytes(FNW_BIG_INT, big_neg, 2)),
              fnw_value_null(FNW_ROW)),
        MAP(fnw_value_str("k"), fnw_value_int(FNW_INT, 9), fnw_value_str("n"),
              fnw_value_null(FNW_INT)),
        ITEMS(FNW_TUPLE, fnw_value_int(FNW_INT, 2), fnw_value_str("t"), fnw_value_double(3.0)),
        ROW(fnw_value_int(FNW_INT, 42),
            ROW(fnw_value_str("deep"), ITEMS(FNW_LIST, fnw_value_int(FNW_INT, 7)))));
    return write_record(dir, "rich-row-all-fields.bin", SHAPE_RICH, &row);
}

/* Every field null (the mask only) but for the nested row, whose inner row is null. */
static int rich_nulls(const char *dir)
{
    fnw_value f[28];
    static const fnw_kind kinds[28] = {
        FNW_BOOLEAN, FNW_BYTE, FNW_SHORT, FNW_INT, FNW_LONG, FNW_FLOAT, FNW_DOUBLE, FNW_CHAR, FNW_STRING,
        FNW_BIG_INT, FNW_BIG_DEC, FNW_SQL_DATE, FNW_SQL_TIME, FNW_SQL_TIMESTAMP, FNW_INSTANT,
        FNW_LOCAL_DATE, FNW_LOCAL_TIME, FNW_LOCAL_DATETIME, FNW_PICKLED_BYTES, FNW_PRIMITIVE_ARRAY,
        FNW_PRIMITIVE_ARRAY, FNW_PRIMITIVE_ARRAY, FNW_LIST, FNW_BASIC_ARRAY, FNW_OBJECT_ARRAY, FNW_MAP,
        FNW_TUPLE, FNW_ROW,
    };
    for (int i = 0; i < 28; i++)
        f[i] = fnw_value_null(kinds[i]);
    fnw_value inner[2] = { fnw_value_int(FNW_INT, -1), fnw_value_null(FNW_ROW) };
    f[27] = fnw_value_row(FNW_DELETE, inner, 2);
    fnw_value row = fnw_value_row(FNW_UPDATE_AFTER, f, 28);
    return write_record(dir, "rich-row-nulls-update-after.bin", SHAPE_RICH, &row);
}

static int amplify(const char *dir)
{
    fnw_value empty_tuple = fnw_value_items(FNW_TUPLE, NULL, 0);
    fnw_value row = ITEMS(FNW_LIST, ITEMS(FNW_LIST, empty_tuple, empty_tuple, empty_tuple),
                          fnw_value_items(FNW_LIST, NULL, 0));
    if (write_record(dir, "list-list-tuple-small.bin", SHAPE_AMPLIFY, &row) < 0)
        return -1;
    /* The decode-amplification finding: 40 lists of 1,048,576 empty tuples
     * in 164 bytes, which decode must refuse at its budget. */
    uint8_t p[1 + 4 + 40 * 4];
    p[0] = SHAPE_AMPLIFY;
    fnw_store_be32(p + 1, 40);
    for (int i = 0; i < 40; i++)
        fnw_store_be32(p + 5 + 4 * i, 0x00100000);
    return write_seed(dir, "record", "finding-list-list-tuple-amplification", p, sizeof p);
}

static int maps(const char *dir)
{
    fnw_value inst_row = ROW(fnw_value_instant(-1, 5), local_datetime());
    fnw_value null_row = ROW(fnw_value_null(FNW_INSTANT), fnw_value_null(FNW_LOCAL_DATETIME));
    fnw_value inner = MAP(fnw_value_bytes(FNW_BIG_INT, big, sizeof big),
                            ITEMS(FNW_LIST, inst_row, null_row),
                            fnw_value_bytes(FNW_BIG_INT, "\x0a", 1), fnw_value_null(FNW_LIST),
                            fnw_value_null(FNW_BIG_INT), fnw_value_items(FNW_LIST, NULL, 0));
    fnw_value m1 = MAP(fnw_value_str("x"), inner);
    fnw_value m2 = MAP(fnw_value_local_date(1970, 1, 1),
                         ITEMS(FNW_OBJECT_ARRAY, fnw_value_int(FNW_BOOLEAN, 1), fnw_value_null(FNW_BOOLEAN)),
                         fnw_value_null(FNW_LOCAL_DATE), fnw_value_null(FNW_OBJECT_ARRAY));
    fnw_value m3 = MAP(fnw_value_int(FNW_CHAR, 65),
                         ITEMS(FNW_PRIMITIVE_ARRAY, fnw_value_double(1e300), fnw_value_double(-0.0)));
    fnw_value t = ITEMS(FNW_TUPLE, m1, m2, m3);
    if (write_record(dir, "maps-nested.bin", SHAPE_MAPS, &t) < 0)
        return -1;
    fnw_value none = fnw_value_items(FNW_MAP, NULL, 0);
    fnw_value empty = ITEMS(FNW_TUPLE, none, none, none);
    return write_record(dir, "maps-empty.bin", SHAPE_MAPS, &empty);
}

/* ---- TypeInfo seeds ------------------------------------------------------ */
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo pb_type;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo__Field pb_field;
#define TI(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__##x
#define TIF(x) org__apache__flink__fn_execution__v1__type_info__##x

/* Up to 16 TypeInfo nodes with their sub-messages, built on the stack. */
typedef struct ti_pool {
    pb_type t[16];
    Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo rows[4];
    Org__Apache__Flink__FnExecution__V1__TypeInfo__MapTypeInfo maps[4];
    Org__Apache__Flink__FnExecution__V1__TypeInfo__TupleTypeInfo tuples[4];
    pb_field fields[16];
    pb_field *field_ptrs[16];
    int nt, nrows, nmaps, ntuples, nfields;
} ti_pool;

static pb_type *ti_leaf(ti_pool *tp, int kind)
{
    pb_type *t = &tp->t[tp->nt++];
    TIF(init)(t);
    t->type_name = (Org__Apache__Flink__FnExecution__V1__TypeInfo__TypeName)kind;
    return t;
}

static pb_type *ti_list(ti_pool *tp, int kind, pb_type *elem)
{
    pb_type *t = ti_leaf(tp, kind);
    t->type_info_case = TI(TYPE_INFO_COLLECTION_ELEMENT_TYPE);
    t->collection_element_type = elem;
    return t;
}

static pb_type *ti_map(ti_pool *tp, pb_type *k, pb_type *v)
{
    pb_type *t = ti_leaf(tp, FNW_MAP);
    Org__Apache__Flink__FnExecution__V1__TypeInfo__MapTypeInfo *m = &tp->maps[tp->nmaps++];
    TIF(map_type_info__init)(m);
    m->key_type = k;
    m->value_type = v;
    t->type_info_case = TI(TYPE_INFO_MAP_TYPE_INFO);
    t->map_type_info = m;
    return t;
}

/* A ROW of n fields named by names[i]. */
static pb_type *ti_row(ti_pool *tp, int n, const char *const *names, pb_type **types)
{
    pb_type *t = ti_leaf(tp, FNW_ROW);
    Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo *r = &tp->rows[tp->nrows++];
    TIF(row_type_info__init)(r);
    r->n_fields = (size_t)n;
    r->fields = &tp->field_ptrs[tp->nfields];
    for (int i = 0; i < n; i++) {
        pb_field *f = &tp->fields[tp->nfields];
        TIF(row_type_info__field__init)(f);
        f->field_name = (char *)names[i];
        f->field_type = types[i];
        tp->field_ptrs[tp->nfields++] = f;
    }
    t->type_info_case = TI(TYPE_INFO_ROW_TYPE_INFO);
    t->row_type_info = r;
    return t;
}

static int write_ti(const char *dir, const char *name, const pb_type *t)
{
    size_t n = TIF(get_packed_size)(t);
    uint8_t *p = malloc(n ? n : 1);
    int rc = !p ? -1 : write_seed(dir, "typeinfo", name, p, TIF(pack)(t, p));
    free(p);
    return rc;
}

/* LIST<LIST<...<INT>>> `levels` deep, packed from the inside out by hand
 * (type_name = LIST, collection_element_type = the next level). */
static int write_deep_list(const char *dir, const char *name, int levels)
{
    fnw_buf b;
    fnw_buf_init(&b, 0);
    uint8_t leaf[2] = { 0x08, FNW_INT };
    int rc = fnw_buf_append(&b, leaf, 2);
    for (int i = 1; i < levels && rc == 0; i++) {
        fnw_buf head;
        fnw_buf_init(&head, 0);
        rc = fnw_buf_put_u8(&head, 0x08) | fnw_buf_put_u8(&head, FNW_LIST) | fnw_buf_put_u8(&head, 0x12) |
             fnw_buf_put_varint(&head, b.len) | fnw_buf_append(&head, b.p, b.len);
        fnw_buf_free(&b);
        b = head;
    }
    if (rc == 0)
        rc = write_seed(dir, "typeinfo", name, b.p, b.len);
    fnw_buf_free(&b);
    return rc;
}

static int typeinfo_seeds(const char *dir)
{
    static const char *const prim_names[] = { "id", "name", "score", "ok", "when", "raw" };
    static const char *const nested_names[] = { "key", "inner" };
    ti_pool tp;
    memset(&tp, 0, sizeof tp);
    pb_type *prims[6] = { ti_leaf(&tp, FNW_LONG), ti_leaf(&tp, FNW_STRING), ti_leaf(&tp, FNW_DOUBLE),
                          ti_leaf(&tp, FNW_BOOLEAN), ti_leaf(&tp, FNW_LOCAL_DATETIME),
                          ti_list(&tp, FNW_PRIMITIVE_ARRAY, ti_leaf(&tp, FNW_BYTE)) };
    pb_type *row = ti_row(&tp, 6, prim_names, prims);
    if (write_ti(dir, "row-6-primitives.bin", row) < 0)
        return -1;
    pb_type *nested[2] = { ti_leaf(&tp, FNW_STRING), row };
    if (write_ti(dir, "row-nested-row.bin", ti_row(&tp, 2, nested_names, nested)) < 0)
        return -1;
    memset(&tp, 0, sizeof tp);
    pb_type *m = ti_map(&tp, ti_leaf(&tp, FNW_STRING), ti_list(&tp, FNW_LIST, ti_leaf(&tp, FNW_BIG_INT)));
    if (write_ti(dir, "map-string-list-bigint.bin", m) < 0)
        return -1;
    memset(&tp, 0, sizeof tp);
    pb_type *l = ti_list(&tp, FNW_OBJECT_ARRAY, ti_list(&tp, FNW_BASIC_ARRAY, ti_leaf(&tp, FNW_INSTANT)));
    if (write_ti(dir, "object-array-basic-array-instant.bin", l) < 0)
        return -1;
    memset(&tp, 0, sizeof tp);
    pb_type *tup = ti_leaf(&tp, FNW_TUPLE);
    Org__Apache__Flink__FnExecution__V1__TypeInfo__TupleTypeInfo *tt = &tp.tuples[0];
    pb_type *tfields[2] = { ti_leaf(&tp, FNW_LOCAL_DATE), ti_list(&tp, FNW_LIST, ti_leaf(&tp, FNW_TUPLE)) };
    TIF(tuple_type_info__init)(tt);
    tt->n_field_types = 2;
    tt->field_types = tfields;
    tup->type_info_case = TI(TYPE_INFO_TUPLE_TYPE_INFO);
    tup->tuple_type_info = tt;
    /* the inner TUPLE has no fields: TUPLE<> */
    tfields[1]->collection_element_type->type_info_case = TI(TYPE_INFO_TUPLE_TYPE_INFO);
    tfields[1]->collection_element_type->tuple_type_info = &tp.tuples[1];
    TIF(tuple_type_info__init)(&tp.tuples[1]);
    if (write_ti(dir, "tuple-date-list-empty-tuple.bin", tup) < 0)
        return -1;
    return write_deep_list(dir, "deep-list-64-levels.bin", FNW_TYPE_MAX_DEPTH) < 0 ||
           write_deep_list(dir, "refuse-depth-65.bin", FNW_TYPE_MAX_DEPTH + 1) < 0 ||
           write_deep_list(dir, "refuse-depth-10000", 10000) < 0 ? -1 : 0;
}

/* ---- Avro seeds ----------------------------------------------------------- */
/* The 2-byte schema length, the schema, then the datum's dlen bytes. */
static int avro_seed(const char *dir, const char *name, const char *schema, const char *datum, size_t dlen)
{
    fnw_buf b;
    fnw_buf_init(&b, 0);
    size_t sl = strlen(schema);
    int rc = fnw_buf_put_be16(&b, (uint16_t)sl) | fnw_buf_append(&b, schema, sl) | fnw_buf_append(&b, datum, dlen);
    if (rc == 0)
        rc = write_seed(dir, "avro", name, b.p, b.len);
    fnw_buf_free(&b);
    return rc;
}

#define AVRO_SEED(name, schema, datum) avro_seed(dir, name, schema, datum, sizeof datum - 1)

static int avro_seeds(const char *dir)
{
    return AVRO_SEED("record-primitives.bin",
                     "{\"type\":\"record\",\"name\":\"All\",\"namespace\":\"ex\",\"fields\":["
                     "{\"name\":\"n\",\"type\":\"null\"},{\"name\":\"b\",\"type\":\"boolean\"},"
                     "{\"name\":\"i\",\"type\":\"int\"},{\"name\":\"l\",\"type\":\"long\"},"
                     "{\"name\":\"f\",\"type\":\"float\"},{\"name\":\"d\",\"type\":\"double\"},"
                     "{\"name\":\"s\",\"type\":\"string\"},{\"name\":\"y\",\"type\":\"bytes\"}]}",
                     "\x01" "\x00\x00\x00\x07" "\x00\x00\x00\x00\x00\x00\x01\x00" "\x3f\xc0\x00\x00"
                     "\xbf\xd0\x00\x00\x00\x00\x00\x00" "\x00\x00\x00\x02hi" "\x00\x00\x00\x01\xff") < 0 ||
           AVRO_SEED("record-containers.bin",
                     "{\"type\":\"record\",\"name\":\"C\",\"fields\":["
                     "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"int\"}},"
                     "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"long\"}},"
                     "{\"name\":\"u\",\"type\":[\"null\",\"string\"]},"
                     "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"X\",\"Y\"]}},"
                     "{\"name\":\"x\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":3}}]}",
                     "\x02\x00\x00\x00\x01\x00\x00\x00\x02\x00" "\x01\x00\x00\x00\x01k\x00\x00\x00\x00\x00\x00\x00\x05\x00"
                     "\x00\x00\x00\x01\x00\x00\x00\x00" "\x00\x00\x00\x01" "abc") < 0 ||
           AVRO_SEED("recursive-linked-list.bin",
                     "{\"type\":\"record\",\"name\":\"Node\",\"fields\":[{\"name\":\"v\",\"type\":\"int\"},"
                     "{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}",
                     "\x00\x00\x00\x01\x00\x00\x00\x01" "\x00\x00\x00\x02\x00\x00\x00\x00") < 0 ||
           AVRO_SEED("namespaces-same-short-name.bin",
                     "{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"a\",\"fields\":[{\"name\":\"r\",\"type\":"
                     "{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"b\",\"fields\":[{\"name\":\"z\","
                     "\"type\":{\"type\":\"map\",\"values\":{\"type\":\"array\",\"items\":\"boolean\"}}}]}}]}",
                     "\x01" "\x00\x00\x00\x01k" "\x02\x01\x00\x00" "\x00") < 0 ||
           AVRO_SEED("array-of-strings-empty.bin", "{\"type\":\"array\",\"items\":\"string\"}", "\x00") < 0 ||
           AVRO_SEED("finding-avro-duplicate-name",
                     "{\"type\":\"record\",\"name\":\"N\",\"fields\":[{\"name\":\"f\",\"type\":"
                     "{\"type\":\"fixed\",\"name\":\"N\",\"size\":1}}]}", "\x07") < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_seeds_codecs DIR (writes DIR/record, DIR/typeinfo, DIR/avro)\n");
        return 2;
    }
    const char *dir = argv[1];
    if (rich_full(dir) < 0 || rich_nulls(dir) < 0 || amplify(dir) < 0 || maps(dir) < 0 ||
        typeinfo_seeds(dir) < 0 || avro_seeds(dir) < 0)
        return 1;
    return 0;
}
