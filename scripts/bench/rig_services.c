/* scripts/bench/rig_services.c — what the rig serves, message by message
 * (rig_internal.h): provisioning (the rig's own URL for control and
 * logging), GetProcessBundleDescriptor from the descriptors it was given,
 * the worker's instruction responses matched to the running bundle, its
 * output Data entries counted on the bundle's walker (anything addressed
 * elsewhere, or after is_last, is stray), log entries counted by severity;
 * and the data stream's feeding: the running bundle's source is asked for
 * the next message only when the stream has nothing in flight, so the next
 * 1 MB is built only when it can be sent, then is_last closes the input.
 */
#include "scripts/bench/rig_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scripts/bench/descriptor.h"
#include "scripts/bench/elements.h"

static void on_provision(rig_call *c, grpc_slice msg)
{
    bench_rig *r = c->rig;
    pb_Api ctl = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    pb_Api log = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    pb_ProvInfo info = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROVISION_INFO__INIT;
    pb_ProvResp resp = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__GET_PROVISION_INFO_RESPONSE__INIT;
    ctl.url = r->url;
    log.url = r->url;
    info.control_endpoint = &ctl;
    info.logging_endpoint = &log;
    info.retrieval_token = "bench";
    resp.info = &info;
    size_t n = PBN(get_provision_info_response__get_packed_size)(&resp);
    uint8_t *p = malloc(n ? n : 1);
    if (!p) {
        rig_call_send_status(c, GRPC_STATUS_INTERNAL, "out of memory");
        return;
    }
    PBN(get_provision_info_response__pack)(&resp, p);
    rig_call_send_bytes(c, p, n);
    free(p);
    rig_call_send_status(c, GRPC_STATUS_OK, NULL);
    (void)msg;
}

static void on_descriptor_request(rig_call *c, grpc_slice msg)
{
    pb_DescReq *q = PBN(get_process_bundle_descriptor_request__unpack)(
        NULL, GRPC_SLICE_LENGTH(msg), GRPC_SLICE_START_PTR(msg));
    if (!q) {
        rig_call_send_status(c, GRPC_STATUS_INVALID_ARGUMENT, "not a GetProcessBundleDescriptorRequest");
        return;
    }
    desc_entry *e = c->rig->descs;
    while (e && strcmp(e->id, q->process_bundle_descriptor_id))
        e = e->next;
    if (e) {
        rig_call_send_bytes(c, e->bytes, e->n);
        rig_call_send_status(c, GRPC_STATUS_OK, NULL);
    } else {
        char m[256];
        snprintf(m, sizeof m, "ProcessBundleDescriptor with id %s not found",
                 q->process_bundle_descriptor_id);
        rig_call_send_status(c, GRPC_STATUS_NOT_FOUND, m);
    }
    PBN(get_process_bundle_descriptor_request__free_unpacked)(q, NULL);
}

static void on_instruction_response(rig_call *c, grpc_slice msg)
{
    bench_rig *r = c->rig;
    pb_Response *resp = PBN(instruction_response__unpack)(NULL, GRPC_SLICE_LENGTH(msg),
                                                          GRPC_SLICE_START_PTR(msg));
    bench_bundle *b = r->bundle;
    if (!resp) {
        if (b && !b->got_response) {
            snprintf(b->error, sizeof b->error, "the worker sent an unparsable InstructionResponse");
            b->got_response = 1;
        }
        return;
    }
    if (b && !b->got_response && !strcmp(resp->instruction_id, b->iid)) {
        b->got_response = 1;
        b->t_response = bench_now();
        if (resp->error && *resp->error)
            snprintf(b->error, sizeof b->error, "%s", resp->error);
        else if (resp->response_case !=
                 ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__RESPONSE_PROCESS_BUNDLE)
            snprintf(b->error, sizeof b->error, "the response to %s is not a ProcessBundleResponse",
                     b->iid);
        else if (resp->process_bundle)
            b->n_monitoring = resp->process_bundle->n_monitoring_infos;
    } else {
        r->stray_responses++;
    }
    PBN(instruction_response__free_unpacked)(resp, NULL);
}

static int on_data_entry(void *arg, const bench_elem_data *d)
{
    bench_rig *r = arg;
    bench_bundle *b = r->bundle;
    size_t il = strlen(b ? b->iid : "");
    if (!b || d->instruction_len != il || memcmp(d->instruction_id, b->iid, il) ||
        d->transform_len != strlen(BENCH_SINK_ID) ||
        memcmp(d->transform_id, BENCH_SINK_ID, d->transform_len)) {
        r->stray_data++;
        return 0;
    }
    if (b->got_sink_last) {
        r->stray_data++;    /* data after is_last */
        return 0;
    }
    if (d->data_len)
        bench_walker_feed(&b->out, d->data, d->data_len);
    if (d->is_last) {
        b->got_sink_last = 1;
        b->t_sink_last = bench_now();
    }
    return 0;
}

static void on_data(rig_call *c, grpc_slice msg)
{
    bench_rig *r = c->rig;
    if (r->bundle)
        r->bundle->out_msgs++;
    if (bench_elements_each(GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), on_data_entry, r) < 0) {
        if (r->bundle && !r->bundle->error[0])
            snprintf(r->bundle->error, sizeof r->bundle->error,
                     "the worker sent a malformed Elements message (%zu bytes)",
                     (size_t)GRPC_SLICE_LENGTH(msg));
        r->stray_data++;
    }
}

static void on_log(rig_call *c, grpc_slice msg)
{
    bench_rig *r = c->rig;
    pb_LogList *l = (pb_LogList *)protobuf_c_message_unpack(&PBN(log_entry__list__descriptor), NULL,
                                                            GRPC_SLICE_LENGTH(msg), GRPC_SLICE_START_PTR(msg));
    if (!l)
        return;
    for (size_t i = 0; i < l->n_log_entries; i++) {
        const Org__Apache__Beam__Model__FnExecution__V1__LogEntry *e = l->log_entries[i];
        r->log_entries++;
        if ((int)e->severity >= 6) {
            r->log_errors++;
            snprintf(r->last_log_error, sizeof r->last_log_error, "%s", e->message ? e->message : "");
        }
        if (r->verbose)
            fprintf(stderr, "  worker log [%d] %s\n", (int)e->severity, e->message ? e->message : "");
    }
    protobuf_c_message_free_unpacked(&l->base, NULL);
}


void rig_on_message(rig_call *c, grpc_slice msg)
{
    switch (c->kind) {
    case K_PROVISION: on_provision(c, msg); break;
    case K_DESCRIPTOR: on_descriptor_request(c, msg); break;
    case K_CONTROL: on_instruction_response(c, msg); break;
    case K_DATA: on_data(c, msg); break;
    case K_LOGGING: on_log(c, msg); break;
    default: break;
    }
}

static grpc_byte_buffer *frame(const char *iid, grpc_slice body, int last_entry)
{
    uint8_t hdr[2 * BENCH_ELEM_HEADER_MAX];
    grpc_slice parts[3];
    size_t n = 0, k = 0;
    if (GRPC_SLICE_LENGTH(body)) {
        k = bench_elements_data_header(hdr, iid, BENCH_SOURCE_ID, GRPC_SLICE_LENGTH(body));
        parts[n++] = grpc_slice_from_copied_buffer((const char *)hdr, k);
        parts[n++] = body;
    } else {
        grpc_slice_unref(body);
    }
    if (last_entry) {
        size_t l = bench_elements_last_entry(hdr + k, iid, BENCH_SOURCE_ID);
        parts[n++] = grpc_slice_from_copied_buffer((const char *)hdr + k, l);
    }
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(parts, n);   /* takes its own refs */
    for (size_t i = 0; i < n; i++)
        grpc_slice_unref(parts[i]);
    return bb;
}

void rig_feed_data(bench_rig *r)
{
    rig_call *c = r->data;
    bench_bundle *b = r->bundle;
    if (!c || !b || c->dead || c->send_active || c->q_head || r->last_queued)
        return;
    double now = bench_now();
    grpc_slice body;
    uint64_t n = 0;
    double wake = 0;
    int rc = b->src.next(b->src.self, now, &body, &n, &wake);
    if (rc > 0) {
        b->sent_records += n;
        b->sent_bytes += GRPC_SLICE_LENGTH(body);
        b->sent_msgs++;
        r->src_wake = 0;
        rig_call_enqueue(c, frame(b->iid, body, 0));
    } else if (rc == 0) {
        r->src_wake = wake > now ? wake : now + 1e-4;
    } else {
        r->last_queued = 1;
        r->src_wake = 0;
        b->t_last_sent = bench_now();
        rig_call_enqueue(c, frame(b->iid, grpc_empty_slice(), 1));
    }
}
