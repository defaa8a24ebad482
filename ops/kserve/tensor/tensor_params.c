/* ops/kserve/tensor/tensor_params.c — parsing the kserve operation's request
 * parameters option into protobuf-c InferParameter map entries, once at
 * open; every request then points at the same entries. */
#include "ops/kserve/tensor/tensor_params.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 64

typedef struct param {
    Inference__ModelInferRequest__ParametersEntry entry;
    Inference__InferParameter value;
} param;

struct fnw_tensor_params {
    param items[MAX_PARAMS];
    Inference__ModelInferRequest__ParametersEntry *entries[MAX_PARAMS];
    size_t n;
};

static const char *skip_space(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

/* A quoted string at *s (after the opening quote) into a malloc'd copy. */
static char *quoted(const char **s, const char *option, const char *key, fnw_error *err)
{
    size_t n = 0, cap = strlen(*s) + 1;
    char *out = malloc(cap);
    if (!out) {
        fnw_error_set(err, "out of memory");
        return NULL;
    }
    const char *p = *s;
    for (;;) {
        if (!*p) {
            free(out);
            fnw_error_set(err, "option '%s': the value of '%s' has no closing quote", option, key);
            return NULL;
        }
        if (*p == '\'' && p[1] != '\'')
            break;
        out[n++] = *p;
        p += *p == '\'' ? 2 : 1;
    }
    out[n] = '\0';
    *s = p + 1;
    return out;
}

/* An unquoted value up to the next ',' (spaces trimmed), typed. */
static int plain(const char **s, Inference__InferParameter *v, const char *option, const char *key,
                 fnw_error *err)
{
    const char *e = strchr(*s, ',');
    if (!e)
        e = *s + strlen(*s);
    const char *end = e;
    while (end > *s && isspace((unsigned char)end[-1]))
        end--;
    char *text = strndup(*s, (size_t)(end - *s));
    if (!text)
        return fnw_error_set(err, "out of memory");
    *s = e;
    char *stop;
    errno = 0;
    long long x = strtoll(text, &stop, 10);
    if (*text && !*stop && !isspace((unsigned char)text[0]) && errno == 0) {
        v->parameter_choice_case = INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_INT64_PARAM;
        v->int64_param = x;
        free(text);
    } else if (!strcmp(text, "true") || !strcmp(text, "false")) {
        v->parameter_choice_case = INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_BOOL_PARAM;
        v->bool_param = text[0] == 't';
        free(text);
    } else if (!*text) {
        free(text);
        return fnw_error_set(err, "option '%s': '%s' has no value (write '' for an empty string)", option,
                             key);
    } else {
        v->parameter_choice_case = INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_STRING_PARAM;
        v->string_param = text;
    }
    return 0;
}

static int parse_key(const char **s, char **key, const char *option, fnw_error *err)
{
    const char *k = skip_space(*s), *e = k;
    while (isalnum((unsigned char)*e) || *e == '_' || *e == '-' || *e == '.')
        e++;
    const char *eq = skip_space(e);
    if (e == k || *eq != '=')
        return fnw_error_set(err,
                             "option '%s': expected key=value at '%.40s' (keys are letters, digits, '_', '-', "
                             "'.')",
                             option, k);
    if (!(*key = strndup(k, (size_t)(e - k))))
        return fnw_error_set(err, "out of memory");
    *s = eq + 1;
    return 0;
}

static int parse_one(fnw_tensor_params *p, const char **s, const char *option, fnw_error *err)
{
    if (p->n == MAX_PARAMS)
        return fnw_error_set(err, "option '%s' has more than %d parameters", option, MAX_PARAMS);
    param *it = &p->items[p->n];
    inference__model_infer_request__parameters_entry__init(&it->entry);
    inference__infer_parameter__init(&it->value);
    it->entry.value = &it->value;
    p->entries[p->n] = &it->entry;
    if (parse_key(s, &it->entry.key, option, err) != 0)
        return -1;
    p->n++; /* from here free() owns what the entry holds */
    for (size_t i = 0; i + 1 < p->n; i++)
        if (!strcmp(p->entries[i]->key, it->entry.key))
            return fnw_error_set(err, "option '%s' gives '%s' twice", option, it->entry.key);
    *s = skip_space(*s);
    if (**s == '\'') {
        (*s)++;
        if (!(it->value.string_param = quoted(s, option, it->entry.key, err)))
            return -1;
        it->value.parameter_choice_case = INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_STRING_PARAM;
        *s = skip_space(*s);
        if (**s && **s != ',')
            return fnw_error_set(err, "option '%s': text after the quoted value of '%s'", option,
                                 it->entry.key);
        return 0;
    }
    return plain(s, &it->value, option, it->entry.key, err);
}

fnw_tensor_params *fnw_tensor_params_new(const char *text, const char *option, fnw_error *err)
{
    fnw_tensor_params *p = calloc(1, sizeof *p);
    if (!p) {
        fnw_error_set(err, "out of memory");
        return NULL;
    }
    const char *s = text ? text : "";
    while (*(s = skip_space(s))) {
        if (parse_one(p, &s, option, err) != 0) {
            fnw_tensor_params_free(p);
            return NULL;
        }
        if (*s == ',')
            s++;
    }
    return p;
}

void fnw_tensor_params_free(fnw_tensor_params *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->items[i].entry.key);
        if (p->items[i].value.parameter_choice_case ==
            INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_STRING_PARAM)
            free(p->items[i].value.string_param);
    }
    free(p);
}

size_t fnw_tensor_params_count(const fnw_tensor_params *p)
{
    return p->n;
}

void fnw_tensor_params_attach(const fnw_tensor_params *p, Inference__ModelInferRequest *req)
{
    req->n_parameters = p->n;
    req->parameters = p->n ? (Inference__ModelInferRequest__ParametersEntry **)p->entries : NULL;
}
