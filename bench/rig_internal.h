/* bench/rig_internal.h — internal to the rig (rig.c, rig_call.c,
 * rig_services.c), not part of its interface (rig.h): the rig's state and
 * one server call's, and the functions the three files share. Dependencies
 * run one way: rig.c (life cycle, completion loop, bundles) uses
 * rig_services.c (what each message means) and rig_call.c (sending,
 * receiving, freeing a call); rig_services.c uses rig_call.c only.
 */
#ifndef BENCH_RIG_INTERNAL_H
#define BENCH_RIG_INTERNAL_H

#include <grpc/grpc.h>
#include <stddef.h>
#include <stdint.h>

#include "org/apache/beam/model/fn_execution/v1/beam_fn_api.pb-c.h"
#include "org/apache/beam/model/fn_execution/v1/beam_provision_api.pb-c.h"
#include "bench/rig.h"

#define PBN(name) org__apache__beam__model__fn_execution__v1__##name
typedef Org__Apache__Beam__Model__FnExecution__V1__InstructionRequest pb_Request;
typedef Org__Apache__Beam__Model__FnExecution__V1__InstructionResponse pb_Response;
typedef Org__Apache__Beam__Model__FnExecution__V1__ProcessBundleRequest pb_ProcessBundle;
typedef Org__Apache__Beam__Model__FnExecution__V1__GetProcessBundleDescriptorRequest pb_DescReq;
typedef Org__Apache__Beam__Model__FnExecution__V1__GetProvisionInfoResponse pb_ProvResp;
typedef Org__Apache__Beam__Model__FnExecution__V1__ProvisionInfo pb_ProvInfo;
typedef Org__Apache__Beam__Model__Pipeline__V1__ApiServiceDescriptor pb_Api;
typedef Org__Apache__Beam__Model__FnExecution__V1__LogEntry__List pb_LogList;

typedef enum { K_UNKNOWN, K_PROVISION, K_DESCRIPTOR, K_CONTROL, K_DATA, K_LOGGING } call_kind;
enum { OP_NEW, OP_META, OP_RECV, OP_SEND, OP_CLOSE, OP_SHUTDOWN };

struct rig_call;
typedef struct rig_tag {
    struct rig_call *c;
    int op;
} rig_tag;

typedef struct out_msg {
    struct out_msg *next;
    grpc_byte_buffer *bb;            /* NULL: send the status */
} out_msg;

typedef struct rig_call {
    bench_rig *rig;
    call_kind kind;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
    rig_tag t_new, t_meta, t_recv, t_send, t_close;
    int pending;
    grpc_byte_buffer *recv_bb;
    grpc_byte_buffer *send_bb;
    int send_active, recv_active;
    out_msg *q_head, *q_tail;
    int status_queued, status_code;
    grpc_slice status_details;
    int cancelled, closed, dead;
    struct rig_call *next_live;
} rig_call;

typedef struct desc_entry {
    struct desc_entry *next;
    char *id;
    uint8_t *bytes;
    size_t n;
} desc_entry;

struct bench_rig {
    grpc_server *server;
    grpc_completion_queue *cq;
    char url[64];
    int verbose;
    rig_call *listening;
    rig_call *live;
    desc_entry *descs;
    rig_tag t_shutdown;
    int shutdown_done;
    /* session */
    char worker_id[64];
    rig_call *control, *data;
    uint64_t bad_worker_id, stray_responses, stray_data, log_entries, log_errors;
    char last_log_error[256];
    /* bundles: running ones in start order, then ended ones still matched */
    bench_bundle *bundles[BENCH_RIG_MAX_BUNDLES];
    int n_bundles;
    int feed_next;                   /* the bundle whose source is asked first next time */
    uint64_t bundle_seq;
    uint64_t data_msg_seq;           /* Data messages received */
    double src_wake;
    /* tick */
    double tick_interval, next_tick;
    void (*tick)(void *arg, double now);
    void *tick_arg;
};

/* ---- one call (rig_call.c) ---- */

/* A new call on r, linked into r's live list; NULL when out of memory. */
rig_call *rig_call_new(bench_rig *r);
/* Unlinks c from r (and from r->control / r->data) and frees it. */
void rig_call_free(rig_call *c);
/* Starts a batch of n ops with tag; -1 (and c marked dead) if gRPC refuses. */
int rig_call_batch(rig_call *c, grpc_op *ops, size_t n, rig_tag *tag);
/* Starts a receive unless one is in flight. */
void rig_call_arm_recv(rig_call *c);
/* Starts the next queued send (or the status) unless one is in flight. */
void rig_call_pump_send(rig_call *c);
/* Drops every queued send. */
void rig_call_drop_queue(rig_call *c);
/* Queues bb (NULL: the status) and pumps; takes bb even when c is dead. */
void rig_call_enqueue(rig_call *c, grpc_byte_buffer *bb);
/* Queues the final status (once). */
void rig_call_send_status(rig_call *c, grpc_status_code code, const char *details);
/* Queues a copy of p[0..n) as one message. */
void rig_call_send_bytes(rig_call *c, const uint8_t *p, size_t n);
/* The received message as one slice (the caller unrefs it); clears c->recv_bb. */
grpc_slice rig_call_take_message(rig_call *c);

/* ---- the services (rig_services.c) ---- */

/* Handles one received message on c according to its method. */
void rig_on_message(rig_call *c, grpc_slice msg);
/* Queues the next input message of a running bundle (taking turns), or its
 * is_last, when the stream has nothing in flight; records when the sources
 * want to be asked again. */
void rig_feed_data(bench_rig *r);
/* The tracked bundle with instruction id iid[0..n), or NULL. */
bench_bundle *rig_find_bundle(bench_rig *r, const char *iid, size_t n);

#endif
