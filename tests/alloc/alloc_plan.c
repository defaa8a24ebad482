/* tests/alloc/alloc_plan.c — allocation failures while a
 * ProcessBundleDescriptor becomes a plan: Flink's layout with a chain of
 * two functions, an `echo` with options and an `identity`, planned
 * directly (plan) and through the descriptor cache with two bundles
 * waiting for it (descriptors). A failure ends in an error naming memory;
 * through the cache, every waiting bundle is still handed back (with the
 * error) and the data endpoint is still known; and a keyed operator whose
 * echo takes input_field "f1" of Row(f0=<key>, f1=<value>) (keyed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/builtins.h"
#include "tests/alloc/alloc_run.h"
#include "tests/unit/descriptor_build.h"
#include "worker/descriptors.h"

#define WIRE "beam:coder:param_windowed_value:v1"

typedef Fnworker__V1__OperationSpec__OptionsEntry OptEntry;

typedef struct fixture {
    builder b;
    fnw_registry reg;
    fnw_plan *plan;
    /* descriptors */
    fnw_descriptors cache;
    fnw_descriptor *d;
    int ready;
} fixture;

/* transform-0 runs echo with two options. */
static void echo_step(builder *b)
{
    static OptEntry e[2];
    static OptEntry *ev[2];
    static const char *const kv[2][2] = {{"delay_ms", "0"}, {"seed", "7"}};
    for (int i = 0; i < 2; i++) {
        OptEntry init = FNWORKER__V1__OPERATION_SPEC__OPTIONS_ENTRY__INIT;
        e[i] = init;
        e[i].key = (char *)kv[i][0];
        e[i].value = (char *)kv[i][1];
        ev[i] = &e[i];
    }
    pb_OperationSpec os = FNWORKER__V1__OPERATION_SPEC__INIT;
    os.operation = "echo";
    os.n_options = 2;
    os.options = ev;
    transform(b, "transform-0")->spec = pardo_spec(b, STATELESS, 0, &os, 0);
}

static void *fx_setup(void)
{
    fixture *fx = calloc(1, sizeof *fx);
    flink_shape(&fx->b, 2, WIRE);
    echo_step(&fx->b);
    fnw_registry_init(&fx->reg);
    fnw_builtins_register(&fx->reg);
    return fx;
}

/* NULL-safe string equality. */
static int same(const char *a, const char *b)
{
    return a && !strcmp(a, b);
}

/* Everything the plan names is there. */
static int chain_ok(const fnw_plan *p)
{
    if (!p || p->n_steps != 2 || !same(p->descriptor_id, "1-2") || !same(p->source_id, "fn/read/input:0") ||
        !same(p->data_url, "localhost:7777") || !same(p->main_sink_id, "fn/write/output:0") ||
        p->n_sinks != 1 || !same(p->sink_ids[0], "fn/write/output:0") || !p->input_skip ||
        !p->input_type || !p->output_type)
        return 0;
    const fnw_plan_step *e = &p->steps[0], *i = &p->steps[1];
    return same(e->transform_id, "transform-0") && same(e->op->name, "echo") && e->opts.count == 2 &&
           same(e->opts.items[0].key, "delay_ms") && same(e->opts.items[1].value, "7") &&
           same(i->transform_id, "transform-1") && same(i->op->name, "identity");
}

/* ---- plan: fnw_plan_build ---------------------------------------------------- */

static int plan_run(void *p, fnw_error *err)
{
    fixture *fx = p;
    return fnw_plan_build(&fx->b.d, &fx->reg, &fx->plan, err);
}

static int plan_verify(void *p)
{
    return chain_ok(((fixture *)p)->plan);
}

static void plan_teardown(void *p)
{
    fixture *fx = p;
    fnw_plan_free(fx->plan);
    builder_free(&fx->b);
    free(fx);
}

/* ---- descriptors: two bundles wait, the descriptor arrives ------------------------ */

static void on_ready(void *user, fnw_descriptor *d, const char *instruction_id)
{
    ((fixture *)user)->ready++;
}

static const fnw_descriptors_events events = {on_ready, NULL};

static int cache_run(void *p, fnw_error *err)
{
    fixture *fx = p;
    fnw_descriptors_init(&fx->cache, &fx->reg, NULL, &events, fx);
    fx->d = fnw_descriptors_get(&fx->cache, "1-2");
    if (!fx->d)
        return fnw_error_set(err, "out of memory adding the descriptor");
    int queued = 0;
    static const char *const ids[2] = {"b-1", "b-2"};
    for (int i = 0; i < 2; i++) {
        int rc = fnw_descriptors_wait(&fx->cache, fx->d, ids[i]);
        if (rc < 0)
            break;    /* out of memory: b-i was not queued; the ones before were */
        queued++;
    }
    fnw_descriptors_arrived(&fx->cache, fx->d, &fx->b.d, NULL);
    if (fx->ready != queued)
        return 2;     /* a waiting bundle was lost (or started twice) */
    if (queued < 2)
        return fnw_error_set(err, "out of memory queueing a bundle");
    if (!fnw_descriptors_plan(fx->d)) {
        const char *why = fnw_descriptors_error(fx->d);
        return fnw_error_set(err, "%s", why ? why : "");
    }
    if (!fnw_descriptors_data_url(fx->d))
        return 3;     /* planned, but the runner would wait for a Data stream forever */
    return 0;
}

static int cache_verify(void *p)
{
    fixture *fx = p;
    return fx->ready == 2 && chain_ok(fnw_descriptors_plan(fx->d));
}

static void cache_teardown(void *p)
{
    fixture *fx = p;
    fnw_descriptors_free(&fx->cache);
    builder_free(&fx->b);
    free(fx);
}

/* ---- keyed: input_field "f1" of ROW<f0 PICKLED_BYTES, f1 ROW<f0 STRING, f1 INT>> -------- */

static void *keyed_setup(void)
{
    fixture *fx = calloc(1, sizeof *fx);
    shape_init(&fx->b);
    pb_TypeInfo *fields[2] = {ti(&fx->b, 20), str_int(&fx->b)};
    shape_typed(&fx->b, 1, WIRE, row_ti(&fx->b, 2, fields), str_int(&fx->b));
    pb_OperationSpec os = FNWORKER__V1__OPERATION_SPEC__INIT;
    os.operation = "echo";
    os.input_field = "f1";
    transform(&fx->b, "transform-0")->spec = pardo_spec(&fx->b, STATELESS, 0, &os, 0);
    fnw_registry_init(&fx->reg);
    fnw_builtins_register(&fx->reg);
    return fx;
}

static int keyed_verify(void *p)
{
    const fnw_plan *pl = ((fixture *)p)->plan;
    return pl && pl->n_steps == 1 && pl->input_field && same(pl->steps[0].input_field, "f1") &&
           pl->steps[0].input_type == fnw_ser_field_type(pl->input_field) &&
           pl->steps[0].output_type == pl->output_type;
}

static const alloc_scenario plan = {"plan", fx_setup, plan_run, plan_verify, plan_teardown};
static const alloc_scenario keyed = {"keyed", keyed_setup, plan_run, keyed_verify, plan_teardown};
static const alloc_scenario descriptors = {"descriptors", fx_setup, cache_run, cache_verify, cache_teardown};

int main(int argc, char **argv)
{
    const alloc_scenario *all[] = {&plan, &descriptors, &keyed};
    return alloc_main(all, sizeof all / sizeof all[0], argc, argv);
}
