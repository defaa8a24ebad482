/* runtime/call.h — one operation call from start to end, internal to the
 * runtime: the attempt with the operation, the retry and timeout timers,
 * completion and failure, and the direct (synchronous) path. The call is
 * the object operations see through fnworker.h; this header is the side
 * the engine uses.
 *
 * The call never calls the engine. Whoever makes calls (the engine, or a
 * test) fills an fnw_call_setup once: the operation, the loop, the types,
 * the retry and timeout rules, and a const table of callbacks with a user
 * pointer. Every call made from that setup reports through those callbacks
 * only, so the whole state machine can be read in call.c and driven on its
 * own.
 *
 * A queued call (from a pool) carries entries; its emits are staged on them
 * until the attempt ends, so a failed attempt that is retried leaves
 * nothing behind. When the result is final the call hands the entries to
 * done(), lets go of them and goes back to its pool. A call that times out
 * while the operation still has it is cancelled (the operation's cancel)
 * and goes back to its pool at once, so a call that never comes back holds
 * nothing past its timeout. A direct call runs inside
 * fnw_call_run_direct(): its emits go straight to emit().
 */
#ifndef FNW_CALL_H
#define FNW_CALL_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/buf.h"
#include "codecs/type.h"
#include "runtime/entry.h"
#include "runtime/operation.h"
#include "runtime/record.h"
#include "runtime/spec.h"

struct ev_loop;

/* What count() reports. */
typedef enum fnw_call_count {
    FNW_CALL_RETRIED,   /* an attempt after the first is about to run */
    FNW_CALL_TIMED_OUT, /* the call's timeout passed before its result */
    FNW_CALL_FAILED,    /* the operation failed and no retry is left */
} fnw_call_count;

/* How an attempt with the operation ended (attempt_end). */
typedef enum fnw_call_outcome {
    FNW_ATTEMPT_OK,         /* the operation completed it */
    FNW_ATTEMPT_FAILED,     /* the operation failed it */
    FNW_ATTEMPT_TIMED_OUT,  /* the call's timeout passed while the operation had it */
    FNW_ATTEMPT_OVERLOADED, /* the service refused it for load (fnw_call_fail_overloaded) */
    FNW_ATTEMPT_GIVEN_UP,   /* the owner stopped it */
} fnw_call_outcome;

/* What gate() answers before an attempt starts. */
typedef enum fnw_call_gate {
    FNW_GATE_GO,     /* start it */
    FNW_GATE_PROBE,  /* start it; attempt_end will say it was the probe */
    FNW_GATE_WAIT,   /* not now: it waits in the pool's queue until fnw_call_pool_resume */
    FNW_GATE_REJECT, /* never: the call fails at once without the operation (why says why) */
} fnw_call_gate;

/* How a call talks back to whoever made it. user is the setup's. Except in
 * the direct path (which runs inside the caller), every callback comes
 * between an enter() and its leave(), so the callee may defer work that
 * frees the call's owner to leave(). */
typedef struct fnw_call_callbacks {
    void (*enter)(void *user);
    void (*leave)(void *user);
    /* Non-zero once the owner no longer wants results: a call that comes
     * back then is released without done(). */
    int (*stopped)(void *user);
    /* The result is final: in[0..n-1] carry their staged outputs (valid
     * during the callback). elapsed_us runs from the first attempt (loop
     * time, in microseconds). */
    void (*done)(void *user, fnw_entry *const *in, size_t n, int64_t elapsed_us);
    /* A call has ended and let go of its entries: emit what is ready. */
    void (*drain)(void *user);
    /* Direct path only: one output, now. Non-zero refuses it. */
    int (*emit)(void *user, const fnw_record *out);
    /* The owner must fail: "<what> on <inputs of c> in <where><tail>".
     * c is NULL when the failure is not about the call's inputs (out of
     * memory). tail is "" or starts with ": ". */
    void (*failed)(void *user, const fnw_call *c, const char *what, const char *tail);
    void (*count)(void *user, fnw_call_count what);
    /* Optional (NULL: every attempt starts at once). Asked before each
     * attempt of a queued call (first, retry, or again after an overload);
     * why (n bytes) takes the reason of a REJECT. */
    fnw_call_gate (*gate)(void *user, const fnw_call *c, char *why, size_t n);
    /* Optional: an attempt that was with the operation ended. started is
     * its start (loop time); probe as gate() said; retry_after_ms is the
     * service's pause for an overload (0: none given). */
    void (*attempt_end)(void *user, fnw_call_outcome how, double started, int probe, int64_t retry_after_ms);
} fnw_call_callbacks;

/* Fixed before the first call is made; calls keep a pointer to it. */
typedef struct fnw_call_setup {
    const fnw_call_callbacks *cb;
    void *user;
    struct ev_loop *loop;
    const fnw_operation *op;
    void *op_state;
    const fnw_type *input_type, *output_type;
    fnw_buf *scratch;        /* encode buffer for fnw_call_emit_value */
    fnw_entry_pool *entries; /* where a call's entries go back */
    int64_t timeout_ms;      /* 0 = none */
    fnw_timeout_action on_timeout;
    fnw_retry retry;
    /* fnw_call_fail_overloaded re-queues the call (without using a retry)
     * instead of failing it like fnw_call_fail_after. */
    int requeue_overloaded;
} fnw_call_setup;

/* Queued calls: every call not on the free list is on the active list, so
 * the owner can stop them all. */
typedef struct fnw_call_pool {
    const fnw_call_setup *setup;
    size_t cap; /* inputs per call */
    fnw_call *active, *free;
    fnw_call *wait_head, *wait_tail; /* calls gate() held back, oldest first */
    int64_t running;                 /* attempts with the operation now */
    /* The owner sets it: 0 while it needs neither its gate() nor to hear
     * of successful attempts (a limit at its maximum, no breaker): the
     * per-call path then skips both. Everything else is reported always. */
    int gated;
    size_t n_active; /* calls on the active list */
} fnw_call_pool;

void fnw_call_pool_init(fnw_call_pool *p, const fnw_call_setup *s, size_t cap);
/* Stops what is active and frees every call. */
void fnw_call_pool_free(fnw_call_pool *p);
/* An idle call on the active list (NULL when out of memory); start it. */
fnw_call *fnw_call_pool_get(fnw_call_pool *p);
/* Gives up on every active call without callbacks: the operation's cancel
 * for each one it still has, then back to the free list. */
void fnw_call_pool_stop_all(fnw_call_pool *p);
int fnw_call_pool_busy(const fnw_call_pool *p);
/* Starts (or rejects) waiting calls, oldest first, until gate() says WAIT
 * or none is left; returns how many left the queue. Call it outside the
 * callbacks (e.g. when the owner unwinds). */
size_t fnw_call_pool_resume(fnw_call_pool *p);
/* The inputs a call holds (for the owner's on_failure result). */
fnw_entry *const *fnw_call_entries(const fnw_call *c, size_t *n);
/* Whether c is a direct call. */
int fnw_call_is_direct(const fnw_call *c);

/* The first attempt over in[0..n-1] (n <= the pool's cap), which the call
 * holds from now on; the timeout starts now. */
void fnw_call_start(fnw_call *c, fnw_entry *const *in, size_t n);

/* The direct path: one call, reused for every input, never pooled. */
fnw_call *fnw_call_new_direct(const fnw_call_setup *s);
void fnw_call_free(fnw_call *c);
/* Invokes the operation on in (not copied; index is its position in the
 * bundle), which must settle the call before it returns. Returns the number
 * of outputs emitted, or -1 when the operation returned without settling
 * (reported through failed()). */
int64_t fnw_call_run_direct(fnw_call *c, const fnw_record *in, uint64_t index);

/* "input 3 (timestamp 17)" or "inputs 4..7 (timestamps 1, 2, 3, 4)". */
void fnw_call_describe_inputs(const fnw_call *c, char *buf, size_t n);

/* ---- read-only views, for diagnostics (never on a per-record path) --------------- */
/* The pool's active calls (with the operation or waiting to retry; a call
 * that timed out is no longer one); *oldest_started gets the earliest
 * start (loop time) when there is one. */
size_t fnw_call_pool_count(const fnw_call_pool *p, double *oldest_started);
/* How many calls are out (on the active list), without walking it. */
static inline size_t fnw_call_pool_active(const fnw_call_pool *p)
{
    return p->n_active;
}
/* Walks the active calls, newest first; NULL at the end. */
const fnw_call *fnw_call_pool_first(const fnw_call_pool *p);
const fnw_call *fnw_call_pool_next(const fnw_call *c);
/* "call on input 3 (timestamp 17): attempt 1, with the operation, started
 * 2.0 s ago" (now is loop time). */
void fnw_call_describe(const fnw_call *c, double now, char *buf, size_t n);

#endif
