/* tests/unit/plugin_so/dup_name.c — a plugin that registers `echo`, the name
 * of a built-in, and ignores nothing: the loader must refuse it. */
#include "fnworker.h"

static void nop_invoke(void *state, fnw_call *call)
{
    fnw_call_complete(call);
}

static const fnw_operation echo_again = { .name = "echo", .sync = 1, .invoke = nop_invoke };

static int init(fnw_registry *r, fnw_error *err)
{
    return fnw_registry_add(r, &echo_again, err);
}

FNW_PLUGIN_DEFINE("dup-name", init);
