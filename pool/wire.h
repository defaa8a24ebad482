/* pool/wire.h — the launcher protocol between scripts/pyflink-udf-runner.sh
 * (in the TaskManager container, plain bash over /dev/tcp) and the worker
 * pool (in the sidecar). Text, line based, versioned; no I/O here.
 *
 * Request (launcher -> pool), at most FNW_WIRE_REQUEST_MAX bytes, ended by
 * an empty line:
 *   FNWPOOL <version> START   (version 1 or 2; the fields are the same)
 *   id=<worker id>
 *   provision_endpoint=<host:port>
 *   token=<shared secret>     (optional; required when the pool has one, pool/pool_token.h)
 *   arg=<--flag=value>        (zero or more; the pool passes only those
 *                             pool/worker_args.h allows, in order)
 *   <empty line>
 * Reply (pool -> launcher), one line each:
 *   OK <pid>                  the worker runs
 *   ERROR <reason>            nothing was started; the pool closes
 *   O <text> / E <text>       a line the worker wrote on stdout / stderr
 *   EXIT <code>               the worker ended (128+N: killed by signal N);
 *                             the pool closes
 * The launcher closing its end stops the worker.
 *
 * Version 2 adds, after OK, the lines of the relay to PyFlink's Python
 * worker (docs/design/relay.md, section 10; pool/relay_link.h), which the
 * pool checks here before it passes them on:
 *   pool -> launcher   SPAWN <n> <relay id> <host:port>   (from the worker)
 *                      KILL <n>
 *   launcher -> pool   SPAWNED <n> <pid>                  (to the worker)
 *                      SPAWNFAIL <n> <reason>
 *                      C <n> <line>
 *                      CHILDEXIT <n> <code>
 * A version 1 launcher's worker runs with --relay=off.
 */
#ifndef FNW_POOL_WIRE_H
#define FNW_POOL_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"
#include "codecs/metric_names.h"

/* The newest version this pool speaks; it also takes FNW_WIRE_VERSION_MIN. */
#define FNW_WIRE_VERSION 2
#define FNW_WIRE_VERSION_MIN 1
#define FNW_WIRE_REQUEST_MAX 16384
#define FNW_WIRE_MAX_ARGS 32
/* A worker's output line longer than this is sent as several lines. */
#define FNW_WIRE_LINE_MAX 4096

/* One request being read; embedded by the connection that reads it. The
 * strings point into buf and live as long as the struct. */
typedef struct fnw_wire_request {
    char buf[FNW_WIRE_REQUEST_MAX + 1];
    size_t len;
    int version; /* of a complete request: 1 or 2 */
    const char *id;
    const char *provision_endpoint;
    const char *token; /* NULL when not given */
    const char *args[FNW_WIRE_MAX_ARGS];
    size_t n_args;
} fnw_wire_request;

void fnw_wire_request_init(fnw_wire_request *r);
/* Takes the next bytes of the connection. Returns 1 when the request is
 * complete (*used says how many of these bytes it took), 0 when it needs
 * more, -1 on a malformed, oversized or unsupported request, with a message
 * for the launcher. */
int fnw_wire_request_feed(fnw_wire_request *r, const char *data, size_t n, size_t *used, fnw_error *err);

/* Output framing: splits a worker's byte stream into protocol lines. */
typedef struct fnw_wire_framer {
    char tag;   /* 'O' or 'E' */
    size_t len; /* bytes of the current, unfinished line */
    char line[FNW_WIRE_LINE_MAX];
} fnw_wire_framer;

void fnw_wire_framer_init(fnw_wire_framer *f, char tag);
/* Called for each complete protocol line ("O text\n"), in order. */
typedef void (*fnw_wire_emit_fn)(void *ctx, const char *line, size_t len);
void fnw_wire_framer_feed(fnw_wire_framer *f, const char *data, size_t n, fnw_wire_emit_fn emit, void *ctx);
/* Ends an unfinished last line (the stream closed without a newline). */
void fnw_wire_framer_flush(fnw_wire_framer *f, fnw_wire_emit_fn emit, void *ctx);

/* ---- version 2: the relay's lines ---- */

/* A relay id or an endpoint in SPAWN: at most this many bytes. */
#define FNW_WIRE_RELAY_ARG_MAX 256

typedef enum fnw_wire_relay_verb {
    FNW_WIRE_SPAWN,     /* worker: n, id, endpoint */
    FNW_WIRE_KILL,      /* worker: n */
    FNW_WIRE_SPAWNED,   /* launcher: n, value = pid (1 .. 2^31-1) */
    FNW_WIRE_SPAWNFAIL, /* launcher: n, text = the reason */
    FNW_WIRE_C,         /* launcher: n, text = a line of the child's output */
    FNW_WIRE_CHILDEXIT  /* launcher: n, value = code (0 .. 255) */
} fnw_wire_relay_verb;

/* One parsed relay line; the strings point into the parsed line. */
typedef struct fnw_wire_relay_line {
    fnw_wire_relay_verb verb;
    uint32_t n; /* the child's number, 1 .. 2^32-1; 0 when not parsed */
    const char *id, *endpoint;
    long long value;
    const char *text;
    size_t text_len;
} fnw_wire_relay_line;

/* A line from the worker (without its newline, NUL-terminated): SPAWN or
 * KILL with their arguments checked: n a decimal 1 .. 2^32-1; the relay id
 * 1 to FNW_WIRE_RELAY_ARG_MAX bytes of [A-Za-z0-9._-]; the endpoint
 * `<host>:<port>` with host 127.0.0.1, localhost, ::1 or [::1] and port
 * 1 .. 65535 (the child runs in the TaskManager's container and must only
 * ever connect to the pod's loopback). 0 ok; -1 with a message, and out->n
 * set when the line's number could be read (the pool answers SPAWNFAIL). */
int fnw_wire_worker_line(const char *line, fnw_wire_relay_line *out, fnw_error *err);
/* A line from the launcher (len bytes, NUL-terminated): SPAWNED, SPAWNFAIL,
 * C or CHILDEXIT. 0 ok; -1 for anything else (the pool ignores it). */
int fnw_wire_launcher_line(const char *line, size_t len, fnw_wire_relay_line *out);

/* A worker's figures, from the line it writes once a second on the stats
 * pipe the pool gave it (worker/pool_stats.h):
 *   bundles=N bundle_errors=N records_in=N records_out=N calls=N call_failures=N active_bundles=N */
typedef struct fnw_wire_figures {
    int known; /* a line was read */
    uint64_t bundles, bundle_errors, records_in, records_out, calls, call_failures, active_bundles;
} fnw_wire_figures;

/* The line a worker writes once on the stats pipe when its control channel
 * to the runner is up: the pool's start deadline ends (pool/children.h). */
#define FNW_WIRE_CONNECTED "connected"

/* Parses one stats line (without its newline); -1 when it is not one. */
int fnw_wire_figures_parse(const char *line, fnw_wire_figures *f);

/* Parses one series line (without its newline; format in
 * codecs/metric_names.h) into *out; -1, *out untouched, when it is not one:
 * not "op1 ", longer than FNW_METRIC_LINE_MAX, a label empty, longer than
 * FNW_METRIC_LABEL_MAX decoded, not UTF-8 or holding a control byte, a malformed %XX,
 * a number that is not a plain decimal up to INT64_MAX (-1 for a gauge), a
 * histogram without its FNW_METRIC_LE_N + 1 counts, a counter name not
 * [a-z][a-z0-9_]{0,31} or given twice, more than FNW_COUNTERS_MAX of them.
 * Keys it does not know are skipped. */
int fnw_wire_series_parse(const char *line, fnw_metric_series *out);

#endif
