/* bench/null_worker.c — the benchmark's ceiling: a worker that does
 * nothing. It connects like fnworker (provisioning with the worker_id
 * header, Control, descriptors by GetProcessBundleDescriptor, one Data
 * stream to the descriptor's data endpoint), and for every Data entry on a
 * bundle's source it sends the same bytes back unparsed on the bundle's
 * sink (the payload slice is re-used, not copied), then is_last on the sink
 * and an empty ProcessBundleResponse. What the driver measures against it is
 * the cost of the transport and of the driver itself.
 *
 *   null_worker --id=ID --provision_endpoint=HOST:PORT
 *
 * One thread, one completion queue, one send and one receive in flight per
 * stream. Exits 0 when the runner ends the Control stream.
 *
 * This file provisions, runs the completion loop and tears down; what the
 * worker does with requests and data is in null_worker_bundles.c, the gRPC
 * client plumbing in null_worker_stream.c (null_worker_internal.h).
 */
#include <grpc/grpc.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/null_worker_internal.h"

/* ---- the loop ---------------------------------------------------------------------------- */

static void on_stream_event(stream *s, int kind, int ok)
{
    nw *w = s->w;
    s->pending--;
    switch (kind) {
    case T_RECV:
        s->recv_active = 0;
        if (!ok || !s->recv_bb) {
            s->done = 1;
            break;
        }
        {
            grpc_slice msg = nw_readall(s->recv_bb);
            grpc_byte_buffer_destroy(s->recv_bb);
            s->recv_bb = NULL;
            s->on_message(s, msg);
            grpc_slice_unref(msg);
        }
        if (s == &w->data && w->data.q_len >= QUEUE_HIGH)
            s->recv_paused = 1;
        nw_stream_arm_recv(s);
        break;
    case T_SEND:
        s->send_active = 0;
        grpc_byte_buffer_destroy(s->send_bb);
        s->send_bb = NULL;
        if (s->send_respond) {
            if (ok)
                nw_send_response(w, s->send_respond, NULL);
            free(s->send_respond);
            s->send_respond = NULL;
        }
        if (!ok) {
            s->done = 1;
            break;
        }
        nw_stream_pump(s);
        if (s == &w->data && s->recv_paused && s->q_len <= QUEUE_LOW) {
            s->recv_paused = 0;
            nw_stream_arm_recv(s);
        }
        break;
    case T_STATUS:
        s->done = 1;
        break;
    default:
        break;
    }
}

static int provision(nw *w, const char *endpoint, char **control_url)
{
    grpc_channel *ch = nw_channel(endpoint);
    double waited = 0;
    int rc = -1;
    while (rc < 0 && waited < 60) {
        grpc_metadata_array md_in, trailers;
        grpc_metadata_array_init(&md_in);
        grpc_metadata_array_init(&trailers);
        grpc_status_code status = GRPC_STATUS_UNKNOWN;
        grpc_slice details = grpc_empty_slice();
        grpc_byte_buffer *resp = NULL;
        grpc_call *call = grpc_channel_create_call(
            ch, NULL, GRPC_PROPAGATE_DEFAULTS, w->cq, grpc_slice_from_static_string(M_PROVISION), NULL,
            gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_seconds(5, GPR_TIMESPAN)), NULL);
        grpc_slice empty = grpc_empty_slice();
        grpc_byte_buffer *req = grpc_raw_byte_buffer_create(&empty, 1);
        grpc_metadata md = nw_worker_md(w);
        grpc_op ops[6];
        nw_unary_ops(ops, &md, req, &md_in, &resp, &trailers, &status, &details);
        static int t;
        grpc_call_start_batch(call, ops, 6, &t, NULL);
        grpc_completion_queue_next(w->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (status == GRPC_STATUS_OK && resp) {
            grpc_slice s = nw_readall(resp);
            Org__Apache__Beam__Model__FnExecution__V1__GetProvisionInfoResponse *p =
                PBN(get_provision_info_response__unpack)(NULL, GRPC_SLICE_LENGTH(s), GRPC_SLICE_START_PTR(s));
            if (p && p->info && p->info->control_endpoint) {
                *control_url = strdup(p->info->control_endpoint->url);
                rc = 0;
            }
            if (p)
                PBN(get_provision_info_response__free_unpacked)(p, NULL);
            grpc_slice_unref(s);
        }
        if (resp)
            grpc_byte_buffer_destroy(resp);
        grpc_byte_buffer_destroy(req);
        grpc_slice_unref(details);
        grpc_metadata_array_destroy(&md_in);
        grpc_metadata_array_destroy(&trailers);
        grpc_call_unref(call);
        if (rc < 0) {
            usleep(100000);
            waited += 0.1;
        }
    }
    grpc_channel_destroy(ch);
    return rc;
}


int main(int argc, char **argv)
{
    const char *id = NULL, *prov = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--id=", 5))
            id = argv[i] + 5;
        else if (!strncmp(argv[i], "--provision_endpoint=", 21))
            prov = argv[i] + 21;
    }
    if (!id || !prov) {
        fprintf(stderr, "usage: null_worker --id=ID --provision_endpoint=HOST:PORT\n");
        return 2;
    }
    grpc_init();
    nw w;
    memset(&w, 0, sizeof w);
    w.id = id;
    w.cq = grpc_completion_queue_create_for_next(NULL);
    char *control_url = NULL;
    if (provision(&w, prov, &control_url) < 0) {
        fprintf(stderr, "null_worker: no provision info from %s\n", prov);
        return 1;
    }
    w.control_ch = nw_channel(control_url);
    nw_stream_start(&w, &w.control, w.control_ch, M_CONTROL, nw_on_control_message);
    while (!w.control.done || w.control.pending > 0) {
        grpc_event ev = grpc_completion_queue_next(w.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        tag *t = ev.tag;
        if (t->kind == T_UNARY)
            nw_on_descriptor(t->u);
        else
            on_stream_event(t->s, t->kind, ev.success);
        if (w.control.done && w.data_open && !w.data.done)
            grpc_call_cancel(w.data.call, NULL);
        if (w.control.done && w.control.pending > 0)
            grpc_call_cancel(w.control.call, NULL);
    }
    if (w.data_open) {
        grpc_call_cancel(w.data.call, NULL);
        while (w.data.pending > 0 || w.outstanding_unary > 0) {
            grpc_event ev = grpc_completion_queue_next(w.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
            tag *t = ev.tag;
            if (t->kind == T_UNARY)
                nw_on_descriptor(t->u);
            else
                on_stream_event(t->s, t->kind, ev.success);
        }
        nw_stream_free(&w.data);
        grpc_channel_destroy(w.data_ch);
    }
    nw_stream_free(&w.control);
    grpc_channel_destroy(w.control_ch);
    grpc_completion_queue_shutdown(w.cq);
    while (grpc_completion_queue_next(w.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(w.cq);
    while (w.bundles)
        nw_forget_bundle(&w, w.bundles);
    while (w.descs) {
        desc *d = w.descs;
        w.descs = d->next;
        free(d->id);
        free(d->sink);
        free(d->data_url);
        free(d);
    }
    free(control_url);
    grpc_shutdown();
    return 0;
}
