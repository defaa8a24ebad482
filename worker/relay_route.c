/* worker/relay_route.c — native, relayed or mixed; the relayed copy (see
 * relay_route.h). */
#include "worker/relay_route.h"

#include <stdlib.h>
#include <string.h>

#include "codecs/pb_nesting.h"
#include "codecs/pickle_payload.h"
#include "worker/table_plan.h"

#define URN_SOURCE "beam:runner:source:v1"
#define URN_SINK "beam:runner:sink:v1"
#define URN_PARDO "beam:transform:pardo:v1"
#define URN_STATELESS "flink:transform:ds:stateless_function:v1"
#define FT_REVISE_OUTPUT 100

enum { KIND_NONE, KIND_FNWORKER, KIND_PYTHON, KIND_MIXED };

static const char *spec_urn(const pb_PTransform *t)
{
    return t && t->spec && t->spec->urn ? t->spec->urn : "";
}

/* Whether the pickle p[0..n) is a fnworker OperationSpec. */
static int is_operation_pickle(const uint8_t *p, size_t n)
{
    uint8_t *scratch = malloc(n ? n : 1);
    if (!scratch)
        return 1; /* cannot tell: leave it to planning, which says so */
    size_t len;
    fnw_error err;
    int ok = fnw_pickle_payload_read(p, n, scratch, &len, &err) == 0;
    free(scratch);
    return ok;
}

/* Counts the fnworker and Python functions of a Table function and of the
 * functions it calls for its arguments. */
static void count_udf(const pb_UDF *u, int depth, int *ops, int *pys)
{
    if (depth > 64)
        return; /* planning refuses it, saying so */
    int pickled = fnw_pickle_payload_is_pickle(u->payload.data, u->payload.len);
    if (!pickled || is_operation_pickle(u->payload.data, u->payload.len))
        (*ops)++;
    else
        (*pys)++;
    for (size_t j = 0; j < u->n_inputs; j++)
        if (u->inputs[j]->input_case == ORG__APACHE__FLINK__FN_EXECUTION__V1__INPUT__INPUT_UDF &&
            u->inputs[j]->udf)
            count_udf(u->inputs[j]->udf, depth + 1, ops, pys);
}

/* A Table transform (scalar or table functions): all fnworker operations,
 * all Python, or both in one projection. */
static int table_kind(const pb_PTransform *t)
{
    fnw_error err;
    if (fnw_pb_nesting_check(&PBF(user_defined_functions__descriptor), t->spec->payload.data,
                             t->spec->payload.len, &err) < 0)
        return KIND_NONE;
    pb_UDFs *f = PBF(user_defined_functions__unpack)(NULL, t->spec->payload.len, t->spec->payload.data);
    if (!f)
        return KIND_NONE;
    int ops = 0, pys = 0;
    for (size_t i = 0; i < f->n_udfs; i++)
        count_udf(f->udfs[i], 0, &ops, &pys);
    PBF(user_defined_functions__free_unpacked)(f, NULL);
    return ops && pys ? KIND_MIXED : ops ? KIND_FNWORKER : pys ? KIND_PYTHON : KIND_NONE;
}

/* What kind of function transform t is (KIND_NONE: not a function, or a
 * REVISE_OUTPUT, or unreadable: planning reports those). */
static int function_kind(const pb_PTransform *t)
{
    if (fnw_table_plan_is_table_urn(spec_urn(t)))
        return table_kind(t);
    if (strcmp(spec_urn(t), URN_PARDO))
        return KIND_NONE;
    pb_ParDoPayload *pd = PBP(par_do_payload__unpack)(NULL, t->spec->payload.len, t->spec->payload.data);
    if (!pd || !pd->do_fn) {
        if (pd)
            PBP(par_do_payload__free_unpacked)(pd, NULL);
        return KIND_NONE;
    }
    int kind = KIND_NONE;
    fnw_error err;
    if (strcmp(pd->do_fn->urn, URN_STATELESS)) {
        kind = KIND_PYTHON; /* keyed functions, and any other do_fn: PyFlink's */
    } else if (fnw_pb_nesting_check(&PBF(user_defined_data_stream_function__descriptor),
                                    pd->do_fn->payload.data, pd->do_fn->payload.len, &err) == 0) {
        pb_UDSF *f = PBF(user_defined_data_stream_function__unpack)(NULL, pd->do_fn->payload.len,
                                                                    pd->do_fn->payload.data);
        if (f && f->function_type != FT_REVISE_OUTPUT) {
            int pickled = fnw_pickle_payload_is_pickle(f->payload.data, f->payload.len);
            kind = !pickled || is_operation_pickle(f->payload.data, f->payload.len) ? KIND_FNWORKER
                                                                                    : KIND_PYTHON;
        }
        if (f)
            PBF(user_defined_data_stream_function__free_unpacked)(f, NULL);
    }
    PBP(par_do_payload__free_unpacked)(pd, NULL);
    return kind;
}

fnw_route fnw_relay_route_classify(const pb_ProcessBundleDescriptor *d, fnw_error *err)
{
    const char *op = NULL, *py = NULL;
    for (size_t i = 0; i < d->n_transforms; i++) {
        int kind = function_kind(d->transforms[i]->value);
        if (kind == KIND_MIXED) {
            fnw_error_set(err,
                          "descriptor '%s', transform '%s': one SQL projection (or WHERE clause) calls both "
                          "fnworker functions and Python functions; Flink runs them as one Python operator, "
                          "which fnworker cannot split (its relay runs whole operators in PyFlink's worker). "
                          "Flink merges query blocks into one such operator, so on PyFlink 2.x build the fnworker "
                          "function with fnworker.udf(..., jvm_async=True): Flink then plans it into an operator "
                          "of its own (see docs/pyflink.md, \"SQL and the Table API\")",
                          d->id, d->transforms[i]->key);
            return FNW_ROUTE_MIXED;
        }
        if (kind == KIND_FNWORKER && !op)
            op = d->transforms[i]->key;
        else if (kind == KIND_PYTHON && !py)
            py = d->transforms[i]->key;
    }
    if (!py)
        return FNW_ROUTE_NATIVE;
    if (!op)
        return FNW_ROUTE_RELAYED;
    fnw_error_set(err,
                  "descriptor '%s' fuses a fnworker operation (transform '%s') with a Python function "
                  "(transform '%s'): Flink fused them into one Python operator "
                  "(PythonOperatorChainingOptimizer). Build the job with fnworker's Python package, whose "
                  "helpers keep them apart (see docs/pyflink.md, \"Mixed jobs\"), or call start_new_chain() "
                  "on the operator after the fnworker operation",
                  d->id, op, py);
    return FNW_ROUTE_MIXED;
}

/* ---- the relayed copy ------------------------------------------------------------ */

static int set_url(pb_ApiServiceDescriptor *a, const char *url)
{
    char *copy = strdup(url);
    if (!copy)
        return -1;
    /* protobuf-c's default allocator is malloc, but an unset url is its
     * static empty string, which must not be freed */
    if (a->url != protobuf_c_empty_string)
        free(a->url);
    a->url = copy;
    return 0;
}

/* Points the RemoteGrpcPort in t's payload at url. */
static int rewrite_port(pb_PTransform *t, const char *id, const char *url, fnw_error *err)
{
    pb_RemoteGrpcPort *port = PB(remote_grpc_port__unpack)(NULL, t->spec->payload.len, t->spec->payload.data);
    if (!port || !port->api_service_descriptor) {
        if (port)
            PB(remote_grpc_port__free_unpacked)(port, NULL);
        return fnw_error_set(err, "transform '%s': payload is not a RemoteGrpcPort with an endpoint", id);
    }
    int rc = -1;
    if (set_url(port->api_service_descriptor, url) == 0) {
        size_t n = PB(remote_grpc_port__get_packed_size)(port);
        uint8_t *p = malloc(n ? n : 1);
        if (p) {
            PB(remote_grpc_port__pack)(port, p);
            free(t->spec->payload.data);
            t->spec->payload.data = p;
            t->spec->payload.len = n;
            rc = 0;
        }
    }
    PB(remote_grpc_port__free_unpacked)(port, NULL);
    return rc < 0 ? fnw_error_set(err, "out of memory rewriting transform '%s'", id) : 0;
}

static int rewrite(pb_ProcessBundleDescriptor *m, const char *url, fnw_error *err)
{
    for (size_t i = 0; i < m->n_transforms; i++) {
        pb_PTransform *t = m->transforms[i]->value;
        const char *urn = spec_urn(t);
        if (!strcmp(urn, URN_SOURCE) && rewrite_port(t, m->transforms[i]->key, url, err) < 0)
            return -1;
    }
    if (m->timer_api_service_descriptor && set_url(m->timer_api_service_descriptor, url) < 0)
        return fnw_error_set(err, "out of memory");
    return 0;
}

int fnw_relay_route_rewrite(const pb_ProcessBundleDescriptor *d, const char *url, grpc_slice *out,
                            fnw_error *err)
{
    /* a mutable copy: protobuf-c keeps the fields this subset does not name
     * (unknown fields) and packs them back */
    size_t n = PB(process_bundle_descriptor__get_packed_size)(d);
    uint8_t *p = malloc(n ? n : 1);
    if (!p)
        return fnw_error_set(err, "out of memory");
    PB(process_bundle_descriptor__pack)(d, p);
    pb_ProcessBundleDescriptor *m = PB(process_bundle_descriptor__unpack)(NULL, n, p);
    free(p);
    if (!m)
        return fnw_error_set(err, "out of memory copying descriptor '%s'", d->id);
    int rc = rewrite(m, url, err);
    if (rc == 0) {
        size_t len = PB(process_bundle_descriptor__get_packed_size)(m);
        *out = grpc_slice_malloc(len);
        PB(process_bundle_descriptor__pack)(m, GRPC_SLICE_START_PTR(*out));
    }
    PB(process_bundle_descriptor__free_unpacked)(m, NULL);
    return rc;
}
