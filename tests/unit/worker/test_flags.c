/* tests/unit/worker/test_flags.c — the command line Flink (and older Beam) pass. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdlib.h>
#include <string.h>

#include "worker/flags.h"

static int parse(fnw_flags *f, fnw_error *err, int argc, const char **argv)
{
    return fnw_flags_parse(f, argc, (char **)argv, err);
}

START_TEST(beam_process_environment_form)
{
    const char *argv[] = {"fnworker", "--id=1-1", "--provision_endpoint=localhost:4321"};
    fnw_flags f;
    fnw_error err;
    ck_assert_int_eq(parse(&f, &err, 3, argv), 0);
    ck_assert_str_eq(f.id, "1-1");
    ck_assert_str_eq(f.provision_endpoint, "localhost:4321");
    ck_assert_str_eq(f.semi_persist_dir, "/tmp");
    ck_assert_int_eq((int)f.flush_bytes, 1000000);
    ck_assert(f.flush_ms == 5);
    ck_assert(f.connect_timeout_s == 60);
    ck_assert(f.early_data_ttl_s == 30);
    ck_assert(f.lull_seconds == 300);
    ck_assert_int_eq((int)f.n_unknown, 0);
}
END_TEST

START_TEST(early_data_ttl)
{
    fnw_flags f;
    fnw_error err;
    const char *ok[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--early-data-ttl=2.5"};
    ck_assert_int_eq(parse(&f, &err, 4, ok), 0);
    ck_assert(f.early_data_ttl_s == 2.5);
    const char *spaced[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--early-data-ttl", "7"};
    ck_assert_int_eq(parse(&f, &err, 5, spaced), 0);
    ck_assert(f.early_data_ttl_s == 7);
    const char *bad[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--early-data-ttl=0"};
    ck_assert_int_eq(parse(&f, &err, 4, bad), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--early-data-ttl"));
}
END_TEST

START_TEST(plugins_dir_and_blocking_threads)
{
    fnw_flags f;
    fnw_error err;
    const char *dflt[] = {"fnworker", "--id=1", "--provision_endpoint=h:1"};
    ck_assert_int_eq(parse(&f, &err, 3, dflt), 0);
    ck_assert_ptr_null(f.plugins_dir);
    ck_assert_uint_eq(f.blocking_threads, 4);
    const char *ok[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--plugins-dir=/opt/p",
                        "--blocking-threads", "16"};
    ck_assert_int_eq(parse(&f, &err, 6, ok), 0);
    ck_assert_str_eq(f.plugins_dir, "/opt/p");
    ck_assert_uint_eq(f.blocking_threads, 16);
    ck_assert_int_eq((int)f.n_unknown, 0);
    const char *bad[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--blocking-threads=0"};
    ck_assert_int_eq(parse(&f, &err, 4, bad), -1);
    ck_assert_msg(strstr(err.msg, "--blocking-threads: '0'") != NULL, "%s", err.msg);
    const char *frac[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--blocking-threads=2.5"};
    ck_assert_int_eq(parse(&f, &err, 4, frac), -1);
}
END_TEST

START_TEST(older_five_flag_form_and_spaces)
{
    const char *argv[] = {"fnworker", "--id", "7", "--logging_endpoint=localhost:1",
                          "--artifact_endpoint=localhost:2", "--provision_endpoint=localhost:3",
                          "--control_endpoint", "localhost:4"};
    fnw_flags f;
    fnw_error err;
    ck_assert_int_eq(parse(&f, &err, 8, argv), 0);
    ck_assert_str_eq(f.id, "7");
    ck_assert_str_eq(f.logging_endpoint, "localhost:1");
    ck_assert_str_eq(f.artifact_endpoint, "localhost:2");
    ck_assert_str_eq(f.control_endpoint, "localhost:4");
}
END_TEST

START_TEST(unknown_flags_are_kept_for_a_warning)
{
    const char *argv[] = {"fnworker", "--id=a", "--provision_endpoint=h:1", "--python_path=x",
                          "--flag"};
    fnw_flags f;
    fnw_error err;
    ck_assert_int_eq(parse(&f, &err, 5, argv), 0);
    ck_assert_int_eq((int)f.n_unknown, 2);
    ck_assert_str_eq(f.unknown[0], "--python_path=x");
}
END_TEST

START_TEST(missing_and_malformed_values_are_named)
{
    fnw_flags f;
    fnw_error err;
    unsetenv("WORKER_ID");
    unsetenv("CONTROL_API_SERVICE_DESCRIPTOR");
    const char *no_id[] = {"fnworker", "--provision_endpoint=h:1"};
    ck_assert_int_eq(parse(&f, &err, 2, no_id), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "No id provided"));
    const char *no_prov[] = {"fnworker", "--id=1"};
    ck_assert_int_eq(parse(&f, &err, 2, no_prov), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "No provision endpoint provided"));
    const char *bad[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--flush-ms=soon"};
    ck_assert_int_eq(parse(&f, &err, 4, bad), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--flush-ms"));
    const char *dangling[] = {"fnworker", "--id"};
    ck_assert_int_eq(parse(&f, &err, 2, dangling), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--id needs a value"));
}
END_TEST

START_TEST(environment_fallbacks)
{
    setenv("WORKER_ID", "env-9", 1);
    setenv("CONTROL_API_SERVICE_DESCRIPTOR", "url: \"localhost:5555\"", 1);
    const char *argv[] = {"fnworker"};
    fnw_flags f;
    fnw_error err;
    ck_assert_int_eq(parse(&f, &err, 1, argv), 0);
    ck_assert_str_eq(f.id, "env-9");
    ck_assert_str_eq(f.control_endpoint, "localhost:5555");
    unsetenv("WORKER_ID");
    unsetenv("CONTROL_API_SERVICE_DESCRIPTOR");
}
END_TEST

START_TEST(log_level_given_parsed_or_refused)
{
    fnw_flags f;
    fnw_error err;
    const char *none[] = {"fnworker", "--id=1", "--provision_endpoint=h:1"};
    ck_assert_int_eq(parse(&f, &err, 3, none), 0);
    ck_assert_ptr_null(f.log_level);              /* not given: the pipeline options may set it */
    ck_assert_int_eq(f.level, FNW_LOG_INFO);
    const char *dbg[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--log-level=DEBUG"};
    ck_assert_int_eq(parse(&f, &err, 4, dbg), 0);
    ck_assert_str_eq(f.log_level, "DEBUG");
    ck_assert_int_eq(f.level, FNW_LOG_DEBUG);
    const char *underscore[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--log_level", "warning"};
    ck_assert_int_eq(parse(&f, &err, 5, underscore), 0);
    ck_assert_int_eq(f.level, FNW_LOG_WARN);
    const char *bad[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--log-level=loud"};
    ck_assert_int_eq(parse(&f, &err, 4, bad), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "--log-level: 'loud' is not a log level"));
}
END_TEST

START_TEST(relay_fd_is_a_descriptor_number)
{
    fnw_flags f;
    fnw_error err;
    const char *none[] = {"fnworker", "--id=1", "--provision_endpoint=h:1"};
    ck_assert_int_eq(parse(&f, &err, 3, none), 0);
    ck_assert_int_eq(f.relay_fd, -1);
    const char *four[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--relay-fd=4"};
    ck_assert_int_eq(parse(&f, &err, 4, four), 0);
    ck_assert_int_eq(f.relay_fd, 4);
    const char *bad[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--relay-fd=1"};
    ck_assert_int_eq(parse(&f, &err, 4, bad), -1);
    ck_assert_str_eq(err.msg, "--relay-fd: '1' is not a descriptor number from 3 to 65535");
    const char *junk[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--relay-fd", "4x"};
    ck_assert_int_eq(parse(&f, &err, 5, junk), -1);
}
END_TEST

START_TEST(lull_seconds_zero_turns_it_off)
{
    fnw_flags f;
    fnw_error err;
    const char *one[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--lull-seconds=1"};
    ck_assert_int_eq(parse(&f, &err, 4, one), 0);
    ck_assert(f.lull_seconds == 1);
    const char *off[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--lull-seconds", "0"};
    ck_assert_int_eq(parse(&f, &err, 5, off), 0);
    ck_assert(f.lull_seconds == 0);
    const char *bad[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--lull-seconds=-1"};
    ck_assert_int_eq(parse(&f, &err, 4, bad), -1);
    ck_assert_str_eq(err.msg, "--lull-seconds: '-1' is not a number >= 0");
}
END_TEST

/* A misspelt required flag: the unknown flag is named first, then what is missing. */
START_TEST(an_unknown_flag_is_named_before_the_missing_id)
{
    fnw_flags f;
    fnw_error err;
    unsetenv("WORKER_ID");
    unsetenv("CONTROL_API_SERVICE_DESCRIPTOR");
    const char *alone[] = {"fnworker", "--bogus"};
    ck_assert_int_eq(parse(&f, &err, 2, alone), -1);
    ck_assert_msg(strncmp(err.msg, "unknown flag --bogus", 20) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "No id provided"));
    const char *typo[] = {"fnworker", "--id=1", "--provison_endpoint=h:1"};
    ck_assert_int_eq(parse(&f, &err, 3, typo), -1);
    ck_assert_msg(strncmp(err.msg, "unknown flag --provison_endpoint=h:1", 36) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "No provision endpoint provided"));
    /* with everything required given, unknown flags stay a warning (Beam's boot) */
    const char *ok[] = {"fnworker", "--id=1", "--provision_endpoint=h:1", "--bogus"};
    ck_assert_int_eq(parse(&f, &err, 4, ok), 0);
}
END_TEST

START_TEST(help_and_version_need_nothing_else)
{
    const char *argv[] = {"fnworker", "--help"};
    fnw_flags f;
    fnw_error err;
    ck_assert_int_eq(parse(&f, &err, 2, argv), 0);
    ck_assert_int_eq(f.help, 1);
    const char *v[] = {"fnworker", "--version"};
    ck_assert_int_eq(parse(&f, &err, 2, v), 0);
    ck_assert_int_eq(f.version, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("flags");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, beam_process_environment_form);
    tcase_add_test(tc, early_data_ttl);
    tcase_add_test(tc, plugins_dir_and_blocking_threads);
    tcase_add_test(tc, older_five_flag_form_and_spaces);
    tcase_add_test(tc, unknown_flags_are_kept_for_a_warning);
    tcase_add_test(tc, missing_and_malformed_values_are_named);
    tcase_add_test(tc, environment_fallbacks);
    tcase_add_test(tc, log_level_given_parsed_or_refused);
    tcase_add_test(tc, lull_seconds_zero_turns_it_off);
    tcase_add_test(tc, relay_fd_is_a_descriptor_number);
    tcase_add_test(tc, an_unknown_flag_is_named_before_the_missing_id);
    tcase_add_test(tc, help_and_version_need_nothing_else);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
