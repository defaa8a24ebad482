/* tests/unit/worker/test_descriptors.c — the descriptor cache: bundles that arrive
 * before their descriptor wait and start in arrival order once it is
 * known; only the first of them asks for a fetch; a descriptor that cannot
 * be had or planned answers every waiting bundle, and still names its data
 * endpoint (the runner waits for the worker's Data stream), also when
 * only its transforms could be read; a register
 * while a fetch is in flight leaves the waiting bundles to the fetch. */
#include <check.h>

#include "ops/builtins.h"
#include "tests/unit/check_run.h"
#include "tests/unit/descriptor_build.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/descriptors.h"

#define STATELESS_WIRE "beam:coder:param_windowed_value:v1"

typedef struct ready_log {
    char ids[8][16];
    fnw_descriptor *d[8];
    int n;
} ready_log;

static void on_ready(void *user, fnw_descriptor *d, const char *iid)
{
    ready_log *r = user;
    ck_assert_int_lt(r->n, 8);
    ck_assert(fnw_descriptors_known(d));
    snprintf(r->ids[r->n], sizeof r->ids[r->n], "%s", iid);
    r->d[r->n++] = d;
}

static const fnw_descriptors_events events = {on_ready, NULL};

typedef struct fixture {
    fnw_registry reg;
    fnw_descriptors c;
    ready_log r;
} fixture;

static void fx_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    fnw_registry_init(&f->reg);
    fnw_builtins_register(&f->reg);
    fnw_descriptors_init(&f->c, &f->reg, NULL, &events, &f->r);
}

START_TEST(waiting_bundles_start_in_arrival_order)
{
    fixture f;
    fx_init(&f);
    fnw_descriptor *d = fnw_descriptors_get(&f.c, "1-2");
    ck_assert_ptr_nonnull(d);
    ck_assert(!fnw_descriptors_known(d));
    ck_assert_ptr_eq(fnw_descriptors_get(&f.c, "1-2"), d);
    ck_assert_ptr_ne(fnw_descriptors_get(&f.c, "3-4"), d);
    /* only the first waiter asks for a fetch */
    ck_assert_int_eq(fnw_descriptors_wait(&f.c, d, "b-1"), 1);
    ck_assert_int_eq(fnw_descriptors_wait(&f.c, d, "b-2"), 0);
    ck_assert_int_eq(fnw_descriptors_wait(&f.c, d, "b-3"), 0);
    ck_assert_uint_eq(fnw_descriptors_waiting(d), 3);
    ck_assert_int_eq(f.r.n, 0);

    builder b;
    flink_shape(&b, 1, STATELESS_WIRE);
    fnw_descriptors_arrived(&f.c, d, &b.d, NULL);
    builder_free(&b);
    ck_assert_int_eq(f.r.n, 3);
    ck_assert_str_eq(f.r.ids[0], "b-1");
    ck_assert_str_eq(f.r.ids[1], "b-2");
    ck_assert_str_eq(f.r.ids[2], "b-3");
    ck_assert_ptr_eq(f.r.d[2], d);
    ck_assert_ptr_nonnull(fnw_descriptors_plan(d));
    ck_assert_ptr_null(fnw_descriptors_error(d));
    ck_assert_str_eq(fnw_descriptors_data_url(d), "localhost:7777");
    ck_assert_uint_eq(fnw_descriptors_waiting(d), 0);
    fnw_descriptors_free(&f.c);
}
END_TEST

START_TEST(failed_fetch_answers_every_waiting_bundle)
{
    fixture f;
    fx_init(&f);
    fnw_descriptor *d = fnw_descriptors_get(&f.c, "1-2");
    ck_assert_int_eq(fnw_descriptors_wait(&f.c, d, "b-1"), 1);
    ck_assert_int_eq(fnw_descriptors_wait(&f.c, d, "b-2"), 0);
    fnw_descriptors_arrived(&f.c, d, NULL, "GetProcessBundleDescriptor('1-2') failed with status 14");
    ck_assert_int_eq(f.r.n, 2);
    ck_assert_str_eq(f.r.ids[0], "b-1");
    ck_assert_str_eq(f.r.ids[1], "b-2");
    ck_assert_ptr_null(fnw_descriptors_plan(d));
    ck_assert_str_eq(fnw_descriptors_error(d), "GetProcessBundleDescriptor('1-2') failed with status 14");
    ck_assert(fnw_descriptors_known(d));
    /* a later bundle for a known descriptor does not wait: the caller starts it */
    fnw_descriptors_free(&f.c);
}
END_TEST

START_TEST(data_url_is_kept_when_the_plan_fails)
{
    fixture f;
    fx_init(&f);
    builder b;
    flink_shape(&b, 1, STATELESS_WIRE);
    transform(&b, "transform-0")->spec = pardo(&b, STATELESS, 0, "no_such_operation", 0);
    fnw_descriptor *d = fnw_descriptors_get(&f.c, "1-2");
    ck_assert_int_eq(fnw_descriptors_wait(&f.c, d, "b-1"), 1);
    fnw_descriptors_arrived(&f.c, d, &b.d, NULL);
    builder_free(&b);
    ck_assert_int_eq(f.r.n, 1);
    ck_assert_ptr_null(fnw_descriptors_plan(d));
    ck_assert_ptr_nonnull(fnw_descriptors_error(d));
    ck_assert_msg(strstr(fnw_descriptors_error(d), "no_such_operation") != NULL, "%s",
                  fnw_descriptors_error(d));
    ck_assert_str_eq(fnw_descriptors_data_url(d), "localhost:7777");
    fnw_descriptors_free(&f.c);
}
END_TEST

/* A descriptor refused as a whole arrives with the reason and what could be
 * read of it: the reason is every bundle's answer, the endpoint is kept. */
START_TEST(data_url_is_kept_when_only_the_transforms_could_be_read)
{
    fixture f;
    fx_init(&f);
    builder b;
    flink_shape(&b, 1, STATELESS_WIRE);
    b.d.n_coders = 0;   /* what the worker reads of it: the transforms */
    fnw_descriptor *d = fnw_descriptors_get(&f.c, "1-2");
    ck_assert_int_eq(fnw_descriptors_wait(&f.c, d, "b-1"), 1);
    fnw_descriptors_arrived(&f.c, d, &b.d, "GetProcessBundleDescriptor('1-2') returned bytes the worker "
                                           "cannot read: messages nest deeper than 256 levels");
    builder_free(&b);
    ck_assert_int_eq(f.r.n, 1);
    ck_assert_ptr_null(fnw_descriptors_plan(d));
    ck_assert_msg(strstr(fnw_descriptors_error(d), "nest deeper than 256") != NULL, "%s", fnw_descriptors_error(d));
    ck_assert_str_eq(fnw_descriptors_data_url(d), "localhost:7777");
    fnw_descriptors_free(&f.c);
}
END_TEST

START_TEST(register_during_a_fetch_leaves_the_bundles_to_the_fetch)
{
    fixture f;
    fx_init(&f);
    builder b;
    flink_shape(&b, 1, STATELESS_WIRE);
    fnw_descriptor *d = fnw_descriptors_get(&f.c, "1-2");
    ck_assert_int_eq(fnw_descriptors_wait(&f.c, d, "b-1"), 1);
    fnw_descriptors_set(&f.c, d, &b.d);
    ck_assert(fnw_descriptors_known(d));
    ck_assert_int_eq(f.r.n, 0);
    ck_assert_uint_eq(fnw_descriptors_waiting(d), 1);
    fnw_descriptors_arrived(&f.c, d, &b.d, NULL);
    ck_assert_int_eq(f.r.n, 1);
    ck_assert_str_eq(f.r.ids[0], "b-1");
    builder_free(&b);
    fnw_descriptors_free(&f.c);
}
END_TEST

/* Freeing the cache with bundles still waiting (the worker is stopping)
 * drops them without starting them. */
START_TEST(free_drops_waiting_bundles_without_starting_them)
{
    fixture f;
    fx_init(&f);
    fnw_descriptor *d = fnw_descriptors_get(&f.c, "1-2");
    ck_assert_int_eq(fnw_descriptors_wait(&f.c, d, "b-1"), 1);
    fnw_descriptors_free(&f.c);
    ck_assert_int_eq(f.r.n, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("descriptors");
    TCase *tc = tcase_create("cache");
    tcase_add_test(tc, waiting_bundles_start_in_arrival_order);
    tcase_add_test(tc, failed_fetch_answers_every_waiting_bundle);
    tcase_add_test(tc, data_url_is_kept_when_the_plan_fails);
    tcase_add_test(tc, data_url_is_kept_when_only_the_transforms_could_be_read);
    tcase_add_test(tc, register_during_a_fetch_leaves_the_bundles_to_the_fetch);
    tcase_add_test(tc, free_drops_waiting_bundles_without_starting_them);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
