/* tests/unit/worker/test_boot.c — boot without a network: the provisioning retry
 * schedule on a fake clock (0.1 s doubling while under 2 s, so it settles
 * at 3.2 s, until the deadline; the calls' own timeouts never drop under
 * their floors); over a fake transport that always fails, boot retries no
 * sooner than the schedule says, bounds each call by the time left, and
 * fails once past --connect-timeout; a call that cannot start fails boot
 * at once; a stopped boot reports nothing; and what boot takes from a
 * GetProvisionInfoResponse (the endpoints, the log level from pipeline
 * options unless --log-level was given) or refuses (bytes that are not
 * one). */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <stdio.h>
#include <string.h>

#include "worker/boot.h"
#include "worker/log_options.h"

START_TEST(retry_schedule_doubles_then_settles_until_the_deadline)
{
    fnw_boot_backoff bo;
    double now = 1000.0;
    fnw_boot_backoff_init(&bo, now, 10.0);
    static const double want[] = {0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 3.2};
    double delay;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        ck_assert_int_eq(fnw_boot_backoff_next(&bo, now, &delay), 0);
        ck_assert_double_eq_tol(delay, want[i], 1e-9);
        now += 0.5;              /* attempts end at any time before the deadline */
    }
    ck_assert_int_eq(fnw_boot_backoff_next(&bo, 1009.999, &delay), 0);
    ck_assert_int_eq(fnw_boot_backoff_next(&bo, 1010.0, &delay), -1);   /* at the deadline: give up */
    ck_assert_int_eq(fnw_boot_backoff_next(&bo, 1011.0, &delay), -1);
}
END_TEST

START_TEST(time_left_never_drops_under_its_floor)
{
    fnw_boot_backoff bo;
    fnw_boot_backoff_init(&bo, 50.0, 60.0);
    ck_assert_double_eq_tol(fnw_boot_backoff_left(&bo, 50.0, 0.2), 60.0, 1e-9);
    ck_assert_double_eq_tol(fnw_boot_backoff_left(&bo, 109.0, 1.0), 1.0, 1e-9);
    ck_assert_double_eq_tol(fnw_boot_backoff_left(&bo, 109.9, 0.2), 0.2, 1e-9);
    ck_assert_double_eq_tol(fnw_boot_backoff_left(&bo, 200.0, 0.2), 0.2, 1e-9);
}
END_TEST

/* ---- retries over a fake transport -------------------------------------------------- */

#define MAX_ATTEMPTS 32

typedef struct flaky {
    struct ev_loop *loop;
    int refuse;                       /* the call cannot start */
    int attempts, failed, connected;
    double asked[MAX_ATTEMPTS];       /* loop time of each attempt */
    double answered[MAX_ATTEMPTS];    /* loop time of each failure delivered */
    double timeout[MAX_ATTEMPTS];
    ev_timer answer;                  /* delivers the failure later, as gRPC would */
    fnw_unary_cb cb;
    void *user;
} flaky;

static void flaky_answer(struct ev_loop *loop, ev_timer *t, int revents)
{
    flaky *fk = t->data;
    fk->answered[fk->attempts - 1] = ev_now(loop);
    fk->cb(fk->user, GRPC_STATUS_UNAVAILABLE, "connection refused", grpc_empty_slice());
}

static int flaky_provision(void *ctx, const char *endpoint, grpc_slice request, double timeout_s,
                           fnw_unary_cb cb, void *user)
{
    flaky *fk = ctx;
    grpc_slice_unref(request);
    ck_assert_str_eq(endpoint, "localhost:1");
    ck_assert_int_lt(fk->attempts, MAX_ATTEMPTS);
    fk->asked[fk->attempts] = ev_now(fk->loop);
    fk->timeout[fk->attempts] = timeout_s;
    fk->attempts++;
    if (fk->refuse)
        return -1;
    fk->cb = cb;
    fk->user = user;
    ev_timer_set(&fk->answer, 0, 0);
    ev_timer_start(fk->loop, &fk->answer);
    return 0;
}

static const fnw_boot_transport flaky_transport = {flaky_provision};

static void flaky_ready(void *user, grpc_channel *ch)
{
    ((flaky *)user)->connected++;
}

static void flaky_failed(void *user)
{
    flaky *fk = user;
    fk->failed++;
    ev_break(fk->loop, EVBREAK_ALL);
}

static const fnw_boot_events flaky_events = {flaky_ready, flaky_failed};

static void guard_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    ck_abort_msg("boot neither failed nor stopped within 30 s");
}

typedef struct flaky_fixture {
    flaky fk;
    fnw_logger lg;
    fnw_flags flags;
    fnw_rpc rpc;
    fnw_boot boot;
    ev_timer guard;
} flaky_fixture;

static void flaky_init(flaky_fixture *f, double connect_timeout_s)
{
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
    memset(f, 0, sizeof *f);
    f->fk.loop = ev_loop_new(EVFLAG_AUTO);
    ev_timer_init(&f->fk.answer, flaky_answer, 0, 0);
    f->fk.answer.data = &f->fk;
    ev_timer_init(&f->guard, guard_cb, 30, 0);
    ev_timer_start(f->fk.loop, &f->guard);
    ev_unref(f->fk.loop);            /* the guard alone does not keep the loop running */
    fnw_log_init(&f->lg, f->fk.loop, FNW_LOG_INFO);
    f->flags.provision_endpoint = "localhost:1";
    f->flags.connect_timeout_s = connect_timeout_s;
    fnw_rpc_init(&f->rpc, NULL, "worker_id", "w-1", NULL);
    fnw_boot_init(&f->boot, f->fk.loop, &f->flags, &f->lg, &f->rpc, &flaky_events, &f->fk);
    fnw_boot_use_transport(&f->boot, &flaky_transport, &f->fk);
}

static void flaky_free(flaky_fixture *f)
{
    fnw_boot_stop(&f->boot);
    fnw_boot_free(&f->boot);
    fnw_log_free(&f->lg);
    ev_ref(f->fk.loop);
    ev_timer_stop(f->fk.loop, &f->guard);
    ev_timer_stop(f->fk.loop, &f->fk.answer);
    ev_loop_destroy(f->fk.loop);
}

START_TEST(provisioning_retries_on_schedule_then_fails_at_the_deadline)
{
    flaky_fixture f;
    flaky_init(&f, 1.0);
    double start = ev_now(f.fk.loop);
    fnw_boot_start(&f.boot);
    ev_run(f.fk.loop, 0);
    ck_assert_int_eq(f.fk.failed, 1);
    ck_assert_int_eq(f.fk.connected, 0);
    ck_assert_int_ge(f.fk.attempts, 2);
    static const double schedule[] = {0.1, 0.2, 0.4, 0.8, 1.6, 3.2};
    for (int i = 0; i < f.fk.attempts; i++) {
        /* each call is bounded by what is left, never under 0.2 s */
        ck_assert_double_le_tol(f.fk.timeout[i], 1.0, 1e-6);
        ck_assert_double_ge_tol(f.fk.timeout[i], 0.2, 1e-6);
        if (i > 0)   /* never sooner than the schedule after the failure */
            ck_assert_double_ge_tol(f.fk.asked[i] - f.fk.answered[i - 1], schedule[i - 1], 1e-3);
    }
    /* the last failure came at or after the deadline, the others before it */
    ck_assert_double_ge_tol(f.fk.answered[f.fk.attempts - 1] - start, 1.0, 1e-6);
    for (int i = 0; i + 1 < f.fk.attempts; i++)
        ck_assert_double_lt(f.fk.answered[i] - start, 1.0);
    flaky_free(&f);
}
END_TEST

START_TEST(a_provision_call_that_cannot_start_fails_boot_at_once)
{
    flaky_fixture f;
    flaky_init(&f, 60);
    f.fk.refuse = 1;
    fnw_boot_start(&f.boot);
    ck_assert_int_eq(f.fk.attempts, 1);
    ck_assert_int_eq(f.fk.failed, 1);
    flaky_free(&f);
}
END_TEST

START_TEST(a_stopped_boot_reports_nothing)
{
    flaky_fixture f;
    flaky_init(&f, 60);
    fnw_boot_start(&f.boot);
    fnw_boot_stop(&f.boot);
    ev_run(f.fk.loop, 0);          /* the failure is delivered; no retry follows */
    ck_assert_int_eq(f.fk.attempts, 1);
    ck_assert_int_eq(f.fk.failed, 0);
    ck_assert_int_eq(f.fk.connected, 0);
    flaky_free(&f);
}
END_TEST

/* gRPC's status and details become a reason a user can act on. */
START_TEST(connection_failures_are_named)
{
    char why[256];
    ck_assert_int_eq(fnw_boot_failure_reason(GRPC_STATUS_UNAVAILABLE, "failed to connect to all addresses; "
                     "last error: UNKNOWN: ipv4:127.0.0.1:1: Failed to connect to remote host: Connection "
                     "refused", why, sizeof why), 1);
    ck_assert_str_eq(why, "connection refused");
    ck_assert_int_eq(fnw_boot_failure_reason(GRPC_STATUS_UNAVAILABLE, "DNS resolution failed for x.invalid:1: "
                     "C-ares status is not ARES_SUCCESS qtype=A name=x.invalid is_balancer=0: Domain name not "
                     "found", why, sizeof why), 1);
    ck_assert_str_eq(why, "the host name does not resolve");
    ck_assert_int_eq(fnw_boot_failure_reason(GRPC_STATUS_DEADLINE_EXCEEDED, "Deadline Exceeded", why,
                     sizeof why), 1);
    ck_assert_str_eq(why, "no answer (the connection or the call timed out)");
    /* the server answered: not a connection failure, its status is kept */
    ck_assert_int_eq(fnw_boot_failure_reason(GRPC_STATUS_UNIMPLEMENTED, "Method not found", why, sizeof why), 0);
    ck_assert_str_eq(why, "status 12: Method not found");
}
END_TEST

/* ---- reading the provision info ----------------------------------------------------- */

typedef struct fixture {
    struct ev_loop *loop;
    fnw_logger lg;
    fnw_flags flags;
    fnw_rpc rpc;
    fnw_boot boot;
} fixture;

static void boot_ready(void *user, grpc_channel *ch)
{
    ck_abort_msg("boot connected in a test that only reads");
}

static void boot_failed(void *user)
{
    ck_abort_msg("boot failed in a test that only reads");
}

static const fnw_boot_events events = {boot_ready, boot_failed};

static void fx_init(fixture *f, const char *cli_level)
{
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
    memset(f, 0, sizeof *f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    fnw_log_init(&f->lg, f->loop, FNW_LOG_INFO);
    f->flags.log_level = cli_level;
    f->flags.connect_timeout_s = 60;
    fnw_rpc_init(&f->rpc, NULL, "worker_id", "w-1", NULL);
    fnw_boot_init(&f->boot, f->loop, &f->flags, &f->lg, &f->rpc, &events, f);
}

static void fx_free(fixture *f)
{
    fnw_boot_free(&f->boot);
    fnw_log_free(&f->lg);
    ev_loop_destroy(f->loop);
}

/* A GetProvisionInfoResponse naming both endpoints and, in pipeline
 * options, default_sdk_harness_log_level=DEBUG; returns its size. */
static size_t provision_bytes(uint8_t *buf)
{
    pb_ApiServiceDescriptor ctl = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    ctl.url = "localhost:5001";
    pb_ApiServiceDescriptor log = ORG__APACHE__BEAM__MODEL__PIPELINE__V1__API_SERVICE_DESCRIPTOR__INIT;
    log.url = "localhost:5002";
    Google__Protobuf__Value v = GOOGLE__PROTOBUF__VALUE__INIT;
    v.kind_case = GOOGLE__PROTOBUF__VALUE__KIND_STRING_VALUE;
    v.string_value = "DEBUG";
    Google__Protobuf__Struct__FieldsEntry e = GOOGLE__PROTOBUF__STRUCT__FIELDS_ENTRY__INIT;
    e.key = FNW_LOG_OPTION_LEVEL;
    e.value = &v;
    Google__Protobuf__Struct__FieldsEntry *ep = &e;
    Google__Protobuf__Struct opts = GOOGLE__PROTOBUF__STRUCT__INIT;
    opts.n_fields = 1;
    opts.fields = &ep;
    pb_ProvisionInfo info = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROVISION_INFO__INIT;
    info.control_endpoint = &ctl;
    info.logging_endpoint = &log;
    info.pipeline_options = &opts;
    pb_GetProvisionInfoResponse r = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__GET_PROVISION_INFO_RESPONSE__INIT;
    r.info = &info;
    return PB(get_provision_info_response__pack)(&r, buf);
}

START_TEST(provision_info_names_the_endpoints_and_the_level)
{
    fixture f;
    fx_init(&f, NULL);
    uint8_t buf[512];
    size_t n = provision_bytes(buf);
    ck_assert_ptr_null(fnw_boot_control_url(&f.boot));
    ck_assert_int_eq(fnw_boot_read_provision(&f.boot, buf, n), 0);
    ck_assert_str_eq(fnw_boot_control_url(&f.boot), "localhost:5001");
    ck_assert_str_eq(fnw_boot_logging_url(&f.boot), "localhost:5002");
    ck_assert_int_eq(fnw_log_get_level(&f.lg), FNW_LOG_DEBUG);
    /* endpoints already known (from the flags) are kept */
    ck_assert_int_eq(fnw_boot_read_provision(&f.boot, buf, n), 0);
    ck_assert_str_eq(fnw_boot_control_url(&f.boot), "localhost:5001");
    fx_free(&f);
}
END_TEST

START_TEST(a_log_level_flag_wins_over_pipeline_options)
{
    fixture f;
    fx_init(&f, "info");
    uint8_t buf[512];
    size_t n = provision_bytes(buf);
    ck_assert_int_eq(fnw_boot_read_provision(&f.boot, buf, n), 0);
    ck_assert_int_eq(fnw_log_get_level(&f.lg), FNW_LOG_INFO);
    fx_free(&f);
}
END_TEST

START_TEST(bytes_that_are_not_provision_info_are_refused)
{
    fixture f;
    fx_init(&f, NULL);
    static const uint8_t junk[] = {0x0a, 0x7f, 'x'};
    ck_assert_int_eq(fnw_boot_read_provision(&f.boot, junk, sizeof junk), -1);
    ck_assert_ptr_null(fnw_boot_control_url(&f.boot));
    ck_assert_ptr_null(fnw_boot_logging_url(&f.boot));
    fx_free(&f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("boot");
    TCase *tc = tcase_create("boot");
    tcase_add_test(tc, retry_schedule_doubles_then_settles_until_the_deadline);
    tcase_add_test(tc, time_left_never_drops_under_its_floor);
    tcase_add_test(tc, provisioning_retries_on_schedule_then_fails_at_the_deadline);
    tcase_add_test(tc, a_provision_call_that_cannot_start_fails_boot_at_once);
    tcase_add_test(tc, a_stopped_boot_reports_nothing);
    tcase_add_test(tc, connection_failures_are_named);
    tcase_add_test(tc, provision_info_names_the_endpoints_and_the_level);
    tcase_add_test(tc, a_log_level_flag_wins_over_pipeline_options);
    tcase_add_test(tc, bytes_that_are_not_provision_info_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
