/* ops/kserve/kserve_config.c — reading and checking the kserve operation's
 * options at open (see kserve_config.h for the list and the rules). */
#include "ops/kserve/kserve_config.h"
#include "ops/secrets/secret_env.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const KNOWN[] = { "target",
                                     "model_name",
                                     "model_version",
                                     "inputs",
                                     "outputs",
                                     "parameters",
                                     "channels",
                                     "check_metadata",
                                     "max_message_bytes",
                                     "tls",
                                     "tls_ca_file",
                                     "auth_header_env",
                                     "connect_timeout_ms",
                                     NULL };

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

/* host:port, [v6]:port or unix:PATH. */
static int check_target(const char *t, const char *op, fnw_error *err)
{
    if (!strncmp(t, "unix:", 5) && t[5] && !has_control(t))
        return 0;
    const char *colon = strrchr(t, ':');
    int v6 = t[0] == '[';
    const char *host_end = v6 ? strchr(t, ']') : colon;
    int host_ok = host_end && host_end > t + v6 && (!v6 || host_end + 1 == colon);
    for (const char *h = t; host_ok && h < host_end; h++)
        if (isspace((unsigned char)*h) || (unsigned char)*h < 0x20 || (!v6 && (*h == '/' || *h == ':')))
            host_ok = 0;
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    if (!host_ok || !colon || !isdigit((unsigned char)colon[1]) || *end || port < 1 || port > 65535)
        return fnw_error_set(err,
                             "option 'target' of operation '%s' is '%.100s'; give host:port (e.g. triton:8001), "
                             "[v6addr]:port or unix:PATH",
                             op, t);
    return 0;
}

static int check_env_name(const char *name, const char *op, fnw_error *err)
{
    int ok = name[0] && !isdigit((unsigned char)name[0]);
    for (const char *s = name; ok && *s; s++)
        ok = isalnum((unsigned char)*s) || *s == '_';
    if (!ok)
        return fnw_error_set(err,
                             "option 'auth_header_env' of operation '%s' is '%.64s', not an environment "
                             "variable name",
                             op, name);
    return 0;
}

static int dup_into(char **dst, const char *src, fnw_error *err)
{
    if (!(*dst = strdup(src)))
        return fnw_error_set(err, "out of memory");
    return 0;
}

static int read_strings(fnw_kserve_config *c, const fnw_options *o, const char *op, fnw_error *err)
{
    const char *target = fnw_options_get(o, "target"), *model = fnw_options_get(o, "model_name");
    const char *version = fnw_options_get(o, "model_version");
    if (!target || !*target)
        return fnw_error_set(err, "operation '%s' needs option 'target': the model server's host:port", op);
    if (!model || !*model)
        return fnw_error_set(err, "operation '%s' needs option 'model_name': the model's name on the server",
                             op);
    if (has_control(model) || (version && has_control(version)))
        return fnw_error_set(err,
                             "option 'model_name' or 'model_version' of operation '%s' holds a control "
                             "character",
                             op);
    if (check_target(target, op, err) != 0)
        return -1;
    return dup_into(&c->target, target, err) || dup_into(&c->model_name, model, err) ||
                   dup_into(&c->model_version, version ? version : "", err)
               ? -1
               : 0;
}

static int read_transport(fnw_kserve_config *c, const fnw_options *o, const char *op, fnw_error *err)
{
    int64_t channels;
    if (fnw_options_int(o, "channels", 1, 1, 16, &channels, err) != 0 ||
        fnw_options_int(o, "max_message_bytes", 64 << 20, 1024, 1 << 30, &c->max_message_bytes, err) != 0 ||
        fnw_options_bool(o, "check_metadata", 1, &c->check_metadata, err) != 0 ||
        fnw_options_bool(o, "tls", 0, &c->tls, err) != 0 ||
        fnw_options_int(o, "connect_timeout_ms", 5000, 100, 300000, &c->connect_timeout_ms, err) != 0)
        return -1;
    c->channels = (int)channels;
    const char *ca = fnw_options_get(o, "tls_ca_file");
    if (ca && !c->tls)
        return fnw_error_set(err, "option 'tls_ca_file' of operation '%s' needs option 'tls' true", op);
    if (ca && access(ca, R_OK) != 0)
        return fnw_error_set(err, "option 'tls_ca_file' of operation '%s': '%.200s' is not a readable file",
                             op, ca);
    if (ca && dup_into(&c->tls_ca_file, ca, err) != 0)
        return -1;
    const char *env_name = fnw_options_get(o, "auth_header_env");
    if (!env_name)
        return 0;
    if (check_env_name(env_name, op, err) != 0)
        return -1;
    const char *secret = fnw_secret_env_get(env_name, "auth_header_env", op, err);
    if (!secret)
        return -1;
    if (!*secret)
        return fnw_error_set(err,
                             "option 'auth_header_env' of operation '%s': the environment variable %s is not "
                             "set (or empty) in the worker",
                             op, env_name);
    if (has_control(secret))
        return fnw_error_set(err,
                             "option 'auth_header_env' of operation '%s': the value of %s holds a control "
                             "character",
                             op, env_name);
    return dup_into(&c->auth_header, secret, err);
}

int fnw_kserve_config_init(fnw_kserve_config *c, const fnw_op_env *env, const char *op, fnw_error *err)
{
    memset(c, 0, sizeof *c);
    const fnw_options *o = env->options;
    if (fnw_options_check_known(o, KNOWN, op, err) != 0 || read_strings(c, o, op, err) != 0 ||
        read_transport(c, o, op, err) != 0)
        goto fail;
    const char *inputs = fnw_options_get(o, "inputs"), *outputs = fnw_options_get(o, "outputs");
    if (!inputs || !outputs) {
        fnw_error_set(err,
                      "operation '%s' needs options 'inputs' and 'outputs': the tensors and their row fields "
                      "(TENSOR[:DATATYPE][[DIMS]]=FIELD, ...)",
                      op);
        goto fail;
    }
    if (!(c->plan = fnw_tensor_plan_new(env->input_type, env->output_type, inputs, outputs, op, err)))
        goto fail;
    if (!(c->params = fnw_tensor_params_new(fnw_options_get(o, "parameters"), "parameters", err))) {
        fnw_error_prefix(err, "operation '%s'", op);
        goto fail;
    }
    return 0;
fail:
    fnw_kserve_config_free(c);
    return -1;
}

void fnw_kserve_config_free(fnw_kserve_config *c)
{
    free(c->target);
    free(c->model_name);
    free(c->model_version);
    fnw_tensor_plan_free(c->plan);
    fnw_tensor_params_free(c->params);
    free(c->tls_ca_file);
    if (c->auth_header) {
        memset(c->auth_header, 0, strlen(c->auth_header));
        free(c->auth_header);
    }
    memset(c, 0, sizeof *c);
}
