/* tests/unit/ops/test_kserve_op.c — the `kserve` operation's open against
 * the KServe v2 test model server (tests/servers/kserve.sh): a mapping the
 * model's metadata confirms opens (and closes again with nothing in
 * flight); a mapping the metadata contradicts, a model or version the server
 * does not have ready, and a server that cannot be reached within
 * connect_timeout_ms each fail the open checks (which run on the loop after
 * open returns) with a message naming the tensor, the model or the endpoint; the metadata check can be turned off; input and
 * output types must be ROWs. The calls themselves run in the integration
 * scenarios (KServeScenarios). Skipped (exit 0, one line) when the server's
 * Python packages are missing. */
#include <check.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/handoff.h"
#include "ops/kserve/kserve_internal.h"
#include "ops/builtins.h"
#include "tests/unit/binding_build.h"
#include "tests/unit/check_run.h"
#include "tests/unit/test_servers.h"

static char g_dir[128], g_target[64];

static struct ev_loop *loop;
static fnw_type *in_t, *out_t;

static void setup(void)
{
    loop = ev_loop_new(EVFLAG_AUTO);
    in_t = R(2, "id", T(FNW_LONG), "features", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT)));
    out_t = R(2, "id", T(FNW_LONG), "scores", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT)));
}

static void teardown(void)
{
    fnw_type_free(in_t);
    fnw_type_free(out_t);
    fnw_handoff_loop_free(loop);
    ev_loop_destroy(loop);
}

/* Opens kserve with kv (NULL-terminated pairs) after the target and model_name given. */
static int try_open(const char *target, const char *model, size_t batch, const char *const *kv, void **state,
                    fnw_error *err)
{
    fnw_option items[32];
    size_t n = 0;
    items[n++] = (fnw_option){ "target", target };
    items[n++] = (fnw_option){ "model_name", model };
    for (size_t i = 0; kv[2 * i]; i++)
        items[n++] = (fnw_option){ kv[2 * i], kv[2 * i + 1] };
    fnw_options o = { n, items };
    fnw_op_env env = { .loop = loop, .options = &o, .input_type = in_t, .output_type = out_t,
                       .transform_id = "t", .batched = batch > 1, .batch_size = batch, .timeout_ms = 5000 };
    *state = NULL;
    if (fnw_op_kserve.open(&env, state, err) != 0)
        return -1;
    /* the checks run on the loop after open: run it until their verdict */
    kserve_op *op = *state;
    while (op->gate == KSERVE_CHECKING)
        ev_run(loop, EVRUN_ONCE);
    if (op->gate != KSERVE_OPEN) {
        fnw_error_set(err, "%s", op->gate_error);
        fnw_op_kserve.close(*state);
        *state = NULL;
        return -1;
    }
    return 0;
}

static const char *const LINEAR[] = { "inputs", "x:FP32[4]=features", "outputs", "y:FP32[2]=scores", NULL };

static void expect_fail(const char *target, const char *model, const char *const *kv, const char *want1,
                        const char *want2)
{
    void *st;
    fnw_error err = { "" };
    ck_assert_int_eq(try_open(target, model, 64, kv, &st, &err), -1);
    ck_assert_ptr_null(st);
    ck_assert_msg(strstr(err.msg, "operation 'kserve'") && strstr(err.msg, want1) && (!want2 || strstr(err.msg, want2)),
                  "'%s' lacks '%s' / '%s'", err.msg, want1, want2 ? want2 : "");
}

START_TEST(test_open_checks_metadata)
{
    void *st;
    fnw_error err = { "" };
    ck_assert_msg(try_open(g_target, "linear", 64, LINEAR, &st, &err) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(st);
    fnw_op_kserve.close(st);
    ck_assert_msg(try_open(g_target, "linear", 1, LINEAR, &st, &err) == 0, "per element: %s", err.msg);
    fnw_op_kserve.close(st);
    /* the option's shape contradicts the model's [-1,4] */
    expect_fail(g_target, "linear", (const char *[]){ "inputs", "x:FP32[2,2]=features", "outputs", "y:FP32[2]=scores",
                                                      NULL },
                "input tensor 'x'", "[2,2]");
    expect_fail(g_target, "linear", (const char *[]){ "inputs", "x:FP32[4]=features", "outputs", "z:FP32[2]=scores",
                                                      NULL },
                "no output tensor 'z'", NULL);
    /* with the check off, the same mapping opens (the server refuses its calls later) */
    const char *off[] = { "inputs", "x:FP32[2,2]=features", "outputs", "y:FP32[2]=scores", "check_metadata", "false",
                          NULL };
    ck_assert_msg(try_open(g_target, "linear", 64, off, &st, &err) == 0, "%s", err.msg);
    fnw_op_kserve.close(st);
}
END_TEST

START_TEST(test_open_model_not_ready)
{
    expect_fail(g_target, "nope", LINEAR, "model 'nope'", "not ready");
    const char *v7[] = { "inputs", "x:FP32[4]=features", "outputs", "y:FP32[2]=scores", "model_version", "7", NULL };
    expect_fail(g_target, "linear", v7, "model 'linear' (version '7')", "not ready");
}
END_TEST

START_TEST(test_open_unreachable)
{
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", srv_closed_port());
    const char *kv[] = { "inputs", "x:FP32[4]=features", "outputs", "y:FP32[2]=scores", "connect_timeout_ms", "200",
                         NULL };
    expect_fail(target, "linear", kv, target, "did not answer ServerReady within 200 ms");
}
END_TEST

START_TEST(test_open_needs_rows)
{
    fnw_type_free(in_t);
    in_t = T(FNW_LONG);
    expect_fail(g_target, "linear", LINEAR, "ROW", NULL);
}
END_TEST

int main(void)
{
    static const char *const need[] = { "python3", "protoc", NULL };
    if (!srv_have("test_kserve_op", need))
        return 0;
    srv_dir(g_dir, sizeof g_dir, "kserve-op");
    char out[64], args[64];
    snprintf(args, sizeof args, "--owner %d", (int)getpid());
    int rc = srv_cmd("kserve.sh", "start", g_dir, args, out, sizeof out);
    if (rc == 77) {
        printf("test_kserve_op: skipped: python3-grpcio, python3-numpy or python3-protobuf is not installed\n");
        srv_rmdir(g_dir);
        return 0;
    }
    if (rc != 0 || atoi(out) <= 0) {
        fprintf(stderr, "test_kserve_op: the KServe test server did not start (%d)\n", rc);
        return 1;
    }
    snprintf(g_target, sizeof g_target, "127.0.0.1:%d", atoi(out));
    Suite *s = suite_create("kserve_op");
    TCase *tc = tcase_create("open");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_open_checks_metadata);
    tcase_add_test(tc, test_open_model_not_ready);
    tcase_add_test(tc, test_open_unreachable);
    tcase_add_test(tc, test_open_needs_rows);
    suite_add_tcase(s, tc);
    int failed = fnw_check_run(s);
    srv_cmd("kserve.sh", "stop", g_dir, NULL, NULL, 0);
    srv_rmdir(g_dir);
    return failed;
}
