/* tests/unit/binding_build.h — builders for the binding tests: ROW types
 * with chosen field names (R(n, "name", type, ...)), one-element containers
 * (C(kind, element)) and MAP types (M(key, value)). Each assertion fails the
 * test at the builder call. */
#ifndef FNW_BINDING_BUILD_H
#define FNW_BINDING_BUILD_H

#include <check.h>
#include <stdarg.h>

#include "codecs/type.h"
#include "tests/unit/type_build.h"

/* ROW of n fields given as name, type pairs. */
static inline fnw_type *R(int n, ...)
{
    fnw_type *t = T(FNW_ROW);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        const char *name = va_arg(ap, const char *);
        fnw_error err;
        ck_assert_int_eq(fnw_type_add_child(t, va_arg(ap, fnw_type *), name, &err), 0);
    }
    va_end(ap);
    return t;
}

/* BASIC_ARRAY, PRIMITIVE_ARRAY, OBJECT_ARRAY or LIST of elem. */
static inline fnw_type *C(fnw_kind k, fnw_type *elem)
{
    fnw_type *t = T(k);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(t, elem, NULL, &err), 0);
    return t;
}

static inline fnw_type *M(fnw_type *key, fnw_type *value)
{
    fnw_type *t = T(FNW_MAP);
    fnw_error err;
    ck_assert_int_eq(fnw_type_add_child(t, key, NULL, &err), 0);
    ck_assert_int_eq(fnw_type_add_child(t, value, NULL, &err), 0);
    return t;
}

#endif
