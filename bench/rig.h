/* bench/rig.h — the runner side of the Fn API, as Flink plays it,
 * built on the gRPC C core server API: provisioning, control (with
 * GetProcessBundleDescriptor), data and logging, on one server and one
 * completion queue driven by the calling thread.
 *
 * The benchmark's code is sequential ("start a worker, run these bundles,
 * stop it"); every wait runs the completion queue, whose handlers do the
 * streaming: each data send is chained from the previous one's completion
 * (gRPC's core API allows one send and one receive in flight per call), outputs
 * are counted as they arrive, and a bundle's input comes from a source that
 * is asked for the next message only when the stream can take it. So the
 * worker sees a runner that always has the next 1 MB ready and always reads.
 *
 * One worker session at a time: the rig remembers the Control and Data
 * streams of the worker whose id it expects, and runs bundles on them: in
 * sequence, like one Flink operator (bench_rig_run_bundle), or several at
 * once (bench_rig_start_bundle ... bench_rig_finish_bundle), their inputs
 * interleaved on the one Data stream message by message.
 */
#ifndef BENCH_RIG_H
#define BENCH_RIG_H

#include <grpc/grpc.h>
#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"
#include "bench/records.h"

typedef struct bench_rig bench_rig;

/* Where a bundle's input comes from. next() returns 1 with one message's
 * record bytes in *out (the rig takes the slice) and their record count,
 * 0 when nothing is ready before *wake_at (seconds, bench_now clock), or
 * -1 when the input is complete (the rig then sends is_last). */
typedef struct bench_source {
    int (*next)(void *self, double now, grpc_slice *out, uint64_t *records, double *wake_at);
    void *self;
} bench_source;

/* The engine counters a ProcessBundleResponse reports (the user metrics
 * recordsIn, recordsOut, retries, timeouts, failures, emptyResults), summed
 * over the chain's steps; found counts the ones present. */
typedef struct bench_counters {
    int64_t records_in, records_out, retries, timeouts, failures, empty_results;
    int found;
} bench_counters;

typedef struct bench_bundle {
    /* set by the caller */
    const char *descriptor_id;
    bench_source src;
    uint64_t expect_out_len;   /* payload length of every output record, 0 = any */
    bench_ts_fn on_ts;         /* called with each output's timestamp, or NULL */
    void *ts_arg;
    bench_rec_fn on_rec;       /* checks each output record's values, or NULL */
    void *rec_arg;
    bench_counters *counters;  /* filled from the response's metrics, or NULL */
    /* filled by the rig */
    char iid[32];
    uint64_t sent_records, sent_bytes, sent_msgs, out_msgs;
    bench_walker out;
    double t_start, t_last_sent, t_response, t_sink_last;
    int got_response, got_sink_last;
    int last_queued;           /* is_last is queued on the Data stream */
    double wake_at;            /* the source asked to be asked again then */
    uint64_t out_msg_seq;      /* the last Data message that had an entry for it */
    size_t n_monitoring;
    char error[1024];          /* the response's error, or what went wrong */
} bench_bundle;

/* Bundles the rig tracks at once (running, or ended and still matched). */
#define BENCH_RIG_MAX_BUNDLES 64

/* Creates the server on 127.0.0.1 (a free port). */
bench_rig *bench_rig_new(int verbose, fnw_error *err);
void bench_rig_free(bench_rig *r);
const char *bench_rig_url(const bench_rig *r);

/* Monotonic seconds. */
double bench_now(void);

/* Serves `bytes` for GetProcessBundleDescriptor(id). Copies. */
int bench_rig_add_descriptor(bench_rig *r, const char *id, const uint8_t *bytes, size_t n);

/* Starts a worker session: calls from now on must carry this worker_id. */
void bench_rig_expect_worker(bench_rig *r, const char *worker_id);
/* Runs the queue until the worker's Control stream is open (1), or timeout (0). */
int bench_rig_wait_control(bench_rig *r, double timeout_s);
/* Ends the Control stream with status OK (the worker's signal to exit). */
void bench_rig_end_control(bench_rig *r);
/* Problems seen in this session (calls without the right worker_id,
 * responses to unknown instructions, stray data); 0 if none. */
int bench_rig_session_problems(const bench_rig *r, char *msg, size_t n);
/* Log entries the worker sent in this session, and how many were errors. */
void bench_rig_log_counts(const bench_rig *r, uint64_t *entries, uint64_t *errors);

/* Runs one bundle to its end: sends the process_bundle request, streams the
 * source, sends is_last, and waits for the response and the sink's is_last.
 * Returns 0 when both came and the response has no error, else -1 (with
 * b->error saying why: the worker's error, a timeout, a lost stream). */
int bench_rig_run_bundle(bench_rig *r, bench_bundle *b, double timeout_s);

/* The same in parts, for bundles that run side by side. start sends the
 * process_bundle request; from then on polling feeds b's source (taking
 * turns with the other running bundles, one message each) until it ends or
 * b gets its response, and counts b's outputs. Returns -1 (b->error set)
 * without a Control stream or with BENCH_RIG_MAX_BUNDLES tracked. */
int bench_rig_start_bundle(bench_rig *r, bench_bundle *b);
/* 1 once b has its response and its sink's is_last, or an error. */
int bench_rig_bundle_done(const bench_bundle *b);
/* Stops tracking b (data for it from now on is stray). Returns 0 when it
 * ended without error and its output is well framed, else -1 (b->error). */
int bench_rig_finish_bundle(bench_rig *r, bench_bundle *b);
/* 1 while the worker's Control stream is open. */
int bench_rig_control_open(const bench_rig *r);

/* Runs the completion queue for up to max_wait_s seconds. */
void bench_rig_poll(bench_rig *r, double max_wait_s);

/* A callback every interval_s while the rig polls (RSS sampling); NULL stops it. */
void bench_rig_set_tick(bench_rig *r, double interval_s, void (*fn)(void *arg, double now), void *arg);

#endif
