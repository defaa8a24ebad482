/* ops/secrets/secret_env.c — the operator's rule for environment references
 * (secret_env.h). */
#include "ops/secrets/secret_env.h"

#include <stdlib.h>
#include <string.h>

static const char *prefix(void)
{
    const char *p = getenv(FNW_SECRETS_PREFIX_ENV);
    return p ? p : FNW_SECRETS_DEFAULT_PREFIX;
}

static int listed(const char *name)
{
    const char *list = getenv(FNW_SECRETS_ALLOW_ENV);
    size_t n = strlen(name);
    for (const char *s = list; s && *s;) {
        while (*s == ',' || *s == ' ')
            s++;
        size_t len = strcspn(s, ", ");
        if (len == n && len > 0 && memcmp(s, name, n) == 0)
            return 1;
        s += len;
    }
    return 0;
}

int fnw_secret_env_allowed(const char *name)
{
    const char *p = prefix();
    if (!name || !*name)
        return 0;
    return (*p && strncmp(name, p, strlen(p)) == 0 && name[strlen(p)]) || listed(name);
}

const char *fnw_secret_env_get(const char *name, const char *opt, const char *op, fnw_error *err)
{
    if (!fnw_secret_env_allowed(name)) {
        const char *p = prefix(), *list = getenv(FNW_SECRETS_ALLOW_ENV);
        fnw_error_set(err,
                      "option '%s' of operation '%s': environment variable '%.128s' is not one the operator "
                      "allows a job to read (the job chooses where its value is sent): the rule is %s%s%s%s, and "
                      "the names listed in %s (%s), both set in the worker's environment",
                      opt, op, name, *p ? "names starting with '" : "no prefix (",
                      *p ? p : FNW_SECRETS_PREFIX_ENV, *p ? "' (" FNW_SECRETS_PREFIX_ENV : " is empty", ")",
                      FNW_SECRETS_ALLOW_ENV, list && *list ? "none matches" : "none listed");
        return NULL;
    }
    const char *v = getenv(name);
    if (!v)
        fnw_error_set(err,
                      "option '%s' of operation '%s': environment variable '%.128s' is not set in the worker",
                      opt, op, name);
    return v;
}
