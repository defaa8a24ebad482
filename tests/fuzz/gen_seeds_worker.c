/* tests/fuzz/gen_seeds_worker.c — writes the seed corpora of fuzz_plan and
 * fuzz_spec: ProcessBundleDescriptors laid out the way Flink sends them
 * (built with the unit tests' descriptor builder), and OperationSpec
 * payloads, valid ones and the refusals and past findings worth keeping.
 *
 * The make fuzz-replay target builds it (build/fuzz/gen_seeds_worker) so it
 * keeps compiling; from the repository root:
 *   make fuzz-replay && build/fuzz/gen_seeds_worker tests/fuzz/corpus
 * (the pickled seeds, spec/pickle-*.bin and plan/pickled-spec.bin, are the
 * pickle_payload corpus's; see tests/fuzz/README.md).
 */
#include <stdio.h>

#include "tests/unit/descriptor_build.h"

#define MODE(x) FNWORKER__V1__OPERATION_SPEC__MODE__##x
typedef Fnworker__V1__OperationSpec__OptionsEntry OptEntry;
typedef Fnworker__V1__RetryStrategy Retry;

static void write_file(const char *dir, const char *name, const uint8_t *p, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "gen_seeds_worker: cannot write %s\n", path);
        exit(1);
    }
}

static void write_msg(const char *dir, const char *name, uint8_t head, int with_head, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *p = malloc(n + 1);
    p[0] = head;
    protobuf_c_message_pack(m, p + 1);
    write_file(dir, name, with_head ? p : p + 1, with_head ? n + 1 : n);
    free(p);
}

/* ---- descriptors ------------------------------------------------------------------ */

/* Flink's layout with one function whose OperationSpec is os (function type ft). */
static void one_function(builder *b, const pb_OperationSpec *os, int ft, pb_TypeInfo *in)
{
    shape_init(b);
    pb_TypeInfo *data = in ? in : str_int(b);
    shape_typed(b, 1, "beam:coder:param_windowed_value:v1", data, data);
    transform(b, "transform-0")->spec = pardo_spec(b, STATELESS, ft, os, 0);
}

static void write_plan(const char *dir, const char *name, builder *b)
{
    write_msg(dir, name, 0, 0, &b->d.base);
    builder_free(b);
}

/* Writes key then a length prefix of len at the end of *at. */
static void put_head(uint8_t **at, unsigned key, size_t len)
{
    *(*at)++ = (uint8_t)key;
    do {
        uint8_t byte = (uint8_t)(len & 0x7f);
        len >>= 7;
        *(*at)++ = (uint8_t)(byte | (len ? 0x80 : 0));
    } while (len);
}

/* The descriptor of b plus a windowing strategy whose Trigger nests levels
 * Repeat levels deep: refused as a whole, its transforms still readable. */
static void write_deep_trigger(const char *dir, const char *name, builder *b, int levels)
{
    size_t n = protobuf_c_message_get_packed_size(&b->d.base);
    size_t cap = n + (size_t)levels * 8 + 64;
    uint8_t *p = malloc(cap), *at = p + n;
    protobuf_c_message_pack(&b->d.base, p);
    /* sizes from the inside out: trig[0] = 0, rep[k] = 1 + vs + trig[k-1], trig[k] = 1 + vs + rep[k] */
    size_t *trig = calloc((size_t)levels + 1, sizeof *trig), *rep = calloc((size_t)levels + 1, sizeof *rep);
    for (int k = 1; k <= levels; k++) {
        rep[k] = 1 + (trig[k - 1] < 128 ? 1 : 2) + trig[k - 1];
        trig[k] = 1 + (rep[k] < 128 ? 1 : 2) + rep[k];
    }
    size_t strategy = 1 + (trig[levels] < 128 ? 1 : 2) + trig[levels];
    size_t entry = 2 + 4 + 1 + (strategy < 128 ? 1 : 2) + strategy;
    put_head(&at, 4 << 3 | 2, entry);       /* ProcessBundleDescriptor.windowing_strategies */
    put_head(&at, 1 << 3 | 2, 4);           /* key */
    memcpy(at, "deep", 4);
    at += 4;
    put_head(&at, 2 << 3 | 2, strategy);    /* value: WindowingStrategy */
    put_head(&at, 4 << 3 | 2, trig[levels]);   /* trigger */
    for (int k = levels; k > 0; k--) {
        put_head(&at, 11 << 3 | 2, rep[k]);   /* Trigger.repeat */
        put_head(&at, 1 << 3 | 2, trig[k - 1]);   /* Repeat.subtrigger */
    }
    write_file(dir, name, p, (size_t)(at - p));
    free(trig);
    free(rep);
    free(p);
    builder_free(b);
}

static void plan_seeds(const char *dir)
{
    builder b;
    OptEntry o1 = FNWORKER__V1__OPERATION_SPEC__OPTIONS_ENTRY__INIT, *opts[1] = {&o1};
    o1.key = "delay_ms";
    o1.value = "5";
    pb_OperationSpec os = FNWORKER__V1__OPERATION_SPEC__INIT;
    os.operation = "echo";
    os.n_options = 1;
    os.options = opts;
    os.capacity = 10;
    os.timeout_ms = 5000;
    one_function(&b, &os, 0, NULL);
    write_plan(dir, "echo-one-operation.bin", &b);

    pb_OperationSpec batch = FNWORKER__V1__OPERATION_SPEC__INIT;
    batch.operation = "echo";
    batch.batch_size = 16;
    batch.timeout_ms = 1000;
    one_function(&b, &batch, 7, NULL);
    write_plan(dir, "echo-async-batch.bin", &b);

    flink_shape(&b, 3, "beam:coder:param_windowed_value:v1");
    write_plan(dir, "identity-chain-3.bin", &b);

    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    write_deep_trigger(dir, "refuse-trigger-depth-150.bin", &b, 150);

    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    transform(&b, "transform-0")->spec = fspec(&b, "beam:transform:pardo:v1", none());
    write_plan(dir, "finding-pardo-without-do-fn.bin", &b);

    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    transform(&b, "transform-0")->spec = pardo(&b, "flink:transform:ds:stateful_function:v1", 0, "identity", 0);
    write_plan(dir, "refuse-stateful-function.bin", &b);

    flink_shape(&b, 1, "beam:coder:param_windowed_value:v1");
    transform(&b, "transform-0")->spec = pardo(&b, STATELESS, 0, "identity", 1);
    write_plan(dir, "refuse-timers.bin", &b);

    shape_init(&b);
    pb_TypeInfo *t = ti(&b, 5);
    for (int i = 1; i < 80; i++) {
        pb_TypeInfo *l = ti(&b, 18);
        l->type_info_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_COLLECTION_ELEMENT_TYPE;
        l->collection_element_type = t;
        t = l;
    }
    flink_shape_of(&b, 1, "beam:coder:param_windowed_value:v1", t);
    write_plan(dir, "refuse-type-depth-80.bin", &b);

    /* The stack-overflow crash: an input coder's TypeInfo 10,000 levels deep
     * once recursed inside protobuf-c before any depth check. */
    static pb_TypeInfo deep[10000];   /* more than the builder keeps */
    pb_TypeInfo init = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__INIT;
    for (int i = 0; i < 10000; i++) {
        deep[i] = init;
        deep[i].type_name = i ? 18 : 5;
        if (i) {
            deep[i].type_info_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_COLLECTION_ELEMENT_TYPE;
            deep[i].collection_element_type = &deep[i - 1];
        }
    }
    shape_init(&b);
    flink_shape_of(&b, 1, "beam:coder:param_windowed_value:v1", &deep[9999]);
    write_plan(dir, "finding-coder-typeinfo-depth-10000.bin", &b);
}

/* ---- OperationSpecs ---------------------------------------------------------------- */

static void spec_seeds(const char *dir)
{
    OptEntry o1 = FNWORKER__V1__OPERATION_SPEC__OPTIONS_ENTRY__INIT, *opts[1] = {&o1};
    Retry r = FNWORKER__V1__RETRY_STRATEGY__INIT;
    pb_OperationSpec os = FNWORKER__V1__OPERATION_SPEC__INIT;
    os.operation = "echo";
    os.capacity = 10;
    os.timeout_ms = 5000;
    write_msg(dir, "per-element-echo.bin", 0, 1, &os.base);

    o1.key = "delay_ms";
    o1.value = "5";
    os.n_options = 1;
    os.options = opts;
    write_msg(dir, "per-element-echo-delay.bin", 0, 1, &os.base);
    o1.value = "five";
    write_msg(dir, "refuse-option-not-a-number.bin", 0, 1, &os.base);
    o1.key = "dleay_ms";
    o1.value = "5";
    write_msg(dir, "refuse-unknown-option.bin", 0, 1, &os.base);
    o1.key = "timeout_result";
    o1.value = "empty";
    os.on_timeout = FNWORKER__V1__TIMEOUT_ACTION__TIMEOUT_OPERATION;
    write_msg(dir, "timeout-action-operation.bin", 0, 1, &os.base);
    os.n_options = 0;
    os.on_timeout = FNWORKER__V1__TIMEOUT_ACTION__TIMEOUT_EMPTY;
    write_msg(dir, "timeout-action-empty.bin", 0, 1, &os.base);
    os.on_timeout = FNWORKER__V1__TIMEOUT_ACTION__TIMEOUT_FAIL;

    os.mode = MODE(BATCH);
    os.batch_size = 64;
    os.batch_timeout_ms = 10;
    write_msg(dir, "batch-echo.bin", 0, 1, &os.base);
    os.batch_size = 2147483647;
    write_msg(dir, "finding-batch-size-2^31-1.bin", 0, 1, &os.base);
    os.batch_size = 0;
    os.batch_timeout_ms = 0;
    os.mode = MODE(MODE_UNSPECIFIED);
    os.batch_size = 8;
    write_msg(dir, "async-batch-function-type.bin", 1, 1, &os.base);
    os.batch_size = 0;

    os.capacity = 1048577;
    write_msg(dir, "refuse-capacity-over-cap.bin", 0, 1, &os.base);
    os.capacity = 10;

    r.kind = FNWORKER__V1__RETRY_STRATEGY__KIND__FIXED_DELAY;
    r.max_attempts = 3;
    r.delay_ms = 10;
    r.retry_on_error = 1;
    os.retry = &r;
    write_msg(dir, "retry-fixed-delay.bin", 0, 1, &os.base);
    r.kind = FNWORKER__V1__RETRY_STRATEGY__KIND__EXPONENTIAL_BACKOFF;
    r.max_delay_ms = 1000;
    r.multiplier = 2.0;
    r.retry_on_empty_result = 1;
    write_msg(dir, "retry-exponential.bin", 0, 1, &os.base);
    r.multiplier = 0;
    write_msg(dir, "refuse-retry-multiplier-0.bin", 0, 1, &os.base);
    os.retry = NULL;

    os.operation = "identity";
    builder b;
    shape_init(&b);
    os.output_type = str_int(&b);
    write_msg(dir, "identity-output-type.bin", 0, 1, &os.base);
    builder_free(&b);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_seeds_worker CORPUS_DIR (writes CORPUS_DIR/plan and CORPUS_DIR/spec)\n");
        return 2;
    }
    char dir[400];
    snprintf(dir, sizeof dir, "%s/plan", argv[1]);
    plan_seeds(dir);
    snprintf(dir, sizeof dir, "%s/spec", argv[1]);
    spec_seeds(dir);
    return 0;
}
