/* runtime/counter.c — registering and adding to an operation's counters
 * (counter.h, fnworker.h). */
#include "runtime/counter.h"

#include <string.h>

#include "codecs/metric_names.h"

static int valid_name(const char *name)
{
    return name && fnw_metric_counter_name_ok(name, strlen(name));
}

fnw_counter *fnw_op_counter(const fnw_op_env *env, const char *name, fnw_error *err)
{
    if (!valid_name(name)) {
        fnw_error_set(err,
                      "counter name '%s' is not valid: 1 to %d characters of a-z, 0-9 and _, starting "
                      "with a letter",
                      name ? name : "(null)", FNW_COUNTER_NAME_MAX);
        return NULL;
    }
    fnw_counter_set *s = env ? env->counters : NULL;
    if (!s) {
        fnw_error_set(err, "counter '%s': counters are registered in open(), with the env it gets", name);
        return NULL;
    }
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].name, name) == 0)
            return &s->items[i];
    if (s->n >= FNW_COUNTERS_MAX) {
        fnw_error_set(err, "counter '%s': an operation instance has at most %d counters", name,
                      FNW_COUNTERS_MAX);
        return NULL;
    }
    fnw_counter *c = &s->items[s->n++];
    memcpy(c->name, name, strlen(name) + 1);
    c->value = 0;
    return c;
}

void fnw_counter_add(fnw_counter *c, int64_t n)
{
    if (c)
        __atomic_fetch_add(&c->value, n, __ATOMIC_RELAXED);
}

int64_t fnw_counter_value(const fnw_counter *c)
{
    return __atomic_load_n(&c->value, __ATOMIC_RELAXED);
}

void fnw_counter_set_reset(fnw_counter_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        __atomic_store_n(&s->items[i].value, 0, __ATOMIC_RELAXED);
}
