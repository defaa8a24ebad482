/* worker/data.c — Data streams and outboxes (see data.h); what arrives on
 * a stream is worker/inbound.c's. The streams are reached through the io
 * table (data_internal.h): gRPC's, defined here, unless a test puts in its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/varint.h"
#include "worker/data_internal.h"
#include "worker/elements.h"
#include "base/pb.h"

/* ---- connections ---------------------------------------------------------------- */

static double loop_now(struct ev_loop *loop)
{
    return ev_now(loop);
}

static void channel_free(grpc_channel *ch)
{
    grpc_channel_destroy(ch);
}

const fnw_data_io fnw_data_io_grpc = {
    fnw_rpc_channel,        channel_free,           fnw_rpc_wait_ready,   fnw_rpc_ready_cancel,
    fnw_stream_start,       fnw_stream_send_slices, fnw_stream_congested, fnw_stream_pause_recv,
    fnw_stream_cancel,      fnw_stream_close_send,  fnw_stream_free,      loop_now,
    fnw_stream_send_queued,
};

static void conn_on_message(void *user, grpc_slice msg)
{
    fnw_inbound_on_message(user, msg);
}

static void conn_on_writable(void *user)
{
    fnw_data_conn *c = user;
    fnw_data_mgr *m = c->mgr;
    fnw_inbound_notify(c);
    if (m->tap.on_writable)
        m->tap.on_writable(m->tap.user, c);
}

static void conn_on_closed(void *user, grpc_status_code code, const char *details)
{
    fnw_data_conn *c = user;
    char msg[512];
    snprintf(msg, sizeof msg, "the data stream to %s closed (status %d: %s)", c->url, (int)code,
             details && *details ? details : "no details");
    c->failed = 1;
    snprintf(c->error, sizeof c->error, "%s", msg);
    c->mgr->io->stream_free(c->stream);
    c->stream = NULL;
    if (!c->mgr->stopping)
        fnw_info(c->mgr->log, "%s; the next bundle reopens it", msg);
    fnw_inbound_closed(c, msg);
    if (c->mgr->tap.on_failed)
        c->mgr->tap.on_failed(c->mgr->tap.user, c, msg);
}

/* ---- outbound ------------------------------------------------------------------ */

static void free_buffer(void *p)
{
    free(p);
}

/* Outboxes one message carries without allocating its slice array (a
 * flush sends at most this many; a bundle finishes with one per sink). */
#define OUTBOX_SEND_MAX 32

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
    grpc_slice few[2 * OUTBOX_SEND_MAX + 1];
    grpc_slice *slices = !heads                 ? NULL
                         : n <= OUTBOX_SEND_MAX ? few
                                                : malloc((2 * with_data + 1) * sizeof *slices);
    if (!heads || !c->stream || !slices) {
        if (slices != few)
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
            w = fnw_elements_put_data(w, ob->instruction_id, strlen(ob->instruction_id), ob->transform_id,
                                      strlen(ob->transform_id), NULL, 0, 1);
        }
        slices[ns++] = grpc_slice_sub(head, (size_t)(from - GRPC_SLICE_START_PTR(head)),
                                      (size_t)(w - GRPC_SLICE_START_PTR(head)));
    }
    grpc_slice_unref(head);
    c->mgr->io->send(c->stream, slices, ns, done, arg);
    if (slices != few)
        free(slices);
}

static void conn_flush_all(fnw_data_conn *c)
{
    fnw_outbox *batch[OUTBOX_SEND_MAX];
    size_t n = 0;
    for (fnw_outbox *ob = c->outboxes; ob; ob = ob->next) {
        if (!ob->buf.len)
            continue;
        batch[n++] = ob;
        if (n == OUTBOX_SEND_MAX) {
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

static int conn_unsent(const fnw_data_conn *c)
{
    for (const fnw_outbox *ob = c->outboxes; ob; ob = ob->next)
        if (ob->buf.len)
            return 1;
    return 0;
}

/* The loop is about to wait: send what this turn produced on every
 * connection with no message being written; stay armed while some wait
 * for their write to finish. */
static void idle_flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    fnw_data_mgr *m = w->data;
    int waiting = 0;
    for (fnw_data_conn *c = m->conns; c; c = c->next) {
        if (!conn_unsent(c))
            continue;
        if (c->stream && m->io->send_queued && m->io->send_queued(c->stream) > 0) {
            waiting = 1;
            continue;
        }
        conn_flush_all(c);
    }
    if (!waiting)
        ev_prepare_stop(loop, w);
}

static void conn_ready(void *user, int ready)
{
    fnw_data_conn *c = user;
    c->ready = NULL;
    if (ready || c->failed || !c->stream)
        return;
    char msg[512];
    snprintf(msg, sizeof msg, "could not connect to the data endpoint %s within %.0f s", c->url,
             c->mgr->cfg.connect_timeout_s);
    fnw_err(c->mgr->log, "%s", msg);
    c->failed = 1;
    snprintf(c->error, sizeof c->error, "%s", msg);
    c->mgr->io->cancel(c->stream);
}

/* ---- public -------------------------------------------------------------------- */

int fnw_data_init(fnw_data_mgr *m, struct ev_loop *loop, fnw_rpc *rpc, fnw_logger *log,
                  const fnw_data_config *cfg)
{
    memset(m, 0, sizeof *m);
    m->loop = loop;
    m->rpc = rpc;
    m->io = &fnw_data_io_grpc;
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
    ev_prepare_init(&m->idle, idle_flush_cb);
    m->idle.data = m;
    return fnw_inbound_init(m);
}

/* Starts the connection's Data stream and its wait for the channel. */
static void conn_start_stream(fnw_data_conn *c)
{
    fnw_data_mgr *m = c->mgr;
    fnw_stream_handler h = { c, conn_on_message, conn_on_writable, conn_on_closed };
    c->stream = m->io->stream_start(m->rpc, c->ch, FNW_METHOD_DATA, &h, 1);
    c->recv_paused = 0;
    fnw_inbound_update_pause(c); /* the manager's hold, held bytes of the stream before */
    c->ready = m->io->wait_ready(m->rpc, c->ch, m->cfg.connect_timeout_s, conn_ready, c);
}

/* A connection whose stream failed is opened afresh for the next bundle
 * once no bundle of the failed stream holds an inbox or outbox on it (those
 * have been told it failed); the channel itself reconnects on its own. */
static int conn_restart(fnw_data_conn *c)
{
    if (c->claimed || c->outboxes)
        return 0;
    fnw_data_mgr *m = c->mgr;
    if (c->ready) {
        m->io->ready_cancel(c->ready);
        c->ready = NULL;
    }
    if (c->stream) {
        m->io->stream_free(c->stream);
        c->stream = NULL;
    }
    fnw_info(m->log, "reopening the data stream to %s after it failed (%s)", c->url, c->error);
    c->failed = 0;
    conn_start_stream(c);
    return 1;
}

fnw_data_conn *fnw_data_connect(fnw_data_mgr *m, const char *url)
{
    for (fnw_data_conn *c = m->conns; c; c = c->next)
        if (!strcmp(c->url, url)) {
            if (c->failed)
                conn_restart(c);
            return c;
        }
    fnw_data_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->mgr = m;
    if (!(c->url = strdup(url))) {
        free(c);
        return NULL;
    }
    c->ch = m->io->channel(url);
    ev_timer_init(&c->flush_timer, conn_flush_cb, m->cfg.flush_ms / 1000.0, 0);
    c->flush_timer.data = c;
    conn_start_stream(c);
    c->next = m->conns;
    m->conns = c;
    fnw_info(m->log, "opened the data stream to %s", url);
    return c;
}

const char *fnw_data_conn_error(const fnw_data_conn *c)
{
    return c->failed ? c->error : NULL;
}

int fnw_data_conn_congested(const fnw_data_conn *c)
{
    return c->stream && c->mgr->io->congested(c->stream);
}

fnw_outbox *fnw_data_outbox_new(fnw_data_conn *c, const char *iid, const char *tid)
{
    fnw_outbox *ob = calloc(1, sizeof *ob);
    if (!ob)
        return NULL;
    ob->conn = c;
    ob->instruction_id = strdup(iid);
    ob->transform_id = strdup(tid);
    if (!ob->instruction_id || !ob->transform_id) {
        free(ob->instruction_id);
        free(ob->transform_id);
        free(ob);
        return NULL;
    }
    ob->flush_bytes = c->mgr->cfg.flush_bytes;
    fnw_buf_init(&ob->buf, 0);
    ob->next = c->outboxes;
    c->outboxes = ob;
    return ob;
}

uint8_t *fnw_data_outbox_reserve_slow(fnw_outbox *ob, size_t len)
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
    if (ob->buf.len == 0 && !ev_is_active(&c->mgr->idle))
        ev_prepare_start(c->mgr->loop, &c->mgr->idle);
    ob->buf.len += (size_t)fnw_varint_write(ob->buf.p + ob->buf.len, len);
    uint8_t *w = ob->buf.p + ob->buf.len;
    ob->buf.len += len;
    ob->records++;
    return w;
}

void fnw_data_set_tap(fnw_data_mgr *m, const fnw_data_tap *tap)
{
    if (tap)
        m->tap = *tap;
    else
        memset(&m->tap, 0, sizeof m->tap);
}

void fnw_data_send_elements(fnw_data_conn *c, grpc_slice elements, fnw_sent_cb done, void *arg)
{
    if (!c->stream) {
        grpc_slice_unref(elements);
        if (done)
            done(arg, 0);
        return;
    }
    c->mgr->io->send(c->stream, &elements, 1, done, arg);
}

void fnw_data_hold(fnw_data_mgr *m, int held)
{
    m->held = held != 0;
    for (fnw_data_conn *c = m->conns; c; c = c->next)
        fnw_inbound_update_pause(c);
}

void fnw_data_outbox_finish(fnw_outbox **obs, size_t n, fnw_sent_cb done, void *arg)
{
    outbox_send(obs, n, 1, done, arg);
}

void fnw_data_outbox_free(fnw_outbox *ob)
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

/* Stopping half-closes every Data stream, as an SDK harness does when it
 * shuts down: the runner's data service then sees the worker hang up.
 * Cancelling instead makes Beam's BeamFnDataGrpcMultiplexer log "Failed to
 * handle for unknown endpoint ... CANCELLED: client cancelled" with a stack
 * trace at ERROR in the TaskManager's log at the end of every job.
 * fnw_data_cancel ends what the runner does not close. */
void fnw_data_stop(fnw_data_mgr *m)
{
    m->stopping = 1;
    ev_prepare_stop(m->loop, &m->idle);
    fnw_inbound_stop(m);
    for (fnw_data_conn *c = m->conns; c; c = c->next) {
        ev_timer_stop(m->loop, &c->flush_timer);
        m->io->ready_cancel(c->ready);
        c->ready = NULL;
        if (c->stream)
            m->io->close_send(c->stream);
    }
}

void fnw_data_cancel(fnw_data_mgr *m)
{
    for (fnw_data_conn *c = m->conns; c; c = c->next)
        if (c->stream)
            m->io->cancel(c->stream);
}

void fnw_data_free(fnw_data_mgr *m)
{
    ev_prepare_stop(m->loop, &m->idle);
    fnw_inbound_free(m);
    fnw_data_conn *c = m->conns;
    while (c) {
        fnw_data_conn *next = c->next;
        ev_timer_stop(m->loop, &c->flush_timer);
        m->io->ready_cancel(c->ready);
        while (c->outboxes)
            fnw_data_outbox_free(c->outboxes);
        if (c->stream)
            m->io->stream_free(c->stream);
        m->io->channel_free(c->ch);
        free(c->url);
        free(c);
        c = next;
    }
    m->conns = NULL;
}
