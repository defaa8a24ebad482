/* tests/unit/plugin_so/good_b.c — a second well-formed plugin (`plug_b`,
 * `plug_b2`) for the loader's test of name order and of several
 * operations in one plugin. */
#include "fnworker.h"

static void copy_invoke(void *state, fnw_call *call)
{
    const fnw_record *in = fnw_call_input(call, 0);
    fnw_call_emit(call, 0, in->data, in->len);
    fnw_call_complete(call);
}

static const fnw_operation plug_b = {
    .name = "plug_b", .output_rule = FNW_OUTPUT_SAME_AS_INPUT, .sync = 1, .invoke = copy_invoke,
};
static const fnw_operation plug_b2 = {
    .name = "plug_b2", .output_rule = FNW_OUTPUT_SAME_AS_INPUT, .sync = 1, .invoke = copy_invoke,
};

static int init(fnw_registry *r, fnw_error *err)
{
    if (fnw_registry_add(r, &plug_b, err) != 0)
        return -1;
    return fnw_registry_add(r, &plug_b2, err);
}

FNW_PLUGIN_DEFINE("good-b", init);
