/* codecs/pickle_cursor.c — why a strict pickle reader stopped (see
 * pickle_cursor.h). */
#include "codecs/pickle_cursor.h"

#include <stdarg.h>
#include <stdio.h>

int fnw_pickle_cursor_stop(fnw_pickle_cursor *c, const char *fmt, ...)
{
    int k = snprintf(c->why, sizeof c->why, "byte %zu: ", (size_t)(c->p - c->start));
    va_list ap;
    va_start(ap, fmt);
    if (k > 0 && (size_t)k < sizeof c->why)
        vsnprintf(c->why + k, sizeof c->why - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}
