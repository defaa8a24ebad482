/* pool/pool_flags.c — parsing `fnworker pool` flags (see pool_flags.h).
 * Flags take "--flag=value" or "--flag value"; "off" disables an endpoint. */
#include "pool/pool_flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_HTTP "127.0.0.1:9464"

void fnw_pool_flags_usage(const char *prog)
{
    printf("usage: %s pool --listen HOST:PORT [options]\n"
           "  --listen HOST:PORT       the launcher endpoint (pyflink-udf-runner.sh with\n"
           "                           FNW_POOL_ADDRESS); port 0 picks a free port\n"
           "  --grpc-listen HOST:PORT  Beam's BeamFnExternalWorkerPool (EXTERNAL environment)\n"
           "  --http-listen HOST:PORT  /metrics, /healthz, /debug/state (default %s; off)\n"
           "  --max-workers N          workers at once (default 16)\n"
           "  --grace-period S         on SIGTERM, seconds running workers may finish (default 25)\n"
           "  --start-timeout S        stop a worker not connected to its runner S seconds\n"
           "                           after it started (default 30; 0: never)\n"
           "  --token-file PATH        launchers must send the token in PATH (default:\n"
           "                           $FNW_POOL_TOKEN_FILE, else $FNW_POOL_TOKEN; none: no token)\n"
           "  --allow-worker-flag NAME a further worker flag launchers may pass, e.g.\n"
           "                           --flush-ms (repeatable; --semi_persist_dir and\n"
           "                           --log-level always pass)\n"
           "  --worker-bin PATH        the worker binary (default: this fnworker)\n",
           prog, DEFAULT_HTTP);
}

static const char *endpoint(const char *v)
{
    return strcmp(v, "off") == 0 ? NULL : v;
}

static int take_value(const char *name, int argc, char **argv, int *i, const char **v, fnw_error *err)
{
    const char *a = argv[*i], *eq = strchr(a, '=');
    if (eq) {
        *v = eq + 1;
        return 0;
    }
    if (*i + 1 >= argc)
        return fnw_error_set(err, "%s needs a value", name);
    *v = argv[++*i];
    return 0;
}

static int parse_number(const char *name, const char *v, double min, double max, double *out, fnw_error *err)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || d < min || d > max)
        return fnw_error_set(err, "%s: '%s' is not a number in [%g, %g]", name, v, min, max);
    *out = d;
    return 0;
}

static int flag_is(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

static int parse_one(fnw_pool_flags *f, int argc, char **argv, int *i, fnw_error *err)
{
    static const char *const names[] = { "--listen",        "--grpc-listen",  "--http-listen",
                                         "--max-workers",   "--grace-period", "--worker-bin",
                                         "--start-timeout", "--token-file",   "--allow-worker-flag" };
    const char *a = argv[*i], *v = NULL;
    double d;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        f->help = 1;
        return 0;
    }
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (!flag_is(a, names[k]))
            continue;
        if (take_value(names[k], argc, argv, i, &v, err) < 0)
            return -1;
        switch (k) {
        case 0:
            f->listen = endpoint(v);
            return 0;
        case 1:
            f->grpc_listen = endpoint(v);
            return 0;
        case 2:
            f->http_listen = endpoint(v);
            return 0;
        case 3:
            if (parse_number(names[k], v, 1, 4096, &d, err) < 0 || d != (unsigned)d)
                return fnw_error_set(err, "--max-workers: '%s' is not a whole number in [1, 4096]", v);
            f->max_workers = (unsigned)d;
            return 0;
        case 4:
            return parse_number(names[k], v, 0, 3600, &f->grace_period_s, err);
        case 5:
            f->worker_bin = v;
            return 0;
        case 6:
            return parse_number(names[k], v, 0, 86400, &f->start_timeout_s, err);
        case 7:
            f->token_file = v;
            return 0;
        default:
            return fnw_worker_args_allow_add(&f->allow, v, err);
        }
    }
    return fnw_error_set(err, "unknown flag '%s' (see fnworker pool --help)", a);
}

int fnw_pool_flags_parse(fnw_pool_flags *f, int argc, char **argv, fnw_error *err)
{
    memset(f, 0, sizeof *f);
    f->http_listen = DEFAULT_HTTP;
    f->max_workers = 16;
    f->grace_period_s = 25;
    f->start_timeout_s = 30;
    for (int i = 1; i < argc; i++)
        if (parse_one(f, argc, argv, &i, err) < 0)
            return -1;
    if (!f->help && !f->listen && !f->grpc_listen)
        return fnw_error_set(err, "give --listen HOST:PORT (the launcher endpoint) "
                                  "and/or --grpc-listen HOST:PORT");
    return 0;
}
