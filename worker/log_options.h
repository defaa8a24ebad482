/* worker/log_options.h — the log level the runner asks for in the
 * provisioned pipeline options.
 *
 * Flink's runner sets Beam's SDK harness options from its configuration:
 * the default level (a Java level name: OFF, ERROR, WARN, INFO, DEBUG,
 * TRACE) under "beam:option:default_sdk_harness_log_level:v1", and
 * per-logger levels under "beam:option:sdk_harness_log_level_overrides:v1".
 * The bare keys and the older {"options": {...}} layout are read too, and a
 * level may be any name or number worker/log_level.h accepts.
 *
 * The worker has a single logger, so per-logger overrides are reported
 * with a debug line and otherwise ignored. --log-level on the command line
 * wins over the pipeline options.
 */
#ifndef FNW_LOG_OPTIONS_H
#define FNW_LOG_OPTIONS_H

#include <stddef.h>

#include "worker/log.h"
#include "base/pb.h"

#define FNW_LOG_OPTION_LEVEL "default_sdk_harness_log_level"
#define FNW_LOG_OPTION_OVERRIDES "sdk_harness_log_level_overrides"

typedef struct fnw_log_request {
    int found; /* a default level option is present */
    int valid; /* ... and names a level */
    fnw_level level;
    char key[96];       /* the key that carried it */
    char text[64];      /* its value as given (for messages) */
    int has_overrides;  /* a per-logger overrides option is present */
    size_t n_overrides; /* its entries, when it is an object */
} fnw_log_request;

/* Reads the request out of opts (NULL reads as no request). */
void fnw_log_options_read(const Google__Protobuf__Struct *opts, fnw_log_request *out);

/* Applies it to lg unless the command line set the level (cli_level),
 * and says what it did: a debug line for a level taken or ignored and for
 * ignored overrides, a warning for a level it cannot read. */
void fnw_log_options_apply(fnw_logger *lg, const fnw_log_request *req, const char *cli_level);

#endif
