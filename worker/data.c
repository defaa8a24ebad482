/* worker/data.c — Data streams, inboxes and outboxes (see data.h). */
#include "worker/data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/varint.h"
#include "worker/elements.h"
#include "worker/pb.h"

#define FINISHED_IDS 64       /* instructions whose late data we drop */

struct fnw_data_conn {
    fnw_data_conn *next;
    fnw_data_mgr *mgr;
    char *url;
    grpc_channel *ch;
    fnw_stream *stream;
    fnw_inbox *inboxes;
    fnw_outbox *outboxes;
    size_t inbound_bytes;
    int recv_paused;
    char *error;
    ev_timer flush_timer;
    fnw_ready_wait *ready;      /* until the channel connects */
    char *finished[FINISHED_IDS];
    unsigned finished_next;
};

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

static void conn_notify_all(fnw_data_conn *c)
{
    /* Listeners may release their inbox while we walk: take next first. */
    fnw_inbox *ib = c->inboxes;
    while (ib) {
        fnw_inbox *next = ib->next;
        if (ib->listener.user)
            ib->listener.on_input(ib->listener.user);
        ib = next;
    }
}

static void conn_update_pause(fnw_data_conn *c)
{
    size_t limit = c->mgr->cfg.inbound_limit;
    int want = c->inbound_bytes >= limit;
    if (!want && c->recv_paused && c->inbound_bytes > limit / 2)
        want = 1;   /* hysteresis: resume below half the limit */
    if (want != c->recv_paused && c->stream) {
        c->recv_paused = want;
        fnw_stream_pause_recv(c->stream, want);
    }
}

static int conn_is_finished(fnw_data_conn *c, const char *iid, size_t il)
{
    for (unsigned i = 0; i < FINISHED_IDS; i++)
        if (c->finished[i] && span_eq(iid, il, c->finished[i]))
            return 1;
    return 0;
}

static void conn_mark_finished(fnw_data_conn *c, const char *iid)
{
    free(c->finished[c->finished_next]);
    c->finished[c->finished_next] = strdup(iid);
    c->finished_next = (c->finished_next + 1) % FINISHED_IDS;
}

static fnw_inbox *conn_find_inbox(fnw_data_conn *c, const char *iid, size_t il,
                                  const char *tid, size_t tl)
{
    for (fnw_inbox *ib = c->inboxes; ib; ib = ib->next)
        if (span_eq(iid, il, ib->instruction_id) && span_eq(tid, tl, ib->transform_id))
            return ib;
    return NULL;
}

static fnw_inbox *conn_new_inbox(fnw_data_conn *c, const char *iid, size_t il,
                                 const char *tid, size_t tl)
{
    fnw_inbox *ib = calloc(1, sizeof *ib);
    if (!ib)
        return NULL;
    ib->conn = c;
    ib->instruction_id = span_dup(iid, il);
    ib->transform_id = span_dup(tid, tl);
    ib->next = c->inboxes;
    c->inboxes = ib;
    return ib;
}

/* ---- inbound ------------------------------------------------------------------- */

typedef struct recv_ctx {
    fnw_data_conn *c;
    grpc_slice slice;
} recv_ctx;

static int on_data_entry(void *arg, const fnw_elem_data *d)
{
    recv_ctx *rc = arg;
    fnw_data_conn *c = rc->c;
    if (conn_is_finished(c, d->instruction_id, d->instruction_len))
        return 0;
    fnw_inbox *ib = conn_find_inbox(c, d->instruction_id, d->instruction_len,
                                    d->transform_id, d->transform_len);
    if (!ib)
        ib = conn_new_inbox(c, d->instruction_id, d->instruction_len, d->transform_id,
                            d->transform_len);
    if (!ib)
        return 0;
    if (d->data_len > 0) {
        fnw_chunk *ch = malloc(sizeof *ch);
        if (!ch)
            return 0;
        ch->next = NULL;
        ch->slice = grpc_slice_ref(rc->slice);
        ch->p = d->data;
        ch->n = d->data_len;
        if (ib->tail)
            ib->tail->next = ch;
        else
            ib->head = ch;
        ib->tail = ch;
        ib->bytes += ch->n;
        c->inbound_bytes += ch->n;
    }
    if (d->is_last)
        ib->got_last = 1;
    return 0;
}

static void conn_on_message(void *user, grpc_slice msg)
{
    fnw_data_conn *c = user;
    recv_ctx rc = {c, msg};
    size_t timers = 0;
    fnw_error err;
    if (fnw_elements_each(GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), on_data_entry, &rc,
                          &timers, &err) < 0)
        fnw_err(c->mgr->log, "data stream %s: dropped a malformed Elements message: %s", c->url,
                err.msg);
    if (timers)
        fnw_warn(c->mgr->log, "data stream %s: ignored %zu timer entries (timers are not supported)",
                 c->url, timers);
    conn_update_pause(c);
    conn_notify_all(c);
}

static void conn_on_writable(void *user)
{
    conn_notify_all(user);
}

static void conn_on_closed(void *user, grpc_status_code code, const char *details)
{
    fnw_data_conn *c = user;
    char msg[512];
    snprintf(msg, sizeof msg, "the data stream to %s closed (status %d: %s)", c->url, (int)code,
             details && *details ? details : "no details");
    free(c->error);
    c->error = strdup(msg);
    fnw_stream_release(c->stream);
    c->stream = NULL;
    fnw_inbox *ib = c->inboxes;
    while (ib) {
        fnw_inbox *next = ib->next;
        if (ib->listener.user)
            ib->listener.on_failed(ib->listener.user, msg);
        ib = next;
    }
}

/* ---- outbound ------------------------------------------------------------------ */

static void free_buffer(void *p)
{
    free(p);
}

/* One message: per outbox a head slice and its buffer handed over as a slice
 * of its own (no copy), then the is_last entries when asked. */
static void outbox_send(fnw_outbox **obs, size_t n, int is_last, fnw_sent_cb done, void *arg)
{
    fnw_data_conn *c = obs[0]->conn;
    size_t heads = 0, with_data = 0;
    for (size_t i = 0; i < n; i++) {
        size_t il = strlen(obs[i]->instruction_id), tl = strlen(obs[i]->transform_id);
        if (obs[i]->buf.len) {
            heads += fnw_elements_data_head_size(il, tl, obs[i]->buf.len);
            with_data++;
        }
        if (is_last)
            heads += fnw_elements_data_size(il, tl, 0, 1);
    }
    grpc_slice *slices = heads ? malloc((2 * with_data + 1) * sizeof *slices) : NULL;
    if (!heads || !c->stream || !slices) {
        free(slices);
        for (size_t i = 0; i < n; i++)
            fnw_buf_clear(&obs[i]->buf);
        if (done)
            done(arg, c->stream != NULL && heads == 0);
        return;
    }
    grpc_slice head = grpc_slice_malloc(heads);
    uint8_t *w = GRPC_SLICE_START_PTR(head), *from = w;
    size_t ns = 0;
    for (size_t i = 0; i < n; i++) {
        fnw_outbox *ob = obs[i];
        if (!ob->buf.len)
            continue;
        size_t il = strlen(ob->instruction_id), tl = strlen(ob->transform_id);
        w = fnw_elements_put_data_head(w, ob->instruction_id, il, ob->transform_id, tl, ob->buf.len);
        slices[ns++] = grpc_slice_sub(head, (size_t)(from - GRPC_SLICE_START_PTR(head)),
                                      (size_t)(w - GRPC_SLICE_START_PTR(head)));
        from = w;
        size_t len;
        uint8_t *p = fnw_buf_steal(&ob->buf, &len);
        slices[ns++] = grpc_slice_new(p, len, free_buffer);
    }
    if (is_last) {
        for (size_t i = 0; i < n; i++) {
            fnw_outbox *ob = obs[i];
            w = fnw_elements_put_data(w, ob->instruction_id, strlen(ob->instruction_id),
                                      ob->transform_id, strlen(ob->transform_id), NULL, 0, 1);
        }
        slices[ns++] = grpc_slice_sub(head, (size_t)(from - GRPC_SLICE_START_PTR(head)),
                                      (size_t)(w - GRPC_SLICE_START_PTR(head)));
    }
    grpc_slice_unref(head);
    fnw_stream_send_slices(c->stream, slices, ns, done, arg);
    free(slices);
}

static void conn_flush_all(fnw_data_conn *c)
{
    fnw_outbox *batch[32];
    size_t n = 0;
    for (fnw_outbox *ob = c->outboxes; ob; ob = ob->next) {
        if (!ob->buf.len)
            continue;
        batch[n++] = ob;
        if (n == 32) {
            outbox_send(batch, n, 0, NULL, NULL);
            n = 0;
        }
    }
    if (n)
        outbox_send(batch, n, 0, NULL, NULL);
}

static void conn_flush_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    conn_flush_all(w->data);
}

static void conn_ready(void *user, int ready)
{
    fnw_data_conn *c = user;
    c->ready = NULL;
    if (ready || c->error || !c->stream)
        return;
    char msg[512];
    snprintf(msg, sizeof msg, "could not connect to the data endpoint %s within %.0f s", c->url,
             c->mgr->cfg.connect_timeout_s);
    fnw_err(c->mgr->log, "%s", msg);
    c->error = strdup(msg);
    fnw_stream_cancel(c->stream);
}

/* ---- public -------------------------------------------------------------------- */

void fnw_data_init(fnw_data_mgr *m, struct ev_loop *loop, fnw_rpc *rpc, fnw_logger *log,
                   const fnw_data_config *cfg)
{
    memset(m, 0, sizeof *m);
    m->loop = loop;
    m->rpc = rpc;
    m->log = log;
    m->cfg = *cfg;
    if (!m->cfg.flush_bytes)
        m->cfg.flush_bytes = 1000000;
    if (m->cfg.flush_ms <= 0)
        m->cfg.flush_ms = 5;
    if (!m->cfg.inbound_limit)
        m->cfg.inbound_limit = 4u << 20;
    if (m->cfg.connect_timeout_s <= 0)
        m->cfg.connect_timeout_s = 60;
}

fnw_data_conn *fnw_data_connect(fnw_data_mgr *m, const char *url)
{
    for (fnw_data_conn *c = m->conns; c; c = c->next)
        if (!strcmp(c->url, url))
            return c;
    fnw_data_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->mgr = m;
    c->url = strdup(url);
    c->ch = fnw_rpc_channel(url);
    ev_timer_init(&c->flush_timer, conn_flush_cb, m->cfg.flush_ms / 1000.0, 0);
    c->flush_timer.data = c;
    fnw_stream_handler h = {c, conn_on_message, conn_on_writable, conn_on_closed};
    c->stream = fnw_stream_open(m->rpc, c->ch, FNW_METHOD_DATA, &h, 1);
    c->ready = fnw_rpc_wait_ready(m->rpc, c->ch, m->cfg.connect_timeout_s, conn_ready, c);
    c->next = m->conns;
    m->conns = c;
    fnw_info(m->log, "opened the data stream to %s", url);
    return c;
}

const char *fnw_data_conn_error(const fnw_data_conn *c)
{
    return c->error;
}

int fnw_data_conn_congested(const fnw_data_conn *c)
{
    return c->stream && fnw_stream_congested(c->stream);
}

fnw_inbox *fnw_data_claim_inbox(fnw_data_conn *c, const char *iid, const char *tid,
                                const fnw_data_listener *l)
{
    fnw_inbox *ib = conn_find_inbox(c, iid, strlen(iid), tid, strlen(tid));
    if (!ib)
        ib = conn_new_inbox(c, iid, strlen(iid), tid, strlen(tid));
    if (ib)
        ib->listener = *l;
    return ib;
}

void fnw_inbox_pop(fnw_inbox *ib)
{
    fnw_chunk *ch = ib->head;
    if (!ch)
        return;
    ib->head = ch->next;
    if (!ib->head)
        ib->tail = NULL;
    ib->bytes -= ch->n;
    ib->conn->inbound_bytes -= ch->n;
    grpc_slice_unref(ch->slice);
    free(ch);
    conn_update_pause(ib->conn);
}

void fnw_inbox_release(fnw_inbox *ib)
{
    fnw_data_conn *c = ib->conn;
    while (ib->head)
        fnw_inbox_pop(ib);
    fnw_inbox **pp = &c->inboxes;
    while (*pp && *pp != ib)
        pp = &(*pp)->next;
    if (*pp)
        *pp = ib->next;
    conn_mark_finished(c, ib->instruction_id);
    free(ib->instruction_id);
    free(ib->transform_id);
    free(ib);
}

fnw_outbox *fnw_data_open_outbox(fnw_data_conn *c, const char *iid, const char *tid)
{
    fnw_outbox *ob = calloc(1, sizeof *ob);
    if (!ob)
        return NULL;
    ob->conn = c;
    ob->instruction_id = strdup(iid);
    ob->transform_id = strdup(tid);
    ob->flush_bytes = c->mgr->cfg.flush_bytes;
    fnw_buf_init(&ob->buf, 0);
    ob->next = c->outboxes;
    c->outboxes = ob;
    return ob;
}

uint8_t *fnw_outbox_reserve_slow(fnw_outbox *ob, size_t len)
{
    fnw_data_conn *c = ob->conn;
    size_t flush = ob->flush_bytes;
    if (ob->buf.len && ob->buf.len + len + FNW_VARINT_MAX > flush) {
        fnw_outbox *one = ob;
        outbox_send(&one, 1, 0, NULL, NULL);
    }
    if (ob->buf.cap - ob->buf.len < len + FNW_VARINT_MAX) {
        /* a buffer that was just sent starts at the flush size, so it
         * fills without growing */
        size_t want = len + FNW_VARINT_MAX;
        if (ob->buf.cap == 0 && want < flush + FNW_VARINT_MAX)
            want = flush + FNW_VARINT_MAX;
        if (fnw_buf_reserve(&ob->buf, want) < 0)
            return NULL;
    }
    if (ob->buf.len == 0 && !ev_is_active(&c->flush_timer)) {
        ev_timer_set(&c->flush_timer, c->mgr->cfg.flush_ms / 1000.0, 0);
        ev_timer_start(c->mgr->loop, &c->flush_timer);
    }
    ob->buf.len += (size_t)fnw_varint_write(ob->buf.p + ob->buf.len, len);
    uint8_t *w = ob->buf.p + ob->buf.len;
    ob->buf.len += len;
    ob->records++;
    return w;
}

void fnw_outbox_finish(fnw_outbox **obs, size_t n, fnw_sent_cb done, void *arg)
{
    outbox_send(obs, n, 1, done, arg);
}

void fnw_outbox_release(fnw_outbox *ob)
{
    fnw_data_conn *c = ob->conn;
    fnw_outbox **pp = &c->outboxes;
    while (*pp && *pp != ob)
        pp = &(*pp)->next;
    if (*pp)
        *pp = ob->next;
    fnw_buf_free(&ob->buf);
    free(ob->instruction_id);
    free(ob->transform_id);
    free(ob);
}

void fnw_data_shutdown(fnw_data_mgr *m)
{
    for (fnw_data_conn *c = m->conns; c; c = c->next) {
        ev_timer_stop(m->loop, &c->flush_timer);
        fnw_ready_cancel(c->ready);
        c->ready = NULL;
        if (c->stream)
            fnw_stream_cancel(c->stream);
    }
}

void fnw_data_free(fnw_data_mgr *m)
{
    fnw_data_conn *c = m->conns;
    while (c) {
        fnw_data_conn *next = c->next;
        ev_timer_stop(m->loop, &c->flush_timer);
        fnw_ready_cancel(c->ready);
        while (c->inboxes)
            fnw_inbox_release(c->inboxes);
        while (c->outboxes)
            fnw_outbox_release(c->outboxes);
        if (c->stream)
            fnw_stream_release(c->stream);
        grpc_channel_destroy(c->ch);
        for (unsigned i = 0; i < FINISHED_IDS; i++)
            free(c->finished[i]);
        free(c->error);
        free(c->url);
        free(c);
        c = next;
    }
    m->conns = NULL;
}
