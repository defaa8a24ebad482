/* ops/builtin_identity.c — the `identity` operation: each input becomes
 * one output with the same bytes. Synchronous, so the engine runs it without
 * copying or queueing; it needs the output type to equal the input type. */
#include "fnworker.h"

/* Fails unless the output type equals the input type, naming both. */
static int check_same_type(const fnw_op_env *env, fnw_error *err)
{
    const fnw_type *in = env->input_type, *out = env->output_type;
    if (in == out || (in && out && fnw_type_equal(in, out)))
        return 0;
    char a[384] = "(none)", b[384] = "(none)";
    if (in)
        fnw_type_format(in, a, sizeof a);
    if (out)
        fnw_type_format(out, b, sizeof b);
    return fnw_error_set(err,
                         "operation 'identity' needs the output type to equal the input type: input %s, "
                         "output %s",
                         a, b);
}

static int identity_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    static const char *const known[] = { NULL };
    *state = NULL;
    if (fnw_options_check_known(env->options, known, "identity", err) != 0)
        return -1;
    return check_same_type(env, err);
}

static void identity_invoke(void *state, fnw_call *call)
{
    size_t n = fnw_call_size(call);
    for (size_t i = 0; i < n; i++) {
        const fnw_record *in = fnw_call_input(call, i);
        fnw_call_emit(call, i, in->data, in->len);
    }
    fnw_call_complete(call);
}

const fnw_operation fnw_op_identity = {
    .name = "identity",
    .summary = "emits every input unchanged (output type = input type)",
    .output_rule = FNW_OUTPUT_SAME_AS_INPUT,
    .sync = 1,
    .open = identity_open,
    .close = NULL,
    .invoke = identity_invoke,
    .on_timeout = NULL,
    .cancel = NULL,
};
