/* runtime/engine.h — runs one operation instance for one transform: the
 * element queue (ordered, or unordered with watermark segments), capacity,
 * batching, per-call timeouts, retries and the end-of-bundle drain, with
 * PyFlink's AsyncFunction / AsyncBatchFunction semantics.
 *
 * The worker owns the data plane; the engine owns everything between "a
 * record arrived" and "its outputs are ready, in order". One engine lives as
 * long as its operation instance (across bundles); fnw_engine_start() begins
 * a bundle and fnw_engine_finish() ends it.
 *
 * Flow control: the caller checks fnw_engine_has_space() before each push.
 * When it is false the caller stops taking input and waits for sink.ready.
 * A push when there is no space is still accepted (it goes to an overflow
 * list, so a chained upstream engine never has to drop an output), but then
 * has_space stays false until the overflow has been admitted.
 *
 * All calls happen on the loop thread. Callbacks may run inside push/finish
 * (synchronous operations emit during push) or later from loop callbacks.
 * From inside any sink callback it is safe to push into (or finish) another
 * engine, to push into this one, and to abort or free this one: the
 * engine defers freeing until its own frames have unwound. ready, failed and
 * finished are only called once the engine's own work has unwound.
 *
 * Batch mode: a batch holds at most min(batch_size, capacity) inputs, so a
 * full queue never waits for a batch that cannot fill.
 *
 * Blocking operations (invoke_blocking) run like asynchronous ones: the
 * engine wraps the opened instance (runtime/blocking_op.h) and their calls
 * run on the process's blocking pool; freeing the engine waits for the
 * calls still on a thread.
 */
#ifndef FNW_ENGINE_H
#define FNW_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"
#include "runtime/counter.h"
#include "runtime/hist.h"
#include "runtime/operation.h"
#include "runtime/record.h"
#include "runtime/spec.h"

struct ev_loop;
typedef struct fnw_engine fnw_engine;

typedef struct fnw_engine_sink {
    void *user;
    /* One output, in emit order. out->timestamp/watermark are the input's.
     * out's bytes are valid during the call only. */
    void (*emit)(void *user, const fnw_record *out);
    /* has_space went from false to true. */
    void (*ready)(void *user);
    /* The bundle must fail: message names the operation, the transform, the
     * input (index within the bundle) and carries the operation's message.
     * After this no more callbacks for the bundle. */
    void (*failed)(void *user, const char *message);
    /* After fnw_engine_finish(): every input has ended and been emitted. */
    void (*finished)(void *user);
    /* The user emit gets, when it is not user (NULL: user). Lets a chain
     * (runtime/chain.h) hand its last step's outputs to its caller
     * directly while hearing the other callbacks itself. */
    void *emit_user;
    /* Optional (NULL: not called; goes to emit_user like emit): input in
     * has ended, after its last output (if any) was emitted; in->timestamp
     * and watermark are the input's, its bytes are not given (data NULL).
     * Lets a caller that joins several engines' results per input (the
     * Table projection, runtime/projection.h) tell an input that ended with
     * no output from one still in flight. In emit order, like emit. */
    void (*settled)(void *user, const fnw_record *in);
    /* Optional (NULL: not logged): one line for the worker's log, at
     * warning level: the circuit breaker changed state, or the service
     * asked the operation to pause (docs/resilience.md). Goes to log_user
     * (NULL: user). */
    void (*log)(void *user, const char *line);
    void *log_user;
} fnw_engine_sink;

typedef struct fnw_dist {
    int64_t count, sum, min, max;
} fnw_dist;

/* Per-bundle figures, reset by fnw_engine_start(). */
typedef struct fnw_engine_metrics {
    int64_t records_in;          /* inputs pushed */
    int64_t records_out;         /* outputs emitted */
    int64_t calls;               /* operation calls (first attempts) */
    int64_t batches;             /* calls in batch mode */
    int64_t retries;             /* re-invocations */
    int64_t timeouts;            /* calls that timed out */
    int64_t failures;            /* calls that failed (error, after retries) */
    int64_t empty_results;       /* inputs that ended with no output */
    fnw_dist batch_size;         /* inputs per call */
    fnw_dist call_duration_ms;   /* first attempt to settle */
    int64_t inflight_high_water; /* max inputs in flight at once */

    /* Service calls. Counters are this bundle's, like the ones above. */
    int64_t successes;        /* calls that ended with a result (outputs or an empty one) */
    int64_t overloaded;       /* attempts the service refused as overloaded (429, 503, ...) */
    int64_t fallbacks;        /* inputs given on_failure's result instead of failing the bundle */
    int64_t breaker_rejected; /* inputs answered at once because the breaker was open */
    int64_t breaker_opened;   /* times the circuit breaker opened */
    fnw_hist call_latency_us; /* first attempt to settle, in µs */
    /* Gauges: the state when the metrics are read; -1 where it does not
     * apply (no adaptive concurrency, no breaker, no adaptive batch size). */
    int64_t concurrency_limit; /* calls the operation may have out now */
    int64_t breaker_state;     /* 0 closed, 1 open, 2 half-open */
    int64_t batch_target;      /* the adaptive batch size now */
    int64_t inflight_calls;    /* calls out now */
    /* The operation's own counters (fnw_op_counter), this bundle's values;
     * valid while the engine lives. */
    size_t ncounters;
    const fnw_counter *counters;

    /* For the exporters (docs/metrics.md; they count requests, the attempts
     * handed to the operation, as calls + retries). A call settled by its
     * timeout action is a timeout, not one of the successes above. */
    int64_t call_latency_sum_us; /* the sum of what call_latency_us holds (for means) */
} fnw_engine_metrics;

/* Validates the spec against the operation, opens an operation instance. */
int fnw_engine_new(struct ev_loop *loop, const fnw_operation *op, const fnw_spec *spec, const fnw_op_env *env,
                   fnw_engine **out, fnw_error *err);
/* Cancels what is in flight, closes the operation, frees everything. */
void fnw_engine_free(fnw_engine *e);
/* The operation emits each input unchanged, once (the registry's
 * passthrough, identity): in direct mode the engine then forwards each
 * record to its sink without a call, with the same metrics and callbacks. */
void fnw_engine_set_passthrough(fnw_engine *e);

/* Begins a bundle. bundle_label (e.g. the instruction id) is used in messages. */
void fnw_engine_start(fnw_engine *e, const fnw_engine_sink *sink, const char *bundle_label);
int fnw_engine_has_space(const fnw_engine *e);
/* Applies in->watermark, then enqueues in (copying its bytes unless the
 * operation is sync). Returns -1 if the engine has failed this bundle. */
int fnw_engine_push(fnw_engine *e, const fnw_record *in);
/* End of input: flush the partial batch, wait for every call (or its
 * timeout), emit, then sink.finished. */
void fnw_engine_finish(fnw_engine *e);
/* The bundle failed elsewhere: cancel in-flight calls and drop queued
 * entries, without callbacks. The engine may start a new bundle after. */
void fnw_engine_abort(fnw_engine *e);
const fnw_engine_metrics *fnw_engine_metrics_get(const fnw_engine *e);


/* ---- read-only views, for diagnostics (a hung bundle, SIGQUIT) ---------------- */
typedef struct fnw_engine_stats {
    size_t queued;                   /* inputs admitted and not yet emitted (in calls, batching, or
                               done and waiting for their turn in order) */
    size_t waiting;                  /* pushed while the queue was full, not admitted yet */
    size_t batching;                 /* inputs in the partial batch not sent yet */
    size_t calls;                    /* calls out: with the operation, waiting to retry, or timed
                               out and still held by the operation */
    double oldest_call_s;            /* how long ago the oldest of them started; 0 when none */
    int64_t records_in, records_out; /* this bundle's, as in the metrics */
} fnw_engine_stats;

/* now is loop time (ev_now). */
void fnw_engine_stats_get(const fnw_engine *e, double now, fnw_engine_stats *st);
/* One line: "operation 'echo' in transform 'T': 2 call(s) in flight (the
 * oldest started 3.0 s ago); 5 input(s) queued, 0 waiting for capacity 100,
 * 0 in a partial batch; 7 in, 2 out this bundle". */
void fnw_engine_describe(const fnw_engine *e, double now, char *buf, size_t n);
/* Calls fn with a line describing each call out, for at most max of them;
 * returns how many calls are out. */
size_t fnw_engine_each_call(const fnw_engine *e, double now, size_t max,
                            void (*fn)(void *user, const char *line), void *user);

#endif
