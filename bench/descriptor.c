/* bench/descriptor.c — builds the Flink-shaped descriptor (see
 * descriptor.h). Field numbers are those of beam_runner_api.proto,
 * beam_fn_api.proto, flink-fn-execution.proto and operation.proto. */
#include "bench/descriptor.h"

#include <stdio.h>
#include <string.h>

#include "bench/pbwire.h"

#define URN_PARDO "beam:transform:pardo:v1"
#define URN_STATELESS "flink:transform:ds:stateless_function:v1"
#define URN_FLINK_CODER "flink:coder:v1"
#define TYPE_ROW 0
#define TYPE_STRING 1
#define TYPE_INT 5
#define TYPE_LONG 6
#define TYPE_FLOAT 7
#define TYPE_PRIMITIVE_ARRAY 16
#define FN_PROCESS 0
#define FN_REVISE_OUTPUT 100
#define MODE_BATCH 2            /* OperationSpec.Mode BATCH */

/* The param-windowed-value coders' payload: an encoded empty value at Beam's
 * minimum timestamp in the global window (one window, pane 0x0f). */
static const uint8_t param_wv_payload[] = {0x7f, 0xdf, 0x3b, 0x64, 0x5a, 0x1c, 0xac, 0x09,
                                           0x00, 0x00, 0x00, 0x01, 0x0f, 0x00};

void bench_op_set(bench_op *op, const char *key, const char *val)
{
    for (int i = 0; i < op->n_opts; i++)
        if (!strcmp(op->opt_key[i], key)) {
            op->opt_val[i] = val;
            return;
        }
    if (op->n_opts < BENCH_MAX_OPTS) {
        op->opt_key[op->n_opts] = key;
        op->opt_val[op->n_opts++] = val;
    }
}

/* ---- Flink types ---------------------------------------------------------------- */

static int type_simple(fnw_buf *b, int name)
{
    return name ? bench_pb_varint(b, 1, (uint64_t)name) : 0;
}

/* ROW of the given (already encoded) field types, named f0, f1, ... */
static int type_row(fnw_buf *out, const fnw_buf *fields, int n)
{
    fnw_buf rti;
    fnw_buf_init(&rti, 0);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        fnw_buf f;
        char name[8] = {'f', (char)('0' + i), 0};
        fnw_buf_init(&f, 0);
        rc |= bench_pb_str(&f, 1, name) | bench_pb_sub(&f, 2, &fields[i]) | bench_pb_sub(&rti, 1, &f);
        fnw_buf_free(&f);
    }
    rc |= type_simple(out, TYPE_ROW) | bench_pb_sub(out, 3, &rti);
    fnw_buf_free(&rti);
    return rc;
}

/* The data row: ROW<f0 STRING, f1 INT>, or with features
 * ROW<f0 LONG, f1 PRIMITIVE_ARRAY<FLOAT>>. */
static int type_data_row(fnw_buf *out, int features)
{
    fnw_buf fields[2], elem;
    for (int i = 0; i < 2; i++)
        fnw_buf_init(&fields[i], 0);
    fnw_buf_init(&elem, 0);
    int rc;
    if (features)
        rc = type_simple(&fields[0], TYPE_LONG) | type_simple(&elem, TYPE_FLOAT) |
             type_simple(&fields[1], TYPE_PRIMITIVE_ARRAY) | bench_pb_sub(&fields[1], 2, &elem);
    else
        rc = type_simple(&fields[0], TYPE_STRING) | type_simple(&fields[1], TYPE_INT);
    rc |= type_row(out, fields, 2);
    for (int i = 0; i < 2; i++)
        fnw_buf_free(&fields[i]);
    fnw_buf_free(&elem);
    return rc;
}

/* raw type ROW(LONG ts[, LONG wm], data row) */
static int type_runner_row(fnw_buf *out, int with_watermark, int features)
{
    fnw_buf outer[3];
    int rc = 0;
    for (int i = 0; i < 3; i++)
        fnw_buf_init(&outer[i], 0);
    int n = 0;
    rc |= type_simple(&outer[n++], TYPE_LONG);
    if (with_watermark)
        rc |= type_simple(&outer[n++], TYPE_LONG);
    rc |= type_data_row(&outer[n++], features);
    rc |= type_row(out, outer, n);
    for (int i = 0; i < 3; i++)
        fnw_buf_free(&outer[i]);
    return rc;
}

/* ---- pieces -------------------------------------------------------------------------- */

static int function_spec(fnw_buf *out, const char *urn, const fnw_buf *payload)
{
    int rc = bench_pb_str(out, 1, urn);
    if (payload && payload->len)
        rc |= bench_pb_sub(out, 3, payload);
    return rc;
}

/* Coder{spec{urn, payload}, component_coder_ids} as a map entry of coders. */
static int add_coder(fnw_buf *d, const char *id, const char *urn, const void *payload, size_t plen,
                     const char *comp0, const char *comp1)
{
    fnw_buf spec, coder, pl;
    fnw_buf_init(&spec, 0);
    fnw_buf_init(&coder, 0);
    fnw_buf_init(&pl, 0);
    int rc = fnw_buf_append(&pl, payload, plen) | function_spec(&spec, urn, &pl) |
             bench_pb_sub(&coder, 1, &spec);
    if (comp0)
        rc |= bench_pb_str(&coder, 2, comp0);
    if (comp1)
        rc |= bench_pb_str(&coder, 2, comp1);
    rc |= bench_pb_map_entry(d, 5, id, coder.p, coder.len);
    fnw_buf_free(&spec);
    fnw_buf_free(&coder);
    fnw_buf_free(&pl);
    return rc;
}

static int add_flink_coder(fnw_buf *d, const char *id, int input_side, int features)
{
    fnw_buf ti, raw, cid;
    fnw_buf_init(&ti, 0);
    fnw_buf_init(&raw, 0);
    fnw_buf_init(&cid, 0);
    int rc = type_runner_row(&ti, input_side, features) | bench_pb_sub(&raw, 1, &ti) |
             bench_pb_sub(&cid, 5, &raw) | bench_pb_varint(&cid, 6, 1 /* MULTIPLE */);
    rc |= add_coder(d, id, URN_FLINK_CODER, cid.p, cid.len, NULL, NULL);
    fnw_buf_free(&ti);
    fnw_buf_free(&raw);
    fnw_buf_free(&cid);
    return rc;
}

static int add_pcollection(fnw_buf *d, const char *id, const char *coder)
{
    fnw_buf pc;
    fnw_buf_init(&pc, 0);
    int rc = bench_pb_str(&pc, 1, id) | bench_pb_str(&pc, 2, coder) |
             bench_pb_str(&pc, 4, "windowing_strategy") | bench_pb_map_entry(d, 3, id, pc.p, pc.len);
    fnw_buf_free(&pc);
    return rc;
}

/* PTransform{spec, inputs{in_name: in}, outputs{out_name: out}} */
static int add_transform(fnw_buf *d, const char *id, const fnw_buf *spec, const char *in_name,
                         const char *in, const char *out_name, const char *out)
{
    fnw_buf t;
    fnw_buf_init(&t, 0);
    int rc = bench_pb_sub(&t, 1, spec);
    if (in)
        rc |= bench_pb_map_entry(&t, 3, in_name, in, strlen(in));
    if (out)
        rc |= bench_pb_map_entry(&t, 4, out_name, out, strlen(out));
    rc |= bench_pb_map_entry(d, 2, id, t.p, t.len);
    fnw_buf_free(&t);
    return rc;
}

static int grpc_port_spec(fnw_buf *spec, const char *urn, const char *url, const char *coder)
{
    fnw_buf api, port;
    fnw_buf_init(&api, 0);
    fnw_buf_init(&port, 0);
    int rc = bench_pb_str(&api, 1, url) | bench_pb_sub(&port, 1, &api) | bench_pb_str(&port, 2, coder) |
             function_spec(spec, urn, &port);
    fnw_buf_free(&api);
    fnw_buf_free(&port);
    return rc;
}

static int operation_spec(fnw_buf *out, const bench_op *op)
{
    int rc = bench_pb_str(out, 1, op->operation);
    for (int i = 0; i < op->n_opts; i++)
        rc |= bench_pb_map_entry(out, 2, op->opt_key[i], op->opt_val[i], strlen(op->opt_val[i]));
    if (op->unordered)
        rc |= bench_pb_varint(out, 3, 1);
    if (op->capacity)
        rc |= bench_pb_varint(out, 4, (uint64_t)op->capacity);
    if (op->timeout_ms)
        rc |= bench_pb_varint(out, 5, (uint64_t)op->timeout_ms);
    if (op->batch_size)
        rc |= bench_pb_varint(out, 6, (uint64_t)op->batch_size);
    if (op->batch_timeout_ms)
        rc |= bench_pb_varint(out, 7, (uint64_t)op->batch_timeout_ms);
    if (op->target_latency_ms)
        rc |= bench_pb_varint(out, 21, (uint64_t)op->target_latency_ms);
    if (op->retry_kind) {
        fnw_buf retry;
        fnw_buf_init(&retry, 0);
        rc |= bench_pb_varint(&retry, 1, (uint64_t)op->retry_kind) |
              bench_pb_varint(&retry, 2, (uint64_t)op->retry_max_attempts) |
              bench_pb_varint(&retry, 3, (uint64_t)op->retry_delay_ms) |
              bench_pb_varint(&retry, 6, (uint64_t)op->retry_on_error) |
              bench_pb_varint(&retry, 7, (uint64_t)op->retry_on_empty) | bench_pb_sub(out, 8, &retry);
        fnw_buf_free(&retry);
    }
    if (op->on_timeout)
        rc |= bench_pb_varint(out, 9, (uint64_t)op->on_timeout);
    if (op->batched)
        rc |= bench_pb_varint(out, 10, MODE_BATCH);
    if (op->adaptive_off) {
        fnw_buf c;
        fnw_buf_init(&c, 0);
        rc |= bench_pb_varint(&c, 1, 1) | bench_pb_sub(out, 17, &c);
        fnw_buf_free(&c);
    }
    if (op->breaker_failures) {
        fnw_buf b;
        fnw_buf_init(&b, 0);
        rc |= bench_pb_varint(&b, 1, (uint64_t)op->breaker_failures) |
              bench_pb_varint(&b, 4, (uint64_t)op->breaker_cooldown_ms) | bench_pb_sub(out, 18, &b);
        fnw_buf_free(&b);
    }
    if (op->on_failure)
        rc |= bench_pb_varint(out, 19, (uint64_t)op->on_failure);
    if (op->fallback_json)
        rc |= bench_pb_str(out, 20, op->fallback_json);
    return rc;
}

/* ParDo spec whose do_fn carries UserDefinedDataStreamFunction{type, payload}. */
static int pardo_spec(fnw_buf *spec, int function_type, const fnw_buf *payload)
{
    fnw_buf udf, dofn, pardo;
    fnw_buf_init(&udf, 0);
    fnw_buf_init(&dofn, 0);
    fnw_buf_init(&pardo, 0);
    int rc = 0;
    if (function_type)
        rc |= bench_pb_varint(&udf, 1, (uint64_t)function_type);
    if (payload)
        rc |= bench_pb_sub(&udf, 3, payload) | bench_pb_varint(&udf, 4, 1 /* metric_enabled */);
    rc |= function_spec(&dofn, URN_STATELESS, &udf) | bench_pb_sub(&pardo, 1, &dofn) |
          function_spec(spec, URN_PARDO, &pardo);
    fnw_buf_free(&udf);
    fnw_buf_free(&dofn);
    fnw_buf_free(&pardo);
    return rc;
}

#define BENCH_MAX_STEPS 8

static int add_transforms(fnw_buf *d, const char *url, const bench_op *op)
{
    fnw_buf src, sink, rev;
    fnw_buf_init(&src, 0);
    fnw_buf_init(&sink, 0);
    fnw_buf_init(&rev, 0);
    int rc = grpc_port_spec(&src, "beam:runner:source:v1", url, "fn/wire/input:0-length_prefix0") |
             grpc_port_spec(&sink, "beam:runner:sink:v1", url, "fn/wire/output:0-length_prefix0") |
             pardo_spec(&rev, FN_REVISE_OUTPUT, NULL);
    rc |= add_transform(d, BENCH_SOURCE_ID, &src, NULL, NULL, "local_output", "input");
    char in[32] = "input", out[32] = "collection-0", id[32];
    int i = 0;
    for (const bench_op *o = op; o && i < BENCH_MAX_STEPS; o = o->then, i++) {
        fnw_buf fn, ops;
        fnw_buf_init(&fn, 0);
        fnw_buf_init(&ops, 0);
        snprintf(id, sizeof id, "transform-%d", i);
        snprintf(out, sizeof out, "collection-%d", i);
        rc |= operation_spec(&ops, o) | pardo_spec(&fn, FN_PROCESS, &ops) |
              add_transform(d, id, &fn, "input", in, "output", out);
        snprintf(in, sizeof in, "%s", out);
        fnw_buf_free(&fn);
        fnw_buf_free(&ops);
    }
    rc |= add_transform(d, "transform-revise", &rev, "input", out, "output", "output");
    rc |= add_transform(d, BENCH_SINK_ID, &sink, "local_input", "output", NULL, NULL);
    fnw_buf_free(&src);
    fnw_buf_free(&sink);
    fnw_buf_free(&rev);
    return rc;
}

static int add_coders(fnw_buf *d, int features)
{
    int rc = add_flink_coder(d, "input_coder", 1, features) | add_flink_coder(d, "output_coder", 0, features) |
             add_flink_coder(d, "coder-0", 1, features);
    rc |= add_coder(d, "window_coder", "beam:coder:global_window:v1", NULL, 0, NULL, NULL);
    rc |= add_coder(d, "input_coder-length_prefix0", "beam:coder:length_prefix:v1", NULL, 0,
                    "input_coder", NULL);
    rc |= add_coder(d, "output_coder-length_prefix0", "beam:coder:length_prefix:v1", NULL, 0,
                    "output_coder", NULL);
    rc |= add_coder(d, "fn/wire/input:0-length_prefix0", "beam:coder:param_windowed_value:v1",
                    param_wv_payload, sizeof param_wv_payload, "input_coder-length_prefix0",
                    "window_coder");
    rc |= add_coder(d, "fn/wire/output:0-length_prefix0", "beam:coder:param_windowed_value:v1",
                    param_wv_payload, sizeof param_wv_payload, "output_coder-length_prefix0",
                    "window_coder");
    rc |= add_coder(d, "byte_array0", "beam:coder:bytes:v1", NULL, 0, NULL, NULL);
    rc |= add_coder(d, "length_prefix_byte_array0", "beam:coder:length_prefix:v1", NULL, 0,
                    "byte_array0", NULL);
    return rc;
}

int bench_descriptor_build(fnw_buf *out, const char *id, const char *data_url, const bench_op *op)
{
    fnw_buf ws, api;
    fnw_buf_init(&ws, 0);
    fnw_buf_init(&api, 0);
    int rc = bench_pb_str(out, 1, id) | add_transforms(out, data_url, op);
    rc |= add_pcollection(out, "input", "input_coder-length_prefix0") |
          add_pcollection(out, "output", "output_coder");
    int i = 0;
    for (const bench_op *o = op; o && i < BENCH_MAX_STEPS; o = o->then, i++) {
        char pc[32];
        snprintf(pc, sizeof pc, "collection-%d", i);
        rc |= add_pcollection(out, pc, "coder-0");
    }
    rc |= bench_pb_str(&ws, 3, "window_coder") | bench_pb_map_entry(out, 4, "windowing_strategy", ws.p, ws.len);
    rc |= add_coders(out, op->features > 0);
    rc |= bench_pb_str(&api, 1, data_url) | bench_pb_sub(out, 7, &api);
    fnw_buf_free(&ws);
    fnw_buf_free(&api);
    return rc;
}
