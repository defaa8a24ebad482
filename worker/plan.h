/* worker/plan.h — what a ProcessBundleDescriptor asks the worker to do, read
 * once per descriptor: where input comes from, the chain of operations it
 * flows through, and where results go.
 *
 * The descriptor is navigated by URN and by the inputs/outputs maps, never
 * by generated ids: start at the beam:runner:source:v1 transform, follow its
 * PCollection to the ParDo consuming it, and so on through every
 * flink:transform:ds:stateless_function:v1 up to the REVISE_OUTPUT transform
 * and the beam:runner:sink:v1 after it. Side-output sinks are collected so
 * that each gets is_last. Anything else (keyed functions, timers, fan-out)
 * fails with a message saying what is not supported. Each function becomes
 * a step (worker/step.h: run mode, types between fused functions). When the
 * first step's OperationSpec names an input_field (a PyFlink KeyedStream's
 * Row(f0=key, f1=value)), the chain is fed that field of each input and
 * typed from it; the field must exist in the input ROW, and no later step
 * may name one.
 *
 * Ownership: a plan owns copies of everything it keeps; the descriptor can
 * be freed after fnw_plan_build(). A plan is read-only once built: its
 * fields (and its steps') are the interface, read by the processors that
 * run it and the bundles that feed it, and only plan.c writes them.
 */
#ifndef FNW_PLAN_H
#define FNW_PLAN_H

#include <stddef.h>

#include "codecs/error.h"
#include "codecs/ser.h"
#include "codecs/type.h"
#include "runtime/operation.h"
#include "base/pb.h"
#include "worker/step.h"

struct fnw_table_plan;

typedef struct fnw_plan {
    char *descriptor_id;
    char *source_id; /* transform id inputs arrive on */
    char *data_url;
    fnw_type *input_raw;          /* ROW(LONG, LONG, T) */
    const fnw_type *input_type;   /* T */
    fnw_skip_program *input_skip; /* T's skip program: validates each input's data */
    fnw_ser_field *input_field;   /* the ROW field of T the first step takes
                                   * (its OperationSpec.input_field), NULL: all of T */
    fnw_type *output_raw;         /* ROW(LONG, U) */
    const fnw_type *output_type;  /* U */
    char *main_sink_id;
    char **sink_ids; /* every sink, main first */
    size_t n_sinks;
    fnw_plan_step *steps;
    size_t n_steps;
    /* A Table operator (worker/table_plan.h): its functions run as one
     * projection (runtime/projection.h), one step per function; input and
     * output are Flink's FlattenRow bytes (input_raw == input_type, no
     * timestamp or watermark around them). NULL for a DataStream operator. */
    struct fnw_table_plan *table;
} fnw_plan;

int fnw_plan_build(const pb_ProcessBundleDescriptor *d, const fnw_registry *reg, fnw_plan **out,
                   fnw_error *err);
void fnw_plan_free(fnw_plan *p);

/* The CoderInfoDescriptor a wire coder carries, through
 * param_windowed_value and length_prefix down to flink:coder:v1 (*out:
 * free with its protobuf-c free_unpacked). */
int fnw_plan_coder_info(const pb_ProcessBundleDescriptor *d, const char *coder_id,
                        pb_CoderInfoDescriptor **out, fnw_error *err);

/* The data endpoint of the descriptor's first gRPC port, even when the rest
 * of the descriptor cannot be planned (the runner waits for a Data stream
 * before it reads any bundle's response): *url (free() it), NULL if there
 * is none. -1 with a message only when out of memory. */
int fnw_plan_data_url(const pb_ProcessBundleDescriptor *d, char **url, fnw_error *err);

#endif
