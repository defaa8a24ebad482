/* bench/kserve_direct.c — the direct client for the kserve
 * benchmark: sends batches of rows straight to a KServe v2 / Triton gRPC
 * model server with a fixed number of ModelInfer calls in flight (gRPC C
 * core, its own completion queue, one thread), checks every answer with the
 * tensor codec, and prints rows/s. It is the bound the kserve operation is
 * measured against: the same batches (packed by the same codec from the same
 * rows) at the same concurrency, without Flink, the worker or the loop.
 *
 *   kserve_direct --port P [--host H] [--model linear] [--dim 4]
 *                 [--rows 100000] [--batch 64] [--concurrency 4]
 * The model takes x FP32 [-1, dim] and answers y FP32 [-1, *] (the test
 * server's identity, linear (dim 4), linear16 (dim 16) and slow (dim 1)
 * models). Prints one line:
 *   rows=N batches=B seconds=S rows_per_s=R failed=F
 * and exits 1 when any call failed or an answer did not check out.
 */
#include <getopt.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codecs/type.h"
#include "ops/kserve/tensor/tensor.h"

#define MAX_FLIGHT 256

typedef struct flight {
    grpc_call *call;
    grpc_byte_buffer *send, *recv;
    grpc_metadata_array md, trailing;
    grpc_status_code status;
    grpc_slice details;
    size_t rows;
} flight;

typedef struct bench {
    const char *host, *model;
    int port, dim, batch, conc;
    long rows;
    grpc_channel *ch;
    grpc_completion_queue *cq;
    fnw_tensor_plan *plan;
    fnw_type *in, *out;
    grpc_slice full, last;      /* the packed request of a full batch and of the last, shorter one */
    size_t last_rows;
    long sent, done, batches, failed;
    flight f[MAX_FLIGHT];
} bench;

static void usage(void)
{
    fprintf(stderr, "usage: kserve_direct --port P [--host H] [--model M] [--dim D] [--rows N] [--batch B] "
                    "[--concurrency C]\n");
    exit(2);
}

static void parse(bench *b, int argc, char **argv)
{
    static const struct option o[] = { { "port", 1, 0, 'p' }, { "host", 1, 0, 'h' }, { "model", 1, 0, 'm' },
                                       { "dim", 1, 0, 'd' },  { "rows", 1, 0, 'r' },  { "batch", 1, 0, 'b' },
                                       { "concurrency", 1, 0, 'c' }, { 0, 0, 0, 0 } };
    *b = (bench){ .host = "127.0.0.1", .model = "linear", .dim = 4, .batch = 64, .conc = 4, .rows = 100000 };
    int c;
    while ((c = getopt_long(argc, argv, "", o, NULL)) != -1) {
        switch (c) {
        case 'p': b->port = atoi(optarg); break;
        case 'h': b->host = optarg; break;
        case 'm': b->model = optarg; break;
        case 'd': b->dim = atoi(optarg); break;
        case 'r': b->rows = atol(optarg); break;
        case 'b': b->batch = atoi(optarg); break;
        case 'c': b->conc = atoi(optarg); break;
        default: usage();
        }
    }
    if (b->port <= 0 || b->dim < 1 || b->dim > 4096 || b->rows < 1 || b->batch < 1 || b->batch > 65536 ||
        b->conc < 1 || b->conc > MAX_FLIGHT)
        usage();
}

/* The codec's plan for ROW<id LONG, x PRIMITIVE_ARRAY<FLOAT>> -> ROW<id LONG, y PRIMITIVE_ARRAY<FLOAT>>. */
static int make_plan(bench *b, fnw_error *err)
{
    b->in = fnw_type_new(FNW_ROW);
    b->out = fnw_type_new(FNW_ROW);
    fnw_type *xs = fnw_type_new(FNW_PRIMITIVE_ARRAY), *ys = fnw_type_new(FNW_PRIMITIVE_ARRAY);
    if (!b->in || !b->out || !xs || !ys || fnw_type_add_child(xs, fnw_type_new(FNW_FLOAT), NULL, err) ||
        fnw_type_add_child(ys, fnw_type_new(FNW_FLOAT), NULL, err) ||
        fnw_type_add_child(b->in, fnw_type_new(FNW_LONG), "id", err) || fnw_type_add_child(b->in, xs, "x", err) ||
        fnw_type_add_child(b->out, fnw_type_new(FNW_LONG), "id", err) || fnw_type_add_child(b->out, ys, "y", err))
        return -1;
    char inputs[64];
    snprintf(inputs, sizeof inputs, "x:FP32[%d]=x", b->dim);
    b->plan = fnw_tensor_plan_new(b->in, b->out, inputs, "y=y", "kserve_direct", err);
    return b->plan ? 0 : -1;
}

/* The ModelInfer request for n rows, packed by the codec, as a slice. */
static int pack_request(bench *b, size_t n, grpc_slice *out, fnw_error *err)
{
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    fnw_value *rows = fnw_arena_alloc(&a, n * sizeof *rows);
    fnw_value *fields = fnw_arena_alloc(&a, n * 2 * sizeof *fields);
    fnw_value *xs = fnw_arena_alloc(&a, n * (size_t)b->dim * sizeof *xs);
    if (!rows || !fields || !xs) {
        fnw_arena_free(&a);
        return fnw_error_set(err, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < b->dim; j++)
            xs[i * (size_t)b->dim + (size_t)j] = fnw_value_float((float)((i + (size_t)j) % 7) * 0.5f);
        fields[2 * i] = fnw_value_int(FNW_LONG, (int64_t)i);
        fields[2 * i + 1] = fnw_value_items(FNW_PRIMITIVE_ARRAY, xs + i * (size_t)b->dim, (uint32_t)b->dim);
        rows[i] = fnw_value_row(FNW_INSERT, fields + 2 * i, 2);
    }
    Inference__ModelInferRequest req = INFERENCE__MODEL_INFER_REQUEST__INIT;
    int rc = fnw_tensor_pack(b->plan, rows, n, &a, &req, err);
    if (rc == 0) {
        req.model_name = (char *)b->model;
        *out = grpc_slice_malloc(inference__model_infer_request__get_packed_size(&req));
        inference__model_infer_request__pack(&req, GRPC_SLICE_START_PTR(*out));
    }
    fnw_arena_free(&a);
    return rc;
}

static int start_call(bench *b, flight *f)
{
    long left = b->rows - b->sent;
    f->rows = left >= b->batch ? (size_t)b->batch : (size_t)left;
    grpc_slice s = f->rows == (size_t)b->batch ? b->full : b->last;
    f->send = grpc_raw_byte_buffer_create(&s, 1);
    f->recv = NULL;
    grpc_metadata_array_init(&f->md);
    grpc_metadata_array_init(&f->trailing);
    f->details = grpc_empty_slice();
    f->call = grpc_channel_create_call(b->ch, NULL, GRPC_PROPAGATE_DEFAULTS, b->cq,
                                       grpc_slice_from_static_string("/inference.GRPCInferenceService/ModelInfer"),
                                       NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = f->send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &f->md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &f->recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &f->trailing;
    ops[5].data.recv_status_on_client.status = &f->status;
    ops[5].data.recv_status_on_client.status_details = &f->details;
    b->sent += (long)f->rows;
    return grpc_call_start_batch(f->call, ops, 6, f, NULL) == GRPC_CALL_OK ? 0 : -1;
}

/* Decodes and checks one answer with the codec: every row has its output. */
static int check_answer(bench *b, flight *f, fnw_arena *a)
{
    if (f->status != GRPC_STATUS_OK || !f->recv) {
        char *d = grpc_slice_to_c_string(f->details);
        fprintf(stderr, "kserve_direct: ModelInfer failed: status %d: %s\n", (int)f->status, d);
        gpr_free(d);
        return -1;
    }
    grpc_byte_buffer_reader r;
    grpc_byte_buffer_reader_init(&r, f->recv);
    grpc_slice all = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    ProtobufCAllocator al;
    fnw_tensor_alloc_init(&al, a);
    Inference__ModelInferResponse *resp =
        inference__model_infer_response__unpack(&al, GRPC_SLICE_LENGTH(all), GRPC_SLICE_START_PTR(all));
    fnw_error err;
    fnw_value *vals = fnw_arena_alloc(a, f->rows * sizeof *vals);
    int rc = resp && vals && fnw_tensor_unpack(b->plan, resp, f->rows, a, vals, &err) == 0 ? 0 : -1;
    if (rc != 0)
        fprintf(stderr, "kserve_direct: bad answer: %s\n", resp ? err.msg : "not a ModelInferResponse");
    grpc_slice_unref(all);   /* after the checks: BYTES values may point into it */
    fnw_arena_reset(a);      /* the response and the values with it */
    return rc;
}

static void end_call(flight *f)
{
    grpc_byte_buffer_destroy(f->send);
    if (f->recv)
        grpc_byte_buffer_destroy(f->recv);
    grpc_metadata_array_destroy(&f->md);
    grpc_metadata_array_destroy(&f->trailing);
    grpc_slice_unref(f->details);
    grpc_call_unref(f->call);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Keeps conc calls in flight until every row is sent and answered. */
static void run(bench *b)
{
    fnw_arena a;
    fnw_arena_init(&a, 0, 0);
    int in_flight = 0;
    for (int i = 0; i < b->conc && b->sent < b->rows; i++)
        if (start_call(b, &b->f[i]) == 0)
            in_flight++;
    while (in_flight > 0) {
        grpc_event ev = grpc_completion_queue_next(b->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            break;
        flight *f = ev.tag;
        in_flight--;
        b->batches++;
        if (!ev.success || check_answer(b, f, &a) != 0)
            b->failed++;
        else
            b->done += (long)f->rows;
        end_call(f);
        if (b->sent < b->rows && start_call(b, f) == 0)
            in_flight++;
    }
    fnw_arena_free(&a);
}

int main(int argc, char **argv)
{
    bench *b = calloc(1, sizeof *b);
    if (!b)
        return 1;
    parse(b, argc, argv);
    fnw_error err;
    b->last_rows = (size_t)(b->rows % b->batch);
    if (make_plan(b, &err) != 0 || pack_request(b, (size_t)b->batch, &b->full, &err) != 0 ||
        (b->last_rows && pack_request(b, b->last_rows, &b->last, &err) != 0)) {
        fprintf(stderr, "kserve_direct: %s\n", err.msg);
        return 1;
    }
    grpc_init();
    char target[256];
    snprintf(target, sizeof target, "%s:%d", b->host, b->port);
    grpc_channel_credentials *cr = grpc_insecure_credentials_create();
    b->ch = grpc_channel_create(target, cr, NULL);
    grpc_channel_credentials_release(cr);
    b->cq = grpc_completion_queue_create_for_next(NULL);
    double t0 = now_s();
    run(b);
    double secs = now_s() - t0;
    printf("rows=%ld batches=%ld seconds=%.3f rows_per_s=%.0f failed=%ld\n", b->done, b->batches, secs,
           secs > 0 ? (double)b->done / secs : 0.0, b->failed);
    grpc_channel_destroy(b->ch);
    grpc_completion_queue_shutdown(b->cq);
    while (grpc_completion_queue_next(b->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(b->cq);
    grpc_slice_unref(b->full);
    if (b->last_rows)
        grpc_slice_unref(b->last);
    fnw_tensor_plan_free(b->plan);
    fnw_type_free(b->in);
    fnw_type_free(b->out);
    int bad = b->failed > 0 || b->done != b->rows;
    free(b);
    grpc_shutdown();
    return bad;
}
