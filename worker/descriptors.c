/* worker/descriptors.c — the descriptor cache (see descriptors.h). */
#include "worker/descriptors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/relay_route.h"

/* A bundle waiting for its descriptor. */
typedef struct waiting_bundle {
    struct waiting_bundle *next;
    char *instruction_id;
} waiting_bundle;

struct fnw_descriptor {
    fnw_descriptor *next;
    char *id;
    fnw_plan *plan;
    int failed;                /* known without a plan: error says why */
    int relayed;               /* PyFlink's Python worker runs it (worker/relay.h) */
    char error[FNW_ERROR_MAX]; /* kept without allocating, so it cannot be lost */
    char *data_url;            /* known even when the plan failed */
    int fetching;
    fnw_processors idle;
    waiting_bundle *waiting, *waiting_tail;
    size_t n_waiting;
};

void fnw_descriptors_init(fnw_descriptors *c, const fnw_registry *reg, fnw_logger *log,
                          const fnw_descriptors_events *ev, void *user)
{
    c->list = NULL;
    c->registry = reg;
    c->log = log;
    c->ev = ev;
    c->user = user;
}

static void waiting_free(waiting_bundle *p)
{
    free(p->instruction_id);
    free(p);
}

void fnw_descriptors_free(fnw_descriptors *c)
{
    fnw_descriptor *d = c->list;
    while (d) {
        fnw_descriptor *next = d->next;
        fnw_processors_free(&d->idle);
        while (d->waiting) {
            waiting_bundle *p = d->waiting;
            d->waiting = p->next;
            waiting_free(p);
        }
        fnw_plan_free(d->plan);
        free(d->data_url);
        free(d->id);
        free(d);
        d = next;
    }
    c->list = NULL;
}

fnw_descriptor *fnw_descriptors_get(fnw_descriptors *c, const char *id)
{
    for (fnw_descriptor *d = c->list; d; d = d->next)
        if (!strcmp(d->id, id))
            return d;
    fnw_descriptor *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->id = strdup(id);
    if (!d->id) {
        free(d);
        return NULL;
    }
    fnw_processors_init(&d->idle);
    d->next = c->list;
    c->list = d;
    return d;
}

/* The plan's operations in order, "echo -> project -> identity" (how Flink
 * fused the job's functions into this operator), cut with "..." to fit. */
static void plan_chain(const fnw_plan *p, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < p->n_steps && len + 1 < cap; i++) {
        int n = snprintf(out + len, cap - len, "%s%s", i ? " -> " : "", p->steps[i].op->name);
        if (n < 0 || (size_t)n >= cap - len) {
            if (cap > 4)
                memcpy(out + cap - 4, "...", 4);
            return;
        }
        len += (size_t)n;
    }
}

/* why set: the descriptor could not be had, for that reason (pb, when
 * given, is what could be read of it: its data endpoint is kept). */
static void descriptor_set(fnw_descriptors *c, fnw_descriptor *d, const pb_ProcessBundleDescriptor *pb,
                           const char *why)
{
    fnw_error err;
    d->fetching = 0;
    if (why || !pb) {
        d->failed = 1;
        snprintf(d->error, sizeof d->error, "%s", why ? why : "the descriptor could not be had");
        /* Out of memory here only loses the endpoint: the bundles still fail with why. */
        if (pb && !d->data_url && fnw_plan_data_url(pb, &d->data_url, &err) < 0)
            d->data_url = NULL;
        return;
    }
    fnw_plan_free(d->plan);
    d->plan = NULL;
    d->failed = 0;
    d->relayed = 0;
    free(d->data_url);
    d->data_url = NULL;
    fnw_route route = FNW_ROUTE_NATIVE;
    if (fnw_plan_data_url(pb, &d->data_url, &err) < 0)
        route = FNW_ROUTE_MIXED; /* out of memory: err says so */
    else if (c->ev->on_relayed)
        route = fnw_relay_route_classify(pb, &err);
    if (route == FNW_ROUTE_RELAYED) {
        if (c->ev->on_relayed(c->user, d, pb, &err) < 0) {
            d->failed = 1;
            snprintf(d->error, sizeof d->error, "%s", err.msg);
        } else {
            d->relayed = 1;
            fnw_info(c->log, "relay: descriptor %s runs in PyFlink's Python worker (data endpoint %s)", d->id,
                     d->data_url ? d->data_url : "none");
        }
    } else if (route == FNW_ROUTE_MIXED || fnw_plan_build(pb, c->registry, &d->plan, &err) < 0) {
        d->failed = 1;
        snprintf(d->error, sizeof d->error, "%s", err.msg);
    } else {
        char chain[512];
        plan_chain(d->plan, chain, sizeof chain);
        fnw_info(c->log, "descriptor %s: %zu operation(s) %s, input from %s, data endpoint %s", d->id,
                 d->plan->n_steps, chain, d->plan->source_id, d->plan->data_url);
    }
}

void fnw_descriptors_set(fnw_descriptors *c, fnw_descriptor *d, const pb_ProcessBundleDescriptor *pb)
{
    descriptor_set(c, d, pb, NULL);
}

void fnw_descriptors_arrived(fnw_descriptors *c, fnw_descriptor *d, const pb_ProcessBundleDescriptor *pb,
                             const char *why)
{
    descriptor_set(c, d, pb, why);
    waiting_bundle *p = d->waiting;
    d->waiting = d->waiting_tail = NULL;
    d->n_waiting = 0;
    while (p) {
        waiting_bundle *next = p->next;
        c->ev->on_ready(c->user, d, p->instruction_id);
        waiting_free(p);
        p = next;
    }
}

int fnw_descriptors_wait(fnw_descriptors *c, fnw_descriptor *d, const char *instruction_id)
{
    waiting_bundle *p = calloc(1, sizeof *p);
    if (p)
        p->instruction_id = strdup(instruction_id);
    if (!p || !p->instruction_id) {
        free(p);
        return -1;
    }
    if (d->waiting_tail)
        d->waiting_tail->next = p;
    else
        d->waiting = p;
    d->waiting_tail = p;
    d->n_waiting++;
    if (d->fetching)
        return 0;
    d->fetching = 1;
    return 1;
}

const char *fnw_descriptors_id(const fnw_descriptor *d)
{
    return d->id;
}

int fnw_descriptors_known(const fnw_descriptor *d)
{
    return d->plan || d->failed || d->relayed;
}

int fnw_descriptors_relayed(const fnw_descriptor *d)
{
    return d->relayed;
}

const fnw_plan *fnw_descriptors_plan(const fnw_descriptor *d)
{
    return d->plan;
}

const char *fnw_descriptors_error(const fnw_descriptor *d)
{
    return d->failed ? d->error : NULL;
}

const char *fnw_descriptors_data_url(const fnw_descriptor *d)
{
    return d->data_url;
}

size_t fnw_descriptors_waiting(const fnw_descriptor *d)
{
    return d->n_waiting;
}

fnw_processors *fnw_descriptors_processors(fnw_descriptor *d)
{
    return &d->idle;
}
