/* scripts/bench/null_worker.c — the benchmark's ceiling: a worker that does
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
 */
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "org/apache/beam/model/fn_execution/v1/beam_fn_api.pb-c.h"
#include "org/apache/beam/model/fn_execution/v1/beam_provision_api.pb-c.h"
#include "scripts/bench/elements.h"

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

static grpc_metadata worker_md(const nw *w)
{
    grpc_metadata m;
    memset(&m, 0, sizeof m);
    m.key = grpc_slice_from_static_string("worker_id");
    m.value = grpc_slice_from_static_string(w->id);
    return m;
}

static grpc_channel *channel(const char *url)
{
    grpc_arg a = {GRPC_ARG_INTEGER, GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, {.integer = -1}};
    grpc_channel_args args = {1, &a};
    grpc_channel_credentials *c = grpc_insecure_credentials_create();
    grpc_channel *ch = grpc_channel_create(url, c, &args);
    grpc_channel_credentials_release(c);
    return ch;
}

static grpc_slice readall(grpc_byte_buffer *bb)
{
    grpc_byte_buffer_reader r;
    grpc_slice s = grpc_empty_slice();
    if (grpc_byte_buffer_reader_init(&r, bb)) {
        s = grpc_byte_buffer_reader_readall(&r);
        grpc_byte_buffer_reader_destroy(&r);
    }
    return s;
}

/* ---- streams ------------------------------------------------------------------ */

static void stream_batch(stream *s, grpc_op *ops, size_t n, tag *t)
{
    if (grpc_call_start_batch(s->call, ops, n, t, NULL) == GRPC_CALL_OK)
        s->pending++;
    else
        fprintf(stderr, "null_worker: start_batch failed\n");
}

static void stream_arm_recv(stream *s)
{
    if (s->recv_active || s->done || s->recv_paused)
        return;
    grpc_op op = {0};
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &s->recv_bb;
    s->recv_active = 1;
    stream_batch(s, &op, 1, &s->t_recv);
}

static void stream_pump(stream *s)
{
    if (s->send_active || !s->q_head || s->done)
        return;
    out_msg *m = s->q_head;
    s->q_head = m->next;
    if (!s->q_head)
        s->q_tail = NULL;
    s->q_len--;
    s->send_bb = m->bb;
    s->send_respond = m->respond_iid;
    free(m);
    grpc_op op = {0};
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = s->send_bb;
    s->send_active = 1;
    stream_batch(s, &op, 1, &s->t_send);
}

static void stream_send(stream *s, grpc_byte_buffer *bb, const char *respond_iid)
{
    out_msg *m = calloc(1, sizeof *m);
    if (!m)
        return;
    m->bb = bb;
    m->respond_iid = respond_iid ? strdup(respond_iid) : NULL;
    if (s->q_tail)
        s->q_tail->next = m;
    else
        s->q_head = m;
    s->q_tail = m;
    s->q_len++;
    stream_pump(s);
}

static void stream_open(nw *w, stream *s, grpc_channel *ch, const char *method,
                        void (*on_message)(stream *, grpc_slice))
{
    memset(s, 0, sizeof *s);
    s->w = w;
    s->on_message = on_message;
    s->t_meta = (tag){T_META, s, NULL};
    s->t_recv = (tag){T_RECV, s, NULL};
    s->t_send = (tag){T_SEND, s, NULL};
    s->t_status = (tag){T_STATUS, s, NULL};
    s->details = grpc_empty_slice();
    grpc_metadata_array_init(&s->md_in);
    grpc_metadata_array_init(&s->trailers);
    s->call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, w->cq,
                                       grpc_slice_from_static_string(method), NULL,
                                       gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    static grpc_metadata md;
    md = worker_md(w);
    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = 1;
    ops[0].data.send_initial_metadata.metadata = &md;
    ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY | GRPC_INITIAL_METADATA_WAIT_FOR_READY_EXPLICITLY_SET;
    ops[1].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[1].data.recv_initial_metadata.recv_initial_metadata = &s->md_in;
    stream_batch(s, ops, 2, &s->t_meta);
    grpc_op st = {0};
    st.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    st.data.recv_status_on_client.trailing_metadata = &s->trailers;
    st.data.recv_status_on_client.status = &s->status;
    st.data.recv_status_on_client.status_details = &s->details;
    stream_batch(s, &st, 1, &s->t_status);
    stream_arm_recv(s);
}

/* ---- control: responses ------------------------------------------------------------------ */

static void send_response(nw *w, const char *iid, const char *error)
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
    stream_send(&w->control, bb, NULL);
}

/* ---- data: the echo ------------------------------------------------------------------------- */

static bundle *find_bundle(nw *w, const char *iid, size_t il)
{
    for (bundle *b = w->bundles; b; b = b->next)
        if (strlen(b->iid) == il && !memcmp(b->iid, iid, il))
            return b;
    return NULL;
}

static void forget_bundle(nw *w, bundle *b)
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
        stream_send(&w->data, bb, NULL);
    }
    if (is_last) {
        size_t k = bench_elements_last_entry(hdr, b->iid, b->sink);
        grpc_slice s = grpc_slice_from_copied_buffer((const char *)hdr, k);
        grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
        grpc_slice_unref(s);
        stream_send(&w->data, bb, b->iid);
        forget_bundle(w, b);
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

/* The six ops of one unary call: metadata, the request, half-close, and the
 * response's metadata, message and status. */
static void unary_ops(grpc_op ops[6], grpc_metadata *md, grpc_byte_buffer *req,
                      grpc_metadata_array *md_in, grpc_byte_buffer **resp,
                      grpc_metadata_array *trailers, grpc_status_code *status, grpc_slice *details)
{
    memset(ops, 0, 6 * sizeof *ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = 1;
    ops[0].data.send_initial_metadata.metadata = md;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = req;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = md_in;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = resp;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = trailers;
    ops[5].data.recv_status_on_client.status = status;
    ops[5].data.recv_status_on_client.status_details = details;
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
    md = worker_md(w);
    grpc_op ops[6];
    unary_ops(ops, &md, bb, &u->md_in, &u->recv_bb, &u->trailers, &u->status, &u->details);
    d->fetching = 1;
    if (grpc_call_start_batch(u->call, ops, 6, &u->t, NULL) == GRPC_CALL_OK)
        w->outstanding_unary++;
    grpc_byte_buffer_destroy(bb);
}

static void on_descriptor(unary *u)
{
    nw *w = u->w;
    desc *d = find_desc(w, u->descriptor_id);
    if (d) {
        d->fetching = 0;
        grpc_slice msg = u->recv_bb ? readall(u->recv_bb) : grpc_empty_slice();
        if (u->status != GRPC_STATUS_OK || take_descriptor(w, d, msg) < 0) {
            fprintf(stderr, "null_worker: descriptor %s unusable (status %d)\n", d->id, (int)u->status);
        } else {
            if (!w->data_open) {
                w->data_ch = channel(d->data_url);
                stream_open(w, &w->data, w->data_ch, M_DATA, on_data_message);
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

static void on_control_message(stream *s, grpc_slice msg)
{
    nw *w = s->w;
    pb_Request *r = PBN(instruction_request__unpack)(NULL, GRPC_SLICE_LENGTH(msg), GRPC_SLICE_START_PTR(msg));
    if (!r)
        return;
    if (r->request_case == ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_REQUEST__REQUEST_PROCESS_BUNDLE &&
        r->process_bundle)
        on_process_bundle(w, r->instruction_id, r->process_bundle->process_bundle_descriptor_id);
    else
        send_response(w, r->instruction_id, "the null worker only runs bundles");
    PBN(instruction_request__free_unpacked)(r, NULL);
}

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
            grpc_slice msg = readall(s->recv_bb);
            grpc_byte_buffer_destroy(s->recv_bb);
            s->recv_bb = NULL;
            s->on_message(s, msg);
            grpc_slice_unref(msg);
        }
        if (s == &w->data && w->data.q_len >= QUEUE_HIGH)
            s->recv_paused = 1;
        stream_arm_recv(s);
        break;
    case T_SEND:
        s->send_active = 0;
        grpc_byte_buffer_destroy(s->send_bb);
        s->send_bb = NULL;
        if (s->send_respond) {
            if (ok)
                send_response(w, s->send_respond, NULL);
            free(s->send_respond);
            s->send_respond = NULL;
        }
        if (!ok) {
            s->done = 1;
            break;
        }
        stream_pump(s);
        if (s == &w->data && s->recv_paused && s->q_len <= QUEUE_LOW) {
            s->recv_paused = 0;
            stream_arm_recv(s);
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
    grpc_channel *ch = channel(endpoint);
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
        grpc_metadata md = worker_md(w);
        grpc_op ops[6];
        unary_ops(ops, &md, req, &md_in, &resp, &trailers, &status, &details);
        static int t;
        grpc_call_start_batch(call, ops, 6, &t, NULL);
        grpc_completion_queue_next(w->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (status == GRPC_STATUS_OK && resp) {
            grpc_slice s = readall(resp);
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

static void stream_cleanup(stream *s)
{
    while (s->q_head) {
        out_msg *m = s->q_head;
        s->q_head = m->next;
        grpc_byte_buffer_destroy(m->bb);
        free(m->respond_iid);
        free(m);
    }
    grpc_metadata_array_destroy(&s->md_in);
    grpc_metadata_array_destroy(&s->trailers);
    grpc_slice_unref(s->details);
    grpc_call_unref(s->call);
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
    w.control_ch = channel(control_url);
    stream_open(&w, &w.control, w.control_ch, M_CONTROL, on_control_message);
    while (!w.control.done || w.control.pending > 0) {
        grpc_event ev = grpc_completion_queue_next(w.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        tag *t = ev.tag;
        if (t->kind == T_UNARY)
            on_descriptor(t->u);
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
                on_descriptor(t->u);
            else
                on_stream_event(t->s, t->kind, ev.success);
        }
        stream_cleanup(&w.data);
        grpc_channel_destroy(w.data_ch);
    }
    stream_cleanup(&w.control);
    grpc_channel_destroy(w.control_ch);
    grpc_completion_queue_shutdown(w.cq);
    while (grpc_completion_queue_next(w.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(w.cq);
    while (w.bundles)
        forget_bundle(&w, w.bundles);
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
