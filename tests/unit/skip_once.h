/* tests/unit/skip_once.h — fnw_skip_program_run for tests that skip a value or two
 * of a type: compiles the type's skip program, skips with it, frees it.
 * Tests that skip many values compile the program once themselves. */
#ifndef FNW_SKIP_ONCE_H
#define FNW_SKIP_ONCE_H

#include <check.h>

#include "codecs/ser.h"

static inline int skip_once(const fnw_type *t, const uint8_t *p, size_t n, size_t *used, fnw_error *err)
{
    fnw_skip_program *sp = fnw_skip_program_new(t, err);
    ck_assert_msg(sp != NULL, "no skip program: %s", err->msg);
    int rc = fnw_skip_program_run(sp, p, n, used, err);
    fnw_skip_program_free(sp);
    return rc;
}

#endif
