/* ops/secrets/secret_env.h — which environment variables an operation may read.
 * A job names environment variables in its options (redis password_env,
 * http env:VAR / {env:VAR}, kserve auth_header_env) and chooses where their
 * values are sent, so it may name only the variables the operator allowed:
 *   FNW_SECRETS_PREFIX  names starting with it (default FNW_SECRET_; set it
 *                       empty to allow no prefix);
 *   FNW_SECRETS_ALLOW   a comma-separated list of exact names.
 * Both are read from the worker's own environment (the TaskManager's, or the
 * pool's, which its launcher clients cannot change); there is deliberately no
 * flag, so nothing a launcher request or a job carries can widen the rule.
 */
#ifndef FNW_SECRET_ENV_H
#define FNW_SECRET_ENV_H

#include "fnworker.h"

#define FNW_SECRETS_PREFIX_ENV "FNW_SECRETS_PREFIX"
#define FNW_SECRETS_ALLOW_ENV "FNW_SECRETS_ALLOW"
#define FNW_SECRETS_DEFAULT_PREFIX "FNW_SECRET_"

/* The value of environment variable `name` for option `opt` of operation
 * `op`: NULL with a message naming the variable and the rule when the
 * operator did not allow it, or (allowed) when it is not set. */
const char *fnw_secret_env_get(const char *name, const char *opt, const char *op, fnw_error *err);

/* 1 when `name` is allowed by the operator's rule. */
int fnw_secret_env_allowed(const char *name);

#endif
