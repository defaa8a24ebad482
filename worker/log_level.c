/* worker/log_level.c — log level names and thresholds (see log_level.h). */
#include "worker/log_level.h"

#include <errno.h>
#include <stdlib.h>
#include <strings.h>

typedef struct level_name {
    const char *name;
    fnw_level level;
} level_name;

static const level_name NAMES[] = {
    { "trace", FNW_LOG_DEBUG }, { "debug", FNW_LOG_DEBUG },    { "notset", FNW_LOG_DEBUG },
    { "info", FNW_LOG_INFO },   { "warn", FNW_LOG_WARN },      { "warning", FNW_LOG_WARN },
    { "error", FNW_LOG_ERROR }, { "critical", FNW_LOG_ERROR }, { "fatal", FNW_LOG_ERROR },
    { "off", FNW_LOG_ERROR },
};

const char *fnw_log_level_name(fnw_level level)
{
    switch (level) {
    case FNW_LOG_DEBUG:
        return "debug";
    case FNW_LOG_INFO:
        return "info";
    case FNW_LOG_WARN:
        return "warn";
    case FNW_LOG_ERROR:
        return "error";
    }
    return "?";
}

int fnw_log_level_from_threshold(double t, fnw_level *out)
{
    if (!(t >= 0)) /* also rejects NaN */
        return -1;
    if (t <= 10)
        *out = FNW_LOG_DEBUG;
    else if (t <= 20)
        *out = FNW_LOG_INFO;
    else if (t <= 30)
        *out = FNW_LOG_WARN;
    else
        *out = FNW_LOG_ERROR;
    return 0;
}

static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int fnw_log_level_parse(const char *s, fnw_level *out)
{
    if (all_digits(s)) {
        errno = 0;
        double t = strtod(s, NULL);
        return errno ? -1 : fnw_log_level_from_threshold(t, out);
    }
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++) {
        if (!strcasecmp(s, NAMES[i].name)) {
            *out = NAMES[i].level;
            return 0;
        }
    }
    return -1;
}
