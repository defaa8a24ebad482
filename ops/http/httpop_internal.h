/* ops/http/httpop_internal.h — internal to the `http` operation (the
 * files httpop*.c), not part of any interface: the instance state its
 * open builds and its calls read, and the pure helpers (option text
 * splitting, status classes, error excerpts) that the unit tests check
 * without a server.
 *
 * The files: httpop_text.c (the helpers), httpop.c (options,
 * validation, open and close), httpop_call.c (a call: request, response,
 * results, cancel), httpop_cache.c (the lookup cache in front of the
 * client, per element).
 */
#ifndef FNW_HTTPOP_INTERNAL_H
#define FNW_HTTPOP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/buf.h"
#include "ops/bind/jptr.h"
#include "ops/bind/missing.h"
#include "ops/bind/outrow.h"
#include "ops/bind/tmpl.h"
#include "ops/clients/http.h"
#include "ops/clients/lookup_cache.h"
#include "runtime/operation.h"

#define HTTPOP_MAX_HEADERS 32
#define HTTPOP_MAX_SECRETS (2 * HTTPOP_MAX_HEADERS)
#define HTTPOP_EXCERPT 200                /* bytes of a response body quoted in errors */
#define HTTPOP_ITEMS "{items}"            /* batch_body's placeholder */
#define HTTPOP_INDEX "{i}"                /* a result pointer's batch index token */
#define HTTPOP_JSON_FLAGS JSON_DECODE_ANY /* json_loadb flags for a response body */

/* One header: a template ("Name: " is literal text in front of it) or a
 * value read from the environment at open (whole line prebuilt). */
typedef struct httpop_header {
    char *name;
    fnw_tmpl *value; /* NULL for a secret */
    char *line;      /* "Name: secret" for a secret */
} httpop_header;

/* One result field. In batch mode with a {i} token the pointer is split
 * around it: items (the array) and item (inside each element). */
typedef struct httpop_result {
    char *pointer;          /* the option value, for messages */
    fnw_jptr *whole;        /* no {i}: the value itself */
    fnw_jptr *items, *item; /* with {i} */
} httpop_result;

typedef struct httpop_state {
    struct ev_loop *loop;
    fnw_http *http;
    int batched;
    char method[17];
    fnw_tmpl *url_path, *url_query; /* url_query NULL when the URL has no '?' */
    httpop_header headers[HTTPOP_MAX_HEADERS];
    size_t n_headers;
    int add_content_type;              /* a body and no header.Content-Type */
    fnw_tmpl *body;                    /* NULL: no body */
    char *batch_prefix, *batch_suffix; /* batch_body around {items} */
    const fnw_type *input_type;
    fnw_outrow *out;
    httpop_result *results; /* fnw_outrow_results(out) entries */
    fnw_missing on_missing;
    int short_batch_missing; /* on_short_batch: 0 fail (retryable), 1 missing rows follow on_missing */
    long request_timeout_ms;
    size_t max_response_bytes;
    char *secrets[HTTPOP_MAX_SECRETS]; /* values from the environment, to mask */
    size_t n_secrets;
    fnw_buf buf; /* request text under construction */
    fnw_buf body_buf;
    uint64_t missing; /* elements dropped by on_missing=empty */
    /* the lookup cache: per element with cache_max_rows, else NULL */
    fnw_lookup_cache *cache;
    int cache_missing;
    fnw_http_done_fn cache_done; /* the call's response handler, for every waiter */
    fnw_buf cache_key, cache_answer;
} httpop_state;

/* ---- helpers (httpop_text.c) ------------------------------------------ */

/* Offset of the first '?' of a URL template outside placeholders (the start
 * of the query), or strlen(url) when there is none. */
size_t fnw_httpop_text_query_start(const char *url);

/* Offset of the end of the authority of URL template url ("scheme://host:port"):
 * the first '/', '?' or '#' after "://", or strlen(url). */
size_t fnw_httpop_text_authority_end(const char *url);

/* The first path segment of the rendered URL path `path` (up to its '?' or
 * end) that is "." or "..", which a client or server would resolve by
 * removing path segments; NULL when there is none. *len gets its length. */
const char *fnw_httpop_text_dot_segment(const char *path, size_t *len);

/* Splits batch_body at its one HTTPOP_ITEMS into malloc'd prefix and suffix;
 * fails (naming the option) unless it occurs exactly once and the text with
 * an empty array in its place is JSON. */
int fnw_httpop_text_split_batch_body(const char *text, char **prefix, char **suffix, fnw_error *err);

/* Splits a result pointer at a reference token that is exactly HTTPOP_INDEX:
 * *before = the pointer to the array, *after = the pointer inside each item
 * (both malloc'd). 0 when there is none (both NULL), 1 when split, -1 when
 * the token occurs twice (err names the option). */
int fnw_httpop_text_split_index(const char *pointer, const char *option, char **before, char **after,
                                fnw_error *err);

/* 1 if name is a valid header name (an RFC 9110 token). */
int fnw_httpop_text_header_name_ok(const char *name);

/* What a status means for a call. */
typedef enum httpop_status {
    HTTPOP_OK,         /* 2xx */
    HTTPOP_MISSING,    /* 404: the on_missing policy */
    HTTPOP_RETRY,      /* 408, 5xx but 503: retryable failure */
    HTTPOP_OVERLOADED, /* 429, 503: refused for load (fnw_call_fail_overloaded) */
    HTTPOP_REFUSED,    /* anything else: final failure */
} httpop_status;
httpop_status fnw_httpop_text_classify(long status);

/* Writes a printable excerpt of body (at most HTTPOP_EXCERPT bytes, quoted,
 * '\' and non-printable bytes escaped, "..." when cut) into out, with every
 * occurrence of a secret, and a secret's beginning cut off at the end,
 * replaced by '*'. */
void fnw_httpop_text_excerpt(const char *body, size_t len, const char *const *secrets, size_t n_secrets,
                             char *out, size_t cap);

/* With a {i} pointer whose array is in doc: 1 and its element count in
 * *count; otherwise 0. */
int fnw_httpop_text_items_count(const httpop_result *r, const json_t *doc, size_t *count);

/* The value of result r for batch element i (0 when not batched) in the
 * parsed response doc: FNW_JPTR_FOUND with *out borrowed from doc,
 * FNW_JPTR_NOT_FOUND, or -1 with a message (a pointer that cannot address
 * doc, or no array where r's {i} token stands). */
int fnw_httpop_text_pick(const httpop_result *r, const json_t *doc, size_t i, json_t **out, fnw_error *err);

/* ---- the lookup cache (httpop_cache.c) --------------------------------- */

/* Sends rq through the cache for the call whose context is x (w embedded
 * in it): the key is the method, the URL, the header lines and the body. A
 * kept answer (2xx, or 404 with cache_missing: status and body) is handed
 * to done(x, ...) at once and 1 is returned (the call is settled); a
 * request already out for the same key is joined, or rq is sent for every
 * call that joins it: 0 (done(x, ...) runs later with the response or the
 * failure). -1 with err when rq cannot be sent. */
int fnw_httpop_cache_send(httpop_state *st, const fnw_http_request *rq, fnw_http_done_fn done, void *x,
                          fnw_lookup_waiter *w, fnw_error *err);
/* The call waiting in w is cancelled: the request is cancelled with it when
 * no other call waits for it. */
void fnw_httpop_cache_cancel(httpop_state *st, fnw_lookup_waiter *w);

/* ---- the call (httpop_call.c) ------------------------------------------ */
void fnw_httpop_call(void *state, fnw_call *call);
void fnw_httpop_call_cancel(void *state, fnw_call *call);

#endif
