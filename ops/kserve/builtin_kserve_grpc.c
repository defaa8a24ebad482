/* ops/kserve/builtin_kserve_grpc.c — the `kserve` operation's gRPC plumbing:
 * its channels to the model server, its one completion queue and the pump
 * thread that waits on it (handing each completion to the loop through the
 * handoff), the pool of rpc records, starting a ModelInfer call, and the
 * blocking unary calls that open makes before any call runs.
 */
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kserve/builtin_kserve_internal.h"

static gpr_timespec deadline_after_ms(int64_t ms)
{
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

static grpc_channel_credentials *credentials(const fnw_kserve_config *c, fnw_error *err)
{
    if (!c->tls)
        return grpc_insecure_credentials_create();
    char *pem = NULL;
    if (c->tls_ca_file && !(pem = read_file(c->tls_ca_file))) {
        fnw_error_set(err, "option 'tls_ca_file' of operation '%s': cannot read '%.200s'", KSERVE_OP,
                      c->tls_ca_file);
        return NULL;
    }
    grpc_channel_credentials *cr = grpc_ssl_credentials_create(pem, NULL, NULL, NULL);
    free(pem);
    if (!cr)
        fnw_error_set(err, "operation '%s': cannot set up TLS to '%s'", KSERVE_OP, c->target);
    return cr;
}

int fnw_kserve_channels_start(kserve_op *op, fnw_error *err)
{
    grpc_init();
    op->grpc_started = 1;
    op->method = grpc_slice_from_static_string("/inference.GRPCInferenceService/ModelInfer");
    grpc_channel_credentials *cr = credentials(&op->cfg, err);
    if (!cr)
        return -1;
    grpc_arg args[5];
    memset(args, 0, sizeof args);
    args[0].type = args[1].type = args[2].type = args[3].type = args[4].type = GRPC_ARG_INTEGER;
    args[0].key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = args[1].value.integer = (int)op->cfg.max_message_bytes;
    /* Separate connections: without it, channels with equal arguments share one subchannel. */
    args[2].key = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
    args[2].value.integer = 1;
    /* Reconnect at most 1 s apart: gRPC's default backoff grows to 120 s, so
     * a model server that restarts after a minute's outage would stay
     * unreached (every retry failing at once) for up to two more. */
    args[3].key = GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS;
    args[3].value.integer = 200;
    args[4].key = GRPC_ARG_MAX_RECONNECT_BACKOFF_MS;
    args[4].value.integer = 1000;
    grpc_channel_args ca = { 5, args };
    for (int i = 0; i < op->cfg.channels; i++) {
        op->channels[i] = grpc_channel_create(op->cfg.target, cr, &ca);
        if (!op->channels[i]) {
            grpc_channel_credentials_release(cr);
            return fnw_error_set(err, "operation '%s': cannot create a gRPC channel to '%s'", KSERVE_OP,
                                 op->cfg.target);
        }
        op->n_channels = i + 1;
    }
    grpc_channel_credentials_release(cr);
    return 0;
}

void fnw_kserve_channels_stop(kserve_op *op)
{
    for (int i = 0; i < op->n_channels; i++)
        grpc_channel_destroy(op->channels[i]);
    op->n_channels = 0;
    if (op->grpc_started)
        grpc_shutdown();
    op->grpc_started = 0;
}

/* ---- the pump ------------------------------------------------------------ */

static void *pump_main(void *arg)
{
    kserve_op *op = arg;
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(op->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            return NULL;
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        kserve_rpc *r = ev.tag;
        r->ok = ev.success;
        fnw_handoff_put(&op->done, &r->item);   /* the handoff's lock orders the write above */
    }
}

static void on_wake(struct ev_loop *loop, ev_async *w, int revents)
{
    kserve_op *op = w->data;
    fnw_handoff_item *it;
    while ((it = fnw_handoff_poll(&op->done)))
        fnw_kserve_call_done(op, (kserve_rpc *)it);
    if (!op->n_active && op->wake_on) {
        fnw_handoff_wake_stop(&op->done);   /* an idle operation does not keep the loop running */
        op->wake_on = 0;
    }
}

int fnw_kserve_pump_start(kserve_op *op, fnw_error *err)
{
    fnw_handoff_init_wake(&op->done, op->loop, on_wake, op);
    op->done_init = 1;
    if (!(op->cq = grpc_completion_queue_create_for_next(NULL)))
        return fnw_error_set(err, "operation '%s': cannot create a gRPC completion queue", KSERVE_OP);
    if (pthread_create(&op->pump, NULL, pump_main, op) != 0)
        return fnw_error_set(err, "operation '%s': cannot start its gRPC thread", KSERVE_OP);
    op->pump_started = 1;
    return 0;
}

static void rpc_release(kserve_rpc *r)
{
    if (r->gc)
        grpc_call_unref(r->gc);
    if (r->send)
        grpc_byte_buffer_destroy(r->send);
    if (r->recv)
        grpc_byte_buffer_destroy(r->recv);
    grpc_slice_unref(r->details);
    grpc_metadata_array_destroy(&r->initial);
    grpc_metadata_array_destroy(&r->trailing);
    r->gc = NULL;
    r->send = r->recv = NULL;
}

void fnw_kserve_pump_stop(kserve_op *op)
{
    for (kserve_rpc *r = op->active; r; r = r->next) {
        r->call = NULL;   /* the engine has given its calls up */
        grpc_call_cancel(r->gc, NULL);
    }
    if (op->cq) {
        grpc_completion_queue_shutdown(op->cq);
        if (op->pump_started)
            pthread_join(op->pump, NULL);   /* returns once every pending completion was delivered */
        else
            while (grpc_completion_queue_next(op->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
                   GRPC_QUEUE_SHUTDOWN)
                ;
        op->pump_started = 0;
    }
    while (op->done_init && fnw_handoff_poll(&op->done))
        ;   /* the records are all on the in-flight list */
    while (op->active) {
        kserve_rpc *r = op->active;
        op->active = r->next;
        rpc_release(r);
        free(r);
    }
    while (op->free_rpcs) {
        kserve_rpc *r = op->free_rpcs;
        op->free_rpcs = r->next;
        free(r);
    }
    if (op->wake_on)
        fnw_handoff_wake_stop(&op->done);
    op->wake_on = 0;
    if (op->done_init)
        fnw_handoff_free(&op->done);
    op->done_init = 0;
    if (op->cq)
        grpc_completion_queue_destroy(op->cq);
    op->cq = NULL;
}

/* ---- rpc records ----------------------------------------------------------- */

kserve_rpc *fnw_kserve_rpc_get(kserve_op *op)
{
    kserve_rpc *r = op->free_rpcs;
    if (r)
        op->free_rpcs = r->next;
    else if (!(r = malloc(sizeof *r)))
        return NULL;
    memset(r, 0, sizeof *r);
    r->op = op;
    r->details = grpc_empty_slice();
    grpc_metadata_array_init(&r->initial);
    grpc_metadata_array_init(&r->trailing);
    return r;
}

static void unlink_active(kserve_op *op, kserve_rpc *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        op->active = r->next;
    if (r->next)
        r->next->prev = r->prev;
    op->n_active--;
}

void fnw_kserve_rpc_put(kserve_op *op, kserve_rpc *r)
{
    if (r->gc)
        unlink_active(op, r);
    rpc_release(r);
    r->prev = NULL;
    r->next = op->free_rpcs;
    op->free_rpcs = r;
}

static void fill_ops(kserve_op *op, kserve_rpc *r, grpc_op *ops, grpc_metadata *auth)
{
    memset(ops, 0, 6 * sizeof *ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    if (op->cfg.auth_header) {
        auth->key = grpc_slice_from_static_string("authorization");
        auth->value = grpc_slice_from_static_string(op->cfg.auth_header);
        ops[0].data.send_initial_metadata.count = 1;
        ops[0].data.send_initial_metadata.metadata = auth;
    }
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = r->send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &r->initial;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &r->recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &r->trailing;
    ops[5].data.recv_status_on_client.status = &r->status;
    ops[5].data.recv_status_on_client.status_details = &r->details;
}

int fnw_kserve_rpc_start(kserve_op *op, kserve_rpc *r, fnw_error *err)
{
    grpc_channel *ch = op->channels[op->next_channel++ % (unsigned)op->n_channels];
    /* The spec's timeout (and its timeout action) decides first; the deadline,
     * a grace later, ends the server's work on a call given up. */
    gpr_timespec deadline = op->timeout_ms > 0 ? deadline_after_ms(op->timeout_ms + KSERVE_DEADLINE_GRACE_MS)
                                               : gpr_inf_future(GPR_CLOCK_MONOTONIC);
    r->gc = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, op->cq, op->method, NULL, deadline, NULL);
    if (!r->gc)
        return fnw_error_set(err, "cannot start a gRPC call to '%s'", op->cfg.target);
    grpc_op ops[6];
    grpc_metadata auth;
    fill_ops(op, r, ops, &auth);
    grpc_call_error e = grpc_call_start_batch(r->gc, ops, 6, r, NULL);
    if (e != GRPC_CALL_OK) {
        grpc_call_unref(r->gc);
        r->gc = NULL;
        return fnw_error_set(err, "gRPC refused the call to '%s' (error %d)", op->cfg.target, (int)e);
    }
    r->prev = NULL;
    r->next = op->active;
    if (op->active)
        op->active->prev = r;
    op->active = r;
    if (op->n_active++ == 0 && !op->wake_on) {
        fnw_handoff_wake_start(&op->done);
        op->wake_on = 1;
    }
    return 0;
}

/* ---- blocking unary calls (open only) --------------------------------------- */

static int unpack_answer(grpc_byte_buffer *recv, const ProtobufCMessageDescriptor *rd, ProtobufCMessage **resp)
{
    grpc_byte_buffer_reader rd_;
    if (!recv || !grpc_byte_buffer_reader_init(&rd_, recv))
        return -1;
    grpc_slice all = grpc_byte_buffer_reader_readall(&rd_);
    *resp = protobuf_c_message_unpack(rd, NULL, GRPC_SLICE_LENGTH(all), GRPC_SLICE_START_PTR(all));
    grpc_slice_unref(all);
    grpc_byte_buffer_reader_destroy(&rd_);
    return *resp ? 0 : -1;
}

int fnw_kserve_unary(kserve_op *op, const char *method, const ProtobufCMessage *req,
                     const ProtobufCMessageDescriptor *rd, ProtobufCMessage **resp, char *details, size_t dn)
{
    char path[96];
    snprintf(path, sizeof path, "/inference.GRPCInferenceService/%s", method);
    size_t len = protobuf_c_message_get_packed_size(req);
    grpc_slice s = grpc_slice_malloc(len);
    protobuf_c_message_pack(req, GRPC_SLICE_START_PTR(s));
    kserve_rpc r;
    memset(&r, 0, sizeof r);
    r.details = grpc_empty_slice();
    r.status = GRPC_STATUS_UNKNOWN;
    r.send = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    grpc_metadata_array_init(&r.initial);
    grpc_metadata_array_init(&r.trailing);
    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_slice mpath = grpc_slice_from_copied_string(path);
    r.gc = grpc_channel_create_call(op->channels[0], NULL, GRPC_PROPAGATE_DEFAULTS, cq, mpath, NULL,
                                    deadline_after_ms(op->cfg.connect_timeout_ms), NULL);
    grpc_slice_unref(mpath);
    grpc_op ops[6];
    grpc_metadata auth;
    fill_ops(op, &r, ops, &auth);
    ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;   /* a server starting up gets the connect timeout */
    if (r.gc && fnw_kserve_gate_track(op, r.gc) == 0 && grpc_call_start_batch(r.gc, ops, 6, &r, NULL) == GRPC_CALL_OK)
        grpc_completion_queue_pluck(cq, &r, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    fnw_kserve_gate_track(op, NULL);
    char *msg = grpc_slice_to_c_string(r.details);
    snprintf(details, dn, "%s", msg);
    gpr_free(msg);
    fnw_kserve_mask(op, details);
    *resp = NULL;
    if (r.status == GRPC_STATUS_OK && unpack_answer(r.recv, rd, resp) != 0) {
        r.status = GRPC_STATUS_DATA_LOSS;
        snprintf(details, dn, "the answer to %s is not a valid message", method);
    }
    rpc_release(&r);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_pluck(cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
    return (int)r.status;
}
