/* base/mailbox.c — pump-to-loop hand-off (see mailbox.h for the rules). */
#include "base/mailbox.h"

static void mailbox_wake_cb(struct ev_loop *loop, ev_async *w, int revents)
{
    fnw_mailbox *m = w->data;
    fnw_mailbox_drain(m);
}

void fnw_mailbox_init(fnw_mailbox *m, struct ev_loop *loop)
{
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->not_full, NULL);
    m->head = 0;
    m->count = 0;
    m->loop = loop;
    ev_async_init(&m->wake, mailbox_wake_cb);
    m->wake.data = m;
    ev_async_start(loop, &m->wake);
}

void fnw_mailbox_free(fnw_mailbox *m)
{
    ev_async_stop(m->loop, &m->wake);
    pthread_cond_destroy(&m->not_full);
    pthread_mutex_destroy(&m->mu);
}

unsigned fnw_mailbox_pending(fnw_mailbox *m)
{
    pthread_mutex_lock(&m->mu);
    unsigned n = m->count;
    pthread_mutex_unlock(&m->mu);
    return n;
}

void fnw_mailbox_post(fnw_mailbox *m, fnw_tag *tag, int ok)
{
    pthread_mutex_lock(&m->mu);
    while (m->count == FNW_MAILBOX_SIZE)
        pthread_cond_wait(&m->not_full, &m->mu);
    unsigned slot = (m->head + m->count) % FNW_MAILBOX_SIZE;
    m->ring[slot].tag = tag;
    m->ring[slot].ok = ok;
    m->count++;
    pthread_mutex_unlock(&m->mu);
    ev_async_send(m->loop, &m->wake);
}

void fnw_mailbox_drain(fnw_mailbox *m)
{
    for (;;) {
        fnw_tag *batch[64];
        int oks[64];
        unsigned n = 0;
        pthread_mutex_lock(&m->mu);
        while (m->count > 0 && n < 64) {
            batch[n] = m->ring[m->head].tag;
            oks[n] = m->ring[m->head].ok;
            m->head = (m->head + 1) % FNW_MAILBOX_SIZE;
            m->count--;
            n++;
        }
        if (n)
            pthread_cond_broadcast(&m->not_full);
        pthread_mutex_unlock(&m->mu);
        if (n == 0)
            return;
        for (unsigned i = 0; i < n; i++)
            batch[i]->done(batch[i], oks[i]);
    }
}
