/* tests/unit/table_build.h — builds ProcessBundleDescriptors in Flink's
 * Table layout (as Flink 2.3's BeamTablePythonFunctionRunner sends them,
 * decoded): fn/read/input:0 (beam:runner:source:v1) -> "transform" (a
 * scalar/async scalar/table function URN, payload UserDefinedFunctions)
 * -> fn/write/:0 (beam:runner:sink:v1); coders flink:coder:v1 holding a
 * CoderInfoDescriptor with flatten_row_type (input MULTIPLE, output SINGLE;
 * table functions separated with end messages), each wrapped in a
 * length_prefix inside a param_windowed_value wire coder. Functions are
 * OperationSpecs (plain bytes); arguments are input offsets, constants
 * (type byte + razorvine pickle) or nested functions. Memory is the
 * builder's (descriptor_build.h), freed by builder_free. */
#ifndef FNW_TABLE_BUILD_H
#define FNW_TABLE_BUILD_H

#include "tests/unit/descriptor_build.h"

typedef Org__Apache__Flink__FnExecution__V1__Schema__Field SField;
typedef Org__Apache__Flink__FnExecution__V1__Schema__FieldType SFType;
#define STN(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__SCHEMA__TYPE_NAME__##x
#define CI_MODE(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__MODE__##x
#define URN_SCALAR "flink:transform:scalar_function:v1"
#define URN_ASYNC_SCALAR "flink:transform:async_scalar_function:v1"
#define URN_TABLE_FN "flink:transform:table_function:v1"

static inline SFType *sft(builder *b, int type_name)
{
    SFType *t = keep(b, malloc(sizeof *t));
    SFType init = ORG__APACHE__FLINK__FN_EXECUTION__V1__SCHEMA__FIELD_TYPE__INIT;
    *t = init;
    t->type_name = type_name;
    t->nullable = 1;
    return t;
}

/* A Schema of n fields named names[i] typed types[i] (STN values). */
static inline pb_Schema *tschema(builder *b, int n, const char *const *names, const int *types)
{
    pb_Schema *s = keep(b, malloc(sizeof *s));
    pb_Schema init = ORG__APACHE__FLINK__FN_EXECUTION__V1__SCHEMA__INIT;
    *s = init;
    SField **f = keep(b, malloc((size_t)(n ? n : 1) * sizeof *f));
    for (int i = 0; i < n; i++) {
        f[i] = keep(b, malloc(sizeof *f[i]));
        SField finit = ORG__APACHE__FLINK__FN_EXECUTION__V1__SCHEMA__FIELD__INIT;
        *f[i] = finit;
        f[i]->name = (char *)names[i];
        f[i]->type = sft(b, types[i]);
    }
    s->n_fields = (size_t)n;
    s->fields = f;
    return s;
}

/* A coder with two components (a param_windowed_value: value, window). */
static inline void add_coder2(builder *b, const char *id, pb_FunctionSpec *spec, const char *c0, const char *c1)
{
    add_coder(b, id, spec, c0);
    pb_Coder *c = b->c[b->d.n_coders - 1]->value;
    char **ids = keep(b, malloc(2 * sizeof *ids));
    ids[0] = (char *)c0;
    ids[1] = (char *)c1;
    c->n_component_coder_ids = 2;
    c->component_coder_ids = ids;
}

/* flink:coder:v1 with flatten_row_type{s} (arrow: an arrow_type instead). */
static inline void add_row_coder(builder *b, const char *id, pb_Schema *s, int mode, int end_message, int arrow)
{
    Org__Apache__Flink__FnExecution__V1__CoderInfoDescriptor__FlattenRowType fr =
        ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__FLATTEN_ROW_TYPE__INIT;
    Org__Apache__Flink__FnExecution__V1__CoderInfoDescriptor__ArrowType at =
        ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__ARROW_TYPE__INIT;
    fr.schema = s;
    at.schema = s;
    pb_CoderInfoDescriptor ci = ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__INIT;
    if (arrow) {
        ci.data_type_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__DATA_TYPE_ARROW_TYPE;
        ci.arrow_type = &at;
    } else {
        ci.data_type_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__DATA_TYPE_FLATTEN_ROW_TYPE;
        ci.flatten_row_type = &fr;
    }
    ci.mode = mode;
    ci.separated_with_end_message = end_message;
    add_coder(b, id, fspec(b, "flink:coder:v1", pack(b, &ci.base)), NULL);
}

/* ---- functions ------------------------------------------------------------------ */

static inline pb_UDFInput *in_offset(builder *b, int off)
{
    pb_UDFInput *i = keep(b, malloc(sizeof *i));
    pb_UDFInput init = ORG__APACHE__FLINK__FN_EXECUTION__V1__INPUT__INIT;
    *i = init;
    i->input_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__INPUT__INPUT_INPUT_OFFSET;
    i->inputoffset = off;
    return i;
}

/* A constant: type byte + pickle, n bytes. */
static inline pb_UDFInput *in_const(builder *b, const char *bytes, size_t n)
{
    pb_UDFInput *i = in_offset(b, 0);
    i->input_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__INPUT__INPUT_INPUT_CONSTANT;
    i->inputconstant.data = (uint8_t *)bytes;
    i->inputconstant.len = n;
    return i;
}
#define IN_CONST(b, lit) in_const((b), (lit), sizeof(lit) - 1)

static inline pb_UDFInput *in_udf(builder *b, pb_UDF *u)
{
    pb_UDFInput *i = in_offset(b, 0);
    i->input_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__INPUT__INPUT_UDF;
    i->udf = u;
    return i;
}

/* A function running os (plain OperationSpec bytes) on n inputs. */
static inline pb_UDF *tudf(builder *b, const pb_OperationSpec *os, int n, pb_UDFInput **inputs)
{
    pb_UDF *u = keep(b, malloc(sizeof *u));
    pb_UDF init = ORG__APACHE__FLINK__FN_EXECUTION__V1__USER_DEFINED_FUNCTION__INIT;
    *u = init;
    u->payload = pack(b, &os->base);
    pb_UDFInput **in = keep(b, malloc((size_t)(n ? n : 1) * sizeof *in));
    for (int j = 0; j < n; j++)
        in[j] = inputs[j];
    u->n_inputs = (size_t)n;
    u->inputs = in;
    return u;
}

static inline pb_UDF *tudf1(builder *b, const pb_OperationSpec *os, pb_UDFInput *a)
{
    return tudf(b, os, 1, &a);
}

static inline pb_OperationSpec tspec(const char *operation)
{
    pb_OperationSpec os = FNWORKER__V1__OPERATION_SPEC__INIT;
    os.operation = (char *)operation;
    return os;
}

/* UserDefinedFunctions of n functions, packed. */
static inline ProtobufCBinaryData tudfs(builder *b, int n, pb_UDF **u)
{
    pb_UDFs f = ORG__APACHE__FLINK__FN_EXECUTION__V1__USER_DEFINED_FUNCTIONS__INIT;
    f.n_udfs = (size_t)n;
    f.udfs = u;
    return pack(b, &f.base);
}

/* ---- the descriptor ---------------------------------------------------------------- */

/* Flink's Table layout into b (shape_init'ed first, before building the
 * functions): input rows of schema in, output rows of schema out, the
 * transform "transform" with urn and payload (UserDefinedFunctions). */
static inline void table_shape(builder *b, const char *urn, pb_Schema *in, pb_Schema *out, ProtobufCBinaryData payload)
{
    int table_fn = !strcmp(urn, URN_TABLE_FN);
    add_row_coder(b, "input_coder", in, CI_MODE(MULTIPLE), 0, 0);
    add_row_coder(b, "output_coder", out, table_fn ? CI_MODE(MULTIPLE) : CI_MODE(SINGLE), table_fn, 0);
    add_coder(b, "window_coder", fspec(b, "beam:coder:global_window:v1", none()), NULL);
    add_coder(b, "input_coder-length_prefix0", fspec(b, "beam:coder:length_prefix:v1", none()), "input_coder");
    add_coder(b, "output_coder-length_prefix0", fspec(b, "beam:coder:length_prefix:v1", none()), "output_coder");
    add_coder2(b, "fn/wire/input:0-length_prefix0", fspec(b, "beam:coder:param_windowed_value:v1", none()),
               "input_coder-length_prefix0", "window_coder");
    add_coder2(b, "fn/wire/:0-length_prefix0", fspec(b, "beam:coder:param_windowed_value:v1", none()),
               "output_coder-length_prefix0", "window_coder");
    pb_PTransform *src = add_transform(b, "fn/read/input:0",
                                       grpc_port(b, "beam:runner:source:v1", "fn/wire/input:0-length_prefix0"),
                                       NULL, "input");
    src->outputs = (void *)io(b, "input", "input");
    pb_PTransform *t = add_transform(b, "transform", fspec(b, urn, payload), "input", "");
    t->outputs = (void *)io(b, "", "");
    pb_PTransform *snk = add_transform(b, "fn/write/:0",
                                       grpc_port(b, "beam:runner:sink:v1", "fn/wire/:0-length_prefix0"), "", NULL);
    snk->inputs = (void *)io(b, "local_input", "");
}

/* The output coder, to change in place. */
static inline void table_output_coder(builder *b, pb_Schema *out, int mode, int end_message, int arrow)
{
    for (size_t i = 0; i < b->d.n_coders; i++)
        if (!strcmp(b->c[i]->key, "output_coder")) {
            size_t n = b->d.n_coders;
            add_row_coder(b, "output_coder", out, mode, end_message, arrow);
            b->c[i]->value = b->c[n]->value;
            b->d.n_coders = n;
            return;
        }
}

static inline void table_input_coder(builder *b, pb_Schema *in, int arrow)
{
    for (size_t i = 0; i < b->d.n_coders; i++)
        if (!strcmp(b->c[i]->key, "input_coder")) {
            size_t n = b->d.n_coders;
            add_row_coder(b, "input_coder", in, CI_MODE(MULTIPLE), 0, arrow);
            b->c[i]->value = b->c[n]->value;
            b->d.n_coders = n;
            return;
        }
}

#endif
