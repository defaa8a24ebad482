/* tests/unit/runtime/test_spec.c — fnw_spec_validate: the exact messages of
 * PyFlink's job-build checks (and ours for the retry fields and for batch
 * settings in per-element mode), defaults. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdlib.h>
#include <string.h>

#include "runtime/spec.h"

static fnw_spec base(void)
{
    fnw_spec s;
    memset(&s, 0, sizeof s);
    return s;
}

static fnw_spec batch(int32_t size, int64_t timeout, int64_t batch_timeout)
{
    fnw_spec s = base();
    s.batched = 1;
    s.batch_size = size;
    s.timeout_ms = timeout;
    s.batch_timeout_ms = batch_timeout;
    return s;
}

static fnw_spec retry(fnw_retry_kind k)
{
    fnw_spec s = base();
    s.timeout_ms = 1000;
    s.retry.kind = k;
    s.retry.max_attempts = 3;
    s.retry.delay_ms = 100;
    s.retry.max_delay_ms = 1000;
    s.retry.multiplier = 2.0;
    s.retry.on_error = 1;
    return s;
}

static void expect(fnw_spec s, const char *msg)
{
    fnw_error err;
    err.msg[0] = '\0';
    ck_assert_int_eq(fnw_spec_validate(&s, &err), -1);
    ck_assert_str_eq(err.msg, msg);
}

static void expect_ok(fnw_spec *s)
{
    fnw_error err;
    err.msg[0] = '\0';
    ck_assert_msg(fnw_spec_validate(s, &err) == 0, "%s", err.msg);
}

START_TEST(test_defaults)
{
    fnw_spec s = base();
    expect_ok(&s);
    ck_assert_int_eq(s.capacity, 100);
    s.capacity = 7;
    expect_ok(&s);
    ck_assert_int_eq(s.capacity, 7);
}
END_TEST

START_TEST(test_batch_messages)
{
    expect(batch(0, 1000, 0), "Batch size must be positive, got: 0");
    expect(batch(-1, 1000, 0), "Batch size must be positive, got: -1");
    expect(batch(4, 0, 0), "Timeout must be positive for async batch operations.");
    expect(batch(4, -5, 0), "Timeout must be positive for async batch operations.");
    expect(batch(4, 1000, -3), "Batch timeout cannot be negative, got: -3 ms");
    /* PyFlink's order: size first */
    expect(batch(0, 0, -1), "Batch size must be positive, got: 0");
    fnw_spec ok = batch(4, 1000, 0);
    expect_ok(&ok);
}
END_TEST

/* batch_size = capacity = 2^31-1 once made a processor reserve ~33 GB of
 * address space: the settings are bounded, with a message, and the bounds
 * themselves are accepted. */
START_TEST(test_settings_bounded)
{
    fnw_spec s = batch(2147483647, 1000, 0);
    s.capacity = 2147483647;
    expect(s, "batch_size 2147483647 is over fnworker's limit of 65536 inputs per batch "
              "(a batch's slots are reserved when the operation opens)");
    fnw_spec c = base();
    c.capacity = 2147483647;
    expect(c, "capacity 2147483647 is over fnworker's limit of 1048576 inputs in flight per operation");
    fnw_spec ok = batch(FNW_SPEC_MAX_BATCH_SIZE, 1000, 0);
    ok.capacity = FNW_SPEC_MAX_CAPACITY;
    expect_ok(&ok);
}
END_TEST

START_TEST(test_batch_fields_in_per_element_mode)
{
    /* unset batch fields are fine per element */
    fnw_spec pe = batch(0, 0, 0);
    pe.batched = 0;
    expect_ok(&pe);
    /* set ones are a mistake, named */
    pe = batch(8, 1000, 0);
    pe.batched = 0;
    expect(pe, "batch_size (8) is a batch-mode setting but the operation runs per element: set mode BATCH "
               "to run it in batches, or remove batch_size");
    pe = batch(0, 1000, 50);
    pe.batched = 0;
    expect(pe, "batch_timeout_ms (50) is a batch-mode setting but the operation runs per element: set mode "
               "BATCH to run it in batches, or remove batch_timeout_ms");
    pe = batch(-1, 0, 0);
    pe.batched = 0;
    expect(pe, "batch_size (-1) is a batch-mode setting but the operation runs per element: set mode BATCH "
               "to run it in batches, or remove batch_size");
}
END_TEST

/* target_latency_ms: batch mode only, bounded, named. */
START_TEST(test_target_latency)
{
    fnw_spec s = batch(64, 1000, 0);
    s.target_latency_ms = 50;
    expect_ok(&s);
    s.target_latency_ms = -1;
    expect(s, "target_latency_ms must be between 1 and 3600000 ms (0: a fixed batch size), got: -1");
    s.target_latency_ms = FNW_SPEC_MAX_TARGET_LATENCY_MS + 1;
    expect(s, "target_latency_ms must be between 1 and 3600000 ms (0: a fixed batch size), got: 3600001");
    fnw_spec pe = batch(0, 1000, 0);
    pe.batched = 0;
    pe.target_latency_ms = 50;
    expect(pe, "target_latency_ms (50) is a batch-mode setting but the operation runs per element: set mode "
               "BATCH to run it in batches, or remove target_latency_ms");
}
END_TEST

START_TEST(test_retry_needs_timeout)
{
    fnw_spec s = retry(FNW_RETRY_FIXED_DELAY);
    s.timeout_ms = 0;
    expect(s, "Timeout should be configured when do async with retry.");
    s = retry(FNW_RETRY_EXPONENTIAL);
    s.timeout_ms = 0;
    expect(s, "Timeout should be configured when do async with retry.");
    /* no retry: no timeout needed */
    fnw_spec n = base();
    expect_ok(&n);
}
END_TEST

START_TEST(test_retry_predicate_missing)
{
    fnw_spec s = retry(FNW_RETRY_FIXED_DELAY);
    s.retry.on_error = 0;
    expect(s, "Retry predicate of the async retry strategy 'FIXED_DELAY' is missing: "
              "set retry_on_error and/or retry_on_empty_result.");
    s = retry(FNW_RETRY_EXPONENTIAL);
    s.retry.on_error = 0;
    expect(s, "Retry predicate of the async retry strategy 'EXPONENTIAL_BACKOFF' is missing: "
              "set retry_on_error and/or retry_on_empty_result.");
    s.retry.on_empty = 1;
    expect_ok(&s);
}
END_TEST

START_TEST(test_retry_fields_positive)
{
    fnw_spec s = retry(FNW_RETRY_FIXED_DELAY);
    s.retry.max_attempts = 0;
    expect(s, "max_attempts of the async retry strategy 'FIXED_DELAY' must be positive, got: 0");
    s = retry(FNW_RETRY_FIXED_DELAY);
    s.retry.delay_ms = -1;
    expect(s, "delay_ms of the async retry strategy 'FIXED_DELAY' must be positive, got: -1");
    /* fixed delay does not use max_delay_ms / multiplier */
    s = retry(FNW_RETRY_FIXED_DELAY);
    s.retry.max_delay_ms = 0;
    s.retry.multiplier = 0;
    expect_ok(&s);
    s = retry(FNW_RETRY_EXPONENTIAL);
    s.retry.max_delay_ms = 0;
    expect(s, "max_delay_ms of the async retry strategy 'EXPONENTIAL_BACKOFF' must be positive, got: 0");
    s = retry(FNW_RETRY_EXPONENTIAL);
    s.retry.multiplier = 0;
    expect(s, "multiplier of the async retry strategy 'EXPONENTIAL_BACKOFF' must be positive, got: 0");
    s = retry(FNW_RETRY_EXPONENTIAL);
    s.retry.multiplier = -1.5;
    expect(s, "multiplier of the async retry strategy 'EXPONENTIAL_BACKOFF' must be positive, got: -1.5");
    s = retry(FNW_RETRY_EXPONENTIAL);
    s.retry.max_attempts = -2;
    expect(s, "max_attempts of the async retry strategy 'EXPONENTIAL_BACKOFF' must be positive, got: -2");
    /* NO_RETRY ignores every field */
    s = base();
    s.retry.max_attempts = -1;
    s.retry.delay_ms = -1;
    expect_ok(&s);
}
END_TEST

START_TEST(test_other_fields)
{
    fnw_spec s = base();
    s.timeout_ms = -1;
    expect(s, "Timeout cannot be negative, got: -1 ms");
    s = base();
    s.capacity = -4;
    expect(s, "Capacity must be positive, got: -4");
    s = base();
    s.on_timeout = (fnw_timeout_action)9;
    expect(s, "Unknown timeout action: 9");
    s = base();
    s.retry.kind = (fnw_retry_kind)5;
    expect(s, "Unknown async retry strategy kind: 5");
}
END_TEST

static Suite *spec_suite(void)
{
    Suite *s = suite_create("spec");
    TCase *tc = tcase_create("spec");
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_batch_messages);
    tcase_add_test(tc, test_settings_bounded);
    tcase_add_test(tc, test_batch_fields_in_per_element_mode);
    tcase_add_test(tc, test_target_latency);
    tcase_add_test(tc, test_retry_needs_timeout);
    tcase_add_test(tc, test_retry_predicate_missing);
    tcase_add_test(tc, test_retry_fields_positive);
    tcase_add_test(tc, test_other_fields);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(spec_suite());
}
