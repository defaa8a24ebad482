/* pool/extpool.h — Beam's BeamFnExternalWorkerPool service (StartWorker,
 * StopWorker; beam_fn_api.proto) for runners with an EXTERNAL environment,
 * served with the gRPC C core server API on the loop's completion queue:
 * the loop's pump thread (base/pump.h) hands completions to the pool's
 * loop through the loop's hand-off (base/handoff.h), so requests are
 * handled on the loop thread like everything else in the pool. Workers it
 * starts write through the pool's stderr. */
#ifndef FNW_POOL_EXTPOOL_H
#define FNW_POOL_EXTPOOL_H

#include <ev.h>
#include <stddef.h>

#include "codecs/error.h"
#include "pool/children.h"

typedef struct fnw_extpool fnw_extpool;

/* Listens on addr (host:port; port 0 picks one); bound receives the address. */
fnw_extpool *fnw_extpool_new(struct ev_loop *loop, fnw_children *children, const char *addr, char *bound,
                             size_t bound_len, fnw_error *err);
/* From now on StartWorker answers that the pool is shutting down. */
void fnw_extpool_drain(fnw_extpool *x);
/* Shuts the server down (calls in flight are cancelled), runs the loop
 * until every completion is back, joins the pump. */
void fnw_extpool_free(fnw_extpool *x);

#endif
