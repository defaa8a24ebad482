/* worker/inbox.h — reading one inbound data stream record by record.
 *
 * An inbox is the byte stream of one (instruction, transform) on a data
 * connection, split into records by Beam's framing: a varint length, then
 * that many bytes. fnw_inbox_next() hands out one whole record at a time,
 * the mirror of the outbox's reserve: a record that lies in one received
 * chunk (the common case) is returned in place, without a copy and without
 * leaving this inline function; one that spans chunks is assembled in a
 * buffer the inbox keeps for the purpose. A record is readable until the
 * next call on the same inbox.
 *
 * The inbox is opaque: its reader sees only the read window below, which the
 * inline fast path moves and nobody else touches. The inbox itself lives in
 * worker/inbox_internal.h; the data plane (worker/data.h) creates it and
 * hands it to the bundle that reads it. Loop thread only.
 */
#ifndef FNW_INBOX_H
#define FNW_INBOX_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/varint.h"

typedef struct fnw_inbox fnw_inbox;

/* The largest record an inbox accepts: a longer length prefix is bad
 * framing, refused before anything of that size is allocated. */
#define FNW_INBOX_MAX_RECORD ((uint64_t)1 << 30)

typedef struct fnw_frame {
    const uint8_t *p; /* the record's bytes, without the length prefix */
    size_t n;
} fnw_frame;

typedef enum fnw_inbox_status {
    FNW_INBOX_BAD = -1,   /* bad framing or out of memory: fnw_inbox_error() says which */
    FNW_INBOX_MORE = 0,   /* no whole record yet: wait for the listener's on_input */
    FNW_INBOX_RECORD = 1, /* *out is the next record */
    FNW_INBOX_END = 2,    /* is_last came and every record was read */
} fnw_inbox_status;

/* The unread bytes of the chunk being read. It is the first member of every
 * inbox, so the inline reader below reaches it through the opaque pointer. */
typedef struct fnw_inbox_window {
    const uint8_t *p, *end;
} fnw_inbox_window;

/* Everything fnw_inbox_next() does not do inline: moving to the next chunk,
 * records that span chunks, the end of the stream and errors. */
fnw_inbox_status fnw_inbox_next_slow(fnw_inbox *ib, fnw_frame *out);

/* The next record of ib (see fnw_inbox_status). After FNW_INBOX_BAD every
 * later call returns FNW_INBOX_BAD again. */
static inline fnw_inbox_status fnw_inbox_next(fnw_inbox *ib, fnw_frame *out)
{
    fnw_inbox_window *w = (fnw_inbox_window *)(void *)ib;
    size_t avail = (size_t)(w->end - w->p);
    uint64_t len = 0;
    int k = fnw_varint_read(w->p, avail, &len);
    if (k > 0 && len <= avail - (size_t)k && len <= FNW_INBOX_MAX_RECORD) {
        out->p = w->p + k;
        out->n = (size_t)len;
        w->p += (size_t)k + (size_t)len;
        return FNW_INBOX_RECORD;
    }
    return fnw_inbox_next_slow(ib, out);
}

/* Why the last call returned FNW_INBOX_BAD, worded to follow "element N":
 * "has a bad length prefix (...)", "is cut short: ...", ... */
const char *fnw_inbox_error(const fnw_inbox *ib);

#endif
