/* ops/builtins.h — the operations fnworker ships with: fnw_builtins_register()
 * puts them into a registry (runtime/registry.h). Each is defined in its own
 * file; identity, echo and project against fnworker.h alone, as an operation
 * built outside the tree is. */
#ifndef FNW_BUILTINS_H
#define FNW_BUILTINS_H

#include "fnworker.h"
#include "runtime/registry.h"

extern const fnw_operation fnw_op_identity; /* builtin_identity.c */
extern const fnw_operation fnw_op_echo;     /* builtin_echo.c */
extern const fnw_operation fnw_op_project;  /* builtin_project.c */
extern const fnw_operation fnw_op_redis;    /* redis/redisop.c */
extern const fnw_operation fnw_op_http;     /* http/httpop.c */
extern const fnw_operation fnw_op_kserve;   /* kserve/kserve_op.c */

/* Registers every built-in operation (identity, echo, project, redis, http,
 * kserve). A clash with an operation registered earlier under the same name
 * keeps the earlier one. */
void fnw_builtins_register(fnw_registry *r);

#endif
