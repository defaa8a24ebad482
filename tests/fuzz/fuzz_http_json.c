/* tests/fuzz/fuzz_http_json.c — fuzz target for what an HTTP service's
 * response body becomes in a row: jansson's parser with the `http`
 * operation's flags, the operation's result picking (RFC 6901 pointers,
 * ops/bind/jptr.c, and the batch form "/items/{i}/v" that takes
 * element i of an array, fnw_httpop_text_pick) for a batch of three elements,
 * the JSON -> typed value conversion (ops/bind/conv_json.c) into
 * several target types, and the error excerpt of a body with a secret
 * masked (fnw_httpop_text_excerpt).
 *
 * Properties (abort() on violation):
 * - parsing the same bytes twice gives equal documents or the same message;
 * - a pick is FOUND, NOT_FOUND or -1 with a non-empty message, the same on
 *   both documents, and a found value converts the same way from both
 *   (equal values, or equal non-empty messages);
 * - a JSON object or array converted to STRING is JSON text that parses
 *   back to a value equal to the original;
 * - an excerpt is NUL-terminated inside its buffer and never holds the
 *   secret, whatever the body.
 * ASan catches over-reads of the body and of the documents.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "codecs/arena.h"
#include "codecs/type.h"
#include "codecs/value.h"
#include "ops/bind/conv.h"
#include "ops/http/httpop_internal.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BATCH 3
#define NTYPES 8
#define SECRET "s3cr3tT0ken"

static const char *const pointers[] = {
    "", "/a", "/items/{i}/v", "/{i}", "/data/-", "/m/a~1b/0", "/items/{i}", "/a/b/c",
};
#define NRESULTS (sizeof pointers / sizeof pointers[0])

static fnw_type *types[NTYPES];
static httpop_result results[NRESULTS];

/* A result as the operation's open compiles it (httpop.c). */
static void compile_result(httpop_result *r, const char *pointer)
{
    fnw_error err;
    char *before, *after;
    r->pointer = (char *)pointer;
    int split = fnw_httpop_text_split_index(pointer, "result.f", &before, &after, &err);
    if (split < 0)
        abort();
    if (split) {
        r->items = fnw_jptr_new(before, "result.f", &err);
        r->item = fnw_jptr_new(after, "result.f", &err);
        free(before);
        free(after);
        if (!r->items || !r->item)
            abort();
    } else if (!(r->whole = fnw_jptr_new(pointer, "result.f", &err))) {
        abort();
    }
}

static void setup(void)
{
    types[0] = fuzz_leaf(FNW_STRING);
    types[1] = fuzz_leaf(FNW_LONG);
    types[2] = fuzz_leaf(FNW_DOUBLE);
    types[3] = fuzz_leaf(FNW_BOOLEAN);
    types[4] = fuzz_with(fuzz_leaf(FNW_BASIC_ARRAY), fuzz_leaf(FNW_STRING), NULL);
    types[5] = fuzz_with(fuzz_with(fuzz_leaf(FNW_MAP), fuzz_leaf(FNW_STRING), NULL), fuzz_leaf(FNW_LONG), NULL);
    types[6] = fuzz_with(fuzz_with(fuzz_leaf(FNW_ROW), fuzz_leaf(FNW_INT), "a"), fuzz_leaf(FNW_FLOAT), "b");
    types[7] = fuzz_with(fuzz_leaf(FNW_LIST), fuzz_with(fuzz_leaf(FNW_PRIMITIVE_ARRAY), fuzz_leaf(FNW_BYTE), NULL), NULL);
    for (int i = 0; i < NTYPES; i++) {
        fnw_error err;
        if (fnw_conv_check_type(types[i], "f", &err) != 0)
            abort();
    }
    for (size_t k = 0; k < NRESULTS; k++)
        compile_result(&results[k], pointers[k]);
}

/* A container converted to STRING must be JSON text equal to it. */
static void check_string_round_trip(const json_t *v, const fnw_value *s)
{
    if (!json_is_object(v) && !json_is_array(v))
        return;
    json_error_t jerr;
    json_t *back = json_loadb((const char *)s->u.bytes, s->count, HTTPOP_JSON_FLAGS, &jerr);
    if (!back || !json_equal(back, (json_t *)v))
        abort();
    json_decref(back);
}

static void convert_each_type(const json_t *v1, const json_t *v2)
{
    for (int i = 0; i < NTYPES; i++) {
        fnw_arena a1, a2;
        fnw_arena_init(&a1, 4096, 0);
        fnw_arena_init(&a2, 4096, 0);
        fnw_value x1, x2;
        fnw_error e1 = { "" }, e2 = { "" };
        int rc1 = fnw_conv_json(types[i], v1, "f", &a1, &x1, &e1);
        int rc2 = fnw_conv_json(types[i], v2, "f", &a2, &x2, &e2);
        if (rc1 != rc2)
            abort();
        if (rc1 != 0 && (rc1 != -1 || !fuzz_same_message(&e1, &e2)))
            abort();
        if (rc1 == 0 && !fnw_value_equal(types[i], &x1, &x2))
            abort();
        if (rc1 == 0 && i == 0 && !x1.is_null)
            check_string_round_trip(v1, &x1);
        fnw_arena_free(&a1);
        fnw_arena_free(&a2);
    }
}

static void pick_each_result(const json_t *d1, const json_t *d2)
{
    for (size_t i = 0; i < BATCH; i++) {
        for (size_t k = 0; k < NRESULTS; k++) {
            json_t *v1 = NULL, *v2 = NULL;
            fnw_error e1 = { "" }, e2 = { "" };
            int rc1 = fnw_httpop_text_pick(&results[k], d1, i, &v1, &e1);
            int rc2 = fnw_httpop_text_pick(&results[k], d2, i, &v2, &e2);
            if (rc1 != rc2)
                abort();
            if (rc1 == -1 && !fuzz_same_message(&e1, &e2))
                abort();
            if (rc1 != -1 && rc1 != FNW_JPTR_FOUND && rc1 != FNW_JPTR_NOT_FOUND)
                abort();
            if (rc1 == FNW_JPTR_FOUND) {
                if (!v1 || !v2 || !json_equal(v1, v2))
                    abort();
                convert_each_type(v1, v2);
            }
        }
    }
}

static void check_excerpt(const uint8_t *data, size_t size)
{
    static const char *const secrets[] = { SECRET, "" };
    static const size_t caps[] = { HTTPOP_EXCERPT * 4 + 8, 64, 8, 7 };
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        char out[HTTPOP_EXCERPT * 4 + 8 + 1];
        memset(out, 'X', sizeof out);
        fnw_httpop_text_excerpt((const char *)data, size, secrets, 2, out, caps[c]);
        if (out[caps[c]] != 'X' || memchr(out, '\0', caps[c]) == NULL || strstr(out, SECRET))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!types[0])
        setup();
    check_excerpt(data, size);
    json_error_t j1, j2;
    json_t *d1 = json_loadb((const char *)data, size, HTTPOP_JSON_FLAGS, &j1);
    json_t *d2 = json_loadb((const char *)data, size, HTTPOP_JSON_FLAGS, &j2);
    if ((d1 == NULL) != (d2 == NULL))
        abort();
    if (!d1 && (j1.text[0] == '\0' || strcmp(j1.text, j2.text) != 0))
        abort();
    if (d1) {
        if (!json_equal(d1, d2))
            abort();
        pick_each_result(d1, d2);
    }
    json_decref(d1);
    json_decref(d2);
    return 0;
}
