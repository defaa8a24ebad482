/* runtime/operation.h — the operation API as the tree sees it: the public
 * definitions (fnworker.h: the operation table, options, the call, values,
 * types, records, errors) plus the internals the runtime and the worker use
 * alongside them (type tree fields, arena lifecycle, the registry's layout
 * and lookup). Operations themselves include only fnworker.h.
 */
#ifndef FNW_OPERATION_H
#define FNW_OPERATION_H

#include "codecs/arena.h"
#include "codecs/error.h"
#include "codecs/type.h"
#include "codecs/value.h"
#include "fnworker.h"
#include "runtime/record.h"
#include "runtime/registry.h"

#endif
