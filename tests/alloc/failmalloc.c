/* tests/alloc/failmalloc.c — the wrappers behind failmalloc.h: the link of
 * the allocation tests sends the library's calls to malloc, calloc,
 * realloc, strdup and strndup here (__wrap_x), which call the plain
 * functions (this file is linked without --wrap). One counter for all
 * five, so "the nth allocation" means the nth call of any of them. With
 * ALLOC_TRACE set (and a sanitizer build), the failing call prints its
 * stack to stderr. Atomic, as a library thread may allocate too. */
#include "tests/alloc/failmalloc.h"

#include <stdlib.h>
#include <string.h>

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

/* The sanitizers' stack printer, when the build has one (weak: absent otherwise). */
extern void __sanitizer_print_stack_trace(void) __attribute__((weak));

static unsigned long count, fail_at;
static int failed;

void failmalloc_arm(unsigned long n)
{
    __atomic_store_n(&count, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&failed, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fail_at, n, __ATOMIC_SEQ_CST);
}

void failmalloc_disarm(void)
{
    __atomic_store_n(&fail_at, 0, __ATOMIC_SEQ_CST);
}

unsigned long failmalloc_count(void)
{
    return __atomic_load_n(&count, __ATOMIC_SEQ_CST);
}

int failmalloc_failed(void)
{
    return __atomic_load_n(&failed, __ATOMIC_SEQ_CST);
}

/* 1 when this call is the one to fail. */
static int fail_now(void)
{
    unsigned long k = __atomic_add_fetch(&count, 1, __ATOMIC_SEQ_CST);
    if (k != __atomic_load_n(&fail_at, __ATOMIC_SEQ_CST))
        return 0;
    __atomic_store_n(&failed, 1, __ATOMIC_SEQ_CST);
    if (getenv("ALLOC_TRACE") && __sanitizer_print_stack_trace)
        __sanitizer_print_stack_trace();    /* where the failing allocation is */
    return 1;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    return fail_now() ? NULL : calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return fail_now() ? NULL : strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return fail_now() ? NULL : strndup(s, n);
}
