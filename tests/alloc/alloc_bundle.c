/* tests/alloc/alloc_bundle.c — allocation failures in one whole bundle on
 * the fake data plane (the unit tests' fake stream): a processor opened for
 * a plan of one `echo` step (capacity 4; scenario bundle) or a chain of two
 * (then a batched `echo`, batches of 5; bundle_chain), the bundle started, 24 INT
 * records delivered in two Elements messages (is_last on the second), the
 * outputs written to the sink and every send completed. Either something
 * fails before the bundle starts (an error), or the bundle reports done
 * with an error, or it reports done without one after writing every
 * record; ending neither way within the guard is a hang. */
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/builtins.h"
#include "tests/alloc/alloc_run.h"
#include "tests/unit/fake_data_io.h"
#include "worker/bundle.h"

#define N_RECORDS 24

typedef struct fixture {
    struct ev_loop *loop;
    fnw_logger lg;
    fnw_data_mgr dm;
    fnw_registry reg;
    fnw_type *type;
    fnw_plan_step step[2];
    fnw_plan plan;
    fnw_processor *proc;
    fnw_bundle *b;
    int done, guard_fired;
    char error[FNW_ERROR_MAX];
    size_t completed;      /* sends whose done callback ran */
    ev_timer pump, guard;
} fixture;

static char *sinks[] = {"write"};

static void on_done(void *user, fnw_bundle *b, const char *error, const fnw_metric_set *m)
{
    fixture *fx = user;
    fx->done = 1;
    snprintf(fx->error, sizeof fx->error, "%s", error ? error : "");
    ev_break(fx->loop, EVBREAK_ALL);
}

/* Completes every send made so far (the stream wrote it). */
static void pump_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    fixture *fx = t->data;
    while (fake_last && fx->completed < fake_last->n_sent) {
        fake_sent *m = &fake_last->sent[fx->completed++];
        m->done(m->arg, 1);
    }
}

static void guard_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    ((fixture *)t->data)->guard_fired = 1;
    ev_break(loop, EVBREAK_ALL);
}

static void *fx_new(size_t n_steps)
{
    fixture *fx = calloc(1, sizeof *fx);
    fnw_error err;
    fx->loop = ev_loop_new(EVFLAG_AUTO);
    fnw_log_init(&fx->lg, fx->loop, FNW_LOG_INFO);
    fnw_data_config cfg = {0};
    fake_data_init(&fx->dm, fx->loop, &cfg);
    fnw_registry_init(&fx->reg);
    fnw_builtins_register(&fx->reg);
    fx->type = fnw_type_new(FNW_INT);
    static char *ids[2] = {"transform-0", "transform-1"};
    for (size_t i = 0; i < n_steps; i++) {
        fnw_plan_step *st = &fx->step[i];
        st->transform_id = ids[i];
        st->op = fnw_registry_find(&fx->reg, "echo", &err);
        st->input_type = st->output_type = fx->type;
        st->spec.capacity = 4;
        if (i == 1) {
            st->spec.batched = 1;
            st->spec.batch_size = 5;
            st->spec.capacity = 10;
            st->spec.timeout_ms = 5000;
        }
        if (!st->op || fnw_spec_validate(&st->spec, &err) < 0) {
            fprintf(stderr, "step %zu: %s\n", i, err.msg);
            return NULL;
        }
    }
    fx->plan.descriptor_id = "d-1";
    fx->plan.source_id = "read";
    fx->plan.data_url = "fake:1";
    fx->plan.input_type = fx->type;
    fx->plan.input_skip = fnw_skip_program_new(fx->type, &err);
    fx->plan.main_sink_id = sinks[0];
    fx->plan.sink_ids = sinks;
    fx->plan.n_sinks = 1;
    fx->plan.steps = fx->step;
    fx->plan.n_steps = n_steps;
    ev_timer_init(&fx->pump, pump_cb, 0.001, 0.001);
    fx->pump.data = fx;
    ev_timer_init(&fx->guard, guard_cb, 20, 0);
    fx->guard.data = fx;
    return fx;
}

static void *bundle_setup(void)
{
    return fx_new(1);
}

static void *chain_setup(void)
{
    return fx_new(2);
}

static int bundle_run(void *p, fnw_error *err)
{
    fixture *fx = p;
    if (fnw_processors_open(fx->loop, &fx->plan, &fx->proc, err) < 0)
        return -1;
    if (fnw_inbound_expect(&fx->dm, "i-1") < 0)
        return fnw_error_set(err, "out of memory expecting the instruction");
    fx->b = fnw_bundle_start(fx->loop, &fx->lg, &fx->dm, fx->proc, "i-1", on_done, fx);
    if (!fx->b)
        return fnw_error_set(err, "out of memory starting the bundle");
    uint8_t in[N_RECORDS * 22];
    size_t half = 0, n = 0;
    for (int i = 0; i < N_RECORDS; i++) {
        n += fake_record_int(in + n, 1000 + i, i);
        if (i == N_RECORDS / 2 - 1)
            half = n;
    }
    if (fake_last) {
        fake_deliver(fake_last, "i-1", "read", in, half, 0);
        fake_deliver(fake_last, "i-1", "read", in + half, n - half, 1);
    }
    ev_timer_start(fx->loop, &fx->pump);
    ev_timer_start(fx->loop, &fx->guard);
    if (!fx->done)
        ev_run(fx->loop, 0);
    ev_timer_stop(fx->loop, &fx->pump);
    ev_timer_stop(fx->loop, &fx->guard);
    if (!fx->done)
        return 4;     /* a hang */
    if (fx->error[0])
        return fnw_error_set(err, "%s", fx->error);
    return 0;
}

/* Counts the length-prefixed records of one Data entry for the sink. */
static int count_entry(void *arg, const fnw_elem_data *d)
{
    size_t *count = arg;
    if (d->transform_len != 5 || memcmp(d->transform_id, "write", 5))
        return 0;
    if (d->is_last)
        count[1]++;
    for (size_t k = 0; k < d->data_len; k += 1 + d->data[k])
        count[0]++;
    return 0;
}

/* Every record was written to the sink, and is_last once. */
static int bundle_verify(void *p)
{
    fixture *fx = p;
    size_t count[2] = {0, 0}, timers;
    fnw_error err;
    if (!fake_last)
        return 0;
    for (size_t i = 0; i < fake_last->n_sent; i++)
        if (fnw_elements_each(fake_last->sent[i].p, fake_last->sent[i].n, count_entry, count, &timers, &err) < 0)
            return 0;
    return fx->completed == fake_last->n_sent && count[0] == N_RECORDS && count[1] == 1;
}

static void bundle_teardown(void *p)
{
    fixture *fx = p;
    if (fx->b) {
        fnw_bundle_stop(fx->b);
        fnw_bundle_free(fx->b);
    }
    fnw_processors_close(fx->proc);
    fnw_skip_program_free(fx->plan.input_skip);
    fnw_type_free(fx->type);
    fnw_data_stop(&fx->dm);
    fnw_data_free(&fx->dm);
    fnw_log_free(&fx->lg);
    ev_loop_destroy(fx->loop);
    free(fx);
}

static const alloc_scenario bundle = {"bundle", bundle_setup, bundle_run, bundle_verify, bundle_teardown};
static const alloc_scenario chain = {"bundle_chain", chain_setup, bundle_run, bundle_verify, bundle_teardown};

int main(int argc, char **argv)
{
    const alloc_scenario *all[] = {&bundle, &chain};
    return alloc_main(all, sizeof all / sizeof all[0], argc, argv);
}
