/* worker/log_level.h — the worker's log levels and the names that select
 * them.
 *
 * The levels are the LogEntry severities the runner's Logging service
 * receives. A level name is accepted in any letter case: fnworker's own
 * (debug, info, warn, error), the names of Beam's Java SDK harness options
 * (TRACE, DEBUG, INFO, WARN, ERROR, OFF) and of Python's logging module
 * (DEBUG, INFO, WARNING, ERROR, CRITICAL, FATAL, NOTSET), or a decimal
 * Python threshold (10 debug, 20 info, 30 warning, 40 error, 50 critical).
 * A threshold between two levels selects the next level up; everything at
 * or above ERROR (CRITICAL, OFF) selects error, the quietest level the
 * worker has, so failures are always logged.
 */
#ifndef FNW_LOG_LEVEL_H
#define FNW_LOG_LEVEL_H

typedef enum fnw_level {
    FNW_LOG_DEBUG = 2,
    FNW_LOG_INFO = 3,
    FNW_LOG_WARN = 5,
    FNW_LOG_ERROR = 6,
} fnw_level;

/* "debug", "info", "warn" or "error". */
const char *fnw_log_level_name(fnw_level level);
/* A level name or a decimal threshold (see above); -1 if s is neither. */
int fnw_log_level_parse(const char *s, fnw_level *out);
/* The level for a Python numeric threshold; -1 if t is negative or not a number. */
int fnw_log_level_from_threshold(double t, fnw_level *out);

#endif
