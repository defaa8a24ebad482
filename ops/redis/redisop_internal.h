/* ops/redis/redisop_internal.h — internal to the `redis` operation
 * (redisop.c, redisop_config.c, redisop_map.c), not part of
 * any interface: the config an instance runs by, made once at open from the
 * options and the types, and the pure per-element steps (the hiredis reply
 * adapter, the reply-to-row mapping), kept apart from the I/O so they can be
 * tested without a server.
 *
 * Result mapping (how a reply fills the output row):
 *   ONE      option result_field: the whole reply is converted into that one
 *            output field (GET/HGET: a scalar; HGETALL: MAP<STRING, scalar>;
 *            HMGET: a ROW by position or an array/LIST; other commands: any
 *            type the conversion rules take).
 *   BY_NAME  HGETALL without result_field: each result field is filled from
 *            the hash entry whose key equals the field's name; a key with no
 *            field is ignored, a field with no key is null.
 *   BY_POS   any command whose reply is an array (HMGET, MGET, LRANGE...)
 *            without result_field: element k fills result field k; the reply
 *            must have exactly as many elements.
 * The result fields of BY_NAME/BY_POS are option result_fields; without it,
 * HMGET takes its literal field arguments and HGETALL every output field the
 * input does not have. Every other output field is copied from the input.
 *
 * Missing: a nil reply, an empty array from HGETALL, or an HMGET array of
 * nils only (the hash does not exist); on_missing says what happens.
 */
#ifndef FNW_REDISOP_INTERNAL_H
#define FNW_REDISOP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "ops/bind/missing.h"
#include "ops/bind/reply.h"
#include "ops/bind/outrow.h"
#include "ops/bind/tmpl.h"
#include "runtime/operation.h"
#include "ops/clients/redis.h"

#define FNW_REDISOP_MAX_POOL 64

typedef enum fnw_redisop_shape {
    FNW_REDISOP_OTHER = 0, /* any other command */
    FNW_REDISOP_GET,       /* GET key */
    FNW_REDISOP_HGET,      /* HGET key field */
    FNW_REDISOP_HGETALL,   /* HGETALL key */
    FNW_REDISOP_HMGET,     /* HMGET key field... */
} fnw_redisop_shape;

typedef enum fnw_redisop_mapping {
    FNW_REDISOP_ONE = 0,
    FNW_REDISOP_BY_NAME,
    FNW_REDISOP_BY_POS,
} fnw_redisop_mapping;

typedef struct fnw_redisop_config {
    /* connection */
    char host[64];
    int port, pool_size, db;
    size_t max_reply_bytes;
    char *password_env, *username;
    /* request */
    fnw_tmpl_argv *argv;
    size_t argc;
    char name[32]; /* the command name, upper case */
    fnw_redisop_shape shape;
    /* result */
    fnw_redisop_mapping mapping;
    fnw_outrow *row;
    int32_t *result_of_slot; /* output field index -> result index, or -1 */
    size_t nslots;
    fnw_missing on_missing;
    const fnw_type *in, *out;
} fnw_redisop_config;

/* Validates every option against env's types; NULL with a message naming
 * the option (and the field) on failure. */
fnw_redisop_config *fnw_redisop_config_new(const fnw_op_env *env, fnw_error *err);
void fnw_redisop_config_free(fnw_redisop_config *p);

/* The Redis client settings of p (strings borrowed from it). */
void fnw_redisop_config_client(const fnw_redisop_config *p, fnw_redis_config *cfg);

/* Parses "1.2.3.4:6379" or "[::1]:6379" (IP addresses only) into host
 * (cap bytes) and port; the message names option 'address'. */
int fnw_redisop_config_parse_address(const char *text, char *host, size_t cap, int *port, fnw_error *err);

/* hiredis's reply tree as the neutral form (items from the arena). */
int fnw_redisop_map_adapt(const redisReply *r, fnw_arena *a, fnw_reply *out, fnw_error *err);

/* The lookup cache's form of a reply (hiredis's tree flattened into out,
 * appended): a kind byte ('N', 'S' u32 len bytes, 'I' i64, 'A' u32 count
 * items), native byte order, the kinds fnw_redisop_map_adapt takes. */
int fnw_redisop_map_flatten(const redisReply *r, fnw_buf *out, fnw_error *err);
/* The len bytes at p back into the neutral form (items from the arena,
 * strings borrowed from p). */
int fnw_redisop_map_unflatten(const uint8_t *p, size_t len, fnw_arena *a, fnw_reply *out, fnw_error *err);

/* 1 when the reply counts as missing for the configured command. */
int fnw_redisop_map_is_missing(const fnw_redisop_config *p, const fnw_reply *r);

enum { FNW_REDISOP_ROW = 0, FNW_REDISOP_SKIP = 1 };

/* Builds the output row for input in and reply r: FNW_REDISOP_ROW with *row
 * set, FNW_REDISOP_SKIP (missing, on_missing empty: nothing to emit), or -1
 * with a message naming the field, the value and the type (or, for a
 * missing result under on_missing fail, the command). */
int fnw_redisop_map(const fnw_redisop_config *p, const fnw_value *in, const fnw_reply *r, fnw_arena *a,
                    fnw_value *row, fnw_error *err);

#endif
