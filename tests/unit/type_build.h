/* tests/unit/type_build.h — short builders for the type trees unit tests
 * feed the codecs: T(kind) and TN(kind, n, children...), which names ROW
 * fields f0, f1, ... Each assertion fails the test at the builder call. */
#ifndef FNW_TYPE_BUILD_H
#define FNW_TYPE_BUILD_H

#include <check.h>
#include <stdarg.h>
#include <stdio.h>

#include "codecs/type.h"

static inline fnw_type *T(fnw_kind k)
{
    fnw_type *t = fnw_type_new(k);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* ROW or TUPLE of n children (ROW fields are named f0, f1, ...). */
static inline fnw_type *TN(fnw_kind k, int n, ...)
{
    fnw_type *t = T(k);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        fnw_error err;
        ck_assert_int_eq(fnw_type_add_child(t, va_arg(ap, fnw_type *), name, &err), 0);
    }
    va_end(ap);
    return t;
}

#endif
