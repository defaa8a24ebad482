/* ops/secrets/secret_mask.h — hiding secrets in text that leaves the worker.
 * A secret is a value an operation read from the environment at open (a
 * Redis password, an HTTP header's token, a KServe auth header). It is sent
 * to the service and nowhere else: whatever the service answers may quote
 * it (a body echoing the request, an error naming the rejected token), so
 * any text built from an answer (error messages, body excerpts) goes
 * through here before it reaches a bundle error or a log line.
 */
#ifndef FNW_SECRET_MASK_H
#define FNW_SECRET_MASK_H

#include <stddef.h>

#define FNW_SECRET_MASK_B64_MAX 512 /* base64 characters of a secret matched at most */

/* Overwrites with '*' every spelling of each non-empty secret in b[0..n):
 * the bytes themselves, any mix of JSON escapes (\/, \uXXXX, ...) and
 * percent escapes (%2F, + for a space) that decodes to them, and the
 * secret's bytes inside base64 text (standard or URL alphabet, any
 * alignment, e.g. a Basic credential of user:secret); also a secret's
 * beginning that ends b (the rest was cut off). NULL entries are skipped. */
void fnw_secret_mask(char *b, size_t n, const char *const *secrets, size_t n_secrets);

/* The credential of an authorization value "Scheme credential" ("Bearer
 * tok", "Basic dXNlcjpwdw==": what follows the scheme and its spaces), which
 * a server may quote alone; NULL when value has no such form or the
 * credential is shorter than 4 bytes. */
const char *fnw_secret_mask_credential(const char *value);

/* fnw_secret_mask on the NUL-terminated text s. */
void fnw_secret_mask_str(char *s, const char *const *secrets, size_t n_secrets);

#endif
