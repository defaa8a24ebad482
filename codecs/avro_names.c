/* codecs/avro_names.c — the duplicate-name check of avro_names.h: parses the
 * schema with jansson and walks it, recording each record, enum and fixed
 * under its full name in a jansson object used as a set (and holding each
 * record to the fields-per-row cap of codecs/type.h on the way). */
#include "codecs/avro_names.h"

#include "codecs/type.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct names_walk {
    json_t *seen; /* full name -> "a record", "an enum" or "a fixed" */
    fnw_error *err;
} names_walk;

static const char *str_member(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* The full name of a named type (malloc'd), or NULL when out of memory. */
static char *full_name(const char *name, const char *ns_attr, const char *enclosing)
{
    const char *ns = ns_attr ? ns_attr : enclosing;
    if (strchr(name, '.') || !ns || !*ns)
        return strdup(name);
    size_t a = strlen(ns), b = strlen(name);
    char *s = malloc(a + 1 + b + 1);
    if (!s)
        return NULL;
    memcpy(s, ns, a);
    s[a] = '.';
    memcpy(s + a + 1, name, b + 1);
    return s;
}

/* Records s's full name; fails if it was already taken. */
static int remember(names_walk *w, const char *full, const char *kind)
{
    const char *before = json_string_value(json_object_get(w->seen, full));
    if (before)
        return fnw_error_set(w->err,
                             "invalid Avro schema: the name \"%s\" is defined twice (first as %s, "
                             "then as %s); give each record, enum and fixed its own name or namespace",
                             full, before, kind);
    if (json_object_set_new(w->seen, full, json_string(kind)) < 0)
        return fnw_error_set(w->err, "out of memory checking the Avro schema");
    return 0;
}

static int walk(names_walk *w, const json_t *s, const char *ns, int depth);

/* A record's fields, whose types sit in the record's namespace. */
static int walk_fields(names_walk *w, const json_t *rec, const char *full, int depth)
{
    const json_t *fields = json_object_get(rec, "fields");
    if (!json_is_array(fields))
        return 0; /* libavro reports it */
    if (json_array_size(fields) > FNW_TYPE_MAX_FIELDS)
        return fnw_error_set(w->err,
                             "invalid Avro schema: record \"%s\" has %zu fields; fnworker accepts at "
                             "most %d fields per record",
                             full, json_array_size(fields), FNW_TYPE_MAX_FIELDS);
    const char *dot = strrchr(full, '.');
    size_t nslen = dot ? (size_t)(dot - full) : 0;
    char *ns = malloc(nslen + 1);
    if (!ns)
        return fnw_error_set(w->err, "out of memory checking the Avro schema");
    memcpy(ns, full, nslen);
    ns[nslen] = '\0';
    int rc = 0;
    size_t i;
    const json_t *f;
    json_array_foreach(fields, i, f)
    {
        const json_t *ft = json_object_get(f, "type");
        if (ft && (rc = walk(w, ft, ns, depth + 1)) < 0)
            break;
    }
    free(ns);
    return rc;
}

/* A record, error, enum or fixed: its full name, then a record's fields. */
static int walk_named(names_walk *w, const json_t *s, const char *type, const char *ns, int depth)
{
    const char *name = str_member(s, "name");
    if (!name)
        return 0; /* libavro reports it */
    char *full = full_name(name, str_member(s, "namespace"), ns);
    if (!full)
        return fnw_error_set(w->err, "out of memory checking the Avro schema");
    int is_record = !strcmp(type, "record") || !strcmp(type, "error");
    int rc = remember(w, full, is_record ? "a record" : !strcmp(type, "enum") ? "an enum" : "a fixed");
    if (rc == 0 && is_record)
        rc = walk_fields(w, s, full, depth);
    free(full);
    return rc;
}

static int walk(names_walk *w, const json_t *s, const char *ns, int depth)
{
    if (depth > FNW_AVRO_NAMES_MAX_DEPTH)
        return fnw_error_set(w->err, "invalid Avro schema: it nests deeper than %d levels",
                             FNW_AVRO_NAMES_MAX_DEPTH);
    if (json_is_array(s)) { /* a union */
        size_t i;
        const json_t *b;
        json_array_foreach(s, i, b) if (walk(w, b, ns, depth + 1) < 0) return -1;
        return 0;
    }
    if (!json_is_object(s))
        return 0; /* a primitive or a reference by name */
    const json_t *t = json_object_get(s, "type");
    const char *type = json_string_value(t);
    if (!type)
        return t ? walk(w, t, ns, depth + 1) : 0;
    if (!strcmp(type, "record") || !strcmp(type, "error") || !strcmp(type, "enum") || !strcmp(type, "fixed"))
        return walk_named(w, s, type, ns, depth);
    if (!strcmp(type, "array"))
        return walk(w, json_object_get(s, "items"), ns, depth + 1);
    if (!strcmp(type, "map"))
        return walk(w, json_object_get(s, "values"), ns, depth + 1);
    return 0;
}

int fnw_avro_names_check(const char *json, size_t len, fnw_error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_DECODE_ANY, &jerr);
    if (!root)
        return fnw_error_set(err, "invalid Avro schema: not valid JSON: %s (line %d, column %d)", jerr.text,
                             jerr.line, jerr.column);
    names_walk w = { .seen = json_object(), .err = err };
    int rc = w.seen ? walk(&w, root, "", 0) : fnw_error_set(err, "out of memory checking the Avro schema");
    json_decref(w.seen);
    json_decref(root);
    return rc;
}
