/* worker/main.c — the fnworker process: parse the flags Flink passes, run
 * the worker, exit with its code. Everything else lives in worker/worker.c.
 * `fnworker pool ...` runs the worker pool instead (pool/pool.h). */
#include <stdio.h>
#include <string.h>

#include "codecs/error.h"
#include "pool/pool.h"
#include "worker/flags.h"
#include "worker/worker.h"

int main(int argc, char **argv)
{
    fnw_flags flags;
    fnw_error err;
    if (argc > 1 && strcmp(argv[1], "pool") == 0)
        return fnw_pool_main(argc - 1, argv + 1);
    if (fnw_flags_parse(&flags, argc, argv, &err) < 0) {
        fprintf(stderr, "fnworker: %s\n", err.msg);
        return 2;
    }
    if (flags.help) {
        fnw_flags_usage(argv[0]);
        return 0;
    }
    if (flags.version) {
        printf("fnworker %s\n", FNW_VERSION);
        return 0;
    }
    return fnw_worker_run(&flags);
}
