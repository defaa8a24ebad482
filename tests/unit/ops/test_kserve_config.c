/* tests/unit/ops/test_kserve_config.c — the kserve operation's options read at
 * open: defaults, every option parsed, the secret read from the named
 * environment variable (and never put in a message), and each mistake
 * failing with a message that names the option. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kserve/kserve_config.h"
#include "tests/unit/binding_build.h"
#include "tests/unit/check_run.h"

static fnw_type *g_in, *g_out;

static void types_up(void)
{
    g_in = R(2, "id", T(FNW_LONG), "f", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT)));
    g_out = R(2, "id", T(FNW_LONG), "y", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT)));
}

static void types_down(void)
{
    fnw_type_free(g_in);
    fnw_type_free(g_out);
}

/* Options from "k=v" strings, with target, model and mapping defaults
 * unless the list overrides them (a key given with no '=' is dropped). */
static int config(fnw_kserve_config *c, fnw_error *err, int n, const char *const *kv)
{
    static char keys[32][64], vals[32][256];
    static fnw_option items[32];
    const char *base[] = { "target=triton:8001", "model_name=linear", "inputs=x:FP32[4]=f", "outputs=y=y" };
    size_t count = 0;
    for (int b = 0; b < 4 + n; b++) {
        const char *s = b < 4 ? base[b] : kv[b - 4];
        const char *eq = strchr(s, '=');
        size_t kl = eq ? (size_t)(eq - s) : strlen(s);
        size_t at = count;
        for (size_t i = 0; i < count; i++)
            if (strlen(keys[i]) == kl && !strncmp(keys[i], s, kl))
                at = i;
        snprintf(keys[at], sizeof keys[at], "%.*s", (int)kl, s);
        snprintf(vals[at], sizeof vals[at], "%s", eq ? eq + 1 : "");
        items[at] = (fnw_option){ keys[at], eq ? vals[at] : NULL };
        if (at == count)
            count++;
    }
    size_t w = 0;   /* drop the removed ones */
    for (size_t i = 0; i < count; i++)
        if (items[i].value)
            items[w++] = items[i];
    fnw_options o = { w, items };
    fnw_op_env env = { NULL, &o, g_in, g_out, "t1", 1, 64, 0, NULL };
    return fnw_kserve_config_init(c, &env, "kserve", err);
}

START_TEST(test_defaults_and_values)
{
    fnw_kserve_config c;
    fnw_error err;
    ck_assert_msg(config(&c, &err, 0, NULL) == 0, "%s", err.msg);
    ck_assert_str_eq(c.target, "triton:8001");
    ck_assert_str_eq(c.model_name, "linear");
    ck_assert_str_eq(c.model_version, "");
    ck_assert_int_eq(c.channels, 1);
    ck_assert_int_eq(c.check_metadata, 1);
    ck_assert_int_eq(c.max_message_bytes, 64 << 20);
    ck_assert_int_eq(c.tls, 0);
    ck_assert_ptr_null(c.tls_ca_file);
    ck_assert_ptr_null(c.auth_header);
    ck_assert_uint_eq(fnw_tensor_plan_inputs(c.plan), 1);
    ck_assert_uint_eq(fnw_tensor_params_count(c.params), 0);
    fnw_kserve_config_free(&c);

    setenv("FNW_SECRET_TEST_KSERVE_TOKEN", "Bearer s3cret", 1);
    const char *kv[] = { "target=[::1]:9000", "model_version=3", "channels=4", "check_metadata=false",
                         "max_message_bytes=1048576", "tls=true", "tls_ca_file=/dev/null",
                         "auth_header_env=FNW_SECRET_TEST_KSERVE_TOKEN", "parameters=priority=2, tag='a'" };
    ck_assert_msg(config(&c, &err, 9, kv) == 0, "%s", err.msg);
    ck_assert_str_eq(c.target, "[::1]:9000");
    ck_assert_str_eq(c.model_version, "3");
    ck_assert_int_eq(c.channels, 4);
    ck_assert_int_eq(c.check_metadata, 0);
    ck_assert_int_eq(c.max_message_bytes, 1048576);
    ck_assert_int_eq(c.tls, 1);
    ck_assert_str_eq(c.tls_ca_file, "/dev/null");
    ck_assert_str_eq(c.auth_header, "Bearer s3cret");
    ck_assert_uint_eq(fnw_tensor_params_count(c.params), 2);
    fnw_kserve_config_free(&c);
    ck_assert_msg(config(&c, &err, 1, (const char *[]){ "target=unix:/run/triton.sock" }) == 0, "%s", err.msg);
    fnw_kserve_config_free(&c);
}
END_TEST

static void expect_error(int n, const char *const *kv, const char *want)
{
    fnw_kserve_config c;
    fnw_error err = { "" };
    ck_assert_int_eq(config(&c, &err, n, kv), -1);
    ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'", err.msg, want);
    ck_assert_msg(!strstr(err.msg, "s3cret"), "'%s' shows the secret", err.msg);
}

#define E1(opt, want) expect_error(1, (const char *[]){ opt }, want)

START_TEST(test_errors)
{
    E1("model=x", "unknown option 'model' for operation 'kserve'; known options: target, model_name");
    E1("target", "operation 'kserve' needs option 'target'");
    E1("model_name", "operation 'kserve' needs option 'model_name'");
    E1("target=triton", "option 'target' of operation 'kserve' is 'triton'; give host:port");
    E1("target=triton:0", "is 'triton:0'");
    E1("target=triton:65536", "is 'triton:65536'");
    E1("target=:8001", "is ':8001'");
    E1("target=::1:8001", "is '::1:8001'");
    E1("target=http://triton:8001", "is 'http://triton:8001'");
    E1("target=[::1]8001", "is '[::1]8001'");
    E1("model_version=a\nb", "holds a control character");
    E1("channels=17", "channels");
    E1("max_message_bytes=100", "max_message_bytes");
    E1("check_metadata=maybe", "check_metadata");
    E1("tls_ca_file=/dev/null", "option 'tls_ca_file' of operation 'kserve' needs option 'tls' true");
    expect_error(2, (const char *[]){ "tls=true", "tls_ca_file=/nonexistent/ca.pem" },
                 "'/nonexistent/ca.pem' is not a readable file");
    E1("auth_header_env=1BAD", "'1BAD', not an environment variable name");
    unsetenv("FNW_SECRET_TEST_KSERVE_UNSET");
    E1("auth_header_env=FNW_SECRET_TEST_KSERVE_UNSET", "environment variable 'FNW_SECRET_TEST_KSERVE_UNSET' is not set");
    E1("auth_header_env=PATH", "environment variable 'PATH' is not one the operator allows");
    E1("inputs", "needs options 'inputs' and 'outputs'");
    E1("inputs=x:FP32=f", "operation 'kserve': option 'inputs': tensor 'x' takes field 'f', an array");
    E1("parameters=a=1,a=2", "operation 'kserve': option 'parameters' gives 'a' twice");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kserve_config");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, types_up, types_down);
    tcase_add_test(tc, test_defaults_and_values);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
