/* tests/unit/worker/test_relay_route.c — which descriptors fnworker runs,
 * which it relays to PyFlink's Python worker, which it refuses, and the
 * relayed copy's endpoints; Table operators (scalar and table functions,
 * nested calls included) by their functions: all fnworker, all Python,
 * or both (refused naming the transform). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_run.h"
#include "tests/unit/descriptor_build.h"
#include "tests/unit/table_build.h"
#include "worker/relay_route.h"

#define STATEFUL "flink:transform:ds:stateful_function:v1"

/* A cloudpickle of a plain Python function: a pickle that is not fnworker's. */
static const uint8_t PY_PICKLE[] = { 0x80, 0x05, 0x95, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x8c, 0x08, '_', '_', 'm',
                                     'a',  'i',  'n',  '_',  0x94, 0x8c, 0x03, 'f', 'o', 'o', 0x94, 0x93, 0x94, '.' };

/* Transform id runs a Python function (do_fn urn, function type). */
static void set_python(builder *b, const char *id, const char *urn, int function_type)
{
    pb_UDSF f = ORG__APACHE__FLINK__FN_EXECUTION__V1__USER_DEFINED_DATA_STREAM_FUNCTION__INIT;
    f.function_type = function_type;
    f.payload.data = (uint8_t *)PY_PICKLE;
    f.payload.len = sizeof PY_PICKLE;
    pb_ParDoPayload pd = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__PAR_DO_PAYLOAD__INIT;
    pd.do_fn = fspec(b, urn, pack(b, &f.base));
    transform(b, id)->spec = fspec(b, "beam:transform:pardo:v1", pack(b, &pd.base));
}

static fnw_route route_of(builder *b, fnw_error *err)
{
    err->msg[0] = '\0';
    return fnw_relay_route_classify(&b->d, err);
}

START_TEST(fnworker_operations_only_run_natively)
{
    builder b;
    flink_shape(&b, 2, "beam:coder:param_windowed_value:v1");
    fnw_error err;
    ck_assert_int_eq(route_of(&b, &err), FNW_ROUTE_NATIVE);
    builder_free(&b);
}
END_TEST

START_TEST(python_functions_only_are_relayed)
{
    builder b;
    flink_shape(&b, 2, "beam:coder:param_windowed_value:v1");
    set_python(&b, "transform-0", STATELESS, 0);
    set_python(&b, "transform-1", STATELESS, 0);
    fnw_error err;
    ck_assert_int_eq(route_of(&b, &err), FNW_ROUTE_RELAYED);
    builder_free(&b);
}
END_TEST

START_TEST(a_keyed_function_is_relayed)
{
    builder b;
    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    set_python(&b, "transform-0", STATEFUL, 2);
    fnw_error err;
    ck_assert_int_eq(route_of(&b, &err), FNW_ROUTE_RELAYED);
    builder_free(&b);
}
END_TEST

START_TEST(a_mix_is_refused_naming_both)
{
    builder b;
    flink_shape(&b, 2, "beam:coder:param_windowed_value:v1");
    set_python(&b, "transform-1", STATELESS, 0);
    fnw_error err;
    ck_assert_int_eq(route_of(&b, &err), FNW_ROUTE_MIXED);
    ck_assert_msg(strstr(err.msg, "'transform-0'") && strstr(err.msg, "'transform-1'"), "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "PythonOperatorChainingOptimizer") && strstr(err.msg, "start_new_chain"), "%s",
                  err.msg);
    builder_free(&b);
}
END_TEST

/* ---- Table operators ------------------------------------------------------------ */

/* A Python function of the Table API: its payload a cloudpickle. */
static pb_UDF *python_udf(builder *b, int n, pb_UDFInput **inputs)
{
    pb_OperationSpec os = tspec("identity");
    pb_UDF *u = tudf(b, &os, n, inputs);
    u->payload.data = (uint8_t *)PY_PICKLE;
    u->payload.len = sizeof PY_PICKLE;
    return u;
}

static void table_of(builder *b, const char *urn, int n, pb_UDF **u)
{
    static const char *const names[] = { "a", "b" };
    static const int types[] = { STN(INT), STN(INT) };
    table_shape(b, urn, tschema(b, 2, names, types), tschema(b, n, names, types), tudfs(b, n, u));
}

START_TEST(table_fnworker_functions_run_natively)
{
    static const char *const urns[] = { URN_SCALAR, URN_ASYNC_SCALAR, URN_TABLE_FN };
    for (int k = 0; k < 3; k++) {
        builder b;
        shape_init(&b);
        pb_OperationSpec echo = tspec("echo");
        pb_UDF *g = tudf1(&b, &echo, in_offset(&b, 0));
        pb_UDF *u[2] = { tudf1(&b, &echo, in_udf(&b, g)), tudf1(&b, &echo, in_offset(&b, 1)) };
        table_of(&b, urns[k], k == 2 ? 1 : 2, u);
        fnw_error err;
        ck_assert_msg(route_of(&b, &err) == FNW_ROUTE_NATIVE, "%s: %s", urns[k], err.msg);
        builder_free(&b);
    }
}
END_TEST

START_TEST(table_python_functions_are_relayed)
{
    static const char *const urns[] = { URN_SCALAR, URN_ASYNC_SCALAR, URN_TABLE_FN };
    for (int k = 0; k < 3; k++) {
        builder b;
        shape_init(&b);
        pb_UDFInput *a = in_offset(&b, 0);
        pb_UDFInput *nested = in_udf(&b, python_udf(&b, 1, &a));
        pb_UDF *u[2] = { python_udf(&b, 1, &nested), python_udf(&b, 1, &a) };
        table_of(&b, urns[k], k == 2 ? 1 : 2, u);
        fnw_error err;
        ck_assert_msg(route_of(&b, &err) == FNW_ROUTE_RELAYED, "%s: %s", urns[k], err.msg);
        builder_free(&b);
    }
}
END_TEST

/* A Python column beside a fnworker one, or a fnworker function calling a
 * Python one for its argument: refused naming the transform. */
START_TEST(table_python_and_fnworker_together_are_refused)
{
    for (int k = 0; k < 2; k++) {
        builder b;
        shape_init(&b);
        pb_OperationSpec echo = tspec("echo");
        pb_UDFInput *a = in_offset(&b, 0);
        pb_UDF *u[2];
        if (k == 0) {
            u[0] = tudf1(&b, &echo, a);
            u[1] = python_udf(&b, 1, &a);
        } else {
            u[0] = tudf1(&b, &echo, in_udf(&b, python_udf(&b, 1, &a)));
            u[1] = tudf1(&b, &echo, a);
        }
        table_of(&b, URN_SCALAR, 2, u);
        fnw_error err;
        ck_assert_int_eq(route_of(&b, &err), FNW_ROUTE_MIXED);
        ck_assert_msg(strstr(err.msg, "descriptor '1-2'") && strstr(err.msg, "transform 'transform'") &&
                          strstr(err.msg, "both fnworker functions and Python functions"),
                      "%s", err.msg);
        builder_free(&b);
    }
}
END_TEST

static pb_ProcessBundleDescriptor *unpack_slice(grpc_slice s)
{
    return PB(process_bundle_descriptor__unpack)(NULL, GRPC_SLICE_LENGTH(s), GRPC_SLICE_START_PTR(s));
}

static const char *port_url(const pb_ProcessBundleDescriptor *d, const char *id, char *buf, size_t cap)
{
    for (size_t i = 0; i < d->n_transforms; i++) {
        if (strcmp(d->transforms[i]->key, id))
            continue;
        const pb_FunctionSpec *sp = d->transforms[i]->value->spec;
        pb_RemoteGrpcPort *p = PB(remote_grpc_port__unpack)(NULL, sp->payload.len, sp->payload.data);
        ck_assert_ptr_nonnull(p);
        snprintf(buf, cap, "%s|%s", p->api_service_descriptor->url, p->coder_id);
        PB(remote_grpc_port__free_unpacked)(p, NULL);
        return buf;
    }
    return "";
}

/* Input and timers come through the relay; output and state go to Flink
 * directly (Flink's Data service takes a second client's Elements as the
 * first's, its State service answers any client by instruction id). */
START_TEST(the_relayed_copy_points_input_and_timers_at_the_relay_and_keeps_output_and_state)
{
    builder b;
    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    set_python(&b, "transform-0", STATEFUL, 2);
    pb_ApiServiceDescriptor state = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    pb_ApiServiceDescriptor timer = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    state.url = "localhost:5555";
    timer.url = "localhost:7777";
    b.d.state_api_service_descriptor = &state;
    b.d.timer_api_service_descriptor = &timer;
    grpc_slice out;
    fnw_error err;
    ck_assert_int_eq(fnw_relay_route_rewrite(&b.d, "127.0.0.1:4242", &out, &err), 0);
    pb_ProcessBundleDescriptor *d = unpack_slice(out);
    ck_assert_ptr_nonnull(d);
    char buf[256];
    ck_assert_str_eq(port_url(d, "fn/read/input:0", buf, sizeof buf), "127.0.0.1:4242|fn/wire/input:0-length_prefix0");
    ck_assert_str_eq(port_url(d, "fn/write/output:0", buf, sizeof buf),
                     "localhost:7777|fn/wire/output:0-length_prefix0");
    ck_assert_str_eq(d->timer_api_service_descriptor->url, "127.0.0.1:4242");
    ck_assert_str_eq(d->state_api_service_descriptor->url, "localhost:5555");
    ck_assert_str_eq(d->id, b.d.id);
    ck_assert_uint_eq(d->n_transforms, b.d.n_transforms);
    ck_assert_uint_eq(d->n_coders, b.d.n_coders);
    /* the function itself is byte for byte Flink's */
    ck_assert_int_eq(fnw_relay_route_classify(d, &err), FNW_ROUTE_RELAYED);
    PB(process_bundle_descriptor__free_unpacked)(d, NULL);
    grpc_slice_unref(out);
    builder_free(&b);
}
END_TEST

/* Fields this worker's proto subset does not name (PyFlink's worker reads
 * them) survive the copy. */
START_TEST(fields_the_worker_does_not_know_survive_the_copy)
{
    builder b;
    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    set_python(&b, "transform-0", STATELESS, 0);
    grpc_slice out;
    fnw_error err;
    /* a descriptor with an extra top-level field 99 (bytes "zz") */
    size_t n = PB(process_bundle_descriptor__get_packed_size)(&b.d);
    uint8_t *p = malloc(n + 5);
    PB(process_bundle_descriptor__pack)(&b.d, p);
    memcpy(p + n, "\x9a\x06\x02zz", 5);
    pb_ProcessBundleDescriptor *withx = PB(process_bundle_descriptor__unpack)(NULL, n + 5, p);
    ck_assert_ptr_nonnull(withx);
    ck_assert_int_eq(fnw_relay_route_rewrite(withx, "127.0.0.1:1", &out, &err), 0);
    const uint8_t *o = GRPC_SLICE_START_PTR(out);
    size_t on = GRPC_SLICE_LENGTH(out);
    ck_assert_int_ge(on, 5);
    ck_assert_msg(memmem(o, on, "\x9a\x06\x02zz", 5) != NULL, "field 99 was lost");
    grpc_slice_unref(out);
    PB(process_bundle_descriptor__free_unpacked)(withx, NULL);
    free(p);
    builder_free(&b);
}
END_TEST

/* An endpoint without a url (protobuf-c's static empty string, never
 * malloc'd) is given the relay's url too: freeing the old one once crashed
 * (fuzz_plan, finding-relay-rewrite-*-without-url.bin). */
START_TEST(an_endpoint_without_url_is_pointed_at_the_relay)
{
    builder b;
    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    set_python(&b, "transform-0", STATELESS, 0);
    pb_ApiServiceDescriptor timer = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    b.d.timer_api_service_descriptor = &timer;
    grpc_slice out;
    fnw_error err;
    ck_assert_int_eq(fnw_relay_route_rewrite(&b.d, "127.0.0.1:4242", &out, &err), 0);
    pb_ProcessBundleDescriptor *d = unpack_slice(out);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d->timer_api_service_descriptor->url, "127.0.0.1:4242");
    PB(process_bundle_descriptor__free_unpacked)(d, NULL);
    grpc_slice_unref(out);
    builder_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("relay_route");
    TCase *tc = tcase_create("route");
    tcase_add_test(tc, fnworker_operations_only_run_natively);
    tcase_add_test(tc, python_functions_only_are_relayed);
    tcase_add_test(tc, a_keyed_function_is_relayed);
    tcase_add_test(tc, a_mix_is_refused_naming_both);
    tcase_add_test(tc, the_relayed_copy_points_input_and_timers_at_the_relay_and_keeps_output_and_state);
    tcase_add_test(tc, fields_the_worker_does_not_know_survive_the_copy);
    tcase_add_test(tc, table_fnworker_functions_run_natively);
    tcase_add_test(tc, table_python_functions_are_relayed);
    tcase_add_test(tc, table_python_and_fnworker_together_are_refused);
    tcase_add_test(tc, an_endpoint_without_url_is_pointed_at_the_relay);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
