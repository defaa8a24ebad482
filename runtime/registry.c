/* runtime/registry.c — the table of operations a worker can run, looked up
 * by OperationSpec.operation. A registry is a plain value the worker owns;
 * there is no global list. */
#include <stdio.h>
#include <string.h>

#include "runtime/registry.h"

void fnw_registry_init(fnw_registry *r)
{
    r->count = 0;
    r->passthrough = NULL;
    r->json_encode = NULL;
}

static const fnw_operation *lookup(const fnw_registry *r, const char *name)
{
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->ops[i]->name, name) == 0)
            return r->ops[i];
    return NULL;
}

int fnw_registry_add(fnw_registry *r, const fnw_operation *op, fnw_error *err)
{
    if (!op || !op->name || !op->name[0])
        return fnw_error_set(err, "cannot register an operation without a name");
    if (fnw_registry_check(op, err) != 0)
        return -1;
    if (lookup(r, op->name))
        return fnw_error_set(err, "operation '%s' is already registered", op->name);
    if (r->count >= FNW_REGISTRY_MAX)
        return fnw_error_set(err, "cannot register operation '%s': the registry holds at most %d operations",
                             op->name, FNW_REGISTRY_MAX);
    r->ops[r->count++] = op;
    return 0;
}

int fnw_registry_check(const fnw_operation *op, fnw_error *err)
{
    if (op->invoke_blocking) {
        if (op->invoke)
            return fnw_error_set(err, "operation '%s' has both invoke and invoke_blocking; set one", op->name);
        if (op->sync)
            return fnw_error_set(err, "operation '%s' is blocking and cannot be synchronous", op->name);
        return 0;
    }
    if (!op->invoke)
        return fnw_error_set(err, "operation '%s' has no invoke function", op->name);
    if (!op->sync && !op->cancel)
        return fnw_error_set(err, "operation '%s' is asynchronous but has no cancel function", op->name);
    return 0;
}

const fnw_operation *fnw_registry_find(const fnw_registry *r, const char *name, fnw_error *err)
{
    const fnw_operation *op = name ? lookup(r, name) : NULL;
    if (op)
        return op;
    char list[FNW_ERROR_MAX / 2];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < r->count && len < sizeof list; i++) {
        int w = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", r->ops[i]->name);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    fnw_error_set(err, "unknown operation '%s'; registered operations: %s", name ? name : "",
                  r->count ? list : "(none)");
    return NULL;
}
