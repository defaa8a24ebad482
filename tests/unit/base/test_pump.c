/* tests/unit/base/test_pump.c — a loop's one completion-queue thread
 * (base/pump.c) shared by two users (two fnw_rpc contexts, as the worker and
 * a kserve instance share it): each user's completions come back to that
 * user, on the loop thread; a unary call given up (fnw_rpc_unary_cancel)
 * never calls back and its record comes back (live calls drop to 0); a
 * context freed with a call in flight never calls back either, and the
 * call's record is freed when the loop's hand-off stops the pump (the
 * sanitizer builds check that nothing leaks). The peers are loopback ports
 * nobody listens on. */
#include <check.h>
#include <ev.h>
#include <grpc/grpc.h>
#include <pthread.h>

#include "base/handoff.h"
#include "base/pump.h"
#include "base/rpc.h"
#include "tests/unit/check_run.h"
#include "tests/unit/test_servers.h"

typedef struct user {
    int called, ready;
    pthread_t ran_on;
} user;

static void on_ready(void *arg, int ready)
{
    user *u = arg;
    u->called++;
    u->ready = ready;
    u->ran_on = pthread_self();
}

static void on_unary(void *arg, grpc_status_code code, const char *details, grpc_slice response)
{
    user *u = arg;
    u->called++;
}

static struct ev_loop *loop;
static grpc_channel *ch;

static void setup(void)
{
    grpc_init();
    loop = ev_loop_new(EVFLAG_AUTO);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", srv_closed_port());
    ch = fnw_rpc_channel(target);
}

static void teardown(void)
{
    grpc_channel_destroy(ch);
    fnw_handoff_loop_free(loop);   /* stops the pump: the last completions run */
    ev_loop_destroy(loop);
    grpc_shutdown();
}

START_TEST(test_two_users_share_the_loops_pump)
{
    fnw_pump *p = fnw_pump_of(loop);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_eq(fnw_pump_of(loop), p);
    fnw_rpc a, b;
    fnw_rpc_init(&a, fnw_pump_cq(p), "worker_id", "w-1", NULL);
    fnw_rpc_init(&b, fnw_pump_cq(fnw_pump_of(loop)), NULL, NULL, NULL);
    user ua = { 0 }, ub = { 0 };
    fnw_handoff *h = fnw_handoff_of(loop);
    fnw_handoff_hold(h);
    ck_assert_ptr_nonnull(fnw_rpc_wait_ready(&a, ch, 0.05, on_ready, &ua));
    ck_assert_ptr_nonnull(fnw_rpc_wait_ready(&b, ch, 0.1, on_ready, &ub));
    while (!ua.called || !ub.called)
        ev_run(loop, EVRUN_ONCE);
    fnw_handoff_release(h);
    ck_assert_int_eq(ua.called, 1);
    ck_assert_int_eq(ub.called, 1);
    ck_assert_int_eq(ua.ready, 0);               /* nobody listens */
    ck_assert(pthread_equal(ua.ran_on, pthread_self()));
    ck_assert(pthread_equal(ub.ran_on, pthread_self()));
    fnw_rpc_free(&a);
    fnw_rpc_free(&b);
}
END_TEST

START_TEST(test_a_unary_call_given_up_never_calls_back)
{
    fnw_rpc r;
    fnw_rpc_init(&r, fnw_pump_cq(fnw_pump_of(loop)), NULL, NULL, NULL);
    fnw_handoff *h = fnw_handoff_of(loop);
    fnw_handoff_hold(h);
    user u = { 0 };
    fnw_rpc_unary_call *call = NULL;
    /* wait_for_ready: without the cancel it would wait 30 s for a server */
    ck_assert_int_eq(fnw_rpc_unary(&r, ch, "/t.S/M", grpc_slice_from_static_string("x"), 30, 1, on_unary, &u,
                                   &call), 0);
    ck_assert_ptr_nonnull(call);
    ck_assert_int_eq(fnw_rpc_live_calls(&r), 1);
    fnw_rpc_unary_cancel(call);
    while (fnw_rpc_live_calls(&r) > 0)
        ev_run(loop, EVRUN_ONCE);
    ck_assert_int_eq(u.called, 0);
    /* the record is kept for the next call, which does call back */
    ck_assert_int_eq(fnw_rpc_unary(&r, ch, "/t.S/M", grpc_slice_from_static_string("x"), 0.05, 0, on_unary, &u,
                                   NULL), 0);
    while (fnw_rpc_live_calls(&r) > 0)
        ev_run(loop, EVRUN_ONCE);
    ck_assert_int_eq(u.called, 1);
    fnw_handoff_release(h);
    fnw_rpc_free(&r);
}
END_TEST

START_TEST(test_a_context_freed_with_a_call_in_flight_never_calls_back)
{
    fnw_rpc *r = malloc(sizeof *r);
    fnw_rpc_init(r, fnw_pump_cq(fnw_pump_of(loop)), NULL, NULL, NULL);
    user u = { 0 };
    ck_assert_int_eq(fnw_rpc_unary(r, ch, "/t.S/M", grpc_slice_from_static_string("x"), 30, 1, on_unary, &u, NULL),
                     0);
    fnw_rpc_free(r);
    free(r);                                     /* the call no longer refers to it */
    for (int i = 0; i < 20; i++)
        ev_run(loop, EVRUN_NOWAIT);
    ck_assert_int_eq(u.called, 0);
    /* teardown stops the pump: the cancelled call comes back and is freed */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pump");
    TCase *tc = tcase_create("shared");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_two_users_share_the_loops_pump);
    tcase_add_test(tc, test_a_unary_call_given_up_never_calls_back);
    tcase_add_test(tc, test_a_context_freed_with_a_call_in_flight_never_calls_back);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
