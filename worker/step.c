/* worker/step.c — a plan step from its function's OperationSpec, and the
 * types along a chain of steps (see step.h). */
#include "worker/step.h"

#include <stdlib.h>
#include <string.h>

#include "codecs/pb_nesting.h"
#include "codecs/pickle_payload.h"
#include "codecs/schema.h"

#define FT_ASYNC_BATCH \
    ORG__APACHE__FLINK__FN_EXECUTION__V1__USER_DEFINED_DATA_STREAM_FUNCTION__FUNCTION_TYPE__ASYNC_BATCH
#define MODE(x) FNWORKER__V1__OPERATION_SPEC__MODE__##x
#define SEE_DOCS "(see docs/pyflink.md, \"The OperationSpec payload\")"

/* ---- run mode -------------------------------------------------------------------- */

/* Batch or per element, from OperationSpec.mode and the function type. */
static int resolve_mode(int function_type, int mode, int *batched, fnw_error *err)
{
    int type_batches = function_type == FT_ASYNC_BATCH;
    switch (mode) {
    case MODE(MODE_UNSPECIFIED):
        *batched = type_batches;
        return 0;
    case MODE(BATCH):
        *batched = 1;
        return 0;
    case MODE(PER_ELEMENT):
        if (type_batches)
            return fnw_error_set(err,
                                 "function type ASYNC_BATCH (7) runs the operation in batches but its "
                                 "OperationSpec sets mode PER_ELEMENT; set mode BATCH (or leave mode unset) "
                                 "to batch, or use function type PROCESS to run per element");
        *batched = 0;
        return 0;
    }
    return fnw_error_set(err,
                         "unknown OperationSpec mode %d; expected PER_ELEMENT (1) or BATCH (2), "
                         "or unset",
                         mode);
}

/* ---- the OperationSpec ------------------------------------------------------------ */

static void spec_from_proto(const pb_OperationSpec *os, int batched, fnw_spec *s)
{
    memset(s, 0, sizeof *s);
    s->batched = batched;
    s->unordered = os->output_mode == FNWORKER__V1__OUTPUT_MODE__UNORDERED;
    s->capacity = os->capacity;
    s->timeout_ms = os->timeout_ms;
    s->batch_size = os->batch_size;
    s->batch_timeout_ms = os->batch_timeout_ms;
    s->target_latency_ms = os->target_latency_ms;
    s->on_timeout = (fnw_timeout_action)os->on_timeout;
    if (os->concurrency) {
        s->concurrency.adaptive_off = os->concurrency->adaptive_off;
        s->concurrency.min = os->concurrency->min;
    }
    if (os->circuit_breaker) {
        s->breaker.failures = os->circuit_breaker->failures;
        s->breaker.failure_rate = os->circuit_breaker->failure_rate;
        s->breaker.window = os->circuit_breaker->window;
        s->breaker.cooldown_ms = os->circuit_breaker->cooldown_ms;
    }
    s->on_failure = (fnw_failure_action)os->on_failure;
    s->fallback_json = os->fallback_json && *os->fallback_json ? os->fallback_json : NULL;
    if (os->retry) {
        s->retry.kind = (fnw_retry_kind)os->retry->kind;
        s->retry.max_attempts = os->retry->max_attempts;
        s->retry.delay_ms = os->retry->delay_ms;
        s->retry.max_delay_ms = os->retry->max_delay_ms;
        s->retry.multiplier = os->retry->multiplier;
        s->retry.on_error = os->retry->retry_on_error;
        s->retry.on_empty = os->retry->retry_on_empty_result;
    }
}

static int copy_options(const pb_OperationSpec *os, fnw_plan_step *st, fnw_error *err)
{
    st->options = calloc(os->n_options ? os->n_options : 1, sizeof *st->options);
    if (!st->options)
        return fnw_error_set(err, "out of memory");
    for (size_t i = 0; i < os->n_options; i++) {
        st->opts.count = i + 1; /* what fnw_step_free releases */
        st->options[i].key = strdup(os->options[i]->key);
        st->options[i].value = strdup(os->options[i]->value);
        if (!st->options[i].key || !st->options[i].value)
            return fnw_error_set(err, "out of memory");
    }
    st->opts.count = os->n_options;
    st->opts.items = st->options;
    return 0;
}

/* The parts of a decoded OperationSpec a step keeps. */
static int step_from_spec(const pb_OperationSpec *os, int function_type, const fnw_registry *reg,
                          fnw_plan_step *st, fnw_error *err)
{
    st->op = fnw_registry_find(reg, os->operation, err);
    if (!st->op)
        return -1;
    st->passthrough = st->op == reg->passthrough;
    int batched = 0;
    if (resolve_mode(function_type, (int)os->mode, &batched, err) < 0)
        return -1;
    spec_from_proto(os, batched, &st->spec);
    if (fnw_spec_validate(&st->spec, err) < 0)
        return -1;
    /* the step owns fallback_json's text; engines read it when they open */
    if (st->spec.fallback_json && !(st->fallback_json = strdup(st->spec.fallback_json)))
        return fnw_error_set(err, "out of memory");
    st->spec.fallback_json = st->fallback_json;
    st->spec.fallback_encode = reg->json_encode;
    if (os->output_type && fnw_typeinfo_to_type(os->output_type, &st->declared_type, err) < 0)
        return fnw_error_prefix(err, "output_type");
    if (os->input_field && *os->input_field && !(st->input_field = strdup(os->input_field)))
        return fnw_error_set(err, "out of memory");
    if (os->result_type && fnw_schema_field_type_to_type(os->result_type, &st->result_type, err) < 0)
        return fnw_error_prefix(err, "result_type");
    if (os->result_field && *os->result_field && !(st->result_field = strdup(os->result_field)))
        return fnw_error_set(err, "out of memory");
    if (os->n_argument_names) {
        if (!(st->argument_names = calloc(os->n_argument_names, sizeof *st->argument_names)))
            return fnw_error_set(err, "out of memory");
        for (size_t i = 0; i < os->n_argument_names; i++) {
            st->n_argument_names = i + 1;
            if (!(st->argument_names[i] = strdup(os->argument_names[i])))
                return fnw_error_set(err, "out of memory");
        }
    }
    if (os->n_argument_types) {
        if (!(st->argument_types = calloc(os->n_argument_types, sizeof *st->argument_types)))
            return fnw_error_set(err, "out of memory");
        for (size_t i = 0; i < os->n_argument_types; i++) {
            st->n_argument_types = i + 1;
            if (fnw_schema_field_type_to_type(os->argument_types[i], &st->argument_types[i], err) < 0)
                return fnw_error_prefix(err, "argument_types[%zu]", i);
        }
    }
    return copy_options(os, st, err);
}

/* The OperationSpec inside a pickle written by the fnworker Python package
 * (a PyFlink job); any other pickle fails, saying what it holds. */
static int unpickle_spec(const ProtobufCBinaryData *payload, uint8_t **buf, ProtobufCBinaryData *spec,
                         fnw_error *err)
{
    *buf = malloc(payload->len ? payload->len : 1);
    if (!*buf)
        return fnw_error_set(err, "out of memory");
    if (fnw_pickle_payload_read(payload->data, payload->len, *buf, &spec->len, err) < 0) {
        free(*buf);
        *buf = NULL;
        return -1;
    }
    spec->data = *buf;
    return 0;
}

int fnw_step_build(const pb_UDSF *f, const char *id, const fnw_registry *reg, fnw_plan_step *st,
                   fnw_error *err)
{
    return fnw_step_build_payload(f->payload.data, f->payload.len, (int)f->function_type, id, reg, st, err);
}

int fnw_step_build_payload(const uint8_t *payload, size_t len, int function_type, const char *id,
                           const fnw_registry *reg, fnw_plan_step *st, fnw_error *err)
{
    ProtobufCBinaryData given = { len, (uint8_t *)payload };
    st->transform_id = strdup(id);
    if (!st->transform_id)
        return fnw_error_set(err, "out of memory");
    if (len == 0)
        return fnw_error_set(err,
                             "transform '%s': the function payload is empty; fnworker expects a "
                             "fnworker.v1.OperationSpec there " SEE_DOCS,
                             id);
    uint8_t *unpickled = NULL;
    ProtobufCBinaryData spec = given;
    if (fnw_pickle_payload_is_pickle(spec.data, spec.len) && unpickle_spec(&given, &unpickled, &spec, err) < 0)
        return fnw_error_prefix(err, "transform '%s'", id);
    /* output_type is a TypeInfo, which nests without a limit of its own */
    int rc = fnw_pb_nesting_check(&fnworker__v1__operation_spec__descriptor, spec.data, spec.len, err);
    pb_OperationSpec *os = rc < 0 ? NULL : fnworker__v1__operation_spec__unpack(NULL, spec.len, spec.data);
    free(unpickled);
    if (rc < 0)
        return fnw_error_prefix(err, "transform '%s': OperationSpec", id);
    if (!os)
        return fnw_error_set(err,
                             "transform '%s': the function payload is not a valid "
                             "fnworker.v1.OperationSpec " SEE_DOCS,
                             id);
    rc = step_from_spec(os, function_type, reg, st, err);
    fnworker__v1__operation_spec__free_unpacked(os, NULL);
    if (rc < 0 && st->op)
        return fnw_error_prefix(err, "transform '%s' (operation '%s')", id, st->op->name);
    if (rc < 0)
        return fnw_error_prefix(err, "transform '%s'", id);
    return 0;
}

void fnw_step_free(fnw_plan_step *st)
{
    free(st->transform_id);
    for (size_t j = 0; j < st->opts.count; j++) {
        free((char *)st->options[j].key);
        free((char *)st->options[j].value);
    }
    free(st->options);
    free(st->input_field);
    free(st->fallback_json);
    fnw_type_free(st->declared_type);
    fnw_type_free(st->result_type);
    for (size_t j = 0; j < st->n_argument_names; j++)
        free(st->argument_names[j]);
    free(st->argument_names);
    for (size_t j = 0; j < st->n_argument_types; j++)
        fnw_type_free(st->argument_types[j]);
    free(st->argument_types);
    free(st->result_field);
}

/* ---- types along the chain -------------------------------------------------------- */

static int last_step_mismatch(const fnw_plan_step *st, const fnw_type *sink, fnw_error *err)
{
    char a[384], b[384];
    fnw_type_format(st->declared_type, a, sizeof a);
    fnw_type_format(sink, b, sizeof b);
    return fnw_error_set(err,
                         "transform '%s' (operation '%s') is the last function of its operator, so its "
                         "output type is the operator's: the OperationSpec's output_type is %s but the "
                         "operator's output type is %s",
                         st->transform_id, st->op->name, a, b);
}

static int unknown_output(const fnw_plan_step *st, const fnw_plan_step *next, fnw_error *err)
{
    return fnw_error_set(err,
                         "transform '%s' (operation '%s') feeds '%s' in the same operator, and its "
                         "output type cannot be known: Flink sends only the operator's input and output "
                         "types, and operation '%s' does not keep its input type. Set output_type in its "
                         "OperationSpec",
                         st->transform_id, st->op->name, next->transform_id, st->op->name);
}

/* The output type of step i of n (its input type already set). */
static int step_output(fnw_plan_step *steps, size_t i, size_t n, const fnw_type *sink, fnw_error *err)
{
    fnw_plan_step *st = &steps[i];
    int last = i + 1 == n;
    if (last) {
        if (st->declared_type && !fnw_type_equal(st->declared_type, sink))
            return last_step_mismatch(st, sink, err);
        st->output_type = sink;
    } else if (st->declared_type) {
        st->output_type = st->declared_type;
    } else if (st->op->output_rule == FNW_OUTPUT_SAME_AS_INPUT) {
        st->output_type = st->input_type;
    } else {
        return unknown_output(st, &steps[i + 1], err);
    }
    return 0;
}

int fnw_step_link(fnw_plan_step *steps, size_t n, const fnw_type *input, const fnw_type *sink, fnw_error *err)
{
    for (size_t i = 0; i < n; i++) {
        steps[i].input_type = i == 0 ? input : steps[i - 1].output_type;
        if (step_output(steps, i, n, sink, err) < 0)
            return -1;
    }
    return 0;
}
