/* main.c — the fnworker process: parse the flags Flink passes, load
 * the operations (built-ins and plugins), run the worker, exit with its
 * code. Everything else lives in worker/worker.c. `fnworker pool ...` runs
 * the worker pool instead (pool/pool.h). */
#include <stdio.h>
#include <string.h>

#include "ops/builtins.h"
#include "codecs/error.h"
#include "runtime/blocking_pool.h"
#include "pool/pool.h"
#include "worker/flags.h"
#include "worker/plugins.h"
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
    fnw_registry ops;
    char dir_buf[4096];
    int named;
    const char *dir = fnw_plugins_dir(flags.plugins_dir, dir_buf, sizeof dir_buf, &named);
    fnw_registry_init(&ops);
    fnw_builtins_register(&ops);
    if (fnw_plugins_load_dir(&ops, dir, named, flags.level, &err) < 0) {
        fprintf(stderr, "fnworker: %s\n", err.msg);
        return 2;
    }
    fnw_blocking_pool_configure(flags.blocking_threads);
    int code = fnw_worker_run(&flags, &ops);
    fnw_blocking_pool_shared_free();
    return code;
}
