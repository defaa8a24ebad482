/* runtime/spec.h — how an operation runs: the plain-C form of
 * fnworker.v1.OperationSpec (proto/fnworker/v1/operation.proto), with the
 * run mode already resolved (batched), and its validation.
 *
 * The worker fills fnw_spec from the protobuf payload; the runtime never sees
 * protobuf objects. fnw_spec_validate() produces the exact messages users
 * know from PyFlink's job-build checks, and rejects batch-only settings in
 * per-element mode naming the field.
 */
#ifndef FNW_SPEC_H
#define FNW_SPEC_H

#include <stdint.h>

#include "codecs/error.h"

typedef enum fnw_retry_kind {
    FNW_RETRY_NONE = 0,
    FNW_RETRY_FIXED_DELAY = 1,
    FNW_RETRY_EXPONENTIAL = 2,
} fnw_retry_kind;

typedef struct fnw_retry {
    fnw_retry_kind kind;
    int32_t max_attempts;
    int64_t delay_ms;     /* fixed delay, or the initial delay */
    int64_t max_delay_ms; /* exponential only */
    double multiplier;    /* exponential only */
    int on_error;
    int on_empty;
} fnw_retry;

typedef enum fnw_timeout_action {
    FNW_TIMEOUT_FAIL = 0,
    FNW_TIMEOUT_EMPTY = 1,
    FNW_TIMEOUT_OPERATION = 2,
} fnw_timeout_action;

/* Upper bounds on the settings, so a spec cannot make the worker reserve
 * more than it could use: a batch's input slots are allocated when the
 * operation opens (batch_size x 8 bytes per call), and capacity bounds the
 * inputs in flight. Larger values fail validation with a message. */
#define FNW_SPEC_MAX_BATCH_SIZE 65536
#define FNW_SPEC_MAX_CAPACITY 1048576
/* target_latency_ms above an hour is a mistake (it is not a timeout). */
#define FNW_SPEC_MAX_TARGET_LATENCY_MS 3600000

/* What a call's final failure (after retries, a timeout that fails, or a
 * refusal by an open circuit breaker) produces (OperationSpec on_failure). */
typedef enum fnw_failure_action {
    FNW_FAILURE_FAIL = 0,    /* the bundle fails (and so the Flink task) */
    FNW_FAILURE_DEFAULT = 1, /* each input emits the fallback value */
    FNW_FAILURE_EMPTY = 2,   /* each input emits nothing */
} fnw_failure_action;

/* Adaptive concurrency (OperationSpec concurrency, docs/resilience.md). */
typedef struct fnw_concurrency {
    int adaptive_off; /* the limit stays at capacity */
    int32_t min;      /* the lowest limit; 0 means 1 */
} fnw_concurrency;

/* The circuit breaker (OperationSpec circuit_breaker); off when both
 * failures and failure_rate are 0. */
typedef struct fnw_breaker_spec {
    int32_t failures;    /* open after this many consecutive failed attempts; 0 = off */
    double failure_rate; /* open when this share of the last window attempts failed; 0 = off */
    int32_t window;      /* attempts the rate looks at; 0 means 100 */
    int64_t cooldown_ms; /* open this long before a probe; 0 means 5000 */
} fnw_breaker_spec;

/* Converts a JSON text to the bytes of a value of type t (Flink's
 * serialization, as an operation emits it); *is_null when it is JSON null.
 * The worker takes it from the registry (main.c fills it from ops/bind),
 * so the runtime needs no JSON reader of its own. */
struct fnw_type;
struct fnw_buf;
typedef int (*fnw_json_encode_fn)(const struct fnw_type *t, const char *json, struct fnw_buf *out,
                                  int *is_null, fnw_error *err);

#define FNW_SPEC_MAX_BREAKER_WINDOW 100000
#define FNW_SPEC_MAX_FALLBACK_JSON 65536

typedef struct fnw_spec {
    int batched;      /* batch mode: OperationSpec mode BATCH (or function type ASYNC_BATCH) */
    int unordered;    /* OutputMode UNORDERED */
    int32_t capacity; /* as given; 0 means 100 */
    int64_t timeout_ms;
    int32_t batch_size;
    int64_t batch_timeout_ms;
    int64_t target_latency_ms; /* batch mode: > 0 makes the batch size adaptive up to batch_size */
    fnw_retry retry;
    fnw_timeout_action on_timeout;
    fnw_concurrency concurrency;
    fnw_breaker_spec breaker;
    fnw_failure_action on_failure;
    const char *fallback_json;          /* on_failure DEFAULT; NULL/"" = null; owned by the spec's holder */
    fnw_json_encode_fn fallback_encode; /* how fallback_json becomes bytes */
} fnw_spec;

/* Checks the spec; on success fills in defaults (capacity 0 -> 100). */
int fnw_spec_validate(fnw_spec *s, fnw_error *err);

/* Retry arithmetic, as PyFlink defines it: can_retry(n) = n <= max_attempts;
 * backoff for attempt n (n >= 1): fixed -> delay_ms; exponential -> delay_ms
 * for n <= 1, else min(prev * multiplier, max_delay_ms). prev is the backoff
 * returned for the previous attempt (ignored for fixed). */
int fnw_spec_retry_can_retry(const fnw_retry *r, int attempts);
int64_t fnw_spec_retry_backoff_ms(const fnw_retry *r, int attempts, int64_t prev);
/* Whether the spec asks for a circuit breaker. */
int fnw_spec_breaker_on(const fnw_breaker_spec *b);

#endif
