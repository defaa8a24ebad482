/* tests/fuzz/gen_seeds_codecs.c — writes the seed corpora of the codec fuzz
 * targets (fuzz_record.c, fuzz_typeinfo.c, fuzz_avro.c, fuzz_pickle_const.c,
 * fuzz_schema.c) with the codecs' own encoders, so each seed is a valid
 * input the way the worker meets it:
 *
 *   gen_seeds_codecs DIR     writes DIR/record/, typeinfo/, avro/, pickle_const/, schema/
 *
 * Record seeds are one shape byte (record_shapes.h) then one value encoded
 * by fnw_ser_encode; TypeInfo seeds are TypeInfo messages packed by
 * protobuf-c; Avro seeds are a 2-byte big-endian schema length, the schema
 * JSON, then one datum in Flink's Avro encoding (codecs/avro_program.h).
 * The make fuzz-replay target builds this program so it keeps compiling; the
 * committed corpora were written by it (see tests/fuzz/README.md).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codecs/bytes.h"
#include "codecs/ser.h"
#include "org/apache/flink/fn_execution/v1/flink-fn-execution.pb-c.h"
#include "tests/fuzz/record_shapes.h"

/* DIR/sub, made if missing. */
static int mkdir_sub(const char *dir, const char *sub)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    if (mkdir(path, 0777) < 0 && errno != EEXIST) {
        fprintf(stderr, "gen_seeds_codecs: cannot make %s\n", path);
        return -1;
    }
    return 0;
}

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


/* ---- SQL constant seeds (fuzz_pickle_const.c) ---------------------------- */
/* Real inputConstant bytes (tests/unit/codecs/test_pickle_const.c, written
 * by Flink 2.3's planner and PythonBridgeUtils.pickleValue), one of each
 * opcode shape, and near misses the reader must refuse. */
static const struct {
    const char *name, *hex;
} const_seeds[] = {
    { "tinyint-7.bin", "0080024b072e" },
    { "smallint-300.bin", "0080024d2c012e" },
    { "int-min.bin", "0080024a000000802e" },
    { "bigint-2p31.bin", "00800249323134373438333634380a2e" },
    { "bigint-min.bin", "008002492d393232333337323033363835343737353830380a2e" },
    { "float-0-1.bin", "008002473fb99999a00000002e" },
    { "double-nan.bin", "008002477ff80000000000002e" },
    { "decimal-1-50.bin", "00800263646563696d616c0a446563696d616c0a5804000000312e35307100855271012e" },
    { "decimal-1e3.bin", "00800263646563696d616c0a446563696d616c0a580400000031452b337100855271012e" },
    { "decimal-38.bin",
      "00800263646563696d616c0a446563696d616c0a58260000003132333435363738393031323334353637383930313233"
      "3435363738393031323334353637387100855271012e" },
    { "bool-true.bin", "008002882e" },
    { "bool-false.bin", "008002892e" },
    { "char-empty.bin", "008002580000000071002e" },
    { "char-utf8.bin", "008002580f00000068c3a96c6c6f20e282ac20f09f988071002e" },
    { "null.bin", "0080024e2e" },
    { "date-2024-01-02.bin", "0180024d0c4d2e" },
    { "date-1969-12-31.bin", "0180024affffffff2e" },
    { "time-12-34-56-789.bin", "0280024a952cb3022e" },
    { "timestamp-2024.bin", "03800249313730343136343634353637380a2e" },
    { "timestamp-1960.bin", "038002492d3331353631393230303030300a2e" },
    { "bytes.bin",
      "008002635f5f6275696c74696e5f5f0a6279746561727261790a58040000000102c3bf710058070000006c6174696e2d"
      "317101865271022e" },
    { "refuse-type-byte-4.bin", "0480024b012e" },
    { "refuse-protocol-3.bin", "0080034b012e" },
    { "refuse-date-string.bin", "01800258010000007871002e" },
    { "refuse-timestamp-none.bin", "0380024e2e" },
    { "refuse-time-86400000.bin", "0280024a005c26052e" },
    { "refuse-long1.bin", "0080028a01052e" },
    { "refuse-int-2p63.bin", "00800249393232333337323033363835343737353830380a2e" },
    { "refuse-int-leading-zero.bin", "0080024930310a2e" },
    { "refuse-binunicode-too-long.bin", "00800258ffffffff2e" },
    { "refuse-not-utf8.bin", "0080025802000000c32871002e" },
    { "refuse-global-os-system.bin", "008002636f730a73797374656d0a5802000000696471007100855271012e" },
    { "refuse-decimal-text.bin", "00800263646563696d616c0a446563696d616c0a5803000000312e2e7100855271012e" },
    { "refuse-bytearray-utf8.bin",
      "008002635f5f6275696c74696e5f5f0a6279746561727261790a5802000000c4807100580500000075746638007101865271022e" },
    { "refuse-after-stop.bin", "0080024b012e00" },
};

static int unhex(const char *h, uint8_t *out, size_t cap, size_t *n)
{
    size_t len = strlen(h) / 2;
    if (len > cap)
        return -1;
    for (size_t i = 0; i < len; i++) {
        unsigned b;
        if (sscanf(h + 2 * i, "%2x", &b) != 1)
            return -1;
        out[i] = (uint8_t)b;
    }
    *n = len;
    return 0;
}

static int pickle_const_seeds(const char *dir)
{
    uint8_t buf[256];
    size_t n;
    for (size_t i = 0; i < sizeof const_seeds / sizeof const_seeds[0]; i++)
        if (unhex(const_seeds[i].hex, buf, sizeof buf, &n) < 0 ||
            write_seed(dir, "pickle_const", const_seeds[i].name, buf, n) < 0)
            return -1;
    return 0;
}

/* ---- Table Schema seeds (fuzz_schema.c) ------------------------------------ */
/* Byte 0 picks the message (0: Schema, 1: Schema.FieldType), then its
 * bytes packed by protobuf-c. The messages are calloc'd and left to the
 * process's end. */
typedef Org__Apache__Flink__FnExecution__V1__Schema pb_schema;
typedef Org__Apache__Flink__FnExecution__V1__Schema__FieldType pb_ft;
#define SCH(x) org__apache__flink__fn_execution__v1__schema__##x
#define SN(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__SCHEMA__TYPE_NAME__##x
#define FTI(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__SCHEMA__FIELD_TYPE__TYPE_INFO_##x

static void *must(void *p)
{
    if (!p) {
        fprintf(stderr, "gen_seeds_codecs: out of memory\n");
        exit(1);
    }
    return p;
}

static pb_ft *ft(int name)
{
    pb_ft *t = must(calloc(1, sizeof *t));
    SCH(field_type__init)(t);
    t->type_name = name;
    t->nullable = 1;
    return t;
}

static pb_ft *ft_decimal(int p, int s)
{
    pb_ft *t = ft(SN(DECIMAL));
    Org__Apache__Flink__FnExecution__V1__Schema__DecimalInfo *d = must(calloc(1, sizeof *d));
    SCH(decimal_info__init)(d);
    d->precision = p;
    d->scale = s;
    t->type_info_case = FTI(DECIMAL_INFO);
    t->decimal_info = d;
    return t;
}

static pb_ft *ft_timestamp(int name, int p)
{
    pb_ft *t = ft(name);
    if (name == SN(TIMESTAMP)) {
        Org__Apache__Flink__FnExecution__V1__Schema__TimestampInfo *i = must(calloc(1, sizeof *i));
        SCH(timestamp_info__init)(i);
        i->precision = p;
        t->type_info_case = FTI(TIMESTAMP_INFO);
        t->timestamp_info = i;
    } else {
        Org__Apache__Flink__FnExecution__V1__Schema__LocalZonedTimestampInfo *i = must(calloc(1, sizeof *i));
        SCH(local_zoned_timestamp_info__init)(i);
        i->precision = p;
        t->type_info_case = FTI(LOCAL_ZONED_TIMESTAMP_INFO);
        t->local_zoned_timestamp_info = i;
    }
    return t;
}

static pb_ft *ft_array(pb_ft *elem)
{
    pb_ft *t = ft(SN(BASIC_ARRAY));
    t->type_info_case = FTI(COLLECTION_ELEMENT_TYPE);
    t->collection_element_type = elem;
    return t;
}

static pb_ft *ft_map(pb_ft *k, pb_ft *v)
{
    pb_ft *t = ft(SN(MAP));
    Org__Apache__Flink__FnExecution__V1__Schema__MapInfo *m = must(calloc(1, sizeof *m));
    SCH(map_info__init)(m);
    m->key_type = k;
    m->value_type = v;
    t->type_info_case = FTI(MAP_INFO);
    t->map_info = m;
    return t;
}

/* A Schema of n fields named names[i]. */
static pb_schema *schema(int n, const char *const *names, pb_ft **types)
{
    pb_schema *s = must(calloc(1, sizeof *s));
    SCH(init)(s);
    s->n_fields = (size_t)n;
    s->fields = must(calloc((size_t)n + 1, sizeof *s->fields));
    for (int i = 0; i < n; i++) {
        Org__Apache__Flink__FnExecution__V1__Schema__Field *f = must(calloc(1, sizeof *f));
        SCH(field__init)(f);
        f->name = (char *)names[i];
        f->type = types[i];
        s->fields[i] = f;
    }
    return s;
}

static pb_ft *ft_row(int n, const char *const *names, pb_ft **types)
{
    pb_ft *t = ft(SN(ROW));
    t->type_info_case = FTI(ROW_SCHEMA);
    t->row_schema = schema(n, names, types);
    return t;
}

static int write_pb(const char *dir, const char *name, uint8_t which, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *p = must(malloc(n + 1));
    p[0] = which;
    protobuf_c_message_pack(m, p + 1);
    int rc = write_seed(dir, "schema", name, p, n + 1);
    free(p);
    return rc;
}

#define WRITE_SCHEMA(name, s) write_pb(dir, name, 0, &(s)->base)
#define WRITE_FT(name, t) write_pb(dir, name, 1, &(t)->base)

static pb_ft *deep_array(int levels)
{
    pb_ft *t = ft(SN(INT));
    for (int i = 1; i < levels; i++)
        t = ft_array(t);
    return t;
}

static int schema_seeds(const char *dir)
{
    static const char *const all_names[] = { "ti", "si", "i", "bi", "dec", "f", "d", "dt", "tm", "ts3",
                                             "ts9", "b", "bin", "vbin", "c", "vc", "ltz", "dec38" };
    pb_ft *all[18] = { ft(SN(TINYINT)), ft(SN(SMALLINT)), ft(SN(INT)), ft(SN(BIGINT)), ft_decimal(10, 2),
                       ft(SN(FLOAT)), ft(SN(DOUBLE)), ft(SN(DATE)), ft(SN(TIME)),
                       ft_timestamp(SN(TIMESTAMP), 3), ft_timestamp(SN(TIMESTAMP), 9), ft(SN(BOOLEAN)),
                       ft(SN(BINARY)), ft(SN(VARBINARY)), ft(SN(CHAR)), ft(SN(VARCHAR)),
                       ft_timestamp(SN(LOCAL_ZONED_TIMESTAMP), 6), ft_decimal(38, 18) };
    static const char *const inner_names[] = { "a", "b", "c" };
    pb_ft *inner[3] = { ft(SN(INT)), ft(SN(VARCHAR)), ft_array(ft(SN(DOUBLE))) };
    static const char *const nest_names[] = { "items", "id" };
    pb_ft *nest[2] = { ft_array(ft_row(3, inner_names, inner)), ft(SN(BIGINT)) };
    static const char *const map_names[] = { "m", "n" };
    static const char *const x_name[] = { "x" };
    pb_ft *xrow[1] = { ft(SN(BIGINT)) };
    pb_ft *maps[2] = { ft_map(ft(SN(VARCHAR)), ft_row(1, x_name, xrow)),
                       ft_map(ft(SN(INT)), ft_array(ft_decimal(38, 18))) };
    static const char *const one[] = { "f" };
    pb_ft *multiset[1] = { ft(SN(MULTISET)) };
    pb_ft *nul[1] = { ft(SN(NULL)) };
    pb_ft *dec0[1] = { ft_decimal(0, 0) };
    pb_ft *dec_no_info[1] = { ft(SN(DECIMAL)) };
    pb_ft *ts10[1] = { ft_timestamp(SN(TIMESTAMP), 10) };
    pb_ft *unknown[1] = { ft(99) };
    pb_ft *map_no_value = ft_map(ft(SN(INT)), NULL);
    pb_ft *zoned = ft(SN(ZONED_TIMESTAMP));
    return WRITE_SCHEMA("every-sql-type.bin", schema(18, all_names, all)) < 0 ||
           WRITE_SCHEMA("array-of-row.bin", schema(2, nest_names, nest)) < 0 ||
           WRITE_SCHEMA("maps.bin", schema(2, map_names, maps)) < 0 ||
           WRITE_SCHEMA("empty-schema.bin", schema(0, NULL, NULL)) < 0 ||
           WRITE_FT("fieldtype-map-varchar-row.bin", maps[0]) < 0 ||
           WRITE_FT("fieldtype-array-row.bin", nest[0]) < 0 ||
           WRITE_FT("fieldtype-array-64-deep.bin", deep_array(FNW_TYPE_MAX_DEPTH)) < 0 ||
           WRITE_SCHEMA("refuse-multiset.bin", schema(1, one, multiset)) < 0 ||
           WRITE_SCHEMA("refuse-null-type.bin", schema(1, one, nul)) < 0 ||
           WRITE_SCHEMA("refuse-decimal-precision-0.bin", schema(1, one, dec0)) < 0 ||
           WRITE_SCHEMA("refuse-decimal-without-info.bin", schema(1, one, dec_no_info)) < 0 ||
           WRITE_SCHEMA("refuse-timestamp-10.bin", schema(1, one, ts10)) < 0 ||
           WRITE_SCHEMA("refuse-unknown-type-99.bin", schema(1, one, unknown)) < 0 ||
           WRITE_FT("refuse-map-without-value.bin", map_no_value) < 0 ||
           WRITE_FT("refuse-zoned-timestamp.bin", zoned) < 0 ||
           WRITE_FT("refuse-array-65-deep.bin", deep_array(FNW_TYPE_MAX_DEPTH + 1)) < 0 ||
           WRITE_FT("refuse-array-10000-deep.bin", deep_array(10000)) < 0
        ? -1
        : 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_seeds_codecs DIR (writes DIR/record, DIR/typeinfo, DIR/avro, "
                        "DIR/pickle_const, DIR/schema)\n");
        return 2;
    }
    const char *dir = argv[1];
    if (rich_full(dir) < 0 || rich_nulls(dir) < 0 || amplify(dir) < 0 || maps(dir) < 0 ||
        typeinfo_seeds(dir) < 0 || avro_seeds(dir) < 0 || mkdir_sub(dir, "pickle_const") < 0 ||
        pickle_const_seeds(dir) < 0 || mkdir_sub(dir, "schema") < 0 || schema_seeds(dir) < 0)
        return 1;
    return 0;
}
