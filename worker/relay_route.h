/* worker/relay_route.h — where a ProcessBundleDescriptor runs: in fnworker
 * (every function in it is a fnworker operation), in PyFlink's own Python
 * worker through the relay (none is), or nowhere (Flink fused both kinds
 * into one descriptor; the message says how to keep them apart). And the
 * copy of a relayed descriptor the Python worker gets: the same bytes with
 * its input and timer endpoints pointing at the relay.
 *
 * A function is a fnworker operation when its payload is an OperationSpec:
 * the pickle the fnworker Python package writes (codecs/pickle_payload.h)
 * or the spec's bytes themselves (a runner that is not PyFlink). Any other
 * pickle is a Python function; so is every keyed (stateful) function.
 * REVISE_OUTPUT transforms belong to both kinds and decide nothing. Pure:
 * descriptors in, a verdict or bytes out.
 */
#ifndef FNW_RELAY_ROUTE_H
#define FNW_RELAY_ROUTE_H

#include <grpc/slice.h>

#include "base/pb.h"
#include "codecs/error.h"

typedef enum fnw_route {
    FNW_ROUTE_NATIVE = 0, /* fnworker runs it (also: no function could be read; planning says why) */
    FNW_ROUTE_RELAYED,    /* PyFlink's Python worker runs it */
    FNW_ROUTE_MIXED,      /* both kinds in one descriptor: refused, err says why */
} fnw_route;

fnw_route fnw_relay_route_classify(const pb_ProcessBundleDescriptor *d, fnw_error *err);

/* d as the Python worker gets it: every RemoteGrpcPort (data source and
 * sink) and the timer endpoint name url; everything else (the State
 * endpoint included: the child talks to Flink's State service directly)
 * is unchanged. *out is the packed descriptor. -1 with err when a port
 * cannot be read or memory ran out. */
int fnw_relay_route_rewrite(const pb_ProcessBundleDescriptor *d, const char *url, grpc_slice *out,
                            fnw_error *err);

#endif
