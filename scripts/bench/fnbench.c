/* temporary */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scripts/bench/session.h"
int main(int argc, char **argv)
{
    fnw_error err;
    bench_env env;
    memset(&env, 0, sizeof env);
    env.worker_bin = argc > 1 ? argv[1] : "build/fnworker";
    env.null_bin = "build/bench/null_worker";
    env.out_dir = "build/bench";
    env.verbose = getenv("V") != NULL;
    env.rig = bench_rig_new(env.verbose, &err);
    if (!env.rig) { fprintf(stderr, "%s\n", err.msg); return 1; }
    uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
    int is_null = argc > 3 && !strcmp(argv[3], "null");
    bench_session s;
    if (bench_session_start(&env, &s, is_null, getenv("WRAP"), "t") < 0) { fprintf(stderr, "%s\n", s.error); return 1; }
    bench_op op = {.operation = "identity"};
    if (getenv("ECHO")) { op.operation = "echo"; op.batched = 1; op.unordered = 1; op.batch_size = 256; op.capacity = 10000; op.timeout_ms = 60000; }
    bench_session_use(&s, &op);
    bench_run r;
    bench_session_run(&s, 8, 10000, 0, 0, &r);
    int rc = bench_session_run(&s, 8, n, 1000000, 0, &r);
    printf("rc=%d recs=%llu out=%llu %.3fs %.2fM rec/s worker cpu %.2fs driver %.2fs outmsgs %llu drain %.1fms\n", rc,
           (unsigned long long)r.records, (unsigned long long)r.out_records, r.seconds, r.records / r.seconds / 1e6,
           r.worker_cpu_s, r.driver_cpu_s, (unsigned long long)r.out_msgs, r.max_drain_s * 1e3);
    int code = bench_session_stop(&s, 10);
    printf("exit %d err=%s\n", code, s.error);
    bench_env_free_chunks(&env);
    bench_rig_free(env.rig);
    return 0;
}
