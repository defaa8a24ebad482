/* tests/unit/worker/test_plugins.c — the plugin loader (worker/plugins.c) with real
 * shared objects (tests/unit/plugin_so/, built by the Makefile into
 * FNW_TEST_PLUGINS): a directory's plugins load in name order and their
 * operations join the registry after the built-ins; a wrong ABI version (init
 * never called), a missing entry point, a file dlopen refuses, a failing init
 * and a name already taken each fail with a message naming the file; which
 * directory is used (flag, environment, beside the executable); and a job
 * cannot load code: an OperationSpec naming a path ("../x", "/tmp/evil.so",
 * a real plugin's file) is an unknown operation, and dlopen (counted by the
 * wrapper below) is never called for it. */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/builtins.h"
#include "runtime/registry.h"
#include "tests/unit/check_run.h"
#include "worker/plugins.h"
#include "worker/step.h"

#ifndef FNW_TEST_PLUGINS
#error "FNW_TEST_PLUGINS (the directory of the test plugins) must be defined"
#endif

static char tmpdir[256];

/* Every dlopen of this process (the loader's included) goes through here. */
static int dlopen_calls;

void *dlopen(const char *file, int mode)
{
    void *(*real)(const char *, int);
    *(void **)&real = dlsym(RTLD_NEXT, "dlopen");
    dlopen_calls++;
    return real ? real(file, mode) : NULL;
}

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fnw-plugins-test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void rm_tmpdir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Links the test plugin `name`.so into tmpdir as `as`. */
static void link_plugin(const char *name, const char *as)
{
    char src[512], dst[512], abs[4096];
    snprintf(src, sizeof src, "%s/%s.so", FNW_TEST_PLUGINS, name);
    ck_assert_msg(realpath(src, abs) != NULL, "test plugin %s is missing", src);
    snprintf(dst, sizeof dst, "%s/%s", tmpdir, as);
    ck_assert_int_eq(symlink(abs, dst), 0);
}

static void plugin_path(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s.so", FNW_TEST_PLUGINS, name);
}

static void reg_with_builtins(fnw_registry *r)
{
    fnw_registry_init(r);
    fnw_builtins_register(r);
}

static int index_of(const fnw_registry *r, const char *name)
{
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->ops[i]->name, name) == 0)
            return (int)i;
    return -1;
}

START_TEST(test_dir_loads_in_name_order)
{
    fnw_registry r;
    fnw_error err;
    reg_with_builtins(&r);
    size_t builtins = r.count;
    make_tmpdir();
    link_plugin("good_b", "20-b.so");
    link_plugin("good_a", "10-a.so");
    link_plugin("wrong_abi", "30-not-a-plugin.txt");   /* not *.so: ignored */
    link_plugin("wrong_abi", ".hidden.so");            /* hidden: ignored */
    int rc = fnw_plugins_load_dir(&r, tmpdir, 1, FNW_LOG_ERROR, &err);
    rm_tmpdir();
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_uint_eq(r.count, builtins + 3);
    ck_assert_int_eq(index_of(&r, "plug_a"), (int)builtins);
    ck_assert_int_eq(index_of(&r, "plug_b"), (int)builtins + 1);
    ck_assert_int_eq(index_of(&r, "plug_b2"), (int)builtins + 2);
    ck_assert_int_lt(index_of(&r, "echo"), (int)builtins);
    ck_assert_int_eq(index_of(&r, "wrong_abi_ran"), -1);
}
END_TEST

START_TEST(test_wrong_abi_never_calls_init)
{
    fnw_registry r;
    fnw_error err;
    char path[512];
    reg_with_builtins(&r);
    size_t before = r.count;
    plugin_path("wrong_abi", path, sizeof path);
    ck_assert_int_eq(fnw_plugins_load_file(&r, path, FNW_LOG_ERROR, &err), -1);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "ABI version 42") && strstr(err.msg, "version 1"),
                  "%s", err.msg);
    ck_assert_uint_eq(r.count, before);
}
END_TEST

START_TEST(test_missing_entry_point)
{
    fnw_registry r;
    fnw_error err;
    char path[512];
    reg_with_builtins(&r);
    plugin_path("no_entry", path, sizeof path);
    ck_assert_int_eq(fnw_plugins_load_file(&r, path, FNW_LOG_ERROR, &err), -1);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "no entry point fnw_plugin_v1"), "%s", err.msg);
}
END_TEST

START_TEST(test_dlopen_error_names_file)
{
    fnw_registry r;
    fnw_error err;
    char path[512];
    reg_with_builtins(&r);
    make_tmpdir();
    snprintf(path, sizeof path, "%s/garbage.so", tmpdir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("not an ELF file\n", f);
    fclose(f);
    int rc = fnw_plugins_load_dir(&r, tmpdir, 1, FNW_LOG_ERROR, &err);
    rm_tmpdir();
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err.msg, "cannot load plugin") && strstr(err.msg, path), "%s", err.msg);
}
END_TEST

START_TEST(test_init_fails)
{
    fnw_registry r;
    fnw_error err;
    char path[512];
    reg_with_builtins(&r);
    size_t before = r.count;
    plugin_path("init_fails", path, sizeof path);
    ck_assert_int_eq(fnw_plugins_load_file(&r, path, FNW_LOG_ERROR, &err), -1);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "init failed: init_fails refuses to start"),
                  "%s", err.msg);
    ck_assert_uint_eq(r.count, before);
}
END_TEST

START_TEST(test_duplicate_name)
{
    fnw_registry r;
    fnw_error err;
    char path[512];
    reg_with_builtins(&r);
    plugin_path("dup_name", path, sizeof path);
    ck_assert_int_eq(fnw_plugins_load_file(&r, path, FNW_LOG_ERROR, &err), -1);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "operation 'echo' is already registered"),
                  "%s", err.msg);
    /* the same plugin twice: its second load clashes with its first */
    plugin_path("good_a", path, sizeof path);
    ck_assert_msg(fnw_plugins_load_file(&r, path, FNW_LOG_ERROR, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(fnw_plugins_load_file(&r, path, FNW_LOG_ERROR, &err), -1);
    ck_assert_msg(strstr(err.msg, "operation 'plug_a' is already registered"), "%s", err.msg);
}
END_TEST

START_TEST(test_bad_plugin_stops_the_directory)
{
    fnw_registry r;
    fnw_error err;
    reg_with_builtins(&r);
    make_tmpdir();
    link_plugin("good_a", "1.so");
    link_plugin("init_fails", "2.so");
    link_plugin("good_b", "3.so");
    int rc = fnw_plugins_load_dir(&r, tmpdir, 0, FNW_LOG_ERROR, &err);
    rm_tmpdir();
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err.msg, "/2.so"), "%s", err.msg);
    ck_assert_int_eq(index_of(&r, "plug_b"), -1);
}
END_TEST

START_TEST(test_missing_dir)
{
    fnw_registry r;
    fnw_error err;
    reg_with_builtins(&r);
    size_t before = r.count;
    ck_assert_int_eq(fnw_plugins_load_dir(&r, "/nonexistent/fnw-plugins", 0, FNW_LOG_ERROR, &err), 0);
    ck_assert_int_eq(fnw_plugins_load_dir(&r, "/nonexistent/fnw-plugins", 1, FNW_LOG_ERROR, &err), -1);
    ck_assert_msg(strstr(err.msg, "/nonexistent/fnw-plugins") && strstr(err.msg, "No such file"), "%s", err.msg);
    ck_assert_int_eq(fnw_plugins_load_dir(&r, "", 1, FNW_LOG_ERROR, &err), 0);
    ck_assert_uint_eq(r.count, before);
}
END_TEST

/* fnw_step_build for a function whose OperationSpec names operation. */
static int build_step_for(const fnw_registry *r, const char *operation, fnw_error *err)
{
    Fnworker__V1__OperationSpec os;
    fnworker__v1__operation_spec__init(&os);
    os.operation = (char *)operation;
    uint8_t buf[512];
    size_t n = fnworker__v1__operation_spec__pack(&os, buf);
    ck_assert_uint_le(n, sizeof buf);
    pb_UDSF f;
    org__apache__flink__fn_execution__v1__user_defined_data_stream_function__init(&f);
    f.payload.data = buf;
    f.payload.len = n;
    fnw_plan_step st;
    memset(&st, 0, sizeof st);
    int rc = fnw_step_build(&f, "t1", r, &st, err);
    fnw_step_free(&st);
    return rc;
}

START_TEST(test_payload_names_never_loaded)
{
    fnw_registry r;
    fnw_error err;
    reg_with_builtins(&r);
    make_tmpdir();
    link_plugin("good_a", "10-a.so");
    ck_assert_int_eq(fnw_plugins_load_dir(&r, tmpdir, 1, FNW_LOG_ERROR, &err), 0);
    rm_tmpdir();
    ck_assert_int_eq(dlopen_calls, 1);                  /* the wrapper sees the loader's dlopen */
    char real_so[512], abs[4096];
    plugin_path("good_b", real_so, sizeof real_so);
    ck_assert_ptr_nonnull(realpath(real_so, abs));
    const char *names[] = { "../x", "/tmp/evil.so", "a/b", "../../plugins/good_b.so", "10-a.so", abs,
                            "./plug_a", "plug_a/" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        memset(&err, 0, sizeof err);
        ck_assert_int_eq(build_step_for(&r, names[i], &err), -1);
        char want[4200];
        snprintf(want, sizeof want, "unknown operation '%s'", names[i]);
        ck_assert_msg(strstr(err.msg, want), "'%s' for operation '%s'", err.msg, names[i]);
    }
    ck_assert_int_eq(dlopen_calls, 1);
    ck_assert_int_eq(index_of(&r, "plug_b"), -1);       /* good_b.so never ran */
    ck_assert_int_eq(build_step_for(&r, "plug_a", &err), 0);   /* the loaded plugin's name works */
}
END_TEST

START_TEST(test_which_dir)
{
    char buf[4096];
    int named = -1;
    unsetenv("FNW_PLUGINS_DIR");
    const char *d = fnw_plugins_dir(NULL, buf, sizeof buf, &named);
    ck_assert_int_eq(named, 0);
    size_t n = strlen(d);
    ck_assert_msg(n > 14 && strcmp(d + n - 14, "worker/plugins") == 0, "%s", d);  /* beside build/tests/worker/test_plugins */
    setenv("FNW_PLUGINS_DIR", "/from/env", 1);
    ck_assert_str_eq(fnw_plugins_dir(NULL, buf, sizeof buf, &named), "/from/env");
    ck_assert_int_eq(named, 1);
    ck_assert_str_eq(fnw_plugins_dir("/from/flag", buf, sizeof buf, &named), "/from/flag");
    ck_assert_int_eq(named, 1);
    unsetenv("FNW_PLUGINS_DIR");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("plugins");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_dir_loads_in_name_order);
    tcase_add_test(tc, test_wrong_abi_never_calls_init);
    tcase_add_test(tc, test_missing_entry_point);
    tcase_add_test(tc, test_dlopen_error_names_file);
    tcase_add_test(tc, test_init_fails);
    tcase_add_test(tc, test_duplicate_name);
    tcase_add_test(tc, test_bad_plugin_stops_the_directory);
    tcase_add_test(tc, test_missing_dir);
    tcase_add_test(tc, test_which_dir);
    tcase_add_test(tc, test_payload_names_never_loaded);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
