/* runtime/spec.c — validation of an OperationSpec (fnw_spec) with the
 * messages PyFlink users know from job-build time, and PyFlink's retry
 * arithmetic (async_retry_strategies.py). */
#include <inttypes.h>
#include <string.h>

#include "runtime/spec.h"

#define DEFAULT_CAPACITY 100

static const char *retry_kind_name(fnw_retry_kind k)
{
    switch (k) {
    case FNW_RETRY_NONE:
        return "NO_RETRY";
    case FNW_RETRY_FIXED_DELAY:
        return "FIXED_DELAY";
    case FNW_RETRY_EXPONENTIAL:
        return "EXPONENTIAL_BACKOFF";
    }
    return "?";
}

static int validate_batch(const fnw_spec *s, fnw_error *err)
{
    if (s->batch_size <= 0)
        return fnw_error_set(err, "Batch size must be positive, got: %" PRId32, s->batch_size);
    if (s->batch_size > FNW_SPEC_MAX_BATCH_SIZE)
        return fnw_error_set(err,
                             "batch_size %" PRId32 " is over fnworker's limit of %d inputs per batch "
                             "(a batch's slots are reserved when the operation opens)",
                             s->batch_size, FNW_SPEC_MAX_BATCH_SIZE);
    if (s->timeout_ms <= 0)
        return fnw_error_set(err, "Timeout must be positive for async batch operations.");
    if (s->batch_timeout_ms < 0)
        return fnw_error_set(err, "Batch timeout cannot be negative, got: %" PRId64 " ms",
                             s->batch_timeout_ms);
    if (s->target_latency_ms < 0 || s->target_latency_ms > FNW_SPEC_MAX_TARGET_LATENCY_MS)
        return fnw_error_set(err,
                             "target_latency_ms must be between 1 and %d ms (0: a fixed batch size), "
                             "got: %" PRId64,
                             FNW_SPEC_MAX_TARGET_LATENCY_MS, s->target_latency_ms);
    return 0;
}

/* The asserts of PyFlink's strategy constructors, naming the field. */
static int validate_retry_fields(const fnw_retry *r, fnw_error *err)
{
    const char *k = retry_kind_name(r->kind);
    if (r->max_attempts <= 0)
        return fnw_error_set(err,
                             "max_attempts of the async retry strategy '%s' must be positive, got: %" PRId32,
                             k, r->max_attempts);
    if (r->delay_ms <= 0)
        return fnw_error_set(err, "delay_ms of the async retry strategy '%s' must be positive, got: %" PRId64,
                             k, r->delay_ms);
    if (r->kind != FNW_RETRY_EXPONENTIAL)
        return 0;
    if (r->max_delay_ms <= 0)
        return fnw_error_set(err,
                             "max_delay_ms of the async retry strategy '%s' must be positive, got: %" PRId64,
                             k, r->max_delay_ms);
    if (!(r->multiplier > 0))
        return fnw_error_set(err, "multiplier of the async retry strategy '%s' must be positive, got: %g", k,
                             r->multiplier);
    return 0;
}

static int validate_retry(const fnw_spec *s, fnw_error *err)
{
    const fnw_retry *r = &s->retry;
    if (r->kind == FNW_RETRY_NONE)
        return 0;
    if (r->kind != FNW_RETRY_FIXED_DELAY && r->kind != FNW_RETRY_EXPONENTIAL)
        return fnw_error_set(err, "Unknown async retry strategy kind: %d", (int)r->kind);
    if (validate_retry_fields(r, err) != 0)
        return -1;
    if (s->timeout_ms <= 0)
        return fnw_error_set(err, "Timeout should be configured when do async with retry.");
    if (!r->on_error && !r->on_empty)
        return fnw_error_set(err,
                             "Retry predicate of the async retry strategy '%s' is missing: "
                             "set retry_on_error and/or retry_on_empty_result.",
                             retry_kind_name(r->kind));
    return 0;
}

/* Batch settings on a per-element spec are a mistake, not something to ignore. */
static int validate_per_element(const fnw_spec *s, fnw_error *err)
{
    static const char tail[] = "but the operation runs per element: set mode BATCH to run it in batches, "
                               "or remove";
    if (s->batch_size != 0)
        return fnw_error_set(err, "batch_size (%" PRId32 ") is a batch-mode setting %s batch_size",
                             s->batch_size, tail);
    if (s->batch_timeout_ms != 0)
        return fnw_error_set(err, "batch_timeout_ms (%" PRId64 ") is a batch-mode setting %s batch_timeout_ms",
                             s->batch_timeout_ms, tail);
    if (s->target_latency_ms != 0)
        return fnw_error_set(err,
                             "target_latency_ms (%" PRId64 ") is a batch-mode setting %s target_latency_ms",
                             s->target_latency_ms, tail);
    return 0;
}

/* Adaptive concurrency, the circuit breaker and on_failure
 * (docs/resilience.md); fills their defaults. */
static int validate_resilience(fnw_spec *s, fnw_error *err)
{
    fnw_concurrency *c = &s->concurrency;
    fnw_breaker_spec *b = &s->breaker;
    if (c->min < 0 || c->min > s->capacity)
        return fnw_error_set(err,
                             "concurrency min must be between 1 and capacity (%" PRId32 "), got: %" PRId32,
                             s->capacity, c->min);
    if (c->min == 0)
        c->min = 1;
    if (b->failures < 0)
        return fnw_error_set(err, "circuit_breaker failures must be positive (or 0 for off), got: %" PRId32,
                             b->failures);
    if (!(b->failure_rate >= 0 && b->failure_rate <= 1))
        return fnw_error_set(err, "circuit_breaker failure_rate must be between 0 and 1 (0 for off), got: %g",
                             b->failure_rate);
    if (b->window < 0 || b->window > FNW_SPEC_MAX_BREAKER_WINDOW)
        return fnw_error_set(err, "circuit_breaker window must be between 1 and %d attempts, got: %" PRId32,
                             FNW_SPEC_MAX_BREAKER_WINDOW, b->window);
    if (b->cooldown_ms < 0 || b->cooldown_ms > 86400000)
        return fnw_error_set(err, "circuit_breaker cooldown_ms must be between 1 and 86400000, got: %" PRId64,
                             b->cooldown_ms);
    if (b->window == 0)
        b->window = 100;
    if (b->cooldown_ms == 0)
        b->cooldown_ms = 5000;
    if (s->on_failure != FNW_FAILURE_FAIL && s->on_failure != FNW_FAILURE_DEFAULT &&
        s->on_failure != FNW_FAILURE_EMPTY)
        return fnw_error_set(err, "Unknown on_failure action: %d; expected FAIL (0), DEFAULT (1) or EMPTY (2)",
                             (int)s->on_failure);
    size_t fl = s->fallback_json ? strnlen(s->fallback_json, FNW_SPEC_MAX_FALLBACK_JSON + 1) : 0;
    if (fl > FNW_SPEC_MAX_FALLBACK_JSON)
        return fnw_error_set(err, "fallback_json is over fnworker's limit of %d bytes",
                             FNW_SPEC_MAX_FALLBACK_JSON);
    if (fl && s->on_failure != FNW_FAILURE_DEFAULT)
        return fnw_error_set(err,
                             "fallback_json is given but on_failure is not DEFAULT: set on_failure DEFAULT "
                             "to emit it, or remove fallback_json");
    return 0;
}

int fnw_spec_breaker_on(const fnw_breaker_spec *b)
{
    return b->failures > 0 || b->failure_rate > 0;
}

int fnw_spec_validate(fnw_spec *s, fnw_error *err)
{
    if (s->batched ? validate_batch(s, err) != 0 : validate_per_element(s, err) != 0)
        return -1;
    if (s->timeout_ms < 0)
        return fnw_error_set(err, "Timeout cannot be negative, got: %" PRId64 " ms", s->timeout_ms);
    if (validate_retry(s, err) != 0)
        return -1;
    if (s->capacity < 0)
        return fnw_error_set(err, "Capacity must be positive, got: %" PRId32, s->capacity);
    if (s->capacity > FNW_SPEC_MAX_CAPACITY)
        return fnw_error_set(err,
                             "capacity %" PRId32 " is over fnworker's limit of %d inputs in flight "
                             "per operation",
                             s->capacity, FNW_SPEC_MAX_CAPACITY);
    if (s->on_timeout != FNW_TIMEOUT_FAIL && s->on_timeout != FNW_TIMEOUT_EMPTY &&
        s->on_timeout != FNW_TIMEOUT_OPERATION)
        return fnw_error_set(err, "Unknown timeout action: %d", (int)s->on_timeout);
    if (s->capacity == 0)
        s->capacity = DEFAULT_CAPACITY;
    return validate_resilience(s, err);
}

int fnw_spec_retry_can_retry(const fnw_retry *r, int attempts)
{
    if (r->kind == FNW_RETRY_NONE)
        return 0;
    return attempts <= r->max_attempts;
}

int64_t fnw_spec_retry_backoff_ms(const fnw_retry *r, int attempts, int64_t prev)
{
    switch (r->kind) {
    case FNW_RETRY_NONE:
        return -1;
    case FNW_RETRY_FIXED_DELAY:
        return r->delay_ms;
    case FNW_RETRY_EXPONENTIAL:
        if (attempts <= 1)
            return r->delay_ms;
        {
            double next = (double)prev * r->multiplier;
            if (!(next < (double)r->max_delay_ms))
                return r->max_delay_ms;
            return (int64_t)next;
        }
    }
    return -1;
}
