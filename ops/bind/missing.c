/* ops/bind/missing.c — the missing-result policy's names and option
 * parser (missing.h). */
#include "ops/bind/missing.h"

#include <string.h>

static const char *const names[] = { "null", "empty", "fail", NULL };

const char *fnw_missing_name(fnw_missing m)
{
    return (unsigned)m <= FNW_MISSING_FAIL ? names[m] : "?";
}

int fnw_missing_parse(const char *text, const char *option, fnw_missing *out, fnw_error *err)
{
    for (int i = 0; names[i]; i++) {
        if (text && strcmp(text, names[i]) == 0) {
            *out = (fnw_missing)i;
            return 0;
        }
    }
    return fnw_error_set(err,
                         "option '%s' must be one of null, empty, fail (what to do when the service has "
                         "no result); got '%.60s'",
                         option ? option : "?", text ? text : "");
}

int fnw_missing_option(const fnw_options *o, const char *key, fnw_missing def, fnw_missing *out,
                       fnw_error *err)
{
    const char *v = fnw_options_get(o, key);
    if (!v) {
        *out = def;
        return 0;
    }
    return fnw_missing_parse(v, key, out, err);
}
