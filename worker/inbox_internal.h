/* worker/inbox_internal.h — the inbox itself, internal to the data plane
 * (worker/inbox.c, worker/inbound.c) and its unit tests; readers use
 * worker/inbox.h.
 *
 * Its bytes arrive as chunks: a chunk that is most of its message
 * references the received gRPC slice (no copy), a small part of a big
 * message is copied out so one kept byte never keeps a whole message alive.
 * The read window is the head chunk's unread bytes; it is closed (empty)
 * while the carry buffer holds bytes, i.e. while a record that spans chunks
 * is being assembled or was just handed out from there, so the inline reader
 * only ever sees whole chunks' bytes in order.
 */
#ifndef FNW_INBOX_INTERNAL_H
#define FNW_INBOX_INTERNAL_H

#include <grpc/slice.h>

#include "codecs/buf.h"
#include "codecs/error.h"
#include "worker/data.h"
#include "worker/inbox.h"

typedef struct fnw_chunk {
    struct fnw_chunk *next;
    grpc_slice slice; /* reference kept while the chunk lives (if ref) */
    int ref;          /* 0: the bytes are a copy stored after the chunk */
    const uint8_t *p;
    size_t n;
    size_t held; /* what the chunk keeps alive: n, or its whole message */
} fnw_chunk;

/* A chunk of ib was dropped: its held bytes no longer count. */
typedef void (*fnw_inbox_freed_cb)(fnw_inbox *ib, size_t held);

struct fnw_inbox {
    fnw_inbox_window win; /* first: the inline reader's (see inbox.h) */
    /* ---- framing (inbox.c) ---- */
    fnw_chunk *head, *tail;    /* win reads head */
    const uint8_t *closed_end; /* while the window is closed: where it really ends */
    fnw_buf carry;             /* a record that spans chunks */
    int carry_out;             /* carry holds the record handed out last */
    int failed;                /* bad framing seen: every read fails */
    size_t bytes;              /* held by its chunks */
    int got_last;
    fnw_inbox_freed_cb on_freed;
    char error[FNW_ERROR_MAX];
    /* ---- the data plane's (inbound.c) ---- */
    struct fnw_inbox *next;          /* the instruction's other inboxes */
    struct fnw_inbox *cprev, *cnext; /* the connection's claimed inboxes */
    struct fnw_inbox *wnext;         /* the connection's inboxes to wake */
    int woken;                       /* on that list */
    fnw_data_conn *conn;
    fnw_instr *instr;
    char *transform_id;
    int lost;                   /* input was lost: later data is dropped */
    int timers;                 /* holds raw Timers entries, not data (never claimed) */
    fnw_data_listener listener; /* user == NULL until a bundle claims it */
};

/* The framing part of a zeroed inbox; on_freed hears of every chunk dropped
 * while reading (not of those fnw_inbox_reader_free drops). */
void fnw_inbox_reader_init(fnw_inbox *ib, fnw_inbox_freed_cb on_freed);
/* Drops every chunk and the carry buffer; ib->bytes becomes 0. */
void fnw_inbox_reader_free(fnw_inbox *ib);

/* Appends n bytes copied from p, held as n. -1: out of memory. */
int fnw_inbox_append_copy(fnw_inbox *ib, const uint8_t *p, size_t n);
/* Appends p[0..n) of slice (a reference is taken), held as held bytes. -1:
 * out of memory. */
int fnw_inbox_append_ref(fnw_inbox *ib, grpc_slice slice, const uint8_t *p, size_t n, size_t held);

#endif
