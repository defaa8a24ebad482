/* tests/fuzz/fuzz_spec.c — fuzz target for a function's OperationSpec: the
 * payload a job puts in each UserDefinedDataStreamFunction (protobuf, or the
 * Python package's pickle around it), read into a plan step
 * (worker/step.c), validated (runtime/spec.c), and its options read by the
 * operations that take no service (runtime/options.c through echo's,
 * identity's and project's open).
 *
 * Input: byte 0 picks the function type (even: PROCESS, odd: ASYNC_BATCH),
 * the rest is the function payload. Properties checked (abort() on
 * violation):
 *  - reading twice gives the same status, message and step;
 *  - a refusal has a message that names the transform;
 *  - an accepted step names a registered operation and its spec respects
 *    fnworker's caps: 1 <= capacity <= 1,048,576; in batch mode
 *    1 <= batch_size <= 65,536 and batch_timeout_ms >= 0, per element both
 *    0; timeout_ms >= 0; a retry strategy has positive attempts and delays
 *    and a predicate;
 *  - opening the step's operation (echo, identity, project) succeeds or
 *    gives a message; a refused option is named in it, in quotes.
 * The raw fnw_spec validator is driven directly too, from the same bytes:
 * an accepted spec respects the caps, a refusal names the field at fault.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/builtins.h"
#include "codecs/type.h"
#include "runtime/registry.h"
#include "worker/step.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_caps(const fnw_spec *s)
{
    CHECK(s->capacity >= 1 && s->capacity <= FNW_SPEC_MAX_CAPACITY);
    CHECK(s->timeout_ms >= 0);
    if (s->batched)
        CHECK(s->batch_size >= 1 && s->batch_size <= FNW_SPEC_MAX_BATCH_SIZE && s->batch_timeout_ms >= 0 &&
              s->timeout_ms > 0);
    else
        CHECK(s->batch_size == 0 && s->batch_timeout_ms == 0);
    const fnw_retry *r = &s->retry;
    CHECK(r->kind == FNW_RETRY_NONE || r->kind == FNW_RETRY_FIXED_DELAY || r->kind == FNW_RETRY_EXPONENTIAL);
    if (r->kind != FNW_RETRY_NONE)
        CHECK(r->max_attempts > 0 && r->delay_ms > 0 && (r->on_error || r->on_empty) && s->timeout_ms > 0);
    if (r->kind == FNW_RETRY_EXPONENTIAL)
        CHECK(r->max_delay_ms > 0 && r->multiplier > 0);
    CHECK(s->on_timeout == FNW_TIMEOUT_FAIL || s->on_timeout == FNW_TIMEOUT_EMPTY ||
          s->on_timeout == FNW_TIMEOUT_OPERATION);
}

/* A case-insensitive search: PyFlink's messages say "Timeout", ours "timeout". */
static int mentions(const char *msg, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = msg; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == word[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static int names_a_field(const char *msg)
{
    static const char *const fields[] = {"batch size", "batch_size", "batch timeout", "timeout", "capacity",
                                         "max_attempts", "delay_ms", "multiplier", "retry", NULL};
    for (int i = 0; fields[i]; i++)
        if (mentions(msg, fields[i]))
            return 1;
    return 0;
}

/* The validator on a spec whose fields come straight from the bytes. */
static void fuzz_validate(const uint8_t *data, size_t size)
{
    fnw_spec s;
    memset(&s, 0, sizeof s);
    uint8_t raw[64] = {0};
    memcpy(raw, data, size < sizeof raw ? size : sizeof raw);
    s.batched = raw[0] & 1;
    s.unordered = (raw[0] >> 1) & 1;
    memcpy(&s.capacity, raw + 1, 4);
    memcpy(&s.timeout_ms, raw + 5, 8);
    memcpy(&s.batch_size, raw + 13, 4);
    memcpy(&s.batch_timeout_ms, raw + 17, 8);
    s.retry.kind = (fnw_retry_kind)(raw[25] % 4);
    memcpy(&s.retry.max_attempts, raw + 26, 4);
    memcpy(&s.retry.delay_ms, raw + 30, 8);
    memcpy(&s.retry.max_delay_ms, raw + 38, 8);
    memcpy(&s.retry.multiplier, raw + 46, 8);
    s.retry.on_error = raw[54] & 1;
    s.retry.on_empty = (raw[54] >> 1) & 1;
    s.on_timeout = (fnw_timeout_action)(raw[55] % 4);
    fnw_error err;
    err.msg[0] = '\0';
    if (fnw_spec_validate(&s, &err) == 0)
        check_caps(&s);
    else
        CHECK(err.msg[0] != '\0' && names_a_field(err.msg));
}

static int same_step(const fnw_plan_step *a, const fnw_plan_step *b)
{
    if (a->op != b->op || memcmp(&a->spec.retry.multiplier, &b->spec.retry.multiplier, sizeof(double)) ||
        a->spec.capacity != b->spec.capacity || a->spec.batched != b->spec.batched ||
        a->spec.batch_size != b->spec.batch_size || a->spec.timeout_ms != b->spec.timeout_ms ||
        a->opts.count != b->opts.count)
        return 0;
    if ((a->declared_type != NULL) != (b->declared_type != NULL) ||
        (a->declared_type && !fnw_type_equal(a->declared_type, b->declared_type)))
        return 0;
    for (size_t i = 0; i < a->opts.count; i++)
        if (strcmp(a->opts.items[i].key, b->opts.items[i].key) ||
            strcmp(a->opts.items[i].value, b->opts.items[i].value))
            return 0;
    return 1;
}

/* Opens the step's operation when it needs no service, as a bundle would. */
static void check_open(const fnw_plan_step *st)
{
    const char *name = st->op->name;
    if (strcmp(name, "echo") && strcmp(name, "identity") && strcmp(name, "project"))
        return;
    fnw_error err;
    fnw_type *t = fnw_type_new(FNW_ROW), *f0 = fnw_type_new(FNW_STRING), *f1 = fnw_type_new(FNW_INT);
    CHECK(t && f0 && f1 && fnw_type_add_child(t, f0, "f0", &err) == 0 &&
          fnw_type_add_child(t, f1, "f1", &err) == 0);
    fnw_op_env env;
    memset(&env, 0, sizeof env);
    env.options = &st->opts;
    env.input_type = t;
    env.output_type = st->declared_type ? st->declared_type : t;
    env.transform_id = st->transform_id;
    env.batched = st->spec.batched;
    env.batch_size = st->spec.batched ? (size_t)st->spec.batch_size : 1;
    env.timeout_ms = st->spec.timeout_ms;
    void *state = NULL;
    err.msg[0] = '\0';
    if (!st->op->open || st->op->open(&env, &state, &err) == 0) {
        if (st->op->close)
            st->op->close(state);
    } else {
        CHECK(err.msg[0] != '\0');
        if (mentions(err.msg, "option '")) {
            int named = 0;
            for (size_t i = 0; i < st->opts.count && !named; i++) {
                char quoted[300];
                snprintf(quoted, sizeof quoted, "'%.256s'", st->opts.items[i].key);
                named = strstr(err.msg, quoted) != NULL;
            }
            CHECK(named);
        }
    }
    fnw_type_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    fuzz_validate(data + 1, size - 1);
    fnw_registry reg;
    fnw_registry_init(&reg);
    fnw_builtins_register(&reg);
    pb_UDSF f = ORG__APACHE__FLINK__FN_EXECUTION__V1__USER_DEFINED_DATA_STREAM_FUNCTION__INIT;
    f.function_type = (data[0] & 1) ? 7 : 0;
    f.payload.data = (uint8_t *)(uintptr_t)(data + 1);
    f.payload.len = size - 1;
    fnw_plan_step a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    fnw_error ea, eb;
    int ra = fnw_step_build(&f, "transform-0", &reg, &a, &ea);
    int rb = fnw_step_build(&f, "transform-0", &reg, &b, &eb);
    CHECK(ra == rb);
    if (ra == 0) {
        CHECK(a.op && same_step(&a, &b));
        check_caps(&a.spec);
        check_open(&a);
    } else {
        CHECK(ea.msg[0] != '\0' && !strcmp(ea.msg, eb.msg) && strstr(ea.msg, "transform 'transform-0'"));
    }
    fnw_step_free(&a);
    fnw_step_free(&b);
    return 0;
}
