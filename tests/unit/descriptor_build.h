/* tests/unit/descriptor_build.h — builds ProcessBundleDescriptors the way
 * Flink lays them out (read -> functions -> revise -> write, with Flink's
 * coders), for tests of the plan and the descriptor cache. Everything a
 * builder allocates is freed by builder_free. */
#ifndef FNW_DESCRIPTOR_BUILD_H
#define FNW_DESCRIPTOR_BUILD_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ops/builtins.h"
#include "base/pb.h"
#include "worker/plan.h"

/* ---- a tiny descriptor builder over packed protobuf-c messages ------------ */

typedef Org__Apache__Beam__Model__FnExecution__V1__ProcessBundleDescriptor__TransformsEntry TEntry;
typedef Org__Apache__Beam__Model__FnExecution__V1__ProcessBundleDescriptor__CodersEntry CEntry;
typedef Org__Apache__Beam__Model__Pipeline__V1__PTransform__InputsEntry IOEntry;

typedef struct builder {
    pb_ProcessBundleDescriptor d;
    TEntry *t[32];
    CEntry *c[32];
    void *mem[512];
    int nmem;
} builder;

static inline void *keep(builder *b, void *p)
{
    b->mem[b->nmem++] = p;
    return p;
}

static inline ProtobufCBinaryData pack(builder *b, const ProtobufCMessage *m)
{
    ProtobufCBinaryData out;
    out.len = protobuf_c_message_get_packed_size(m);
    out.data = keep(b, malloc(out.len ? out.len : 1));
    protobuf_c_message_pack(m, out.data);
    return out;
}

static inline pb_FunctionSpec *fspec(builder *b, const char *urn, ProtobufCBinaryData payload)
{
    pb_FunctionSpec *f = keep(b, malloc(sizeof *f));
    pb_FunctionSpec init = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__FUNCTION_SPEC__INIT;
    *f = init;
    f->urn = (char *)urn;
    f->payload = payload;
    return f;
}

static inline IOEntry **io(builder *b, const char *key, const char *value)
{
    IOEntry *e = keep(b, malloc(sizeof *e));
    IOEntry init = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__PTRANSFORM__INPUTS_ENTRY__INIT;
    *e = init;
    e->key = (char *)key;
    e->value = (char *)value;
    IOEntry **v = keep(b, malloc(sizeof *v));
    v[0] = e;
    return v;
}

static inline pb_PTransform *add_transform(builder *b, const char *id, pb_FunctionSpec *spec,
                                    const char *in, const char *out)
{
    pb_PTransform *t = keep(b, malloc(sizeof *t));
    pb_PTransform init = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__PTRANSFORM__INIT;
    *t = init;
    t->spec = spec;
    if (in) {
        t->n_inputs = 1;
        t->inputs = (void *)io(b, "input", in);
    }
    if (out) {
        t->n_outputs = 1;
        t->outputs = (void *)io(b, "output", out);
    }
    TEntry *e = keep(b, malloc(sizeof *e));
    TEntry einit = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROCESS_BUNDLE_DESCRIPTOR__TRANSFORMS_ENTRY__INIT;
    *e = einit;
    e->key = (char *)id;
    e->value = t;
    b->t[b->d.n_transforms++] = e;
    return t;
}

static inline void add_coder(builder *b, const char *id, pb_FunctionSpec *spec, const char *component)
{
    pb_Coder *c = keep(b, malloc(sizeof *c));
    pb_Coder init = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__CODER__INIT;
    *c = init;
    c->spec = spec;
    if (component) {
        c->n_component_coder_ids = 1;
        char **ids = keep(b, malloc(sizeof *ids));
        ids[0] = (char *)component;
        c->component_coder_ids = ids;
    }
    CEntry *e = keep(b, malloc(sizeof *e));
    CEntry einit = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROCESS_BUNDLE_DESCRIPTOR__CODERS_ENTRY__INIT;
    *e = einit;
    e->key = (char *)id;
    e->value = c;
    b->c[b->d.n_coders++] = e;
}

static inline pb_TypeInfo *ti(builder *b, int name)
{
    pb_TypeInfo *t = keep(b, malloc(sizeof *t));
    pb_TypeInfo init = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__INIT;
    *t = init;
    t->type_name = name;
    return t;
}

typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo RowTI;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo__RowTypeInfo__Field FieldTI;

static inline pb_TypeInfo *row_ti(builder *b, int n, pb_TypeInfo **fields)
{
    pb_TypeInfo *t = ti(b, 0);
    RowTI *r = keep(b, malloc(sizeof *r));
    RowTI rinit = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__ROW_TYPE_INFO__INIT;
    *r = rinit;
    r->n_fields = (size_t)n;
    r->fields = keep(b, malloc((size_t)n * sizeof *r->fields));
    for (int i = 0; i < n; i++) {
        FieldTI *f = keep(b, malloc(sizeof *f));
        FieldTI finit = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__ROW_TYPE_INFO__FIELD__INIT;
        *f = finit;
        static const char *const names[] = {"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};
        f->field_name = (char *)names[i % 8];
        f->field_type = fields[i];
        r->fields[i] = f;
    }
    t->type_info_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_ROW_TYPE_INFO;
    t->row_type_info = r;
    return t;
}

static inline void add_flink_coder(builder *b, const char *id, pb_TypeInfo *raw)
{
    Org__Apache__Flink__FnExecution__V1__CoderInfoDescriptor__RawType rt =
        ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__RAW_TYPE__INIT;
    rt.type_info = raw;
    pb_CoderInfoDescriptor ci = ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__INIT;
    ci.data_type_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__DATA_TYPE_RAW_TYPE;
    ci.raw_type = &rt;
    ci.mode = ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__MODE__MULTIPLE;
    add_coder(b, id, fspec(b, "flink:coder:v1", pack(b, &ci.base)), NULL);
}

static inline ProtobufCBinaryData none(void)
{
    ProtobufCBinaryData e = {0, NULL};
    return e;
}

static inline pb_FunctionSpec *grpc_port(builder *b, const char *urn, const char *coder)
{
    pb_ApiServiceDescriptor api = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    api.url = "localhost:7777";
    pb_RemoteGrpcPort port = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__REMOTE_GRPC_PORT__INIT;
    port.api_service_descriptor = &api;
    port.coder_id = (char *)coder;
    return fspec(b, urn, pack(b, &port.base));
}

static inline pb_FunctionSpec *pardo_spec(builder *b, const char *do_fn_urn, int function_type,
                                   const pb_OperationSpec *os, int with_timer)
{
    pb_UDSF f = ORG__APACHE__FLINK__FN_EXECUTION__V1__USER_DEFINED_DATA_STREAM_FUNCTION__INIT;
    f.function_type = function_type;
    if (os)
        f.payload = pack(b, &os->base);
    pb_ParDoPayload pd = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__PAR_DO_PAYLOAD__INIT;
    pd.do_fn = fspec(b, do_fn_urn, pack(b, &f.base));
    Org__Apache__Beam__Model__Pipeline__V1__ParDoPayload__TimerFamilySpecsEntry te =
        ORG__APACHE__BEAM__MODEL__PIPELINE__V1__PAR_DO_PAYLOAD__TIMER_FAMILY_SPECS_ENTRY__INIT;
    Org__Apache__Beam__Model__Pipeline__V1__ParDoPayload__TimerFamilySpecsEntry *tep = &te;
    Org__Apache__Beam__Model__Pipeline__V1__TimerFamilySpec ts =
        ORG__APACHE__BEAM__MODEL__PIPELINE__V1__TIMER_FAMILY_SPEC__INIT;
    if (with_timer) {
        te.key = "timer";
        te.value = &ts;
        pd.n_timer_family_specs = 1;
        pd.timer_family_specs = &tep;
    }
    return fspec(b, "beam:transform:pardo:v1", pack(b, &pd.base));
}

static inline pb_FunctionSpec *pardo(builder *b, const char *do_fn_urn, int function_type,
                              const char *operation, int with_timer)
{
    pb_OperationSpec os = FNWORKER__V1__OPERATION_SPEC__INIT;
    os.operation = (char *)operation;
    return pardo_spec(b, do_fn_urn, function_type, operation ? &os : NULL, with_timer);
}

#define STATELESS "flink:transform:ds:stateless_function:v1"

static inline void shape_init(builder *b)
{
    pb_ProcessBundleDescriptor init = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROCESS_BUNDLE_DESCRIPTOR__INIT;
    memset(b, 0, sizeof *b);
    b->d = init;
    b->d.id = "1-2";
    b->d.transforms = b->t;
    b->d.coders = b->c;
}

/* ROW<f0 STRING, f1 INT>, the data type of flink_shape */
static inline pb_TypeInfo *str_int(builder *b)
{
    pb_TypeInfo *fields[2] = {ti(b, 1), ti(b, 5)};
    return row_ti(b, 2, fields);
}

/* ROW<f0 kind> */
static inline pb_TypeInfo *row_of(builder *b, int kind)
{
    pb_TypeInfo *fields[1] = {ti(b, kind)};
    return row_ti(b, 1, fields);
}

/* Flink's layout: read -> transform-0.. -> transform-revise -> write, every
 * function identity; the operator's data types are in (input) and out
 * (output). Like Flink, every collection between functions has the input
 * coder. */
static inline void shape_typed(builder *b, int nfuncs, const char *wire_urn, pb_TypeInfo *in, pb_TypeInfo *out)
{
    pb_TypeInfo *in_fields[3] = {ti(b, 6), ti(b, 6), in};
    pb_TypeInfo *out_fields[2] = {ti(b, 6), out};
    add_flink_coder(b, "input_coder", row_ti(b, 3, in_fields));
    add_flink_coder(b, "output_coder", row_ti(b, 2, out_fields));
    add_coder(b, "window_coder", fspec(b, "beam:coder:global_window:v1", none()), NULL);
    add_coder(b, "input_coder-length_prefix0", fspec(b, "beam:coder:length_prefix:v1", none()), "input_coder");
    add_coder(b, "output_coder-length_prefix0", fspec(b, "beam:coder:length_prefix:v1", none()), "output_coder");
    add_coder(b, "fn/wire/input:0-length_prefix0", fspec(b, wire_urn, none()), "input_coder-length_prefix0");
    add_coder(b, "fn/wire/output:0-length_prefix0", fspec(b, wire_urn, none()), "output_coder-length_prefix0");
    add_transform(b, "fn/read/input:0", grpc_port(b, "beam:runner:source:v1", "fn/wire/input:0-length_prefix0"),
                  NULL, "input");
    static const char *ids[] = {"transform-0", "transform-1", "transform-2"};
    static const char *cols[] = {"collection-0", "collection-1", "collection-2"};
    for (int i = 0; i < nfuncs; i++)
        add_transform(b, ids[i], pardo(b, STATELESS, 0, "identity", 0), i ? cols[i - 1] : "input", cols[i]);
    add_transform(b, "transform-revise", pardo(b, STATELESS, 100, NULL, 0), cols[nfuncs - 1], "output");
    add_transform(b, "fn/write/output:0", grpc_port(b, "beam:runner:sink:v1", "fn/wire/output:0-length_prefix0"),
                  "output", NULL);
}

/* Flink's layout for records of type data (NULL: ROW<STRING, INT>) in and
 * out, into an initialised b. */
static inline void flink_shape_of(builder *b, int nfuncs, const char *wire_urn, pb_TypeInfo *data)
{
    if (!data)
        data = str_int(b);
    shape_typed(b, nfuncs, wire_urn, data, data);
}

/* Flink's layout with data type ROW<f0 STRING, f1 INT> in and out. */
static inline void flink_shape(builder *b, int nfuncs, const char *wire_urn)
{
    shape_init(b);
    pb_TypeInfo *data = str_int(b);
    shape_typed(b, nfuncs, wire_urn, data, data);
}

static inline void builder_free(builder *b)
{
    for (int i = 0; i < b->nmem; i++)
        free(b->mem[i]);
}

static inline pb_Coder *coder(builder *b, const char *id)
{
    for (size_t i = 0; i < b->d.n_coders; i++)
        if (!strcmp(b->c[i]->key, id))
            return b->c[i]->value;
    return NULL;
}

static inline pb_PTransform *transform(builder *b, const char *id)
{
    for (size_t i = 0; i < b->d.n_transforms; i++)
        if (!strcmp(b->t[i]->key, id))
            return b->t[i]->value;
    return NULL;
}

static inline int build(builder *b, fnw_plan **p, fnw_error *err)
{
    fnw_registry reg;
    fnw_registry_init(&reg);
    fnw_builtins_register(&reg);
    return fnw_plan_build(&b->d, &reg, p, err);
}

#endif
