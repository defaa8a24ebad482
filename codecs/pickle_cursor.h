/* codecs/pickle_cursor.h — the bounded cursor the strict pickle readers
 * (pickle_payload.c: the PyFlink package's payload; pickle_const.c: the SQL
 * constants the JVM pickles) walk: where it is inside the pickle, how many
 * bytes are left, and why the grammar stopped (a message that starts with
 * the byte offset). Internal to those readers; no allocation, no I/O.
 */
#ifndef FNW_PICKLE_CURSOR_H
#define FNW_PICKLE_CURSOR_H

#include <stddef.h>
#include <stdint.h>

typedef struct fnw_pickle_cursor {
    const uint8_t *start, *p, *end;
    char why[240]; /* why the grammar stopped, with the byte offset */
} fnw_pickle_cursor;

static inline size_t fnw_pickle_cursor_left(const fnw_pickle_cursor *c)
{
    return (size_t)(c->end - c->p);
}

/* Sets c->why to "byte <offset>: " and the message; returns -1. */
int fnw_pickle_cursor_stop(fnw_pickle_cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
