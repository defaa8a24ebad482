/* tests/unit/ops/test_tensor_kserve.c — the tensor codec against a KServe v2
 * model server over gRPC (tests/servers/kserve_server.py, through a plain
 * blocking client): the plan passes the server's ModelMetadata (and a wrong
 * one fails naming the tensor), requests packed by the codec are accepted
 * and the linear model's results come back exact, BYTES tensors round-trip,
 * typed-contents answers unpack like raw ones, the server refuses a wrong
 * datatype or version as a real one does, an injected UNAVAILABLE is
 * reported as such and passes, and the server's counters (stats.json) see
 * one request of three rows per batch. Skipped (exit 0, one line) when the server's
 * Python packages are missing. */
#include <check.h>
#include <jansson.h>
#include <string.h>
#include <unistd.h>

#include "ops/kserve/tensor/tensor.h"
#include "tests/unit/check_run.h"
#include "tests/unit/kserve_unary.h"
#include "tests/unit/tensor_build.h"
#include "tests/unit/test_servers.h"

static char g_dir[128];
static int g_port;

/* The linear model's weights, as the server has them. */
static const float W[4][2] = { { 1, 2 }, { 0, -1 }, { 0.5f, 0 }, { 3, 1 } };
static const float B[2] = { 0.5f, -1 };

/* ROW<id LONG, f LIST<FLOAT>, text STRING> -> ROW<id LONG, y PRIMITIVE_ARRAY<FLOAT>, n INT> */
static fnw_type *in_type(void)
{
    return R(3, "id", T(FNW_LONG), "f", C(FNW_LIST, T(FNW_FLOAT)), "text", T(FNW_STRING));
}

static fnw_type *out_type(const char *result)
{
    return !strcmp(result, "y") ? R(2, "id", T(FNW_LONG), "y", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT)))
                                : R(2, "id", T(FNW_LONG), "n", T(FNW_INT));
}

#define ROWS 3
static const float X[ROWS][4] = { { 1, 2, 3, 4 }, { -1, 0.5f, 2, 0 }, { 0, 0, 0, 0 } };
static const char *TEXT[ROWS] = { "spam", "", "eggs and ham" };

typedef struct batch {
    fnw_value f[ROWS][3], x[ROWS][4], row[ROWS];
} batch;

static void make_batch(batch *b)
{
    for (int i = 0; i < ROWS; i++) {
        for (int j = 0; j < 4; j++)
            b->x[i][j] = fnw_value_float(X[i][j]);
        b->f[i][0] = fnw_value_int(FNW_LONG, 100 + i);
        b->f[i][1] = fnw_value_items(FNW_LIST, b->x[i], 4);
        b->f[i][2] = fnw_value_str(TEXT[i]);
        b->row[i] = fnw_value_row(FNW_INSERT, b->f[i], 3);
    }
}

/* Packs the batch for model with the plan, calls ModelInfer; the status. */
static int infer(const fnw_tensor_plan *p, const char *model, const char *version, fnw_arena *a,
                 Inference__ModelInferResponse **resp, char *details, size_t dn)
{
    batch b;
    make_batch(&b);
    Inference__ModelInferRequest req = INFERENCE__MODEL_INFER_REQUEST__INIT;
    fnw_error err;
    ck_assert_msg(fnw_tensor_pack(p, b.row, ROWS, a, &req, &err) == 0, "%s", err.msg);
    req.model_name = (char *)model;
    req.model_version = (char *)version;
    grpc_channel *ch = ku_channel(g_port);
    int st = ku_call(ch, "ModelInfer", &req.base, &inference__model_infer_response__descriptor,
                     (ProtobufCMessage **)resp, details, dn);
    ku_channel_free(ch);
    return st;
}

START_TEST(test_metadata_from_server)
{
    fnw_type *in = in_type(), *out = out_type("y");
    fnw_tensor_plan *good = tb_plan(in, out, "x:FP32[4]=f", "y:FP32[2]=y");
    fnw_tensor_plan *bad = tb_plan(in, out, "x:FP32[2,2]=f", "y=y");
    Inference__ModelMetadataRequest req = INFERENCE__MODEL_METADATA_REQUEST__INIT;
    req.name = "linear";
    Inference__ModelMetadataResponse *md;
    char details[256];
    grpc_channel *ch = ku_channel(g_port);
    int st = ku_call(ch, "ModelMetadata", &req.base, &inference__model_metadata_response__descriptor,
                     (ProtobufCMessage **)&md, details, sizeof details);
    ck_assert_msg(st == GRPC_STATUS_OK, "status %d: %s", st, details);
    fnw_error err = { "" };
    ck_assert_msg(fnw_tensor_meta_check(good, md, 64, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(fnw_tensor_meta_check(bad, md, 64, &err), -1);
    ck_assert_str_eq(err.msg, "model 'linear': input tensor 'x' has shape [-1,4], but the option gives one row's "
                              "shape [2,2]: the model's shape must be the batch dimension and then 2 more");
    protobuf_c_message_free_unpacked(&md->base, NULL);
    req.name = "nope";
    st = ku_call(ch, "ModelMetadata", &req.base, &inference__model_metadata_response__descriptor,
                 (ProtobufCMessage **)&md, details, sizeof details);
    ck_assert_int_eq(st, GRPC_STATUS_NOT_FOUND);
    ck_assert_msg(strstr(details, "'nope'"), "%s", details);
    ku_channel_free(ch);
    fnw_tensor_plan_free(good);
    fnw_tensor_plan_free(bad);
    fnw_type_free(in);
    fnw_type_free(out);
}
END_TEST

static void expect_linear(const char *control)
{
    ck_assert_int_eq(srv_cmd("kserve.sh", "inject", g_dir, control, NULL, 0), 0);
    fnw_type *in = in_type(), *out = out_type("y");
    fnw_tensor_plan *p = tb_plan(in, out, "x:FP32[4]=f", "y:FP32[2]=y");
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    Inference__ModelInferResponse *resp;
    char details[256];
    int st = infer(p, "linear", "", &a, &resp, details, sizeof details);
    ck_assert_msg(st == GRPC_STATUS_OK, "status %d: %s", st, details);
    fnw_value vals[ROWS];
    fnw_error err;
    ck_assert_msg(fnw_tensor_unpack(p, resp, ROWS, &a, vals, &err) == 0, "%s", err.msg);
    batch b;
    make_batch(&b);
    for (int i = 0; i < ROWS; i++) {
        fnw_value row;
        ck_assert_msg(fnw_tensor_unpack_row(p, &b.row[i], vals, ROWS, (size_t)i, &a, &row, &err) == 0, "%s",
                      err.msg);
        ck_assert_int_eq(row.u.items[0].u.i, 100 + i);
        ck_assert_uint_eq(row.u.items[1].count, 2);
        for (int o = 0; o < 2; o++) {   /* halves and small integers: exact in FP32 */
            float want = B[o];
            for (int j = 0; j < 4; j++)
                want += X[i][j] * W[j][o];
            ck_assert_msg(row.u.items[1].u.items[o].u.f == want, "row %d output %d: %g, want %g", i, o,
                          (double)row.u.items[1].u.items[o].u.f, (double)want);
        }
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    fnw_arena_free(&a);
    fnw_tensor_plan_free(p);
    fnw_type_free(in);
    fnw_type_free(out);
}

START_TEST(test_linear_raw) { expect_linear("'{}'"); }
END_TEST

START_TEST(test_linear_typed) { expect_linear("'{\"linear\": {\"typed\": true}}'"); }
END_TEST

START_TEST(test_bytes_model)
{
    fnw_type *in = in_type(), *out = out_type("n");
    fnw_tensor_plan *p = tb_plan(in, out, "text=text", "len:INT64=n");
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    Inference__ModelInferResponse *resp;
    char details[256];
    int st = infer(p, "strlen", "1", &a, &resp, details, sizeof details);
    ck_assert_msg(st == GRPC_STATUS_OK, "status %d: %s", st, details);
    fnw_value vals[ROWS];
    fnw_error err;
    ck_assert_msg(fnw_tensor_unpack(p, resp, ROWS, &a, vals, &err) == 0, "%s", err.msg);
    for (int i = 0; i < ROWS; i++)
        ck_assert(vals[i].kind == FNW_INT && vals[i].u.i == (int64_t)strlen(TEXT[i]));
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    fnw_arena_free(&a);
    fnw_tensor_plan_free(p);
    fnw_type_free(in);
    fnw_type_free(out);
}
END_TEST

/* The server's counter for model (stats.json, rewritten within 100 ms of a
 * change): waits until it reaches at least min_requests. */
static json_int_t stat_of(const char *model, const char *key, json_int_t min_requests)
{
    char path[256];
    snprintf(path, sizeof path, "%s/stats.json", g_dir);
    for (int i = 0; i < 300; i++) {   /* a hang guard, not a timing check */
        json_t *j = json_load_file(path, 0, NULL);
        json_t *m = j ? json_object_get(j, model) : NULL;
        if (m && json_integer_value(json_object_get(m, "requests")) >= min_requests) {
            json_int_t v = json_integer_value(json_object_get(m, key));
            json_decref(j);
            return v;
        }
        json_decref(j);
        usleep(20000);
    }
    ck_abort_msg("stats.json never counted %lld requests for %s", (long long)min_requests, model);
    return -1;
}

START_TEST(test_server_counts_batches)
{
    fnw_type *in = in_type(), *out = out_type("n");
    fnw_tensor_plan *p = tb_plan(in, out, "text=text", "len:INT64=n");
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    Inference__ModelInferResponse *resp;
    char details[256];
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(infer(p, "strlen", "", &a, &resp, details, sizeof details), GRPC_STATUS_OK);
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    }
    json_int_t requests = stat_of("strlen", "requests", 2);
    ck_assert_int_ge(requests, 2);
    ck_assert_int_eq(stat_of("strlen", "rows", requests), requests * ROWS);
    ck_assert_int_eq(stat_of("strlen", "max_batch", requests), ROWS);
    fnw_arena_free(&a);
    fnw_tensor_plan_free(p);
    fnw_type_free(in);
    fnw_type_free(out);
}
END_TEST

START_TEST(test_server_refusals_and_unavailable)
{
    fnw_type *in = in_type(), *out = out_type("y");
    fnw_tensor_plan *wrong = tb_plan(in, out, "x:FP64[4]=f", "y=y");
    fnw_tensor_plan *p = tb_plan(in, out, "x:FP32[4]=f", "y=y");
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    Inference__ModelInferResponse *resp;
    char details[256];
    ck_assert_int_eq(infer(wrong, "linear", "", &a, &resp, details, sizeof details), GRPC_STATUS_INVALID_ARGUMENT);
    ck_assert_msg(strstr(details, "'FP64'") && strstr(details, "'FP32'"), "%s", details);
    ck_assert_int_eq(infer(p, "linear", "7", &a, &resp, details, sizeof details), GRPC_STATUS_NOT_FOUND);
    ck_assert_int_eq(srv_cmd("kserve.sh", "inject", g_dir, "'{\"linear\": {\"unavailable\": 1}}'", NULL, 0), 0);
    ck_assert_int_eq(infer(p, "linear", "", &a, &resp, details, sizeof details), GRPC_STATUS_UNAVAILABLE);
    ck_assert_int_eq(infer(p, "linear", "", &a, &resp, details, sizeof details), GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    ck_assert_int_eq(srv_cmd("kserve.sh", "inject", g_dir, "'{}'", NULL, 0), 0);
    fnw_arena_free(&a);
    fnw_tensor_plan_free(wrong);
    fnw_tensor_plan_free(p);
    fnw_type_free(in);
    fnw_type_free(out);
}
END_TEST

int main(void)
{
    static const char *const need[] = { "python3", "protoc", NULL };
    if (!srv_have("test_tensor_kserve", need))
        return 0;
    srv_dir(g_dir, sizeof g_dir, "kserve");
    char out[64], args[64];
    snprintf(args, sizeof args, "--owner %d", (int)getpid());
    int rc = srv_cmd("kserve.sh", "start", g_dir, args, out, sizeof out);
    if (rc == 77) {
        printf("test_tensor_kserve: skipped: python3-grpcio, python3-numpy or python3-protobuf is not installed\n");
        srv_rmdir(g_dir);
        return 0;
    }
    if (rc != 0 || (g_port = atoi(out)) <= 0) {
        fprintf(stderr, "test_tensor_kserve: the KServe test server did not start (%d)\n", rc);
        return 1;
    }
    Suite *s = suite_create("tensor_kserve");
    TCase *tc = tcase_create("server");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_metadata_from_server);
    tcase_add_test(tc, test_linear_raw);
    tcase_add_test(tc, test_linear_typed);
    tcase_add_test(tc, test_bytes_model);
    tcase_add_test(tc, test_server_counts_batches);
    tcase_add_test(tc, test_server_refusals_and_unavailable);
    suite_add_tcase(s, tc);
    int failed = fnw_check_run(s);
    srv_cmd("kserve.sh", "stop", g_dir, NULL, NULL, 0);
    srv_rmdir(g_dir);
    return failed;
}
