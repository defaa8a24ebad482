/* codecs/error.h — the error struct every fallible fnworker function fills.
 *
 * Convention across the project: a function that can fail returns 0 on
 * success and -1 on failure, and writes a message a user can act on into the
 * caller's fnw_error. Messages name what was wrong (the field, the option, the
 * byte offset) rather than where in our code it happened. Callers that add
 * context use fnw_error_prefix() so the innermost cause stays at the end.
 */
#ifndef FNW_ERROR_H
#define FNW_ERROR_H

#include <stddef.h>

#define FNW_ERROR_MAX 1024

typedef struct fnw_error {
    char msg[FNW_ERROR_MAX];
} fnw_error;

/* Sets err->msg from a printf format; returns -1 so callers can
 * `return fnw_error_set(err, ...)`. err may be NULL. */
int fnw_error_set(fnw_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prepends "<context>: " to the current message; returns -1. */
int fnw_error_prefix(fnw_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
