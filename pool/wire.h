/* pool/wire.h — the launcher protocol between scripts/pyflink-udf-runner.sh
 * (in the TaskManager container, plain bash over /dev/tcp) and the worker
 * pool (in the sidecar). Text, line based, versioned; no I/O here.
 *
 * Request (launcher -> pool), at most FNW_WIRE_REQUEST_MAX bytes, ended by
 * an empty line:
 *   FNWPOOL 1 START
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
 */
#ifndef FNW_POOL_WIRE_H
#define FNW_POOL_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"

#define FNW_WIRE_VERSION 1
#define FNW_WIRE_REQUEST_MAX 16384
#define FNW_WIRE_MAX_ARGS 32
/* A worker's output line longer than this is sent as several lines. */
#define FNW_WIRE_LINE_MAX 4096

/* One request being read; embedded by the connection that reads it. The
 * strings point into buf and live as long as the struct. */
typedef struct fnw_wire_request {
    char buf[FNW_WIRE_REQUEST_MAX + 1];
    size_t len;
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

#endif
