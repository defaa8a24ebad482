/* tests/unit/runtime/test_operation_api.c — the public operation API (fnworker.h)
 * from an operation's side: an operation compiled against that header alone
 * (tests/unit/plugin/add_op.c) registers through fnw_registry_add and runs
 * through the engine per element and in batches, reports its open errors,
 * and is cancelled when the engine gives up on its calls. Also the type
 * accessors an operation reads its types with. */
#include <check.h>
#include <ev.h>

#include "tests/unit/check_run.h"
#include "tests/unit/plugin/add_op.h"
#include "tests/unit/test_engine_harness.h"
#include "tests/unit/type_build.h"

/* A harness whose registry also holds `add`, as a plugin host's would. */
static void h_init_add(harness *h)
{
    h_init(h);
    ck_assert_msg(add_op_register(&h->reg, &h->err) == 0, "%s", h->err.msg);
}

START_TEST(test_abi_version)
{
    ck_assert_int_eq(FNW_ABI_VERSION, 1);
}
END_TEST

START_TEST(test_plugin_runs_per_element)
{
    harness h;
    h_init_add(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "add=5", NULL };
    h_create(&h, "add", &s, kv);
    h_inputs(&h, 50);
    h_run_ok(&h, 10);
    ck_assert_uint_eq(h.n_out, 50);
    for (size_t i = 0; i < 50; i++) {
        ck_assert_int_eq(h.outs[i].v, (int32_t)i + 5);
        ck_assert_int_eq(h.outs[i].ts, 1000 + (int64_t)i);
    }
    ck_assert_int_eq(h_m(&h)->calls, 50);
    h_free(&h);
}
END_TEST

START_TEST(test_plugin_runs_batched)
{
    harness h;
    h_init_add(&h);
    fnw_spec s = h_spec();
    s.batched = 1;
    s.batch_size = 4;
    s.batch_timeout_ms = 1;
    s.timeout_ms = 5000;
    h_create(&h, "add", &s, NULL);
    h_inputs(&h, 10);
    h_run_ok(&h, 10);
    ck_assert_uint_eq(h.n_out, 10);
    for (size_t i = 0; i < 10; i++)
        ck_assert_int_eq(h.outs[i].v, (int32_t)i + 1);     /* add defaults to 1 */
    ck_assert_int_eq(h_m(&h)->batch_size.max, 4);
    ck_assert_int_ge(h_m(&h)->batches, 3);
    h_free(&h);
}
END_TEST

START_TEST(test_plugin_open_errors)
{
    harness h;
    h_init_add(&h);
    fnw_spec s = h_spec();
    static const char *const bad_key[] = { "ad=1", NULL };
    ck_assert_int_eq(h_create_opts(&h, "add", &s, bad_key), -1);
    ck_assert_msg(strstr(h.err.msg, "unknown option 'ad' for operation 'add'") != NULL, "%s", h.err.msg);
    static const char *const bad_int[] = { "add=x", NULL };
    ck_assert_int_eq(h_create_opts(&h, "add", &s, bad_int), -1);
    ck_assert_msg(strstr(h.err.msg, "'add'") != NULL, "%s", h.err.msg);
    fnw_type_free(h.type);
    h.type = TN(FNW_ROW, 2, T(FNW_INT), T(FNW_STRING));
    ck_assert_int_eq(h_create_opts(&h, "add", &s, NULL), -1);
    ck_assert_str_eq(h.err.msg, "operation 'add' takes INT inputs; the input type is ROW<f0 INT, f1 STRING>");
    h_free(&h);
}
END_TEST

static int three_calls(const harness *h)
{
    return h_m(h)->calls == 3;
}

START_TEST(test_plugin_cancelled_on_abort_and_free)
{
    harness h;
    h_init_add(&h);
    fnw_spec s = h_spec();
    static const char *const kv[] = { "hang=true", NULL };
    h_create(&h, "add", &s, kv);
    add_op_cancels = 0;
    h_inputs(&h, 3);
    h.auto_finish = 0;
    h_begin(&h, "b1");
    h_feed(&h);
    h_run_until(&h, three_calls, 5);
    ck_assert_int_eq(add_op_cancels, 0);
    fnw_engine_abort(h.e);
    ck_assert_int_eq(add_op_cancels, 3);     /* every call it still had */
    ck_assert_uint_eq(h.n_out, 0);
    /* a second bundle: calls left with the operation are cancelled by free */
    h_inputs(&h, 2);
    h_begin(&h, "b2");
    h_feed(&h);
    ck_assert_int_eq(h_m(&h)->calls, 2);
    fnw_engine_free(h.e);
    h.e = NULL;
    ck_assert_int_eq(add_op_cancels, 5);
    fnw_type_free(h.type);
    ev_loop_destroy(h.loop);
    free(h.vals);
    free(h.ts);
    free(h.wm);
    free(h.outs);
}
END_TEST

static void never_invoked(void *state, fnw_call *call)
{
    ck_abort_msg("invoked");
}

START_TEST(test_registry_add_checks)
{
    fnw_registry r;
    fnw_error err;
    fnw_registry_init(&r);
    ck_assert_int_eq(add_op_register(&r, &err), 0);
    ck_assert_int_eq(add_op_register(&r, &err), -1);
    ck_assert_str_eq(err.msg, "operation 'add' is already registered");
    fnw_operation no_cancel = { .name = "nc", .invoke = never_invoked };
    ck_assert_int_eq(fnw_registry_add(&r, &no_cancel, &err), -1);
    ck_assert_str_eq(err.msg, "operation 'nc' is asynchronous but has no cancel function");
    ck_assert_ptr_nonnull(fnw_registry_find(&r, "add", &err));
}
END_TEST

START_TEST(test_type_accessors)
{
    fnw_type *row = TN(FNW_ROW, 3, T(FNW_INT), T(FNW_STRING), TN(FNW_LIST, 1, T(FNW_LONG)));
    ck_assert_int_eq(fnw_type_kind(row), FNW_ROW);
    ck_assert_uint_eq(fnw_type_child_count(row), 3);
    ck_assert_int_eq(fnw_type_kind(fnw_type_child(row, 1)), FNW_STRING);
    ck_assert_ptr_null(fnw_type_child(row, 3));
    ck_assert_str_eq(fnw_type_field_name(row, 2), "f2");
    ck_assert_ptr_null(fnw_type_field_name(row, 3));
    ck_assert_int_eq(fnw_type_find_field(row, "f1", 2), 1);
    ck_assert_int_eq(fnw_type_find_field(row, "f1,f2", 2), 1);   /* a slice of a longer string */
    ck_assert_int_eq(fnw_type_find_field(row, "f", 1), -1);
    ck_assert_int_eq(fnw_type_find_field(row, "f3", 2), -1);
    const fnw_type *list = fnw_type_child(row, 2);
    ck_assert_int_eq(fnw_type_kind(list), FNW_LIST);
    ck_assert_uint_eq(fnw_type_child_count(list), 1);
    ck_assert_int_eq(fnw_type_kind(fnw_type_child(list, 0)), FNW_LONG);
    ck_assert_ptr_null(fnw_type_field_name(list, 0));          /* only ROW fields have names */
    ck_assert_int_eq(fnw_type_find_field(list, "f0", 2), -1);
    ck_assert_uint_eq(fnw_type_child_count(fnw_type_child(row, 0)), 0);
    char buf[64];
    fnw_type_format(row, buf, sizeof buf);
    ck_assert_str_eq(buf, "ROW<f0 INT, f1 STRING, f2 LIST<LONG>>");
    ck_assert_str_eq(fnw_kind_name(FNW_LOCAL_DATETIME), "LOCAL_DATETIME");
    fnw_type_free(row);
}
END_TEST

static Suite *operation_api_suite(void)
{
    Suite *s = suite_create("operation_api");
    TCase *tc = tcase_create("operation_api");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_abi_version);
    tcase_add_test(tc, test_plugin_runs_per_element);
    tcase_add_test(tc, test_plugin_runs_batched);
    tcase_add_test(tc, test_plugin_open_errors);
    tcase_add_test(tc, test_plugin_cancelled_on_abort_and_free);
    tcase_add_test(tc, test_registry_add_checks);
    tcase_add_test(tc, test_type_accessors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(operation_api_suite());
}
