/* worker/table_plan.h — what a Flink Table operator's transform asks the
 * worker to do: the Python scalar functions of a projection
 * (flink:transform:scalar_function:v1, and the async scalar function of
 * Flink 2.x, flink:transform:async_scalar_function:v1) or one table
 * function (flink:transform:table_function:v1), each a fnworker
 * OperationSpec, read into the description runtime/projection.h runs.
 *
 * The transform's payload is Flink's UserDefinedFunctions: one
 * UserDefinedFunction per output column (a table function: one), whose
 * payload is the fnworker package's pickle of an OperationSpec and whose
 * inputs are the function's arguments: a column of the operator's input
 * row (inputOffset), a constant (inputConstant: codecs/pickle_const.h) or
 * another function's result (udf: a nested call, itself a node). Rows are
 * Flink's FlattenRow (codecs/schema.h types the Schema of the input and
 * output coders); results go out in input order.
 *
 * Types. A function's operation sees its arguments as one ROW, the
 * fields named by OperationSpec.argument_names (else arg0, arg1, ...; with
 * takes_row_as_input, the input row's own names) and typed as the SQL
 * arguments (constants: codecs/pickle_const.h). Its result type is the
 * output column's (a nested call's comes from OperationSpec.result_type,
 * which it must then have); a result_type the spec sets must equal it.
 * When the result type is a ROW the operation emits it; otherwise the
 * operation emits ROW<result_field T> (result_field, default "result") and
 * the column is that field. Operations that keep their input type
 * (identity, echo) emit their argument row: with one argument of the
 * result's type, the column is that argument.
 *
 * Each function becomes a plan step (worker/step.h), so processors open
 * one engine per function and the bundle reports metrics per function.
 * Ownership: the table plan owns its nodes, arguments, constants and the
 * types it made; it is freed with its plan.
 */
#ifndef FNW_TABLE_PLAN_H
#define FNW_TABLE_PLAN_H

#include "base/pb.h"
#include "codecs/error.h"
#include "runtime/operation.h"
#include "runtime/projection.h"
#include "worker/plan.h"

#define FNW_TABLE_URN_SCALAR "flink:transform:scalar_function:v1"
#define FNW_TABLE_URN_ASYNC_SCALAR "flink:transform:async_scalar_function:v1"
#define FNW_TABLE_URN_TABLE "flink:transform:table_function:v1"

typedef struct fnw_table_plan {
    fnw_proj_desc desc;
    fnw_proj_node *nodes;   /* each node's args and name are owned */
    fnw_ser_field **fields; /* owned */
    size_t n_fields;
    uint8_t **consts; /* encoded constants, owned */
    size_t n_consts;
    fnw_type **types; /* argument rows and results the plan made, owned */
    size_t n_types;
} fnw_table_plan;

/* 1 if urn is one of the Table function URNs above. */
int fnw_table_plan_is_table_urn(const char *urn);

/* Fills p (whose source, sinks and data url plan.c has set) from Table
 * transform t (id tid) and its input and output coders: p->input_*,
 * p->output_*, p->steps and p->table. */
int fnw_table_plan_build(const pb_PTransform *t, const char *tid, const pb_CoderInfoDescriptor *in,
                         const pb_CoderInfoDescriptor *out, const fnw_registry *reg, fnw_plan *p,
                         fnw_error *err);
void fnw_table_plan_free(fnw_table_plan *tp);

#endif
