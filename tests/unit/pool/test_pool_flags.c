/* tests/unit/pool/test_pool_flags.c — `fnworker pool` flags (pool/pool_flags.c)
 * and where the pool's endpoints listen (pool/listen.c): the HTTP endpoint
 * (/metrics, /healthz, /debug/state) is on the loopback interface unless
 * --http-listen says otherwise, and really binds 127.0.0.1; --http-listen
 * takes any host:port or "off"; the launcher and gRPC endpoints have no
 * default at all; an address without a host is refused rather than taken
 * as "every interface"; values and unknown flags are checked. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pool/listen.h"
#include "pool/pool_flags.h"
#include "tests/unit/check_run.h"

static fnw_pool_flags f;
static fnw_error err;

static int parse(int argc, const char *const *argv)
{
    memset(&err, 0, sizeof err);
    return fnw_pool_flags_parse(&f, argc, (char **)argv, &err);
}

START_TEST(http_defaults_to_loopback)
{
    const char *argv[] = { "pool", "--listen", "127.0.0.1:0" };
    ck_assert_int_eq(parse(3, argv), 0);
    ck_assert_str_eq(f.http_listen, "127.0.0.1:9464");
    ck_assert_ptr_null(f.grpc_listen);
    ck_assert_str_eq(f.listen, "127.0.0.1:0");
    const char *grpc_only[] = { "pool", "--grpc-listen=127.0.0.1:0" };
    ck_assert_int_eq(parse(2, grpc_only), 0);
    ck_assert_str_eq(f.http_listen, "127.0.0.1:9464");
    ck_assert_ptr_null(f.listen);
}
END_TEST

/* The default's host, bound with port 0, is the loopback address. */
START_TEST(default_host_binds_loopback_only)
{
    const char *argv[] = { "pool", "--listen", "127.0.0.1:0" };
    ck_assert_int_eq(parse(3, argv), 0);
    char host[64], port[16], addr[96], bound[128];
    ck_assert_int_eq(fnw_listen_split(f.http_listen, host, sizeof host, port, sizeof port), 0);
    snprintf(addr, sizeof addr, "%s:0", host);
    int fd = fnw_listen_tcp(addr, bound, sizeof bound, &err);
    ck_assert_msg(fd >= 0, "%s", err.msg);
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    ck_assert_int_eq(sa.sin_family, AF_INET);
    ck_assert_uint_eq(ntohl(sa.sin_addr.s_addr), INADDR_LOOPBACK);
    ck_assert_msg(strncmp(bound, "127.0.0.1:", 10) == 0, "%s", bound);
    close(fd);
}
END_TEST

START_TEST(http_listen_changes_or_disables_it)
{
    const char *eq[] = { "pool", "--listen=127.0.0.1:0", "--http-listen=0.0.0.0:9000" };
    ck_assert_int_eq(parse(3, eq), 0);
    ck_assert_str_eq(f.http_listen, "0.0.0.0:9000");
    const char *sep[] = { "pool", "--http-listen", "[::1]:9001", "--listen", "127.0.0.1:0" };
    ck_assert_int_eq(parse(5, sep), 0);
    ck_assert_str_eq(f.http_listen, "[::1]:9001");
    const char *off[] = { "pool", "--listen=127.0.0.1:0", "--http-listen=off" };
    ck_assert_int_eq(parse(3, off), 0);
    ck_assert_ptr_null(f.http_listen);
}
END_TEST

START_TEST(no_host_is_refused)
{
    char bound[128];
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(fnw_listen_tcp(":0", bound, sizeof bound, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "':0' is not host:port"));
    ck_assert_int_eq(fnw_listen_tcp("[]:0", bound, sizeof bound, &err), -1);
    ck_assert_int_eq(fnw_listen_tcp("127.0.0.1", bound, sizeof bound, &err), -1);
}
END_TEST

START_TEST(bad_values_name_the_flag)
{
    const char *none[] = { "pool" };
    ck_assert_int_eq(parse(1, none), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--listen"));
    const char *missing[] = { "pool", "--listen=127.0.0.1:0", "--http-listen" };
    ck_assert_int_eq(parse(3, missing), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--http-listen needs a value"));
    const char *workers[] = { "pool", "--listen=127.0.0.1:0", "--max-workers=0" };
    ck_assert_int_eq(parse(3, workers), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--max-workers"));
    const char *unknown[] = { "pool", "--listen=127.0.0.1:0", "--http-bind=0.0.0.0:1" };
    ck_assert_int_eq(parse(3, unknown), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown flag '--http-bind=0.0.0.0:1'"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pool_flags");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, http_defaults_to_loopback);
    tcase_add_test(tc, default_host_binds_loopback_only);
    tcase_add_test(tc, http_listen_changes_or_disables_it);
    tcase_add_test(tc, no_host_is_refused);
    tcase_add_test(tc, bad_values_name_the_flag);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
