/* worker/table_plan.c — a Table operator's functions read into a
 * projection description and plan steps (see table_plan.h). */
#include "worker/table_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/arena.h"
#include "codecs/buf.h"
#include "codecs/pb_nesting.h"
#include "codecs/pickle_const.h"
#include "codecs/schema.h"
#include "codecs/ser.h"

#define DATA_TYPE(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__CODER_INFO_DESCRIPTOR__DATA_TYPE_##x
#define INPUT(x) ORG__APACHE__FLINK__FN_EXECUTION__V1__INPUT__INPUT_##x

/* Nested calls deeper than this are refused (each is a node and an engine). */
#define MAX_CALL_DEPTH 16
/* Functions in one operator at most. */
#define MAX_NODES 256

typedef struct build_ctx {
    fnw_plan *p;
    fnw_table_plan *tp;
    const fnw_registry *reg;
    const char *tid;
    const fnw_type *input;        /* the operator's input row */
    const fnw_type **node_result; /* per node, borrowed */
    const pb_AsyncOptions *async;
    fnw_arena arena;
} build_ctx;

int fnw_table_plan_is_table_urn(const char *urn)
{
    return urn && (!strcmp(urn, FNW_TABLE_URN_SCALAR) || !strcmp(urn, FNW_TABLE_URN_ASYNC_SCALAR) ||
                   !strcmp(urn, FNW_TABLE_URN_TABLE));
}

/* ---- owned things ----------------------------------------------------------------- */

static int keep(void ***arr, size_t *n, void *x)
{
    void **a = realloc(*arr, (*n + 1) * sizeof *a);
    if (!a)
        return -1;
    a[(*n)++] = x;
    *arr = a;
    return 0;
}

static int keep_type(fnw_table_plan *tp, fnw_type *t)
{
    return keep((void ***)&tp->types, &tp->n_types, t);
}

/* ---- coders ------------------------------------------------------------------------- */

static const pb_Schema *row_schema(const pb_CoderInfoDescriptor *ci, const char *what, fnw_error *err)
{
    if (ci->data_type_case == DATA_TYPE(FLATTEN_ROW_TYPE) && ci->flatten_row_type &&
        ci->flatten_row_type->schema)
        return ci->flatten_row_type->schema;
    if (ci->data_type_case == DATA_TYPE(ROW_TYPE) && ci->row_type && ci->row_type->schema)
        return ci->row_type->schema;
    if (ci->data_type_case == DATA_TYPE(ARROW_TYPE) || ci->data_type_case == DATA_TYPE(OVER_WINDOW_ARROW_TYPE))
        fnw_error_set(err,
                      "the %s coder is an Arrow coder (a pandas function); fnworker functions are "
                      "general (row at a time) functions: build them with fnworker.udf, without "
                      "func_type='pandas'",
                      what);
    else
        fnw_error_set(err, "the %s coder is not a Table row coder (flatten_row_type or row_type)", what);
    return NULL;
}

/* ---- one function ----------------------------------------------------------------------- */

static int add_node(build_ctx *c, const pb_UDF *u, int column, const fnw_type *column_type, int depth,
                    uint32_t *out, fnw_error *err);

static int type_mismatch(const char *what, const fnw_type *a, const fnw_type *b, fnw_error *err)
{
    char x[384], y[384];
    fnw_type_format(a, x, sizeof x);
    fnw_type_format(b, y, sizeof y);
    return fnw_error_set(err, "%s: %s, but %s", what, x, y);
}

/* A constant: read, converted to the declared type when there is one,
 * encoded once. */
static int add_const(build_ctx *c, const ProtobufCBinaryData *bytes, const fnw_type *declared,
                     fnw_proj_arg *a, fnw_type **type, fnw_error *err)
{
    fnw_value v;
    if (fnw_pickle_const_read(bytes->data, bytes->len, &c->arena, &v, type, err) < 0)
        return fnw_error_prefix(err, "constant");
    if (declared) {
        fnw_value conv;
        if (fnw_pickle_const_convert(&v, declared, &c->arena, &conv, err) < 0)
            return -1;
        fnw_type_free(*type);
        if (!(*type = fnw_type_clone(declared)))
            return fnw_error_set(err, "out of memory");
        v = conv;
    }
    a->kind = FNW_PROJ_CONST;
    if (v.is_null)
        return 0;
    fnw_buf b;
    fnw_buf_init(&b, 1 << 20);
    if (fnw_ser_encode(*type, &v, &b, err) < 0) {
        fnw_buf_free(&b);
        return fnw_error_prefix(err, "constant");
    }
    size_t len;
    uint8_t *enc = fnw_buf_steal(&b, &len);
    if (!enc && len)
        return fnw_error_set(err, "out of memory");
    if (!enc)
        enc = calloc(1, 1); /* an empty value is not a null */
    if (!enc || keep((void ***)&c->tp->consts, &c->tp->n_consts, enc) < 0) {
        free(enc);
        return fnw_error_set(err, "out of memory");
    }
    a->bytes = enc;
    a->len = (uint32_t)len;
    return 0;
}

/* Argument j of u: its kind, bytes and type (*type: a new tree). */
static int add_arg(build_ctx *c, const pb_UDF *u, size_t j, const fnw_type *declared, int depth,
                   fnw_proj_arg *a, fnw_type **type, const char **default_name, fnw_error *err)
{
    const pb_UDFInput *in = u->inputs[j];
    *default_name = NULL;
    switch (in->input_case) {
    case INPUT(UDF): {
        uint32_t child;
        if (!in->udf || add_node(c, in->udf, -1, NULL, depth + 1, &child, err) < 0)
            return in->udf ? -1 : fnw_error_set(err, "an empty nested function");
        a->kind = FNW_PROJ_CALL;
        a->node = child;
        *type = fnw_type_clone(c->node_result[child]);
        break;
    }
    case INPUT(INPUT_OFFSET): {
        int32_t off = in->inputoffset;
        if (off < 0 || (size_t)off >= fnw_type_child_count(c->input)) {
            return fnw_error_set(err, "input column %d, but the operator's input row has %zu column(s)",
                                 (int)off, fnw_type_child_count(c->input));
        }
        fnw_ser_field *f = fnw_ser_field_new(c->input, (uint32_t)off, err);
        if (!f || keep((void ***)&c->tp->fields, &c->tp->n_fields, f) < 0) {
            fnw_ser_field_free(f);
            return f ? fnw_error_set(err, "out of memory") : -1;
        }
        a->kind = FNW_PROJ_FIELD;
        a->field = f;
        *type = fnw_type_clone(fnw_type_child(c->input, (size_t)off));
        *default_name = fnw_type_field_name(c->input, (size_t)off);
        break;
    }
    case INPUT(INPUT_CONSTANT):
        return add_const(c, &in->inputconstant, declared, a, type, err);
    default:
        return fnw_error_set(err, "an argument that is neither a column, a constant nor a function");
    }
    return *type ? 0 : fnw_error_set(err, "out of memory");
}

/* The row of u's arguments as the operation sees it. */
static int add_args(build_ctx *c, const pb_UDF *u, const fnw_plan_step *st, int depth, fnw_proj_arg **args,
                    fnw_type **row, fnw_error *err)
{
    *row = fnw_type_new(FNW_ROW);
    *args = calloc(u->n_inputs ? u->n_inputs : 1, sizeof **args);
    if (!*row || !*args)
        return fnw_error_set(err, "out of memory");
    if (st->n_argument_types && st->n_argument_types != u->n_inputs)
        return fnw_error_set(err,
                             "its OperationSpec declares %zu argument type(s) but the call passes %zu argument(s)",
                             st->n_argument_types, u->n_inputs);
    for (size_t j = 0; j < u->n_inputs; j++) {
        fnw_type *t = NULL;
        const char *dflt;
        const fnw_type *declared = j < st->n_argument_types ? st->argument_types[j] : NULL;
        if (add_arg(c, u, j, declared, depth, &(*args)[j], &t, &dflt, err) < 0) {
            fnw_type_free(t); /* a constant's type, made before its bytes failed */
            return fnw_error_prefix(err, "argument %zu", j + 1);
        }
        if (declared && !fnw_type_equal_ignoring_names(t, declared)) {
            type_mismatch("the argument's declared type (argument_types) and the type Flink sends differ",
                          declared, t, err);
            fnw_type_free(t);
            return fnw_error_prefix(err, "argument %zu", j + 1);
        }
        char gen[32];
        snprintf(gen, sizeof gen, "arg%zu", j);
        const char *name = j < st->n_argument_names        ? st->argument_names[j]
                           : u->takes_row_as_input && dflt ? dflt
                                                           : gen;
        if (fnw_type_add_child(*row, t, name, err) < 0) {
            fnw_type_free(t);
            return -1;
        }
    }
    return 0;
}

/* The node's output type and whether its result is field 0 of it. */
static int result_shape(build_ctx *c, fnw_plan_step *st, fnw_type *argrow, const fnw_type *result,
                        int *unwrap, fnw_error *err)
{
    int is_row = fnw_type_kind(result) == FNW_ROW;
    if (st->op->output_rule == FNW_OUTPUT_SAME_AS_INPUT) {
        st->output_type = argrow;
        if (is_row && fnw_type_equal_ignoring_names(argrow, result)) {
            *unwrap = 0;
            return 0;
        }
        if (fnw_type_child_count(argrow) == 1 &&
            fnw_type_equal_ignoring_names(fnw_type_child(argrow, 0), result)) {
            *unwrap = 1;
            return 0;
        }
        char r[384], a[384];
        fnw_type_format(result, r, sizeof r);
        fnw_type_format(argrow, a, sizeof a);
        return fnw_error_set(err,
                             "operation '%s' gives back its arguments, so as a function whose result is %s "
                             "it needs one argument of that type; its arguments are %s",
                             st->op->name, r, a);
    }
    if (is_row) {
        st->output_type = result;
        *unwrap = 0;
        return 0;
    }
    fnw_type *wrap = fnw_type_new(FNW_ROW), *copy = fnw_type_clone(result);
    if (!wrap || !copy ||
        fnw_type_add_child(wrap, copy, st->result_field ? st->result_field : "result", err) < 0 ||
        keep_type(c->tp, wrap) < 0) {
        fnw_type_free(wrap);
        fnw_type_free(copy);
        return fnw_error_set(err, "out of memory");
    }
    st->output_type = wrap;
    *unwrap = 1;
    return 0;
}

/* AsyncOptions of Flink's async scalar operator fill what the spec leaves
 * unset: its timeout, and retries when the spec has no retry strategy. */
static void apply_async_options(const build_ctx *c, fnw_plan_step *st)
{
    if (!c->async)
        return;
    if (st->spec.timeout_ms == 0)
        st->spec.timeout_ms = c->async->timeout_ms;
    if (st->spec.retry.kind == FNW_RETRY_NONE && c->async->retry_enabled && c->async->retry_max_attempts > 0) {
        st->spec.retry.kind = FNW_RETRY_FIXED_DELAY;
        st->spec.retry.max_attempts = c->async->retry_max_attempts;
        st->spec.retry.delay_ms = c->async->retry_delay_ms;
        st->spec.retry.on_error = 1;
    }
}

static int append_node(build_ctx *c, fnw_plan_step *st, fnw_proj_arg *args, uint32_t n_args, int unwrap,
                       int column, const fnw_type *result, const char *label, uint32_t *out, fnw_error *err)
{
    fnw_table_plan *tp = c->tp;
    fnw_plan *p = c->p;
    size_t n = p->n_steps;
    fnw_plan_step *steps = realloc(p->steps, (n + 1) * sizeof *steps);
    if (steps)
        p->steps = steps;
    fnw_proj_node *nodes = steps ? realloc(tp->nodes, (n + 1) * sizeof *nodes) : NULL;
    if (nodes)
        tp->nodes = nodes;
    const fnw_type **res = nodes ? realloc(c->node_result, (n + 1) * sizeof *res) : NULL;
    if (res)
        c->node_result = res;
    char *copy = res ? strdup(label) : NULL;
    if (!copy)
        return fnw_error_set(err, "out of memory");
    p->steps[n] = *st;
    tp->nodes[n] = (fnw_proj_node){ args, n_args, unwrap, column, copy };
    c->node_result[n] = result;
    p->n_steps = n + 1;
    tp->desc.n_nodes = (uint32_t)(n + 1);
    *out = (uint32_t)n;
    return 0;
}

static int add_node(build_ctx *c, const pb_UDF *u, int column, const fnw_type *column_type, int depth,
                    uint32_t *out, fnw_error *err)
{
    if (depth > MAX_CALL_DEPTH)
        return fnw_error_set(err, "functions nest more than %d deep", MAX_CALL_DEPTH);
    if (c->p->n_steps >= MAX_NODES)
        return fnw_error_set(err, "more than %d functions in one operator", MAX_NODES);
    if (u->is_pandas_udf)
        return fnw_error_set(err,
                             "a pandas function; fnworker functions are general functions (fnworker.udf)");
    fnw_plan_step st;
    memset(&st, 0, sizeof st);
    fnw_proj_arg *args = NULL;
    fnw_type *argrow = NULL;
    int unwrap = 0;
    char label[512];
    if (fnw_step_build_payload(u->payload.data, u->payload.len, 0, c->tid, c->reg, &st, err) < 0)
        goto fail;
    if (st.declared_type) {
        fnw_error_set(err, "its OperationSpec sets output_type, which types DataStream functions; a Table "
                           "function's result type is result_type (fnworker.udf(..., result_type=...))");
        goto fail;
    }
    if (add_args(c, u, &st, depth, &args, &argrow, err) < 0)
        goto fail;
    const fnw_type *result = column_type;
    if (!result && !st.result_type) {
        fnw_error_set(err,
                      "operation '%s' is called for another function's argument, so its result type "
                      "must be in its OperationSpec: build it with fnworker.udf(..., result_type=...)",
                      st.op->name);
        goto fail;
    }
    if (result && st.result_type && !fnw_type_equal_ignoring_names(st.result_type, result)) {
        type_mismatch("the function's result_type and the column Flink expects differ", st.result_type,
                      result, err);
        goto fail;
    }
    if (!result)
        result = st.result_type;
    st.input_type = argrow;
    if (keep_type(c->tp, argrow) < 0) {
        fnw_error_set(err, "out of memory");
        goto fail;
    }
    argrow = NULL; /* the plan's now */
    if (result_shape(c, &st, (fnw_type *)st.input_type, result, &unwrap, err) < 0)
        goto fail;
    apply_async_options(c, &st);
    if (c->p->n_steps >= MAX_NODES) { /* its nested calls came first */
        fnw_error_set(err, "more than %d functions in one operator", MAX_NODES);
        goto fail;
    }
    snprintf(label, sizeof label, "transform '%s', function %zu (operation '%s')", c->tid, c->p->n_steps + 1,
             st.op->name);
    if (append_node(c, &st, args, (uint32_t)u->n_inputs, unwrap, column, result, label, out, err) < 0)
        goto fail;
    return 0;
fail:
    if (st.op)
        fnw_error_prefix(err, "operation '%s'", st.op->name);
    fnw_step_free(&st);
    fnw_type_free(argrow);
    free(args);
    return -1;
}

/* ---- the operator -------------------------------------------------------------------------- */

static int build_types(fnw_plan *p, const pb_CoderInfoDescriptor *in, const pb_CoderInfoDescriptor *out,
                       int table_function, fnw_error *err)
{
    const pb_Schema *s = row_schema(in, "input", err);
    if (!s || fnw_schema_to_type(s, &p->input_raw, err) < 0)
        return fnw_error_prefix(err, "input coder");
    p->input_type = p->input_raw;
    if (!(p->input_skip = fnw_skip_program_new(p->input_type, err)))
        return fnw_error_prefix(err, "input coder");
    if (!(s = row_schema(out, "output", err)) || fnw_schema_to_type(s, &p->output_raw, err) < 0)
        return fnw_error_prefix(err, "output coder");
    p->output_type = p->output_raw;
    if (!table_function && out->separated_with_end_message)
        return fnw_error_set(err, "the output coder of a scalar function is separated with end messages");
    if (table_function && !out->separated_with_end_message)
        return fnw_error_set(err, "the output coder of a table function has no end messages");
    return 0;
}

static uint32_t window_of(const fnw_plan *p)
{
    int64_t most = 1;
    for (size_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].spec.capacity > most)
            most = p->steps[i].spec.capacity;
    int64_t w = 2 * most;
    w = w < 64 ? 64 : w > 65536 ? 65536 : w;
    /* the ring keeps a few words per function and row: at most ~1M of them */
    int64_t cells_max = (int64_t)1 << 20, n = p->n_steps ? (int64_t)p->n_steps : 1;
    if (w * n > cells_max)
        w = cells_max / n > 1 ? cells_max / n : 1;
    return (uint32_t)w;
}

static int build_functions(build_ctx *c, const pb_UDFs *f, int table_function, fnw_error *err)
{
    fnw_table_plan *tp = c->tp;
    size_t columns = fnw_type_child_count(c->p->output_type);
    if (f->n_udfs == 0)
        return fnw_error_set(err, "no functions");
    if (table_function) {
        if (f->n_udfs != 1)
            return fnw_error_set(err, "a table function transform with %zu functions (expected 1)", f->n_udfs);
        uint32_t idx;
        if (add_node(c, f->udfs[0], -1, c->p->output_type, 0, &idx, err) < 0)
            return fnw_error_prefix(err, "table function");
        tp->desc.table_function = 1;
        tp->desc.n_columns = (uint32_t)columns;
        return 0;
    }
    if (f->n_udfs != columns)
        return fnw_error_set(err, "%zu functions for %zu output column(s)", f->n_udfs, columns);
    for (size_t i = 0; i < f->n_udfs; i++) {
        uint32_t idx;
        if (add_node(c, f->udfs[i], (int)i, fnw_type_child(c->p->output_type, i), 0, &idx, err) < 0)
            return fnw_error_prefix(err, "column %zu", i + 1);
    }
    tp->desc.n_columns = (uint32_t)columns;
    return 0;
}

int fnw_table_plan_build(const pb_PTransform *t, const char *tid, const pb_CoderInfoDescriptor *in,
                         const pb_CoderInfoDescriptor *out, const fnw_registry *reg, fnw_plan *p,
                         fnw_error *err)
{
    const char *urn = t->spec->urn;
    int table_function = !strcmp(urn, FNW_TABLE_URN_TABLE);
    if (!(p->table = calloc(1, sizeof *p->table)))
        return fnw_error_set(err, "out of memory");
    if (build_types(p, in, out, table_function, err) < 0)
        return fnw_error_prefix(err, "transform '%s'", tid);
    if (fnw_pb_nesting_check(&PBF(user_defined_functions__descriptor), t->spec->payload.data,
                             t->spec->payload.len, err) < 0)
        return fnw_error_prefix(err, "transform '%s': UserDefinedFunctions", tid);
    pb_UDFs *f = PBF(user_defined_functions__unpack)(NULL, t->spec->payload.len, t->spec->payload.data);
    if (!f)
        return fnw_error_set(err, "transform '%s': the payload is not Flink's UserDefinedFunctions", tid);
    build_ctx c = { p, p->table, reg, tid, p->input_type, NULL, NULL, { 0 } };
    if (!strcmp(urn, FNW_TABLE_URN_ASYNC_SCALAR))
        c.async = f->async_options;
    fnw_arena_init(&c.arena, 4096, 16 << 20);
    int rc = build_functions(&c, f, table_function, err);
    fnw_arena_free(&c.arena);
    free(c.node_result);
    PBF(user_defined_functions__free_unpacked)(f, NULL);
    if (rc < 0)
        return fnw_error_prefix(err, "transform '%s'", tid);
    p->table->desc.nodes = p->table->nodes;
    p->table->desc.window = window_of(p);
    return 0;
}

void fnw_table_plan_free(fnw_table_plan *tp)
{
    if (!tp)
        return;
    for (uint32_t i = 0; i < tp->desc.n_nodes; i++) {
        free((fnw_proj_arg *)tp->nodes[i].args);
        free((char *)tp->nodes[i].name);
    }
    free(tp->nodes);
    for (size_t i = 0; i < tp->n_fields; i++)
        fnw_ser_field_free(tp->fields[i]);
    free(tp->fields);
    for (size_t i = 0; i < tp->n_consts; i++)
        free(tp->consts[i]);
    free(tp->consts);
    for (size_t i = 0; i < tp->n_types; i++)
        fnw_type_free(tp->types[i]);
    free(tp->types);
    free(tp);
}
