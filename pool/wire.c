/* pool/wire.c — the launcher protocol's request parser and output framer
 * (see wire.h). Everything the launcher sends is untrusted: the parser is
 * bounded, rejects bytes a command line cannot carry and names the problem
 * so the launcher can show it. */
#include "pool/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/decimal.h"
#include "codecs/utf8.h"

void fnw_wire_request_init(fnw_wire_request *r)
{
    memset(r, 0, sizeof *r);
}

/* Length of the request up to and including its empty line, or 0; the
 * search starts at from (bytes before it were searched already). */
static size_t request_end(const char *buf, size_t len, size_t from)
{
    for (size_t i = from > 2 ? from - 2 : 1; i < len; i++) {
        if (buf[i] != '\n')
            continue;
        if (buf[i - 1] == '\n')
            return i + 1;
        if (buf[i - 1] == '\r' && i >= 2 && buf[i - 2] == '\n')
            return i + 1;
    }
    return 0;
}

static int check_text(const char *s, size_t lineno, fnw_error *err)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return fnw_error_set(err, "request line %zu: control character 0x%02x", lineno, *p);
    return 0;
}

static int parse_header(fnw_wire_request *r, char *line, fnw_error *err)
{
    if (strncmp(line, "FNWPOOL ", 8) != 0)
        return fnw_error_set(err,
                             "not a fnworker pool request (the first line must be "
                             "'FNWPOOL %d START')",
                             FNW_WIRE_VERSION);
    char *end;
    long v = strtol(line + 8, &end, 10);
    if (end == line + 8 || *end != ' ')
        return fnw_error_set(err, "malformed first line (expected 'FNWPOOL %d START')", FNW_WIRE_VERSION);
    if (v < FNW_WIRE_VERSION_MIN || v > FNW_WIRE_VERSION)
        return fnw_error_set(err,
                             "unsupported protocol version %ld (this pool speaks versions %d to %d; "
                             "use the launcher script of the same fnworker release)",
                             v, FNW_WIRE_VERSION_MIN, FNW_WIRE_VERSION);
    if (strcmp(end + 1, "START") != 0)
        return fnw_error_set(err, "unknown command '%.40s' (version %ld knows START)", end + 1, v);
    r->version = (int)v;
    return 0;
}

static int set_once(const char **slot, const char *key, const char *value, fnw_error *err)
{
    if (*slot)
        return fnw_error_set(err, "field '%s' given twice", key);
    if (!*value)
        return fnw_error_set(err, "field '%s' is empty", key);
    *slot = value;
    return 0;
}

static int parse_field(fnw_wire_request *r, char *line, size_t lineno, fnw_error *err)
{
    char *eq = strchr(line, '=');
    if (!eq)
        return fnw_error_set(err, "request line %zu: expected key=value", lineno);
    *eq = '\0';
    const char *value = eq + 1;
    if (strcmp(line, "id") == 0)
        return set_once(&r->id, "id", value, err);
    if (strcmp(line, "provision_endpoint") == 0)
        return set_once(&r->provision_endpoint, "provision_endpoint", value, err);
    if (strcmp(line, "token") == 0)
        return set_once(&r->token, "token", value, err);
    if (strcmp(line, "arg") == 0) {
        if (r->n_args == FNW_WIRE_MAX_ARGS)
            return fnw_error_set(err, "more than %d arg fields", FNW_WIRE_MAX_ARGS);
        if (strncmp(value, "--", 2) != 0)
            return fnw_error_set(err, "arg '%.60s' is not a --flag", value);
        r->args[r->n_args++] = value;
        return 0;
    }
    return fnw_error_set(err, "unknown field '%.40s' in a version %d request", line, r->version);
}

/* Splits buf[0, end) into lines in place and reads them. */
static int parse_request(fnw_wire_request *r, size_t end, fnw_error *err)
{
    char *p = r->buf, *stop = r->buf + end;
    size_t lineno = 0;
    while (p < stop) {
        char *nl = memchr(p, '\n', (size_t)(stop - p));
        *nl = '\0';
        if (nl > p && nl[-1] == '\r')
            nl[-1] = '\0';
        lineno++;
        if (*p == '\0')
            break; /* the empty line */
        if (check_text(p, lineno, err) < 0)
            return -1;
        if ((lineno == 1 ? parse_header(r, p, err) : parse_field(r, p, lineno, err)) < 0)
            return -1;
        p = nl + 1;
    }
    if (lineno == 1)
        return fnw_error_set(err, "empty request");
    if (!r->id)
        return fnw_error_set(err, "the request has no id field");
    if (!r->provision_endpoint)
        return fnw_error_set(err, "the request has no provision_endpoint field");
    return 0;
}

int fnw_wire_request_feed(fnw_wire_request *r, const char *data, size_t n, size_t *used, fnw_error *err)
{
    size_t room = FNW_WIRE_REQUEST_MAX - r->len, take = n < room ? n : room;
    size_t before = r->len;
    memcpy(r->buf + before, data, take);
    size_t end = request_end(r->buf, before + take, before);
    /* only the request's own bytes count: what follows its empty line is
     * not read, whether it came in the same read or a later one */
    size_t mine = (end ? end : before + take) - before;
    if (memchr(data, '\0', mine))
        return fnw_error_set(err, "the request holds a NUL byte");
    r->len = before + mine;
    r->buf[r->len] = '\0';
    if (!end) {
        *used = take;
        if (r->len == FNW_WIRE_REQUEST_MAX)
            return fnw_error_set(err, "request larger than %d bytes", FNW_WIRE_REQUEST_MAX);
        return 0;
    }
    *used = end - before;
    return parse_request(r, end, err) < 0 ? -1 : 1;
}

/* ---- output framing ------------------------------------------------------------------ */

void fnw_wire_framer_init(fnw_wire_framer *f, char tag)
{
    f->tag = tag;
    f->len = 0;
}

static void emit_line(fnw_wire_framer *f, fnw_wire_emit_fn emit, void *ctx)
{
    char out[FNW_WIRE_LINE_MAX + 3];
    out[0] = f->tag;
    out[1] = ' ';
    memcpy(out + 2, f->line, f->len);
    out[f->len + 2] = '\n';
    emit(ctx, out, f->len + 3);
    f->len = 0;
}

void fnw_wire_framer_feed(fnw_wire_framer *f, const char *data, size_t n, fnw_wire_emit_fn emit, void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        char c = data[i];
        if (c == '\n') {
            emit_line(f, emit, ctx);
            continue;
        }
        if (f->len == FNW_WIRE_LINE_MAX)
            emit_line(f, emit, ctx);
        f->line[f->len++] = c == '\0' ? '?' : c;
    }
}

void fnw_wire_framer_flush(fnw_wire_framer *f, fnw_wire_emit_fn emit, void *ctx)
{
    if (f->len)
        emit_line(f, emit, ctx);
}

/* ---- version 2: the relay's lines ---------------------------------------------------- */

/* The verb at the start of line, followed by a space; moves *p past it. */
static int verb_is(const char *line, const char *verb, const char **p)
{
    size_t n = strlen(verb);
    if (strncmp(line, verb, n) != 0 || line[n] != ' ')
        return 0;
    *p = line + n + 1;
    return 1;
}

/* The next space-separated word: its length (the word at *p). */
static size_t word_len(const char *p)
{
    const char *sp = strchr(p, ' ');
    return sp ? (size_t)(sp - p) : strlen(p);
}

static int is_id_char(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
           ch == '_' || ch == '-';
}

/* host:port with a loopback host and a port 1 .. 65535. */
static int loopback_endpoint(const char *ep, size_t n)
{
    const char *colon = NULL;
    for (size_t i = 0; i < n; i++)
        if (ep[i] == ':')
            colon = ep + i;
    if (!colon)
        return 0;
    size_t hl = (size_t)(colon - ep), pl = n - hl - 1;
    static const char *const hosts[] = { "127.0.0.1", "localhost", "::1", "[::1]" };
    int host_ok = 0;
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++)
        if (strlen(hosts[i]) == hl && memcmp(ep, hosts[i], hl) == 0)
            host_ok = 1;
    if (!host_ok || pl == 0 || pl > 5 || colon[1] == '0')
        return 0;
    unsigned port = 0;
    for (size_t i = 1; i <= pl; i++) {
        if (colon[i] < '0' || colon[i] > '9')
            return 0;
        port = port * 10 + (unsigned)(colon[i] - '0');
    }
    return port >= 1 && port <= 65535;
}

int fnw_wire_worker_line(const char *line, fnw_wire_relay_line *out, fnw_error *err)
{
    memset(out, 0, sizeof *out);
    const char *p;
    unsigned long long n;
    int spawn = verb_is(line, "SPAWN", &p);
    if (!spawn && !verb_is(line, "KILL", &p))
        return fnw_error_set(err, "not a SPAWN or KILL line: '%.40s'", line);
    if (fnw_decimal_read(&p, UINT32_MAX, &n) != 0 || n == 0)
        return fnw_error_set(err, "%s: the child's number is not a decimal from 1 to %u",
                             spawn ? "SPAWN" : "KILL", UINT32_MAX);
    out->n = (uint32_t)n;
    if (!spawn) {
        out->verb = FNW_WIRE_KILL;
        if (*p || p[-1] == ' ')
            return fnw_error_set(err, "KILL %u: unexpected text after the number", out->n);
        return 0;
    }
    out->verb = FNW_WIRE_SPAWN;
    size_t il = word_len(p);
    if (il == 0 || il > FNW_WIRE_RELAY_ARG_MAX)
        return fnw_error_set(err, "SPAWN %u: the relay id is not 1 to %d bytes", out->n,
                             FNW_WIRE_RELAY_ARG_MAX);
    for (size_t i = 0; i < il; i++)
        if (!is_id_char((unsigned char)p[i]))
            return fnw_error_set(err, "SPAWN %u: the relay id holds a byte other than [A-Za-z0-9._-]", out->n);
    if (p[il] != ' ')
        return fnw_error_set(err, "SPAWN %u: no endpoint after the relay id", out->n);
    const char *ep = p + il + 1;
    size_t el = strlen(ep);
    if (el == 0 || el > FNW_WIRE_RELAY_ARG_MAX || memchr(ep, ' ', el) || !loopback_endpoint(ep, el))
        return fnw_error_set(err,
                             "SPAWN %u: the endpoint '%.80s' is not <host>:<port> on loopback (127.0.0.1, "
                             "localhost or ::1)",
                             out->n, ep);
    out->id = p;
    out->endpoint = ep;
    out->text_len = il; /* the id's length */
    return 0;
}

int fnw_wire_launcher_line(const char *line, size_t len, fnw_wire_relay_line *out)
{
    memset(out, 0, sizeof *out);
    const char *p;
    unsigned long long n, v;
    if (verb_is(line, "C", &p))
        out->verb = FNW_WIRE_C;
    else if (verb_is(line, "SPAWNED", &p))
        out->verb = FNW_WIRE_SPAWNED;
    else if (verb_is(line, "SPAWNFAIL", &p))
        out->verb = FNW_WIRE_SPAWNFAIL;
    else if (verb_is(line, "CHILDEXIT", &p))
        out->verb = FNW_WIRE_CHILDEXIT;
    else
        return -1;
    if (fnw_decimal_read(&p, UINT32_MAX, &n) != 0 || n == 0)
        return -1;
    out->n = (uint32_t)n;
    switch (out->verb) {
    case FNW_WIRE_SPAWNED:
        if (fnw_decimal_read(&p, INT32_MAX, &v) != 0 || v == 0 || *p || p[-1] == ' ')
            return -1;
        out->value = (long long)v;
        return 0;
    case FNW_WIRE_CHILDEXIT: /* 0 is a code too */
        if (fnw_decimal_read(&p, 255, &v) != 0 || *p || p[-1] == ' ')
            return -1;
        out->value = (long long)v;
        return 0;
    default: /* SPAWNFAIL, C: the rest of the line */
        out->text = p;
        out->text_len = len - (size_t)(p - line);
        return 0;
    }
}

/* ---- worker figures ------------------------------------------------------------------ */

int fnw_wire_figures_parse(const char *line, fnw_wire_figures *f)
{
    fnw_wire_figures g = { .known = 1 };
    int end = 0;
    if (sscanf(line,
               "bundles=%" SCNu64 " bundle_errors=%" SCNu64 " records_in=%" SCNu64 " records_out=%" SCNu64
               " calls=%" SCNu64 " call_failures=%" SCNu64 " active_bundles=%" SCNu64 "%n",
               &g.bundles, &g.bundle_errors, &g.records_in, &g.records_out, &g.calls, &g.call_failures,
               &g.active_bundles, &end) != 7 ||
        line[end] != '\0')
        return -1;
    *f = g;
    return 0;
}

/* ---- a worker's series lines (codecs/metric_names.h) --------------------------------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* The percent-encoded word at *p into out (FNW_METRIC_LABEL_MAX + 1):
 * 1 .. FNW_METRIC_LABEL_MAX bytes, none of them a control byte; *p moves
 * past the word and its space. */
static int label_word(const char **p, char *out)
{
    size_t n = 0;
    const char *s = *p;
    for (; *s && *s != ' '; s++) {
        int c = (unsigned char)*s;
        if (c == '%') {
            int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);
            if (lo < 0)
                return -1;
            c = hi * 16 + lo;
            s += 2;
        }
        if (c < 0x20 || c == 0x7f || n == FNW_METRIC_LABEL_MAX)
            return -1;
        out[n++] = (char)c;
    }
    if (n == 0 || *s != ' ')
        return -1;
    out[n] = '\0';
    *p = s + 1;
    return 0;
}

/* A decimal in [min, INT64_MAX]: "0" or no leading zero, "-1" the one
 * negative number a gauge may carry; *p moves past it. */
static int number(const char **p, int64_t min, int64_t *out)
{
    const char *s = *p;
    if (s[0] == '-' && s[1] == '1' && (s[2] < '0' || s[2] > '9')) {
        if (min > -1)
            return -1;
        *out = -1;
        *p = s + 2;
        return 0;
    }
    unsigned long long v;
    if (fnw_decimal_scan(&s, INT64_MAX, &v) != 0)
        return -1;
    *out = (int64_t)v;
    *p = s;
    return 0;
}

/* The table row whose stats key is key[0, n) with the suffix (or none). */
static int row_of(const char *key, size_t n, const char *suffix)
{
    size_t sl = strlen(suffix);
    for (int i = 0; i < FNW_M_COUNT; i++) {
        const char *k = fnw_metric_names[i].key;
        if (k && strlen(k) + sl == n && strncmp(key, k, strlen(k)) == 0 &&
            strncmp(key + strlen(k), suffix, sl) == 0)
            return i;
    }
    return -1;
}

/* One key=value; unknown keys are skipped (a newer worker's figures). */
static int series_field(const char *key, size_t kl, const char **p, fnw_metric_series *s)
{
    int i;
    if (kl >= 2 && strncmp(key, "c.", 2) == 0) {
        int64_t v;
        if (!fnw_metric_counter_name_ok(key + 2, kl - 2) || number(p, 0, &v) != 0)
            return -1;
        for (size_t k = 0; k < s->ncounters; k++)
            if (strlen(s->counters[k].name) == kl - 2 && strncmp(s->counters[k].name, key + 2, kl - 2) == 0)
                return -1; /* twice */
        if (s->ncounters == FNW_COUNTERS_MAX)
            return -1;
        memcpy(s->counters[s->ncounters].name, key + 2, kl - 2);
        s->counters[s->ncounters].name[kl - 2] = '\0';
        s->counters[s->ncounters++].value = v;
        return 0;
    }
    if ((i = row_of(key, kl, "")) >= 0 && fnw_metric_names[i].kind == FNW_METRIC_LATENCY) {
        for (int b = 0; b <= FNW_METRIC_LE_N; b++) {
            if ((b && *(*p)++ != ',') || number(p, 0, &s->lat[b]) != 0)
                return -1;
        }
        return 0;
    }
    if (i >= 0 && fnw_metric_names[i].kind != FNW_METRIC_DIST)
        return number(p, fnw_metric_names[i].kind == FNW_METRIC_GAUGE ? -1 : 0, &s->value[i]);
    if ((i = row_of(key, kl, "_count")) >= 0 && fnw_metric_names[i].kind == FNW_METRIC_DIST)
        return number(p, 0, &s->value[i]);
    if ((i = row_of(key, kl, "_sum")) >= 0 && fnw_metric_names[i].kind == FNW_METRIC_DIST)
        return number(p, 0, &s->dist_sum[i]);
    if ((i = row_of(key, kl, "_sum_us")) >= 0 && fnw_metric_names[i].kind == FNW_METRIC_LATENCY)
        return number(p, 0, &s->lat_sum_us);
    while (**p && **p != ' ')
        (*p)++; /* not known here */
    return 0;
}

int fnw_wire_series_parse(const char *line, fnw_metric_series *out)
{
    if (strncmp(line, "op1 ", 4) != 0 || strlen(line) >= FNW_METRIC_LINE_MAX)
        return -1;
    fnw_metric_series s;
    fnw_metric_series_init(&s, "", "");
    const char *p = line + 4;
    if (label_word(&p, s.transform) != 0 || label_word(&p, s.operation) != 0)
        return -1;
    /* they become Prometheus label values, which must be UTF-8 */
    if (!fnw_utf8_valid((const uint8_t *)s.transform, strlen(s.transform)) ||
        !fnw_utf8_valid((const uint8_t *)s.operation, strlen(s.operation)))
        return -1;
    for (;;) {
        const char *key = p;
        while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '.')
            p++;
        if (p == key || *p != '=')
            return -1;
        size_t kl = (size_t)(p - key);
        p++;
        if (series_field(key, kl, &p, &s) != 0)
            return -1;
        if (*p == '\0')
            break;
        if (*p != ' ' || p[1] == '\0')
            return -1;
        p++;
    }
    *out = s;
    return 0;
}
