/* worker/plan.c — reads a ProcessBundleDescriptor into a plan (see plan.h). */
#include "worker/plan.h"

#include <stdlib.h>
#include <string.h>

#include "codecs/pb_nesting.h"
#include "codecs/row.h"
#include "worker/table_plan.h"

#define URN_SOURCE "beam:runner:source:v1"
#define URN_SINK "beam:runner:sink:v1"
#define URN_PARDO "beam:transform:pardo:v1"
#define URN_STATELESS "flink:transform:ds:stateless_function:v1"
#define URN_STATEFUL "flink:transform:ds:stateful_function:v1"
#define URN_FLINK_CODER "flink:coder:v1"
#define URN_LENGTH_PREFIX "beam:coder:length_prefix:v1"
#define URN_PARAM_WV "beam:coder:param_windowed_value:v1"
#define URN_WV "beam:coder:windowed_value:v1"

enum { FT_PROCESS = 0, FT_ASYNC_BATCH = 7, FT_REVISE_OUTPUT = 100 };

typedef Org__Apache__Beam__Model__FnExecution__V1__ProcessBundleDescriptor__TransformsEntry pb_TransformEntry;

/* ---- descriptor look-ups ------------------------------------------------------- */

static const pb_Coder *find_coder(const pb_ProcessBundleDescriptor *d, const char *id)
{
    for (size_t i = 0; i < d->n_coders; i++)
        if (!strcmp(d->coders[i]->key, id))
            return d->coders[i]->value;
    return NULL;
}

static const char *spec_urn(const pb_PTransform *t)
{
    return t && t->spec && t->spec->urn ? t->spec->urn : "";
}

static int has_input(const pb_PTransform *t, const char *pcoll)
{
    for (size_t i = 0; i < t->n_inputs; i++)
        if (!strcmp(t->inputs[i]->value, pcoll))
            return 1;
    return 0;
}

/* The one transform consuming pcoll, with its id. */
static const pb_PTransform *consumer_of(const pb_ProcessBundleDescriptor *d, const char *pcoll,
                                        const char **id, fnw_error *err)
{
    const pb_PTransform *found = NULL;
    for (size_t i = 0; i < d->n_transforms; i++) {
        const pb_PTransform *t = d->transforms[i]->value;
        if (!t || !has_input(t, pcoll))
            continue;
        if (found) {
            fnw_error_set(err, "PCollection '%s' is consumed by both '%s' and '%s': fan-out is not supported",
                          pcoll, *id, d->transforms[i]->key);
            return NULL;
        }
        found = t;
        *id = d->transforms[i]->key;
    }
    if (!found)
        fnw_error_set(err, "no transform consumes PCollection '%s'", pcoll);
    return found;
}

static const char *output_named(const pb_PTransform *t, const char *name)
{
    for (size_t i = 0; i < t->n_outputs; i++)
        if (!strcmp(t->outputs[i]->key, name))
            return t->outputs[i]->value;
    return NULL;
}

/* A function's main output: the one keyed "output" (Flink's
 * MAIN_OUTPUT_NAME in older runners), else the one keyed "" (what a real
 * Flink 1.20 and 2.x runner writes: its transforms map "" to the main
 * PCollection), else the only output. Every other output is a side output. */
static const char *main_output(const pb_PTransform *t)
{
    const char *p = output_named(t, "output");
    if (!p)
        p = output_named(t, "");
    if (!p && t->n_outputs == 1)
        p = t->outputs[0]->value;
    return p;
}

/* The CoderInfoDescriptor a wire coder carries, through
 * param_windowed_value and length_prefix down to flink:coder:v1. */
static int coder_info(const pb_ProcessBundleDescriptor *d, const char *coder_id, int depth,
                      pb_CoderInfoDescriptor **out, const char **flink_id, fnw_error *err)
{
    if (depth > 8)
        return fnw_error_set(err, "coder '%s' nests too deeply", coder_id);
    const pb_Coder *c = find_coder(d, coder_id);
    if (!c || !c->spec)
        return fnw_error_set(err, "coder '%s' is not in the descriptor", coder_id);
    const char *urn = c->spec->urn;
    if (!strcmp(urn, URN_PARAM_WV) || !strcmp(urn, URN_LENGTH_PREFIX)) {
        if (c->n_component_coder_ids < 1)
            return fnw_error_set(err, "coder '%s' (%s) has no component coder", coder_id, urn);
        return coder_info(d, c->component_coder_ids[0], depth + 1, out, flink_id, err);
    }
    if (!strcmp(urn, URN_WV))
        return fnw_error_set(err,
                             "coder '%s' is %s, which sends timestamps and windows per element; "
                             "fnworker supports Flink's %s wire coder",
                             coder_id, URN_WV, URN_PARAM_WV);
    if (strcmp(urn, URN_FLINK_CODER))
        return fnw_error_set(err, "coder '%s' has URN '%s'; expected %s, %s or %s", coder_id, urn,
                             URN_PARAM_WV, URN_LENGTH_PREFIX, URN_FLINK_CODER);
    /* protobuf-c recurses per nested TypeInfo without a limit: measure first */
    if (fnw_pb_nesting_check(&PBF(coder_info_descriptor__descriptor), c->spec->payload.data,
                             c->spec->payload.len, err) < 0)
        return fnw_error_prefix(err, "coder '%s'", coder_id);
    *flink_id = coder_id;
    *out = PBF(coder_info_descriptor__unpack)(NULL, c->spec->payload.len, c->spec->payload.data);
    if (!*out)
        return fnw_error_set(err, "coder '%s': payload is not a CoderInfoDescriptor", coder_id);
    return 0;
}

int fnw_plan_coder_info(const pb_ProcessBundleDescriptor *d, const char *coder_id,
                        pb_CoderInfoDescriptor **out, fnw_error *err)
{
    *out = NULL;
    const char *flink_id = coder_id;
    return coder_info(d, coder_id, 0, out, &flink_id, err);
}

/* The Flink type a DataStream wire coder carries (CoderInfoDescriptor.raw_type). */
static int coder_flink_type(const pb_ProcessBundleDescriptor *d, const char *coder_id, int depth,
                            fnw_type **out, fnw_error *err)
{
    pb_CoderInfoDescriptor *ci = NULL;
    const char *outer_id = coder_id;
    if (coder_info(d, outer_id, depth, &ci, &coder_id, err) < 0)
        return -1; /* coder_id: the flink:coder:v1 coder itself, named in the messages below */
    int rc = 0;
    if (ci->data_type_case != ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__DATA_TYPE_RAW_TYPE ||
        !ci->raw_type || !ci->raw_type->type_info) {
        rc = fnw_error_set(err,
                           "coder '%s': a Table API row coder (flatten_row_type, row_type, arrow_type) "
                           "where a DataStream coder (raw_type) was expected",
                           coder_id);
    } else if (ci->separated_with_end_message) {
        rc = fnw_error_set(err,
                           "coder '%s': separated_with_end_message is a Table API framing, not a "
                           "DataStream one",
                           coder_id);
    } else if (fnw_typeinfo_to_type(ci->raw_type->type_info, out, err) < 0) {
        rc = fnw_error_prefix(err, "coder '%s'", coder_id);
    }
    PBF(coder_info_descriptor__free_unpacked)(ci, NULL);
    return rc;
}

/* The port's url and coder id (free() both). -1 with a message; -2 when out
 * of memory. */
static int grpc_port(const pb_PTransform *t, const char *id, char **url, char **coder, fnw_error *err)
{
    pb_RemoteGrpcPort *port = PB(remote_grpc_port__unpack)(NULL, t->spec->payload.len, t->spec->payload.data);
    if (!port)
        return fnw_error_set(err, "transform '%s': payload is not a RemoteGrpcPort", id);
    int rc = 0;
    if (!port->api_service_descriptor || !*port->api_service_descriptor->url)
        rc = fnw_error_set(err, "transform '%s': RemoteGrpcPort has no data endpoint url", id);
    else if (!*port->coder_id)
        rc = fnw_error_set(err, "transform '%s': RemoteGrpcPort has no coder_id", id);
    else {
        *url = strdup(port->api_service_descriptor->url);
        *coder = strdup(port->coder_id);
        if (!*url || !*coder) {
            free(*url);
            free(*coder);
            *url = *coder = NULL;
            fnw_error_set(err, "transform '%s': out of memory", id);
            rc = -2;
        }
    }
    PB(remote_grpc_port__free_unpacked)(port, NULL);
    return rc;
}

/* ---- building -------------------------------------------------------------------- */

/* The main sink goes first: bundles write results to sink_ids[0]. */
static int add_sink(fnw_plan *p, const char *id, int main)
{
    char **ids = realloc(p->sink_ids, (p->n_sinks + 1) * sizeof *ids);
    if (!ids)
        return -1;
    p->sink_ids = ids;
    char *copy = strdup(id);
    if (!copy)
        return -1;
    if (main) {
        memmove(ids + 1, ids, p->n_sinks * sizeof *ids);
        ids[0] = copy;
    } else {
        ids[p->n_sinks] = copy;
    }
    p->n_sinks++;
    return 0;
}

static int check_sink_url(const pb_PTransform *t, const char *id, const fnw_plan *p, fnw_error *err)
{
    char *url = NULL, *coder = NULL;
    if (grpc_port(t, id, &url, &coder, err) < 0)
        return -1;
    int rc = 0;
    if (strcmp(url, p->data_url))
        rc = fnw_error_set(err,
                           "sink '%s' uses data endpoint %s but the source uses %s; one data "
                           "endpoint per descriptor is supported",
                           id, url, p->data_url);
    free(url);
    free(coder);
    return rc;
}

/* The sink after a REVISE_OUTPUT transform. */
static int follow_revise(const pb_ProcessBundleDescriptor *d, const pb_PTransform *revise,
                         const char *revise_id, fnw_plan *p, int main, fnw_error *err)
{
    if (revise->n_outputs != 1)
        return fnw_error_set(err, "REVISE_OUTPUT transform '%s' must have one output", revise_id);
    const char *sink_id = NULL;
    const pb_PTransform *sink = consumer_of(d, revise->outputs[0]->value, &sink_id, err);
    if (!sink)
        return -1;
    if (strcmp(spec_urn(sink), URN_SINK))
        return fnw_error_set(err, "transform '%s' after REVISE_OUTPUT '%s' has URN '%s'; expected %s",
                             sink_id, revise_id, spec_urn(sink), URN_SINK);
    if (check_sink_url(sink, sink_id, p, err) < 0)
        return -1;
    if (main) {
        if (!(p->main_sink_id = strdup(sink_id)))
            return fnw_error_set(err, "sink '%s': out of memory", sink_id);
        char *url = NULL, *coder = NULL;
        if (grpc_port(sink, sink_id, &url, &coder, err) < 0)
            return -1;
        int rc = coder_flink_type(d, coder, 0, &p->output_raw, err);
        free(url);
        free(coder);
        if (rc < 0)
            return fnw_error_prefix(err, "sink '%s'", sink_id);
        if (fnw_row_unwrap_output_type(p->output_raw, &p->output_type, err) < 0)
            return fnw_error_prefix(err, "sink '%s'", sink_id);
    }
    if (add_sink(p, sink_id, main) < 0)
        return fnw_error_set(err, "sink '%s': out of memory", sink_id);
    return 0;
}

static const char *function_type_name(int ft)
{
    switch (ft) {
    case 0:
        return "PROCESS";
    case 1:
        return "CO_PROCESS";
    case 2:
        return "KEYED_PROCESS";
    case 3:
        return "KEYED_CO_PROCESS";
    case 4:
        return "WINDOW";
    case 5:
        return "CO_BROADCAST_PROCESS";
    case 6:
        return "KEYED_CO_BROADCAST_PROCESS";
    case 7:
        return "ASYNC_BATCH";
    case 100:
        return "REVISE_OUTPUT";
    }
    return "unknown";
}

static int add_step(fnw_plan *p, fnw_plan_step **st)
{
    fnw_plan_step *s = realloc(p->steps, (p->n_steps + 1) * sizeof *s);
    if (!s)
        return -1;
    p->steps = s;
    *st = &p->steps[p->n_steps++];
    memset(*st, 0, sizeof **st);
    return 0;
}

/* Side outputs of a step: every output other than "output" leads through
 * its own REVISE_OUTPUT transform to a sink that only needs is_last. */
static int follow_side_outputs(const pb_ProcessBundleDescriptor *d, const pb_PTransform *t,
                               const char *main_pcoll, fnw_plan *p, fnw_error *err)
{
    for (size_t i = 0; i < t->n_outputs; i++) {
        if (main_pcoll && !strcmp(t->outputs[i]->value, main_pcoll))
            continue;
        const char *rid = NULL;
        const pb_PTransform *r = consumer_of(d, t->outputs[i]->value, &rid, err);
        if (!r)
            return -1;
        if (follow_revise(d, r, rid, p, 0, err) < 0)
            return -1;
    }
    return 0;
}

static int walk_chain(const pb_ProcessBundleDescriptor *d, const char *pcoll, const fnw_registry *reg,
                      fnw_plan *p, fnw_error *err)
{
    for (int guard = 0; guard < 1000; guard++) {
        const char *id = NULL;
        const pb_PTransform *t = consumer_of(d, pcoll, &id, err);
        if (!t)
            return -1;
        const char *urn = spec_urn(t);
        if (!strcmp(urn, URN_SINK))
            return fnw_error_set(err, "sink '%s' follows '%s' without a REVISE_OUTPUT transform", id, pcoll);
        if (strcmp(urn, URN_PARDO))
            return fnw_error_set(err,
                                 "transform '%s' has URN '%s'; fnworker runs %s transforms whose "
                                 "do_fn is %s",
                                 id, urn, URN_PARDO, URN_STATELESS);
        pb_ParDoPayload *pd = PBP(par_do_payload__unpack)(NULL, t->spec->payload.len, t->spec->payload.data);
        if (!pd || !pd->do_fn) {
            if (pd)
                PBP(par_do_payload__free_unpacked)(pd, NULL);
            return fnw_error_set(err, "transform '%s': payload is not a ParDoPayload with a do_fn", id);
        }
        int rc = 0;
        pb_UDSF *f = NULL;
        if (!strcmp(pd->do_fn->urn, URN_STATEFUL))
            rc = fnw_error_set(err,
                               "transform '%s' is a keyed (stateful) function; fnworker supports "
                               "stateless functions only",
                               id);
        else if (strcmp(pd->do_fn->urn, URN_STATELESS))
            rc = fnw_error_set(err, "transform '%s': do_fn URN '%s' is not supported (expected %s)", id,
                               pd->do_fn->urn, URN_STATELESS);
        else if (pd->n_timer_family_specs > 0)
            rc = fnw_error_set(err, "transform '%s' uses timers, which are not supported", id);
        else if (pd->n_state_specs > 0 || pd->n_side_inputs > 0)
            rc = fnw_error_set(err, "transform '%s' uses state or side inputs, which are not supported", id);
        else if (fnw_pb_nesting_check(&PBF(user_defined_data_stream_function__descriptor),
                                      pd->do_fn->payload.data, pd->do_fn->payload.len, err) < 0)
            rc = fnw_error_prefix(err, "transform '%s': do_fn payload", id); /* key_type_info */
        else if (!(f = PBF(user_defined_data_stream_function__unpack)(NULL, pd->do_fn->payload.len,
                                                                      pd->do_fn->payload.data)))
            rc = fnw_error_set(err, "transform '%s': do_fn payload is not a UserDefinedDataStreamFunction",
                               id);
        PBP(par_do_payload__free_unpacked)(pd, NULL);
        if (rc < 0)
            return -1;
        int ft = f->function_type;
        if (ft == FT_REVISE_OUTPUT) {
            PBF(user_defined_data_stream_function__free_unpacked)(f, NULL);
            return follow_revise(d, t, id, p, 1, err);
        }
        fnw_plan_step *st = NULL;
        if (ft != FT_PROCESS && ft != FT_ASYNC_BATCH)
            rc = fnw_error_set(err,
                               "transform '%s': function type %s (%d) is not supported; fnworker runs "
                               "PROCESS and ASYNC_BATCH functions",
                               id, function_type_name(ft), ft);
        else if (add_step(p, &st) < 0)
            rc = fnw_error_set(err, "out of memory");
        else
            rc = fnw_step_build(f, id, reg, st, err);
        PBF(user_defined_data_stream_function__free_unpacked)(f, NULL);
        if (rc < 0)
            return -1;
        pcoll = main_output(t);
        if (!pcoll)
            return fnw_error_set(err,
                                 "transform '%s' has no main output (an output keyed 'output' "
                                 "or '')",
                                 id);
        if (follow_side_outputs(d, t, pcoll, p, err) < 0)
            return -1;
    }
    return fnw_error_set(err, "the transform chain is too long");
}

static int find_source(const pb_ProcessBundleDescriptor *d, const char **id, const pb_PTransform **t,
                       fnw_error *err)
{
    *t = NULL;
    for (size_t i = 0; i < d->n_transforms; i++) {
        const pb_PTransform *x = d->transforms[i]->value;
        if (!x || strcmp(spec_urn(x), URN_SOURCE))
            continue;
        if (*t)
            return fnw_error_set(err,
                                 "the descriptor has two data sources ('%s' and '%s'); fnworker "
                                 "supports one-input operators",
                                 *id, d->transforms[i]->key);
        *t = x;
        *id = d->transforms[i]->key;
    }
    if (!*t)
        return fnw_error_set(err, "the descriptor has no %s transform", URN_SOURCE);
    if ((*t)->n_outputs != 1)
        return fnw_error_set(err, "source '%s' must have exactly one output", *id);
    return 0;
}

/* The first step's OperationSpec.input_field, compiled against the input
 * type (p->input_field); a later step may not name one. */
static int resolve_input_field(fnw_plan *p, fnw_error *err)
{
    for (size_t i = 1; i < p->n_steps; i++) {
        const fnw_plan_step *st = &p->steps[i];
        if (st->input_field)
            return fnw_error_set(err,
                                 "transform '%s' (operation '%s'): its OperationSpec names input_field '%s', "
                                 "but it is not the first function of its operator (it follows '%s'); "
                                 "input_field picks a field of the operator's input and is read on the "
                                 "first function only",
                                 st->transform_id, st->op->name, st->input_field,
                                 p->steps[i - 1].transform_id);
    }
    const fnw_plan_step *st = &p->steps[0];
    if (!st->input_field)
        return 0;
    int64_t idx = fnw_type_find_field(p->input_type, st->input_field, strlen(st->input_field));
    if (idx < 0) {
        char t[384];
        fnw_type_format(p->input_type, t, sizeof t);
        return fnw_error_set(err,
                             "transform '%s' (operation '%s'): its OperationSpec names input_field '%s', "
                             "which the operator's input type %s does not have%s; the fnworker Python "
                             "package names field 'f1' on an operator it adds to a KeyedStream, whose "
                             "records are Row(f0=<key>, f1=<value>)",
                             st->transform_id, st->op->name, st->input_field, t,
                             p->input_type->kind == FNW_ROW ? "" : " (it is not a ROW)");
    }
    if (!(p->input_field = fnw_ser_field_new(p->input_type, (uint32_t)idx, err)))
        return fnw_error_prefix(err, "transform '%s': input_field '%s'", st->transform_id, st->input_field);
    return 0;
}

/* A Table operator: source -> one Table function transform -> sink. */
static int build_table(const pb_ProcessBundleDescriptor *d, const pb_PTransform *t, const char *tid,
                       const char *in_coder, const fnw_registry *reg, fnw_plan *p, fnw_error *err)
{
    const char *pcoll = main_output(t);
    if (!pcoll || t->n_outputs != 1)
        return fnw_error_set(err, "transform '%s' must have exactly one output", tid);
    const char *sink_id = NULL;
    const pb_PTransform *sink = consumer_of(d, pcoll, &sink_id, err);
    if (!sink)
        return -1;
    if (strcmp(spec_urn(sink), URN_SINK))
        return fnw_error_set(err, "transform '%s' after Table transform '%s' has URN '%s'; expected %s",
                             sink_id, tid, spec_urn(sink), URN_SINK);
    if (check_sink_url(sink, sink_id, p, err) < 0)
        return -1;
    char *url = NULL, *out_coder = NULL;
    if (grpc_port(sink, sink_id, &url, &out_coder, err) < 0)
        return -1;
    free(url);
    pb_CoderInfoDescriptor *ci_in = NULL, *ci_out = NULL;
    int rc = 0;
    if (fnw_plan_coder_info(d, in_coder, &ci_in, err) < 0 ||
        fnw_plan_coder_info(d, out_coder, &ci_out, err) < 0)
        rc = -1;
    else
        rc = fnw_table_plan_build(t, tid, ci_in, ci_out, reg, p, err);
    if (ci_in)
        PBF(coder_info_descriptor__free_unpacked)(ci_in, NULL);
    if (ci_out)
        PBF(coder_info_descriptor__free_unpacked)(ci_out, NULL);
    free(out_coder);
    if (rc < 0)
        return -1;
    if (!(p->main_sink_id = strdup(sink_id)) || add_sink(p, sink_id, 1) < 0)
        return fnw_error_set(err, "sink '%s': out of memory", sink_id);
    return 0;
}

int fnw_plan_build(const pb_ProcessBundleDescriptor *d, const fnw_registry *reg, fnw_plan **out,
                   fnw_error *err)
{
    fnw_plan *p = calloc(1, sizeof *p);
    if (!p)
        return fnw_error_set(err, "out of memory");
    const char *sid = NULL;
    const pb_PTransform *src = NULL;
    char *coder = NULL;
    if (!(p->descriptor_id = strdup(d->id))) {
        fnw_error_set(err, "out of memory");
        goto fail;
    }
    if (find_source(d, &sid, &src, err) < 0)
        goto fail;
    if (!(p->source_id = strdup(sid))) {
        fnw_error_set(err, "source '%s': out of memory", sid);
        goto fail;
    }
    if (grpc_port(src, sid, &p->data_url, &coder, err) < 0)
        goto fail;
    const char *tid = NULL;
    const pb_PTransform *first = consumer_of(d, src->outputs[0]->value, &tid, err);
    if (first && fnw_table_plan_is_table_urn(spec_urn(first))) {
        if (build_table(d, first, tid, coder, reg, p, err) < 0)
            goto fail;
        free(coder);
        *out = p;
        return 0;
    }
    if (coder_flink_type(d, coder, 0, &p->input_raw, err) < 0 ||
        fnw_row_unwrap_input_type(p->input_raw, &p->input_type, err) < 0) {
        fnw_error_prefix(err, "source '%s'", sid);
        goto fail;
    }
    if (!(p->input_skip = fnw_skip_program_new(p->input_type, err))) {
        fnw_error_prefix(err, "source '%s'", sid);
        goto fail;
    }
    free(coder);
    coder = NULL;
    if (walk_chain(d, src->outputs[0]->value, reg, p, err) < 0)
        goto fail;
    if (p->n_steps == 0) {
        fnw_error_set(err, "the descriptor has no function between source '%s' and its sink", sid);
        goto fail;
    }
    if (resolve_input_field(p, err) < 0)
        goto fail;
    if (fnw_step_link(p->steps, p->n_steps,
                      p->input_field ? fnw_ser_field_type(p->input_field) : p->input_type, p->output_type,
                      err) < 0)
        goto fail;
    *out = p;
    return 0;
fail:
    free(coder);
    fnw_error_prefix(err, "descriptor '%s'", d->id);
    fnw_plan_free(p);
    return -1;
}

void fnw_plan_free(fnw_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_steps; i++)
        fnw_step_free(&p->steps[i]);
    free(p->steps);
    fnw_table_plan_free(p->table);
    for (size_t i = 0; i < p->n_sinks; i++)
        free(p->sink_ids[i]);
    free(p->sink_ids);
    free(p->main_sink_id);
    fnw_ser_field_free(p->input_field);
    fnw_skip_program_free(p->input_skip);
    fnw_type_free(p->input_raw);
    fnw_type_free(p->output_raw);
    free(p->data_url);
    free(p->source_id);
    free(p->descriptor_id);
    free(p);
}

int fnw_plan_data_url(const pb_ProcessBundleDescriptor *d, char **url, fnw_error *err)
{
    *url = NULL;
    for (size_t i = 0; i < d->n_transforms; i++) {
        const pb_PTransform *t = d->transforms[i]->value;
        const char *urn = spec_urn(t);
        if (strcmp(urn, URN_SOURCE) && strcmp(urn, URN_SINK))
            continue;
        char *coder = NULL;
        int rc = grpc_port(t, d->transforms[i]->key, url, &coder, err);
        if (rc == -2)
            return -1;
        if (rc == 0) {
            free(coder);
            return 0;
        }
    }
    return 0;
}
