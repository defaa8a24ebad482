/* pool/worker_args.c — the allowlist of worker flags a start request may
 * carry (see worker_args.h). */
#include "pool/worker_args.h"

#include <string.h>

/* What a request may always carry. */
static const char *const allowed[] = { "--semi_persist_dir", "--log-level", "--log_level" };

/* Never from a client, whatever the operator allows; each with its reason. */
static const struct {
    const char *name;
    const char *why;
} never[] = {
    { "--plugins-dir", "the worker loads only the sidecar's own plugins" },
    { "--id", "the pool passes the request's id field itself" },
    { "--worker_id", "the pool passes the request's id field itself" },
    { "--provision_endpoint", "the pool passes the request's provision_endpoint field itself" },
    { "--connect-timeout", "the pool bounds a worker's start with its own --start-timeout" },
    { "--relay-fd", "the pool passes the worker's relay socket itself" },
    { "--relay", "the pool sets it from the launcher's protocol version" },
};

/* The flag's name: "--name" of "--name=value"; n is its length. */
static size_t name_len(const char *arg)
{
    const char *eq = strchr(arg, '=');
    return eq ? (size_t)(eq - arg) : strlen(arg);
}

static int is(const char *name, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(name, want, n) == 0;
}

/* The reason a flag may never come from a client, or NULL. */
static const char *never_why(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        if (is(name, n, never[i].name))
            return never[i].why;
    static const char suffix[] = "_endpoint";
    size_t sl = sizeof suffix - 1;
    if (n > sl && memcmp(name + n - sl, suffix, sl) == 0)
        return "the worker reads its endpoints from the provision endpoint the pool passes";
    return NULL;
}

int fnw_worker_args_allow_add(fnw_worker_args_allow *a, const char *name, fnw_error *err)
{
    size_t n = strlen(name);
    if (strncmp(name, "--", 2) != 0 || n < 3 || strchr(name, '='))
        return fnw_error_set(err,
                             "--allow-worker-flag: '%.60s' is not a flag name such as "
                             "--flush-ms",
                             name);
    const char *why = never_why(name, n);
    if (why)
        return fnw_error_set(err, "--allow-worker-flag: %s can never come from a launcher (%s)", name, why);
    if (a->n_extra == FNW_WORKER_ARGS_EXTRA_MAX)
        return fnw_error_set(err, "--allow-worker-flag: more than %d flags", FNW_WORKER_ARGS_EXTRA_MAX);
    a->extra[a->n_extra++] = name;
    return 0;
}

static int is_allowed(const fnw_worker_args_allow *a, const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (is(name, n, allowed[i]))
            return 1;
    for (size_t i = 0; a && i < a->n_extra; i++)
        if (is(name, n, a->extra[i]))
            return 1;
    return 0;
}

static int check_one(const fnw_worker_args_allow *a, const char *arg, fnw_error *err)
{
    size_t n = name_len(arg);
    const char *why = never_why(arg, n);
    if (why)
        return fnw_error_set(err, "arg %.*s is refused: a launcher may not set it (%s)",
                             (int)(n > 60 ? 60 : n), arg, why);
    if (!is_allowed(a, arg, n))
        return fnw_error_set(err,
                             "arg %.*s is refused: not a flag a launcher may pass (allowed: "
                             "--semi_persist_dir, --log-level; the operator can allow more "
                             "with fnworker pool --allow-worker-flag)",
                             (int)(n > 60 ? 60 : n), arg);
    if (arg[n] != '=')
        return fnw_error_set(err, "arg %.*s is refused: give it as %.*s=VALUE", (int)n, arg, (int)n, arg);
    return 0;
}

int fnw_worker_args_check(const fnw_worker_args_allow *a, const char *const *args, size_t n, fnw_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (check_one(a, args[i], err) < 0)
            return -1;
    return 0;
}
