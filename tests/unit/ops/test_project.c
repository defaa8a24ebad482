/* tests/unit/ops/test_project.c — the built-in `project` operation: its open
 * checks (option, input kind, output type against the selected fields, each
 * message naming what is wrong) and its outputs through the engine, bytes
 * compared with what the serializer writes for the projected row. */
#include <check.h>
#include <ev.h>

#include "ops/builtins.h"
#include "tests/unit/check_run.h"
#include <stdlib.h>
#include <string.h>

#include "codecs/buf.h"
#include "codecs/ser.h"
#include "runtime/engine.h"
#include "tests/unit/type_build.h"

/* ROW<f0 INT, f1 STRING, f2 LONG> */
static fnw_type *in_type(void)
{
    return TN(FNW_ROW, 3, T(FNW_INT), T(FNW_STRING), T(FNW_LONG));
}

static const fnw_operation *project_op(void)
{
    static fnw_registry reg;
    fnw_registry_init(&reg);
    fnw_builtins_register(&reg);
    fnw_error err;
    const fnw_operation *op = fnw_registry_find(&reg, "project", &err);
    ck_assert_msg(op != NULL, "%s", err.msg);
    return op;
}

static int open_with(const char *fields, const fnw_type *in, const fnw_type *out, fnw_error *err)
{
    fnw_option o = { "fields", fields };
    fnw_options opts = { fields ? 1 : 0, &o };
    fnw_op_env env = { NULL, &opts, in, out, "t1", 0, 1, 0, NULL };
    const fnw_operation *op = project_op();
    void *state = NULL;
    int rc = op->open(&env, &state, err);
    if (rc == 0)
        op->close(state);
    return rc;
}

static void expect_open_error(const char *fields, fnw_type *in, fnw_type *out, const char *msg)
{
    fnw_error err;
    err.msg[0] = '\0';
    ck_assert_int_eq(open_with(fields, in, out, &err), -1);
    ck_assert_str_eq(err.msg, msg);
    fnw_type_free(in);
    fnw_type_free(out);
}

START_TEST(test_open_checks)
{
    fnw_error err;
    fnw_type *in = in_type();
    fnw_type *out = TN(FNW_ROW, 2, T(FNW_LONG), T(FNW_INT));
    ck_assert_msg(open_with("f2, f0", in, out, &err) == 0, "%s", err.msg);
    fnw_type_free(out);
    out = TN(FNW_ROW, 2, T(FNW_INT), T(FNW_INT));
    ck_assert_msg(open_with("f0,f0", in, out, &err) == 0, "%s", err.msg);   /* a field may repeat */
    fnw_type_free(out);
    fnw_type_free(in);

    expect_open_error(NULL, in_type(), TN(FNW_ROW, 1, T(FNW_INT)),
                      "operation 'project' needs option 'fields': the input field names to keep, "
                      "comma-separated");
    expect_open_error("f9", in_type(), TN(FNW_ROW, 1, T(FNW_INT)),
                      "option 'fields' of operation 'project' names field 'f9', which the input type "
                      "ROW<f0 INT, f1 STRING, f2 LONG> does not have");
    expect_open_error("f0,,f1", in_type(), TN(FNW_ROW, 1, T(FNW_INT)),
                      "option 'fields' of operation 'project' has an empty field name: 'f0,,f1'");
    expect_open_error("f0", T(FNW_INT), TN(FNW_ROW, 1, T(FNW_INT)),
                      "operation 'project' takes ROW inputs; the input type is INT");
    expect_open_error("f0,f1", in_type(), TN(FNW_ROW, 1, T(FNW_INT)),
                      "operation 'project' selects 2 field(s), so its output type must be a ROW of 2 "
                      "field(s) with their types; the output type is ROW<f0 INT>");
    expect_open_error("f1", in_type(), TN(FNW_ROW, 1, T(FNW_INT)),
                      "operation 'project': output field 0 ('f0') has type INT but the field it takes, "
                      "input field 'f1', has type STRING (output type ROW<f0 INT>)");
}
END_TEST

/* ---- through the engine ---------------------------------------------------- */

typedef struct got {
    fnw_buf bytes[4];
    int is_null[4];
    int64_t ts[4];
    int n, finished;
    char failed[FNW_ERROR_MAX];
} got;

static void got_emit(void *user, const fnw_record *out)
{
    got *g = user;
    ck_assert_int_lt(g->n, 4);
    fnw_buf_init(&g->bytes[g->n], 0);
    g->is_null[g->n] = out->data == NULL;
    if (out->data)
        ck_assert_int_eq(fnw_buf_append(&g->bytes[g->n], out->data, out->len), 0);
    g->ts[g->n++] = out->timestamp;
}

static void got_ready(void *user)
{
    (void)user;
}

static void got_failed(void *user, const char *message)
{
    got *g = user;
    snprintf(g->failed, sizeof g->failed, "%s", message);
}

static void got_finished(void *user)
{
    ((got *)user)->finished = 1;
}

static void encode(const fnw_type *t, fnw_row_kind rk, fnw_value *items, uint32_t n, fnw_buf *out)
{
    fnw_value v = fnw_value_row(rk, items, n);
    fnw_error err;
    fnw_buf_init(out, 0);
    ck_assert_msg(fnw_ser_encode(t, &v, out, &err) == 0, "%s", err.msg);
}

static void push(fnw_engine *e, int64_t ts, const fnw_buf *b)
{
    fnw_record r = { ts, INT64_MIN, b ? b->p : NULL, b ? (uint32_t)b->len : 0 };
    ck_assert_int_eq(fnw_engine_push(e, &r), 0);
}

START_TEST(test_projects_rows)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_type *in = in_type();
    fnw_type *out = TN(FNW_ROW, 2, T(FNW_LONG), T(FNW_INT));
    fnw_option o = { "fields", "f2,f0" };
    fnw_options opts = { 1, &o };
    fnw_op_env env = { loop, &opts, in, out, "t1", 0, 1, 0, NULL };
    fnw_spec spec;
    memset(&spec, 0, sizeof spec);
    fnw_engine *e = NULL;
    fnw_error err;
    ck_assert_msg(fnw_engine_new(loop, project_op(), &spec, &env, &e, &err) == 0, "%s", err.msg);

    got g;
    memset(&g, 0, sizeof g);
    fnw_engine_sink sink = { &g, got_emit, got_ready, got_failed, got_finished, NULL, NULL, NULL, NULL };
    fnw_engine_start(e, &sink, "b1");
    fnw_buf a, b, want_a, want_b;
    fnw_value ia[3] = { fnw_value_int(FNW_INT, 7), fnw_value_str("seven"), fnw_value_int(FNW_LONG, 70) };
    fnw_value ib[3] = { fnw_value_null(FNW_INT), fnw_value_str(""), fnw_value_int(FNW_LONG, -1) };
    encode(in, FNW_INSERT, ia, 3, &a);
    encode(in, FNW_UPDATE_AFTER, ib, 3, &b);
    fnw_value oa[2] = { ia[2], ia[0] }, ob[2] = { ib[2], ib[0] };
    encode(out, FNW_INSERT, oa, 2, &want_a);
    encode(out, FNW_UPDATE_AFTER, ob, 2, &want_b);   /* the row kind is kept */
    push(e, 100, &a);
    push(e, 200, NULL);                                /* a null value stays null */
    push(e, 300, &b);
    fnw_engine_finish(e);
    for (int i = 0; i < 100 && !g.finished && !g.failed[0]; i++)
        ev_run(loop, EVRUN_ONCE | EVRUN_NOWAIT);
    ck_assert_msg(!g.failed[0], "%s", g.failed);
    ck_assert(g.finished);
    ck_assert_int_eq(g.n, 3);
    ck_assert_int_eq(g.ts[0], 100);
    ck_assert_int_eq(g.ts[1], 200);
    ck_assert_int_eq(g.ts[2], 300);
    ck_assert(g.is_null[1]);
    ck_assert_uint_eq(g.bytes[0].len, want_a.len);
    ck_assert_mem_eq(g.bytes[0].p, want_a.p, want_a.len);
    ck_assert_uint_eq(g.bytes[2].len, want_b.len);
    ck_assert_mem_eq(g.bytes[2].p, want_b.p, want_b.len);

    for (int i = 0; i < g.n; i++)
        fnw_buf_free(&g.bytes[i]);
    fnw_buf_free(&a);
    fnw_buf_free(&b);
    fnw_buf_free(&want_a);
    fnw_buf_free(&want_b);
    fnw_engine_free(e);
    fnw_type_free(in);
    fnw_type_free(out);
    ev_loop_destroy(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("project");
    TCase *tc = tcase_create("project");
    tcase_add_test(tc, test_open_checks);
    tcase_add_test(tc, test_projects_rows);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
