/* runtime/builtins.h — the operations fnworker ships with (internal):
 * fnw_registry_add_builtins() registers them. */
#ifndef FNW_BUILTINS_H
#define FNW_BUILTINS_H

#include "runtime/operation.h"

extern const fnw_operation fnw_op_identity;   /* builtin_identity.c */
extern const fnw_operation fnw_op_echo;       /* builtin_echo.c */
extern const fnw_operation fnw_op_project;    /* builtin_project.c */

/* Shared by identity and echo: fails unless the output type equals the
 * input type, naming both. */
int fnw_builtin_check_same_type(const char *op_name, const fnw_op_env *env, fnw_error *err);

#endif
