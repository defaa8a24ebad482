/* tests/fuzz/fuzz_plan.c — fuzz target for what the worker reads from a
 * ProcessBundleDescriptor: the fetch (worker/control.c: the size and
 * nesting checks, and what is read of a descriptor refused as a whole), the
 * descriptor cache (worker/descriptors.c) and the plan (worker/plan.c,
 * worker/step.c): transforms, coders and their Flink TypeInfo, ParDo
 * payloads, the UserDefinedDataStreamFunction and the OperationSpec in its
 * payload (protobuf or the Python package's pickle).
 *
 * The input is the descriptor's wire bytes, as a GetProcessBundleDescriptor
 * response brings them (through a fake transport). Properties checked
 * (abort() on violation):
 *  - the fetch ends in a descriptor or a non-empty reason, the same twice;
 *    a refused descriptor fails its bundles with that reason, and its data
 *    endpoint is the one what could be read of it names;
 *  - a fetched descriptor ends in a plan or a non-empty message, never a
 *    crash or a leak (the fuzz build runs under LeakSanitizer);
 *  - planning the same descriptor twice gives the same answer: status,
 *    message, and the plan's ids, endpoint, steps (operation, spec, options,
 *    types) and sinks;
 *  - an accepted plan is whole: a source, an endpoint, at least one step
 *    whose spec is within fnworker's caps, the main sink first among its
 *    sinks, input and output types; a DataStream chain's types meet the
 *    source's and the sink's;
 *  - an accepted Table plan (worker/table_plan.c: scalar, async scalar and
 *    table functions) is whole too: one node per step, the description's
 *    nodes the plan's, a window of at least one row; each node's arguments
 *    match its step's argument row: a column is a field of the input row
 *    of that type, a constant is a null or bytes that decode as exactly
 *    one value of its type, a nested call names an earlier node (a nested
 *    one, no column) whose result has that type; every output column is
 *    filled by exactly one node whose result is the column's type (a table
 *    function: its last node's result is the output row);
 *  - the relay's classification (worker/relay_route.c) gives the same
 *    route twice (a refusal of a mixed descriptor with the same non-empty
 *    message), and the copy the relay would give PyFlink's worker packs
 *    the same twice and unpacks into a descriptor classified the same;
 *  - the descriptor cache agrees with the plan: it keeps a plan when
 *    planning succeeds, else the same message, and the same data endpoint
 *    as fnw_plan_data_url.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/builtins.h"
#include "runtime/registry.h"
#include "worker/control.h"
#include "worker/descriptors.h"
#include "worker/plan.h"
#include "worker/relay_route.h"
#include "worker/table_plan.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/table_checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static int same_type(const fnw_type *a, const fnw_type *b)
{
    return (!a && !b) || (a && b && fnw_type_equal(a, b));
}

static int same_spec(const fnw_spec *a, const fnw_spec *b)
{
    return a->batched == b->batched && a->unordered == b->unordered && a->capacity == b->capacity &&
           a->timeout_ms == b->timeout_ms && a->batch_size == b->batch_size &&
           a->batch_timeout_ms == b->batch_timeout_ms && a->on_timeout == b->on_timeout &&
           a->retry.kind == b->retry.kind && a->retry.max_attempts == b->retry.max_attempts &&
           a->retry.delay_ms == b->retry.delay_ms && a->retry.max_delay_ms == b->retry.max_delay_ms &&
           !memcmp(&a->retry.multiplier, &b->retry.multiplier, sizeof a->retry.multiplier) &&
           a->retry.on_error == b->retry.on_error && a->retry.on_empty == b->retry.on_empty;
}

static int same_step(const fnw_plan_step *a, const fnw_plan_step *b)
{
    if (!same_str(a->transform_id, b->transform_id) || a->op != b->op || !same_spec(&a->spec, &b->spec) ||
        a->opts.count != b->opts.count || !same_type(a->declared_type, b->declared_type) ||
        !same_type(a->input_type, b->input_type) || !same_type(a->output_type, b->output_type))
        return 0;
    for (size_t i = 0; i < a->opts.count; i++)
        if (!same_str(a->opts.items[i].key, b->opts.items[i].key) ||
            !same_str(a->opts.items[i].value, b->opts.items[i].value))
            return 0;
    return 1;
}

static int same_plan(const fnw_plan *a, const fnw_plan *b)
{
    if (!same_str(a->descriptor_id, b->descriptor_id) || !same_str(a->source_id, b->source_id) ||
        !same_str(a->data_url, b->data_url) || !same_str(a->main_sink_id, b->main_sink_id) ||
        !same_type(a->input_raw, b->input_raw) || !same_type(a->output_raw, b->output_raw) ||
        a->n_steps != b->n_steps || a->n_sinks != b->n_sinks)
        return 0;
    for (size_t i = 0; i < a->n_steps; i++)
        if (!same_step(&a->steps[i], &b->steps[i]))
            return 0;
    for (size_t i = 0; i < a->n_sinks; i++)
        if (!same_str(a->sink_ids[i], b->sink_ids[i]))
            return 0;
    return 1;
}

static void check_whole(const fnw_plan *p)
{
    CHECK(p->descriptor_id && p->source_id && p->data_url && p->data_url[0]);
    CHECK(p->input_raw && p->input_type && p->input_skip && p->output_raw && p->output_type);
    CHECK(p->n_steps >= 1 && p->steps);
    CHECK(p->n_sinks >= 1 && p->main_sink_id && !strcmp(p->sink_ids[0], p->main_sink_id));
    for (size_t i = 0; i < p->n_steps; i++) {
        const fnw_plan_step *s = &p->steps[i];
        CHECK(s->transform_id && s->op && s->input_type && s->output_type);
        CHECK(s->spec.capacity >= 1 && s->spec.capacity <= FNW_SPEC_MAX_CAPACITY);
        CHECK(s->spec.timeout_ms >= 0);
        if (s->spec.batched)
            CHECK(s->spec.batch_size >= 1 && s->spec.batch_size <= FNW_SPEC_MAX_BATCH_SIZE &&
                  s->spec.batch_timeout_ms >= 0);
        else
            CHECK(s->spec.batch_size == 0 && s->spec.batch_timeout_ms == 0);
    }
    if (p->table) {
        fuzz_check_table(p);
        return;
    }
    CHECK(same_type(p->steps[p->n_steps - 1].output_type, p->output_type));
    CHECK(same_type(p->steps[0].input_type, p->input_type));
}

static void on_ready(void *user, fnw_descriptor *d, const char *instruction_id)
{
    (void)user;
    (void)d;
    (void)instruction_id;
}

/* The data endpoint fnw_plan_data_url finds in pb (malloc'd), or NULL. */
static char *data_url(const pb_ProcessBundleDescriptor *pb)
{
    char *url = NULL;
    fnw_error err;
    if (fnw_plan_data_url(pb, &url, &err) < 0)
        abort();   /* out of memory: nothing to learn from this input */
    return url;
}

/* The cache must keep what fnw_plan_build and fnw_plan_data_url say. */
static void check_cache(const pb_ProcessBundleDescriptor *pb, const fnw_registry *reg, int rc,
                        const char *msg)
{
    static const fnw_descriptors_events ev = {on_ready, NULL};
    fnw_logger quiet;   /* never started: drops what is below ERROR, prints the rest */
    fnw_log_init(&quiet, NULL, FNW_LOG_ERROR);
    fnw_descriptors c;
    fnw_descriptors_init(&c, reg, &quiet, &ev, NULL);
    fnw_descriptor *d = fnw_descriptors_get(&c, "fuzz");
    CHECK(d);
    fnw_descriptors_set(&c, d, pb);
    CHECK(fnw_descriptors_known(d));
    CHECK(rc == 0 ? fnw_descriptors_plan(d) && !fnw_descriptors_error(d)
                  : !fnw_descriptors_plan(d) && same_str(fnw_descriptors_error(d), msg));
    char *url = data_url(pb);
    CHECK(same_str(url, fnw_descriptors_data_url(d)));
    free(url);
    fnw_descriptors_free(&c);
}

/* ---- the fetch, over a fake transport ------------------------------------------ */

typedef struct fetch {
    fnw_unary_cb cb;
    void *cb_user;
    int calls;
    pb_ProcessBundleDescriptor *d;
    char why[FNW_ERROR_MAX + 256];
    int has_why;
} fetch;

static int stream_token;

static void *fake_start(void *ctx, const fnw_stream_handler *h)
{
    (void)ctx;
    (void)h;
    return &stream_token;
}

static void fake_send(void *stream, grpc_slice msg)
{
    (void)stream;
    grpc_slice_unref(msg);
}

static void fake_stream(void *stream)
{
    (void)stream;
}

static int fake_unary(void *ctx, const char *method, grpc_slice req, double timeout_s, fnw_unary_cb cb,
                      void *user)
{
    fetch *f = ctx;
    (void)method;
    (void)timeout_s;
    grpc_slice_unref(req);
    f->cb = cb;
    f->cb_user = user;
    return 0;
}

static const fnw_control_transport fake_transport = {fake_start, fake_send, fake_stream, fake_stream,
                                                     fake_unary};

static void on_fetched(void *user, pb_ProcessBundleDescriptor *d, const char *why)
{
    fetch *f = user;
    f->calls++;
    f->d = d;
    f->has_why = why != NULL;
    if (why)
        snprintf(f->why, sizeof f->why, "%s", why);
}

static void on_request(void *user, pb_InstructionRequest *req)
{
    (void)user;
    fnw_control_free_request(req);
}

static void on_closed(void *user, grpc_status_code code, const char *details)
{
    (void)user;
    (void)code;
    (void)details;
}

/* The descriptor the worker makes of these bytes, or why it has none. */
static void fetch_bytes(const uint8_t *data, size_t size, fnw_logger *log, fetch *f)
{
    memset(f, 0, sizeof *f);
    fnw_control_handler h = {NULL, on_request, on_closed};
    fnw_control *c = fnw_control_start_on(&fake_transport, f, log, &h);
    CHECK(c);
    CHECK(fnw_control_fetch_descriptor(c, "fuzz", on_fetched, f) == 0 && f->cb);
    grpc_slice s = grpc_slice_from_copied_buffer((const char *)data, size);
    f->cb(f->cb_user, GRPC_STATUS_OK, "", s);
    grpc_slice_unref(s);
    CHECK(f->calls == 1);
    CHECK(f->has_why ? f->why[0] != '\0' : f->d != NULL);
    fnw_control_free(c);
}

/* A refused descriptor: every waiting bundle gets the reason; the endpoint
 * is what the readable part names. */
static int ready_calls;

static void count_ready(void *user, fnw_descriptor *d, const char *instruction_id)
{
    (void)user;
    (void)d;
    (void)instruction_id;
    ready_calls++;
}

static void check_refused(const fetch *f, const fnw_registry *reg, fnw_logger *log)
{
    static const fnw_descriptors_events ev = {count_ready, NULL};
    fnw_descriptors c;
    fnw_descriptors_init(&c, reg, log, &ev, NULL);
    fnw_descriptor *d = fnw_descriptors_get(&c, "fuzz");
    CHECK(d && fnw_descriptors_wait(&c, d, "bundle-1") == 1);
    ready_calls = 0;
    fnw_descriptors_arrived(&c, d, f->d, f->why);
    CHECK(ready_calls == 1 && fnw_descriptors_known(d) && !fnw_descriptors_plan(d));
    CHECK(same_str(fnw_descriptors_error(d), f->why));
    char *url = f->d ? data_url(f->d) : NULL;
    CHECK(same_str(url, fnw_descriptors_data_url(d)));
    free(url);
    fnw_descriptors_free(&c);
}

/* The relay's copy of pb for PyFlink's worker, or NULL with a message. */
static grpc_slice *relay_copy(const pb_ProcessBundleDescriptor *pb, grpc_slice *s, fnw_error *err)
{
    err->msg[0] = '\0';
    if (fnw_relay_route_rewrite(pb, "127.0.0.1:1", s, err) < 0) {
        CHECK(err->msg[0] != '\0');
        return NULL;
    }
    return s;
}

static void check_route(const pb_ProcessBundleDescriptor *pb)
{
    fnw_error ea, eb;
    ea.msg[0] = eb.msg[0] = '\0';
    fnw_route ra = fnw_relay_route_classify(pb, &ea);
    fnw_route rb = fnw_relay_route_classify(pb, &eb);
    CHECK(ra == rb && (ra == FNW_ROUTE_NATIVE || ra == FNW_ROUTE_RELAYED || ra == FNW_ROUTE_MIXED));
    if (ra == FNW_ROUTE_MIXED)
        CHECK(fuzz_same_message(&ea, &eb));
    grpc_slice sa, sb;
    grpc_slice *a = relay_copy(pb, &sa, &ea), *b = relay_copy(pb, &sb, &eb);
    CHECK(!a == !b);
    if (!a) {
        CHECK(!strcmp(ea.msg, eb.msg));
        return;
    }
    CHECK(grpc_slice_eq(sa, sb));
    pb_ProcessBundleDescriptor *copy = PB(process_bundle_descriptor__unpack)(NULL, GRPC_SLICE_LENGTH(sa),
                                                                           GRPC_SLICE_START_PTR(sa));
    CHECK(copy);
    CHECK(fnw_relay_route_classify(copy, &eb) == ra);
    PB(process_bundle_descriptor__free_unpacked)(copy, NULL);
    grpc_slice_unref(sa);
    grpc_slice_unref(sb);
}

static void check_plans(const pb_ProcessBundleDescriptor *pb, const fnw_registry *reg)
{
    check_route(pb);
    fnw_plan *a = NULL, *b = NULL;
    fnw_error ea, eb;
    int ra = fnw_plan_build(pb, reg, &a, &ea);
    int rb = fnw_plan_build(pb, reg, &b, &eb);
    CHECK(ra == rb);
    if (ra == 0) {
        CHECK(a && b && same_plan(a, b));
        check_whole(a);
    } else {
        CHECK(ea.msg[0] != '\0' && !strcmp(ea.msg, eb.msg));
    }
    check_cache(pb, reg, ra, ra == 0 ? NULL : ea.msg);
    if (ra == 0) {
        fnw_plan_free(a);
        fnw_plan_free(b);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fnw_logger quiet;   /* never started: drops what is below ERROR, prints the rest */
    fnw_log_init(&quiet, NULL, FNW_LOG_ERROR);
    fnw_registry reg;
    fnw_registry_init(&reg);
    fnw_builtins_register(&reg);
    fetch f, again;
    fetch_bytes(data, size, &quiet, &f);
    fetch_bytes(data, size, &quiet, &again);
    CHECK(f.has_why == again.has_why && (f.d != NULL) == (again.d != NULL));
    CHECK(!f.has_why || !strcmp(f.why, again.why));
    if (f.has_why)
        check_refused(&f, &reg, &quiet);
    else
        check_plans(f.d, &reg);
    if (f.d)
        fnw_control_free_descriptor(f.d);
    if (again.d)
        fnw_control_free_descriptor(again.d);
    return 0;
}
