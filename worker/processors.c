/* worker/processors.c — processors and their idle pools (see processors.h). */
#include "worker/processors.h"

#include <stdlib.h>

int fnw_processors_open(struct ev_loop *loop, const fnw_plan *plan, fnw_processor **out, fnw_error *err)
{
    fnw_processor *p = calloc(1, sizeof *p);
    if (!p)
        return fnw_error_set(err, "out of memory");
    p->plan = plan;
    p->engines = calloc(plan->n_steps, sizeof *p->engines);
    if (!p->engines) {
        free(p);
        return fnw_error_set(err, "out of memory");
    }
    for (size_t i = 0; i < plan->n_steps; i++) {
        const fnw_plan_step *st = &plan->steps[i];
        fnw_op_env env = {
            loop, &st->opts, st->input_type, st->output_type, st->transform_id, st->spec.batched, 0, 0, NULL
        };
        if (fnw_engine_new(loop, st->op, &st->spec, &env, &p->engines[i], err) < 0) {
            fnw_error_prefix(err, "transform '%s'", st->transform_id);
            fnw_processors_close(p);
            return -1;
        }
        p->n = i + 1;
        if (st->passthrough)
            fnw_engine_set_passthrough(p->engines[i]);
    }
    *out = p;
    return 0;
}

void fnw_processors_close(fnw_processor *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        fnw_engine_free(p->engines[i]);
    free(p->engines);
    free(p);
}

void fnw_processors_init(fnw_processors *pool)
{
    pool->idle = NULL;
    pool->n_idle = 0;
}

int fnw_processors_take(fnw_processors *pool, struct ev_loop *loop, const fnw_plan *plan, fnw_processor **out,
                        fnw_error *err)
{
    fnw_processor *p = pool->idle;
    if (!p)
        return fnw_processors_open(loop, plan, out, err);
    pool->idle = p->next;
    pool->n_idle--;
    p->next = NULL;
    *out = p;
    return 0;
}

void fnw_processors_put(fnw_processors *pool, fnw_processor *p)
{
    p->next = pool->idle;
    pool->idle = p;
    pool->n_idle++;
}

void fnw_processors_discard(fnw_processors *pool, fnw_processor *p)
{
    (void)pool;
    fnw_processors_close(p);
}

size_t fnw_processors_idle(const fnw_processors *pool)
{
    return pool->n_idle;
}

void fnw_processors_free(fnw_processors *pool)
{
    while (pool->idle) {
        fnw_processor *p = pool->idle;
        pool->idle = p->next;
        fnw_processors_close(p);
    }
    pool->n_idle = 0;
}
