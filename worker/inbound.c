/* worker/inbound.c — the received half of the data plane (see data.h):
 * Elements messages are split by (instruction, transform) into inboxes
 * (worker/inbox.c frames them), and the bundles reading the inboxes that got
 * input are woken;
 * which instruction an id is, and whether its data is kept, counted against
 * the connection's limit or against the early-data bounds, or dropped, is the
 * book's (worker/instr.h). Drops of early data are logged at WARN, a few one
 * by one and the rest summed up per window.
 *
 * Entries of relayed instructions bypass the inboxes: one pass over a
 * message gathers their raw spans (a run of adjacent ones costs nothing until
 * an entry of another instruction breaks it), and the message, or a copy of
 * just those spans, goes to the relay's tap at the end. Timers entries of
 * instructions not known to be relayed yet are held verbatim in a timers
 * inbox of their own (one per instruction and connection), counted as data.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/data_internal.h"
#include "worker/elements.h"
#include "worker/inbox_internal.h"

#define DROP_WARNS_PER_WINDOW 10 /* early-data drops warned about one by one... */
#define DROP_WARN_WINDOW_S 10.0  /* ...per window; the rest are summed up */

/* ---- helpers ------------------------------------------------------------------ */

static int span_eq(const char *a, size_t alen, const char *b)
{
    return strlen(b) == alen && memcmp(a, b, alen) == 0;
}

static char *span_dup(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

static double now_s(const fnw_data_mgr *m)
{
    return m->io->now(m->loop);
}

/* Stops or resumes receiving as c's held bytes cross the limit (resuming
 * below half of it) and as the manager's hold says. */
static void conn_update_pause(fnw_data_conn *c)
{
    size_t limit = c->mgr->cfg.inbound_limit;
    int over = c->inbound_bytes >= limit || (c->over_limit && c->inbound_bytes > limit / 2);
    c->over_limit = over;
    int want = over || c->mgr->held;
    if (want != c->recv_paused && c->stream) {
        c->recv_paused = want;
        c->mgr->io->pause_recv(c->stream, want);
    }
}

void fnw_inbound_update_pause(fnw_data_conn *c)
{
    conn_update_pause(c);
}

/* ---- inboxes and where their bytes are counted ----------------------------------
 * An inbox's held bytes count against the early-data bounds while its
 * instruction is EARLY and against its connection's inbound limit once the
 * instruction is LIVE; the other states hold nothing. */

static void count_sub(fnw_inbox *ib, size_t n)
{
    fnw_instr *e = ib->instr;
    if (e->state == FNW_INSTR_EARLY) {
        fnw_instr_uncharge(&ib->conn->mgr->book, e, n);
    } else if (e->state == FNW_INSTR_LIVE) {
        ib->conn->inbound_bytes -= n;
        conn_update_pause(ib->conn);
    }
}

/* The reader dropped a chunk it had read. */
static void on_chunk_freed(fnw_inbox *ib, size_t held)
{
    count_sub(ib, held);
}

static fnw_inbox *inbox_new(fnw_data_conn *c, fnw_instr *e, const char *tid, size_t tl)
{
    fnw_inbox *ib = calloc(1, sizeof *ib);
    if (!ib)
        return NULL;
    ib->transform_id = span_dup(tid, tl);
    if (!ib->transform_id) {
        free(ib);
        return NULL;
    }
    fnw_inbox_reader_init(ib, on_chunk_freed);
    ib->conn = c;
    ib->instr = e;
    ib->next = e->data;
    e->data = ib;
    return ib;
}

/* Frees ib and its chunks; counted says whether its bytes are still counted
 * (not when its instruction's book entry is going away as a whole). */
static void inbox_drop(fnw_inbox *ib, int counted)
{
    fnw_instr *e = ib->instr;
    fnw_data_conn *c = ib->conn;
    if (counted && ib->bytes)
        count_sub(ib, ib->bytes);
    fnw_inbox_reader_free(ib);
    if (ib->woken) {
        fnw_inbox **wp = &c->wake;
        while (*wp != ib)
            wp = &(*wp)->wnext;
        *wp = ib->wnext;
    }
    fnw_inbox **pp = (fnw_inbox **)&e->data;
    while (*pp && *pp != ib)
        pp = &(*pp)->next;
    if (*pp)
        *pp = ib->next;
    if (ib->listener.user) {
        if (ib->cprev)
            ib->cprev->cnext = ib->cnext;
        else
            c->claimed = ib->cnext;
        if (ib->cnext)
            ib->cnext->cprev = ib->cprev;
    }
    free(ib->transform_id);
    free(ib);
}

/* Frees the inboxes of e no bundle holds; 1 if one is still held. */
static int instr_free_unclaimed(fnw_instr *e, int counted)
{
    int held = 0;
    fnw_inbox *ib = e->data;
    while (ib) {
        fnw_inbox *next = ib->next;
        if (ib->listener.user)
            held = 1;
        else
            inbox_drop(ib, counted);
        ib = next;
    }
    return held;
}

static fnw_inbox *instr_inbox(fnw_instr *e, const fnw_data_conn *c, const char *tid, size_t tl)
{
    for (fnw_inbox *ib = e->data; ib; ib = ib->next)
        if (ib->conn == c && !ib->timers && span_eq(tid, tl, ib->transform_id))
            return ib;
    return NULL;
}

/* The inbox holding e's timers from c; NULL when there is none. */
static fnw_inbox *instr_timers(fnw_instr *e, const fnw_data_conn *c)
{
    for (fnw_inbox *ib = e->data; ib; ib = ib->next)
        if (ib->timers && (!c || ib->conn == c))
            return ib;
    return NULL;
}

static fnw_inbox *instr_claimed(fnw_instr *e)
{
    for (fnw_inbox *ib = e->data; ib; ib = ib->next)
        if (ib->listener.user)
            return ib;
    return NULL;
}

/* A bundle reads ib and its input cannot be complete any more: fail it. */
static void inbox_fail(fnw_inbox *ib, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void inbox_fail(fnw_inbox *ib, const char *fmt, ...)
{
    if (ib->lost)
        return;
    ib->lost = 1;
    char msg[FNW_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ib->listener.on_failed(ib->listener.user, msg); /* logged when the bundle answers */
}

/* EARLY -> LIVE: what its inboxes hold now counts against their connections. */
static fnw_instr *instr_go_live(fnw_data_mgr *m, const char *iid, size_t len)
{
    fnw_instr *e = fnw_instr_find(&m->book, iid, len);
    int was_early = e && e->state == FNW_INSTR_EARLY;
    e = fnw_instr_live(&m->book, iid, len, now_s(m));
    if (e && was_early) {
        for (fnw_inbox *ib = e->data; ib; ib = ib->next) {
            ib->conn->inbound_bytes += ib->bytes;
            conn_update_pause(ib->conn);
        }
    }
    return e;
}

/* ---- early data: drops, warnings, expiry ------------------------------------------- */

/* Sums up the drops not warned about one by one once the window is over
 * (or now, when force). */
static void warn_window_roll(fnw_data_mgr *m, double now, int force)
{
    if (!force && now - m->warn_since < DROP_WARN_WINDOW_S)
        return;
    if (m->quiet_n)
        fnw_warn(m->log,
                 "dropped the early data of %zu more instruction(s), %zu bytes in all, in the "
                 "last %.0f s (data that arrived before any process_bundle request for it)",
                 m->quiet_n, m->quiet_bytes, now - m->warn_since);
    m->warn_since = now;
    m->warns = 0;
    m->quiet_n = 0;
    m->quiet_bytes = 0;
}

/* "dropped N bytes of input that arrived before its process_bundle request (why)" */
static const char *drop_text(const fnw_data_mgr *m, const fnw_instr *e, char *buf, size_t n)
{
    char why[256];
    if (e->why == FNW_INSTR_NO_MEMORY)
        snprintf(buf, n, "dropped %zu bytes of its input: out of memory holding them", e->input_bytes);
    else
        snprintf(buf, n, "dropped %zu bytes of input that arrived before its process_bundle request (%s)",
                 e->input_bytes, fnw_instr_why_text(&m->book, e->why, why, sizeof why));
    return buf;
}

/* The book gives e's early data up (or memory ran out holding it). */
static void on_instr_drop(void *user, fnw_instr *e)
{
    fnw_data_mgr *m = user;
    double now = now_s(m);
    warn_window_roll(m, now, 0);
    if (m->warns < DROP_WARNS_PER_WINDOW || e->why == FNW_INSTR_NO_MEMORY) {
        char text[512];
        m->warns++;
        fnw_log(m->log, FNW_LOG_WARN, e->id, NULL, "instruction %s: %s; a bundle that starts for it fails",
                e->id, drop_text(m, e, text, sizeof text));
    } else {
        m->quiet_n++;
        m->quiet_bytes += e->input_bytes;
    }
    instr_free_unclaimed(e, 1);
}

void fnw_inbound_expire(fnw_data_mgr *m)
{
    double now = now_s(m);
    fnw_instr_expire(&m->book, now);
    warn_window_roll(m, now, 0);
    if (fnw_instr_idle(&m->book) && !m->quiet_n)
        ev_timer_stop(m->loop, &m->expiry);
}

static void expiry_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_inbound_expire(t->data);
}

static void expiry_arm(fnw_data_mgr *m)
{
    if (!ev_is_active(&m->expiry) && (!fnw_instr_idle(&m->book) || m->quiet_n))
        ev_timer_again(m->loop, &m->expiry);
}

/* ---- inbound ------------------------------------------------------------------- */

typedef struct recv_ctx {
    fnw_data_conn *c;
    grpc_slice slice;
    /* entries for the relay: the run of adjacent ones not copied yet, and
     * the copies of earlier runs */
    const uint8_t *run, *run_end;
    fnw_buf out;
    int failed;            /* memory ran out copying them... */
    size_t lost;           /* ...and this many bytes of them are lost */
    size_t timers_ignored; /* Timers entries for native bundles */
} recv_ctx;

/* Memory ran out holding input of e: the bundle reading it fails now, one
 * that has not started fails when it does. */
static void lose_input(fnw_data_conn *c, fnw_instr *e, size_t n)
{
    fnw_inbox *claimed = instr_claimed(e);
    if (claimed)
        inbox_fail(claimed, "out of memory holding %zu bytes of input from the data stream to %s", n, c->url);
    else
        fnw_instr_drop(&c->mgr->book, e, FNW_INSTR_NO_MEMORY, now_s(c->mgr));
}

/* Appends p[0..n) of the message to ib. A small part of a big message is
 * copied, so the message can go; otherwise the chunk keeps the message and
 * counts all of it. An inlined message (no refcount: gRPC keeps a small
 * one's bytes in the slice struct, which is the caller's) is always copied.
 * -1 when the bytes were not kept (ib may be gone). */
static int inbox_append(recv_ctx *rc, fnw_inbox *ib, const uint8_t *p, size_t n)
{
    fnw_data_mgr *m = rc->c->mgr;
    fnw_instr *e = ib->instr;
    size_t whole = GRPC_SLICE_LENGTH(rc->slice);
    int copy = n < whole / 2 || !rc->slice.refcount;
    size_t held = copy ? n : whole;
    if (fnw_instr_charge(&m->book, e, held, now_s(m)) < 0)
        return -1; /* over an early-data bound: e was dropped */
    int r = copy ? fnw_inbox_append_copy(ib, p, n) : fnw_inbox_append_ref(ib, rc->slice, p, n, held);
    if (r < 0) {
        fnw_instr_uncharge(&m->book, e, held);
        lose_input(rc->c, e, n);
        return -1;
    }
    if (e->state == FNW_INSTR_LIVE)
        rc->c->inbound_bytes += held;
    return 0;
}

/* The inbox for d, created if need be; NULL when d is to be dropped. */
static fnw_inbox *entry_inbox(fnw_data_conn *c, fnw_instr *e, const fnw_elem_data *d)
{
    fnw_inbox *ib = instr_inbox(e, c, d->transform_id, d->transform_len);
    if (ib)
        return ib->lost ? NULL : ib;
    fnw_inbox *claimed = instr_claimed(e);
    if (claimed) {
        inbox_fail(claimed,
                   "data arrived for transform '%.*s', which is not the input of this "
                   "bundle (it reads '%s')",
                   (int)d->transform_len, d->transform_id, claimed->transform_id);
        return NULL;
    }
    ib = inbox_new(c, e, d->transform_id, d->transform_len);
    if (!ib)
        lose_input(c, e, d->data_len);
    return ib;
}

/* Copies the run of relayed entries out of the message. The first copy
 * reserves what is left of the message, so a message is copied with one
 * allocation at most. */
static void relay_copy_run(recv_ctx *rc)
{
    size_t n = (size_t)(rc->run_end - rc->run);
    if (!n)
        return;
    if (!rc->failed) {
        const uint8_t *end = GRPC_SLICE_END_PTR(rc->slice);
        if ((!rc->out.cap && fnw_buf_reserve(&rc->out, (size_t)(end - rc->run)) < 0) ||
            fnw_buf_append(&rc->out, rc->run, n) < 0) {
            rc->failed = 1;
            rc->lost = rc->out.len;
            fnw_buf_free(&rc->out);
            fnw_buf_init(&rc->out, 0);
        }
    }
    if (rc->failed)
        rc->lost += n;
    rc->run = rc->run_end = NULL;
}

/* An entry of a relayed instruction: raw[0..n) of the message. */
static void relay_take(recv_ctx *rc, const uint8_t *raw, size_t n)
{
    if (raw == rc->run_end && rc->run_end) {
        rc->run_end += n;
        return;
    }
    relay_copy_run(rc);
    rc->run = raw;
    rc->run_end = raw + n;
}

/* Hands the relayed entries of the message to the tap: the message itself
 * when they are all of it. */
static void relay_deliver(recv_ctx *rc)
{
    fnw_data_conn *c = rc->c;
    fnw_data_mgr *m = c->mgr;
    if (!rc->run && !rc->out.len && !rc->failed)
        return;
    if (!m->tap.on_elements) {
        fnw_err(m->log,
                "data stream %s: no relay took the input of relayed instructions (the tap was removed)",
                c->url);
        return;
    }
    grpc_slice out;
    if (!rc->out.len && !rc->failed && rc->run == GRPC_SLICE_START_PTR(rc->slice) &&
        rc->run_end == GRPC_SLICE_END_PTR(rc->slice)) {
        out = grpc_slice_ref(rc->slice);
    } else {
        relay_copy_run(rc);
        if (rc->failed) {
            char msg[512];
            snprintf(msg, sizeof msg,
                     "out of memory copying %zu bytes of relayed instructions' input from the data "
                     "stream to %s",
                     rc->lost, c->url);
            fnw_err(m->log, "%s", msg);
            m->tap.on_failed(m->tap.user, c, msg);
            return;
        }
        size_t len;
        uint8_t *p = fnw_buf_steal(&rc->out, &len);
        out = grpc_slice_new(p, len, free);
    }
    m->tap.on_elements(m->tap.user, c, out);
}

static int on_data_entry(void *arg, const fnw_elem_data *d)
{
    recv_ctx *rc = arg;
    fnw_data_conn *c = rc->c;
    fnw_data_mgr *m = c->mgr;
    fnw_instr *e = fnw_instr_get(&m->book, d->instruction_id, d->instruction_len, now_s(m));
    if (!e) {
        fnw_err(m->log, "data stream %s: out of memory: dropped %zu bytes for instruction %.*s", c->url,
                d->data_len, (int)d->instruction_len, d->instruction_id);
        return 0;
    }
    e->input_bytes += d->data_len;
    if (e->state == FNW_INSTR_DONE || e->state == FNW_INSTR_DROPPED)
        return 0; /* finished, failed or given up: dropped as it arrives */
    if (e->relayed) {
        relay_take(rc, d->raw, d->raw_len);
        return 0;
    }
    fnw_inbox *ib = entry_inbox(c, e, d);
    if (!ib)
        return 0;
    if (d->data_len > 0 && inbox_append(rc, ib, d->data, d->data_len) < 0)
        return 0;
    if (d->is_last)
        ib->got_last = 1;
    if (ib->listener.user && !ib->woken && (d->data_len > 0 || d->is_last)) {
        ib->woken = 1;
        ib->wnext = c->wake;
        c->wake = ib;
    }
    return 0;
}

/* A Timers entry: relayed, held until the instruction is known to be
 * relayed or native, or (a native bundle reads the instruction) ignored. */
static int on_timers_entry(void *arg, const fnw_elem_timers *t)
{
    recv_ctx *rc = arg;
    fnw_data_conn *c = rc->c;
    fnw_data_mgr *m = c->mgr;
    fnw_instr *e = fnw_instr_get(&m->book, t->instruction_id, t->instruction_len, now_s(m));
    if (!e) {
        fnw_err(m->log, "data stream %s: out of memory: dropped %zu bytes of timers for instruction %.*s",
                c->url, t->raw_len, (int)t->instruction_len, t->instruction_id);
        return 0;
    }
    e->input_bytes += t->raw_len;
    if (e->state == FNW_INSTR_DONE || e->state == FNW_INSTR_DROPPED)
        return 0;
    if (e->relayed) {
        relay_take(rc, t->raw, t->raw_len);
        return 0;
    }
    if (instr_claimed(e)) {
        rc->timers_ignored++;
        return 0;
    }
    fnw_inbox *ib = instr_timers(e, c);
    if (!ib) {
        ib = inbox_new(c, e, "", 0);
        if (!ib) {
            lose_input(c, e, t->raw_len);
            return 0;
        }
        ib->timers = 1;
    }
    inbox_append(rc, ib, t->raw, t->raw_len);
    return 0;
}

/* Tells the bundles whose inboxes got input. A listener may free any inbox
 * meanwhile: it leaves the list then. */
static void wake_marked(fnw_data_conn *c)
{
    while (c->wake) {
        fnw_inbox *ib = c->wake;
        c->wake = ib->wnext;
        ib->woken = 0;
        ib->listener.on_input(ib->listener.user);
    }
}

void fnw_inbound_on_message(fnw_data_conn *c, grpc_slice msg)
{
    static const fnw_elem_visitor visit = { on_data_entry, on_timers_entry };
    recv_ctx rc = { .c = c, .slice = msg };
    fnw_buf_init(&rc.out, 0);
    fnw_error err;
    /* pointers into rc.slice, not msg: an inlined slice's bytes live in the
     * slice struct itself, and the run is compared with rc.slice's */
    if (fnw_elements_walk(GRPC_SLICE_START_PTR(rc.slice), GRPC_SLICE_LENGTH(rc.slice), &visit, &rc, &err) < 0)
        fnw_err(c->mgr->log, "data stream %s: dropped the rest of a malformed Elements message: %s", c->url,
                err.msg);
    relay_deliver(&rc);
    fnw_buf_free(&rc.out);
    if (rc.timers_ignored)
        fnw_warn(c->mgr->log,
                 "data stream %s: ignored %zu timer entries for bundles of fnworker operations (timers are "
                 "not supported by fnworker operations)",
                 c->url, rc.timers_ignored);
    conn_update_pause(c);
    expiry_arm(c->mgr);
    wake_marked(c);
}

void fnw_inbound_notify(fnw_data_conn *c)
{
    /* Listeners may free their inbox while we walk: take next first. */
    fnw_inbox *ib = c->claimed;
    while (ib) {
        fnw_inbox *next = ib->cnext;
        ib->listener.on_input(ib->listener.user);
        ib = next;
    }
}

void fnw_inbound_closed(fnw_data_conn *c, const char *msg)
{
    fnw_inbox *ib = c->claimed;
    while (ib) {
        fnw_inbox *next = ib->cnext;
        ib->listener.on_failed(ib->listener.user, msg);
        ib = next;
    }
}

/* ---- the manager's part ----------------------------------------------------------- */

int fnw_inbound_init(fnw_data_mgr *m)
{
    if (fnw_instr_init(&m->book, &m->cfg.early, on_instr_drop, m) < 0)
        return -1;
    m->cfg.early = m->book.lim;
    /* expiry is checked a few times per early-data lifetime, at least once a second */
    double tick = m->book.lim.early_ttl_s / 4;
    if (tick > 1)
        tick = 1;
    if (tick < 0.05)
        tick = 0.05;
    ev_timer_init(&m->expiry, expiry_cb, tick, tick);
    m->expiry.data = m;
    m->warn_since = ev_now(m->loop);
    return 0;
}

void fnw_inbound_stop(fnw_data_mgr *m)
{
    ev_timer_stop(m->loop, &m->expiry);
    warn_window_roll(m, now_s(m), 1);
}

static void free_instr_inboxes(void *user, fnw_instr *e)
{
    while (e->data)
        inbox_drop(e->data, 0);
}

void fnw_inbound_free(fnw_data_mgr *m)
{
    ev_timer_stop(m->loop, &m->expiry);
    fnw_instr_free(&m->book, free_instr_inboxes);
}

/* ---- public ------------------------------------------------------------------------ */

int fnw_inbound_expect(fnw_data_mgr *m, const char *iid)
{
    return instr_go_live(m, iid, strlen(iid)) ? 0 : -1;
}

void fnw_inbound_finish(fnw_data_mgr *m, const char *iid)
{
    /* a tombstone even if nothing came yet: what comes later is dropped */
    fnw_instr *e = instr_go_live(m, iid, strlen(iid));
    if (!e || e->state != FNW_INSTR_LIVE)
        return;
    if (!instr_free_unclaimed(e, 1))
        fnw_instr_finish(&m->book, e, now_s(m));
    expiry_arm(m);
}

/* The bytes ib's chunks hold (not what they keep alive). */
static size_t chunks_len(const fnw_inbox *ib)
{
    size_t n = 0;
    for (const fnw_chunk *ch = ib->head; ch; ch = ch->next)
        n += ch->n;
    return n;
}

/* A native bundle reads e: the timers held for it go, with a WARN. */
static void drop_held_timers(fnw_data_mgr *m, fnw_instr *e)
{
    size_t n = 0, bytes = 0;
    fnw_inbox *ib;
    while ((ib = instr_timers(e, NULL))) {
        for (fnw_chunk *ch = ib->head; ch; ch = ch->next) {
            n++;
            bytes += ch->n;
        }
        inbox_drop(ib, 1);
    }
    if (n)
        fnw_log(m->log, FNW_LOG_WARN, e->id, NULL,
                "instruction %s: ignored %zu timer entries (%zu bytes) that arrived for it (timers are not "
                "supported by fnworker operations)",
                e->id, n, bytes);
}

/* What e holds from c as one Elements message: a Data entry per transform
 * (its chunks joined), followed by an empty Data entry with is_last when it
 * came, then the held Timers entries as they came; an empty slice when that
 * is nothing. is_last always travels in an entry of its own: Beam's SDK
 * harness ignores the data of an entry that has is_last set
 * (data_plane.py, _GrpcDataChannel.input_elements). -1 when out of memory. */
static int held_to_elements(fnw_instr *e, const fnw_data_conn *c, grpc_slice *out)
{
    size_t total = 0;
    for (fnw_inbox *ib = e->data; ib; ib = ib->next) {
        if (ib->conn != c)
            continue;
        size_t n = chunks_len(ib), tl = strlen(ib->transform_id);
        if (ib->timers)
            total += n;
        else
            total += (n ? fnw_elements_data_size(e->id_len, tl, n, 0) : 0) +
                     (ib->got_last ? fnw_elements_data_size(e->id_len, tl, 0, 1) : 0);
    }
    if (!total) {
        *out = grpc_empty_slice();
        return 0;
    }
    uint8_t *buf = malloc(total);
    if (!buf)
        return -1;
    uint8_t *w = buf;
    for (int timers = 0; timers < 2; timers++) {
        for (fnw_inbox *ib = e->data; ib; ib = ib->next) {
            if (ib->conn != c || ib->timers != timers)
                continue;
            size_t n = chunks_len(ib), tl = strlen(ib->transform_id);
            if (!timers && n)
                w = fnw_elements_put_data_head(w, e->id, e->id_len, ib->transform_id, tl, n);
            for (fnw_chunk *ch = ib->head; ch; ch = ch->next) {
                memcpy(w, ch->p, ch->n);
                w += ch->n;
            }
            if (!timers && ib->got_last)
                w = fnw_elements_put_data(w, e->id, e->id_len, ib->transform_id, tl, NULL, 0, 1);
        }
    }
    *out = grpc_slice_new(buf, (size_t)(w - buf), free);
    return 0;
}

int fnw_inbound_relay(fnw_data_mgr *m, const char *iid, fnw_error *err)
{
    size_t len = strlen(iid);
    fnw_instr *e = instr_go_live(m, iid, len);
    if (!e)
        return fnw_error_set(err, "out of memory relaying the input of instruction %s", iid);
    if (!m->tap.on_elements)
        return fnw_error_set(err, "no relay takes the input of instruction %s", iid);
    if (e->state == FNW_INSTR_DROPPED) {
        char text[512];
        return fnw_error_set(err, "%s", drop_text(m, e, text, sizeof text));
    }
    if (e->state == FNW_INSTR_DONE)
        return fnw_error_set(err, "instruction %s already ran (instruction ids must not repeat)", iid);
    if (e->relayed)
        return 0;
    if (instr_claimed(e))
        return fnw_error_set(err, "a bundle of fnworker operations already reads the input of instruction %s",
                             iid);
    e->relayed = 1;
    /* per connection, what is held goes out and is freed before the tap
     * hears of it: the tap may finish the instruction meanwhile */
    while (e && e->state == FNW_INSTR_LIVE && e->data) {
        fnw_data_conn *c = ((fnw_inbox *)e->data)->conn;
        grpc_slice held;
        if (held_to_elements(e, c, &held) < 0) {
            fnw_instr_drop(&m->book, e, FNW_INSTR_NO_MEMORY, now_s(m));
            expiry_arm(m);
            return fnw_error_set(err, "out of memory relaying the input held for instruction %s", iid);
        }
        fnw_inbox *ib = e->data;
        while (ib) {
            fnw_inbox *next = ib->next;
            if (ib->conn == c)
                inbox_drop(ib, 1);
            ib = next;
        }
        if (GRPC_SLICE_LENGTH(held))
            m->tap.on_elements(m->tap.user, c, held);
        e = fnw_instr_find(&m->book, iid, len);
    }
    return 0;
}

static int claim_error(fnw_data_conn *c, fnw_instr *e, const char *tid, fnw_error *err)
{
    char text[512];
    if (e->state == FNW_INSTR_DROPPED)
        return fnw_error_set(err, "%s", drop_text(c->mgr, e, text, sizeof text));
    if (e->state == FNW_INSTR_DONE)
        return fnw_error_set(err,
                             "this instruction id already ran on the data stream to %s "
                             "(instruction ids must not repeat)",
                             c->url);
    if (e->relayed)
        return fnw_error_set(err, "its input goes to PyFlink's Python worker (the instruction is relayed)");
    for (fnw_inbox *ib = e->data; ib; ib = ib->next) {
        if (ib->timers)
            continue;
        if (ib->conn != c)
            return fnw_error_set(err,
                                 "its input arrived on the data stream to %s, but its "
                                 "descriptor names %s",
                                 ib->conn->url, c->url);
        if (strcmp(ib->transform_id, tid))
            return fnw_error_set(err,
                                 "data arrived for transform '%s', which is not the input of "
                                 "this bundle (it reads '%s')",
                                 ib->transform_id, tid);
        if (ib->listener.user)
            return fnw_error_set(err, "a bundle already reads its input from transform '%s'", tid);
    }
    return 0;
}

fnw_inbox *fnw_inbound_claim(fnw_data_conn *c, const char *iid, const char *tid, const fnw_data_listener *l,
                             fnw_error *err)
{
    fnw_instr *e = instr_go_live(c->mgr, iid, strlen(iid));
    if (!e) {
        fnw_error_set(err, "out of memory claiming the input of instruction %s", iid);
        return NULL;
    }
    if (claim_error(c, e, tid, err) < 0)
        return NULL;
    fnw_inbox *ib = instr_inbox(e, c, tid, strlen(tid));
    if (!ib)
        ib = inbox_new(c, e, tid, strlen(tid));
    if (!ib) {
        fnw_error_set(err, "out of memory claiming the input of instruction %s", iid);
        return NULL;
    }
    ib->listener = *l;
    ib->cprev = NULL;
    ib->cnext = c->claimed;
    if (c->claimed)
        c->claimed->cprev = ib;
    c->claimed = ib;
    drop_held_timers(c->mgr, e);
    return ib;
}

void fnw_inbound_release(fnw_inbox *ib)
{
    fnw_data_mgr *m = ib->conn->mgr;
    fnw_instr *e = ib->instr;
    inbox_drop(ib, 1);
    if (!instr_free_unclaimed(e, 1))
        fnw_instr_finish(&m->book, e, now_s(m));
    expiry_arm(m);
}
