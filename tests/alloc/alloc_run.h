/* tests/alloc/alloc_run.h — the driver of the allocation tests: a scenario
 * is run once with nothing failing, which counts its allocations (K), then
 * once for every N in 1..K with allocation N failing. Each run is a fork()ed
 * child, so a crash, an abort, a hang (alarm) or a leak (LeakSanitizer
 * reports at the child's exit) is caught and named with its N, and every run
 * starts from the same state.
 *
 * A run must end one of two ways: run() returns -1 with a message that says
 * "out of memory" (a clean error a user can act on), or run() returns 0 and verify() finds the result right
 * (the code got over the failure). Anything else fails the test: a success
 * with a wrong result, an error without a message or with one that blames
 * something else (a limit, the input), an error when nothing
 * failed, a sanitizer report, a signal, or a child that did not return. */
#ifndef FNW_TEST_ALLOC_RUN_H
#define FNW_TEST_ALLOC_RUN_H

#include <stddef.h>

#include "codecs/error.h"
#include "tests/alloc/failmalloc.h"

typedef struct alloc_scenario {
    const char *name;
    /* Unarmed, in the child before run(): builds the inputs; NULL if it cannot. */
    void *(*setup)(void);
    /* Armed: the code under test. 0 on success, -1 with err filled. */
    int (*run)(void *fx, fnw_error *err);
    /* Unarmed, after a success: 1 when the result is right. */
    int (*verify)(void *fx);
    /* Unarmed: frees everything setup and run left (both outcomes). */
    void (*teardown)(void *fx);
} alloc_scenario;

/* Runs every scenario (or the one named by argv[1], with N = argv[2] alone
 * when given) and prints one line per scenario; returns the exit status.
 * ALLOC_STRIDE=k in the environment runs every k-th N only (a short run). */
int alloc_main(const alloc_scenario *const *s, size_t n, int argc, char **argv);

#endif
