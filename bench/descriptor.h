/* bench/descriptor.h — the ProcessBundleDescriptor the benchmark
 * registers, shaped as Flink builds it for a one-input DataStream operator
 * with one function (or several fused ones, bench_op.then): source
 * `fn/read/input:0` -> `transform-0` (the operation) [-> `transform-1` ...]
 * -> `transform-revise` (REVISE_OUTPUT) ->
 * sink `fn/write/output:0`, Flink coders with raw types ROW(LONG, LONG,
 * ROW<STRING, INT>) in and ROW(LONG, ROW<STRING, INT>) out (for feature
 * records ROW<LONG, PRIMITIVE_ARRAY<FLOAT>> in place of ROW<STRING, INT>), the
 * param-windowed-value wire coders Beam adds, PCollections and the
 * windowing strategy. The function's payload is a fnworker OperationSpec.
 */
#ifndef BENCH_DESCRIPTOR_H
#define BENCH_DESCRIPTOR_H

#include <stdint.h>

#include "codecs/buf.h"

#define BENCH_SOURCE_ID "fn/read/input:0"
#define BENCH_SINK_ID "fn/write/output:0"
#define BENCH_MAX_OPTS 6

/* What runs in transform-0 (docs/pyflink.md, "The OperationSpec payload"). */
typedef struct bench_op bench_op;
struct bench_op {
    const char *operation;          /* "identity", "echo", "kserve", ... */
    int batched;                    /* mode BATCH (function type stays PROCESS, as Flink sends) */
    int unordered;                  /* output_mode UNORDERED (1), else ORDERED (0) */
    int capacity;
    int64_t timeout_ms;
    int batch_size;
    int64_t batch_timeout_ms;
    int64_t target_latency_ms;      /* > 0: adaptive batch size up to batch_size */
    int features;                   /* > 0: the records are feature records (records.h) */
    /* RetryStrategy (kind 0 = none) and TimeoutAction (0 = TIMEOUT_FAIL) */
    int retry_kind;                 /* 1 FIXED_DELAY, 2 EXPONENTIAL_BACKOFF */
    int retry_max_attempts;
    int64_t retry_delay_ms;
    int retry_on_error, retry_on_empty;
    int on_timeout;                 /* 1 TIMEOUT_EMPTY, 2 TIMEOUT_OPERATION */
    /* docs/resilience.md (OperationSpec 17-20) */
    int adaptive_off;               /* Concurrency.adaptive_off */
    int breaker_failures;           /* CircuitBreaker.failures (0: no breaker) */
    int64_t breaker_cooldown_ms;
    int on_failure;                 /* 1 DEFAULT, 2 EMPTY */
    const char *fallback_json;
    int n_opts;
    const char *opt_key[BENCH_MAX_OPTS];
    const char *opt_val[BENCH_MAX_OPTS];
    /* The next function fused into the same operator (Flink chains
     * consecutive Python functions into one): transform-1, transform-2, ...
     * each reading the previous one's collection. NULL: a single step. */
    const bench_op *then;
};

/* Adds option key=value (copied pointers must outlive the op). */
void bench_op_set(bench_op *op, const char *key, const char *val);

/* Appends the serialized descriptor to out. data_url is the data (and
 * state) endpoint put into the RemoteGrpcPorts. */
int bench_descriptor_build(fnw_buf *out, const char *id, const char *data_url, const bench_op *op);

#endif
