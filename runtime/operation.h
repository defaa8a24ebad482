/* runtime/operation.h — the API a C author implements to add an operation.
 *
 * An operation is a table of functions (fnw_operation) registered by name.
 * fnworker opens one instance per transform of a process-bundle descriptor
 * (open), reuses it across that descriptor's bundles, and closes it when the
 * worker stops or the instance is discarded after a failure (close).
 *
 * Work arrives as calls. A call carries one input (per-element mode) or up
 * to batch_size inputs (batch mode, OperationSpec mode BATCH). The
 * operation starts the work in invoke() and returns at once; later, from any
 * libev callback on the same loop, it emits outputs with fnw_call_emit*() and
 * ends the attempt with exactly one of fnw_call_complete() or fnw_call_fail().
 * After that the call belongs to the engine again: do not touch it, it may be
 * retried (invoke() is called again with fnw_call_attempt() one higher) or
 * freed. If the engine gives up on a call that is still with the operation
 * (bundle failed, worker stopping), it calls cancel(): stop the work, release
 * what refers to the call, and never touch the call again. A call that timed
 * out is NOT cancelled: the operation may still complete it later, and that
 * late completion is ignored safely.
 *
 * Everything runs on one thread, the libev loop (env->loop): timers and I/O
 * watchers an operation starts there need no locks. Never block the loop.
 *
 * Outputs: in per-element mode every emit for input 0 is one output record
 * (zero emits = an empty result). In batch mode, emit(i, ...) gives input i
 * its result; inputs that get no emit produce no output (counted as missing).
 */
#ifndef FNW_OPERATION_H
#define FNW_OPERATION_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/arena.h"
#include "codecs/error.h"
#include "codecs/type.h"
#include "codecs/value.h"
#include "runtime/record.h"

struct ev_loop;
typedef struct fnw_call fnw_call;

/* ---- options: the OperationSpec.options map ---------------------------- */
typedef struct fnw_option {
    const char *key;
    const char *value;
} fnw_option;

typedef struct fnw_options {
    size_t count;
    const fnw_option *items;
} fnw_options;

/* Value of key, or NULL when absent. */
const char *fnw_options_get(const fnw_options *o, const char *key);
/* Fails naming the first key that is not in known (a NULL-terminated list). */
int fnw_options_check_known(const fnw_options *o, const char *const *known,
                            const char *op_name, fnw_error *err);
/* Integer option in [min, max]; def when absent. Fails naming the option when
 * the value is not a whole number or out of range. */
int fnw_options_int(const fnw_options *o, const char *key, int64_t def,
                    int64_t min, int64_t max, int64_t *out, fnw_error *err);
/* Boolean option (true/false, 1/0, yes/no); def when absent. */
int fnw_options_bool(const fnw_options *o, const char *key, int def, int *out, fnw_error *err);
/* One of choices (a NULL-terminated list): *out = its index; def when absent. */
int fnw_options_choice(const fnw_options *o, const char *key, const char *const *choices,
                       int def, int *out, fnw_error *err);

/* ---- what open() gets ---------------------------------------------------- */
typedef struct fnw_op_env {
    struct ev_loop *loop;
    const fnw_options *options;
    const fnw_type *input_type;    /* type of the data field of each input */
    const fnw_type *output_type;   /* type the outputs must be encoded in */
    const char *transform_id;
    int batched;                   /* 1 in batch mode */
} fnw_op_env;

/* The type of an operation's outputs. Flink describes only an operator's
 * input and output types, not the types between the functions it fuses into
 * it, so a step that is not the last one of its chain is typed by this rule. */
typedef enum fnw_output_rule {
    /* Given by the OperationSpec's output_type (for the last step of a chain,
     * the operator's output type, which output_type must then equal). A step
     * whose type cannot be known that way fails with a message asking for
     * output_type. The default for any operation that does not say. */
    FNW_OUTPUT_DECLARED = 0,
    /* Always the input type (identity, echo). */
    FNW_OUTPUT_SAME_AS_INPUT = 1,
} fnw_output_rule;

typedef struct fnw_operation {
    const char *name;
    const char *summary;           /* one line for error messages and --help */
    fnw_output_rule output_rule;
    /* Synchronous operations (identity) always complete inside invoke; the
     * engine then skips copying inputs and queueing. */
    int sync;
    /* Allocate per-instance state, validate options. */
    int (*open)(const fnw_op_env *env, void **state, fnw_error *err);
    void (*close)(void *state);
    void (*invoke)(void *state, fnw_call *call);
    /* Optional (may be NULL). Used with TIMEOUT_OPERATION: supply the
     * result of a timed-out call synchronously with fnw_call_emit*, then
     * return 0; return -1 with err set to fail the bundle. */
    int (*on_timeout)(void *state, fnw_call *call, fnw_error *err);
    /* Required unless sync: see the header comment. */
    void (*cancel)(void *state, fnw_call *call);
} fnw_operation;

/* ---- the call -------------------------------------------------------------- */
size_t fnw_call_size(const fnw_call *c);                          /* inputs in this call */
const fnw_record *fnw_call_input(const fnw_call *c, size_t i);    /* bytes valid until the call is settled */
int fnw_call_attempt(const fnw_call *c);                          /* 1 on the first attempt */
struct ev_loop *fnw_call_loop(const fnw_call *c);
/* Scratch memory that lives until the attempt ends. */
fnw_arena *fnw_call_arena(fnw_call *c);
/* Decodes input i into out (memory from the call arena). */
int fnw_call_decode(fnw_call *c, size_t i, fnw_value *out, fnw_error *err);
/* Operation state slot for the call's lifetime (e.g. a timer watcher). */
void *fnw_call_op_data(fnw_call *c);
void fnw_call_set_op_data(fnw_call *c, void *p);

/* One output for input i: data = Flink bytes of the output type (NULL with
 * len 0 for a null value); copied. Returns -1 after the call is settled. */
int fnw_call_emit(fnw_call *c, size_t i, const uint8_t *data, size_t len);
/* One output for input i, encoded from a value with the output type. */
int fnw_call_emit_value(fnw_call *c, size_t i, const fnw_value *v, fnw_error *err);
void fnw_call_complete(fnw_call *c);
void fnw_call_fail(fnw_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- registry ------------------------------------------------------------ */
#define FNW_REGISTRY_MAX 64
typedef struct fnw_registry {
    size_t count;
    const fnw_operation *ops[FNW_REGISTRY_MAX];
} fnw_registry;

void fnw_registry_init(fnw_registry *r);           /* empty */
int fnw_registry_add(fnw_registry *r, const fnw_operation *op, fnw_error *err);
/* Registers every built-in operation (identity, echo, ...). */
void fnw_registry_add_builtins(fnw_registry *r);
/* NULL and err = "unknown operation 'x'; registered operations: a, b" */
const fnw_operation *fnw_registry_find(const fnw_registry *r, const char *name, fnw_error *err);

#endif
