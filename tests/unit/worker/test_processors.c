/* tests/unit/worker/test_processors.c — processors and their idle pool, observed
 * through the operation instances they open and close: a processor opens
 * one instance per step and closes them when freed (also when a later step
 * fails to open, whose transform the error names); a processor put back
 * after a successful bundle is reused with its operations still open; one
 * discarded after a failure is closed and never handed out again; bundles
 * that run at the same time each get their own processor. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <stdlib.h>
#include <string.h>

#include "worker/processors.h"

static int opens, closes, fail_open_at;

static int counted_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    if (fail_open_at && opens + 1 == fail_open_at)
        return fnw_error_set(err, "refused to open");
    opens++;
    *state = NULL;
    return 0;
}

static void counted_close(void *state)
{
    closes++;
}

static void counted_invoke(void *state, fnw_call *call)
{
    fnw_call_complete(call);
}

static const fnw_operation counted = {"counted", "counts its instances", FNW_OUTPUT_SAME_AS_INPUT, 1,
                                      counted_open, counted_close, counted_invoke, NULL, NULL, NULL};

typedef struct fixture {
    struct ev_loop *loop;
    fnw_type *type;
    fnw_plan_step steps[2];
    fnw_plan plan;
} fixture;

/* A plan of two "counted" steps. */
static void fx_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    opens = closes = fail_open_at = 0;
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->type = fnw_type_new(FNW_INT);
    static char *ids[] = {"transform-0", "transform-1"};
    for (int i = 0; i < 2; i++) {
        f->steps[i].transform_id = ids[i];
        f->steps[i].op = &counted;
        f->steps[i].input_type = f->type;
        f->steps[i].output_type = f->type;
    }
    f->plan.steps = f->steps;
    f->plan.n_steps = 2;
}

static void fx_free(fixture *f)
{
    fnw_type_free(f->type);
    ev_loop_destroy(f->loop);
}

START_TEST(a_processor_opens_one_instance_per_step)
{
    fixture f;
    fx_init(&f);
    fnw_processor *p;
    fnw_error err;
    ck_assert_int_eq(fnw_processors_open(f.loop, &f.plan, &p, &err), 0);
    ck_assert_int_eq(opens, 2);
    ck_assert_uint_eq(fnw_processor_steps(p), 2);
    ck_assert_ptr_eq(fnw_processor_plan(p), &f.plan);
    ck_assert_ptr_ne(fnw_processor_engine(p, 0), fnw_processor_engine(p, 1));
    fnw_processors_close(p);
    ck_assert_int_eq(closes, 2);
    fx_free(&f);
}
END_TEST

START_TEST(a_step_that_fails_to_open_is_named_and_the_others_closed)
{
    fixture f;
    fx_init(&f);
    fail_open_at = 2;
    fnw_processor *p = NULL;
    fnw_error err;
    ck_assert_int_eq(fnw_processors_open(f.loop, &f.plan, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "transform 'transform-1'") && strstr(err.msg, "refused to open"), "%s",
                  err.msg);
    ck_assert_int_eq(opens, 1);
    ck_assert_int_eq(closes, 1);
    fx_free(&f);
}
END_TEST

START_TEST(reused_after_success)
{
    fixture f;
    fx_init(&f);
    fnw_processors pool;
    fnw_processors_init(&pool);
    fnw_processor *a, *b;
    fnw_error err;
    ck_assert_int_eq(fnw_processors_take(&pool, f.loop, &f.plan, &a, &err), 0);
    ck_assert_int_eq(opens, 2);
    fnw_processors_put(&pool, a);
    ck_assert_uint_eq(fnw_processors_idle(&pool), 1);
    ck_assert_int_eq(fnw_processors_take(&pool, f.loop, &f.plan, &b, &err), 0);
    ck_assert_ptr_eq(b, a);
    ck_assert_int_eq(opens, 2);       /* its operations stayed open */
    ck_assert_int_eq(closes, 0);
    ck_assert_uint_eq(fnw_processors_idle(&pool), 0);
    fnw_processors_put(&pool, b);
    fnw_processors_free(&pool);
    ck_assert_int_eq(closes, 2);
    fx_free(&f);
}
END_TEST

START_TEST(discarded_after_failure)
{
    fixture f;
    fx_init(&f);
    fnw_processors pool;
    fnw_processors_init(&pool);
    fnw_processor *a, *b;
    fnw_error err;
    ck_assert_int_eq(fnw_processors_take(&pool, f.loop, &f.plan, &a, &err), 0);
    fnw_processors_discard(&pool, a);
    ck_assert_int_eq(closes, 2);
    ck_assert_uint_eq(fnw_processors_idle(&pool), 0);
    ck_assert_int_eq(fnw_processors_take(&pool, f.loop, &f.plan, &b, &err), 0);
    ck_assert_int_eq(opens, 4);       /* a fresh chain */
    fnw_processors_discard(&pool, b);
    fnw_processors_free(&pool);
    ck_assert_int_eq(closes, 4);
    fx_free(&f);
}
END_TEST

START_TEST(one_per_concurrent_bundle)
{
    fixture f;
    fx_init(&f);
    fnw_processors pool;
    fnw_processors_init(&pool);
    fnw_processor *a, *b, *c, *d;
    fnw_error err;
    ck_assert_int_eq(fnw_processors_take(&pool, f.loop, &f.plan, &a, &err), 0);
    ck_assert_int_eq(fnw_processors_take(&pool, f.loop, &f.plan, &b, &err), 0);
    ck_assert_ptr_ne(a, b);
    ck_assert_int_eq(opens, 4);
    fnw_processors_put(&pool, a);
    fnw_processors_put(&pool, b);
    ck_assert_uint_eq(fnw_processors_idle(&pool), 2);
    ck_assert_int_eq(fnw_processors_take(&pool, f.loop, &f.plan, &c, &err), 0);
    ck_assert_int_eq(fnw_processors_take(&pool, f.loop, &f.plan, &d, &err), 0);
    ck_assert_ptr_ne(c, d);
    ck_assert((c == a || c == b) && (d == a || d == b));
    ck_assert_int_eq(opens, 4);       /* the pool grew to two, no further */
    fnw_processors_put(&pool, c);
    fnw_processors_put(&pool, d);
    fnw_processors_free(&pool);
    ck_assert_int_eq(closes, 4);
    fx_free(&f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("processors");
    TCase *tc = tcase_create("pool");
    tcase_add_test(tc, a_processor_opens_one_instance_per_step);
    tcase_add_test(tc, a_step_that_fails_to_open_is_named_and_the_others_closed);
    tcase_add_test(tc, reused_after_success);
    tcase_add_test(tc, discarded_after_failure);
    tcase_add_test(tc, one_per_concurrent_bundle);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
