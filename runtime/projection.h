/* runtime/projection.h — the functions of one Flink Table operator run as
 * one: a projection's scalar functions (each an output column, possibly
 * calling other functions for its arguments) or one table function.
 *
 * Each function (a node) keeps its own engine (runtime/engine.h), and with
 * it its ordering, capacity, batching, timeouts and retries. The projection
 * adds what Flink's Table runner asks of the functions together:
 *
 *   arguments  a node's input is the row of its arguments, in the ROW byte
 *              format (row kind and null mask, then the fields that are not
 *              null): fields of the input row, constants, and the results
 *              of other nodes (nested calls). A node whose arguments are
 *              all there is pushed at once; a node that takes another's
 *              result is pushed when that one has settled for the row.
 *   results    a scalar node gives exactly one result per row: none (an
 *              empty result: a timeout with TIMEOUT_EMPTY, say) is a null,
 *              two or more fail the bundle. A result is the operation's
 *              output, or with `unwrap` field 0 of the one-field ROW it
 *              emits (a function whose SQL result is not a ROW).
 *   order      outputs leave strictly in input order, whatever the nodes'
 *              output modes: each input gets a sequence number (carried as
 *              the record timestamp through the engines), and a ring of
 *              rows in flight holds the results until the oldest row is
 *              complete. The ring bounds the rows in flight: has_space is
 *              false when it is full or any node's engine is.
 *   output     scalar functions: one row per input, the columns' results
 *              as a ROW of row kind INSERT (Flink's FlattenRow bytes). A
 *              table function (the last node; the nodes before it are the
 *              calls it makes for its arguments): each result row the
 *              operation emitted (a null fails the bundle), then an end
 *              message (the single byte 0x00) per input.
 *   finish     a node is finished once every node it takes results from
 *              has; the sink hears finished when all have and every row
 *              has left.
 *   failed     the first node to fail ends the bundle: the others are
 *              aborted and sink.failed gets its message.
 *
 * Engines are borrowed (opened by the caller, kept across bundles); the
 * projection is made once per bundle. The description is borrowed and must
 * outlive it. Memory: the ring's buffers grow to the largest row seen and
 * are reused; nothing is allocated per record once they have. Loop thread
 * only; as with the engine, a sink callback may push into, finish, abort or
 * free the projection.
 */
#ifndef FNW_PROJECTION_H
#define FNW_PROJECTION_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/ser.h"
#include "runtime/engine.h"
#include "runtime/record.h"

typedef enum fnw_proj_arg_kind {
    FNW_PROJ_FIELD = 0, /* a field of the input row */
    FNW_PROJ_CONST = 1, /* a constant, already encoded */
    FNW_PROJ_CALL = 2,  /* the result of an earlier node */
} fnw_proj_arg_kind;

typedef struct fnw_proj_arg {
    fnw_proj_arg_kind kind;
    uint32_t node;              /* CALL: the node whose result it is (a lower index) */
    const fnw_ser_field *field; /* FIELD: finds it in the input row */
    const uint8_t *bytes;       /* CONST: its encoded value; NULL: a null */
    uint32_t len;
} fnw_proj_arg;

typedef struct fnw_proj_node {
    const fnw_proj_arg *args;
    uint32_t n_args;
    int unwrap;       /* its result is field 0 of the one-field ROW its operation emits */
    int column;       /* the output column it fills; -1 for a nested call */
    const char *name; /* for messages: "transform 'T', function 2 (operation 'http')" */
} fnw_proj_node;

typedef struct fnw_proj_desc {
    const fnw_proj_node *nodes; /* nested calls before the nodes that take their results */
    uint32_t n_nodes;
    uint32_t n_columns; /* scalar: the output row's fields, one per column node */
    int table_function; /* the last node's results are the output rows, each input ends with 0x00 */
    uint32_t window;    /* rows in flight at most (the ring), >= 1 */
} fnw_proj_desc;

typedef struct fnw_projection fnw_projection;

/* engines[i] runs node i. NULL when out of memory. */
fnw_projection *fnw_projection_new(const fnw_proj_desc *d, fnw_engine *const *engines);
void fnw_projection_free(fnw_projection *p);

/* Begins a bundle on every node. sink.emit gets each output row (the
 * record's data is the row's bytes; timestamp INT64_MIN). */
void fnw_projection_start(fnw_projection *p, const fnw_engine_sink *sink, const char *bundle_label);
int fnw_projection_has_space(const fnw_projection *p);
/* One input row (in->data: the row's bytes, validated by the caller). -1
 * when the bundle has failed. */
int fnw_projection_push(fnw_projection *p, const fnw_record *in);
/* End of input. */
void fnw_projection_finish(fnw_projection *p);
/* The bundle failed elsewhere: every node is aborted, without callbacks. */
void fnw_projection_abort(fnw_projection *p);
/* Rows taken and rows given so far this bundle. */
int64_t fnw_projection_rows_in(const fnw_projection *p);
int64_t fnw_projection_rows_out(const fnw_projection *p);

#endif
