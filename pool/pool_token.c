/* pool/pool_token.c — reading and checking the launcher token (see pool_token.h). */
#include "pool/pool_token.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_value(fnw_pool_token *t, fnw_error *err)
{
    while (t->len && (t->value[t->len - 1] == '\n' || t->value[t->len - 1] == '\r'))
        t->value[--t->len] = '\0';
    if (t->len < FNW_POOL_TOKEN_MIN)
        return fnw_error_set(err,
                             "the launcher token (%s) is shorter than %d characters "
                             "(make one with: head -c 32 /dev/urandom | base64)",
                             t->source, FNW_POOL_TOKEN_MIN);
    for (size_t i = 0; i < t->len; i++) {
        unsigned char c = (unsigned char)t->value[i];
        if (c <= 0x20 || c == 0x7f)
            return fnw_error_set(err,
                                 "the launcher token (%s) holds a space or control "
                                 "character at byte %zu (printable characters only)",
                                 t->source, i);
    }
    t->set = 1;
    return 0;
}

static int read_file(fnw_pool_token *t, const char *path, const char *what, fnw_error *err)
{
    snprintf(t->source, sizeof t->source, "%s %s", what, path);
    FILE *f = fopen(path, "r");
    if (!f)
        return fnw_error_set(err, "cannot read the launcher token from %s: %s", t->source, strerror(errno));
    size_t n = fread(t->value, 1, FNW_POOL_TOKEN_MAX + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return fnw_error_set(err, "cannot read the launcher token from %s", t->source);
    /* room for trailing newlines beyond the maximum is not worth a case */
    if (n > FNW_POOL_TOKEN_MAX)
        return fnw_error_set(err, "the launcher token in %s is longer than %d bytes", t->source,
                             FNW_POOL_TOKEN_MAX);
    t->value[n] = '\0';
    if (memchr(t->value, '\0', n))
        return fnw_error_set(err, "the launcher token in %s holds a NUL byte", t->source);
    t->len = n;
    return check_value(t, err);
}

int fnw_pool_token_load(fnw_pool_token *t, const char *file, fnw_error *err)
{
    memset(t, 0, sizeof *t);
    const char *env_file = getenv(FNW_POOL_TOKEN_FILE_ENV), *env = getenv(FNW_POOL_TOKEN_ENV);
    int rc = 0;
    if (file)
        rc = read_file(t, file, "--token-file", err);
    else if (env_file && *env_file)
        rc = read_file(t, env_file, FNW_POOL_TOKEN_FILE_ENV, err);
    else if (env && *env) {
        snprintf(t->source, sizeof t->source, "%s", FNW_POOL_TOKEN_ENV);
        if (strlen(env) > FNW_POOL_TOKEN_MAX)
            return fnw_error_set(err, "the launcher token in %s is longer than %d bytes", FNW_POOL_TOKEN_ENV,
                                 FNW_POOL_TOKEN_MAX);
        t->len = strlen(env);
        memcpy(t->value, env, t->len + 1);
        rc = check_value(t, err);
    }
    if (rc < 0)
        fnw_pool_token_clear(t);
    return rc;
}

int fnw_pool_token_accepts(const fnw_pool_token *t, const char *given)
{
    if (!t->set)
        return 1;
    if (!given)
        return 0;
    /* constant time in the given token's content: every byte of the
     * expected one is compared, whatever the lengths */
    size_t gl = strlen(given);
    unsigned diff = (unsigned)(gl ^ t->len);
    for (size_t i = 0; i < t->len; i++) {
        unsigned char g = i < gl ? (unsigned char)given[i] : 0;
        diff |= (unsigned)(g ^ (unsigned char)t->value[i]);
    }
    return diff == 0;
}

void fnw_pool_token_clear(fnw_pool_token *t)
{
    volatile char *p = t->value;
    for (size_t i = 0; i < sizeof t->value; i++)
        p[i] = 0;
    t->len = 0;
    t->set = 0;
}
