/* worker/log_options.c — log level from pipeline options (see log_options.h). */
#include "worker/log_options.h"

#include <stdio.h>
#include <string.h>

typedef Google__Protobuf__Value pb_Value;

/* "beam:option:<name>:v1" or "<name>" */
static int key_is(const char *key, const char *name)
{
    static const char prefix[] = "beam:option:";
    static const char suffix[] = ":v1";
    size_t nl = strlen(name);
    if (!strcmp(key, name))
        return 1;
    size_t kl = strlen(key);
    return kl == sizeof prefix - 1 + nl + sizeof suffix - 1 && !strncmp(key, prefix, sizeof prefix - 1) &&
           !strncmp(key + sizeof prefix - 1, name, nl) && !strcmp(key + sizeof prefix - 1 + nl, suffix);
}

static void read_level(const char *key, const pb_Value *v, fnw_log_request *out)
{
    out->found = 1;
    snprintf(out->key, sizeof out->key, "%s", key);
    switch (v ? v->kind_case : GOOGLE__PROTOBUF__VALUE__KIND__NOT_SET) {
    case GOOGLE__PROTOBUF__VALUE__KIND_STRING_VALUE:
        snprintf(out->text, sizeof out->text, "%s", v->string_value);
        out->valid = fnw_log_level_parse(v->string_value, &out->level) == 0;
        break;
    case GOOGLE__PROTOBUF__VALUE__KIND_NUMBER_VALUE:
        snprintf(out->text, sizeof out->text, "%g", v->number_value);
        out->valid = fnw_log_level_from_threshold(v->number_value, &out->level) == 0;
        break;
    default:
        snprintf(out->text, sizeof out->text, "(not a string or number)");
        out->valid = 0;
        break;
    }
}

static void read_overrides(const pb_Value *v, fnw_log_request *out)
{
    out->has_overrides = 1;
    if (v && v->kind_case == GOOGLE__PROTOBUF__VALUE__KIND_STRUCT_VALUE && v->struct_value)
        out->n_overrides = v->struct_value->n_fields;
}

static void read_fields(const Google__Protobuf__Struct *opts, fnw_log_request *out, int top)
{
    for (size_t i = 0; i < opts->n_fields; i++) {
        const Google__Protobuf__Struct__FieldsEntry *f = opts->fields[i];
        if (!f || !f->key)
            continue;
        if (key_is(f->key, FNW_LOG_OPTION_LEVEL))
            read_level(f->key, f->value, out);
        else if (key_is(f->key, FNW_LOG_OPTION_OVERRIDES))
            read_overrides(f->value, out);
        else if (top && !strcmp(f->key, "options") && f->value &&
                 f->value->kind_case == GOOGLE__PROTOBUF__VALUE__KIND_STRUCT_VALUE && f->value->struct_value)
            read_fields(f->value->struct_value, out, 0);
    }
}

void fnw_log_options_read(const Google__Protobuf__Struct *opts, fnw_log_request *out)
{
    memset(out, 0, sizeof *out);
    out->level = FNW_LOG_INFO;
    if (opts)
        read_fields(opts, out, 1);
}

void fnw_log_options_apply(fnw_logger *lg, const fnw_log_request *req, const char *cli_level)
{
    if (req->found && !req->valid)
        fnw_warn(lg, "pipeline option %s is '%s', which is not a log level; keeping %s", req->key, req->text,
                 fnw_log_level_name(fnw_log_get_level(lg)));
    else if (req->found && cli_level)
        fnw_debug(lg, "pipeline option %s=%s ignored: --log-level=%s was given", req->key, req->text,
                  cli_level);
    else if (req->found) {
        fnw_log_set_level(lg, req->level);
        fnw_debug(lg, "log level %s, from pipeline option %s=%s", fnw_log_level_name(req->level), req->key,
                  req->text);
    }
    if (req->has_overrides)
        fnw_debug(lg,
                  "pipeline option " FNW_LOG_OPTION_OVERRIDES " (%zu logger(s)) ignored: fnworker has a "
                  "single logger, whose level is the default level",
                  req->n_overrides);
}
