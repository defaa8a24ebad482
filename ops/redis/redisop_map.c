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

static int flatten(const redisReply *r, fnw_buf *out, int depth, fnw_error *err)
{
    uint8_t kind;
    switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS: {
        uint32_t n = (uint32_t)r->len;
        kind = 'S';
        if (r->len > UINT32_MAX || fnw_buf_append(out, &kind, 1) || fnw_buf_append(out, &n, 4) ||
            (n && fnw_buf_append(out, r->str, n)))
            return fnw_error_set(err, "out of memory keeping a Redis reply of %zu bytes", r->len);
        return 0;
    }
    case REDIS_REPLY_INTEGER: {
        int64_t v = r->integer;
        kind = 'I';
        return fnw_buf_append(out, &kind, 1) || fnw_buf_append(out, &v, 8)
                   ? fnw_error_set(err, "out of memory keeping a Redis reply")
                   : 0;
    }
    case REDIS_REPLY_NIL:
        kind = 'N';
        return fnw_buf_append(out, &kind, 1) ? fnw_error_set(err, "out of memory keeping a Redis reply") : 0;
    case REDIS_REPLY_ARRAY:
        break;
    default:
        return fnw_error_set(err, "a Redis reply of type %d cannot be converted", r->type);
    }
    if (depth >= MAX_DEPTH)
        return fnw_error_set(err, "the Redis reply nests arrays deeper than %d levels", MAX_DEPTH);
    uint32_t n = (uint32_t)r->elements;
    kind = 'A';
    if (r->elements > UINT32_MAX || fnw_buf_append(out, &kind, 1) || fnw_buf_append(out, &n, 4))
        return fnw_error_set(err, "out of memory keeping a Redis reply of %zu elements", r->elements);
    for (size_t i = 0; i < r->elements; i++)
        if (flatten(r->element[i], out, depth + 1, err) != 0)
            return -1;
    return 0;
}

int fnw_redisop_map_flatten(const redisReply *r, fnw_buf *out, fnw_error *err)
{
    return flatten(r, out, 0, err);
}

static int unflatten(const uint8_t *p, size_t len, size_t *at, fnw_arena *a, fnw_reply *out, int depth,
                     fnw_error *err)
{
    memset(out, 0, sizeof *out);
    uint32_t n;
    if (*at >= len)
        return fnw_error_set(err, "a kept Redis reply is cut short");
    uint8_t kind = p[(*at)++];
    switch (kind) {
    case 'N':
        out->kind = FNW_REPLY_NIL;
        return 0;
    case 'I':
        if (len - *at < 8)
            return fnw_error_set(err, "a kept Redis reply is cut short");
        out->kind = FNW_REPLY_INTEGER;
        memcpy(&out->u.i, p + *at, 8);
        *at += 8;
        return 0;
    case 'S':
        if (len - *at < 4)
            return fnw_error_set(err, "a kept Redis reply is cut short");
        memcpy(&n, p + *at, 4);
        *at += 4;
        if (len - *at < n)
            return fnw_error_set(err, "a kept Redis reply is cut short");
        out->kind = FNW_REPLY_STRING;
        out->len = n;
        out->u.str = (const char *)p + *at;
        *at += n;
        return 0;
    case 'A':
        break;
    default:
        return fnw_error_set(err, "a kept Redis reply has an unknown kind %u", kind);
    }
    if (len - *at < 4 || depth >= MAX_DEPTH)
        return fnw_error_set(err, "a kept Redis reply is cut short or too deep");
    memcpy(&n, p + *at, 4);
    *at += 4;
    if (n > len - *at) /* every item takes at least one byte */
        return fnw_error_set(err, "a kept Redis reply is cut short");
    fnw_reply *items = NULL;
    if (n && !(items = fnw_arena_alloc(a, n * sizeof *items)))
        return fnw_error_set(err, "out of memory for a Redis reply of %u elements", n);
    for (uint32_t i = 0; i < n; i++)
        if (unflatten(p, len, at, a, &items[i], depth + 1, err) != 0)
            return -1;
    out->kind = FNW_REPLY_ARRAY;
    out->len = n;
    out->u.items = items;
    return 0;
}

int fnw_redisop_map_unflatten(const uint8_t *p, size_t len, fnw_arena *a, fnw_reply *out, fnw_error *err)
{
    size_t at = 0;
    if (unflatten(p, len, &at, a, out, 0, err) != 0)
        return -1;
    return at == len ? 0 : fnw_error_set(err, "a kept Redis reply has %zu bytes too many", len - at);
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
