/* tests/alloc/alloc_engine.c — allocation failures in the engine running
 * one small bundle through the built-in `echo` on a real loop: per element
 * (capacity 4, so the queue fills and drains), in batches, and per element
 * with failing attempts that the retry strategy repeats. The engine's
 * creation and the bundle are both under test: either the engine is not
 * created (an error), or the bundle ends through the sink's failed
 * callback with a message, or it finishes with every input echoed once.
 * A bundle that ends neither way within the guard is a hang. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/alloc/alloc_run.h"
#include "tests/unit/test_engine_harness.h"

#define N_INPUTS 24

typedef struct fixture {
    harness h;
    fnw_spec spec;
    const char *const *kv;
} fixture;

static fixture *fx_new(const fnw_spec *s, const char *const *kv)
{
    fixture *fx = calloc(1, sizeof *fx);
    h_init(&fx->h);
    h_inputs(&fx->h, N_INPUTS);
    /* room for every output up front: the harness's own realloc stays out of the way */
    fx->h.cap_out = 4 * N_INPUTS;
    fx->h.outs = calloc(fx->h.cap_out, sizeof *fx->h.outs);
    fx->spec = *s;
    fx->kv = kv;
    return fx;
}

static int engine_run(void *p, fnw_error *err)
{
    fixture *fx = p;
    harness *h = &fx->h;
    if (h_create_opts(h, "echo", &fx->spec, fx->kv) < 0) {
        *err = h->err;
        return -1;
    }
    h_begin(h, "b1");
    h_feed(h);
    h_loop(h, 20);
    if (h->guard_fired)
        return 4;     /* neither finished nor failed: a hang */
    if (h->failed)
        return fnw_error_set(err, "%s", h->fail_msg);
    return h->finished ? 0 : 5;
}

/* Every input came out once (order is the echo's business). */
static int engine_verify(void *p)
{
    fixture *fx = p;
    int seen[N_INPUTS] = {0};
    if (fx->h.n_out != N_INPUTS)
        return 0;
    for (size_t i = 0; i < fx->h.n_out; i++) {
        int32_t v = fx->h.outs[i].v;
        if (fx->h.outs[i].is_null || v < 0 || v >= N_INPUTS || seen[v]++)
            return 0;
    }
    return 1;
}

static void engine_teardown(void *p)
{
    fixture *fx = p;
    h_free(&fx->h);
    free(fx);
}

/* ---- the three bundles ------------------------------------------------------------ */

static void *per_element_setup(void)
{
    static const char *const kv[] = {"delay_ms=1", "seed=3", NULL};
    fnw_spec s = h_spec();
    s.capacity = 4;
    s.timeout_ms = 5000;
    return fx_new(&s, kv);
}

static void *batch_setup(void)
{
    static const char *const kv[] = {"delay_ms=1", NULL};
    fnw_spec s = h_spec();
    s.batched = 1;
    s.batch_size = 5;
    s.capacity = 12;
    s.timeout_ms = 5000;
    return fx_new(&s, kv);
}

static void *retry_setup(void)
{
    static const char *const kv[] = {"fail_every=3", NULL};
    fnw_spec s = h_spec();
    s.capacity = 6;
    s.timeout_ms = 5000;
    s.retry.kind = FNW_RETRY_FIXED_DELAY;
    s.retry.max_attempts = 3;
    s.retry.delay_ms = 1;
    s.retry.on_error = 1;
    return fx_new(&s, kv);
}

static const alloc_scenario per_element = {"engine_per_element", per_element_setup, engine_run, engine_verify,
                                           engine_teardown};
static const alloc_scenario batch = {"engine_batch", batch_setup, engine_run, engine_verify, engine_teardown};
static const alloc_scenario retry = {"engine_retry", retry_setup, engine_run, engine_verify, engine_teardown};

int main(int argc, char **argv)
{
    const alloc_scenario *all[] = {&per_element, &batch, &retry};
    return alloc_main(all, sizeof all / sizeof all[0], argc, argv);
}
