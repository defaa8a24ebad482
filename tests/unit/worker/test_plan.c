/* tests/unit/worker/test_plan.c — reading Flink-shaped ProcessBundleDescriptors:
 * the shape Flink builds works (chains, side outputs, any ids), and every
 * unsupported shape fails with a message saying what is not supported; how
 * a function's spec selects batch mode, and the types between the steps of
 * a chain (kept, given by output_type, checked against the sink, missing);
 * input_field (a KeyedStream's Row(key, value)): the chain is typed from the
 * field, and a field the input lacks or one on a later step is refused. */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/wire_build.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/descriptor_build.h"
#include "worker/plan.h"

/* ---- specs for one function ---------------------------------------------------- */

#define WIRE "beam:coder:param_windowed_value:v1"
#define FT_PROCESS 0
#define FT_ASYNC_BATCH 7
#define MODE(x) FNWORKER__V1__OPERATION_SPEC__MODE__##x

typedef Fnworker__V1__OperationSpec__OptionsEntry OptEntry;

static pb_OperationSpec op_spec(const char *operation)
{
    pb_OperationSpec os = FNWORKER__V1__OPERATION_SPEC__INIT;
    os.operation = (char *)operation;
    return os;
}

/* os with the one option key=value (memory kept by b). */
static void one_option(builder *b, pb_OperationSpec *os, const char *key, const char *value)
{
    OptEntry *e = keep(b, malloc(sizeof *e));
    OptEntry init = FNWORKER__V1__OPERATION_SPEC__OPTIONS_ENTRY__INIT;
    *e = init;
    e->key = (char *)key;
    e->value = (char *)value;
    OptEntry **v = keep(b, malloc(sizeof *v));
    v[0] = e;
    os->n_options = 1;
    os->options = v;
}

/* Transform id now runs os under function_type. */
static void set_fn(builder *b, const char *id, int function_type, const pb_OperationSpec *os)
{
    transform(b, id)->spec = pardo_spec(b, STATELESS, function_type, os, 0);
}

/* The build fails with a message holding every part (NULL-terminated). */
static void expect_fail(builder *b, ...)
{
    fnw_plan *p = NULL;
    fnw_error err;
    err.msg[0] = '\0';
    ck_assert_int_eq(build(b, &p, &err), -1);
    ck_assert_ptr_null(p);
    va_list ap;
    va_start(ap, b);
    for (const char *part = va_arg(ap, const char *); part; part = va_arg(ap, const char *))
        ck_assert_msg(strstr(err.msg, part) != NULL, "'%s' is not in: %s", part, err.msg);
    va_end(ap);
}

/* The one-function plan's batched flag for (function_type, os). */
static int batched_for(int function_type, const pb_OperationSpec *os)
{
    builder b;
    flink_shape(&b, 1, WIRE);
    set_fn(&b, "transform-0", function_type, os);
    fnw_plan *p = NULL;
    fnw_error err;
    ck_assert_msg(build(&b, &p, &err) == 0, "%s", err.msg);
    int batched = p->steps[0].spec.batched;
    fnw_plan_free(p);
    builder_free(&b);
    return batched;
}

/* ---- tests -------------------------------------------------------------------- */

START_TEST(flink_layout_becomes_a_plan)
{
    builder b;
    flink_shape(&b, 2, "beam:coder:param_windowed_value:v1");
    fnw_plan *p = NULL;
    fnw_error err;
    ck_assert_msg(build(&b, &p, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(p->source_id, "fn/read/input:0");
    ck_assert_str_eq(p->data_url, "localhost:7777");
    ck_assert_str_eq(p->main_sink_id, "fn/write/output:0");
    ck_assert_int_eq((int)p->n_sinks, 1);
    ck_assert_int_eq((int)p->n_steps, 2);
    ck_assert_str_eq(p->steps[0].transform_id, "transform-0");
    ck_assert_str_eq(p->steps[1].transform_id, "transform-1");
    ck_assert_str_eq(p->steps[0].op->name, "identity");
    ck_assert_int_eq(p->input_type->kind, FNW_ROW);
    ck_assert(fnw_type_equal(p->input_type, p->output_type));
    ck_assert_ptr_eq(p->steps[0].input_type, p->input_type);
    ck_assert_ptr_eq(p->steps[1].output_type, p->output_type);
    ck_assert_ptr_nonnull(p->input_skip);   /* compiled with the plan, not on first use */
    /* identity keeps its type: the step between has the operator's input type */
    ck_assert_ptr_eq(p->steps[0].output_type, p->input_type);
    ck_assert_ptr_eq(p->steps[1].input_type, p->input_type);
    ck_assert_int_eq(p->steps[0].spec.batched, 0);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

/* What a real Flink 1.20.5 and 2.3.0 sends (tests/integration/fixtures/
 * real-flink-descriptor.txt): every main output keyed "", the operator's
 * output PCollection "" and its sink fn/write/:0 (flink-python's
 * MAIN_OUTPUT_NAME and OUTPUT_COLLECTION_ID). The worker before main_output()
 * planned "" as a side output and refused the chain. */
static void as_real_flink_keys_it(builder *b)
{
    for (size_t i = 0; i < b->d.n_transforms; i++) {
        pb_PTransform *t = b->t[i]->value;
        for (size_t k = 0; k < t->n_outputs; k++) {
            if (!strcmp(t->outputs[k]->key, "output"))
                t->outputs[k]->key = (char *)"";
            if (!strcmp(t->outputs[k]->value, "output"))
                t->outputs[k]->value = (char *)"";
        }
        for (size_t k = 0; k < t->n_inputs; k++)
            if (!strcmp(t->inputs[k]->value, "output"))
                t->inputs[k]->value = (char *)"";
        if (!strcmp(b->t[i]->key, "fn/write/output:0"))
            b->t[i]->key = (char *)"fn/write/:0";
    }
}

START_TEST(real_flinks_empty_output_keys_plan)
{
    builder b;
    flink_shape(&b, 3, "beam:coder:param_windowed_value:v1");
    as_real_flink_keys_it(&b);
    fnw_plan *p = NULL;
    fnw_error err;
    ck_assert_msg(build(&b, &p, &err) == 0, "%s", err.msg);
    ck_assert_int_eq((int)p->n_steps, 3);
    ck_assert_str_eq(p->steps[2].transform_id, "transform-2");
    ck_assert_str_eq(p->main_sink_id, "fn/write/:0");
    ck_assert_int_eq((int)p->n_sinks, 1);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

START_TEST(unsupported_shapes_say_what)
{
    builder b;
    fnw_plan *p = NULL;
    fnw_error err;

    flink_shape(&b, 1, "beam:coder:windowed_value:v1");
    ck_assert_int_eq(build(&b, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "beam:coder:windowed_value:v1") != NULL, "%s", err.msg);
    builder_free(&b);

    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    transform(&b, "transform-0")->spec = pardo(&b, "flink:transform:ds:stateful_function:v1", 2, "identity", 0);
    ck_assert_int_eq(build(&b, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "keyed (stateful)") != NULL, "%s", err.msg);
    builder_free(&b);

    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    transform(&b, "transform-0")->spec = pardo(&b, STATELESS, 0, "identity", 1);
    ck_assert_int_eq(build(&b, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "timers") != NULL, "%s", err.msg);
    builder_free(&b);

    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    transform(&b, "transform-0")->spec = pardo(&b, STATELESS, 1, "identity", 0);
    ck_assert_int_eq(build(&b, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "CO_PROCESS") != NULL, "%s", err.msg);
    builder_free(&b);

    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    transform(&b, "transform-0")->spec = pardo(&b, STATELESS, 0, "no-such-op", 0);
    ck_assert_int_eq(build(&b, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "no-such-op") && strstr(err.msg, "identity"), "%s", err.msg);
    builder_free(&b);

    /* no revise transform between the function and the sink */
    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    transform(&b, "fn/write/output:0")->inputs = (void *)io(&b, "local_input", "collection-0");
    transform(&b, "transform-revise")->inputs = (void *)io(&b, "input", "elsewhere");
    ck_assert_int_eq(build(&b, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "REVISE_OUTPUT") != NULL, "%s", err.msg);
    builder_free(&b);
}
END_TEST

START_TEST(pickled_payload_points_to_the_readme)
{
    builder b;
    fnw_plan *p = NULL;
    fnw_error err;
    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    pb_UDSF f = ORG__APACHE__FLINK__FN_EXECUTION__V1__USER_DEFINED_DATA_STREAM_FUNCTION__INIT;
    uint8_t pickle[] = {0x80, 0x05, 0x95, 0x00};
    f.payload.data = pickle;
    f.payload.len = sizeof pickle;
    pb_ParDoPayload pd = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__PAR_DO_PAYLOAD__INIT;
    pd.do_fn = fspec(&b, STATELESS, pack(&b, &f.base));
    transform(&b, "transform-0")->spec = fspec(&b, "beam:transform:pardo:v1", pack(&b, &pd.base));
    ck_assert_int_eq(build(&b, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "Python pickle") && strstr(err.msg, "native operations") &&
                  strstr(err.msg, "docs/pyflink.md"), "%s", err.msg);
    builder_free(&b);
}
END_TEST

/* The main output is keyed "output" (older runners) or "" (a real Flink
 * 1.20/2.x); every other output is a side output with a sink of its own. */
START_TEST(side_output_sinks_are_collected)
{
    static const char *main_keys[] = { "output", "" };
    for (int k = 0; k < 2; k++) {
        builder b;
        fnw_plan *p = NULL;
        fnw_error err;
        flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
        pb_PTransform *t0 = transform(&b, "transform-0");
        IOEntry **outs = keep(&b, malloc(2 * sizeof *outs));
        outs[k] = ((IOEntry **)io(&b, main_keys[k], "collection-0"))[0];   /* either order */
        outs[1 - k] = ((IOEntry **)io(&b, "late", "collection-revise-late"))[0];
        t0->n_outputs = 2;
        t0->outputs = (void *)outs;
        add_transform(&b, "transform-revise-late", pardo(&b, STATELESS, 100, NULL, 0), "collection-revise-late", "late");
        add_transform(&b, "fn/write/late:0", grpc_port(&b, "beam:runner:sink:v1", "fn/wire/output:0-length_prefix0"),
                      "late", NULL);
        ck_assert_msg(build(&b, &p, &err) == 0, "main key '%s': %s", main_keys[k], err.msg);
        ck_assert_int_eq((int)p->n_sinks, 2);
        ck_assert_str_eq(p->main_sink_id, "fn/write/output:0");
        ck_assert_str_eq(p->sink_ids[0], "fn/write/output:0");   /* results go to sink 0 */
        ck_assert_str_eq(p->sink_ids[1], "fn/write/late:0");
        fnw_plan_free(p);
        builder_free(&b);
    }
}
END_TEST

/* Batch mode comes from the spec (mode BATCH under function type PROCESS, what
 * stock Flink sends) or from function type ASYNC_BATCH; never implicitly. */
START_TEST(mode_selects_batching)
{
    pb_OperationSpec os = op_spec("echo");
    ck_assert_int_eq(batched_for(FT_PROCESS, &os), 0);
    os.mode = MODE(PER_ELEMENT);
    ck_assert_int_eq(batched_for(FT_PROCESS, &os), 0);
    os.mode = MODE(BATCH);
    os.batch_size = 4;
    os.timeout_ms = 1000;
    ck_assert_int_eq(batched_for(FT_PROCESS, &os), 1);
    ck_assert_int_eq(batched_for(FT_ASYNC_BATCH, &os), 1);
    os.mode = MODE(MODE_UNSPECIFIED);
    ck_assert_int_eq(batched_for(FT_ASYNC_BATCH, &os), 1);   /* type 7 alone still batches */
}
END_TEST

START_TEST(mode_contradictions_and_stray_batch_fields_fail)
{
    builder b;
    pb_OperationSpec os = op_spec("echo");
    os.batch_size = 4;
    os.timeout_ms = 1000;

    /* type 7 with an explicit per-element spec */
    os.mode = MODE(PER_ELEMENT);
    flink_shape(&b, 1, WIRE);
    set_fn(&b, "transform-0", FT_ASYNC_BATCH, &os);
    expect_fail(&b, "transform 'transform-0' (operation 'echo')", "function type ASYNC_BATCH (7)",
                "mode PER_ELEMENT", "set mode BATCH", NULL);
    builder_free(&b);

    /* batch settings in per-element mode name the field */
    flink_shape(&b, 1, WIRE);
    set_fn(&b, "transform-0", FT_PROCESS, &os);
    expect_fail(&b, "transform 'transform-0' (operation 'echo'): batch_size (4) is a batch-mode setting",
                "set mode BATCH", NULL);
    builder_free(&b);
    os.mode = MODE(MODE_UNSPECIFIED);
    os.batch_size = 0;
    os.batch_timeout_ms = 5;
    flink_shape(&b, 1, WIRE);
    set_fn(&b, "transform-0", FT_PROCESS, &os);
    expect_fail(&b, "batch_timeout_ms (5) is a batch-mode setting", NULL);
    builder_free(&b);

    /* so is target_latency_ms */
    os = op_spec("echo");
    os.target_latency_ms = 50;
    flink_shape(&b, 1, WIRE);
    set_fn(&b, "transform-0", FT_PROCESS, &os);
    expect_fail(&b, "target_latency_ms (50) is a batch-mode setting", "remove target_latency_ms", NULL);
    builder_free(&b);

    /* in batch mode it reaches the step's spec */
    os.mode = MODE(BATCH);
    os.batch_size = 64;
    os.timeout_ms = 1000;
    flink_shape(&b, 1, WIRE);
    set_fn(&b, "transform-0", FT_PROCESS, &os);
    fnw_plan *p = NULL;
    fnw_error err;
    ck_assert_msg(build(&b, &p, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(p->steps[0].spec.batched, 1);
    ck_assert_int_eq((int)p->steps[0].spec.target_latency_ms, 50);
    fnw_plan_free(p);
    builder_free(&b);

    /* batch mode is validated as PyFlink does */
    os = op_spec("echo");
    os.mode = MODE(BATCH);
    flink_shape(&b, 1, WIRE);
    set_fn(&b, "transform-0", FT_PROCESS, &os);
    expect_fail(&b, "Batch size must be positive, got: 0", NULL);
    builder_free(&b);

    /* a mode this worker does not know */
    os = op_spec("echo");
    os.mode = (Fnworker__V1__OperationSpec__Mode)9;
    flink_shape(&b, 1, WIRE);
    set_fn(&b, "transform-0", FT_PROCESS, &os);
    expect_fail(&b, "unknown OperationSpec mode 9", NULL);
    builder_free(&b);
}
END_TEST

/* project (type given by the spec) -> echo (keeps it) -> identity (last):
 * ROW<f0 STRING, f1 INT> becomes ROW<f0 INT> after the first step. */
START_TEST(chain_types_given_by_the_spec)
{
    builder b;
    shape_init(&b);
    shape_typed(&b, 3, WIRE, str_int(&b), row_of(&b, 5));
    pb_OperationSpec project = op_spec("project");
    one_option(&b, &project, "fields", "f1");
    project.output_type = row_of(&b, 5);
    set_fn(&b, "transform-0", FT_PROCESS, &project);
    pb_OperationSpec echo = op_spec("echo");
    set_fn(&b, "transform-1", FT_PROCESS, &echo);
    fnw_plan *p = NULL;
    fnw_error err;
    ck_assert_msg(build(&b, &p, &err) == 0, "%s", err.msg);
    ck_assert_int_eq((int)p->n_steps, 3);
    const fnw_plan_step *s = p->steps;
    ck_assert_str_eq(s[0].op->name, "project");
    ck_assert_ptr_eq(s[0].input_type, p->input_type);
    ck_assert_ptr_nonnull(s[0].declared_type);
    ck_assert_ptr_eq(s[0].output_type, s[0].declared_type);
    ck_assert(fnw_type_equal(s[0].output_type, p->output_type));
    ck_assert(!fnw_type_equal(s[0].output_type, p->input_type));
    ck_assert_ptr_eq(s[1].input_type, s[0].output_type);
    ck_assert_ptr_eq(s[1].output_type, s[1].input_type);      /* echo keeps its type */
    ck_assert_ptr_eq(s[2].input_type, s[1].output_type);
    ck_assert_ptr_eq(s[2].output_type, p->output_type);
    fnw_plan_free(p);

    /* the last step may declare its type when it equals the operator's */
    echo.output_type = row_of(&b, 5);
    set_fn(&b, "transform-2", FT_PROCESS, &echo);
    ck_assert_msg(build(&b, &p, &err) == 0, "%s", err.msg);
    ck_assert_ptr_eq(p->steps[2].output_type, p->output_type);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

START_TEST(last_step_type_must_match_the_sink)
{
    builder b;
    flink_shape(&b, 1, WIRE);
    pb_OperationSpec os = op_spec("identity");
    os.output_type = row_of(&b, 6);
    set_fn(&b, "transform-0", FT_PROCESS, &os);
    expect_fail(&b, "descriptor '1-2': transform 'transform-0' (operation 'identity') is the last function of "
                "its operator, so its output type is the operator's: the OperationSpec's output_type is "
                "ROW<f0 LONG> but the operator's output type is ROW<f0 STRING, f1 INT>", NULL);
    builder_free(&b);
}
END_TEST

START_TEST(type_changing_step_without_output_type_fails)
{
    builder b;
    shape_init(&b);
    shape_typed(&b, 2, WIRE, str_int(&b), row_of(&b, 5));
    pb_OperationSpec project = op_spec("project");
    one_option(&b, &project, "fields", "f1");
    set_fn(&b, "transform-0", FT_PROCESS, &project);
    expect_fail(&b, "transform 'transform-0' (operation 'project') feeds 'transform-1' in the same operator",
                "does not keep its input type", "Set output_type in its OperationSpec", NULL);
    builder_free(&b);

    /* as the last step it takes the operator's output type */
    shape_init(&b);
    shape_typed(&b, 1, WIRE, str_int(&b), row_of(&b, 5));
    project = op_spec("project");
    one_option(&b, &project, "fields", "f1");
    set_fn(&b, "transform-0", FT_PROCESS, &project);
    fnw_plan *p = NULL;
    fnw_error err;
    ck_assert_msg(build(&b, &p, &err) == 0, "%s", err.msg);
    ck_assert_ptr_eq(p->steps[0].output_type, p->output_type);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

START_TEST(bad_output_type_is_named)
{
    builder b;
    flink_shape(&b, 2, WIRE);
    pb_OperationSpec os = op_spec("echo");
    os.output_type = ti(&b, 99);
    set_fn(&b, "transform-0", FT_PROCESS, &os);
    expect_fail(&b, "transform 'transform-0' (operation 'echo'): output_type: unknown TypeInfo.type_name 99",
                NULL);
    builder_free(&b);
}
END_TEST

/* A ParDo whose payload has no do_fn fails, and frees what it unpacked
 * (ASan and valgrind report the ParDoPayload otherwise). */
START_TEST(pardo_without_do_fn_fails_without_leaking)
{
    builder b;
    fnw_plan *p = NULL;
    fnw_error err;
    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    transform(&b, "transform-0")->spec = fspec(&b, "beam:transform:pardo:v1", none());
    ck_assert_int_eq(build(&b, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "transform 'transform-0': payload is not a ParDoPayload with a do_fn"), "%s",
                  err.msg);
    builder_free(&b);
}
END_TEST

/* LIST<LIST<...<INT>>> of levels TypeInfo messages, as protobuf-c structs. */
static pb_TypeInfo *list_ti(builder *b, int levels)
{
    pb_TypeInfo *t = ti(b, 5);
    for (int i = 1; i < levels; i++) {
        pb_TypeInfo *l = ti(b, 18);
        l->type_info_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_COLLECTION_ELEMENT_TYPE;
        l->collection_element_type = t;
        t = l;
    }
    return t;
}

/* The deepest type a coder may carry plans, and its skip program works:
 * ROW<LONG, LONG, T> with T 63 levels deep is 64 TypeInfo levels. */
START_TEST(types_at_the_nesting_limit_plan)
{
    builder b;
    fnw_plan *p = NULL;
    fnw_error err;
    shape_init(&b);
    flink_shape_of(&b, 1, "beam:coder:param_windowed_value:v1", list_ti(&b, FNW_TYPE_MAX_DEPTH - 1));
    ck_assert_msg(build(&b, &p, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(fnw_type_depth(p->input_raw), FNW_TYPE_MAX_DEPTH);
    uint8_t rec[4 * FNW_TYPE_MAX_DEPTH];
    for (int i = 0; i < FNW_TYPE_MAX_DEPTH - 2; i++)
        memcpy(rec + 4 * i, "\0\0\0\1", 4);   /* one element per LIST */
    memcpy(rec + 4 * (FNW_TYPE_MAX_DEPTH - 2), "\0\0\0\7", 4);
    size_t used = 0;
    ck_assert_msg(fnw_skip_program_run(p->input_skip, rec, sizeof rec, &used, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(used, 4 * (FNW_TYPE_MAX_DEPTH - 1));
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

/* A coder TypeInfo 10,000 levels deep: protobuf-c would recurse through
 * all of them; the plan fails naming the coder and the limit instead. */
START_TEST(a_coder_type_nested_10000_deep_fails_cleanly)
{
    builder b;
    fnw_plan *p = NULL;
    fnw_error err;
    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    wire w = wire_new(1 << 20);
    deep_list(&w, 10000);
    wrap(&w, 1);   /* RawType.type_info */
    wrap(&w, 5);   /* CoderInfoDescriptor.raw_type */
    ProtobufCBinaryData payload = { len(&w), (uint8_t *)bytes(&w) };
    coder(&b, "input_coder")->spec = fspec(&b, "flink:coder:v1", payload);
    ck_assert_int_eq(build(&b, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "descriptor '1-2': source 'fn/read/input:0': coder 'input_coder': "
                                  "TypeInfo nests deeper than 64 levels (byte "), "%s", err.msg);
    free(w.buf);
    builder_free(&b);
}
END_TEST

/* The same in a function's key_type_info. */
START_TEST(a_key_type_nested_10000_deep_fails_cleanly)
{
    builder b;
    fnw_plan *p = NULL;
    fnw_error err;
    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    wire w = wire_new(1 << 20);
    deep_list(&w, 10000);
    wrap(&w, 5);             /* UserDefinedDataStreamFunction.key_type_info */
    pb_OperationSpec os = FNWORKER__V1__OPERATION_SPEC__INIT;
    os.operation = "identity";
    ProtobufCBinaryData spec = pack(&b, &os.base);
    front(&w, spec.data, spec.len);
    front_varint(&w, spec.len);
    front_tag(&w, 3, WT_LEN);   /* payload */
    ProtobufCBinaryData udsf = { len(&w), (uint8_t *)bytes(&w) };
    pb_ParDoPayload pd = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__PAR_DO_PAYLOAD__INIT;
    pd.do_fn = fspec(&b, STATELESS, udsf);
    transform(&b, "transform-0")->spec = fspec(&b, "beam:transform:pardo:v1", pack(&b, &pd.base));
    ck_assert_int_eq(build(&b, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "transform 'transform-0': do_fn payload: TypeInfo nests deeper than 64 "
                                  "levels (byte "), "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "of the UserDefinedDataStreamFunction)"), "%s", err.msg);
    free(w.buf);
    builder_free(&b);
}
END_TEST

/* The same in the OperationSpec's output_type, inside the function payload. */
START_TEST(an_output_type_nested_10000_deep_fails_cleanly)
{
    builder b;
    fnw_plan *p = NULL;
    fnw_error err;
    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    wire w = wire_new(1 << 20);
    deep_list(&w, 10000);
    wrap(&w, 11);               /* OperationSpec.output_type */
    front(&w, "echo", 4);
    front_varint(&w, 4);
    front_tag(&w, 1, WT_LEN);   /* OperationSpec.operation */
    wrap(&w, 3);                /* UserDefinedDataStreamFunction.payload */
    ProtobufCBinaryData udsf = { len(&w), (uint8_t *)bytes(&w) };
    pb_ParDoPayload pd = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__PAR_DO_PAYLOAD__INIT;
    pd.do_fn = fspec(&b, STATELESS, udsf);
    transform(&b, "transform-0")->spec = fspec(&b, "beam:transform:pardo:v1", pack(&b, &pd.base));
    ck_assert_int_eq(build(&b, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "transform 'transform-0': OperationSpec: TypeInfo nests deeper than 64 "
                                  "levels (byte "), "%s", err.msg);
    free(w.buf);
    builder_free(&b);
}
END_TEST

/* ROW<f0 PICKLED_BYTES, f1 ROW<f0 STRING, f1 INT>>, the rows PyFlink's key_by
 * makes, in; the value type out. */
static void keyed_shape(builder *b, int nfuncs)
{
    shape_init(b);
    pb_TypeInfo *fields[2] = {ti(b, 20), str_int(b)};
    shape_typed(b, nfuncs, WIRE, row_ti(b, 2, fields), str_int(b));
}

START_TEST(input_field_types_the_chain_from_the_field)
{
    builder b;
    keyed_shape(&b, 2);
    pb_OperationSpec echo = op_spec("echo");
    echo.input_field = "f1";
    set_fn(&b, "transform-0", FT_PROCESS, &echo);
    fnw_plan *p = NULL;
    fnw_error err;
    ck_assert_msg(build(&b, &p, &err) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(p->input_field);
    ck_assert_ptr_eq(fnw_ser_field_type(p->input_field), p->input_type->children[1]);
    ck_assert_ptr_eq(p->steps[0].input_type, p->input_type->children[1]);
    ck_assert(fnw_type_equal(p->steps[0].output_type, p->output_type));
    ck_assert_str_eq(p->steps[0].input_field, "f1");
    fnw_plan_free(p);

    /* without input_field, echo would have to output the whole Row(key, value) */
    echo.input_field = "";
    set_fn(&b, "transform-0", FT_PROCESS, &echo);
    ck_assert_int_eq(build(&b, &p, &err), 0);
    ck_assert_ptr_null(p->input_field);
    ck_assert_ptr_eq(p->steps[0].input_type, p->input_type);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

START_TEST(input_field_the_input_lacks_is_refused)
{
    builder b;
    keyed_shape(&b, 1);
    pb_OperationSpec echo = op_spec("echo");
    echo.input_field = "value";
    set_fn(&b, "transform-0", FT_PROCESS, &echo);
    expect_fail(&b, "descriptor '1-2': transform 'transform-0' (operation 'echo'): its OperationSpec names "
                "input_field 'value', which the operator's input type ROW<f0 PICKLED_BYTES, f1 ROW<f0 STRING, "
                "f1 INT>> does not have", "Row(f0=<key>, f1=<value>)", NULL);
    builder_free(&b);

    /* an input that is not a ROW */
    shape_init(&b);
    shape_typed(&b, 1, WIRE, ti(&b, 5), ti(&b, 5));
    echo.input_field = "f1";
    set_fn(&b, "transform-0", FT_PROCESS, &echo);
    expect_fail(&b, "names input_field 'f1', which the operator's input type INT does not have (it is not a ROW)",
                NULL);
    builder_free(&b);

    /* on a later function of the operator */
    keyed_shape(&b, 2);
    pb_OperationSpec first = op_spec("echo");
    first.input_field = "f1";
    set_fn(&b, "transform-0", FT_PROCESS, &first);
    set_fn(&b, "transform-1", FT_PROCESS, &echo);
    expect_fail(&b, "transform 'transform-1' (operation 'echo'): its OperationSpec names input_field 'f1', but it "
                "is not the first function of its operator (it follows 'transform-0')", NULL);
    builder_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("descriptor");
    tcase_add_test(tc, flink_layout_becomes_a_plan);
    tcase_add_test(tc, real_flinks_empty_output_keys_plan);
    tcase_add_test(tc, unsupported_shapes_say_what);
    tcase_add_test(tc, pickled_payload_points_to_the_readme);
    tcase_add_test(tc, side_output_sinks_are_collected);
    tcase_add_test(tc, pardo_without_do_fn_fails_without_leaking);
    tcase_add_test(tc, types_at_the_nesting_limit_plan);
    tcase_add_test(tc, a_coder_type_nested_10000_deep_fails_cleanly);
    tcase_add_test(tc, a_key_type_nested_10000_deep_fails_cleanly);
    tcase_add_test(tc, an_output_type_nested_10000_deep_fails_cleanly);
    tcase_add_test(tc, mode_selects_batching);
    tcase_add_test(tc, mode_contradictions_and_stray_batch_fields_fail);
    tcase_add_test(tc, chain_types_given_by_the_spec);
    tcase_add_test(tc, last_step_type_must_match_the_sink);
    tcase_add_test(tc, type_changing_step_without_output_type_fails);
    tcase_add_test(tc, bad_output_type_is_named);
    tcase_add_test(tc, input_field_types_the_chain_from_the_field);
    tcase_add_test(tc, input_field_the_input_lacks_is_refused);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
