/* bench/null_worker_internal.h — internal to the null worker
 * (null_worker.c, null_worker_bundles.c, null_worker_stream.c): its state,
 * one stream's and one unary call's, and the functions the files share.
 * Dependencies run one way: null_worker.c (provisioning, the completion
 * loop, exit) uses null_worker_bundles.c (requests, descriptors, the echo),
 * which uses null_worker_stream.c (gRPC client plumbing).
 */
#ifndef BENCH_NULL_WORKER_INTERNAL_H
#define BENCH_NULL_WORKER_INTERNAL_H

#include <grpc/grpc.h>
#include <stddef.h>

#include "org/apache/beam/model/fn_execution/v1/beam_fn_api.pb-c.h"
#include "org/apache/beam/model/fn_execution/v1/beam_provision_api.pb-c.h"

#define PBN(name) org__apache__beam__model__fn_execution__v1__##name
typedef Org__Apache__Beam__Model__FnExecution__V1__InstructionRequest pb_Request;
typedef Org__Apache__Beam__Model__FnExecution__V1__InstructionResponse pb_Response;
typedef Org__Apache__Beam__Model__FnExecution__V1__ProcessBundleResponse pb_PBResponse;
typedef Org__Apache__Beam__Model__FnExecution__V1__ProcessBundleDescriptor pb_Descriptor;
typedef Org__Apache__Beam__Model__FnExecution__V1__RemoteGrpcPort pb_Port;

#define M_PROVISION "/org.apache.beam.model.fn_execution.v1.ProvisionService/GetProvisionInfo"
#define M_CONTROL "/org.apache.beam.model.fn_execution.v1.BeamFnControl/Control"
#define M_DESCRIPTOR "/org.apache.beam.model.fn_execution.v1.BeamFnControl/GetProcessBundleDescriptor"
#define M_DATA "/org.apache.beam.model.fn_execution.v1.BeamFnData/Data"
#define QUEUE_HIGH 64      /* stop reading input while this many sends wait */
#define QUEUE_LOW 16

typedef struct nw nw;
typedef struct stream stream;
enum { T_META, T_RECV, T_SEND, T_STATUS, T_UNARY };

typedef struct tag {
    int kind;
    stream *s;
    struct unary *u;
} tag;

typedef struct out_msg {
    struct out_msg *next;
    grpc_byte_buffer *bb;
    char *respond_iid;          /* after this send: answer the bundle */
} out_msg;

struct stream {
    nw *w;
    grpc_call *call;
    tag t_meta, t_recv, t_send, t_status;
    grpc_metadata_array md_in, trailers;
    grpc_status_code status;
    grpc_slice details;
    grpc_byte_buffer *recv_bb, *send_bb;
    char *send_respond;
    out_msg *q_head, *q_tail;
    int q_len, send_active, recv_active, recv_paused, done, pending;
    void (*on_message)(stream *s, grpc_slice msg);
};

typedef struct unary {
    nw *w;
    grpc_call *call;
    tag t;
    grpc_metadata_array md_in, trailers;
    grpc_status_code status;
    grpc_slice details;
    grpc_byte_buffer *recv_bb;
    char *descriptor_id;
    int done;
} unary;

/* A bundle: its instruction, its descriptor's sink, data that came early. */
typedef struct held {
    struct held *next;
    grpc_slice msg;
    size_t off, len;
    int is_last;
} held;

typedef struct bundle {
    struct bundle *next;
    char *iid, *descriptor_id;
    char *sink;                 /* NULL until the descriptor is known */
    held *early, *early_tail;
} bundle;

typedef struct desc {
    struct desc *next;
    char *id, *sink, *data_url;
    int fetching;
} desc;

struct nw {
    const char *id;
    grpc_completion_queue *cq;
    grpc_channel *control_ch, *data_ch;
    stream control, data;
    int data_open;
    bundle *bundles;
    desc *descs;
    int outstanding_unary;
};

/* ---- gRPC client plumbing (null_worker_stream.c) ---- */

/* The worker_id header (static slices; nothing to free). */
grpc_metadata nw_worker_md(const nw *w);
/* An insecure channel to url without a receive size limit. */
grpc_channel *nw_channel(const char *url);
/* The whole buffer as one slice (the caller unrefs it). */
grpc_slice nw_readall(grpc_byte_buffer *bb);
/* Starts a batch of ops on s's call with tag t, counting it pending. */
void nw_stream_batch(stream *s, grpc_op *ops, size_t n, tag *t);
/* Starts a receive unless one is in flight, s is done or reading is paused. */
void nw_stream_arm_recv(stream *s);
/* Starts the next queued send unless one is in flight. */
void nw_stream_pump(stream *s);
/* Queues bb (taken); with respond_iid, that bundle is answered once bb is sent. */
void nw_stream_send(stream *s, grpc_byte_buffer *bb, const char *respond_iid);
/* Starts the stream `method` on ch with the worker_id header; on_message gets each message. */
void nw_stream_start(nw *w, stream *s, grpc_channel *ch, const char *method,
                     void (*on_message)(stream *, grpc_slice));
/* Frees what s holds once its call is over: queued sends, metadata, the call. */
void nw_stream_free(stream *s);
/* The six ops of one unary call: metadata, the request, half-close, and the
 * response's metadata, message and status. */
void nw_unary_ops(grpc_op ops[6], grpc_metadata *md, grpc_byte_buffer *req,
                  grpc_metadata_array *md_in, grpc_byte_buffer **resp,
                  grpc_metadata_array *trailers, grpc_status_code *status, grpc_slice *details);

/* ---- bundles (null_worker_bundles.c) ---- */

/* Answers instruction iid on Control: an empty ProcessBundleResponse, or error. */
void nw_send_response(nw *w, const char *iid, const char *error);
/* Handles one InstructionRequest from Control. */
void nw_on_control_message(stream *s, grpc_slice msg);
/* Handles the completion of a descriptor fetch (and frees u). */
void nw_on_descriptor(unary *u);
/* Unlinks b from w and frees it. */
void nw_forget_bundle(nw *w, bundle *b);

#endif
