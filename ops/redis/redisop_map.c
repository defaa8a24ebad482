/* ops/redis/redisop_map.c — the `redis` operation's per-element
 * conversion, with no I/O: hiredis's reply tree as the neutral fnw_reply,
 * the missing-result test, and the reply spread over the output row by the
 * config's mapping (redisop_internal.h). Everything it builds comes from
 * the call's arena. */
#include "ops/redis/redisop_internal.h"

#include <string.h>

#include "ops/bind/conv.h"

#define MAX_DEPTH 32

static int adapt(const redisReply *r, fnw_arena *a, fnw_reply *out, int depth, fnw_error *err)
{
    memset(out, 0, sizeof *out);
    switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
        out->kind = FNW_REPLY_STRING;
        out->len = r->len;
        out->u.str = r->str ? r->str : "";
        return 0;
    case REDIS_REPLY_INTEGER:
        out->kind = FNW_REPLY_INTEGER;
        out->u.i = r->integer;
        return 0;
    case REDIS_REPLY_NIL:
        out->kind = FNW_REPLY_NIL;
        return 0;
    case REDIS_REPLY_ARRAY:
        break;
    default:
        return fnw_error_set(err, "a Redis reply of type %d cannot be converted", r->type);
    }
    if (depth >= MAX_DEPTH)
        return fnw_error_set(err, "the Redis reply nests arrays deeper than %d levels", MAX_DEPTH);
    fnw_reply *items = NULL;
    if (r->elements && !(items = fnw_arena_alloc(a, r->elements * sizeof *items)))
        return fnw_error_set(err, "out of memory for a Redis reply of %zu elements", r->elements);
    for (size_t i = 0; i < r->elements; i++)
        if (adapt(r->element[i], a, &items[i], depth + 1, err) != 0)
            return -1;
    out->kind = FNW_REPLY_ARRAY;
    out->len = r->elements;
    out->u.items = items;
    return 0;
}

int fnw_redisop_map_adapt(const redisReply *r, fnw_arena *a, fnw_reply *out, fnw_error *err)
{
    return adapt(r, a, out, 0, err);
}

int fnw_redisop_map_is_missing(const fnw_redisop_config *p, const fnw_reply *r)
{
    if (r->kind == FNW_REPLY_NIL)
        return 1;
    if (r->kind != FNW_REPLY_ARRAY)
        return 0;
    if (p->shape == FNW_REDISOP_HGETALL)
        return r->len == 0;
    if (p->shape != FNW_REDISOP_HMGET)
        return 0;
    for (size_t i = 0; i < r->len; i++)
        if (r->u.items[i].kind != FNW_REPLY_NIL)
            return 0;
    return 1;
}

static int convert_into(const fnw_redisop_config *p, size_t k, const fnw_reply *r, fnw_arena *a,
                        fnw_value *row, fnw_error *err)
{
    return fnw_conv_reply(fnw_outrow_result_type(p->row, k), r, fnw_outrow_result_name(p->row, k), a,
                          &row->u.items[fnw_outrow_slot(p->row, k)], err);
}

/* HGETALL: key, value, key, value... each value into the field of its key. */
static int by_name(const fnw_redisop_config *p, const fnw_reply *r, fnw_arena *a, fnw_value *row,
                   fnw_error *err)
{
    if (r->kind != FNW_REPLY_ARRAY || r->len % 2)
        return fnw_error_set(err, "%s replied with something other than key/value pairs", p->name);
    for (size_t i = 0; i < r->len; i += 2) {
        const fnw_reply *key = &r->u.items[i];
        if (key->kind != FNW_REPLY_STRING)
            continue;
        int64_t slot = fnw_type_find_field(p->out, key->u.str, key->len);
        if (slot < 0 || (size_t)slot >= p->nslots || p->result_of_slot[slot] < 0)
            continue;
        if (convert_into(p, (size_t)p->result_of_slot[slot], &r->u.items[i + 1], a, row, err) != 0)
            return -1;
    }
    return 0;
}

/* An array reply: element k into result field k. */
static int by_pos(const fnw_redisop_config *p, const fnw_reply *r, fnw_arena *a, fnw_value *row,
                  fnw_error *err)
{
    size_t n = fnw_outrow_results(p->row);
    if (r->kind != FNW_REPLY_ARRAY)
        return fnw_error_set(err,
                             "%s did not reply with an array, so there is nothing to fill %zu field(s) with",
                             p->name, n);
    if (r->len != n)
        return fnw_error_set(err, "%s replied with %zu element(s) for %zu result field(s)", p->name, r->len,
                             n);
    for (size_t k = 0; k < n; k++)
        if (convert_into(p, k, &r->u.items[k], a, row, err) != 0)
            return -1;
    return 0;
}

int fnw_redisop_map(const fnw_redisop_config *p, const fnw_value *in, const fnw_reply *r, fnw_arena *a,
                    fnw_value *row, fnw_error *err)
{
    int missing = fnw_redisop_map_is_missing(p, r);
    if (missing && p->on_missing == FNW_MISSING_EMPTY)
        return FNW_REDISOP_SKIP;
    if (missing && p->on_missing == FNW_MISSING_FAIL)
        return fnw_error_set(err, "no value (on_missing is fail)");
    if (fnw_outrow_assemble(p->row, in, a, row, err) != 0)
        return -1;
    if (missing)
        return FNW_REDISOP_ROW;
    int rc;
    switch (p->mapping) {
    case FNW_REDISOP_BY_NAME:
        rc = by_name(p, r, a, row, err);
        break;
    case FNW_REDISOP_BY_POS:
        rc = by_pos(p, r, a, row, err);
        break;
    default:
        rc = convert_into(p, 0, r, a, row, err);
        break;
    }
    return rc != 0 ? -1 : FNW_REDISOP_ROW;
}
