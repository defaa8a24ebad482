/* tests/unit/check_run.h — the one main() every Check binary shares: run the
 * suite (CK_VERBOSITY and CK_FORK from the environment) and turn failures
 * into the exit status. */
#ifndef FNW_CHECK_RUN_H
#define FNW_CHECK_RUN_H

#include <check.h>

static inline int fnw_check_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif
