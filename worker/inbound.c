/* worker/inbound.c — the received half of the data plane (see data.h):
 * Elements messages are split by (instruction, transform) into inboxes
 * (worker/inbox.c frames them), and the bundles reading the inboxes that got
 * input are woken;
 * which instruction an id is, and whether its data is kept, counted against
 * the connection's limit or against the early-data bounds, or dropped, is the
 * book's (worker/instr.h). Drops of early data are logged at WARN, a few one
 * by one and the rest summed up per window.
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

/* Stops or resumes receiving as c's held bytes cross the limit. */
static void conn_update_pause(fnw_data_conn *c)
{
    size_t limit = c->mgr->cfg.inbound_limit;
    int want = c->inbound_bytes >= limit;
    if (!want && c->recv_paused && c->inbound_bytes > limit / 2)
        want = 1; /* hysteresis: resume below half the limit */
    if (want != c->recv_paused && c->stream) {
        c->recv_paused = want;
        c->mgr->io->pause_recv(c->stream, want);
    }
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
        if (ib->conn == c && span_eq(tid, tl, ib->transform_id))
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

/* Appends d's bytes to ib. A small part of a big message is copied, so the
 * message can go; otherwise the chunk keeps the message and counts all of
 * it. An inlined message (no refcount: gRPC keeps a small one's bytes in the
 * slice struct, which is the caller's) is always copied. -1 when the bytes
 * were not kept (ib may be gone). */
static int inbox_append(recv_ctx *rc, fnw_inbox *ib, const fnw_elem_data *d)
{
    fnw_data_mgr *m = rc->c->mgr;
    fnw_instr *e = ib->instr;
    size_t whole = GRPC_SLICE_LENGTH(rc->slice);
    int copy = d->data_len < whole / 2 || !rc->slice.refcount;
    size_t held = copy ? d->data_len : whole;
    if (fnw_instr_charge(&m->book, e, held, now_s(m)) < 0)
        return -1; /* over an early-data bound: e was dropped */
    int r = copy ? fnw_inbox_append_copy(ib, d->data, d->data_len)
                 : fnw_inbox_append_ref(ib, rc->slice, d->data, d->data_len, held);
    if (r < 0) {
        fnw_instr_uncharge(&m->book, e, held);
        lose_input(rc->c, e, d->data_len);
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
    fnw_inbox *ib = entry_inbox(c, e, d);
    if (!ib)
        return 0;
    if (d->data_len > 0 && inbox_append(rc, ib, d) < 0)
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
    recv_ctx rc = { c, msg };
    size_t timers = 0;
    fnw_error err;
    if (fnw_elements_each(GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), on_data_entry, &rc, &timers,
                          &err) < 0)
        fnw_err(c->mgr->log, "data stream %s: dropped a malformed Elements message: %s", c->url, err.msg);
    if (timers)
        fnw_warn(c->mgr->log, "data stream %s: ignored %zu timer entries (timers are not supported)", c->url,
                 timers);
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
    for (fnw_inbox *ib = e->data; ib; ib = ib->next) {
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
