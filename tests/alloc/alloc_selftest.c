/* tests/alloc/alloc_selftest.c — the driver (alloc_run.c) against
 * scenarios that get allocation failure wrong on purpose: each must be
 * judged bad (a success with a wrong result, an error that blames
 * something else, an error without a message, a crash, a hang, and under
 * LeakSanitizer a leak), and one that gets it right must be judged clean.
 * So the allocation tests can fail. The allocations are the library's
 * (fnw_type_new), the only ones the wrap counts. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecs/type.h"
#include "tests/alloc/alloc_run.h"

#if defined(__SANITIZE_ADDRESS__)
#define SELFTEST_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SELFTEST_LSAN 1
#endif
#endif

typedef struct fixture {
    fnw_type *a, *b;
} fixture;

static void *fx_setup(void)
{
    return calloc(1, sizeof(fixture));
}

static int fx_verify(void *p)
{
    fixture *fx = p;
    return fx->a && fx->b;
}

static void fx_teardown(void *p)
{
    fixture *fx = p;
    fnw_type_free(fx->a);
    fnw_type_free(fx->b);
    free(fx);
}

/* Right: every failure is an error that says so, nothing kept. */
static int run_clean(void *p, fnw_error *err)
{
    fixture *fx = p;
    if (!(fx->a = fnw_type_new(FNW_INT)) || !(fx->b = fnw_type_new(FNW_INT)))
        return fnw_error_set(err, "out of memory building a type");
    return 0;
}

/* Wrong: claims success without the second type. */
static int run_ignores(void *p, fnw_error *err)
{
    fixture *fx = p;
    if (!(fx->a = fnw_type_new(FNW_INT)))
        return fnw_error_set(err, "out of memory building a type");
    fx->b = fnw_type_new(FNW_INT);
    return 0;
}

/* Wrong: blames the input. */
static int run_blames(void *p, fnw_error *err)
{
    fixture *fx = p;
    if (!(fx->a = fnw_type_new(FNW_INT)) || !(fx->b = fnw_type_new(FNW_INT)))
        return fnw_error_set(err, "the input is malformed");
    return 0;
}

/* Wrong: fails without a message. */
static int run_silent(void *p, fnw_error *err)
{
    fixture *fx = p;
    if (!(fx->a = fnw_type_new(FNW_INT)) || !(fx->b = fnw_type_new(FNW_INT)))
        return -1;
    return 0;
}

/* Wrong: uses what it did not get. */
static int run_crashes(void *p, fnw_error *err)
{
    fixture *fx = p;
    fx->a = fnw_type_new(FNW_INT);
    fx->b = fnw_type_new(FNW_INT);
    volatile int *kind = fx->a ? (volatile int *)&fx->b->kind : NULL;
    return *kind == FNW_INT ? 0 : -1;
}

/* Wrong: waits forever for what it did not get. */
static int run_hangs(void *p, fnw_error *err)
{
    fixture *fx = p;
    if (!(fx->a = fnw_type_new(FNW_INT)) || !(fx->b = fnw_type_new(FNW_INT)))
        for (;;)
            pause();
    return 0;
}

#ifdef SELFTEST_LSAN
/* Wrong: drops what it got when the second allocation fails. */
static int run_leaks(void *p, fnw_error *err)
{
    fixture *fx = p;
    fnw_type *a = fnw_type_new(FNW_INT);
    if (!a)
        return fnw_error_set(err, "out of memory building a type");
    if (!(fx->b = fnw_type_new(FNW_INT)))
        return fnw_error_set(err, "out of memory building a type");
    fx->a = a;
    return 0;
}
#endif

#define SCENARIO(name, run) {name, fx_setup, run, fx_verify, fx_teardown}

int main(void)
{
    static const alloc_scenario clean = SCENARIO("clean", run_clean);
    static const alloc_scenario bad[] = {
        SCENARIO("ignores", run_ignores), SCENARIO("blames", run_blames), SCENARIO("silent", run_silent),
        SCENARIO("crashes", run_crashes), SCENARIO("hangs", run_hangs),
#ifdef SELFTEST_LSAN
        SCENARIO("leaks", run_leaks),
#endif
    };
    const alloc_scenario *one[1] = {&clean};
    if (alloc_main(one, 1, 1, NULL) != 0) {
        printf("alloc selftest: a right scenario was judged bad\n");
        return 1;
    }
    setenv("ALLOC_TIMEOUT_S", "1", 1);
    int saved_out = dup(1), saved = dup(2), null = open("/dev/null", O_WRONLY);
    size_t caught = 0, n = sizeof bad / sizeof bad[0];
    for (size_t i = 0; i < n; i++) {
        one[0] = &bad[i];
        fflush(stdout);
        dup2(null, 1);    /* the verdicts and reports expected here */
        dup2(null, 2);
        int rc = alloc_main(one, 1, 1, NULL);
        fflush(stdout);
        dup2(saved_out, 1);
        dup2(saved, 2);
        if (rc != 0)
            caught++;
        else
            printf("alloc selftest: scenario '%s' was judged clean\n", bad[i].name);
    }
    printf("alloc selftest: the driver judged %zu of %zu wrong scenarios bad%s\n", caught, n,
#ifdef SELFTEST_LSAN
           " (a leak among them)"
#else
           " (leaks are judged under make allocfail)"
#endif
    );
    return caught == n ? 0 : 1;
}
