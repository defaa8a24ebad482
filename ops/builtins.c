/* ops/builtins.c — registers the operations fnworker ships with. The
 * registry itself (runtime/registry.c) knows no operation by name: the
 * engine's floor does not depend on the operations above it. */
#include "ops/builtins.h"

#include "ops/bind/conv.h"

void fnw_builtins_register(fnw_registry *r)
{
    /* Built-ins are valid and distinctly named; a clash with an operation
     * registered earlier under the same name keeps the earlier one. */
    r->json_encode = fnw_conv_json_encode; /* on_failure DEFAULT's fallback_json */
    fnw_registry_add(r, &fnw_op_identity, NULL);
    r->passthrough = &fnw_op_identity;
    fnw_registry_add(r, &fnw_op_echo, NULL);
    fnw_registry_add(r, &fnw_op_project, NULL);
    fnw_registry_add(r, &fnw_op_redis, NULL);
    fnw_registry_add(r, &fnw_op_http, NULL);
    fnw_registry_add(r, &fnw_op_kserve, NULL);
}
