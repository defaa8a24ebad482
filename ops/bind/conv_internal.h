/* ops/bind/conv_internal.h — internal to the conversion unit
 * (conv.c, conv_json.c, conv_reply.c); not
 * part of its interface. The shared pieces: where in the result a conversion
 * is (for messages, formatted only on failure), the failure message, value
 * excerpts, and the checked numeric and text rules both sources use.
 */
#ifndef FNW_CONV_INTERNAL_H
#define FNW_CONV_INTERNAL_H

#include "ops/bind/conv.h"

/* A step of the path from the output field down to the value converted. */
typedef struct fnw_conv_at fnw_conv_at;
struct fnw_conv_at {
    const fnw_conv_at *up;
    const char *name; /* ROW field or MAP key; NULL for an element */
    size_t index;     /* element index when name is NULL */
};

#define FNW_CONV_EXCERPT 60

/* "field 'p': cannot convert <what> to <type>[: why]"; returns -1. */
int fnw_conv_fail(const fnw_conv_at *at, const fnw_type *t, const char *what, const char *why, fnw_error *err);
/* Escaped excerpt of p[0..n) in double quotes, "..." when cut (cap >= 256). */
void fnw_conv_excerpt(const uint8_t *p, size_t n, char *out, size_t cap);

/* 1 if containers of kind k may hold null elements (BASIC/OBJECT_ARRAY) or,
 * for MAP, null values; ROW fields always may. */
int fnw_conv_null_element_ok(fnw_kind k);
/* Items for a container: n (2n for a MAP) values from a; NULL if over the
 * arena's limit. */
fnw_value *fnw_conv_items(fnw_arena *a, fnw_kind k, size_t n);

/* Checked numeric rules: NULL on success, else a reason. */
const char *fnw_conv_set_i64(fnw_kind k, int64_t v, fnw_value *out);
const char *fnw_conv_set_f64(fnw_kind k, double d, fnw_value *out);
/* Strict text rules (Redis strings): 0 and *v, or -1. */
int fnw_conv_parse_i64(const char *p, size_t n, int64_t *v);
int fnw_conv_parse_f64(const char *p, size_t n, double *d);
/* STRING value holding a copy of p[0..n) in a; -1 if over the arena's limit. */
int fnw_conv_set_string(fnw_arena *a, const void *p, size_t n, fnw_value *out);

/* The Table (SQL) kinds (conv_sql.c): BIG_DEC, SQL_TIMESTAMP and
 * LOCAL_ZONED_TIMESTAMP, from text, a whole number or a double; NULL on
 * success, else a reason. */
int fnw_conv_is_sql_kind(fnw_kind k);
const char *fnw_conv_set_sql_text(const fnw_type *t, const char *p, size_t n, fnw_arena *a, fnw_value *out);
const char *fnw_conv_set_sql_i64(const fnw_type *t, int64_t v, fnw_arena *a, fnw_value *out);
const char *fnw_conv_set_sql_f64(const fnw_type *t, double d, fnw_arena *a, fnw_value *out);

#endif
