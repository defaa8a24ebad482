/* tests/unit/runtime/test_options.c — the options map helpers operations validate
 * with, and the operation registry (lookup messages, built-ins). */
#include <check.h>

#include "ops/builtins.h"
#include "tests/unit/check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/operation.h"

static const fnw_option items[] = {
    { "delay_ms", "25" }, { "neg", "-7" }, { "junk", "12x" }, { "big", "99999999999999999999" },
    { "flag", "TRUE" }, { "off", "0" }, { "mode", "empty" }, { "blank", "" },
};
static const fnw_options opts = { sizeof items / sizeof items[0], items };

START_TEST(test_get)
{
    ck_assert_str_eq(fnw_options_get(&opts, "delay_ms"), "25");
    ck_assert_ptr_null(fnw_options_get(&opts, "nope"));
    ck_assert_ptr_null(fnw_options_get(NULL, "delay_ms"));
}
END_TEST

START_TEST(test_int)
{
    fnw_error err;
    int64_t v = 0;
    ck_assert_int_eq(fnw_options_int(&opts, "delay_ms", 0, 0, 100, &v, &err), 0);
    ck_assert_int_eq(v, 25);
    ck_assert_int_eq(fnw_options_int(&opts, "absent", 42, 0, 100, &v, &err), 0);
    ck_assert_int_eq(v, 42);
    ck_assert_int_eq(fnw_options_int(&opts, "neg", 0, -10, 10, &v, &err), 0);
    ck_assert_int_eq(v, -7);
    ck_assert_int_eq(fnw_options_int(&opts, "neg", 0, 0, 10, &v, &err), -1);
    ck_assert_str_eq(err.msg, "option 'neg' must be between 0 and 10, got -7");
    ck_assert_int_eq(fnw_options_int(&opts, "junk", 0, 0, 100, &v, &err), -1);
    ck_assert_str_eq(err.msg, "option 'junk' must be a whole number, got '12x'");
    ck_assert_int_eq(fnw_options_int(&opts, "big", 0, 0, 100, &v, &err), -1);
    ck_assert_str_eq(err.msg, "option 'big' must be a whole number, got '99999999999999999999'");
    ck_assert_int_eq(fnw_options_int(&opts, "blank", 0, 0, 100, &v, &err), -1);
    ck_assert_str_eq(err.msg, "option 'blank' must be a whole number, got ''");
}
END_TEST

START_TEST(test_bool_and_choice)
{
    fnw_error err;
    int b = -1;
    ck_assert_int_eq(fnw_options_bool(&opts, "flag", 0, &b, &err), 0);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(fnw_options_bool(&opts, "off", 1, &b, &err), 0);
    ck_assert_int_eq(b, 0);
    ck_assert_int_eq(fnw_options_bool(&opts, "absent", 1, &b, &err), 0);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(fnw_options_bool(&opts, "mode", 0, &b, &err), -1);
    ck_assert_str_eq(err.msg, "option 'mode' must be true or false, got 'empty'");
    static const char *const choices[] = { "input", "empty", NULL };
    int c = -1;
    ck_assert_int_eq(fnw_options_choice(&opts, "mode", choices, 0, &c, &err), 0);
    ck_assert_int_eq(c, 1);
    ck_assert_int_eq(fnw_options_choice(&opts, "absent", choices, 0, &c, &err), 0);
    ck_assert_int_eq(c, 0);
    ck_assert_int_eq(fnw_options_choice(&opts, "flag", choices, 0, &c, &err), -1);
    ck_assert_str_eq(err.msg, "option 'flag' must be one of input, empty; got 'TRUE'");
}
END_TEST

START_TEST(test_check_known)
{
    fnw_error err;
    static const char *const known[] = { "delay_ms", "neg", "junk", "big", "flag", "off", "mode", "blank", NULL };
    ck_assert_int_eq(fnw_options_check_known(&opts, known, "echo", &err), 0);
    static const char *const fewer[] = { "delay_ms", "neg", NULL };
    ck_assert_int_eq(fnw_options_check_known(&opts, fewer, "echo", &err), -1);
    ck_assert_str_eq(err.msg, "unknown option 'junk' for operation 'echo'; known options: delay_ms, neg");
    static const char *const none[] = { NULL };
    ck_assert_int_eq(fnw_options_check_known(&opts, none, "identity", &err), -1);
    ck_assert_str_eq(err.msg, "unknown option 'delay_ms' for operation 'identity': it takes no options");
    fnw_options empty = { 0, NULL };
    ck_assert_int_eq(fnw_options_check_known(&empty, none, "identity", &err), 0);
}
END_TEST

static void nop_invoke(void *state, fnw_call *call)
{
}

START_TEST(test_registry)
{
    fnw_registry r;
    fnw_error err;
    fnw_registry_init(&r);
    ck_assert_ptr_null(fnw_registry_find(&r, "echo", &err));
    ck_assert_str_eq(err.msg, "unknown operation 'echo'; registered operations: (none)");
    fnw_builtins_register(&r);
    const fnw_operation *id = fnw_registry_find(&r, "identity", &err);
    ck_assert_ptr_nonnull(id);
    ck_assert_str_eq(id->name, "identity");
    ck_assert_int_eq(id->sync, 1);
    const fnw_operation *echo = fnw_registry_find(&r, "echo", &err);
    ck_assert_ptr_nonnull(echo);
    ck_assert_int_eq(echo->sync, 0);
    ck_assert_ptr_nonnull(echo->cancel);
    ck_assert_ptr_nonnull(echo->on_timeout);
    ck_assert_ptr_null(fnw_registry_find(&r, "ecko", &err));
    ck_assert_str_eq(err.msg, "unknown operation 'ecko'; registered operations: identity, echo, project, redis, http, kserve");
    /* how each built-in types its outputs (worker/step.h) */
    ck_assert_int_eq(id->output_rule, FNW_OUTPUT_SAME_AS_INPUT);
    ck_assert_int_eq(echo->output_rule, FNW_OUTPUT_SAME_AS_INPUT);
    const fnw_operation *project = fnw_registry_find(&r, "project", &err);
    ck_assert_ptr_nonnull(project);
    ck_assert_int_eq(project->output_rule, FNW_OUTPUT_DECLARED);

    static const fnw_operation mine = { .name = "mine", .sync = 1, .invoke = nop_invoke };
    ck_assert_int_eq(fnw_registry_add(&r, &mine, &err), 0);
    ck_assert_ptr_eq(fnw_registry_find(&r, "mine", &err), &mine);
    ck_assert_int_eq(fnw_registry_add(&r, &mine, &err), -1);
    ck_assert_str_eq(err.msg, "operation 'mine' is already registered");
    static const fnw_operation async_no_cancel = { .name = "a", .sync = 0, .invoke = nop_invoke };
    ck_assert_int_eq(fnw_registry_add(&r, &async_no_cancel, &err), -1);
    ck_assert_str_eq(err.msg, "operation 'a' is asynchronous but has no cancel function");
    static const fnw_operation noname = { .name = "", .sync = 1, .invoke = nop_invoke };
    ck_assert_int_eq(fnw_registry_add(&r, &noname, &err), -1);
}
END_TEST

START_TEST(test_registry_full)
{
    fnw_registry r;
    fnw_error err;
    fnw_registry_init(&r);
    static fnw_operation ops[FNW_REGISTRY_MAX + 1];
    static char names[FNW_REGISTRY_MAX + 1][16];
    for (int i = 0; i <= FNW_REGISTRY_MAX; i++) {
        snprintf(names[i], sizeof names[i], "op%d", i);
        ops[i].name = names[i];
        ops[i].sync = 1;
        ops[i].invoke = nop_invoke;
        int rc = fnw_registry_add(&r, &ops[i], &err);
        ck_assert_int_eq(rc, i < FNW_REGISTRY_MAX ? 0 : -1);
    }
    ck_assert_str_eq(err.msg, "cannot register operation 'op64': the registry holds at most 64 operations");
}
END_TEST

static Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("options");
    tcase_add_test(tc, test_get);
    tcase_add_test(tc, test_int);
    tcase_add_test(tc, test_bool_and_choice);
    tcase_add_test(tc, test_check_known);
    tcase_add_test(tc, test_registry);
    tcase_add_test(tc, test_registry_full);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(options_suite());
}
