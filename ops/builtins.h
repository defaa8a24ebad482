/* ops/builtins.h — the operations fnworker ships with (internal):
 * fnw_registry_add_builtins() registers them. Each is defined in its own
 * file against fnworker.h alone, as an operation built outside the tree is. */
#ifndef FNW_BUILTINS_H
#define FNW_BUILTINS_H

#include "fnworker.h"

extern const fnw_operation fnw_op_identity;   /* builtin_identity.c */
extern const fnw_operation fnw_op_echo;       /* builtin_echo.c */
extern const fnw_operation fnw_op_project;    /* builtin_project.c */
extern const fnw_operation fnw_op_redis;      /* builtin_redis.c (uses the runtime's bindings and Redis pool) */
extern const fnw_operation fnw_op_http;       /* builtin_http.c */
extern const fnw_operation fnw_op_kserve;     /* builtin_kserve.c */

#endif
