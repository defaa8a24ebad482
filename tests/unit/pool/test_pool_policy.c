/* tests/unit/pool/test_pool_policy.c — what a launcher request must satisfy
 * before the pool starts a worker (issue 19): the worker flags it may carry
 * (pool/worker_args.c: --semi_persist_dir and the log level always, what
 * the operator allows, never --plugins-dir, --id, --worker_id,
 * --provision_endpoint, any --*_endpoint or --connect-timeout, and only as
 * --name=value); the launcher token (pool/pool_token.c: read from --token-file,
 * FNW_POOL_TOKEN_FILE or FNW_POOL_TOKEN, trailing newlines dropped, too
 * short or with spaces refused, compared exactly: a prefix, a longer
 * string or nothing is refused); the request's token field (pool/wire.c);
 * and which HTTP clients count as loopback for /debug/state
 * (pool/pool_http.c). */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/pool_http.h"
#include "pool/pool_token.h"
#include "pool/wire.h"
#include "pool/worker_args.h"
#include "tests/unit/check_run.h"

static fnw_error err;

static int check_args(const fnw_worker_args_allow *a, const char *arg)
{
    memset(&err, 0, sizeof err);
    const char *args[] = {arg};
    return fnw_worker_args_check(a, args, 1, &err);
}

START_TEST(worker_flags_allowlist)
{
    fnw_worker_args_allow a = {{0}, 0};
    ck_assert_int_eq(check_args(&a, "--semi_persist_dir=/tmp"), 0);
    ck_assert_int_eq(check_args(&a, "--log-level=debug"), 0);
    ck_assert_int_eq(check_args(&a, "--log_level=INFO"), 0);
    static const char *const never[] = {
        "--plugins-dir=/x", "--id=y", "--worker_id=y", "--provision_endpoint=h:1",
        "--control_endpoint=h:1", "--logging_endpoint=h:1", "--artifact_endpoint=h:1",
        "--anything_endpoint=h:1", "--connect-timeout=99999", "--plugins-dir",
        "--relay-fd=5", "--relay=on", "--relay=off"};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
        ck_assert_int_eq(check_args(&a, never[i]), -1);
        ck_assert_msg(strstr(err.msg, "a launcher may not set it"), "%s: %s", never[i], err.msg);
    }
    ck_assert_int_eq(check_args(&a, "--flush-ms=1"), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "arg --flush-ms is refused: not a flag a launcher may pass"));
    ck_assert_int_eq(check_args(&a, "--log-levelx=1"), -1);     /* no prefix matching */
    ck_assert_int_eq(check_args(&a, "--log-level"), -1);        /* the value could be the next arg */
    ck_assert_ptr_nonnull(strstr(err.msg, "give it as --log-level=VALUE"));
    /* the operator widens it, but never to a flag no client may set */
    ck_assert_int_eq(fnw_worker_args_allow_add(&a, "--flush-ms", &err), 0);
    ck_assert_int_eq(check_args(&a, "--flush-ms=1"), 0);
    ck_assert_int_eq(fnw_worker_args_allow_add(&a, "--plugins-dir", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--plugins-dir can never come from a launcher"));
    ck_assert_int_eq(fnw_worker_args_allow_add(&a, "--x_endpoint", &err), -1);
    ck_assert_int_eq(fnw_worker_args_allow_add(&a, "flush", &err), -1);
    ck_assert_int_eq(fnw_worker_args_allow_add(&a, "--a=b", &err), -1);
    /* the first refused arg of several is named */
    const char *args[] = {"--log-level=info", "--id=z", "--plugins-dir=/x"};
    ck_assert_int_eq(fnw_worker_args_check(&a, args, 3, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "arg --id is refused"));
}
END_TEST

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

START_TEST(token_sources_and_checks)
{
    fnw_pool_token t;
    snprintf(dir, sizeof dir, "/tmp/fnw-token-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    unsetenv(FNW_POOL_TOKEN_ENV);
    unsetenv(FNW_POOL_TOKEN_FILE_ENV);
    ck_assert_int_eq(fnw_pool_token_load(&t, NULL, &err), 0);
    ck_assert_int_eq(t.set, 0);
    ck_assert_int_eq(fnw_pool_token_accepts(&t, NULL), 1);        /* none asked for */

    ck_assert_int_eq(fnw_pool_token_load(&t, write_file("a", "0123456789abcdef-A\n\n"), &err), 0);
    ck_assert_int_eq(t.set, 1);
    ck_assert_int_eq(fnw_pool_token_accepts(&t, "0123456789abcdef-A"), 1);
    ck_assert_int_eq(fnw_pool_token_accepts(&t, "0123456789abcdef-"), 0);
    ck_assert_int_eq(fnw_pool_token_accepts(&t, "0123456789abcdef-AB"), 0);
    ck_assert_int_eq(fnw_pool_token_accepts(&t, "0123456789abcdef-B"), 0);
    ck_assert_int_eq(fnw_pool_token_accepts(&t, ""), 0);
    ck_assert_int_eq(fnw_pool_token_accepts(&t, NULL), 0);

    /* the file flag wins over the environment; the file variable over the value */
    setenv(FNW_POOL_TOKEN_ENV, "from-the-environment-1", 1);
    setenv(FNW_POOL_TOKEN_FILE_ENV, write_file("b", "from-the-file-variable"), 1);
    ck_assert_int_eq(fnw_pool_token_load(&t, write_file("c", "from-the-token-file-flag"), &err), 0);
    ck_assert_int_eq(fnw_pool_token_accepts(&t, "from-the-token-file-flag"), 1);
    ck_assert_int_eq(fnw_pool_token_load(&t, NULL, &err), 0);
    ck_assert_int_eq(fnw_pool_token_accepts(&t, "from-the-file-variable"), 1);
    unsetenv(FNW_POOL_TOKEN_FILE_ENV);
    ck_assert_int_eq(fnw_pool_token_load(&t, NULL, &err), 0);
    ck_assert_int_eq(fnw_pool_token_accepts(&t, "from-the-environment-1"), 1);
    unsetenv(FNW_POOL_TOKEN_ENV);

    ck_assert_int_eq(fnw_pool_token_load(&t, write_file("d", "short\n"), &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "shorter than 16 characters"));
    ck_assert_int_eq(t.set, 0);
    ck_assert_int_eq(fnw_pool_token_load(&t, write_file("e", "with a space inside it"), &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "space or control character at byte 4"));
    ck_assert_ptr_null(strstr(err.msg, "inside"));               /* never the value */
    ck_assert_int_eq(fnw_pool_token_load(&t, "/nonexistent/token", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--token-file /nonexistent/token"));
    fnw_pool_token_clear(&t);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(request_token_field)
{
    static fnw_wire_request r;
    const char *text = "FNWPOOL 1 START\nid=a\nprovision_endpoint=h:1\ntoken=secret-1\n\n";
    size_t used = 0;
    fnw_wire_request_init(&r);
    ck_assert_int_eq(fnw_wire_request_feed(&r, text, strlen(text), &used, &err), 1);
    ck_assert_str_eq(r.token, "secret-1");
    const char *twice = "FNWPOOL 1 START\nid=a\nprovision_endpoint=h:1\ntoken=x\ntoken=y\n\n";
    fnw_wire_request_init(&r);
    ck_assert_int_eq(fnw_wire_request_feed(&r, twice, strlen(twice), &used, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "field 'token' given twice"));
    const char *none = "FNWPOOL 1 START\nid=a\nprovision_endpoint=h:1\n\n";
    fnw_wire_request_init(&r);
    ck_assert_int_eq(fnw_wire_request_feed(&r, none, strlen(none), &used, &err), 1);
    ck_assert_ptr_null(r.token);
}
END_TEST

static int loopback4(const char *a)
{
    struct sockaddr_in s = {.sin_family = AF_INET};
    inet_pton(AF_INET, a, &s.sin_addr);
    return fnw_pool_http_is_loopback((struct sockaddr *)&s);
}

static int loopback6(const char *a)
{
    struct sockaddr_in6 s = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, a, &s.sin6_addr);
    return fnw_pool_http_is_loopback((struct sockaddr *)&s);
}

START_TEST(debug_state_clients)
{
    ck_assert_int_eq(loopback4("127.0.0.1"), 1);
    ck_assert_int_eq(loopback4("127.9.8.7"), 1);
    ck_assert_int_eq(loopback4("10.0.0.1"), 0);
    ck_assert_int_eq(loopback4("128.0.0.1"), 0);
    ck_assert_int_eq(loopback4("0.0.0.0"), 0);
    ck_assert_int_eq(loopback6("::1"), 1);
    ck_assert_int_eq(loopback6("::ffff:127.0.0.1"), 1);
    ck_assert_int_eq(loopback6("::ffff:10.1.2.3"), 0);
    ck_assert_int_eq(loopback6("fe80::1"), 0);
    ck_assert_int_eq(fnw_pool_http_is_loopback(NULL), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pool_policy");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, worker_flags_allowlist);
    tcase_add_test(tc, token_sources_and_checks);
    tcase_add_test(tc, request_token_field);
    tcase_add_test(tc, debug_state_clients);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
