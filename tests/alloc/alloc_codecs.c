/* tests/alloc/alloc_codecs.c — allocation failures in the codecs: a rich
 * row type converted from its TypeInfo message, its skip program compiled,
 * one encoded row skipped, decoded into an arena that must grow, and
 * encoded again into a buffer that must grow (scenario codecs); the same
 * for an AVRO record type from its schema text (codecs_avro). Every
 * failure ends in an error with a message; a success reproduces the input
 * bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/ser.h"
#include "tests/alloc/alloc_run.h"
#include "base/pb.h"

typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo RowTI;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo__Field FieldTI;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__MapTypeInfo MapTI;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__TupleTypeInfo TupleTI;
#define TI_NAME(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_NAME__##x
#define TI_CASE(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_##x

/* ---- the TypeInfo: ROW<id LONG, tags LIST<STRING>, attrs MAP<STRING, BIG_INT>,
 *      inner ROW<x DOUBLE, pair TUPLE<INT, STRING>>, codes PRIMITIVE_ARRAY<SHORT>> */

static pb_TypeInfo ti_long, ti_str, ti_bigint, ti_double, ti_int, ti_short;
static pb_TypeInfo ti_tags, ti_attrs, ti_pair, ti_inner, ti_codes, ti_row;
static MapTI attrs_map;
static TupleTI pair_tuple;
static pb_TypeInfo *pair_fields[2];
static RowTI inner_row, outer_row;
static FieldTI inner_f[2], outer_f[5];
static FieldTI *inner_fp[2], *outer_fp[5];

static void leaf(pb_TypeInfo *t, int name)
{
    pb_TypeInfo init = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__INIT;
    *t = init;
    t->type_name = name;
}

static void row_of(pb_TypeInfo *t, RowTI *r, FieldTI *f, FieldTI **fp, size_t n,
                   const char *const *names, pb_TypeInfo *const *types)
{
    RowTI rinit = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__ROW_TYPE_INFO__INIT;
    FieldTI finit = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__ROW_TYPE_INFO__FIELD__INIT;
    leaf(t, TI_NAME(ROW));
    *r = rinit;
    for (size_t i = 0; i < n; i++) {
        f[i] = finit;
        f[i].field_name = (char *)names[i];
        f[i].field_type = types[i];
        fp[i] = &f[i];
    }
    r->n_fields = n;
    r->fields = fp;
    t->type_info_case = TI_CASE(ROW_TYPE_INFO);
    t->row_type_info = r;
}

static const pb_TypeInfo *rich_typeinfo(void)
{
    leaf(&ti_long, TI_NAME(LONG));
    leaf(&ti_str, TI_NAME(STRING));
    leaf(&ti_bigint, TI_NAME(BIG_INT));
    leaf(&ti_double, TI_NAME(DOUBLE));
    leaf(&ti_int, TI_NAME(INT));
    leaf(&ti_short, TI_NAME(SHORT));
    leaf(&ti_tags, TI_NAME(LIST));
    ti_tags.type_info_case = TI_CASE(COLLECTION_ELEMENT_TYPE);
    ti_tags.collection_element_type = &ti_str;
    leaf(&ti_codes, TI_NAME(PRIMITIVE_ARRAY));
    ti_codes.type_info_case = TI_CASE(COLLECTION_ELEMENT_TYPE);
    ti_codes.collection_element_type = &ti_short;
    MapTI minit = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__MAP_TYPE_INFO__INIT;
    attrs_map = minit;
    attrs_map.key_type = &ti_str;
    attrs_map.value_type = &ti_bigint;
    leaf(&ti_attrs, TI_NAME(MAP));
    ti_attrs.type_info_case = TI_CASE(MAP_TYPE_INFO);
    ti_attrs.map_type_info = &attrs_map;
    TupleTI tinit = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TUPLE_TYPE_INFO__INIT;
    pair_tuple = tinit;
    pair_fields[0] = &ti_int;
    pair_fields[1] = &ti_str;
    pair_tuple.n_field_types = 2;
    pair_tuple.field_types = pair_fields;
    leaf(&ti_pair, TI_NAME(TUPLE));
    ti_pair.type_info_case = TI_CASE(TUPLE_TYPE_INFO);
    ti_pair.tuple_type_info = &pair_tuple;
    static const char *const inner_names[] = {"x", "pair"};
    pb_TypeInfo *inner_types[] = {&ti_double, &ti_pair};
    row_of(&ti_inner, &inner_row, inner_f, inner_fp, 2, inner_names, inner_types);
    static const char *const outer_names[] = {"id", "tags", "attrs", "inner", "codes"};
    pb_TypeInfo *outer_types[] = {&ti_long, &ti_tags, &ti_attrs, &ti_inner, &ti_codes};
    row_of(&ti_row, &outer_row, outer_f, outer_fp, 5, outer_names, outer_types);
    return &ti_row;
}

/* ---- the row: 24 tags, 12 attributes, so arena and buffer both grow ---- */

#define N_TAGS 24
#define N_ATTRS 12
#define N_CODES 9

typedef struct fixture {
    const pb_TypeInfo *ti;
    uint8_t *in;             /* the encoded row */
    size_t n_in;
    /* what run() builds */
    fnw_type *t;
    fnw_skip_program *sp;
    fnw_arena arena;
    fnw_buf out;
} fixture;

static int encode_rich_row(const fnw_type *t, fnw_buf *b)
{
    static char tag_text[N_TAGS][16], key_text[N_ATTRS][16];
    fnw_value tags[N_TAGS], kv[2 * N_ATTRS], codes[N_CODES];
    static const uint8_t mag[3] = {0x01, 0x00, 0x7f};
    for (int i = 0; i < N_TAGS; i++) {
        snprintf(tag_text[i], sizeof tag_text[i], "tag-%d", i);
        tags[i] = fnw_value_str(tag_text[i]);
    }
    for (int i = 0; i < N_ATTRS; i++) {
        snprintf(key_text[i], sizeof key_text[i], "key-%d", i);
        kv[2 * i] = fnw_value_str(key_text[i]);
        kv[2 * i + 1] = i % 3 ? fnw_value_bytes(FNW_BIG_INT, mag, (uint32_t)(1 + i % 3))
                              : fnw_value_null(FNW_BIG_INT);
    }
    for (int i = 0; i < N_CODES; i++)
        codes[i] = fnw_value_int(FNW_SHORT, i * 7);
    fnw_value pair[2] = {fnw_value_int(FNW_INT, -3), fnw_value_str("second")};
    fnw_value inner[2] = {fnw_value_double(2.5), fnw_value_items(FNW_TUPLE, pair, 2)};
    fnw_value f[5] = {
        fnw_value_int(FNW_LONG, 1234567890123), fnw_value_items(FNW_LIST, tags, N_TAGS),
        fnw_value_items(FNW_MAP, kv, N_ATTRS), fnw_value_row(FNW_INSERT, inner, 2),
        fnw_value_items(FNW_PRIMITIVE_ARRAY, codes, N_CODES),
    };
    fnw_value row = fnw_value_row(FNW_UPDATE_AFTER, f, 5);
    fnw_error err;
    if (fnw_ser_encode(t, &row, b, &err) < 0) {
        fprintf(stderr, "encoding the input row: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void *codecs_setup(void)
{
    fixture *fx = calloc(1, sizeof *fx);
    fnw_type *t = NULL;
    fnw_error err;
    fx->ti = rich_typeinfo();
    if (fnw_typeinfo_to_type(fx->ti, &t, &err) < 0) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return NULL;
    }
    fnw_buf b;
    fnw_buf_init(&b, 0);
    int rc = encode_rich_row(t, &b);
    fnw_type_free(t);
    if (rc < 0)
        return NULL;
    fx->in = fnw_buf_steal(&b, &fx->n_in);
    fnw_arena_init(&fx->arena, 64, 1 << 20);
    fnw_buf_init(&fx->out, 0);
    return fx;
}

static int codecs_run(void *p, fnw_error *err)
{
    fixture *fx = p;
    size_t used;
    fnw_value v;
    if (fnw_typeinfo_to_type(fx->ti, &fx->t, err) < 0)
        return -1;
    fx->sp = fnw_skip_program_new(fx->t, err);
    if (!fx->sp)
        return -1;
    if (fnw_skip_program_run(fx->sp, fx->in, fx->n_in, &used, err) < 0)
        return -1;
    if (fnw_ser_decode(fx->t, fx->in, fx->n_in, &fx->arena, &v, &used, err) < 0)
        return -1;
    return fnw_ser_encode(fx->t, &v, &fx->out, err);
}

static int codecs_verify(void *p)
{
    fixture *fx = p;
    return fx->out.len == fx->n_in && memcmp(fx->out.p, fx->in, fx->n_in) == 0;
}

static void codecs_teardown(void *p)
{
    fixture *fx = p;
    fnw_skip_program_free(fx->sp);
    fnw_type_free(fx->t);
    fnw_arena_free(&fx->arena);
    fnw_buf_free(&fx->out);
    free(fx->in);
    free(fx);
}

static const alloc_scenario codecs = {
    "codecs", codecs_setup, codecs_run, codecs_verify, codecs_teardown,
};

/* ---- AVRO: Ev{a int, s string, u [null, long], arr array<int>, m map<P{x int}>} ---- */

static const char ev_schema[] =
    "{\"type\":\"record\",\"name\":\"Ev\",\"fields\":["
    "{\"name\":\"a\",\"type\":\"int\"},{\"name\":\"s\",\"type\":\"string\"},"
    "{\"name\":\"u\",\"type\":[\"null\",\"long\"]},"
    "{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"items\":\"int\"}},"
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":{\"type\":\"record\",\"name\":\"P\","
    "\"fields\":[{\"name\":\"x\",\"type\":\"int\"}]}}}]}";

/* {a: 42, s: "hi", u: -3, arr: [1, 2, 3], m: {"a": {x: 1}}} in Flink's AVRO encoding */
static const uint8_t ev_datum[] = {
    0x00, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x02, 'h', 'i',
    0x00, 0x00, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd,
    0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 'a', 0x00, 0x00, 0x00, 0x01, 0x00,
};

static void *avro_setup(void)
{
    fixture *fx = calloc(1, sizeof *fx);
    fx->n_in = sizeof ev_datum;
    fx->in = malloc(fx->n_in);
    memcpy(fx->in, ev_datum, fx->n_in);
    fnw_arena_init(&fx->arena, 64, 1 << 20);
    fnw_buf_init(&fx->out, 0);
    return fx;
}

static int avro_run(void *p, fnw_error *err)
{
    fixture *fx = p;
    size_t used;
    fnw_value v;
    if (!(fx->t = fnw_type_new(FNW_AVRO)))
        return fnw_error_set(err, "out of memory building a type");
    if (fnw_type_set_avro_schema(fx->t, ev_schema, err) < 0)
        return -1;
    if (!(fx->sp = fnw_skip_program_new(fx->t, err)))
        return -1;
    if (fnw_skip_program_run(fx->sp, fx->in, fx->n_in, &used, err) < 0)
        return -1;
    if (fnw_ser_decode(fx->t, fx->in, fx->n_in, &fx->arena, &v, &used, err) < 0)
        return -1;
    return fnw_ser_encode(fx->t, &v, &fx->out, err);
}

static const alloc_scenario codecs_avro = {
    "codecs_avro", avro_setup, avro_run, codecs_verify, codecs_teardown,
};

int main(int argc, char **argv)
{
    const alloc_scenario *all[] = {&codecs, &codecs_avro};
    return alloc_main(all, sizeof all / sizeof all[0], argc, argv);
}
