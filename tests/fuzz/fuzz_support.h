/* tests/fuzz/fuzz_support.h — what the fuzz targets share.
 *
 * CHECK(cond): a property that must hold for every input. A violation
 * aborts, which is how libFuzzer (and tests/fuzz/replay.c in make check)
 * sees a finding.
 *
 * fuzz_same_message(a, b): what a refusal met twice must be: a message,
 * the same both times.
 *
 * fuzz_leaf / fuzz_with: build a target's fixed Flink types (made once, not
 * under test); running out of memory there ends the run.
 */
#ifndef FNW_FUZZ_SUPPORT_H
#define FNW_FUZZ_SUPPORT_H

#include <stdlib.h>
#include <string.h>

#include "codecs/type.h"

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static inline int fuzz_same_message(const fnw_error *a, const fnw_error *b)
{
    return a->msg[0] != '\0' && strcmp(a->msg, b->msg) == 0;
}

static inline fnw_type *fuzz_leaf(fnw_kind k)
{
    fnw_type *t = fnw_type_new(k);
    if (!t)
        abort();
    return t;
}

/* Adds child (named, for a ROW) to t and returns t. */
static inline fnw_type *fuzz_with(fnw_type *t, fnw_type *child, const char *name)
{
    fnw_error err;
    if (fnw_type_add_child(t, child, name, &err) != 0)
        abort();
    return t;
}

#endif
