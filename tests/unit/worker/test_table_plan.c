/* tests/unit/worker/test_table_plan.c — Table operators' descriptors in
 * Flink's layout (tests/unit/table_build.h) read into plan steps and a
 * projection (worker/table_plan.h): the steps' argument rows (named arg0..
 * or argument_names, typed as the SQL arguments: columns, constants, nested
 * results), result types and unwrap; async options; a table function (one
 * calling another for its argument too); and every refusal with its
 * message (a pandas function, an Arrow coder, an input column out of
 * range, a nested call without result_type, a result_type other than the
 * column's, output_type set, too many or too deeply nested functions, a
 * table function with two functions, end-message framing that does not
 * match, identity with two arguments as a scalar, a constant that is not a
 * literal or is too large). The binary runs clean under valgrind: the
 * failure paths leak nothing. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/table_build.h"
#include "worker/plan.h"
#include "worker/table_plan.h"

static const char *const IN_NAMES[] = { "a", "b" };
static const int IN_TYPES[] = { STN(INT), STN(BIGINT) };

/* Input ROW<a INT, b BIGINT>. */
static pb_Schema *in_schema(builder *b)
{
    return tschema(b, 2, IN_NAMES, IN_TYPES);
}

static pb_Schema *out1(builder *b, int type)
{
    static const char *const n[] = { "c0" };
    return tschema(b, 1, n, &type);
}

static pb_Schema *out2(builder *b, int t0, int t1)
{
    static const char *const n[] = { "c0", "c1" };
    int t[2] = { t0, t1 };
    return tschema(b, 2, n, t);
}

/* A scalar projection of the given functions onto out. */
static void scalar_shape(builder *b, pb_Schema *out, int n, pb_UDF **u)
{
    table_shape(b, URN_SCALAR, in_schema(b), out, tudfs(b, n, u));
}

static int build_ok(builder *b, fnw_plan **p)
{
    fnw_error err;
    err.msg[0] = '\0';
    int rc = build(b, p, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_ptr_nonnull((*p)->table);
    return rc;
}

/* The build fails with a message holding every part (NULL-terminated). */
static void expect_fail(builder *b, ...)
{
    fnw_plan *p = NULL;
    fnw_error err;
    err.msg[0] = '\0';
    ck_assert_int_eq(build(b, &p, &err), -1);
    ck_assert_ptr_null(p);
    va_list ap;
    va_start(ap, b);
    for (const char *part = va_arg(ap, const char *); part; part = va_arg(ap, const char *))
        ck_assert_msg(strstr(err.msg, part) != NULL, "'%s' is not in: %s", part, err.msg);
    va_end(ap);
}

static void expect_fields(const fnw_type *row, int n, ...)
{
    ck_assert_ptr_nonnull(row);
    ck_assert_int_eq(fnw_type_kind(row), FNW_ROW);
    ck_assert_uint_eq(fnw_type_child_count(row), (size_t)n);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        const char *name = va_arg(ap, const char *);
        int kind = va_arg(ap, int);
        ck_assert_str_eq(fnw_type_field_name(row, (size_t)i), name);
        ck_assert_int_eq(fnw_type_kind(fnw_type_child(row, (size_t)i)), kind);
    }
    va_end(ap);
}

/* Constants as Flink 2.3 sends them (codecs/pickle_const.h). */
#define K_SEVEN "\x00\x80\x02K\x07."               /* 7: BIGINT */
#define K_NULL "\x00\x80\x02N."                    /* NULL */
#define K_ABC "\x00\x80\x02X\x03\x00\x00\x00" "abcq\x00." /* 'abc' */

/* c0 = identity(a); c1 = project(echo(b), 7, NULL, a) with argument_names
 * and result_field; echo's result typed by its result_type. */
START_TEST(projection_of_two_columns_with_a_nested_call)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity");
    pb_OperationSpec echo = tspec("echo");
    SFType *big = sft(&b, STN(BIGINT));
    echo.result_type = big;
    pb_OperationSpec proj = tspec("project");
    static char *names[] = { "x", "k", "nothing", "a" };
    proj.n_argument_names = 4;
    proj.argument_names = names;
    proj.result_field = "score";
    pb_UDF *g = tudf1(&b, &echo, in_offset(&b, 1));
    pb_UDFInput *pin[4] = { in_udf(&b, g), IN_CONST(&b, K_SEVEN), IN_CONST(&b, K_NULL), in_offset(&b, 0) };
    pb_UDF *u[2] = { tudf1(&b, &id, in_offset(&b, 0)), tudf(&b, &proj, 4, pin) };
    scalar_shape(&b, out2(&b, STN(INT), STN(BIGINT)), 2, u);
    fnw_plan *p = NULL;
    build_ok(&b, &p);
    ck_assert_str_eq(p->source_id, "fn/read/input:0");
    ck_assert_str_eq(p->main_sink_id, "fn/write/:0");
    ck_assert_str_eq(p->data_url, "localhost:7777");
    expect_fields(p->input_type, 2, "a", FNW_INT, "b", FNW_LONG);
    expect_fields(p->output_type, 2, "c0", FNW_INT, "c1", FNW_LONG);
    const fnw_table_plan *tp = p->table;
    ck_assert_uint_eq(p->n_steps, 3);
    ck_assert_uint_eq(tp->desc.n_nodes, 3);
    ck_assert_uint_eq(tp->desc.n_columns, 2);
    ck_assert_int_eq(tp->desc.table_function, 0);
    ck_assert_uint_ge(tp->desc.window, 1);
    ck_assert_ptr_eq(tp->desc.nodes, tp->nodes);
    /* node 0: identity(a), column 0: its argument row is its output, unwrapped */
    ck_assert_str_eq(p->steps[0].op->name, "identity");
    expect_fields(p->steps[0].input_type, 1, "arg0", FNW_INT);
    ck_assert_ptr_eq(p->steps[0].output_type, p->steps[0].input_type);
    ck_assert_int_eq(tp->nodes[0].column, 0);
    ck_assert_int_eq(tp->nodes[0].unwrap, 1);
    ck_assert_uint_eq(tp->nodes[0].n_args, 1);
    ck_assert_int_eq(tp->nodes[0].args[0].kind, FNW_PROJ_FIELD);
    /* node 1: echo(b), nested */
    ck_assert_str_eq(p->steps[1].op->name, "echo");
    expect_fields(p->steps[1].input_type, 1, "arg0", FNW_LONG);
    ck_assert_int_eq(tp->nodes[1].column, -1);
    ck_assert_int_eq(tp->nodes[1].unwrap, 1);
    /* node 2: project(echo(b), 7, NULL, a), column 1 */
    ck_assert_str_eq(p->steps[2].op->name, "project");
    expect_fields(p->steps[2].input_type, 4, "x", FNW_LONG, "k", FNW_LONG, "nothing", FNW_STRING, "a", FNW_INT);
    expect_fields(p->steps[2].output_type, 1, "score", FNW_LONG);
    ck_assert_int_eq(tp->nodes[2].column, 1);
    ck_assert_int_eq(tp->nodes[2].unwrap, 1);
    ck_assert_uint_eq(tp->nodes[2].n_args, 4);
    ck_assert_int_eq(tp->nodes[2].args[0].kind, FNW_PROJ_CALL);
    ck_assert_uint_eq(tp->nodes[2].args[0].node, 1);
    ck_assert_int_eq(tp->nodes[2].args[1].kind, FNW_PROJ_CONST);
    static const uint8_t seven[8] = { 0, 0, 0, 0, 0, 0, 0, 7 };
    ck_assert_uint_eq(tp->nodes[2].args[1].len, 8);
    ck_assert_mem_eq(tp->nodes[2].args[1].bytes, seven, 8);
    ck_assert_int_eq(tp->nodes[2].args[2].kind, FNW_PROJ_CONST);
    ck_assert_ptr_null(tp->nodes[2].args[2].bytes);
    ck_assert_int_eq(tp->nodes[2].args[3].kind, FNW_PROJ_FIELD);
    /* names for messages */
    ck_assert_msg(strstr(tp->nodes[2].name, "transform 'transform'") && strstr(tp->nodes[2].name, "'project'"),
                  "%s", tp->nodes[2].name);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

/* A string constant is a STRING argument, its bytes Flink's (length + UTF-8). */
START_TEST(string_constant_argument)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec proj = tspec("project");
    pb_UDFInput *in[2] = { in_offset(&b, 1), IN_CONST(&b, K_ABC) };
    pb_UDF *u[1] = { tudf(&b, &proj, 2, in) };
    scalar_shape(&b, out1(&b, STN(VARCHAR)), 1, u);
    fnw_plan *p = NULL;
    build_ok(&b, &p);
    expect_fields(p->steps[0].input_type, 2, "arg0", FNW_LONG, "arg1", FNW_STRING);
    expect_fields(p->steps[0].output_type, 1, "result", FNW_STRING);
    const fnw_proj_arg *k = &p->table->nodes[0].args[1];
    ck_assert_int_eq(k->kind, FNW_PROJ_CONST);
    ck_assert_ptr_nonnull(k->bytes);
    ck_assert_uint_ge(k->len, 4);
    ck_assert_mem_eq(k->bytes + k->len - 3, "abc", 3);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

/* A ROW result is the operation's output as it is (no unwrap). */
START_TEST(row_result_is_not_unwrapped)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity");
    pb_UDFInput *in[2] = { in_offset(&b, 0), in_offset(&b, 1) };
    pb_UDF *u[1] = { tudf(&b, &id, 2, in) };
    /* one column of type ROW<a INT, b BIGINT> */
    SFType *row = sft(&b, STN(ROW));
    row->type_info_case = ORG__APACHE__FLINK__FN_EXECUTION__V1__SCHEMA__FIELD_TYPE__TYPE_INFO_ROW_SCHEMA;
    row->row_schema = in_schema(&b);
    pb_Schema *out = out1(&b, STN(INT));
    out->fields[0]->type = row;
    scalar_shape(&b, out, 1, u);
    fnw_plan *p = NULL;
    build_ok(&b, &p);
    ck_assert_int_eq(p->table->nodes[0].unwrap, 0);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

/* The async scalar URN: AsyncOptions fill the timeout and retries the spec
 * leaves unset. */
START_TEST(async_options_fill_the_spec)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec echo = tspec("echo");
    pb_UDF *u[1] = { tudf1(&b, &echo, in_offset(&b, 0)) };
    pb_UDFs f = ORG__APACHE__FLINK__FN_EXECUTION__V1__USER_DEFINED_FUNCTIONS__INIT;
    pb_AsyncOptions ao = ORG__APACHE__FLINK__FN_EXECUTION__V1__ASYNC_OPTIONS__INIT;
    ao.timeout_ms = 1234;
    ao.retry_enabled = 1;
    ao.retry_max_attempts = 3;
    ao.retry_delay_ms = 50;
    f.n_udfs = 1;
    f.udfs = u;
    f.async_options = &ao;
    table_shape(&b, URN_ASYNC_SCALAR, in_schema(&b), out1(&b, STN(INT)), pack(&b, &f.base));
    fnw_plan *p = NULL;
    build_ok(&b, &p);
    ck_assert_int_eq(p->steps[0].spec.timeout_ms, 1234);
    ck_assert_int_eq(p->steps[0].spec.retry.kind, FNW_RETRY_FIXED_DELAY);
    ck_assert_int_eq(p->steps[0].spec.retry.max_attempts, 3);
    ck_assert_int_eq(p->steps[0].spec.retry.delay_ms, 50);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

/* A table function: one node, its result the output row, framed with end
 * messages. */
START_TEST(table_function_plan)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity");
    pb_UDFInput *in[2] = { in_offset(&b, 0), in_offset(&b, 1) };
    pb_UDF *u[1] = { tudf(&b, &id, 2, in) };
    table_shape(&b, URN_TABLE_FN, in_schema(&b), out2(&b, STN(INT), STN(BIGINT)), tudfs(&b, 1, u));
    fnw_plan *p = NULL;
    build_ok(&b, &p);
    ck_assert_int_eq(p->table->desc.table_function, 1);
    ck_assert_uint_eq(p->table->desc.n_nodes, 1);
    ck_assert_int_eq(p->table->nodes[0].unwrap, 0);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

/* ---- refusals ------------------------------------------------------------------ */

START_TEST(pandas_function_is_refused)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity");
    pb_UDF *u[1] = { tudf1(&b, &id, in_offset(&b, 0)) };
    u[0]->is_pandas_udf = 1;
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    expect_fail(&b, "transform 'transform'", "column 1", "pandas function", "fnworker.udf", NULL);
    builder_free(&b);
}
END_TEST

START_TEST(arrow_coder_is_refused)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity");
    pb_UDF *u[1] = { tudf1(&b, &id, in_offset(&b, 0)) };
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    table_input_coder(&b, in_schema(&b), 1);
    expect_fail(&b, "transform 'transform'", "input coder", "Arrow coder", "func_type='pandas'", NULL);
    builder_free(&b);
}
END_TEST

START_TEST(input_column_out_of_range_is_refused)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity");
    pb_UDF *u[1] = { tudf1(&b, &id, in_offset(&b, 2)) };
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    expect_fail(&b, "column 1", "operation 'identity'", "argument 1",
                "input column 2, but the operator's input row has 2 column(s)", NULL);
    builder_free(&b);
    shape_init(&b);
    u[0] = tudf1(&b, &id, in_offset(&b, -1));
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    expect_fail(&b, "input column -1", NULL);
    builder_free(&b);
}
END_TEST

START_TEST(nested_call_without_result_type_is_refused)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity"), proj = tspec("project");
    pb_UDF *g = tudf1(&b, &proj, in_offset(&b, 0));
    pb_UDF *u[1] = { tudf1(&b, &id, in_udf(&b, g)) };
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    expect_fail(&b, "operation 'project' is called for another function's argument",
                "fnworker.udf(..., result_type=...)", NULL);
    builder_free(&b);
}
END_TEST

START_TEST(result_type_other_than_the_column_is_refused)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec proj = tspec("project");
    proj.result_type = sft(&b, STN(VARCHAR));
    pb_UDF *u[1] = { tudf1(&b, &proj, in_offset(&b, 0)) };
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    expect_fail(&b, "operation 'project'", "result_type and the column Flink expects differ", "STRING", "INT",
                NULL);
    builder_free(&b);
}
END_TEST

START_TEST(output_type_is_refused)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec proj = tspec("project");
    proj.output_type = row_of(&b, 5);
    pb_UDF *u[1] = { tudf1(&b, &proj, in_offset(&b, 0)) };
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    expect_fail(&b, "operation 'project'", "sets output_type", "result_type", NULL);
    builder_free(&b);
}
END_TEST

/* 17 nested calls: f(f(...f(a)...)). */
START_TEST(too_deep_is_refused)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec echo = tspec("echo");
    echo.result_type = sft(&b, STN(INT));
    pb_UDF *g = tudf1(&b, &echo, in_offset(&b, 0));
    for (int d = 0; d < 17; d++)
        g = tudf1(&b, &echo, in_udf(&b, g));
    pb_UDF *u[1] = { g };
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    expect_fail(&b, "functions nest more than 16 deep", NULL);
    builder_free(&b);
    /* 16 deep is fine */
    shape_init(&b);
    echo.result_type = sft(&b, STN(INT));
    g = tudf1(&b, &echo, in_offset(&b, 0));
    for (int d = 0; d < 16; d++)
        g = tudf1(&b, &echo, in_udf(&b, g));
    u[0] = g;
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    fnw_plan *p = NULL;
    build_ok(&b, &p);
    ck_assert_uint_eq(p->n_steps, 17);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

/* One column calling 256 functions for its arguments: 257 in all. */
START_TEST(too_many_functions_are_refused)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec echo = tspec("echo"), proj = tspec("project");
    echo.result_type = sft(&b, STN(INT));
    pb_UDF *g = tudf1(&b, &echo, in_offset(&b, 0));
    pb_UDFInput *call = in_udf(&b, g);
    pb_UDFInput *in[256];
    for (int j = 0; j < 256; j++)
        in[j] = call;
    pb_UDF *u[1] = { tudf(&b, &proj, 256, in) };
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    expect_fail(&b, "more than 256 functions in one operator", NULL);
    builder_free(&b);
}
END_TEST

START_TEST(table_function_with_two_functions_is_refused)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity");
    pb_UDF *u[2] = { tudf1(&b, &id, in_offset(&b, 0)), tudf1(&b, &id, in_offset(&b, 0)) };
    table_shape(&b, URN_TABLE_FN, in_schema(&b), out1(&b, STN(INT)), tudfs(&b, 2, u));
    expect_fail(&b, "transform 'transform'", "a table function transform with 2 functions (expected 1)", NULL);
    builder_free(&b);
}
END_TEST

/* A table function calling a scalar function for its argument: the nested
 * call is a node before it; the table function is the last node
 * (runtime/projection.h). */
START_TEST(table_function_calling_a_function)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity"), echo = tspec("echo");
    echo.result_type = sft(&b, STN(INT));
    pb_UDF *g = tudf1(&b, &echo, in_offset(&b, 0));
    pb_UDF *u[1] = { tudf1(&b, &id, in_udf(&b, g)) };
    table_shape(&b, URN_TABLE_FN, in_schema(&b), out1(&b, STN(INT)), tudfs(&b, 1, u));
    fnw_plan *p = NULL;
    build_ok(&b, &p);
    ck_assert_int_eq(p->table->desc.table_function, 1);
    ck_assert_uint_eq(p->table->desc.n_nodes, 2);
    ck_assert_str_eq(p->steps[1].op->name, "identity");
    ck_assert_int_eq(p->table->nodes[1].args[0].kind, FNW_PROJ_CALL);
    ck_assert_uint_eq(p->table->nodes[1].args[0].node, 0);
    fnw_plan_free(p);
    builder_free(&b);
}
END_TEST

START_TEST(end_message_framing_must_match)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity");
    pb_UDF *u[1] = { tudf1(&b, &id, in_offset(&b, 0)) };
    pb_Schema *out = out1(&b, STN(INT));
    scalar_shape(&b, out, 1, u);
    table_output_coder(&b, out, CI_MODE(SINGLE), 1, 0);
    expect_fail(&b, "the output coder of a scalar function is separated with end messages", NULL);
    builder_free(&b);

    shape_init(&b);
    pb_UDFInput *in[2] = { in_offset(&b, 0), in_offset(&b, 1) };
    u[0] = tudf(&b, &id, 2, in);
    out = out2(&b, STN(INT), STN(BIGINT));
    table_shape(&b, URN_TABLE_FN, in_schema(&b), out, tudfs(&b, 1, u));
    table_output_coder(&b, out, CI_MODE(MULTIPLE), 0, 0);
    expect_fail(&b, "the output coder of a table function has no end messages", NULL);
    builder_free(&b);
}
END_TEST

START_TEST(identity_with_two_arguments_as_a_scalar_is_refused)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity");
    pb_UDFInput *in[2] = { in_offset(&b, 0), in_offset(&b, 1) };
    pb_UDF *u[1] = { tudf(&b, &id, 2, in) };
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    expect_fail(&b, "column 1", "operation 'identity' gives back its arguments",
                "it needs one argument of that type", NULL);
    builder_free(&b);
    /* one argument of another type */
    shape_init(&b);
    u[0] = tudf1(&b, &id, in_offset(&b, 1));
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    expect_fail(&b, "operation 'identity' gives back its arguments", NULL);
    builder_free(&b);
}
END_TEST

START_TEST(functions_and_columns_must_agree)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity");
    pb_UDF *u[1] = { tudf1(&b, &id, in_offset(&b, 0)) };
    scalar_shape(&b, out2(&b, STN(INT), STN(INT)), 1, u);
    expect_fail(&b, "1 functions for 2 output column(s)", NULL);
    builder_free(&b);
    shape_init(&b);
    scalar_shape(&b, out1(&b, STN(INT)), 0, u);
    expect_fail(&b, "no functions", NULL);
    builder_free(&b);
}
END_TEST

/* A bad constant, an unknown operation, a payload that is not
 * UserDefinedFunctions: refused with what was wrong. Failing after earlier
 * functions and nested calls were planned leaks nothing (valgrind). */
START_TEST(bad_functions_are_refused_cleanly)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity"), proj = tspec("project"), echo = tspec("echo");
    echo.result_type = sft(&b, STN(BIGINT));
    pb_UDFInput *in[3] = { in_udf(&b, tudf1(&b, &echo, in_offset(&b, 1))), in_offset(&b, 0),
                           IN_CONST(&b, "\x00\x80\x02\xfe.") };
    pb_UDF *u[2] = { tudf1(&b, &id, in_offset(&b, 0)), tudf(&b, &proj, 3, in) };
    scalar_shape(&b, out2(&b, STN(INT), STN(INT)), 2, u);
    expect_fail(&b, "column 2", "argument 3", "constant", "0xfe", NULL);
    builder_free(&b);

    shape_init(&b);
    pb_OperationSpec nope = tspec("no-such-op");
    u[0] = tudf1(&b, &id, in_offset(&b, 0));
    u[1] = tudf1(&b, &nope, in_offset(&b, 0));
    scalar_shape(&b, out2(&b, STN(INT), STN(INT)), 2, u);
    expect_fail(&b, "no-such-op", NULL);
    builder_free(&b);

    shape_init(&b);
    static const uint8_t junk[] = { 0x0a, 0x05, 0x01 };
    ProtobufCBinaryData payload = { sizeof junk, (uint8_t *)junk };
    table_shape(&b, URN_SCALAR, in_schema(&b), out1(&b, STN(INT)), payload);
    expect_fail(&b, "transform 'transform'", "UserDefinedFunctions", NULL);
    builder_free(&b);
}
END_TEST

/* A string constant larger than an argument may be (1 MiB) is refused,
 * leaking nothing (its type was made before its bytes were refused). */
START_TEST(oversized_constant_is_refused_cleanly)
{
    builder b;
    shape_init(&b);
    size_t n = (1u << 20) + 16;
    char *k = keep(&b, malloc(n + 11));
    memcpy(k, "\x00\x80\x02X", 4);
    k[4] = (char)(n & 0xff);
    k[5] = (char)((n >> 8) & 0xff);
    k[6] = (char)((n >> 16) & 0xff);
    k[7] = (char)(n >> 24);
    memset(k + 8, 'a', n);
    memcpy(k + 8 + n, "q\x00.", 3);
    pb_OperationSpec proj = tspec("project");
    pb_UDFInput *in[2] = { in_offset(&b, 0), in_const(&b, k, n + 11) };
    pb_UDF *u[1] = { tudf(&b, &proj, 2, in) };
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    expect_fail(&b, "column 1", "argument 2", "constant", NULL);
    builder_free(&b);
}
END_TEST

/* The layout around the Table transform: its consumer must be the sink,
 * and the sink's coder a Table row coder in the descriptor. */
START_TEST(table_layout_refusals)
{
    builder b;
    shape_init(&b);
    pb_OperationSpec id = tspec("identity");
    pb_UDF *u[1] = { tudf1(&b, &id, in_offset(&b, 0)) };
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    transform(&b, "fn/write/:0")->spec = pardo(&b, STATELESS, 0, "identity", 0);
    expect_fail(&b, "descriptor '1-2'", "transform 'fn/write/:0' after Table transform 'transform'",
                "expected beam:runner:sink:v1", NULL);
    builder_free(&b);

    shape_init(&b);
    u[0] = tudf1(&b, &id, in_offset(&b, 0));
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    transform(&b, "fn/write/:0")->spec = grpc_port(&b, "beam:runner:sink:v1", "no-such-coder");
    expect_fail(&b, "descriptor '1-2'", "no-such-coder", NULL);
    builder_free(&b);

    /* a DataStream coder where the Table row coder should be */
    shape_init(&b);
    u[0] = tudf1(&b, &id, in_offset(&b, 0));
    scalar_shape(&b, out1(&b, STN(INT)), 1, u);
    add_flink_coder(&b, "ds_coder", row_of(&b, 5));
    transform(&b, "fn/write/:0")->spec = grpc_port(&b, "beam:runner:sink:v1", "ds_coder");
    expect_fail(&b, "transform 'transform'", "output coder", "not a Table row coder", NULL);
    builder_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("table_plan");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, projection_of_two_columns_with_a_nested_call);
    tcase_add_test(tc, string_constant_argument);
    tcase_add_test(tc, row_result_is_not_unwrapped);
    tcase_add_test(tc, async_options_fill_the_spec);
    tcase_add_test(tc, table_function_plan);
    tcase_add_test(tc, pandas_function_is_refused);
    tcase_add_test(tc, arrow_coder_is_refused);
    tcase_add_test(tc, input_column_out_of_range_is_refused);
    tcase_add_test(tc, nested_call_without_result_type_is_refused);
    tcase_add_test(tc, result_type_other_than_the_column_is_refused);
    tcase_add_test(tc, output_type_is_refused);
    tcase_add_test(tc, too_deep_is_refused);
    tcase_add_test(tc, too_many_functions_are_refused);
    tcase_add_test(tc, table_function_with_two_functions_is_refused);
    tcase_add_test(tc, table_function_calling_a_function);
    tcase_add_test(tc, end_message_framing_must_match);
    tcase_add_test(tc, identity_with_two_arguments_as_a_scalar_is_refused);
    tcase_add_test(tc, functions_and_columns_must_agree);
    tcase_add_test(tc, bad_functions_are_refused_cleanly);
    tcase_add_test(tc, oversized_constant_is_refused_cleanly);
    tcase_add_test(tc, table_layout_refusals);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
