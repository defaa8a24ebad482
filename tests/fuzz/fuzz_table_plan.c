/* tests/fuzz/fuzz_table_plan.c — fuzz target for one Flink Table operator
 * as the worker reads it (worker/table_plan.c): its input and output
 * coders (a CoderInfoDescriptor each: the Schema of the FlattenRow or Row
 * coder, codecs/schema.c) and its transform's UserDefinedFunctions (the
 * functions, their OperationSpec payloads, nested calls, input offsets and
 * constants, codecs/pickle_const.c). fuzz_plan.c reaches the same code
 * through a whole descriptor, where most mutations break the descriptor
 * around it; here every byte is the operator's.
 *
 * Input: byte 0 picks the transform URN (modulo 3: scalar, async scalar,
 * table function); then the input and the output coder's
 * CoderInfoDescriptor, each behind a big-endian u16 length; the rest is
 * the transform's payload. Coders that fail the nesting check or do not
 * unpack end the input (plan.c refuses them before this code).
 * Properties (abort() on violation; LeakSanitizer finds leaks):
 *  - the operator ends in a plan or a non-empty message, the same twice
 *    (the same steps: operations, specs, types);
 *  - an accepted plan is whole (tests/fuzz/table_checks.h) and its steps'
 *    specs are within fnworker's caps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/pb.h"
#include "codecs/pb_nesting.h"
#include "ops/builtins.h"
#include "runtime/registry.h"
#include "worker/plan.h"
#include "worker/table_plan.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/table_checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const urns[3] = { FNW_TABLE_URN_SCALAR, FNW_TABLE_URN_ASYNC_SCALAR, FNW_TABLE_URN_TABLE };

/* The next u16-length-prefixed coder, unpacked; NULL ends the input. */
static pb_CoderInfoDescriptor *take_coder(const uint8_t **p, size_t *n)
{
    if (*n < 2)
        return NULL;
    size_t len = (size_t)(*p)[0] << 8 | (*p)[1];
    if (*n - 2 < len)
        return NULL;
    const uint8_t *b = *p + 2;
    *p += 2 + len;
    *n -= 2 + len;
    fnw_error err;
    if (fnw_pb_nesting_check(&PBF(coder_info_descriptor__descriptor), b, len, &err) < 0)
        return NULL;
    return PBF(coder_info_descriptor__unpack)(NULL, len, b);
}

static int same_type(const fnw_type *a, const fnw_type *b)
{
    return (!a && !b) || (a && b && fnw_type_equal(a, b));
}

static int same_steps(const fnw_plan *a, const fnw_plan *b)
{
    if (a->n_steps != b->n_steps || !same_type(a->input_type, b->input_type) ||
        !same_type(a->output_type, b->output_type) || a->table->desc.window != b->table->desc.window)
        return 0;
    for (size_t i = 0; i < a->n_steps; i++) {
        const fnw_plan_step *x = &a->steps[i], *y = &b->steps[i];
        if (x->op != y->op || x->spec.capacity != y->spec.capacity || x->spec.timeout_ms != y->spec.timeout_ms ||
            x->spec.batched != y->spec.batched || x->spec.batch_size != y->spec.batch_size ||
            x->spec.retry.kind != y->spec.retry.kind || !same_type(x->input_type, y->input_type) ||
            !same_type(x->output_type, y->output_type) || a->table->nodes[i].n_args != b->table->nodes[i].n_args ||
            a->table->nodes[i].column != b->table->nodes[i].column ||
            a->table->nodes[i].unwrap != b->table->nodes[i].unwrap)
            return 0;
    }
    return 1;
}

static void check_accepted(const fnw_plan *p)
{
    CHECK(p->table && p->input_type && p->input_skip && p->output_type && p->n_steps >= 1);
    for (size_t i = 0; i < p->n_steps; i++) {
        const fnw_plan_step *s = &p->steps[i];
        CHECK(s->op && s->input_type && s->output_type);
        CHECK(s->spec.capacity >= 1 && s->spec.capacity <= FNW_SPEC_MAX_CAPACITY && s->spec.timeout_ms >= 0);
        if (s->spec.batched)
            CHECK(s->spec.batch_size >= 1 && s->spec.batch_size <= FNW_SPEC_MAX_BATCH_SIZE);
    }
    fuzz_check_table(p);
}

/* One build of the operator: 0 and *out, or -1 and err. */
static int build(const pb_PTransform *t, const pb_CoderInfoDescriptor *in, const pb_CoderInfoDescriptor *out,
                 const fnw_registry *reg, fnw_plan **plan, fnw_error *err)
{
    fnw_plan *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    err->msg[0] = '\0';
    if (fnw_table_plan_build(t, "fuzz", in, out, reg, p, err) < 0) {
        fnw_plan_free(p);
        *plan = NULL;
        return -1;
    }
    *plan = p;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *urn = urns[data[0] % 3];
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    pb_CoderInfoDescriptor *in = take_coder(&p, &n), *out = in ? take_coder(&p, &n) : NULL;
    if (!in || !out) {
        if (in)
            PBF(coder_info_descriptor__free_unpacked)(in, NULL);
        return 0;
    }
    fnw_registry reg;
    fnw_registry_init(&reg);
    fnw_builtins_register(&reg);
    pb_FunctionSpec spec = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__FUNCTION_SPEC__INIT;
    spec.urn = (char *)urn;
    spec.payload.data = (uint8_t *)p;
    spec.payload.len = n;
    pb_PTransform t = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__PTRANSFORM__INIT;
    t.spec = &spec;
    fnw_plan *a = NULL, *b = NULL;
    fnw_error ea, eb;
    int ra = build(&t, in, out, &reg, &a, &ea);
    int rb = build(&t, in, out, &reg, &b, &eb);
    CHECK(ra == rb);
    if (ra == 0) {
        CHECK(same_steps(a, b));
        check_accepted(a);
    } else {
        CHECK(fuzz_same_message(&ea, &eb));
    }
    fnw_plan_free(a);
    fnw_plan_free(b);
    PBF(coder_info_descriptor__free_unpacked)(in, NULL);
    PBF(coder_info_descriptor__free_unpacked)(out, NULL);
    return 0;
}
