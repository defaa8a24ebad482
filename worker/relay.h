/* worker/relay.h — the relay: bundles whose functions are Python functions
 * (not fnworker operations) run in PyFlink's own Python worker, which
 * fnworker starts as its child and serves as its runner.
 *
 * For a relayed descriptor (worker/relay_route.h) fnworker keeps a copy
 * whose input and timer endpoints name the relay's loopback server
 * (worker/relay_server.h) and hands it to the child when it asks
 * (GetProcessBundleDescriptor). Each process_bundle request for it goes to
 * the child unchanged (Flink's instruction id and cache tokens), and the
 * child's response goes back to Flink unchanged (monitoring infos, errors
 * with their Python traceback); so do progress, split and finalize
 * requests naming a relayed bundle. The data plane hands every Elements
 * entry of a relayed instruction (data and timers) to the relay, which
 * sends it on the child's Data stream; the timers the child sets come back
 * on that stream and go to Flink's Data stream as they are. The child's
 * output rows and its state requests go to Flink directly: the descriptor
 * keeps Flink's endpoints for them (Flink's Data service takes a second
 * client's Elements as the first's; its State service answers any client
 * by instruction id, and the instruction ids are Flink's). The child's log
 * entries go to Flink through fnworker's own logger.
 *
 * The child starts with the first relayed bundle and is reused. When it
 * dies, or its Control stream ends, every bundle it held fails with a
 * message quoting its last output, and the next relayed bundle starts a
 * new one. Flow control: while the child's Data stream is congested
 * fnworker stops reading Flink's Data streams; while Flink's is, it stops
 * reading the child's.
 *
 * Loop thread only.
 */
#ifndef FNW_RELAY_H
#define FNW_RELAY_H

#include <ev.h>

#include "base/pb.h"
#include "codecs/error.h"
#include "worker/data.h"
#include "worker/log.h"

typedef struct fnw_relay fnw_relay;

typedef struct fnw_relay_config {
    const char *worker_id;        /* fnworker's own --id; the child's is derived from it */
    const char *python;           /* the interpreter (NULL: $python, else "python") */
    const char *semi_persist_dir; /* passed on to the child (NULL: none) */
    double connect_timeout_s;     /* the child must open its Control stream within this */
    int launcher_fd;              /* pool mode: ask the launcher for the child on this socket; -1: spawn it */
} fnw_relay_config;

typedef struct fnw_relay_events {
    void *user;
    /* An InstructionResponse for Flink, packed (taken). */
    void (*respond)(void *user, grpc_slice response);
    /* The relayed instruction failed in fnworker (the child died, never
     * started, ...): answer it with msg and let the data plane drop its data. */
    void (*fail)(void *user, const char *instruction_id, const char *msg);
    /* The GetProvisionInfoResponse Flink gave fnworker (NULL: none). */
    const uint8_t *(*provision)(void *user, size_t *n);
} fnw_relay_events;

/* Everything given is borrowed for the relay's life; nothing starts yet. */
fnw_relay *fnw_relay_new(struct ev_loop *loop, fnw_logger *log, fnw_rpc *rpc, fnw_data_mgr *data,
                         const fnw_relay_config *cfg, const fnw_relay_events *ev);

/* Descriptor pb runs in the child: keep its relayed copy (the server starts
 * now if it has not). -1 with err when that cannot be done. */
int fnw_relay_add_descriptor(fnw_relay *r, const pb_ProcessBundleDescriptor *pb, fnw_error *err);

/* A process_bundle request whose descriptor is not known yet, or is
 * relayed: kept until fnw_relay_start or fnw_relay_drop. -1: out of memory. */
int fnw_relay_hold(fnw_relay *r, const pb_InstructionRequest *req);
/* The held request turned out native, or failed: forget it. */
void fnw_relay_drop(fnw_relay *r, const char *instruction_id);
/* The held request is relayed; conn is its Data connection to Flink. Starts
 * the child if none runs; fails the instruction (events.fail) when it
 * cannot. */
void fnw_relay_start(fnw_relay *r, const char *instruction_id, fnw_data_conn *conn);
/* A progress, split or finalize request: 1 when it names a relayed bundle
 * (then it went to the child), 0 when not. */
int fnw_relay_forward(fnw_relay *r, const pb_InstructionRequest *req);
/* Relayed bundles waiting for the child's answer. */
size_t fnw_relay_in_flight(const fnw_relay *r);
/* Logs what is in flight (SIGQUIT). */
void fnw_relay_dump(const fnw_relay *r);

/* fnworker is stopping: ends the child's Control stream (Beam's SDK then
 * exits) and asks the child to stop (SIGTERM, then SIGKILL). */
void fnw_relay_stop(fnw_relay *r);
/* After the loop ended: kills a child still running, frees everything. */
void fnw_relay_free(fnw_relay *r);

#endif
