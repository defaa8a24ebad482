/* codecs/type.c — building, copying, comparing and printing fnw_type trees
 * (see type.h). Types are built once per descriptor, so plain malloc. */
#include "codecs/type.h"

#include <avro.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/avro_program.h"
#include "codecs/avro_names.h"

static const char *const kind_names[FNW_KIND_COUNT] = {
    "ROW",
    "STRING",
    "BYTE",
    "BOOLEAN",
    "SHORT",
    "INT",
    "LONG",
    "FLOAT",
    "DOUBLE",
    "CHAR",
    "BIG_INT",
    "BIG_DEC",
    "SQL_DATE",
    "SQL_TIME",
    "SQL_TIMESTAMP",
    "BASIC_ARRAY",
    "PRIMITIVE_ARRAY",
    "TUPLE",
    "LIST",
    "MAP",
    "PICKLED_BYTES",
    "OBJECT_ARRAY",
    "INSTANT",
    "AVRO",
    "LOCAL_DATE",
    "LOCAL_TIME",
    "LOCAL_DATETIME",
    "LOCAL_ZONED_TIMESTAMP",
};

const char *fnw_kind_name(fnw_kind k)
{
    if ((unsigned)k >= FNW_KIND_COUNT)
        return "UNKNOWN";
    return kind_names[k];
}

fnw_type *fnw_type_new(fnw_kind kind)
{
    if ((unsigned)kind >= FNW_KIND_COUNT)
        return NULL;
    fnw_type *t = calloc(1, sizeof *t);
    if (t)
        t->kind = kind;
    return t;
}

/* Children a kind takes: -1 = any number. */
static int max_children(fnw_kind k)
{
    switch (k) {
    case FNW_ROW:
    case FNW_TUPLE:
        return -1;
    case FNW_BASIC_ARRAY:
    case FNW_PRIMITIVE_ARRAY:
    case FNW_OBJECT_ARRAY:
    case FNW_LIST:
        return 1;
    case FNW_MAP:
        return 2;
    default:
        return 0;
    }
}

/* Makes room for at least n children (and names, for a ROW), doubling, so
 * that a wide row is built in linear time. */
static int grow_children(fnw_type *t, uint32_t n)
{
    size_t cap = t->cap ? (size_t)t->cap * 2 : 4;
    if (cap < n)
        cap = n;
    fnw_type **kids = realloc(t->children, cap * sizeof *kids);
    if (!kids)
        return -1;
    t->children = kids;
    if (t->kind == FNW_ROW) {
        char **names = realloc(t->names, cap * sizeof *names);
        if (!names)
            return -1;
        t->names = names;
    }
    t->cap = (uint32_t)cap;
    return 0;
}

int fnw_type_add_child(fnw_type *t, fnw_type *child, const char *name, fnw_error *err)
{
    if (!t || !child)
        return fnw_error_set(err, "type builder: missing %s", t ? "child type" : "parent type");
    int max = max_children(t->kind);
    if (max >= 0 && t->nchildren >= (uint32_t)max)
        return fnw_error_set(err, "type builder: %s takes %d child type%s", fnw_kind_name(t->kind), max,
                             max == 1 ? "" : "s");
    if (t->nchildren >= INT32_MAX)
        return fnw_error_set(err, "type builder: too many fields");
    uint32_t n = t->nchildren + 1;
    if (n > t->cap && grow_children(t, n) < 0)
        return fnw_error_set(err, "out of memory building a type");
    if (t->kind == FNW_ROW) {
        t->names[n - 1] = strdup(name ? name : "");
        if (!t->names[n - 1])
            return fnw_error_set(err, "out of memory building a type");
    }
    t->children[n - 1] = child;
    t->nchildren = n;
    return 0;
}

static void avro_release(fnw_type *t)
{
    fnw_avro_program_free(t->avro_program);
    if (t->avro_schema)
        avro_schema_decref((avro_schema_t)t->avro_schema);
    free(t->avro_schema_json);
    t->avro_program = NULL;
    t->avro_schema = NULL;
    t->avro_schema_json = NULL;
}

int fnw_type_set_avro_schema(fnw_type *t, const char *json, fnw_error *err)
{
    if (!t || t->kind != FNW_AVRO)
        return fnw_error_set(err, "an Avro schema belongs only to an AVRO type");
    if (!json || !*json)
        return fnw_error_set(err, "AVRO type without a schema (AvroTypeInfo.schema is empty)");
    if (fnw_avro_names_check(json, strlen(json), err) < 0)
        return -1;
    avro_schema_t schema = NULL;
    if (avro_schema_from_json_length(json, strlen(json), &schema) != 0 || !schema) {
        const char *why = avro_strerror();
        return fnw_error_set(err, "invalid Avro schema: %s", why && *why ? why : "parse error");
    }
    fnw_avro_program *prog = fnw_avro_program_new(schema, err);
    if (!prog) {
        avro_schema_decref(schema);
        return -1;
    }
    char *copy = strdup(json);
    if (!copy) {
        fnw_avro_program_free(prog);
        avro_schema_decref(schema);
        return fnw_error_set(err, "out of memory building a type");
    }
    avro_release(t);
    t->avro_schema_json = copy;
    t->avro_schema = schema;
    t->avro_program = prog;
    return 0;
}

int fnw_type_set_precision(fnw_type *t, int32_t precision, int32_t scale, fnw_error *err)
{
    if (!t)
        return fnw_error_set(err, "type builder: missing type");
    switch (t->kind) {
    case FNW_SQL_TIMESTAMP:
    case FNW_LOCAL_ZONED_TIMESTAMP:
        if (precision < 0 || precision > FNW_TYPE_MAX_TIMESTAMP_PRECISION || scale != 0)
            return fnw_error_set(err, "%s precision %d is not in 0..%d",
                                 t->kind == FNW_SQL_TIMESTAMP ? "TIMESTAMP" : "TIMESTAMP_LTZ", (int)precision,
                                 FNW_TYPE_MAX_TIMESTAMP_PRECISION);
        break;
    case FNW_BIG_DEC:
        if (precision == 0 && scale == 0)
            break;
        if (precision < 1 || precision > FNW_TYPE_MAX_DECIMAL_PRECISION)
            return fnw_error_set(err, "DECIMAL precision %d is not in 1..%d", (int)precision,
                                 FNW_TYPE_MAX_DECIMAL_PRECISION);
        if (scale < 0 || scale > precision)
            return fnw_error_set(err, "DECIMAL(%d, %d): the scale is not in 0..%d", (int)precision,
                                 (int)scale, (int)precision);
        break;
    default:
        if (precision || scale)
            return fnw_error_set(err, "type builder: %s takes no precision or scale", fnw_kind_name(t->kind));
        break;
    }
    t->precision = precision;
    t->scale = scale;
    return 0;
}

void fnw_type_free(fnw_type *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->nchildren; i++) {
        fnw_type_free(t->children[i]);
        if (t->names)
            free(t->names[i]);
    }
    free(t->children);
    free(t->names);
    avro_release(t);
    free(t);
}

fnw_type *fnw_type_clone(const fnw_type *t)
{
    if (!t)
        return NULL;
    fnw_type *c = fnw_type_new(t->kind);
    if (!c)
        return NULL;
    c->precision = t->precision;
    c->scale = t->scale;
    for (uint32_t i = 0; i < t->nchildren; i++) {
        fnw_type *k = fnw_type_clone(t->children[i]);
        if (!k || fnw_type_add_child(c, k, t->names ? t->names[i] : NULL, NULL) < 0) {
            fnw_type_free(k);
            fnw_type_free(c);
            return NULL;
        }
    }
    if (t->avro_schema_json && fnw_type_set_avro_schema(c, t->avro_schema_json, NULL) < 0) {
        fnw_type_free(c);
        return NULL;
    }
    return c;
}

static int type_equal(const fnw_type *a, const fnw_type *b, int names)
{
    if (a == b)
        return 1;
    if (!a || !b || a->kind != b->kind || a->nchildren != b->nchildren || a->precision != b->precision ||
        a->scale != b->scale)
        return 0;
    if (a->kind == FNW_AVRO) {
        if (a->avro_schema && b->avro_schema) {
            if (!avro_schema_equal((avro_schema_t)a->avro_schema, (avro_schema_t)b->avro_schema))
                return 0;
        } else if (strcmp(a->avro_schema_json ? a->avro_schema_json : "",
                          b->avro_schema_json ? b->avro_schema_json : "") != 0) {
            return 0;
        }
    }
    for (uint32_t i = 0; i < a->nchildren; i++) {
        if (names && a->kind == FNW_ROW && strcmp(a->names[i], b->names[i]) != 0)
            return 0;
        if (!type_equal(a->children[i], b->children[i], names))
            return 0;
    }
    return 1;
}

int fnw_type_equal(const fnw_type *a, const fnw_type *b)
{
    return type_equal(a, b, 1);
}

int fnw_type_equal_ignoring_names(const fnw_type *a, const fnw_type *b)
{
    return type_equal(a, b, 0);
}

int fnw_type_depth(const fnw_type *t)
{
    if (!t)
        return 0;
    int d = 0;
    for (uint32_t i = 0; i < t->nchildren; i++) {
        int c = fnw_type_depth(t->children[i]);
        if (c > d)
            d = c;
    }
    return d + 1;
}

/* ---- formatting ----------------------------------------------------------- */

typedef struct out {
    char *buf;
    size_t n, len;
} out;

__attribute__((format(printf, 2, 3))) static void emit(out *o, const char *fmt, ...)
{
    if (o->n == 0 || o->len >= o->n - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(o->buf + o->len, o->n - o->len, fmt, ap);
    va_end(ap);
    if (w < 0)
        return;
    o->len += (size_t)w;
    if (o->len > o->n - 1)
        o->len = o->n - 1;
}

static void format_type(out *o, const fnw_type *t)
{
    if (!t) {
        emit(o, "?");
        return;
    }
    if (t->kind == FNW_LOCAL_ZONED_TIMESTAMP) {
        emit(o, "TIMESTAMP_LTZ(%d)", (int)t->precision);
        return;
    }
    if (t->kind == FNW_SQL_TIMESTAMP && t->precision) {
        emit(o, "TIMESTAMP(%d)", (int)t->precision);
        return;
    }
    if (t->kind == FNW_BIG_DEC && t->precision) {
        emit(o, "DECIMAL(%d, %d)", (int)t->precision, (int)t->scale);
        return;
    }
    emit(o, "%s", fnw_kind_name(t->kind));
    if (t->kind == FNW_AVRO && t->avro_schema) {
        const char *name = is_avro_named_type((avro_schema_t)t->avro_schema)
                               ? avro_schema_name((avro_schema_t)t->avro_schema)
                               : NULL;
        emit(o, "<%s>", name ? name : avro_schema_type_name((avro_schema_t)t->avro_schema));
        return;
    }
    if (t->nchildren == 0 && t->kind != FNW_ROW && t->kind != FNW_TUPLE)
        return;
    emit(o, "<");
    for (uint32_t i = 0; i < t->nchildren; i++) {
        if (i)
            emit(o, ", ");
        if (t->kind == FNW_ROW && t->names && t->names[i][0])
            emit(o, "%s ", t->names[i]);
        format_type(o, t->children[i]);
    }
    emit(o, ">");
}

size_t fnw_type_format(const fnw_type *t, char *buf, size_t n)
{
    out o = { .buf = buf, .n = n, .len = 0 };
    if (n)
        buf[0] = '\0';
    format_type(&o, t);
    return o.len;
}
