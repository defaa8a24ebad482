/* ops/bind/missing.h — what an operation does when a service has no
 * result for an element (a Redis nil, a JSON pointer that finds nothing, a
 * 404): the per-operation "missing result" policy and its option parser.
 *
 *   null   (FNW_MISSING_NULL)   emit the output row with the result fields
 *                               null; the input fields are still copied
 *   empty  (FNW_MISSING_EMPTY)  emit nothing for the element and count it
 *                               (the operation keeps the counter, so a job
 *                               that drops rows shows how many)
 *   fail   (FNW_MISSING_FAIL)   fail the call with a message naming the
 *                               element's request
 * The option values are exactly these lowercase words.
 */
#ifndef FNW_MISSING_H
#define FNW_MISSING_H

#include "codecs/error.h"
#include "runtime/operation.h"

typedef enum fnw_missing {
    FNW_MISSING_NULL = 0,
    FNW_MISSING_EMPTY,
    FNW_MISSING_FAIL,
} fnw_missing;

/* "null", "empty" or "fail". */
const char *fnw_missing_name(fnw_missing m);

/* Parses text (one of the names above); the message names option. */
int fnw_missing_parse(const char *text, const char *option, fnw_missing *out, fnw_error *err);

/* The option key of o; def when absent. */
int fnw_missing_option(const fnw_options *o, const char *key, fnw_missing def, fnw_missing *out,
                       fnw_error *err);

#endif
