/* ops/redis/redisop_config.c — the `redis` operation's open-time half:
 * every option validated and turned into the config the calls run by (the
 * connection settings, the compiled command template, its shape, the result
 * mapping and the output row assembly), so a bad job fails before any call with
 * a message naming the option and the field. The rules are described in
 * redisop_internal.h. */
#include "ops/redis/redisop_internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ops/bind/conv.h"
#include "ops/secrets/secret_env.h"

#define OP "operation 'redis'"
#define MAX_RESULTS 1024

static const char *const known_options[] = {
    "address",         "pool_size",      "max_reply_bytes",
    "password_env",    "username",       "db",
    "command",         "result_field",   "result_fields",
    "on_missing",      "cache_max_rows", "cache_ttl_ms",
    "cache_max_bytes", "cache_missing",  NULL,
};

/* ---- address --------------------------------------------------------------- */

int fnw_redisop_config_parse_address(const char *text, char *host, size_t cap, int *port, fnw_error *err)
{
    const char *colon = strrchr(text, ':');
    const char *h = text, *he = colon;
    if (colon && text[0] == '[') {
        h = text + 1;
        he = colon > text && colon[-1] == ']' ? colon - 1 : NULL;
    }
    if (!colon || !he || he <= h || (size_t)(he - h) >= cap)
        return fnw_error_set(err,
                             "option 'address' must be IP:PORT (e.g. 127.0.0.1:6379 or [::1]:6379), "
                             "got '%s'",
                             text);
    memcpy(host, h, (size_t)(he - h));
    host[he - h] = '\0';
    unsigned char buf[16];
    int v6 = text[0] == '[';
    if (inet_pton(v6 ? AF_INET6 : AF_INET, host, buf) != 1)
        return fnw_error_set(err,
                             "option 'address': '%s' is not an IP%s address (host names are not taken: "
                             "resolving them would block the worker)",
                             host, v6 ? "v6" : "v4");
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (!isdigit((unsigned char)colon[1]) || *end || p < 1 || p > 65535)
        return fnw_error_set(err, "option 'address': port '%s' is not a number from 1 to 65535", colon + 1);
    *port = (int)p;
    return 0;
}

static int parse_connection(fnw_redisop_config *p, const fnw_options *o, fnw_error *err)
{
    const char *addr = fnw_options_get(o, "address");
    int64_t pool, db, max_reply;
    if (fnw_redisop_config_parse_address(addr ? addr : "127.0.0.1:6379", p->host, sizeof p->host, &p->port,
                                         err) ||
        fnw_options_int(o, "pool_size", 1, 1, FNW_REDISOP_MAX_POOL, &pool, err) ||
        fnw_options_int(o, "db", 0, 0, 1000000, &db, err) ||
        fnw_options_int(o, "max_reply_bytes", (int64_t)FNW_REDIS_DEFAULT_MAX_REPLY, 1024, (int64_t)1 << 30,
                        &max_reply, err))
        return -1;
    p->pool_size = (int)pool;
    p->db = (int)db;
    p->max_reply_bytes = (size_t)max_reply;
    const char *pw = fnw_options_get(o, "password_env"), *user = fnw_options_get(o, "username");
    if (pw && !pw[0])
        return fnw_error_set(err, "option 'password_env' must name an environment variable");
    if (pw && !fnw_secret_env_get(pw, "password_env", "redis", err))
        return -1;
    if (user && !pw)
        return fnw_error_set(err, "option 'username' needs option 'password_env' (ACL AUTH takes both)");
    if ((pw && !(p->password_env = strdup(pw))) || (user && !(p->username = strdup(user))))
        return fnw_error_set(err, OP ": out of memory");
    return 0;
}

/* ---- the command ------------------------------------------------------------ */

typedef struct token {
    const char *s;
    size_t len;
    int placeholder;
} token;

/* Splits like fnw_tmpl_argv_new: on whitespace outside placeholders. */
static size_t split(const char *text, token *tok, size_t cap)
{
    size_t n = 0;
    const char *q = text;
    while (*q) {
        while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')
            q++;
        if (!*q)
            break;
        token t = { q, 0, 0 };
        int depth = 0;
        for (; *q && (depth || !(*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')); q++) {
            if (!depth && q[0] == '{' && q[1] == '{')
                q++;
            else if (q[0] == '{')
                depth = 1, t.placeholder = 1;
            else if (q[0] == '}')
                depth = 0;
        }
        t.len = (size_t)(q - t.s);
        if (n < cap)
            tok[n] = t;
        n++;
    }
    return n;
}

static void set_shape(fnw_redisop_config *p)
{
    static const struct {
        const char *name;
        fnw_redisop_shape shape;
        size_t min, max;
    } shapes[] = {
        { "GET", FNW_REDISOP_GET, 2, 2 },
        { "HGET", FNW_REDISOP_HGET, 3, 3 },
        { "HGETALL", FNW_REDISOP_HGETALL, 2, 2 },
        { "HMGET", FNW_REDISOP_HMGET, 3, FNW_TMPL_MAX_ARGS },
    };
    p->shape = FNW_REDISOP_OTHER;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (strcmp(p->name, shapes[i].name) == 0 && p->argc >= shapes[i].min && p->argc <= shapes[i].max)
            p->shape = shapes[i].shape;
}

static int parse_command(fnw_redisop_config *p, const char *text, token *tok, size_t *ntok, fnw_error *err)
{
    if (!text || !*text)
        return fnw_error_set(err,
                             OP " needs option 'command': a Redis read command with {field} placeholders, "
                                "e.g. 'GET user:{id}' or 'HGETALL user:{id}'");
    p->argv = fnw_tmpl_argv_new(text, p->in, "command", err);
    if (!p->argv)
        return -1;
    p->argc = fnw_tmpl_argv_count(p->argv);
    *ntok = split(text, tok, FNW_TMPL_MAX_ARGS);
    if (*ntok != p->argc)
        return fnw_error_set(err, "option 'command': cannot split '%s' into arguments", text);
    if (tok[0].placeholder || tok[0].len >= sizeof p->name)
        return fnw_error_set(err,
                             "option 'command': the command name '%.*s' must be written out, not a "
                             "placeholder",
                             (int)tok[0].len, tok[0].s);
    for (size_t i = 0; i < tok[0].len; i++)
        p->name[i] = (char)toupper((unsigned char)tok[0].s[i]);
    p->name[tok[0].len] = '\0';
    set_shape(p);
    return 0;
}

/* ---- result fields ----------------------------------------------------------- */

/* Splits a comma-separated list into names (copied into store). */
static int parse_list(const char *list, char *store, const char **names, size_t *n, fnw_error *err)
{
    *n = 0;
    const char *q = list;
    for (;;) {
        while (*q == ' ')
            q++;
        size_t len = strcspn(q, ",");
        while (len && q[len - 1] == ' ')
            len--;
        if (!len)
            return fnw_error_set(err, "option 'result_fields' has an empty field name: '%s'", list);
        if (*n == MAX_RESULTS)
            return fnw_error_set(err, "option 'result_fields' names more than %d fields", MAX_RESULTS);
        memcpy(store, q, len);
        store[len] = '\0';
        names[(*n)++] = store;
        store += len + 1;
        q = strchr(q, ',');
        if (!q)
            return 0;
        q++;
    }
}

/* The names without result_fields: HMGET's literal fields, HGETALL's
 * output fields the input lacks. */
static int infer_results(fnw_redisop_config *p, const token *tok, char *store, const char **names, size_t *n,
                         fnw_error *err)
{
    *n = 0;
    if (p->shape == FNW_REDISOP_HMGET) {
        for (size_t i = 2; i < p->argc; i++) {
            if (tok[i].placeholder)
                return fnw_error_set(err,
                                     "option 'command': HMGET field '%.*s' is a placeholder, so the output "
                                     "fields cannot be named after it: set option 'result_fields'",
                                     (int)tok[i].len, tok[i].s);
            memcpy(store, tok[i].s, tok[i].len);
            store[tok[i].len] = '\0';
            names[(*n)++] = store;
            store += tok[i].len + 1;
        }
        return 0;
    }
    if (p->shape == FNW_REDISOP_HGETALL) {
        for (size_t i = 0; i < fnw_type_child_count(p->out) && *n < MAX_RESULTS; i++) {
            const char *f = fnw_type_field_name(p->out, i);
            if (fnw_type_find_field(p->in, f, strlen(f)) < 0)
                names[(*n)++] = f;
        }
        if (*n)
            return 0;
        return fnw_error_set(err, OP
                             ": HGETALL fills the output fields the input does not have, and the output "
                             "type has none: add fields named like the hash's keys, or set 'result_field' to a "
                             "MAP<STRING, STRING> field");
    }
    return fnw_error_set(err, OP " needs option 'result_field' (the output field %s's reply goes into)%s",
                         p->name,
                         p->shape == FNW_REDISOP_GET || p->shape == FNW_REDISOP_HGET
                             ? ""
                             : ", or 'result_fields' for a reply that is an array");
}

static int choose_results(fnw_redisop_config *p, const fnw_options *o, const token *tok, char *store,
                          const char **names, size_t *n, const char **from, fnw_error *err)
{
    const char *one = fnw_options_get(o, "result_field"), *many = fnw_options_get(o, "result_fields");
    *from = one ? "result_field" : many ? "result_fields" : "command";
    if (one && many)
        return fnw_error_set(err, OP ": set option 'result_field' (the whole reply into one field) or "
                                     "'result_fields' (the reply spread over several fields), not both");
    if (one) {
        p->mapping = FNW_REDISOP_ONE;
        names[0] = one;
        *n = 1;
        return 0;
    }
    if (many && (p->shape == FNW_REDISOP_GET || p->shape == FNW_REDISOP_HGET))
        return fnw_error_set(err,
                             "option 'result_fields': %s returns one value; name its field with "
                             "'result_field'",
                             p->name);
    p->mapping = p->shape == FNW_REDISOP_HGETALL ? FNW_REDISOP_BY_NAME : FNW_REDISOP_BY_POS;
    if (many ? parse_list(many, store, names, n, err) : infer_results(p, tok, store, names, n, err))
        return -1;
    if (p->shape == FNW_REDISOP_HMGET && *n != p->argc - 2)
        return fnw_error_set(err, "option 'result_fields' names %zu field(s) but HMGET asks for %zu", *n,
                             p->argc - 2);
    return 0;
}

/* ---- types --------------------------------------------------------------------- */

static int scalar(const fnw_type *t)
{
    switch (fnw_type_kind(t)) {
    case FNW_STRING:
    case FNW_BYTE:
    case FNW_SHORT:
    case FNW_INT:
    case FNW_LONG:
    case FNW_FLOAT:
    case FNW_DOUBLE:
    case FNW_BOOLEAN:
        return 1;
    default:
        return 0;
    }
}

static int type_refused(const fnw_type *t, const char *field, const char *what, fnw_error *err)
{
    char b[256];
    fnw_type_format(t, b, sizeof b);
    return fnw_error_set(err, OP ": output field '%s' has type %s, which cannot hold %s", field, b, what);
}

/* Whether the one result field can hold the command's reply. */
static int check_one(const fnw_redisop_config *p, const fnw_type *t, const char *f, fnw_error *err)
{
    if (fnw_conv_check_type(t, f, err) != 0)
        return -1;
    switch (p->shape) {
    case FNW_REDISOP_GET:
    case FNW_REDISOP_HGET:
        return scalar(t)
                   ? 0
                   : type_refused(t, f, "a single string value (use STRING, a number type or BOOLEAN)", err);
    case FNW_REDISOP_HGETALL:
        if (fnw_type_kind(t) == FNW_MAP && scalar(fnw_type_child(t, 1)))
            return 0;
        return type_refused(t, f,
                            "a whole hash (use MAP<STRING, STRING>, or leave 'result_field' unset to fill "
                            "fields named like the hash's keys)",
                            err);
    case FNW_REDISOP_HMGET:
        if (fnw_type_kind(t) == FNW_MAP ||
            (fnw_type_kind(t) == FNW_ROW && fnw_type_child_count(t) != p->argc - 2))
            return type_refused(t, f, "HMGET's values (use a ROW of one field per HMGET field, or an array)",
                                err);
        return 0;
    default:
        return 0;
    }
}

static int check_types(fnw_redisop_config *p, fnw_error *err)
{
    size_t n = fnw_outrow_results(p->row);
    for (size_t k = 0; k < n; k++) {
        const fnw_type *t = fnw_outrow_result_type(p->row, k);
        const char *f = fnw_outrow_result_name(p->row, k);
        if (p->mapping == FNW_REDISOP_ONE) {
            if (check_one(p, t, f, err) != 0)
                return -1;
        } else if (!scalar(t)) {
            return type_refused(t, f, "one value of a Redis reply (use STRING, a number type or BOOLEAN)",
                                err);
        }
    }
    return 0;
}

static int plan_slots(fnw_redisop_config *p, fnw_error *err)
{
    p->nslots = fnw_type_child_count(p->out);
    p->result_of_slot = malloc((p->nslots ? p->nslots : 1) * sizeof *p->result_of_slot);
    if (!p->result_of_slot)
        return fnw_error_set(err, OP ": out of memory");
    for (size_t i = 0; i < p->nslots; i++)
        p->result_of_slot[i] = -1;
    for (size_t k = 0; k < fnw_outrow_results(p->row); k++)
        p->result_of_slot[fnw_outrow_slot(p->row, k)] = (int32_t)k;
    return 0;
}

static int check_rows(const fnw_op_env *env, fnw_error *err)
{
    if (!env->input_type || fnw_type_kind(env->input_type) != FNW_ROW)
        return fnw_error_set(err, OP " takes ROW inputs; the input type is %s",
                             env->input_type ? fnw_kind_name(fnw_type_kind(env->input_type)) : "(none)");
    if (!env->output_type || fnw_type_kind(env->output_type) != FNW_ROW)
        return fnw_error_set(err, OP " emits ROWs; the output type is %s",
                             env->output_type ? fnw_kind_name(fnw_type_kind(env->output_type)) : "(none)");
    return 0;
}

/* Everything after the connection options; tok, store and names are
 * scratch the caller frees. */
static int plan_request(fnw_redisop_config *p, const fnw_options *o, token *tok, char *store,
                        const char **names, fnw_error *err)
{
    size_t ntok = 0, n = 0;
    const char *from = "command";
    if (parse_command(p, fnw_options_get(o, "command"), tok, &ntok, err) ||
        fnw_missing_option(o, "on_missing", FNW_MISSING_NULL, &p->on_missing, err) ||
        choose_results(p, o, tok, store, names, &n, &from, err))
        return -1;
    fnw_error why;
    if (!(p->row = fnw_outrow_new(p->in, p->out, names, n, "redis", &why)))
        return fnw_error_set(err, "%s (result fields from option '%s')", why.msg, from);
    return check_types(p, err) || plan_slots(p, err) ? -1 : 0;
}

fnw_redisop_config *fnw_redisop_config_new(const fnw_op_env *env, fnw_error *err)
{
    const fnw_options *o = env->options;
    if (fnw_options_check_known(o, known_options, "redis", err) || check_rows(env, err))
        return NULL; /* both name the operation */
    fnw_redisop_config *p = calloc(1, sizeof *p);
    const char *cmd = fnw_options_get(o, "command"), *list = fnw_options_get(o, "result_fields");
    size_t storelen = (cmd ? strlen(cmd) : 0) + (list ? strlen(list) : 0) + 2;
    token *tok = malloc(FNW_TMPL_MAX_ARGS * sizeof *tok);
    const char **names = malloc(MAX_RESULTS * sizeof *names);
    char *store = malloc(storelen);
    int rc = -1;
    if (!p || !tok || !names || !store) {
        fnw_error_set(err, OP ": out of memory");
    } else {
        p->in = env->input_type;
        p->out = env->output_type;
        rc = parse_connection(p, o, err) || plan_request(p, o, tok, store, names, err) ? -1 : 0;
    }
    free(tok);
    free(names);
    free(store);
    if (rc != 0) {
        fnw_redisop_config_free(p);
        if (err && strncmp(err->msg, OP, strlen(OP)) != 0) {
            fnw_error why = *err;
            fnw_error_set(err, OP ": %s", why.msg);
        }
        return NULL;
    }
    return p;
}

void fnw_redisop_config_free(fnw_redisop_config *p)
{
    if (!p)
        return;
    fnw_tmpl_argv_free(p->argv);
    fnw_outrow_free(p->row);
    free(p->result_of_slot);
    free(p->password_env);
    free(p->username);
    free(p);
}

void fnw_redisop_config_client(const fnw_redisop_config *p, fnw_redis_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->host = p->host;
    cfg->port = p->port;
    cfg->connections = p->pool_size;
    cfg->password_env = p->password_env;
    cfg->username = p->username;
    cfg->db = p->db;
    cfg->max_reply_bytes = p->max_reply_bytes;
}
