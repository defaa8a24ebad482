/* tests/unit/pool/test_pool_extpool.c — Beam's BeamFnExternalWorkerPool as the
 * pool serves it (pool/extpool.c), called over real gRPC on loopback with
 * the worker's own unary client, on the same loop and completion queue as
 * the server (the loop's one pump): StartWorker starts a worker with the given
 * id (a second start of the same id, and one without a provision endpoint,
 * answer with an error), StopWorker stops it (an unknown id answers with an
 * error), an unknown method is UNIMPLEMENTED, and after drain StartWorker
 * answers that the pool is shutting down. The stand-in worker sleeps. */
#include <check.h>
#include <ev.h>
#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/children.h"
#include "pool/extpool.h"
#include "tests/unit/check_run.h"
#include "base/handoff.h"
#include "base/pb.h"
#include "base/pump.h"
#include "base/rpc.h"

#define SVC "/org.apache.beam.model.fn_execution.v1.BeamFnExternalWorkerPool/"

static char dir[64], exe[128];
static struct ev_loop *loop;
static fnw_rpc rpc;
static grpc_channel *ch;
static fnw_children *cs;
static fnw_extpool *x;

static int done;
static grpc_status_code status;
static char error[512];

static void on_reply(void *user, grpc_status_code code, const char *details, grpc_slice resp)
{
    Org__Apache__Beam__Model__FnExecution__V1__StopWorkerResponse *r =
        org__apache__beam__model__fn_execution__v1__stop_worker_response__unpack(
            NULL, GRPC_SLICE_LENGTH(resp), GRPC_SLICE_START_PTR(resp));
    status = code;
    snprintf(error, sizeof error, "%s", r && r->error ? r->error : "");
    if (r)
        org__apache__beam__model__fn_execution__v1__stop_worker_response__free_unpacked(r, NULL);
    done = 1;
}

static void call(const char *method, grpc_slice req)
{
    char full[160];
    snprintf(full, sizeof full, SVC "%s", method);
    done = 0;
    ck_assert_int_eq(fnw_rpc_unary(&rpc, ch, full, req, 10, 1, on_reply, NULL, NULL), 0);
    while (!done)
        ev_run(loop, EVRUN_ONCE);
}

static void start_worker(const char *id, const char *ep)
{
    Org__Apache__Beam__Model__Pipeline__V1__ApiServiceDescriptor d =
        ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    Org__Apache__Beam__Model__FnExecution__V1__StartWorkerRequest r =
        ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__START_WORKER_REQUEST__INIT;
    r.worker_id = (char *)id;
    d.url = (char *)ep;
    r.provision_endpoint = ep ? &d : NULL;
    size_t n = org__apache__beam__model__fn_execution__v1__start_worker_request__get_packed_size(&r);
    grpc_slice s = grpc_slice_malloc(n);
    org__apache__beam__model__fn_execution__v1__start_worker_request__pack(&r, GRPC_SLICE_START_PTR(s));
    call("StartWorker", s);
}

static void stop_worker(const char *id)
{
    Org__Apache__Beam__Model__FnExecution__V1__StopWorkerRequest r =
        ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__STOP_WORKER_REQUEST__INIT;
    r.worker_id = (char *)id;
    size_t n = org__apache__beam__model__fn_execution__v1__stop_worker_request__get_packed_size(&r);
    grpc_slice s = grpc_slice_malloc(n);
    org__apache__beam__model__fn_execution__v1__stop_worker_request__pack(&r, GRPC_SLICE_START_PTR(s));
    call("StopWorker", s);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/fnw-extpool-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(exe, sizeof exe, "%s/worker", dir);
    FILE *f = fopen(exe, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\nexec sleep 30\n", f);
    fclose(f);
    chmod(exe, 0755);
    grpc_init();
    loop = ev_default_loop(0);
    cs = fnw_children_new(loop, exe, 4, 0);
    fnw_error err = {{0}};
    char bound[300];
    x = fnw_extpool_new(loop, cs, "127.0.0.1:0", bound, sizeof bound, &err);
    ck_assert_msg(x != NULL, "%s", err.msg);
    fnw_pump *pump = fnw_pump_of(loop);     /* the server's too: client and server share the loop's queue */
    ck_assert_ptr_nonnull(pump);
    fnw_rpc_init(&rpc, fnw_pump_cq(pump), "worker_id", "test", NULL);
    ch = fnw_rpc_channel(bound);
}

static void teardown(void)
{
    grpc_channel_destroy(ch);
    while (fnw_rpc_live_calls(&rpc) > 0)
        ev_run(loop, EVRUN_ONCE);
    fnw_rpc_free(&rpc);
    fnw_extpool_free(x);
    fnw_children_free(cs);
    fnw_handoff_loop_free(loop);
    grpc_shutdown();
    unlink(exe);
    rmdir(dir);
}

START_TEST(start_and_stop)
{
    start_worker("w1", "localhost:4000");
    ck_assert_int_eq(status, GRPC_STATUS_OK);
    ck_assert_str_eq(error, "");
    fnw_child *c = fnw_children_find(cs, "w1");
    ck_assert_ptr_nonnull(c);
    start_worker("w1", "localhost:4000");
    ck_assert_str_eq(error, "a worker with id 'w1' is already running");
    start_worker("w2", NULL);
    ck_assert_str_eq(error, "StartWorkerRequest for worker 'w2' without provision_endpoint");
    stop_worker("w1");
    ck_assert_int_eq(status, GRPC_STATUS_OK);
    ck_assert_str_eq(error, "");
    while (fnw_children_get_stats(cs).exited < 1)
        ev_run(loop, EVRUN_ONCE);
    ck_assert_ptr_null(fnw_children_find(cs, "w1"));
    stop_worker("w1");
    ck_assert_str_eq(error, "no worker 'w1' is running");
}
END_TEST

START_TEST(unknown_method_and_drain)
{
    call("Nope", grpc_empty_slice());
    ck_assert_int_eq(status, GRPC_STATUS_UNIMPLEMENTED);
    fnw_extpool_drain(x);
    start_worker("w3", "localhost:4000");
    ck_assert_str_eq(error, "the fnworker pool is shutting down");
    ck_assert_uint_eq(fnw_children_get_stats(cs).started, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool_extpool");
    TCase *tc = tcase_create("extpool");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, start_and_stop);
    tcase_add_test(tc, unknown_method_and_drain);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
