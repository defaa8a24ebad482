/* tests/unit/plugin_so/good_a.c — a well-formed plugin for the loader's
 * test: registers `plug_a`, a synchronous operation that copies each input
 * (its invoke uses fnworker.h's call API, resolved from the host at load). */
#include "fnworker.h"

static void copy_invoke(void *state, fnw_call *call)
{
    const fnw_record *in = fnw_call_input(call, 0);
    if (fnw_call_emit(call, 0, in->data, in->len) != 0) {
        fnw_call_fail(call, "plug_a: emit refused");
        return;
    }
    fnw_call_complete(call);
}

static const fnw_operation plug_a = {
    .name = "plug_a",
    .summary = "copies its input (test plugin)",
    .output_rule = FNW_OUTPUT_SAME_AS_INPUT,
    .sync = 1,
    .invoke = copy_invoke,
};

static int init(fnw_registry *r, fnw_error *err)
{
    return fnw_registry_add(r, &plug_a, err);
}

FNW_PLUGIN_DEFINE("good-a", init);
