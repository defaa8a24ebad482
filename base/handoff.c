/* base/handoff.c — the hand-off (see handoff.h for the rules). Every field
 * but holds and the companion (loop thread only) is read and written under
 * mu; the loop is woken inside the lock, so once the loop has
 * an item, the thread that put it no longer touches the hand-off. */
#include "base/handoff.h"

#include <stdlib.h>

void fnw_handoff_init(fnw_handoff *h)
{
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cond, NULL);
    h->head = h->tail = NULL;
    h->count = 0;
    h->closed = 0;
    h->waiters = 0;
    h->loop = NULL;
    h->holds = 0;
    h->companion = NULL;
    h->companion_stop = NULL;
}

void fnw_handoff_free(fnw_handoff *h)
{
    pthread_cond_destroy(&h->cond);
    pthread_mutex_destroy(&h->mu);
}

/* ---- a loop's hand-off ------------------------------------------------------------ */

static void wake_cb(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)loop;
    (void)revents;
    fnw_handoff_drain(w->data);
}

fnw_handoff *fnw_handoff_of(struct ev_loop *loop)
{
    fnw_handoff *h = ev_userdata(loop);
    if (h)
        return h;
    if (!(h = malloc(sizeof *h)))
        return NULL;
    fnw_handoff_init(h);
    h->loop = loop;
    ev_async_init(&h->wake, wake_cb);
    h->wake.data = h;
    /* Always started, so no wake-up is ever lost; unref'd, so it keeps
     * ev_run going only while held. */
    ev_async_start(loop, &h->wake);
    ev_unref(loop);
    ev_set_userdata(loop, h);
    return h;
}

void fnw_handoff_loop_free(struct ev_loop *loop)
{
    fnw_handoff *h = ev_userdata(loop);
    if (!h)
        return;
    if (h->companion_stop)
        h->companion_stop(h->companion); /* the pump delivers what is pending, then ends */
    h->companion = NULL;
    h->companion_stop = NULL;
    fnw_handoff_drain(h);
    if (!h->holds)
        ev_ref(loop); /* a watcher unref'd must be ref'd before it stops */
    ev_async_stop(loop, &h->wake);
    fnw_handoff_free(h);
    ev_set_userdata(loop, NULL);
    free(h);
}

void fnw_handoff_hold(fnw_handoff *h)
{
    if (h->holds++ == 0)
        ev_ref(h->loop);
}

void fnw_handoff_release(fnw_handoff *h)
{
    if (h->holds && --h->holds == 0)
        ev_unref(h->loop);
}

void fnw_handoff_set_companion(fnw_handoff *h, void *companion, void (*stop)(void *companion))
{
    h->companion = companion;
    h->companion_stop = stop;
}

void *fnw_handoff_companion(const fnw_handoff *h)
{
    return h->companion;
}

void fnw_handoff_drain(fnw_handoff *h)
{
    /* One at a time: a done() may free an owner that then waits
     * (fnw_handoff_take_if) for an item still queued behind it. */
    fnw_handoff_item *it;
    while ((it = fnw_handoff_poll(h)) != NULL)
        it->done(it, it->ok);
}

/* ---- the queue ---------------------------------------------------------------------- */

void fnw_handoff_put(fnw_handoff *h, fnw_handoff_item *it, int ok)
{
    it->next = NULL;
    pthread_mutex_lock(&h->mu);
    it->ok = ok;
    if (h->tail)
        h->tail->next = it;
    else
        h->head = it;
    h->tail = it;
    h->count++;
    if (!h->loop)
        pthread_cond_signal(&h->cond);
    else {
        if (h->waiters)
            pthread_cond_broadcast(&h->cond);
        ev_async_send(h->loop, &h->wake);
    }
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

/* Unlinks the matching items from the queue (mu held); NULL when none. */
static fnw_handoff_item *remove_locked(fnw_handoff *h, int (*match)(const fnw_handoff_item *, void *),
                                       void *user, int first_only)
{
    fnw_handoff_item *out = NULL, **out_tail = &out;
    fnw_handoff_item **pp = &h->head, *prev = NULL;
    while (*pp) {
        fnw_handoff_item *it = *pp;
        if (match(it, user)) {
            *pp = it->next;
            h->count--;
            it->next = NULL;
            *out_tail = it;
            out_tail = &it->next;
            if (first_only) {
                if (!*pp)
                    h->tail = prev;
                return out;
            }
        } else {
            prev = it;
            pp = &it->next;
        }
    }
    h->tail = prev;
    return out;
}

fnw_handoff_item *fnw_handoff_remove_if(fnw_handoff *h, int (*match)(const fnw_handoff_item *, void *),
                                        void *user)
{
    pthread_mutex_lock(&h->mu);
    fnw_handoff_item *out = remove_locked(h, match, user, 0);
    pthread_mutex_unlock(&h->mu);
    return out;
}

fnw_handoff_item *fnw_handoff_take_if(fnw_handoff *h, int (*match)(const fnw_handoff_item *, void *),
                                      void *user)
{
    pthread_mutex_lock(&h->mu);
    fnw_handoff_item *it;
    h->waiters++;
    while (!(it = remove_locked(h, match, user, 1)))
        pthread_cond_wait(&h->cond, &h->mu);
    h->waiters--;
    pthread_mutex_unlock(&h->mu);
    return it;
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
