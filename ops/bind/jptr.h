/* ops/bind/jptr.h — JSON pointers (RFC 6901) that pick a value out of
 * a JSON response: compiled once from an option at open, evaluated per
 * response on a jansson document.
 *
 * Syntax: "" is the whole document; otherwise '/'-separated reference
 * tokens, each starting with '/'. In a token "~0" is '~' and "~1" is '/';
 * any other '~' is an error at compile time, as is text not starting with
 * '/' and a pointer longer than FNW_JPTR_MAX_TEXT bytes.
 *
 * Evaluation walks the tokens from the root:
 *   object  the member whose name is the token (names are compared as
 *           bytes, so "/a" does not match a member "a\u0000b")
 *   array   the token must be "0" or a decimal without leading zeros; the
 *           element at that index
 *   scalar  nothing to descend into
 * Three results, so an operation can apply its missing-result policy only to
 * real absences:
 *   FNW_JPTR_FOUND      *out is the value (borrowed from the document)
 *   FNW_JPTR_NOT_FOUND  a missing member, an index past the end, or a token
 *                       below a scalar: the document simply lacks the value
 *   -1                  the pointer cannot address this document: "-" (the
 *                       element after the last, which cannot be read) or a
 *                       token that is not an index applied to an array; the
 *                       message names the option, the pointer and the token.
 * A JSON null that exists is FOUND (as json null), not NOT_FOUND.
 */
#ifndef FNW_JPTR_H
#define FNW_JPTR_H

#include <jansson.h>
#include <stddef.h>

#include "codecs/error.h"

#define FNW_JPTR_MAX_TEXT 4096u

enum { FNW_JPTR_FOUND = 0, FNW_JPTR_NOT_FOUND = 1 };

typedef struct fnw_jptr fnw_jptr;

/* option names the pointer in messages. NULL with a message on failure. */
fnw_jptr *fnw_jptr_new(const char *text, const char *option, fnw_error *err);
void fnw_jptr_free(fnw_jptr *p);

/* Number of reference tokens (0 for ""). */
size_t fnw_jptr_depth(const fnw_jptr *p);

/* FNW_JPTR_FOUND, FNW_JPTR_NOT_FOUND or -1 (see above). */
int fnw_jptr_get(const fnw_jptr *p, const json_t *doc, json_t **out, fnw_error *err);

#endif
