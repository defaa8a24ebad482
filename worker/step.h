/* worker/step.h — one function of a (possibly fused) Flink operator as the
 * worker runs it: read from its UserDefinedDataStreamFunction, whose payload
 * is a fnworker.v1.OperationSpec, and typed within its chain.
 *
 * Run mode. A step runs in batches when its OperationSpec says mode BATCH,
 * or leaves the mode unset under function type ASYNC_BATCH (7); otherwise
 * per element. Stock Flink can only send function type PROCESS, so mode
 * BATCH is the way to batch there. ASYNC_BATCH with mode PER_ELEMENT is a
 * contradiction and fails naming both.
 *
 * Types. Flink fuses consecutive Python functions into one operator and
 * sends only the operator's input and output types: every collection
 * between fused functions carries the input coder. So a step's output type
 * comes from the step itself: its OperationSpec.output_type, else its
 * operation's rule (fnw_output_rule; identity and echo keep their input
 * type). The last step's output type is the operator's (the sink's), which
 * a declared output_type must equal. A step that is not last and whose
 * output type cannot be known fails, asking for output_type.
 *
 * Input field. OperationSpec.input_field names a field of the operator's
 * input ROW that the step takes instead of the whole row (a PyFlink
 * KeyedStream's Row(key, value): the value); the plan (worker/plan.c)
 * resolves it, on the first step only.
 */
#ifndef FNW_STEP_H
#define FNW_STEP_H

#include <stddef.h>

#include "codecs/error.h"
#include "codecs/type.h"
#include "runtime/operation.h"
#include "runtime/spec.h"
#include "base/pb.h"

typedef struct fnw_plan_step {
    char *transform_id;
    const fnw_operation *op;
    int passthrough; /* op is the registry's pass-through (identity) */
    fnw_spec spec;
    fnw_option *options;         /* owned keys and values */
    fnw_options opts;            /* view of options */
    fnw_type *declared_type;     /* OperationSpec.output_type, owned; NULL when unset */
    char *fallback_json;         /* OperationSpec.fallback_json, owned; NULL when unset */
    char *input_field;           /* OperationSpec.input_field, owned; NULL when unset */
    const fnw_type *input_type;  /* borrowed from the plan or an earlier step */
    const fnw_type *output_type; /* set by fnw_step_link (Table: by worker/table_plan.c) */
    /* Table functions (worker/table_plan.c): OperationSpec.result_type,
     * argument_names, argument_types and result_field, owned; NULL / 0
     * when unset. */
    fnw_type *result_type;
    char **argument_names;
    size_t n_argument_names;
    fnw_type **argument_types; /* OperationSpec.argument_types, owned */
    size_t n_argument_types;
    char *result_field;
} fnw_plan_step;

/* Fills st (zeroed by the caller) from function f of transform id: a
 * PROCESS or ASYNC_BATCH function whose payload is an OperationSpec naming
 * an operation of reg. On failure st may hold parts; fnw_step_free it. */
int fnw_step_build(const pb_UDSF *f, const char *id, const fnw_registry *reg, fnw_plan_step *st,
                   fnw_error *err);

/* The same from a function payload (an OperationSpec, or the fnworker
 * package's pickle of one) of any transform: a Table function's
 * UserDefinedFunction.payload, with function_type 0 (PROCESS). */
int fnw_step_build_payload(const uint8_t *payload, size_t len, int function_type, const char *id,
                           const fnw_registry *reg, fnw_plan_step *st, fnw_error *err);

/* Types a chain of n steps fed with input and ending at a sink of type sink
 * (see the header comment). Pointers are borrowed from the arguments and
 * from the steps' declared types. */
int fnw_step_link(fnw_plan_step *steps, size_t n, const fnw_type *input, const fnw_type *sink, fnw_error *err);

/* Frees what st owns (not st itself). */
void fnw_step_free(fnw_plan_step *st);

#endif
