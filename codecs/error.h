/* codecs/error.h — the error struct every fallible fnworker function fills.
 *
 * fnw_error and fnw_error_set are public (fnworker.h), with the convention:
 * a function that can fail returns 0 on success and -1 on failure, and
 * writes a message a user can act on into the caller's fnw_error. Messages
 * name what was wrong (the field, the option, the byte offset) rather than
 * where in our code it happened. Inside the tree, callers that add context
 * use fnw_error_prefix() so the innermost cause stays at the end.
 */
#ifndef FNW_ERROR_H
#define FNW_ERROR_H

#include <stddef.h>

#include "fnworker.h"

/* Prepends "<context>: " to the current message; returns -1. */
int fnw_error_prefix(fnw_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
