/* runtime/blocking_internal.h — internal to runtime/blocking_call.c and
 * runtime/blocking_op.c: the layout of a blocking call and how it is made,
 * run on a pool thread and freed. Not part of any interface.
 *
 * A blocking call is the copy of one attempt of a fnw_call that a pool
 * thread works on: its inputs (bytes copied, so the engine may let go of
 * its entries while the thread still runs), an arena, and a buffer of
 * encoded outputs, each behind a small header. The thread owns it from
 * submission until it is handed back; the loop owns it before and after.
 */
#ifndef FNW_BLOCKING_INTERNAL_H
#define FNW_BLOCKING_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "codecs/arena.h"
#include "codecs/buf.h"
#include "runtime/blocking_pool.h"
#include "runtime/operation.h"

/* Each output in fnw_blocking_call.out: this header, then len bytes. */
typedef struct fnw_blocking_out {
    uint32_t input;
    uint32_t len;
    uint32_t is_null;
} fnw_blocking_out;

struct fnw_blocking_call {
    fnw_blocking_job job; /* first: the pool's and the owner's queues */
    fnw_call *call;       /* loop thread only; NULL once given up */
    atomic_int cancelled; /* the loop gave up before a thread took it */
    int submitted;        /* loop thread only: on the pool (or a thread) */
    const fnw_type *input_type, *output_type;
    int attempt;
    int failed;
    size_t n;
    fnw_record *in; /* n records, bytes in the arena */
    fnw_arena arena;
    fnw_buf out;                              /* outputs (fnw_blocking_out + bytes) */
    fnw_buf scratch;                          /* fnw_blocking_emit_value's encoding */
    fnw_blocking_call *wait_next, *wait_prev; /* the owner's list of calls over its limit */
    char msg[FNW_ERROR_MAX];
};

/* A copy of call's inputs for owner; NULL when out of memory. */
fnw_blocking_call *fnw_blocking_call_new(const void *owner, fnw_call *call, const fnw_type *input_type,
                                         const fnw_type *output_type, void (*run)(fnw_blocking_job *job));
void fnw_blocking_call_free(fnw_blocking_call *bc);

#endif
