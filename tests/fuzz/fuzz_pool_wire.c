/* tests/fuzz/fuzz_pool_wire.c — fuzz target for the worker pool's launcher
 * protocol (pool/wire.c): the request parser that reads whatever a client
 * of the pool's TCP port sends, the framer that turns a worker's output into
 * protocol lines, and the parser of a worker's stats line.
 *
 * The first input byte picks the chunk size (1 to 64 bytes) the request is
 * fed in; the rest is the bytes of the connection.
 *
 * Properties (abort() on violation):
 * - the request parser gives the same answer fed all at once and in chunks:
 *   the same status, fields and arguments, and on success the same count of
 *   bytes taken; it never takes more bytes than it is given;
 * - an accepted request has an id and a provision endpoint, at most
 *   FNW_WIRE_MAX_ARGS arguments each starting with "--", and no control
 *   character in any field (the optional token too); a refused one has a non-empty message;
 * - the framer's lines are "<tag> <text>\n" with no newline or NUL inside
 *   and at most FNW_WIRE_LINE_MAX bytes of text, and their texts put
 *   together are the input without its newlines, NULs shown as '?';
 * - a stats line parses the same way twice and a refused one leaves the
 *   figures untouched;
 * - a series line (fnw_wire_series_parse, what a worker reports per
 *   operation step) parses the same way twice, a refused one leaves the
 *   series untouched, and an accepted one holds labels of 1 to
 *   FNW_METRIC_LABEL_MAX bytes with no control byte, counters >= 0, gauges
 *   >= -1, at most FNW_COUNTERS_MAX operation counters; formatted again it
 *   is at most FNW_METRIC_LINE_MAX bytes and parses back to the same series.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pool/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What one feeding gives. */
typedef struct outcome {
    int rc;
    size_t taken;                 /* bytes taken in all, on success */
    char msg[sizeof(fnw_error)];
} outcome;

static fnw_wire_request req_whole, req_chunked;

static void feed(fnw_wire_request *r, const uint8_t *data, size_t size, size_t chunk, outcome *o)
{
    fnw_wire_request_init(r);
    memset(o, 0, sizeof *o);
    size_t at = 0;
    do {
        size_t n = size - at < chunk ? size - at : chunk, used = 0;
        fnw_error err = { "" };
        o->rc = fnw_wire_request_feed(r, (const char *)data + at, n, &used, &err);
        if (o->rc != -1 && used > n)
            abort();
        if (o->rc == -1) {
            if (err.msg[0] == '\0')
                abort();
            memcpy(o->msg, err.msg, sizeof o->msg);
        }
        if (o->rc == 1)
            o->taken = at + used;
        if (o->rc != 0)
            return;
        at += n;
    } while (at < size);
}

static int field_ok(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 0;
    return 1;
}

static int same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static void check_request(const uint8_t *data, size_t size, size_t chunk)
{
    outcome w, c;
    feed(&req_whole, data, size, size ? size : 1, &w);
    feed(&req_chunked, data, size, chunk, &c);
    if (w.rc != c.rc || (w.rc == -1 && strcmp(w.msg, c.msg) != 0))
        abort();
    if (w.rc != 1)
        return;
    const fnw_wire_request *r = &req_whole, *r2 = &req_chunked;
    if (w.taken != c.taken || w.taken > size || !r->id || !r->provision_endpoint)
        abort();
    if (!same(r->id, r2->id) || !same(r->provision_endpoint, r2->provision_endpoint) || r->n_args != r2->n_args)
        abort();
    if (r->n_args > FNW_WIRE_MAX_ARGS || !field_ok(r->id) || !field_ok(r->provision_endpoint))
        abort();
    if (!same(r->token, r2->token) || (r->token && !field_ok(r->token)))
        abort();
    for (size_t i = 0; i < r->n_args; i++)
        if (!same(r->args[i], r2->args[i]) || strncmp(r->args[i], "--", 2) != 0 || !field_ok(r->args[i]))
            abort();
}

/* The framer's output, checked line by line and put back together. */
typedef struct framed {
    char *text;
    size_t len;
} framed;

static void on_line(void *ctx, const char *line, size_t len)
{
    framed *f = ctx;
    if (len < 3 || len > FNW_WIRE_LINE_MAX + 3 || line[0] != 'E' || line[1] != ' ' || line[len - 1] != '\n')
        abort();
    if (memchr(line + 2, '\n', len - 3) || memchr(line, '\0', len))
        abort();
    memcpy(f->text + f->len, line + 2, len - 3);
    f->len += len - 3;
}

static void check_framer(const uint8_t *data, size_t size, size_t chunk)
{
    static fnw_wire_framer fr;
    framed f = { malloc(size + 1), 0 };
    char *want = malloc(size + 1);
    if (!f.text || !want)
        abort();
    size_t n = 0;
    for (size_t i = 0; i < size; i++)
        if (data[i] != '\n')
            want[n++] = data[i] == '\0' ? '?' : (char)data[i];
    fnw_wire_framer_init(&fr, 'E');
    for (size_t at = 0; at < size; at += chunk)
        fnw_wire_framer_feed(&fr, (const char *)data + at, size - at < chunk ? size - at : chunk, on_line, &f);
    fnw_wire_framer_flush(&fr, on_line, &f);
    if (f.len != n || memcmp(f.text, want, n) != 0)
        abort();
    free(f.text);
    free(want);
}

static void check_figures(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1);
    if (!line)
        abort();
    memcpy(line, data, size);
    line[size] = '\0';
    fnw_wire_figures f1, f2, untouched;
    memset(&f1, 0xa5, sizeof f1);
    memset(&f2, 0xa5, sizeof f2);
    memset(&untouched, 0xa5, sizeof untouched);
    int rc1 = fnw_wire_figures_parse(line, &f1);
    int rc2 = fnw_wire_figures_parse(line, &f2);
    if (rc1 != rc2 || memcmp(&f1, &f2, sizeof f1) != 0)
        abort();
    if (rc1 != 0 && memcmp(&f1, &untouched, sizeof f1) != 0)
        abort();
    if (rc1 == 0 && f1.known != 1)
        abort();
    free(line);
}

static int label_ok(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= FNW_METRIC_LABEL_MAX && field_ok(s);
}

static void check_series(const uint8_t *data, size_t size)
{
    static fnw_metric_series s1, s2, back, untouched;
    static char again[FNW_METRIC_LINE_MAX];
    char *line = malloc(size + 5);
    if (!line)
        abort();
    memcpy(line, "op1 ", 4); /* most inputs get past the version word */
    memcpy(line + 4, data, size);
    line[size + 4] = '\0';
    memset(&s1, 0xa5, sizeof s1);
    memset(&s2, 0xa5, sizeof s2);
    memset(&untouched, 0xa5, sizeof untouched);
    int rc1 = fnw_wire_series_parse(line, &s1);
    int rc2 = fnw_wire_series_parse(line, &s2);
    if (rc1 != rc2 || memcmp(&s1, &s2, sizeof s1) != 0)
        abort();
    free(line);
    if (rc1 != 0) {
        if (memcmp(&s1, &untouched, sizeof s1) != 0)
            abort();
        return;
    }
    if (!label_ok(s1.transform) || !label_ok(s1.operation) || s1.ncounters > FNW_COUNTERS_MAX)
        abort();
    for (int i = 0; i < FNW_M_COUNT; i++)
        if (s1.value[i] < (fnw_metric_names[i].kind == FNW_METRIC_GAUGE ? -1 : 0) || s1.dist_sum[i] < 0)
            abort();
    size_t n = fnw_metric_series_format(&s1, again);
    if (n >= FNW_METRIC_LINE_MAX || again[n - 1] != '\n')
        abort();
    again[n - 1] = '\0';
    memset(&back, 0xa5, sizeof back);
    if (fnw_wire_series_parse(again, &back) != 0)
        abort();
    if (strcmp(back.transform, s1.transform) || strcmp(back.operation, s1.operation) ||
        memcmp(back.value, s1.value, sizeof s1.value) || memcmp(back.lat, s1.lat, sizeof s1.lat) ||
        back.lat_sum_us != s1.lat_sum_us || back.ncounters != s1.ncounters)
        abort();
    for (int i = 0; i < FNW_M_COUNT; i++)
        if (fnw_metric_names[i].kind == FNW_METRIC_DIST && back.dist_sum[i] != s1.dist_sum[i])
            abort();
    for (size_t k = 0; k < s1.ncounters; k++)
        if (strcmp(back.counters[k].name, s1.counters[k].name) || back.counters[k].value != s1.counters[k].value)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = 1 + (data[0] & 63);
    check_request(data + 1, size - 1, chunk);
    check_framer(data + 1, size - 1, chunk);
    check_figures(data + 1, size - 1);
    check_series(data + 1, size - 1);
    return 0;
}
