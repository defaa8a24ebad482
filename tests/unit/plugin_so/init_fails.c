/* tests/unit/plugin_so/init_fails.c — a plugin whose init fails with a
 * message of its own. */
#include "fnworker.h"

static int init(fnw_registry *r, fnw_error *err)
{
    return fnw_error_set(err, "init_fails refuses to start: option 'zone' is required");
}

FNW_PLUGIN_DEFINE("init-fails", init);
