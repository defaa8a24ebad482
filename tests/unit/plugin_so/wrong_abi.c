/* tests/unit/plugin_so/wrong_abi.c — a plugin that claims another ABI
 * version; its init would register `wrong_abi_ran`, which the loader must
 * never call. */
#include "fnworker.h"

static void nop_invoke(void *state, fnw_call *call)
{
    fnw_call_complete(call);
}

static const fnw_operation ran = { .name = "wrong_abi_ran", .sync = 1, .invoke = nop_invoke };

static int init(fnw_registry *r, fnw_error *err)
{
    return fnw_registry_add(r, &ran, err);
}

__attribute__((visibility("default"))) extern const fnw_plugin fnw_plugin_v1;
const fnw_plugin fnw_plugin_v1 = { FNW_ABI_VERSION + 41, "wrong-abi", init };
