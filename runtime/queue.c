/* runtime/queue.c — ordered and unordered (watermark-segmented) element
 * queues; see queue.h. */
#include "runtime/queue.h"

#include <stdlib.h>

void fnw_queue_init(fnw_queue *q, int unordered)
{
    q->unordered = unordered;
    q->watermark = INT64_MIN;
    q->pending = 0;
    q->head = q->tail = NULL;
    q->first = q->last = NULL;
    q->seg_closed = 0;
    q->free_segs = NULL;
}

static void seg_release(fnw_queue *q, fnw_qseg *s)
{
    s->next = q->free_segs;
    q->free_segs = s;
}

void fnw_queue_clear(fnw_queue *q)
{
    while (q->first) {
        fnw_qseg *s = q->first;
        q->first = s->next;
        seg_release(q, s);
    }
    q->last = NULL;
    q->head = q->tail = NULL;
    q->pending = 0;
    q->seg_closed = 0;
}

void fnw_queue_free(fnw_queue *q)
{
    fnw_queue_clear(q);
    while (q->free_segs) {
        fnw_qseg *s = q->free_segs;
        q->free_segs = s->next;
        free(s);
    }
}

static int seg_empty(const fnw_qseg *s)
{
    return s->incomplete == 0 && !s->done_head;
}

void fnw_queue_advance_watermark(fnw_queue *q, int64_t watermark)
{
    if (watermark <= q->watermark)
        return;
    q->watermark = watermark;
    /* An empty last segment is reused: nothing before it can be overtaken. */
    if (q->unordered && q->last && !seg_empty(q->last))
        q->seg_closed = 1;
}

static fnw_qseg *seg_open(fnw_queue *q)
{
    fnw_qseg *s = q->free_segs;
    if (s)
        q->free_segs = s->next;
    else if (!(s = malloc(sizeof *s)))
        return NULL;
    s->next = NULL;
    s->incomplete = 0;
    s->done_head = s->done_tail = NULL;
    if (q->last)
        q->last->next = s;
    else
        q->first = s;
    q->last = s;
    return s;
}

int fnw_queue_put(fnw_queue *q, fnw_qnode *n)
{
    n->next = NULL;
    n->done = 0;
    n->seg = NULL;
    if (!q->unordered) {
        if (q->tail)
            q->tail->next = n;
        else
            q->head = n;
        q->tail = n;
    } else {
        if (!q->last || q->seg_closed) {
            if (!seg_open(q))
                return -1;
            q->seg_closed = 0;
        }
        n->seg = q->last;
        q->last->incomplete++;
    }
    q->pending++;
    return 0;
}

void fnw_queue_complete(fnw_queue *q, fnw_qnode *n)
{
    if (n->done)
        return;
    n->done = 1;
    if (!q->unordered)
        return;
    fnw_qseg *s = n->seg;
    s->incomplete--;
    n->next = NULL;
    if (s->done_tail)
        s->done_tail->next = n;
    else
        s->done_head = n;
    s->done_tail = n;
}

static fnw_qnode *pop_ordered(fnw_queue *q)
{
    fnw_qnode *n = q->head;
    if (!n || !n->done)
        return NULL;
    q->head = n->next;
    if (!q->head)
        q->tail = NULL;
    n->next = NULL;
    q->pending--;
    return n;
}

static fnw_qnode *pop_unordered(fnw_queue *q)
{
    for (;;) {
        fnw_qseg *s = q->first;
        if (!s)
            return NULL;
        fnw_qnode *n = s->done_head;
        if (n) {
            s->done_head = n->next;
            if (!s->done_head)
                s->done_tail = NULL;
            n->next = NULL;
            q->pending--;
            return n;
        }
        if (s->incomplete || !s->next)
            return NULL;
        /* The first segment is exhausted: the watermark after it is passed. */
        q->first = s->next;
        seg_release(q, s);
    }
}

fnw_qnode *fnw_queue_pop_ready(fnw_queue *q)
{
    return q->unordered ? pop_unordered(q) : pop_ordered(q);
}
