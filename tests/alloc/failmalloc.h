/* tests/alloc/failmalloc.h — allocation-failure injection for the
 * allocation tests. The library's objects are linked with every call to
 * malloc, calloc, realloc, strdup and strndup redirected to the wrappers in
 * failmalloc.c (ld --wrap, applied to libfnw.a alone, so the tests' own
 * allocations and those inside shared libraries are not counted). The
 * wrappers count every call; once armed with n, call number n (counting
 * from the arm) returns NULL, once, and every other call goes through. */
#ifndef FNW_TEST_FAILMALLOC_H
#define FNW_TEST_FAILMALLOC_H

#include <stddef.h>

/* Restarts the count; call n (1-based) fails; 0 never fails (counts only). */
void failmalloc_arm(unsigned long n);
/* No later call fails; the count goes on. */
void failmalloc_disarm(void);
/* Calls counted since the last arm. */
unsigned long failmalloc_count(void);
/* 1 when the armed call has failed. */
int failmalloc_failed(void);

#endif
