/* pool/relay_link.h — one worker's link to its launcher for PyFlink's
 * Python worker (launcher protocol version 2, docs/sidecar.md;
 * docs/design/relay.md, section 10). In pool mode the worker runs in the
 * sidecar, without PyFlink; when a job has Python functions that are not
 * fnworker operations it asks, over a socket the pool passes as
 * --relay-fd=N (worker/relay_child.h), for PyFlink's Python worker, which
 * the launcher script starts in the TaskManager's container. The link owns
 * the pool's end of that socket and passes lines both ways:
 *
 *   worker -> launcher   SPAWN <n> <relay id> <host:port>, KILL <n>
 *   launcher -> worker   SPAWNED <n> <pid>, SPAWNFAIL <n> <reason>,
 *                        C <n> <line>, CHILDEXIT <n> <code>
 *
 * each checked again here (pool/wire.h: a loopback endpoint, an id of
 * [A-Za-z0-9._-]) and written out afresh. The link keeps the children it
 * asked for: at most FNW_RELAY_LINK_CHILDREN_MAX run at once, numbers only
 * grow, a KILL goes out once per child, and launcher lines about a child
 * it does not know are dropped. A SPAWN the link refuses is answered to
 * the worker with SPAWNFAIL.
 *
 * Bounded buffering towards the worker: output lines (C) are dropped while
 * FNW_RELAY_LINK_OUT_MAX bytes wait for the worker (the launcher has
 * already written them to the boot log; the worker gets one C line saying
 * how many were dropped); SPAWNED, SPAWNFAIL and CHILDEXIT are never
 * dropped (at most two per child and FNW_RELAY_LINK_CHILDREN_MAX children,
 * so they are bounded anyway). The link never stops reading the launcher,
 * so the launcher's connection cannot stall on a slow worker.
 *
 * When the worker's end closes (the worker ended, or closed it), or
 * fnw_relay_link_close is called, each child still running gets KILL. Runs
 * on the pool's loop. */
#ifndef FNW_POOL_RELAY_LINK_H
#define FNW_POOL_RELAY_LINK_H

#include <ev.h>
#include <stddef.h>

#include "codecs/error.h"

/* Children of one worker running at once: the current one and one being
 * stopped (the worker starts the next after the last one's end, or after
 * giving up on it). */
#define FNW_RELAY_LINK_CHILDREN_MAX 2
/* Output lines (C) waiting for the worker beyond this are dropped. */
#define FNW_RELAY_LINK_OUT_MAX (256u * 1024)
/* A line from the worker longer than this is refused. */
#define FNW_RELAY_LINK_WORKER_LINE_MAX 1024

typedef struct fnw_relay_link fnw_relay_link;

/* to_launcher queues one line ("SPAWN ...\n", "KILL ...\n") on the
 * launcher's connection; it must not free the link. */
typedef struct fnw_relay_link_events {
    void (*to_launcher)(void *ctx, const char *line, size_t len);
    void *ctx;
} fnw_relay_link_events;

/* Makes the socket pair: the link keeps one end, *worker_fd is the other
 * (close-on-exec, blocking), for the caller to pass to the worker and then
 * close. worker_id names the worker in the pool's log. NULL with err. */
fnw_relay_link *fnw_relay_link_new(struct ev_loop *loop, const char *worker_id,
                                   const fnw_relay_link_events *ev, int *worker_fd, fnw_error *err);
/* Bytes the launcher sent after its request (any split). */
void fnw_relay_link_from_launcher(fnw_relay_link *k, const char *data, size_t n);
/* The worker ended: KILL for each child still running, nothing more to
 * the worker. */
void fnw_relay_link_close(fnw_relay_link *k);
/* Children asked for and not yet ended. */
unsigned fnw_relay_link_running(const fnw_relay_link *k);
/* Closes the socket; no more lines either way. NULL is fine. */
void fnw_relay_link_free(fnw_relay_link *k);

#endif
