/* worker/data_conn.h — what worker/data.c (streams, outbound) and
 * worker/inbound.c (received data, inboxes, early data) share about a data
 * connection. Internal to those two files; everyone else uses data.h.
 */
#ifndef FNW_DATA_CONN_H
#define FNW_DATA_CONN_H

#include "worker/data.h"

struct fnw_data_conn {
    fnw_data_conn *next;
    fnw_data_mgr *mgr;
    char *url;
    grpc_channel *ch;
    fnw_stream *stream;
    fnw_inbox *claimed;         /* inboxes a bundle reads (inbound.c) */
    fnw_outbox *outboxes;
    size_t inbound_bytes;       /* held for announced instructions (inbound.c counts) */
    int recv_paused;
    char *error;
    ev_timer flush_timer;
    fnw_ready_wait *ready;      /* until the channel connects */
};

/* data.c: stops or resumes receiving as inbound_bytes crosses the limit. */
void fnw_data_conn_update_pause(fnw_data_conn *c);

/* inbound.c: the manager's book and expiry timer (-1: out of memory). */
int fnw_inbound_init(fnw_data_mgr *m);
/* inbound.c: one received Elements message (borrowed). */
void fnw_inbound_on_message(fnw_data_conn *c, grpc_slice msg);
/* inbound.c: tells every bundle reading from c that it may go on. */
void fnw_inbound_notify(fnw_data_conn *c);
/* inbound.c: c is gone; every bundle reading from it fails with msg. */
void fnw_inbound_closed(fnw_data_conn *c, const char *msg);
/* inbound.c: stops the timer; a last word about drops not yet reported. */
void fnw_inbound_shutdown(fnw_data_mgr *m);
/* inbound.c: frees the book and every inbox. */
void fnw_inbound_free(fnw_data_mgr *m);

#endif
