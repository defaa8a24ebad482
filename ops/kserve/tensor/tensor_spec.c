/* ops/kserve/tensor/tensor_spec.c — parsing the kserve operation's tensor mapping
 * options ("x:FP32[4]=features, ids=user_id") into items, before they meet
 * the row types (tensor_plan.c), and the shape helpers the codec shares. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kserve/tensor/tensor_internal.h"

static void trim(const char **s, const char **e)
{
    while (*s < *e && isspace((unsigned char)**s))
        (*s)++;
    while (*e > *s && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

static int parse_dims(const char *s, const char *e, int allow_any, fnw_tensor_item *it, const char *option,
                      fnw_error *err)
{
    it->has_dims = 1;
    it->rank = 0;
    trim(&s, &e);
    while (s < e) {
        const char *c = memchr(s, ',', (size_t)(e - s));
        const char *ce = c ? c : e;
        const char *ds = s, *de = ce;
        trim(&ds, &de);
        char num[24];
        if (de == ds || (size_t)(de - ds) >= sizeof num)
            return fnw_error_set(err, "option '%s': tensor '%s' has an empty or overlong dimension", option,
                                 it->tensor);
        memcpy(num, ds, (size_t)(de - ds));
        num[de - ds] = '\0';
        char *end;
        long long v = strtoll(num, &end, 10);
        if (*end || (v < 1 && !(v == -1 && allow_any)) || v > INT32_MAX)
            return fnw_error_set(err,
                                 "option '%s': tensor '%s' has dimension '%s'; give a whole number from 1 to "
                                 "2147483647%s",
                                 option, it->tensor, num, allow_any ? ", or -1 for any size" : "");
        if (it->rank == FNW_TENSOR_MAX_RANK)
            return fnw_error_set(err, "option '%s': tensor '%s' has more than %d dimensions", option,
                                 it->tensor, FNW_TENSOR_MAX_RANK);
        it->dims[it->rank++] = v;
        s = c ? c + 1 : e;
        if (c && s == e)
            return fnw_error_set(err, "option '%s': tensor '%s' has an empty dimension", option, it->tensor);
    }
    return 0;
}

/* TENSOR[:DATATYPE][[dims]] between s and e; it->field is already set. */
static int parse_tensor(const char *s, const char *e, int allow_any, fnw_tensor_item *it, const char *option,
                        fnw_error *err)
{
    const char *dims = NULL, *dims_end = NULL;
    if (e > s && e[-1] == ']') {
        const char *open = e - 1;
        while (open > s && *open != '[')
            open--;
        if (*open != '[')
            return fnw_error_set(err, "option '%s': '%.*s' has ']' without '['", option, (int)(e - s), s);
        dims = open + 1;
        dims_end = e - 1;
        e = open;
        trim(&s, &e);
    }
    it->dtype = -1;
    for (const char *c = e; c > s; c--) {
        if (c[-1] != ':')
            continue;
        int d = fnw_dtype_parse(c, (size_t)(e - c));
        if (d >= 0) {
            it->dtype = d;
            e = c - 1;
        }
        break;
    }
    trim(&s, &e);
    if (s == e)
        return fnw_error_set(err, "option '%s': an item for field '%s' has no tensor name", option, it->field);
    if (!(it->tensor = strndup(s, (size_t)(e - s))))
        return fnw_error_set(err, "out of memory");
    return dims ? parse_dims(dims, dims_end, allow_any, it, option, err) : 0;
}

static int parse_item(const char *s, const char *e, int allow_any, fnw_tensor_item *it, const char *option,
                      fnw_error *err)
{
    memset(it, 0, sizeof *it);
    const char *eq = NULL;
    for (const char *c = s; c < e; c++)
        if (*c == '=')
            eq = c;
    if (!eq)
        return fnw_error_set(err,
                             "option '%s': '%.*s' lacks '=FIELD' (the form is TENSOR[:DATATYPE][[DIMS]]=FIELD)",
                             option, (int)(e - s), s);
    const char *fs = eq + 1, *fe = e;
    trim(&fs, &fe);
    if (fs == fe)
        return fnw_error_set(err, "option '%s': '%.*s' names no field after '='", option, (int)(e - s), s);
    if (!(it->field = strndup(fs, (size_t)(fe - fs))))
        return fnw_error_set(err, "out of memory");
    const char *ts = s, *te = eq;
    trim(&ts, &te);
    return parse_tensor(ts, te, allow_any, it, option, err);
}

static void free_items(fnw_tensor_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(items[i].tensor);
        free(items[i].field);
    }
}

int fnw_tensor_spec_parse(const char *text, const char *option, int allow_any, fnw_tensor_item *items,
                          size_t *n, fnw_error *err)
{
    *n = 0;
    const char *s = text, *end = text + strlen(text);
    while (s < end) {
        const char *c = s;
        int depth = 0;
        for (; c < end && (depth || *c != ','); c++)
            depth += *c == '[' ? 1 : *c == ']' ? -1 : 0;
        const char *is = s, *ie = c;
        trim(&is, &ie);
        if (is != ie) {
            if (*n == FNW_TENSOR_MAX) {
                free_items(items, *n);
                return fnw_error_set(err, "option '%s' lists more than %d tensors", option, FNW_TENSOR_MAX);
            }
            if (parse_item(is, ie, allow_any, &items[*n], option, err) != 0) {
                free_items(items, *n + 1);
                return -1;
            }
            (*n)++;
        }
        s = c < end ? c + 1 : end;
    }
    if (*n == 0)
        return fnw_error_set(err,
                             "option '%s' lists no tensor (the form is TENSOR[:DATATYPE][[DIMS]]=FIELD, ...)",
                             option);
    return 0;
}

void fnw_tensor_spec_format_shape(const int64_t *dims, size_t rank, char *buf, size_t n)
{
    size_t at = 0;
    at += (size_t)snprintf(buf, n, "[");
    for (size_t i = 0; i < rank && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%" PRId64, i ? "," : "", dims[i]);
    if (at < n)
        snprintf(buf + at, n - at, "]");
}

int fnw_tensor_spec_product(const int64_t *dims, size_t rank, int64_t limit, int64_t *out)
{
    int64_t p = 1;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return -1;
        if (dims[i] == 0) {
            p = 0;
            continue;
        }
        if (p > limit / dims[i])
            return -1;
        p *= dims[i];
    }
    *out = p;
    return 0;
}
