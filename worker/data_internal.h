/* worker/data_internal.h — what worker/data.c (streams, outbound) and
 * worker/inbound.c (received data, inboxes, early data) share about a data
 * connection, and the table through which a connection reaches its
 * endpoint. Internal to the data plane and its unit tests; everyone else
 * uses data.h.
 *
 * Calls run one way: data.c calls inbound.c, inbound.c calls worker/inbox.c;
 * what inbound.c needs of a connection (pausing receives, the time) goes
 * through the io table, which data.c fixes at init.
 */
#ifndef FNW_DATA_INTERNAL_H
#define FNW_DATA_INTERNAL_H

#include "worker/data.h"
#include "worker/inbox_internal.h"

/* The endpoint operations a connection uses: gRPC's in the worker
 * (fnw_data_io_grpc), a fake stream in the unit tests. */
typedef struct fnw_data_io {
    grpc_channel *(*channel)(const char *url);
    void (*channel_free)(grpc_channel *ch);
    fnw_ready_wait *(*wait_ready)(fnw_rpc *rpc, grpc_channel *ch, double timeout_s, fnw_ready_cb cb,
                                  void *user);
    void (*ready_cancel)(fnw_ready_wait *w);
    fnw_stream *(*stream_start)(fnw_rpc *rpc, grpc_channel *ch, const char *method,
                                const fnw_stream_handler *h, int wait_for_ready);
    void (*send)(fnw_stream *s, grpc_slice *slices, size_t n, fnw_sent_cb done, void *arg);
    int (*congested)(const fnw_stream *s);
    void (*pause_recv)(fnw_stream *s, int paused);
    void (*cancel)(fnw_stream *s);
    void (*close_send)(fnw_stream *s); /* half-close: no more messages from the worker */
    void (*stream_free)(fnw_stream *s);
    double (*now)(struct ev_loop *loop);        /* seconds, the loop's clock */
    size_t (*send_queued)(const fnw_stream *s); /* messages not yet written; NULL: 0 */
} fnw_data_io;

extern const fnw_data_io fnw_data_io_grpc;

struct fnw_data_conn {
    fnw_data_conn *next;
    fnw_data_mgr *mgr;
    char *url;
    grpc_channel *ch;
    fnw_stream *stream;
    fnw_inbox *claimed; /* inboxes a bundle reads (inbound.c) */
    fnw_inbox *wake;    /* of those, the ones a message brought input for (inbound.c) */
    fnw_outbox *outboxes;
    size_t inbound_bytes; /* held for announced instructions (inbound.c counts) */
    int over_limit;       /* inbound_bytes reached the limit, not yet back below half */
    int recv_paused;      /* what the stream was told: over_limit or the manager's hold */
    int failed;           /* the stream failed: error says why */
    char error[512];      /* kept without allocating, so a failure cannot be lost */
    ev_timer flush_timer;
    fnw_ready_wait *ready; /* until the channel connects */
};

/* inbound.c: the manager's book and expiry timer (-1: out of memory). */
int fnw_inbound_init(fnw_data_mgr *m);
/* inbound.c: one received Elements message (borrowed); the bundles whose
 * inboxes got data or is_last hear of it. */
void fnw_inbound_on_message(fnw_data_conn *c, grpc_slice msg);
/* inbound.c: pauses or resumes c's receives as its held bytes and the
 * manager's hold say (a new stream starts unpaused). */
void fnw_inbound_update_pause(fnw_data_conn *c);
/* inbound.c: tells every bundle reading from c that it may go on. */
void fnw_inbound_notify(fnw_data_conn *c);
/* inbound.c: c is gone; every bundle reading from it fails with msg. */
void fnw_inbound_closed(fnw_data_conn *c, const char *msg);
/* inbound.c: what the expiry timer does at each tick: gives up early data
 * past its time, forgets old tombstones, sums up drops. */
void fnw_inbound_expire(fnw_data_mgr *m);
/* inbound.c: stops the timer; a last word about drops not yet reported. */
void fnw_inbound_stop(fnw_data_mgr *m);
/* inbound.c: frees the book and every inbox. */
void fnw_inbound_free(fnw_data_mgr *m);

#endif
