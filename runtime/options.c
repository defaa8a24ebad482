/* runtime/options.c — reading the OperationSpec.options map for operations:
 * lookup, the unknown-key check and typed parsers whose messages name the
 * option, so a user can fix the job from the error alone. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fnworker.h"

const char *fnw_options_get(const fnw_options *o, const char *key)
{
    if (!o || !key)
        return NULL;
    for (size_t i = 0; i < o->count; i++)
        if (o->items[i].key && strcmp(o->items[i].key, key) == 0)
            return o->items[i].value ? o->items[i].value : "";
    return NULL;
}

static int is_known(const char *key, const char *const *known)
{
    for (size_t i = 0; known && known[i]; i++)
        if (strcmp(known[i], key) == 0)
            return 1;
    return 0;
}

/* "a, b, c" into buf (truncated to n). */
static void join_known(const char *const *known, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; known && known[i] && len < n; i++) {
        int w = snprintf(buf + len, n - len, "%s%s", i ? ", " : "", known[i]);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

int fnw_options_check_known(const fnw_options *o, const char *const *known, const char *op_name,
                            fnw_error *err)
{
    if (!o)
        return 0;
    const char *name = op_name ? op_name : "?";
    for (size_t i = 0; i < o->count; i++) {
        const char *key = o->items[i].key ? o->items[i].key : "";
        if (is_known(key, known))
            continue;
        if (!known || !known[0])
            return fnw_error_set(err, "unknown option '%s' for operation '%s': it takes no options", key,
                                 name);
        char list[512];
        join_known(known, list, sizeof list);
        return fnw_error_set(err, "unknown option '%s' for operation '%s'; known options: %s", key, name,
                             list);
    }
    return 0;
}

/* Strict base-10 integer: optional sign, digits, nothing else. */
static int parse_int64(const char *s, int64_t *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!isdigit((unsigned char)*p))
        return -1;
    for (const char *q = p; *q; q++)
        if (!isdigit((unsigned char)*q))
            return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || !end || *end)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int fnw_options_int(const fnw_options *o, const char *key, int64_t def, int64_t min, int64_t max,
                    int64_t *out, fnw_error *err)
{
    const char *v = fnw_options_get(o, key);
    if (!v) {
        *out = def;
        return 0;
    }
    int64_t x;
    if (parse_int64(v, &x) != 0)
        return fnw_error_set(err, "option '%s' must be a whole number, got '%s'", key, v);
    if (x < min || x > max)
        return fnw_error_set(err, "option '%s' must be between %" PRId64 " and %" PRId64 ", got %" PRId64,
                             key, min, max, x);
    *out = x;
    return 0;
}

int fnw_options_bool(const fnw_options *o, const char *key, int def, int *out, fnw_error *err)
{
    const char *v = fnw_options_get(o, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes")) {
        *out = 1;
        return 0;
    }
    if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no")) {
        *out = 0;
        return 0;
    }
    return fnw_error_set(err, "option '%s' must be true or false, got '%s'", key, v);
}

int fnw_options_choice(const fnw_options *o, const char *key, const char *const *choices, int def, int *out,
                       fnw_error *err)
{
    const char *v = fnw_options_get(o, key);
    if (!v) {
        *out = def;
        return 0;
    }
    for (int i = 0; choices && choices[i]; i++) {
        if (strcmp(choices[i], v) == 0) {
            *out = i;
            return 0;
        }
    }
    char list[512];
    join_known(choices, list, sizeof list);
    return fnw_error_set(err, "option '%s' must be one of %s; got '%s'", key, list, v);
}
