/* worker/data.h — the data plane: one Data stream per data endpoint, shared
 * by every bundle that names that endpoint, demultiplexed by
 * (instruction_id, transform_id).
 *
 * Inbound, each (instruction, transform) is one byte stream until is_last,
 * read record by record from its fnw_inbox (worker/inbox.h). Limits count
 * the bytes the inbox holds, not the bytes used. When a message brings data
 * (or is_last) for an inbox a bundle reads, that bundle's listener hears of
 * it; the connection's own events (it can take output again, it failed)
 * reach every bundle on it.
 *
 * Which instruction ids exist is kept in a book (worker/instr.h): data for
 * an instruction whose process_bundle has arrived (fnw_inbound_expect) is kept
 * for its bundle, and when the bytes held for such instructions on a
 * connection pass inbound_limit the connection stops posting receives, so
 * HTTP/2 flow control slows the runner down instead of memory growing. Data
 * for an id not announced yet is early data: kept within its own bounds and
 * for a limited time, never pausing the stream; past them it is dropped with
 * a WARN and the bundle, if it ever starts, fails saying so. Data for a
 * finished or failed instruction (fnw_inbound_finish) is dropped as it arrives.
 *
 * Relayed instructions (worker/relay.c: their bundle runs in PyFlink's own
 * Python worker) take no inbox: once fnw_inbound_relay() names one, every
 * Elements entry for it, Data and Timers alike, goes byte for byte and in
 * arrival order to the manager's tap, and the relay sends the child's
 * Elements back unchanged with fnw_data_send_elements(). Timers that arrive
 * before the data plane knows whether an instruction is relayed (early, or
 * while its descriptor is fetched) are held like data, in the same bounds;
 * a native bundle that claims its input drops them with a WARN (fnworker
 * operations have no timers), as it drops timers that come later.
 *
 * Outbound, each (instruction, sink transform) has an fnw_outbox: framed
 * records accumulate in a buffer that is sent when it reaches flush_bytes,
 * when the loop has nothing left to do, when the connection's flush timer
 * fires (flush_ms after the first unsent byte), and at the end of the
 * bundle together with is_last. "Nothing left to do" is a libev prepare
 * watcher, run each time the loop is about to wait for events (as Redis
 * writes its replies in beforeSleep): what the loop turn produced goes out
 * then, unless the connection still has a message being written, in which
 * case it waits for that write (one message in flight: what a busy loop
 * produces meanwhile joins the next message, so a fast stream does not
 * turn into many small messages). The timer stays as the bound for a loop
 * that never waits.
 *
 * worker/data.c keeps the streams and the outboxes, worker/inbound.c what
 * arrives (below data.c: it never calls it), worker/inbox.c an inbox's
 * chunks and framing. Loop thread only.
 */
#ifndef FNW_DATA_H
#define FNW_DATA_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

#include "codecs/buf.h"
#include "codecs/error.h"
#include "codecs/varint.h"
#include "worker/inbox.h"
#include "worker/instr.h"
#include "worker/log.h"
#include "base/stream.h"

typedef struct fnw_data_conn fnw_data_conn;

/* What a bundle implements to hear about its streams. */
typedef struct fnw_data_listener {
    void *user;
    void (*on_input)(void *user); /* its inbox got data or is_last, or the connection can take output again */
    void (*on_failed)(void *user, const char *message); /* the connection died */
} fnw_data_listener;

typedef struct fnw_outbox {
    struct fnw_outbox *next;
    fnw_data_conn *conn;
    char *instruction_id;
    char *transform_id;
    fnw_buf buf;        /* framed records not yet sent */
    int64_t records;    /* records written in total */
    size_t flush_bytes; /* the connection's flush size */
} fnw_outbox;

/* The relay's hold on the data plane (fnw_data_set_tap). Callbacks run on
 * the loop thread and may call back into the data plane. */
typedef struct fnw_data_tap {
    void *user;
    /* Entries of relayed instructions from one Flink message: `elements` is
     * an Elements message made only of their entries (Data and Timers, each
     * byte for byte as Flink sent it, in order). Ownership of the slice passes
     * to the callee. When every entry of the Flink message is relayed, it is
     * the received slice itself (a ref), no copy. These bytes are not counted
     * against inbound_limit: the relay bounds what it queues (fnw_data_hold). */
    void (*on_elements)(void *user, fnw_data_conn *from, grpc_slice elements);
    /* A connection that was congested can take output again. */
    void (*on_writable)(void *user, fnw_data_conn *c);
    /* A connection failed: msg says why (its relayed instructions must fail).
     * Also when memory ran out copying entries of relayed instructions out of
     * a message received on c (those entries are lost). */
    void (*on_failed)(void *user, fnw_data_conn *c, const char *msg);
} fnw_data_tap;

typedef struct fnw_data_config {
    size_t flush_bytes;       /* default 1,000,000 */
    double flush_ms;          /* default 5 */
    size_t inbound_limit;     /* bytes held for announced instructions before receives pause (4 MiB) */
    double connect_timeout_s; /* a data endpoint must connect within this */
    fnw_instr_limits early;   /* early data and tombstones; zero fields take instr.h's defaults */
} fnw_data_config;

struct fnw_data_io;

typedef struct fnw_data_mgr {
    struct ev_loop *loop;
    fnw_rpc *rpc;
    const struct fnw_data_io *io; /* how connections reach their endpoints (data_conn.h) */
    fnw_logger *log;
    fnw_data_config cfg;
    fnw_data_conn *conns;
    fnw_instr_book book; /* every instruction id heard of */
    ev_timer expiry;     /* ticks while early data or tombstones wait */
    double warn_since;   /* drop warnings: at most a few per window */
    unsigned warns;
    size_t quiet_n, quiet_bytes; /* drops not warned about one by one */
    int stopping;                /* fnw_data_stop ran: streams end quietly */
    fnw_data_tap tap;            /* on_elements == NULL: no relay */
    int held;                    /* fnw_data_hold: receives paused on every connection */
    ev_prepare idle;             /* flush when idle: active while an outbox holds unsent bytes */
} fnw_data_mgr;

/* -1 when out of memory. */
int fnw_data_init(fnw_data_mgr *m, struct ev_loop *loop, fnw_rpc *rpc, fnw_logger *log,
                  const fnw_data_config *cfg);
/* Half-closes every stream; inboxes and outboxes must have been freed. */
void fnw_data_stop(fnw_data_mgr *m);
/* Cancels every stream still open (after fnw_data_stop, when the runner
 * has not closed them). */
void fnw_data_cancel(fnw_data_mgr *m);
void fnw_data_free(fnw_data_mgr *m);

/* The connection for url, opened on first use. */
fnw_data_conn *fnw_data_connect(fnw_data_mgr *m, const char *url);
/* NULL while healthy, else why the connection failed. */
const char *fnw_data_conn_error(const fnw_data_conn *c);
/* The send queue is full: stop producing output until on_input. */
int fnw_data_conn_congested(const fnw_data_conn *c);

/* The instruction's process_bundle arrived: data for it, early or still to
 * come on any connection, is kept for its bundle. -1 when out of memory. */
int fnw_inbound_expect(fnw_data_mgr *m, const char *instruction_id);
/* The instruction is over without (or after) a bundle reading its input,
 * e.g. it failed before it started: what is held for it is freed and
 * later data for it is dropped as it arrives. Inboxes a bundle still holds
 * are left to fnw_inbound_release(). */
void fnw_inbound_finish(fnw_data_mgr *m, const char *instruction_id);

/* One tap per manager (NULL removes it); set before any fnw_inbound_relay. */
void fnw_data_set_tap(fnw_data_mgr *m, const fnw_data_tap *tap);
/* From now on iid is relayed: every entry for it goes to the tap. What the
 * data plane already holds for it (early data, data that arrived while its
 * descriptor was fetched, held timers) goes to the tap now, as one Elements
 * message per connection it came on: one Data entry per transform with the
 * held bytes (and is_last when it came), then the Timers entries as they
 * came. The instruction must be expected (fnw_inbound_expect) already. -1
 * with err set when it cannot be relayed: its early data was dropped (err
 * says why), it already ran, a native bundle reads it, there is no tap, or
 * memory ran out (what was held is dropped; the bundle must fail). A second
 * call for a relayed instruction does nothing. */
int fnw_inbound_relay(fnw_data_mgr *m, const char *instruction_id, fnw_error *err);
/* fnw_inbound_finish() ends a relayed instruction too: later data and timers
 * for it are dropped as they arrive. */

/* Sends a whole Elements message (the child's output) on c, unchanged;
 * ownership of the slice passes; done as fnw_stream_send's (ok = 0, at once,
 * when c has no stream). */
void fnw_data_send_elements(fnw_data_conn *c, grpc_slice elements, fnw_sent_cb done, void *arg);
/* Pauses (1) or resumes (0) receiving on every connection, on top of the
 * inbound limit's own pausing (the relay's flow control: the child's Data
 * stream is congested). Resuming leaves a connection over its limit paused. */
void fnw_data_hold(fnw_data_mgr *m, int held);

/* Claims (or creates) the inbound stream of (instruction, transform). NULL
 * with err set when it cannot be read: its early data was dropped, the
 * instruction already ran, data came for another transform of it, or memory
 * ran out. */
fnw_inbox *fnw_inbound_claim(fnw_data_conn *c, const char *instruction_id, const char *transform_id,
                             const fnw_data_listener *l, fnw_error *err);
/* Frees a claimed inbox and finishes its instruction; later data for it is
 * discarded. */
void fnw_inbound_release(fnw_inbox *ib);

/* The outbound stream of (instruction, sink transform) on c. NULL when out
 * of memory. */
fnw_outbox *fnw_data_outbox_new(fnw_data_conn *c, const char *instruction_id, const char *transform_id);
/* Appends one record (varint length + payload) to the outbox, sending
 * when the buffer reaches flush_bytes. payload is written by the caller
 * into the returned space of exactly len bytes. NULL on allocation failure.
 * (The slow path handles flushing, growth and the flush timer.) */
uint8_t *fnw_data_outbox_reserve_slow(fnw_outbox *ob, size_t len);
static inline uint8_t *fnw_data_outbox_reserve(fnw_outbox *ob, size_t len)
{
    /* the common case: the record fits the buffer and does not reach the
     * flush size, and the flush timer is already running (buffer not empty) */
    if (ob->buf.len && ob->buf.cap - ob->buf.len >= len + FNW_VARINT_MAX &&
        ob->buf.len + len + FNW_VARINT_MAX <= ob->flush_bytes) {
        ob->buf.len += (size_t)fnw_varint_write(ob->buf.p + ob->buf.len, len);
        uint8_t *w = ob->buf.p + ob->buf.len;
        ob->buf.len += len;
        ob->records++;
        return w;
    }
    return fnw_data_outbox_reserve_slow(ob, len);
}
/* Sends what is buffered on every outbox given, each followed by is_last,
 * in one message; done runs when it has been written (ok = 0 if not). */
void fnw_data_outbox_finish(fnw_outbox **obs, size_t n, fnw_sent_cb done, void *arg);
/* Frees an outbox without sending anything more (failed bundle). */
void fnw_data_outbox_free(fnw_outbox *ob);

#endif
