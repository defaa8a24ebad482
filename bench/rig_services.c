/* bench/rig_services.c — what the rig serves, message by message
 * (rig_internal.h): provisioning (the rig's own URL for control and
 * logging), GetProcessBundleDescriptor from the descriptors it was given,
 * the worker's instruction responses matched to the tracked bundles by
 * instruction id (with the engine counters of their metrics), output Data
 * entries counted on their bundle's walker (anything addressed elsewhere,
 * or after is_last, is stray), log entries counted by severity; and the
 * data stream's feeding: a running bundle's source is asked for the next
 * message only when the stream has nothing in flight, so the next 1 MB is
 * built only when it can be sent, then is_last closes the input; running
 * bundles take turns, one message each.
 */
#include "bench/rig_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/descriptor.h"
#include "bench/elements.h"

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

/* Adds the user counters this rig knows (sum_int64, varint payload) to c. */
static void read_counters(const pb_Response *resp, bench_counters *c)
{
    static const char *const names[] = {"recordsIn", "recordsOut", "retries", "timeouts", "failures",
                                        "emptyResults"};
    int64_t *slots[] = {&c->records_in, &c->records_out, &c->retries, &c->timeouts, &c->failures,
                        &c->empty_results};
    const Org__Apache__Beam__Model__FnExecution__V1__ProcessBundleResponse *pb = resp->process_bundle;
    for (size_t i = 0; pb && i < pb->n_monitoring_infos; i++) {
        const Org__Apache__Beam__Model__Pipeline__V1__MonitoringInfo *mi = pb->monitoring_infos[i];
        if (!mi->urn || strcmp(mi->urn, "beam:metric:user:sum_int64:v1"))
            continue;
        const char *name = NULL;
        for (size_t l = 0; l < mi->n_labels; l++)
            if (!strcmp(mi->labels[l]->key, "NAME"))
                name = mi->labels[l]->value;
        uint64_t v = 0;
        unsigned shift = 0;
        for (size_t k = 0; k < mi->payload.len && shift < 64; k++, shift += 7) {
            v |= (uint64_t)(mi->payload.data[k] & 0x7f) << shift;
            if (!(mi->payload.data[k] & 0x80))
                break;
        }
        for (size_t k = 0; name && k < sizeof names / sizeof names[0]; k++)
            if (!strcmp(name, names[k])) {
                *slots[k] += (int64_t)v;
                c->found++;
            }
    }
}

static void on_instruction_response(rig_call *c, grpc_slice msg)
{
    bench_rig *r = c->rig;
    pb_Response *resp = PBN(instruction_response__unpack)(NULL, GRPC_SLICE_LENGTH(msg),
                                                          GRPC_SLICE_START_PTR(msg));
    if (!resp) {
        for (int i = 0; i < r->n_bundles; i++) {
            bench_bundle *b = r->bundles[i];
            if (!b->got_response) {
                snprintf(b->error, sizeof b->error, "the worker sent an unparsable InstructionResponse");
                b->got_response = 1;
            }
        }
        return;
    }
    bench_bundle *b = rig_find_bundle(r, resp->instruction_id, strlen(resp->instruction_id));
    if (b && !b->got_response) {
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
        if (b->counters && !b->error[0])
            read_counters(resp, b->counters);
    } else {
        r->stray_responses++;
    }
    PBN(instruction_response__free_unpacked)(resp, NULL);
}

static int on_data_entry(void *arg, const bench_elem_data *d)
{
    bench_rig *r = arg;
    bench_bundle *b = rig_find_bundle(r, d->instruction_id, d->instruction_len);
    if (!b || d->transform_len != strlen(BENCH_SINK_ID) ||
        memcmp(d->transform_id, BENCH_SINK_ID, d->transform_len)) {
        r->stray_data++;
        return 0;
    }
    if (b->got_sink_last) {
        r->stray_data++;    /* data after is_last */
        return 0;
    }
    if (b->out_msg_seq != r->data_msg_seq) {
        b->out_msg_seq = r->data_msg_seq;
        b->out_msgs++;
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
    r->data_msg_seq++;
    if (bench_elements_each(GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), on_data_entry, r) < 0) {
        for (int i = 0; i < r->n_bundles; i++) {
            bench_bundle *b = r->bundles[i];
            if (!b->error[0])
                snprintf(b->error, sizeof b->error, "the worker sent a malformed Elements message (%zu bytes)",
                         (size_t)GRPC_SLICE_LENGTH(msg));
        }
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

/* Asks b's source for its next message; 1 when one (or is_last) was queued. */
static int feed_one(bench_rig *r, rig_call *c, bench_bundle *b, double now)
{
    grpc_slice body;
    uint64_t n = 0;
    double wake = 0;
    int rc = b->src.next(b->src.self, now, &body, &n, &wake);
    if (rc > 0) {
        b->sent_records += n;
        b->sent_bytes += GRPC_SLICE_LENGTH(body);
        b->sent_msgs++;
        rig_call_enqueue(c, frame(b->iid, body, 0));
        return 1;
    }
    if (rc == 0) {
        b->wake_at = wake > now ? wake : now + 1e-4;
        return 0;
    }
    b->last_queued = 1;
    b->t_last_sent = bench_now();
    rig_call_enqueue(c, frame(b->iid, grpc_empty_slice(), 1));
    return 1;
}

void rig_feed_data(bench_rig *r)
{
    rig_call *c = r->data;
    if (!c || c->dead || c->send_active || c->q_head || r->n_bundles == 0)
        return;
    double now = bench_now();
    r->src_wake = 0;
    for (int k = 0; k < r->n_bundles; k++) {
        int i = (r->feed_next + k) % r->n_bundles;
        bench_bundle *b = r->bundles[i];
        if (b->last_queued || b->got_response)
            continue;
        if (b->wake_at <= now && feed_one(r, c, b, now)) {
            r->feed_next = i + 1;
            return;
        }
        if (r->src_wake == 0 || b->wake_at < r->src_wake)
            r->src_wake = b->wake_at;
    }
}
