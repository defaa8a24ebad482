/* base/handoff.c — the cross-thread work queue (handoff.h). Every field
 * but the ev_async watcher's start/stop is read and written under mu; the
 * loop is woken inside the lock, so once a taker has an item, the thread
 * that put it no longer touches the queue (its owner may free it). */
#include "base/handoff.h"

void fnw_handoff_init(fnw_handoff *h)
{
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cond, NULL);
    h->head = h->tail = NULL;
    h->count = 0;
    h->closed = 0;
    h->loop = NULL;
}

void fnw_handoff_init_wake(fnw_handoff *h, struct ev_loop *loop,
                           void (*cb)(struct ev_loop *, ev_async *, int), void *data)
{
    fnw_handoff_init(h);
    h->loop = loop;
    ev_async_init(&h->wake, cb);
    h->wake.data = data;
}

void fnw_handoff_wake_start(fnw_handoff *h)
{
    ev_async_start(h->loop, &h->wake);
}

void fnw_handoff_wake_stop(fnw_handoff *h)
{
    ev_async_stop(h->loop, &h->wake);
}

void fnw_handoff_free(fnw_handoff *h)
{
    if (h->loop)
        ev_async_stop(h->loop, &h->wake);
    pthread_cond_destroy(&h->cond);
    pthread_mutex_destroy(&h->mu);
}

void fnw_handoff_put(fnw_handoff *h, fnw_handoff_item *it)
{
    it->next = NULL;
    pthread_mutex_lock(&h->mu);
    if (h->tail)
        h->tail->next = it;
    else
        h->head = it;
    h->tail = it;
    h->count++;
    pthread_cond_signal(&h->cond);
    if (h->loop)
        ev_async_send(h->loop, &h->wake);
    pthread_mutex_unlock(&h->mu);
}

static fnw_handoff_item *pop_locked(fnw_handoff *h)
{
    fnw_handoff_item *it = h->head;
    if (!it)
        return NULL;
    h->head = it->next;
    if (!h->head)
        h->tail = NULL;
    h->count--;
    it->next = NULL;
    return it;
}

fnw_handoff_item *fnw_handoff_take(fnw_handoff *h)
{
    pthread_mutex_lock(&h->mu);
    while (!h->head && !h->closed)
        pthread_cond_wait(&h->cond, &h->mu);
    fnw_handoff_item *it = pop_locked(h);
    pthread_mutex_unlock(&h->mu);
    return it;
}

fnw_handoff_item *fnw_handoff_poll(fnw_handoff *h)
{
    pthread_mutex_lock(&h->mu);
    fnw_handoff_item *it = pop_locked(h);
    pthread_mutex_unlock(&h->mu);
    return it;
}

fnw_handoff_item *fnw_handoff_remove_if(fnw_handoff *h, int (*match)(const fnw_handoff_item *, void *),
                                        void *user)
{
    fnw_handoff_item *out = NULL, **out_tail = &out;
    pthread_mutex_lock(&h->mu);
    fnw_handoff_item **pp = &h->head, *prev = NULL;
    while (*pp) {
        fnw_handoff_item *it = *pp;
        if (match(it, user)) {
            *pp = it->next;
            h->count--;
            it->next = NULL;
            *out_tail = it;
            out_tail = &it->next;
        } else {
            prev = it;
            pp = &it->next;
        }
    }
    h->tail = prev;
    pthread_mutex_unlock(&h->mu);
    return out;
}

size_t fnw_handoff_count(fnw_handoff *h)
{
    pthread_mutex_lock(&h->mu);
    size_t n = h->count;
    pthread_mutex_unlock(&h->mu);
    return n;
}

void fnw_handoff_close(fnw_handoff *h)
{
    pthread_mutex_lock(&h->mu);
    h->closed = 1;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->mu);
}
