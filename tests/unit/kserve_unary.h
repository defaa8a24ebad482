/* tests/unit/kserve_unary.h — a plain blocking unary gRPC client (gRPC C
 * core, one completion queue per call) for the tests that talk to the
 * KServe test server: send one protobuf-c message to a method of
 * inference.GRPCInferenceService, wait, return the status, its details and
 * the decoded answer. Tests only: the operation never blocks like this. */
#ifndef FNW_KSERVE_UNARY_H
#define FNW_KSERVE_UNARY_H

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A channel to the server (grpc_init first: the tests fork, and gRPC must
 * start in the process that uses it); ku_channel_free undoes both. */
static inline grpc_channel *ku_channel(int port)
{
    grpc_init();
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", port);
    grpc_channel_credentials *c = grpc_insecure_credentials_create();
    grpc_channel *ch = grpc_channel_create(target, c, NULL);
    grpc_channel_credentials_release(c);
    return ch;
}

static inline void ku_channel_free(grpc_channel *ch)
{
    grpc_channel_destroy(ch);
    grpc_shutdown();
}

/* Calls /inference.GRPCInferenceService/<method> with req; on OK *resp is
 * the answer (free it with protobuf_c_message_free_unpacked). Returns the
 * gRPC status code; details gets the status message. */
static inline int ku_call(grpc_channel *ch, const char *method, const ProtobufCMessage *req,
                          const ProtobufCMessageDescriptor *rd, ProtobufCMessage **resp, char *details, size_t dn)
{
    char path[128];
    snprintf(path, sizeof path, "/inference.GRPCInferenceService/%s", method);
    size_t len = protobuf_c_message_get_packed_size(req);
    grpc_slice s = grpc_slice_malloc(len);
    protobuf_c_message_pack(req, GRPC_SLICE_START_PTR(s));
    grpc_byte_buffer *send = grpc_raw_byte_buffer_create(&s, 1), *recv = NULL;
    grpc_slice_unref(s);
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_seconds(60, GPR_TIMESPAN));
    grpc_slice mpath = grpc_slice_from_copied_string(path);   /* the call takes its own reference */
    grpc_call *call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, mpath, NULL, deadline, NULL);
    grpc_slice_unref(mpath);
    grpc_metadata_array md, trailing;
    grpc_metadata_array_init(&md);
    grpc_metadata_array_init(&trailing);
    grpc_status_code status = GRPC_STATUS_UNKNOWN;
    grpc_slice st = grpc_empty_slice();
    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &trailing;
    ops[5].data.recv_status_on_client.status = &status;
    ops[5].data.recv_status_on_client.status_details = &st;
    if (grpc_call_start_batch(call, ops, 6, (void *)1, NULL) == GRPC_CALL_OK)
        grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    char *msg = grpc_slice_to_c_string(st);
    snprintf(details, dn, "%s", msg);
    gpr_free(msg);
    *resp = NULL;
    if (status == GRPC_STATUS_OK && recv) {
        grpc_byte_buffer_reader r;
        grpc_byte_buffer_reader_init(&r, recv);
        grpc_slice all = grpc_byte_buffer_reader_readall(&r);
        *resp = protobuf_c_message_unpack(rd, NULL, GRPC_SLICE_LENGTH(all), GRPC_SLICE_START_PTR(all));
        grpc_slice_unref(all);
        grpc_byte_buffer_reader_destroy(&r);
        if (!*resp)
            status = GRPC_STATUS_DATA_LOSS;
    }
    grpc_byte_buffer_destroy(send);
    if (recv)
        grpc_byte_buffer_destroy(recv);
    grpc_slice_unref(st);
    grpc_metadata_array_destroy(&md);
    grpc_metadata_array_destroy(&trailing);
    grpc_call_unref(call);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
    return (int)status;
}

#endif
