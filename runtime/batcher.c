/* runtime/batcher.c — size / timeout / explicit batch flushing with
 * generation-tagged timers; see batcher.h. */
#include "runtime/batcher.h"

#include <stdlib.h>

/* A due batch goes unless the gate holds it (and it still has room). */
static void flush_due(fnw_batcher *b)
{
    if (b->gate && b->n < b->cap && !b->gate(b->user)) {
        b->due = 1;
        return;
    }
    fnw_batcher_flush(b);
}

static void batch_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    fnw_batcher *b = w->data;
    /* Only the timer of the batch being filled may flush it. */
    if (b->timer_gen != b->gen || b->n == 0)
        return;
    flush_due(b);
}

int fnw_batcher_init(fnw_batcher *b, struct ev_loop *loop, size_t size, int64_t timeout_ms,
                     fnw_batcher_flush_fn flush, void *user)
{
    b->loop = loop;
    b->size = size ? size : 1;
    b->cap = b->size;
    b->timeout_s = timeout_ms > 0 ? (double)timeout_ms / 1000. : 0;
    b->n = 0;
    b->gen = 1;
    b->timer_gen = 0;
    b->flush = flush;
    b->user = user;
    b->gate = NULL;
    b->due = b->held = 0;
    ev_timer_init(&b->timer, batch_timer_cb, 0., 0.);
    b->timer.data = b;
    b->items = malloc(b->cap * sizeof *b->items);
    return b->items ? 0 : -1;
}

static void stop_timer(fnw_batcher *b)
{
    if (ev_is_active(&b->timer) || ev_is_pending(&b->timer))
        ev_timer_stop(b->loop, &b->timer);
}

void fnw_batcher_free(fnw_batcher *b)
{
    stop_timer(b);
    free(b->items);
    b->items = NULL;
    b->n = 0;
}

void fnw_batcher_add(fnw_batcher *b, void *item)
{
    b->items[b->n++] = item;
    if (b->n == 1 && b->timeout_s > 0 && b->n < b->size) {
        b->timer_gen = b->gen;
        ev_timer_set(&b->timer, b->timeout_s, 0.);
        ev_timer_start(b->loop, &b->timer);
    }
    if (b->n >= b->size) /* fnw_batcher_tune keeps size <= cap */
        flush_due(b);
}

void fnw_batcher_flush(fnw_batcher *b)
{
    if (b->n == 0)
        return;
    size_t n = b->n;
    stop_timer(b);
    b->n = 0;
    b->gen++;
    b->held = b->due;
    b->due = 0;
    b->flush(b->user, b->items, n);
}

void fnw_batcher_tune(fnw_batcher *b, size_t size, double timeout_s)
{
    b->size = size < 1 ? 1 : size > b->cap ? b->cap : size;
    b->timeout_s = timeout_s > 0 ? timeout_s : 0;
}

void fnw_batcher_set_gate(fnw_batcher *b, int (*gate)(void *user))
{
    b->gate = gate;
}

void fnw_batcher_clear(fnw_batcher *b)
{
    stop_timer(b);
    b->due = 0;
    b->n = 0;
    b->gen++;
}
