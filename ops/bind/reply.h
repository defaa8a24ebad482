/* ops/bind/reply.h — a Redis-style reply in a neutral form, so the
 * conversion rules (conv.h) can be written and tested without a
 * Redis client. An operation built on hiredis maps its redisReply onto this:
 * REDIS_REPLY_STRING/STATUS/VERB -> STRING, INTEGER -> INTEGER, NIL -> NIL,
 * ARRAY/SET/PUSH -> ARRAY, MAP -> ARRAY of key, value, key, value...,
 * DOUBLE -> DOUBLE, BOOL -> BOOL; error replies are the operation's business
 * and never reach a conversion.
 *
 * A reply only borrows: str and items point into the client's reply, which
 * must outlive the conversion (the converted value copies what it keeps).
 */
#ifndef FNW_REPLY_H
#define FNW_REPLY_H

#include <stddef.h>
#include <stdint.h>

typedef enum fnw_reply_kind {
    FNW_REPLY_NIL = 0,
    FNW_REPLY_STRING,  /* u.str[0..len), binary-safe */
    FNW_REPLY_INTEGER, /* u.i */
    FNW_REPLY_DOUBLE,  /* u.d */
    FNW_REPLY_BOOL,    /* u.b (0 or 1) */
    FNW_REPLY_ARRAY,   /* u.items[0..len) */
} fnw_reply_kind;

typedef struct fnw_reply fnw_reply;
struct fnw_reply {
    fnw_reply_kind kind;
    size_t len; /* STRING: bytes; ARRAY: elements */
    union {
        const char *str;
        int64_t i;
        double d;
        int b;
        const fnw_reply *items;
    } u;
};

#endif
