/* bench/null_worker_bundles.c — what the null worker does with the
 * Fn API (null_worker_internal.h): a process_bundle request names its
 * descriptor, fetched once by GetProcessBundleDescriptor for its sink and
 * data endpoint (the Data stream opens with the first one); every Data
 * entry on the bundle's source goes back unparsed on its sink (the payload
 * slice re-used, not copied), data that comes before its descriptor is
 * held and released when it arrives, and after is_last the bundle is
 * answered with an empty ProcessBundleResponse. Other requests get an error.
 */
#include "bench/null_worker_internal.h"

#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/elements.h"

/* ---- control: responses ------------------------------------------------------------------ */

void nw_send_response(nw *w, const char *iid, const char *error)
{
    pb_Response r = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__INIT;
    pb_PBResponse pbr = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROCESS_BUNDLE_RESPONSE__INIT;
    r.instruction_id = (char *)iid;
    if (error) {
        r.error = (char *)error;
    } else {
        r.response_case = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__RESPONSE_PROCESS_BUNDLE;
        r.process_bundle = &pbr;
    }
    size_t n = PBN(instruction_response__get_packed_size)(&r);
    grpc_slice s = grpc_slice_malloc(n);
    PBN(instruction_response__pack)(&r, GRPC_SLICE_START_PTR(s));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    nw_stream_send(&w->control, bb, NULL);
}

/* ---- data: the echo ------------------------------------------------------------------------- */

static bundle *find_bundle(nw *w, const char *iid, size_t il)
{
    for (bundle *b = w->bundles; b; b = b->next)
        if (strlen(b->iid) == il && !memcmp(b->iid, iid, il))
            return b;
    return NULL;
}

void nw_forget_bundle(nw *w, bundle *b)
{
    for (bundle **pp = &w->bundles; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    free(b->iid);
    free(b->descriptor_id);
    free(b->sink);
    free(b);
}

/* Sends msg[off, off+len) back on b's sink; at is_last, the sink's is_last
 * and then (once that is written) the response. */
static void echo(nw *w, bundle *b, grpc_slice msg, size_t off, size_t len, int is_last)
{
    uint8_t hdr[BENCH_ELEM_HEADER_MAX];
    if (len) {
        size_t k = bench_elements_data_header(hdr, b->iid, b->sink, len);
        grpc_slice parts[2] = {grpc_slice_from_copied_buffer((const char *)hdr, k),
                               grpc_slice_sub(msg, off, off + len)};
        grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(parts, 2);
        grpc_slice_unref(parts[0]);
        grpc_slice_unref(parts[1]);
        nw_stream_send(&w->data, bb, NULL);
    }
    if (is_last) {
        size_t k = bench_elements_last_entry(hdr, b->iid, b->sink);
        grpc_slice s = grpc_slice_from_copied_buffer((const char *)hdr, k);
        grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
        grpc_slice_unref(s);
        nw_stream_send(&w->data, bb, b->iid);
        nw_forget_bundle(w, b);
    }
}

static void hold(nw *w, const bench_elem_data *d, grpc_slice msg)
{
    bundle *b = calloc(1, sizeof *b);
    held *h = calloc(1, sizeof *h);
    if (!b || !h) {
        free(b);
        free(h);
        return;
    }
    b->iid = strndup(d->instruction_id, d->instruction_len);
    b->next = w->bundles;
    w->bundles = b;
    h->msg = grpc_slice_ref(msg);
    h->off = (size_t)(d->data - GRPC_SLICE_START_PTR(msg));
    h->len = d->data_len;
    h->is_last = d->is_last;
    b->early = b->early_tail = h;
}

typedef struct data_ctx {
    nw *w;
    grpc_slice msg;
} data_ctx;

static int on_data_entry(void *arg, const bench_elem_data *d)
{
    data_ctx *c = arg;
    bundle *b = find_bundle(c->w, d->instruction_id, d->instruction_len);
    if (!b) {
        hold(c->w, d, c->msg);
        return 0;
    }
    if (!b->sink) {
        held *h = calloc(1, sizeof *h);
        if (!h)
            return 0;
        h->msg = grpc_slice_ref(c->msg);
        h->off = (size_t)(d->data - GRPC_SLICE_START_PTR(c->msg));
        h->len = d->data_len;
        h->is_last = d->is_last;
        if (b->early_tail)
            b->early_tail->next = h;
        else
            b->early = h;
        b->early_tail = h;
        return 0;
    }
    echo(c->w, b, c->msg, d->data ? (size_t)(d->data - GRPC_SLICE_START_PTR(c->msg)) : 0, d->data_len,
         d->is_last);
    return 0;
}

static void on_data_message(stream *s, grpc_slice msg)
{
    data_ctx c = {s->w, msg};
    if (bench_elements_each(GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg), on_data_entry, &c) < 0)
        fprintf(stderr, "null_worker: malformed Elements message\n");
}

/* The bundle's sink is known: replay what came early. */
static void release_early(nw *w, bundle *b)
{
    while (b->early) {
        held *h = b->early;
        b->early = h->next;
        int last = h->is_last;
        echo(w, b, h->msg, h->off, h->len, last);
        grpc_slice_unref(h->msg);
        free(h);
        if (last)
            return;   /* echo() freed b */
    }
    b->early_tail = NULL;
}

/* ---- descriptors --------------------------------------------------------------------------- */

static desc *find_desc(nw *w, const char *id)
{
    for (desc *d = w->descs; d; d = d->next)
        if (!strcmp(d->id, id))
            return d;
    return NULL;
}

static void bind_bundles(nw *w, desc *d)
{
    bundle *b = w->bundles;
    while (b) {
        bundle *next = b->next;
        if (!b->sink && b->descriptor_id && !strcmp(b->descriptor_id, d->id)) {
            b->sink = strdup(d->sink);
            release_early(w, b);
        }
        b = next;
    }
}

static int take_descriptor(nw *w, desc *d, grpc_slice msg)
{
    pb_Descriptor *pd = PBN(process_bundle_descriptor__unpack)(NULL, GRPC_SLICE_LENGTH(msg),
                                                                GRPC_SLICE_START_PTR(msg));
    if (!pd)
        return -1;
    for (size_t i = 0; i < pd->n_transforms; i++) {
        const Org__Apache__Beam__Model__Pipeline__V1__PTransform *t = pd->transforms[i]->value;
        const char *urn = t && t->spec ? t->spec->urn : "";
        if (!strcmp(urn, "beam:runner:sink:v1") && !d->sink)
            d->sink = strdup(pd->transforms[i]->key);
        if (!strcmp(urn, "beam:runner:source:v1") && !d->data_url) {
            pb_Port *p = PBN(remote_grpc_port__unpack)(NULL, t->spec->payload.len, t->spec->payload.data);
            if (p && p->api_service_descriptor)
                d->data_url = strdup(p->api_service_descriptor->url);
            if (p)
                PBN(remote_grpc_port__free_unpacked)(p, NULL);
        }
    }
    PBN(process_bundle_descriptor__free_unpacked)(pd, NULL);
    return d->sink && d->data_url ? 0 : -1;
}


static void fetch_descriptor(nw *w, desc *d)
{
    unary *u = calloc(1, sizeof *u);
    if (!u)
        return;
    u->w = w;
    u->t = (tag){T_UNARY, NULL, u};
    u->details = grpc_empty_slice();
    u->descriptor_id = strdup(d->id);
    grpc_metadata_array_init(&u->md_in);
    grpc_metadata_array_init(&u->trailers);
    u->call = grpc_channel_create_call(w->control_ch, NULL, GRPC_PROPAGATE_DEFAULTS, w->cq,
                                       grpc_slice_from_static_string(M_DESCRIPTOR), NULL,
                                       gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    Org__Apache__Beam__Model__FnExecution__V1__GetProcessBundleDescriptorRequest q =
        ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__GET_PROCESS_BUNDLE_DESCRIPTOR_REQUEST__INIT;
    q.process_bundle_descriptor_id = d->id;
    size_t n = PBN(get_process_bundle_descriptor_request__get_packed_size)(&q);
    grpc_slice s = grpc_slice_malloc(n);
    PBN(get_process_bundle_descriptor_request__pack)(&q, GRPC_SLICE_START_PTR(s));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    static grpc_metadata md;
    md = nw_worker_md(w);
    grpc_op ops[6];
    nw_unary_ops(ops, &md, bb, &u->md_in, &u->recv_bb, &u->trailers, &u->status, &u->details);
    d->fetching = 1;
    if (grpc_call_start_batch(u->call, ops, 6, &u->t, NULL) == GRPC_CALL_OK)
        w->outstanding_unary++;
    grpc_byte_buffer_destroy(bb);
}

void nw_on_descriptor(unary *u)
{
    nw *w = u->w;
    desc *d = find_desc(w, u->descriptor_id);
    if (d) {
        d->fetching = 0;
        grpc_slice msg = u->recv_bb ? nw_readall(u->recv_bb) : grpc_empty_slice();
        if (u->status != GRPC_STATUS_OK || take_descriptor(w, d, msg) < 0) {
            fprintf(stderr, "null_worker: descriptor %s unusable (status %d)\n", d->id, (int)u->status);
        } else {
            if (!w->data_open) {
                w->data_ch = nw_channel(d->data_url);
                nw_stream_start(w, &w->data, w->data_ch, M_DATA, on_data_message);
                w->data_open = 1;
            }
            bind_bundles(w, d);
        }
        grpc_slice_unref(msg);
    }
    if (u->recv_bb)
        grpc_byte_buffer_destroy(u->recv_bb);
    grpc_metadata_array_destroy(&u->md_in);
    grpc_metadata_array_destroy(&u->trailers);
    grpc_slice_unref(u->details);
    grpc_call_unref(u->call);
    free(u->descriptor_id);
    free(u);
    w->outstanding_unary--;
}

/* ---- control: requests ------------------------------------------------------------------ */

static void on_process_bundle(nw *w, const char *iid, const char *descriptor_id)
{
    bundle *b = find_bundle(w, iid, strlen(iid));
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b)
            return;
        b->iid = strdup(iid);
        b->next = w->bundles;
        w->bundles = b;
    }
    b->descriptor_id = strdup(descriptor_id);
    desc *d = find_desc(w, descriptor_id);
    if (!d) {
        d = calloc(1, sizeof *d);
        if (!d)
            return;
        d->id = strdup(descriptor_id);
        d->next = w->descs;
        w->descs = d;
        fetch_descriptor(w, d);
        return;
    }
    if (d->sink) {
        b->sink = strdup(d->sink);
        release_early(w, b);
    }
}

void nw_on_control_message(stream *s, grpc_slice msg)
{
    nw *w = s->w;
    pb_Request *r = PBN(instruction_request__unpack)(NULL, GRPC_SLICE_LENGTH(msg), GRPC_SLICE_START_PTR(msg));
    if (!r)
        return;
    if (r->request_case == ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_REQUEST__REQUEST_PROCESS_BUNDLE &&
        r->process_bundle)
        on_process_bundle(w, r->instruction_id, r->process_bundle->process_bundle_descriptor_id);
    else
        nw_send_response(w, r->instruction_id, "the null worker only runs bundles");
    PBN(instruction_request__free_unpacked)(r, NULL);
}
