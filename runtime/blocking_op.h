/* runtime/blocking_op.h — runs a blocking operation (fnworker.h,
 * invoke_blocking) as an asynchronous one, internal to the runtime.
 *
 * The engine opens the operation as usual, then wraps its instance in a
 * fnw_blocking_op and gives the calls the wrapper's operation table instead
 * of the operation's: invoke copies the attempt into a blocking call and
 * submits it to the pool (at most `limit` of this instance on the pool at
 * once, the rest wait in order), cancel gives up on it, on_timeout goes
 * to the operation's own. Results come back through the loop's hand-off
 * (base/handoff.h); on the loop each is emitted and the fnw_call completed or
 * failed, so timeouts, retries, ordering and metrics are the call's and
 * the engine's as for any operation. A result whose call was given up is
 * dropped and freed.
 *
 * Loop thread only. Freeing waits for the calls still on a thread (never
 * interrupting them) so the operation may be closed right after.
 */
#ifndef FNW_BLOCKING_OP_H
#define FNW_BLOCKING_OP_H

#include <stddef.h>

#include "runtime/blocking_pool.h"
#include "runtime/operation.h"

struct ev_loop;
typedef struct fnw_blocking_op fnw_blocking_op;

fnw_blocking_op *fnw_blocking_op_new(struct ev_loop *loop, const fnw_operation *op, void *op_state,
                                     const fnw_type *input_type, const fnw_type *output_type, size_t limit,
                                     fnw_blocking_pool *pool, fnw_error *err);
/* The table the calls use, with the wrapper as its state. */
const fnw_operation *fnw_blocking_op_table(const fnw_blocking_op *b);
/* Every call must have been stopped (its cancel run) before. */
void fnw_blocking_op_free(fnw_blocking_op *b);

#endif
