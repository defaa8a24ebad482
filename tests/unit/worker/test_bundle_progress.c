/* tests/unit/worker/test_bundle_progress.c — what a bundle tells about itself when
 * it hangs: its progress figures and one-line description, the
 * --lull-seconds WARN (only once nothing moved for the whole lull, naming
 * the operation, transform, calls in flight, queue and counts) and the
 * SIGQUIT dump (the bundle, each step, each call). A real bundle on the fake
 * data plane, fed three records that an operation holds forever; the log
 * is read back from stderr, which the test sends to a file. */
#include <check.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/check_run.h"
#include "tests/unit/fake_data_io.h"
#include "worker/bundle.h"

/* An operation whose calls never end (until cancelled). */
static int cancelled;
static int stuck_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    *state = NULL;
    return 0;
}
static void stuck_invoke(void *state, fnw_call *call)
{
}
static void stuck_cancel(void *state, fnw_call *call)
{
    cancelled++;
}
static const fnw_operation stuck = {
    .name = "stuck", .summary = "never answers", .output_rule = FNW_OUTPUT_SAME_AS_INPUT,
    .open = stuck_open, .invoke = stuck_invoke, .cancel = stuck_cancel,
};

typedef struct fixture {
    struct ev_loop *loop;
    fnw_logger lg;
    fnw_data_mgr dm;
    fnw_type *type;
    fnw_plan_step step;
    fnw_plan plan;
    fnw_processor *proc;
    fnw_bundle *b;
    int done;
    FILE *log;
} fixture;

static char *sinks[] = {"write"};

static void on_done(void *user, fnw_bundle *b, const char *error, const fnw_metric_set *m)
{
    ((fixture *)user)->done++;
}

static void fx_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->log = tmpfile();
    ck_assert_ptr_nonnull(f->log);
    ck_assert_int_ge(dup2(fileno(f->log), 2), 0);    /* the logger writes to stderr */
    f->loop = ev_loop_new(EVFLAG_AUTO);
    fnw_log_init(&f->lg, f->loop, FNW_LOG_INFO);
    fnw_data_config cfg = {0};
    fake_data_init(&f->dm, f->loop, &cfg);
    f->type = fnw_type_new(FNW_INT);
    fnw_error err;
    f->step.transform_id = "transform-0";
    f->step.op = &stuck;
    f->step.input_type = f->step.output_type = f->type;
    f->plan.descriptor_id = "d-1";
    f->plan.source_id = "read";
    f->plan.data_url = "fake:1";
    f->plan.input_type = f->type;
    f->plan.input_skip = fnw_skip_program_new(f->type, &err);
    ck_assert_ptr_nonnull(f->plan.input_skip);
    f->plan.main_sink_id = sinks[0];
    f->plan.sink_ids = sinks;
    f->plan.n_sinks = 1;
    f->plan.steps = &f->step;
    f->plan.n_steps = 1;
    ck_assert_int_eq(fnw_processors_open(f->loop, &f->plan, &f->proc, &err), 0);
    ck_assert_int_eq(fnw_inbound_expect(&f->dm, "i-1"), 0);
    f->b = fnw_bundle_start(f->loop, &f->lg, &f->dm, f->proc, "i-1", on_done, f);
    ck_assert_ptr_nonnull(f->b);
    uint8_t in[3 * 22];
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        n += fake_record_int(in + n, 7 + i, i);
    fake_deliver(fake_last, "i-1", "read", in, n, 0);
}

static void fx_free(fixture *f)
{
    fnw_bundle_stop(f->b);
    fnw_bundle_free(f->b);
    fnw_processors_close(f->proc);
    fnw_skip_program_free(f->plan.input_skip);
    fnw_type_free(f->type);
    fnw_data_stop(&f->dm);
    fnw_data_free(&f->dm);
    fnw_log_free(&f->lg);
    ev_loop_destroy(f->loop);
    fclose(f->log);
}

/* Everything logged so far. */
static const char *logged(fixture *f)
{
    static char text[16384];
    fflush(stderr);
    long end = ftell(f->log);
    size_t n = (size_t)(end < 0 ? 0 : end);
    if (n >= sizeof text)
        n = sizeof text - 1;
    rewind(f->log);
    n = fread(text, 1, n, f->log);
    text[n] = '\0';
    fseek(f->log, 0, SEEK_END);
    return text;
}

START_TEST(progress_and_description_name_what_is_in_flight)
{
    fixture f;
    fx_init(&f);
    fnw_bundle_progress p;
    fnw_bundle_progress_get(f.b, &p);
    ck_assert_int_eq(p.inputs_read, 3);
    ck_assert_int_eq(p.outputs_written, 0);
    ck_assert_str_eq(p.state, "reading input");
    char d[512];
    fnw_bundle_describe(f.b, d, sizeof d);
    ck_assert_str_eq(d, "instruction i-1 (descriptor d-1), reading input: 3 input(s) read, 0 output(s) written");

    fnw_bundle_dump(f.b);
    const char *t = logged(&f);
    ck_assert_msg(strstr(t, "  instruction i-1 (descriptor d-1), reading input: 3 input(s) read"), "%s", t);
    ck_assert_msg(strstr(t, "step 1: operation 'stuck' in transform 'transform-0': 3 call(s) in flight"), "%s", t);
    ck_assert_msg(strstr(t, "    call on input 0 (timestamp 7): attempt 1, with the operation"), "%s", t);
    ck_assert_msg(strstr(t, "    call on input 2 (timestamp 9)"), "%s", t);
    ck_assert_int_eq(f.done, 0);
    fx_free(&f);
    ck_assert_int_eq(cancelled, 3);
    cancelled = 0;
}
END_TEST

static void poll_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    fixture *f = t->data;
    if (strstr(logged(f), "no progress for"))
        ev_break(loop, EVBREAK_ALL);
}

static void guard_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    ev_break(loop, EVBREAK_ALL);
}

START_TEST(a_stuck_bundle_warns_after_its_lull)
{
    fixture f;
    fx_init(&f);
    ev_now_update(f.loop);
    double t0 = ev_now(f.loop);      /* the lull counts from here */
    fnw_bundle_watch(f.b, 0.5);
    ck_assert_ptr_null(strstr(logged(&f), "no progress"));   /* not at once */
    ev_timer poll, guard;
    ev_timer_init(&poll, poll_cb, 0.05, 0.05);
    poll.data = &f;
    ev_timer_init(&guard, guard_cb, 30, 0);
    ev_timer_start(f.loop, &poll);
    ev_timer_start(f.loop, &guard);
    ev_run(f.loop, 0);
    ev_timer_stop(f.loop, &poll);
    ev_timer_stop(f.loop, &guard);
    const char *t = logged(&f);
    ck_assert_msg(strstr(t, "WARN"), "no WARN within 30 s: %s", t);
    ck_assert(ev_time() - t0 >= 0.5);                           /* never before the lull */
    ck_assert_msg(strstr(t, "(--lull-seconds=0.5) in instruction i-1 (descriptor d-1), reading input: 3 "
                            "input(s) read, 0 output(s) written; operation 'stuck' in transform "
                            "'transform-0': 3 call(s) in flight (the oldest started "), "%s", t);
    ck_assert_msg(strstr(t, "3 input(s) queued, 0 waiting for capacity 100, 0 in a partial batch; "
                            "3 in, 0 out this bundle"), "%s", t);
    fx_free(&f);
    cancelled = 0;
}
END_TEST

START_TEST(lull_zero_never_watches)
{
    fixture f;
    fx_init(&f);
    fnw_bundle_watch(f.b, 0);
    ev_timer guard;
    ev_timer_init(&guard, guard_cb, 0.6, 0);
    ev_timer_start(f.loop, &guard);
    ev_run(f.loop, 0);
    ck_assert_ptr_null(strstr(logged(&f), "no progress"));
    fx_free(&f);
    cancelled = 0;
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bundle_progress");
    TCase *tc = tcase_create("bundle_progress");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, progress_and_description_name_what_is_in_flight);
    tcase_add_test(tc, a_stuck_bundle_warns_after_its_lull);
    tcase_add_test(tc, lull_zero_never_watches);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
