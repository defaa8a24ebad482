/* runtime/queue.h — the element queue between "input admitted" and "output
 * emitted" (internal to the runtime), with PyFlink's two disciplines:
 *
 *   ordered    a FIFO; only a completed head can leave, so outputs keep
 *              input order. Watermarks change nothing.
 *   unordered  a FIFO of segments. A watermark that advances closes the
 *              current segment; entries complete and leave in any order, but
 *              only from the first segment, so no result crosses a watermark.
 *              (PyFlink queues a watermark as an item of its own that
 *              emits nothing, so a segment boundary is all that is kept
 *              of it.)
 *
 * The queue does not own nodes: a node is embedded in the caller's entry.
 * Segments come from a free list kept by the queue, so steady-state use does
 * not allocate. pending counts nodes put and not yet popped (this is what
 * capacity bounds).
 */
#ifndef FNW_QUEUE_H
#define FNW_QUEUE_H

#include <stddef.h>
#include <stdint.h>

typedef struct fnw_qseg fnw_qseg;

typedef struct fnw_qnode {
    struct fnw_qnode *next; /* ordered: arrival order; unordered: done list */
    fnw_qseg *seg;          /* unordered: the node's segment */
    uint8_t done;
} fnw_qnode;

struct fnw_qseg {
    fnw_qseg *next;
    size_t incomplete; /* nodes put into it and not completed yet */
    fnw_qnode *done_head, *done_tail;
};

typedef struct fnw_queue {
    int unordered;
    int64_t watermark; /* highest watermark seen; starts at INT64_MIN */
    size_t pending;
    fnw_qnode *head, *tail; /* ordered */
    fnw_qseg *first, *last; /* unordered */
    int seg_closed;         /* unordered: the next put opens a new segment */
    fnw_qseg *free_segs;
} fnw_queue;

void fnw_queue_init(fnw_queue *q, int unordered);
/* Releases the segments; nodes are the caller's. */
void fnw_queue_free(fnw_queue *q);
/* Forgets every node (keeps the watermark and the segment memory). */
void fnw_queue_clear(fnw_queue *q);

void fnw_queue_advance_watermark(fnw_queue *q, int64_t watermark);
/* Appends n (after the watermark of its element has been applied). -1 only
 * when a new segment cannot be allocated. */
int fnw_queue_put(fnw_queue *q, fnw_qnode *n);
void fnw_queue_complete(fnw_queue *q, fnw_qnode *n);
/* The next node that may leave, removed from the queue; NULL if none. */
fnw_qnode *fnw_queue_pop_ready(fnw_queue *q);
static inline size_t fnw_queue_pending(const fnw_queue *q)
{
    return q->pending;
}

#endif
