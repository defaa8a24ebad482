/* runtime/call.h — what the engine keeps per operation call (fnw_call);
 * internal to the runtime. The entries a call carries are in entry.h.
 */
#ifndef FNW_CALL_H
#define FNW_CALL_H

#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "codecs/arena.h"
#include "codecs/buf.h"
#include "codecs/type.h"
#include "runtime/entry.h"
#include "runtime/operation.h"
#include "runtime/record.h"

typedef struct fnw_engine fnw_engine;

typedef enum fnw_call_state {
    FNW_CALL_IDLE = 0,      /* on the free list */
    FNW_CALL_RUNNING,       /* an attempt is with the operation */
    FNW_CALL_BACKOFF,       /* waiting for the retry timer */
    FNW_CALL_TIMING_OUT,    /* inside the operation's on_timeout hook */
    FNW_CALL_ZOMBIE,        /* timed out while with the operation; its completion is ignored */
    FNW_CALL_CANCELLED,     /* being cancelled */
} fnw_call_state;

struct fnw_call {
    fnw_engine *e;
    struct ev_loop *loop;
    const fnw_type *input_type, *output_type;
    fnw_buf *scratch;             /* the engine's encode buffer */
    uint8_t state;
    uint8_t direct;               /* sync fast path: input is the caller's record */
    int attempt;
    uint64_t emitted;             /* outputs of the current attempt */
    int64_t last_backoff;
    ev_tstamp started;
    ev_timer timeout_w;
    ev_timer retry_w;
    void *op_data;
    fnw_arena arena;
    const fnw_record *direct_rec;
    uint64_t direct_index;
    struct fnw_call *prev, *next; /* active list, or free list (next) */
    size_t n, cap;
    fnw_entry *in[];              /* cap slots */
};

/* Engine side of the call API (engine.c). */
void fnw_engine_call_complete(fnw_call *c);
void fnw_engine_call_fail(fnw_call *c, const char *message);
int fnw_engine_call_emit_direct(fnw_call *c, const uint8_t *data, size_t len);
void fnw_engine_call_oom(fnw_call *c);

#endif
