/* bench/session.h — one worker process and the bundles run on it.
 *
 * A session launches a worker (the real one or the null worker) against the
 * rig, waits for its Control stream, registers descriptors for the
 * operations it is asked to run, runs record sequences as Flink-sized
 * bundles from pre-encoded chunks, and stops the worker the way Flink does
 * (closing the Control stream), checking how it exited. Every bundle is
 * verified: the response has no error, the sink's is_last came, the output
 * is well framed, every record has the expected length and as many came
 * back as went in.
 */
#ifndef BENCH_SESSION_H
#define BENCH_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/buf.h"
#include "bench/descriptor.h"
#include "bench/proc.h"
#include "bench/rig.h"

#define BENCH_CHUNK_BYTES 1000000
#define BENCH_MAX_CHUNKS 12

typedef struct bench_chunk {
    size_t str_len;
    int dim;                        /* > 0: feature records with dim features (str_len 0) */
    fnw_buf buf;
    uint64_t records;
    size_t rec_len;                 /* bytes per record including its varint */
} bench_chunk;

typedef struct bench_env {
    bench_rig *rig;
    const char *worker_bin;
    const char *null_bin;
    const char *kserve_direct_bin;  /* the kserve direct client (W14's reference) */
    const char *out_dir;            /* logs go to out_dir/logs */
    int verbose;
    unsigned seq;
    bench_chunk chunks[BENCH_MAX_CHUNKS];
    int n_chunks;
} bench_env;

typedef struct bench_session {
    bench_env *env;
    bench_proc proc;
    int is_null;
    char id[64];
    char log_path[512];
    char desc_id[96];
    unsigned desc_seq;
    char error[1200];               /* first failure seen in this session */
} bench_session;

/* The chunk for records with str_len-byte strings (built once). */
const bench_chunk *bench_env_chunk(bench_env *env, size_t str_len);
/* The chunk of feature records with dim features (built once). */
const bench_chunk *bench_env_feature_chunk(bench_env *env, int dim);
void bench_env_free_chunks(bench_env *env);

/* Launches the worker (is_null: the null worker) behind wrapper (NULL =
 * none) and waits for its Control stream. label names the log file. */
int bench_session_start(bench_env *env, bench_session *s, int is_null, const char *wrapper,
                        const char *label);
/* Registers a descriptor running op; later bundles use it. */
int bench_session_use(bench_session *s, const bench_op *op);
/* Closes the Control stream and waits for the exit; returns the exit code
 * (killing the process after timeout_s and returning -1). */
int bench_session_stop(bench_session *s, double timeout_s);

typedef struct bench_run {
    uint64_t records, out_records, bytes, bundles, out_msgs;
    double seconds;                 /* first bundle start to last bundle end */
    double worker_cpu_s, driver_cpu_s;
    double worker_top_thread_s;     /* CPU of the worker's busiest thread */
    double max_drain_s;             /* is_last sent -> response, worst bundle */
    double other_cores;             /* CPU used by other processes meanwhile (noise) */
    double worker_peak_rss_mb;      /* the worker's VmHWM after the run (its peak so far) */
    int ok;
} bench_run;

/* Runs `records` records with str_len-byte strings in bundles of at most
 * bundle_records; stop_after_s > 0 ends the (single) bundle after that
 * long instead. Returns 0 when every bundle verified, else -1 with
 * s->error set. */
int bench_session_run(bench_session *s, size_t str_len, uint64_t records, uint64_t bundle_records,
                      double stop_after_s, bench_run *out);

/* What bench_session_run_feed sends and how it checks the outputs: the
 * chunk's records again and again; every output is out_len bytes and, if
 * on_rec is set, passes it. */
typedef struct bench_feed {
    const bench_chunk *chunk;
    uint64_t out_len;
    bench_rec_fn on_rec;
    void *rec_arg;
} bench_feed;
/* As bench_session_run, from a feed. */
int bench_session_run_feed(bench_session *s, const bench_feed *f, uint64_t records, uint64_t bundle_records,
                           double stop_after_s, bench_run *out);

/* Runs one prepared bundle (own source) with the session's descriptor and
 * verifies it; expect_records = 0 skips the count check. */
int bench_session_bundle(bench_session *s, bench_bundle *b, uint64_t expect_records, double timeout_s);

/* Output payload length for str_len-byte strings: identity/echo drop the
 * watermark (8 bytes); the null worker returns the input unchanged. */
uint64_t bench_session_out_len(const bench_session *s, size_t str_len);

#endif
