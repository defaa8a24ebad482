/* runtime/registry.h — the registry's layout and the functions only the
 * worker uses (operations see fnw_registry as opaque and only add to it,
 * fnworker.h). A registry is a plain value its owner embeds; there is no
 * global list. */
#ifndef FNW_REGISTRY_H
#define FNW_REGISTRY_H

#include <stddef.h>

#include "fnworker.h"
#include "runtime/spec.h"

#define FNW_REGISTRY_MAX 64

struct fnw_registry {
    size_t count;
    const fnw_operation *ops[FNW_REGISTRY_MAX];
    /* How a spec's fallback_json becomes an output value's bytes; main.c
     * sets it (ops/bind's JSON rules), NULL refuses on_failure DEFAULT. */
    fnw_json_encode_fn json_encode;
    /* The operation whose one output per input is that input's bytes
     * (identity), if registered: its engines forward records without a
     * call (fnw_engine_set_passthrough). NULL = none. */
    const fnw_operation *passthrough;
};

void fnw_registry_init(fnw_registry *r); /* empty */
/* The table is usable: exactly one of invoke and invoke_blocking, cancel
 * for an asynchronous one, a blocking one not sync. */
int fnw_registry_check(const fnw_operation *op, fnw_error *err);
/* NULL and err = "unknown operation 'x'; registered operations: a, b" */
const fnw_operation *fnw_registry_find(const fnw_registry *r, const char *name, fnw_error *err);

#endif
