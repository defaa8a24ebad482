/* worker/inbox.c — an inbox's chunks and its record framing (see
 * worker/inbox.h and worker/inbox_internal.h): appending chunks, and the
 * part of reading the inline reader leaves out. */
#include "worker/inbox_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- chunks --------------------------------------------------------------------- */

static void chunk_free(fnw_chunk *ch)
{
    if (ch->ref)
        grpc_slice_unref(ch->slice);
    free(ch);
}

static int window_closed(const fnw_inbox *ib)
{
    return ib->carry.len > 0 || ib->failed;
}

static void append(fnw_inbox *ib, fnw_chunk *ch)
{
    ch->next = NULL;
    ib->bytes += ch->held;
    if (ib->tail) {
        ib->tail->next = ch;
        ib->tail = ch;
        return;
    }
    ib->head = ib->tail = ch;
    ib->win.p = ch->p;
    if (window_closed(ib)) {
        ib->closed_end = ch->p + ch->n;
        ib->win.end = ch->p;
    } else {
        ib->win.end = ch->p + ch->n;
    }
}

int fnw_inbox_append_copy(fnw_inbox *ib, const uint8_t *p, size_t n)
{
    fnw_chunk *ch = malloc(sizeof *ch + n);
    if (!ch)
        return -1;
    ch->ref = 0;
    ch->n = n;
    ch->held = n;
    if (n)
        memcpy(ch + 1, p, n);
    ch->p = (const uint8_t *)(ch + 1);
    append(ib, ch);
    return 0;
}

int fnw_inbox_append_ref(fnw_inbox *ib, grpc_slice slice, const uint8_t *p, size_t n, size_t held)
{
    fnw_chunk *ch = malloc(sizeof *ch);
    if (!ch)
        return -1;
    ch->ref = 1;
    ch->slice = grpc_slice_ref(slice);
    ch->p = p;
    ch->n = n;
    ch->held = held;
    append(ib, ch);
    return 0;
}

/* Drops exhausted head chunks until the window has bytes; 0 when none are
 * left. Works on the open window. */
static int advance(fnw_inbox *ib)
{
    while (ib->win.p == ib->win.end) {
        fnw_chunk *ch = ib->head;
        if (!ch)
            return 0;
        ib->head = ch->next;
        if (ib->head) {
            ib->win.p = ib->head->p;
            ib->win.end = ib->head->p + ib->head->n;
        } else {
            ib->tail = NULL;
            ib->win.p = ib->win.end = NULL;
        }
        ib->bytes -= ch->held;
        size_t held = ch->held;
        chunk_free(ch);
        ib->on_freed(ib, held);
    }
    return 1;
}

/* ---- framing -------------------------------------------------------------------- */

static fnw_inbox_status fail(fnw_inbox *ib, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static fnw_inbox_status fail(fnw_inbox *ib, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ib->error, sizeof ib->error, fmt, ap);
    va_end(ap);
    ib->failed = 1;
    return FNW_INBOX_BAD;
}

static fnw_inbox_status bad_prefix(fnw_inbox *ib, int k, uint64_t len)
{
    if (k < 0)
        return fail(ib, "has a bad length prefix (a varint longer than %d bytes)", FNW_VARINT_MAX);
    return fail(ib,
                "has a bad length prefix (it claims %" PRIu64 " bytes; a record may have at "
                "most %" PRIu64 ")",
                len, FNW_INBOX_MAX_RECORD);
}

/* Moves up to want bytes of input into carry. 1: some moved; 0: no input
 * left; -1: out of memory. */
static int carry_take(fnw_inbox *ib, size_t want)
{
    if (!advance(ib))
        return 0;
    size_t n = (size_t)(ib->win.end - ib->win.p);
    if (n > want)
        n = want;
    if (fnw_buf_append(&ib->carry, ib->win.p, n) < 0)
        return -1;
    ib->win.p += n;
    return 1;
}

/* Assembles the record that starts in carry (or at the window) from as many
 * chunks as it takes. */
static fnw_inbox_status assemble(fnw_inbox *ib, fnw_frame *out)
{
    for (;;) {
        uint64_t len = 0;
        int k = fnw_varint_read(ib->carry.p, ib->carry.len, &len);
        if (k < 0 || (k > 0 && len > FNW_INBOX_MAX_RECORD))
            return bad_prefix(ib, k, len);
        size_t total = (size_t)k + (size_t)len;
        if (k > 0 && ib->carry.len >= total) {
            out->p = ib->carry.p + k;
            out->n = (size_t)len;
            ib->carry_out = 1;
            return FNW_INBOX_RECORD;
        }
        int r = carry_take(ib, k == 0 ? 1 : total - ib->carry.len);
        if (r < 0)
            return fail(ib, "could not be read: out of memory assembling %zu bytes of it", ib->carry.len);
        if (r == 0 && ib->got_last)
            return fail(ib, "is cut short: the input ended inside it (%zu bytes of it arrived)",
                        ib->carry.len);
        if (r == 0)
            return FNW_INBOX_MORE;
    }
}

static fnw_inbox_status next_in_window(fnw_inbox *ib, fnw_frame *out)
{
    if (ib->carry.len == 0) {
        if (!advance(ib))
            return ib->got_last ? FNW_INBOX_END : FNW_INBOX_MORE;
        size_t avail = (size_t)(ib->win.end - ib->win.p);
        uint64_t len = 0;
        int k = fnw_varint_read(ib->win.p, avail, &len);
        if (k < 0 || (k > 0 && len > FNW_INBOX_MAX_RECORD))
            return bad_prefix(ib, k, len);
        if (k > 0 && len <= avail - (size_t)k) {
            out->p = ib->win.p + k;
            out->n = (size_t)len;
            ib->win.p += (size_t)k + (size_t)len;
            return FNW_INBOX_RECORD;
        }
        /* the record continues in the next chunk: assemble it in carry */
    }
    return assemble(ib, out);
}

fnw_inbox_status fnw_inbox_next_slow(fnw_inbox *ib, fnw_frame *out)
{
    if (ib->failed)
        return FNW_INBOX_BAD;
    if (ib->carry.len) {
        ib->win.end = ib->closed_end; /* open the window */
        if (ib->carry_out) {
            ib->carry_out = 0;
            ib->carry.len = 0;
        }
    }
    fnw_inbox_status s = next_in_window(ib, out);
    if (window_closed(ib)) {
        ib->closed_end = ib->win.end;
        ib->win.end = ib->win.p;
    }
    return s;
}

const char *fnw_inbox_error(const fnw_inbox *ib)
{
    return ib->error;
}

/* ---- lifecycle -------------------------------------------------------------------- */

void fnw_inbox_reader_init(fnw_inbox *ib, fnw_inbox_freed_cb on_freed)
{
    fnw_buf_init(&ib->carry, FNW_INBOX_MAX_RECORD + FNW_VARINT_MAX);
    ib->on_freed = on_freed;
}

void fnw_inbox_reader_free(fnw_inbox *ib)
{
    while (ib->head) {
        fnw_chunk *ch = ib->head;
        ib->head = ch->next;
        chunk_free(ch);
    }
    ib->tail = NULL;
    ib->win.p = ib->win.end = NULL;
    ib->bytes = 0;
    fnw_buf_free(&ib->carry);
}
