/* runtime/chain.c — a fused operator's engines run as one (see chain.h):
 * one link per step, whose engine sink forwards to the next step or to the
 * chain's sink. No per-record state of its own: a record's per-step life is
 * its engine's. */
#include "runtime/chain.h"

#include <stdlib.h>

struct fnw_chain_link {
    fnw_chain *c;
    size_t i;
    fnw_engine *next; /* step i + 1's engine; NULL for the last step */
};
typedef fnw_chain_link chain_link;

/* ---- what a step tells the chain --------------------------------------------------- */

/* Steps 0..n-2: the output goes on into the next step. */
static void link_emit(void *user, const fnw_record *out)
{
    fnw_engine_push(((chain_link *)user)->next, out);
}

static void link_ready(void *user)
{
    fnw_chain *c = ((chain_link *)user)->c;
    if (!c->failed && c->sink.ready && fnw_chain_has_space(c))
        c->sink.ready(c->sink.user);
}

static void link_failed(void *user, const char *message)
{
    chain_link *l = user;
    fnw_chain *c = l->c;
    if (c->failed)
        return;
    c->failed = 1;
    for (size_t k = 0; k < c->n; k++)
        if (k != l->i)
            fnw_engine_abort(c->engines[k]);
    if (c->sink.failed)
        c->sink.failed(c->sink.user, message);
}

static void link_finished(void *user)
{
    chain_link *l = user;
    fnw_chain *c = l->c;
    if (c->failed)
        return;
    if (l->next)
        fnw_engine_finish(l->next);
    else if (c->sink.finished)
        c->sink.finished(c->sink.user);
}

/* ---- public API ----------------------------------------------------------------------- */

fnw_chain *fnw_chain_new(fnw_engine *const *engines, size_t n)
{
    if (n == 0)
        return NULL;
    fnw_chain *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->engines = calloc(n, sizeof *c->engines);
    c->links = calloc(n, sizeof *c->links);
    if (!c->engines || !c->links) {
        fnw_chain_free(c);
        return NULL;
    }
    c->n = n;
    for (size_t i = 0; i < n; i++) {
        c->engines[i] = engines[i];
        c->links[i].c = c;
        c->links[i].i = i;
        c->links[i].next = i + 1 < n ? engines[i + 1] : NULL;
    }
    return c;
}

void fnw_chain_free(fnw_chain *c)
{
    if (!c)
        return;
    free(c->engines);
    free(c->links);
    free(c);
}

void fnw_chain_start(fnw_chain *c, const fnw_engine_sink *sink, const char *bundle_label)
{
    c->sink = *sink;
    c->failed = 0;
    for (size_t i = 0; i < c->n; i++) {
        chain_link *l = &c->links[i];
        fnw_engine_sink s = { l, link_emit, link_ready, link_failed, link_finished, NULL, NULL, NULL, NULL };
        s.log = sink->log;
        s.log_user = sink->log_user ? sink->log_user : sink->user;
        /* The last step's outputs are the chain's: straight to the caller. */
        if (!l->next) {
            s.emit = sink->emit;
            s.emit_user = sink->emit_user ? sink->emit_user : sink->user;
        }
        fnw_engine_start(c->engines[i], &s, bundle_label);
    }
}

void fnw_chain_finish(fnw_chain *c)
{
    if (!c->failed)
        fnw_engine_finish(c->engines[0]);
}

void fnw_chain_abort(fnw_chain *c)
{
    for (size_t i = 0; i < c->n; i++)
        fnw_engine_abort(c->engines[i]);
}

size_t fnw_chain_steps(const fnw_chain *c)
{
    return c->n;
}

fnw_engine *fnw_chain_engine(const fnw_chain *c, size_t i)
{
    return c->engines[i];
}
