/* worker/flags.c — command-line parsing (see flags.h). */
#include "worker/flags.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "url: \"host:port\"" (protobuf text format of ApiServiceDescriptor) -> host:port.
 * The result is written into buf. */
static const char *descriptor_url(const char *text, char *buf, size_t n)
{
    const char *q = strchr(text, '"');
    if (!q)
        return text;
    const char *e = strchr(q + 1, '"');
    size_t len = e ? (size_t)(e - q - 1) : strlen(q + 1);
    if (len >= n)
        len = n - 1;
    memcpy(buf, q + 1, len);
    buf[len] = '\0';
    return buf;
}

static int parse_double(const char *name, const char *v, double min, double *out, fnw_error *err)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || d < min)
        return fnw_error_set(err, "--%s: '%s' is not a number >= %g", name, v, min);
    *out = d;
    return 0;
}

static int parse_threads(const char *v, size_t *out, fnw_error *err)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < 1 || n > 256)
        return fnw_error_set(err, "--blocking-threads: '%s' is not a whole number from 1 to 256", v);
    *out = (size_t)n;
    return 0;
}

static int parse_fd(const char *v, int *out, fnw_error *err)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < 3 || n > 65535)
        return fnw_error_set(err, "--relay-fd: '%s' is not a descriptor number from 3 to 65535", v);
    *out = (int)n;
    return 0;
}

static int parse_level(const char *v, fnw_level *out, fnw_error *err)
{
    if (fnw_log_level_parse(v, out) < 0)
        return fnw_error_set(err,
                             "--log-level: '%s' is not a log level (debug, info, warn, error; "
                             "or a Beam/Python level name or number)",
                             v);
    return 0;
}

static int take_value(const char *arg, const char *name, int *i, int argc, char **argv, const char **out,
                      fnw_error *err)
{
    size_t nl = strlen(name);
    if (strncmp(arg, name, nl))
        return 0;
    if (arg[nl] == '=') {
        *out = arg + nl + 1;
        return 1;
    }
    if (arg[nl] == '\0') {
        if (*i + 1 >= argc)
            return fnw_error_set(err, "%s needs a value", name), -1;
        *out = argv[++*i];
        return 1;
    }
    return 0;
}

/* A required flag is missing: an unknown flag given instead is named first. */
static int missing(const fnw_flags *f, fnw_error *err, const char *what)
{
    if (f->n_unknown)
        return fnw_error_set(err, "unknown flag %s (see --help for the flags fnworker takes); %s",
                             f->unknown[0], what);
    return fnw_error_set(err, "%s", what);
}

/* --relay=on|off (and FNW_RELAY). */
static int parse_relay(const char *v, int *out, fnw_error *err)
{
    if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "true"))
        *out = 1;
    else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false"))
        *out = 0;
    else
        return fnw_error_set(err, "--relay takes on or off, not '%s'", v);
    return 0;
}

int fnw_flags_parse(fnw_flags *f, int argc, char **argv, fnw_error *err)
{
    memset(f, 0, sizeof *f);
    f->level = FNW_LOG_INFO;
    f->connect_timeout_s = 60;
    f->flush_bytes = 1000000;
    f->flush_ms = 5;
    f->early_data_ttl_s = 30;
    f->blocking_threads = 4;
    f->lull_seconds = 300;
    f->relay_fd = -1;
    f->semi_persist_dir = "/tmp";
    f->relay = 1;
    if (getenv("FNW_RELAY") && parse_relay(getenv("FNW_RELAY"), &f->relay, err) < 0)
        return fnw_error_prefix(err, "FNW_RELAY");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        int r;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            f->help = 1;
            continue;
        }
        if (!strcmp(a, "--version")) {
            f->version = 1;
            continue;
        }
#define STR_FLAG(flag, field) \
    if ((r = take_value(a, flag, &i, argc, argv, &v, err)) != 0) { \
        if (r < 0) \
            return -1; \
        f->field = v; \
        continue; \
    }
        STR_FLAG("--id", id)
        STR_FLAG("--worker_id", id)
        STR_FLAG("--provision_endpoint", provision_endpoint)
        STR_FLAG("--semi_persist_dir", semi_persist_dir)
        STR_FLAG("--logging_endpoint", logging_endpoint)
        STR_FLAG("--artifact_endpoint", artifact_endpoint)
        STR_FLAG("--control_endpoint", control_endpoint)
        STR_FLAG("--plugins-dir", plugins_dir)
#undef STR_FLAG
        if ((r = take_value(a, "--log-level", &i, argc, argv, &v, err)) != 0 ||
            (r = take_value(a, "--log_level", &i, argc, argv, &v, err)) != 0) {
            if (r < 0 || parse_level(v, &f->level, err) < 0)
                return -1;
            f->log_level = v;
            continue;
        }
        if ((r = take_value(a, "--connect-timeout", &i, argc, argv, &v, err)) != 0) {
            if (r < 0 || parse_double("connect-timeout", v, 0.1, &f->connect_timeout_s, err) < 0)
                return -1;
            continue;
        }
        if ((r = take_value(a, "--flush-bytes", &i, argc, argv, &v, err)) != 0) {
            double d;
            if (r < 0 || parse_double("flush-bytes", v, 1, &d, err) < 0)
                return -1;
            f->flush_bytes = (size_t)d;
            continue;
        }
        if ((r = take_value(a, "--flush-ms", &i, argc, argv, &v, err)) != 0) {
            if (r < 0 || parse_double("flush-ms", v, 0.1, &f->flush_ms, err) < 0)
                return -1;
            continue;
        }
        if ((r = take_value(a, "--early-data-ttl", &i, argc, argv, &v, err)) != 0) {
            if (r < 0 || parse_double("early-data-ttl", v, 0.1, &f->early_data_ttl_s, err) < 0)
                return -1;
            continue;
        }
        if ((r = take_value(a, "--blocking-threads", &i, argc, argv, &v, err)) != 0) {
            if (r < 0 || parse_threads(v, &f->blocking_threads, err) < 0)
                return -1;
            continue;
        }
        if ((r = take_value(a, "--lull-seconds", &i, argc, argv, &v, err)) != 0) {
            if (r < 0 || parse_double("lull-seconds", v, 0, &f->lull_seconds, err) < 0)
                return -1;
            continue;
        }
        if ((r = take_value(a, "--relay-fd", &i, argc, argv, &v, err)) != 0) {
            if (r < 0 || parse_fd(v, &f->relay_fd, err) < 0)
                return -1;
            continue;
        }
        if ((r = take_value(a, "--relay", &i, argc, argv, &v, err)) != 0) {
            if (r < 0 || parse_relay(v, &f->relay, err) < 0)
                return -1;
            continue;
        }
        if (!strncmp(a, "--", 2)) {
            if (f->n_unknown < FNW_FLAGS_MAX_UNKNOWN)
                f->unknown[f->n_unknown++] = a;
            continue;
        }
        return fnw_error_set(err, "unexpected argument '%s' (see --help)", a);
    }
    if (f->help || f->version)
        return 0;
    if (!f->id)
        f->id = getenv("WORKER_ID");
    if (!f->control_endpoint && getenv("CONTROL_API_SERVICE_DESCRIPTOR"))
        f->control_endpoint = descriptor_url(getenv("CONTROL_API_SERVICE_DESCRIPTOR"), f->control_buf,
                                             sizeof f->control_buf);
    if (!f->logging_endpoint && getenv("LOGGING_API_SERVICE_DESCRIPTOR"))
        f->logging_endpoint = descriptor_url(getenv("LOGGING_API_SERVICE_DESCRIPTOR"), f->logging_buf,
                                             sizeof f->logging_buf);
    if (!f->id || !*f->id)
        return missing(f, err,
                       "No id provided: pass --id=<worker id> (Flink passes it when it launches the worker)");
    if (!f->provision_endpoint && !f->control_endpoint)
        return missing(f, err, "No provision endpoint provided: pass --provision_endpoint=host:port");
    return 0;
}

void fnw_flags_usage(const char *prog)
{
    printf("usage: %s --id=ID --provision_endpoint=HOST:PORT [--semi_persist_dir=DIR] [options]\n"
           "\n"
           "fnworker is a Beam Fn API worker that Flink launches in place of its Python worker.\n"
           "It runs native operations named by a fnworker.v1.OperationSpec payload.\n"
           "\n"
           "  --id=ID                    worker id (sent as the worker_id header on every call)\n"
           "  --provision_endpoint=H:P   the runner's provisioning service\n"
           "  --semi_persist_dir=DIR     accepted for compatibility (default /tmp)\n"
           "  --control_endpoint=H:P     older form: control endpoint without provisioning\n"
           "  --logging_endpoint=H:P     older form: logging endpoint\n"
           "  --artifact_endpoint=H:P    older form: accepted and unused\n"
           "  --log-level=LEVEL          debug, info (default), warn, error; overrides the level\n"
           "                             the runner's pipeline options ask for\n"
           "  --connect-timeout=SECONDS  how long to retry unreachable endpoints (default 60)\n"
           "  --flush-bytes=N            send output when this many bytes are buffered (default 1000000)\n"
           "  --flush-ms=MS              send buffered output at most this late (default 5)\n"
           "  --early-data-ttl=SECONDS   keep input that arrives before its process_bundle this long\n"
           "                             (default 30; it is bounded to 4 MiB per instruction, 8 MiB in all)\n"
           "  --plugins-dir=DIR          load operation plugins (*.so) from DIR (default: $FNW_PLUGINS_DIR,\n"
           "                             else plugins/ beside this executable; empty: none)\n"
           "  --blocking-threads=N       threads for blocking operations (default 4)\n"
           "  --lull-seconds=SECONDS     WARN about a bundle that made no progress this long, naming what\n"
           "                             is in flight (default 300; 0 turns it off). SIGQUIT logs every\n"
           "                             bundle, queue and call at any time\n"
           "  --relay-fd=N               set by the worker pool: the socket on which it asks the launcher\n"
           "                             to start PyFlink's Python worker (docs/design/relay.md, section 10)\n"
           "  --relay=on|off             run Python functions that are not fnworker operations in\n"
           "                             PyFlink's own Python worker, started as a child (default on;\n"
           "                             also $FNW_RELAY). off: such bundles fail, naming the function\n"
           "  --help, --version\n",
           prog);
}
