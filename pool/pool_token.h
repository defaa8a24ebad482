/* pool/pool_token.h — the shared secret a launcher must send with its start
 * request (the `token=` field, pool/wire.h), when the operator gave one.
 *
 * The pool reads it at start from --token-file PATH, else from the file
 * named by FNW_POOL_TOKEN_FILE, else from FNW_POOL_TOKEN; none of them: no
 * token is asked for. The launcher (scripts/pyflink-udf-runner.sh) reads the
 * same two variables in the TaskManager container. Trailing newlines of a
 * file are dropped. A token is 16 to 1024 printable characters without
 * spaces; it is compared in constant time and never written anywhere. The
 * workers do not inherit FNW_POOL_TOKEN (pool/children.c). */
#ifndef FNW_POOL_TOKEN_H
#define FNW_POOL_TOKEN_H

#include <stddef.h>

#include "codecs/error.h"

#define FNW_POOL_TOKEN_MIN 16
#define FNW_POOL_TOKEN_MAX 1024
#define FNW_POOL_TOKEN_ENV "FNW_POOL_TOKEN"
#define FNW_POOL_TOKEN_FILE_ENV "FNW_POOL_TOKEN_FILE"

typedef struct fnw_pool_token {
    int set; /* 0: no token is asked for */
    size_t len;
    char value[FNW_POOL_TOKEN_MAX + 1];
    char source[300]; /* where it came from, for messages */
} fnw_pool_token;

/* file: --token-file or NULL. Fails naming the source when it cannot be
 * read or the token is malformed. */
int fnw_pool_token_load(fnw_pool_token *t, const char *file, fnw_error *err);
/* 1 when no token is asked for, or given (NUL-terminated, may be NULL) is it. */
int fnw_pool_token_accepts(const fnw_pool_token *t, const char *given);
/* Wipes the value. */
void fnw_pool_token_clear(fnw_pool_token *t);

#endif
