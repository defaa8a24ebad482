/* codecs/error.c — formatting for fnw_error (see error.h for the convention). */
#include "codecs/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int fnw_error_set(fnw_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int fnw_error_prefix(fnw_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char head[FNW_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    /* head + ": " + old message, truncated to the buffer (built by hand:
     * snprintf("%s: %s") trips -Wformat-truncation) */
    char old[FNW_ERROR_MAX];
    memcpy(old, err->msg, sizeof old);
    old[sizeof old - 1] = '\0';
    size_t cap = sizeof err->msg - 1;
    size_t len = strlen(head);
    if (len > cap)
        len = cap;
    memcpy(err->msg, head, len);
    if (cap - len >= 2) {
        memcpy(err->msg + len, ": ", 2);
        len += 2;
        size_t on = strlen(old);
        if (on > cap - len)
            on = cap - len;
        memcpy(err->msg + len, old, on);
        len += on;
    }
    err->msg[len] = '\0';
    return -1;
}
