/* ops/redis/redisop.c — the `redis` operation: looks each input up in
 * Redis with a command rendered from the input row (GET user:{id},
 * HGETALL user:{id}, ...) and emits the input enriched with the reply.
 *
 * The config (options, command template, result mapping) is made at open by
 * redisop_config.c; replies become rows in redisop_map.c; this
 * file owns the I/O through the connection pool (redis.h):
 *   per element  one command per call;
 *   batch        the whole batch pinned to one connection, so it leaves in
 *                one write; a plain `GET <key>` becomes one MGET of every
 *                key. Replies are matched to inputs by position.
 * A connection error, a Redis error reply or a conversion failure fails the
 * call (the retry strategy then applies) with the server's or the
 * converter's message. Cancel cancels every command still out: their
 * replies are swallowed by the pool. Per call, everything comes from the
 * call arena; the rendered arguments go through one buffer per instance
 * (the pool copies them).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/redis/redisop_internal.h"
#include "ops/builtins.h"
#include "ops/clients/lookup_cache.h"
#include "ops/secrets/secret_mask.h"

typedef struct redis_state {
    fnw_redisop_config *conf;
    fnw_redis *pool;
    fnw_buf args;      /* rendered arguments of the command being sent */
    const char **argv; /* conf->argc entries */
    size_t *lens;
    fnw_lookup_cache *cache; /* NULL without cache_max_rows */
    int cache_missing;
    fnw_buf key;  /* the cache key of the command being looked up */
    fnw_buf flat; /* a reply in the cache's form */
} redis_state;

typedef struct rcall rcall;

typedef struct rslot {
    rcall *rc;
    uint32_t i; /* the input this command answers (0 for MGET) */
} rslot;

struct rcall {
    redis_state *st;
    fnw_call *call;
    size_t n, pending;
    int mget;
    fnw_value *in;        /* the decoded inputs */
    fnw_redis_cmd **cmds; /* out, NULL once answered */
    rslot *slots;
    fnw_lookup_waiter w; /* with the cache: waiting on a flight */
    int cached;
};

/* ---- open / close -------------------------------------------------------------- */

static void redis_close(void *state)
{
    redis_state *st = state;
    if (!st)
        return;
    fnw_redis_free(st->pool);
    fnw_lookup_cache_free(st->cache);
    fnw_redisop_config_free(st->conf);
    fnw_buf_free(&st->args);
    fnw_buf_free(&st->key);
    fnw_buf_free(&st->flat);
    free(st->argv);
    free(st->lens);
    free(st);
}

static int redis_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    *state = NULL;
    redis_state *st = calloc(1, sizeof *st);
    if (!st)
        return fnw_error_set(err, "operation 'redis': out of memory");
    fnw_buf_init(&st->args, 0);
    fnw_buf_init(&st->key, 0);
    fnw_buf_init(&st->flat, 0);
    if (!(st->conf = fnw_redisop_config_new(env, err)) ||
        fnw_lookup_cache_open(env, "redis", st, &st->cache, &st->cache_missing, err) != 0) {
        redis_close(st);
        return -1;
    }
    st->argv = calloc(st->conf->argc, sizeof *st->argv);
    st->lens = calloc(st->conf->argc, sizeof *st->lens);
    if (!st->argv || !st->lens) {
        redis_close(st);
        return fnw_error_set(err, "operation 'redis': out of memory");
    }
    fnw_redis_config cfg;
    fnw_redisop_config_client(st->conf, &cfg);
    fnw_error why;
    if (!(st->pool = fnw_redis_new(env->loop, &cfg, &why))) {
        redis_close(st);
        return fnw_error_set(err, "operation 'redis': %s", why.msg);
    }
    *state = st;
    return 0;
}

/* ---- settling ---------------------------------------------------------------------- */

static void cancel_out(rcall *rc)
{
    for (size_t i = 0; i < rc->n; i++)
        if (rc->cmds[i]) {
            fnw_redis_cancel(rc->cmds[i]);
            rc->cmds[i] = NULL;
        }
}

static void abort_call(rcall *rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void abort_call(rcall *rc, const char *fmt, ...)
{
    char msg[FNW_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *secrets[] = { fnw_redis_secret(rc->st->pool) };
    fnw_secret_mask_str(msg, secrets, 1); /* Redis errors and values may quote the password */
    cancel_out(rc);
    fnw_call_set_op_data(rc->call, NULL);
    fnw_call_fail(rc->call, "%s", msg); /* last: the call is the engine's after this */
}

/* "GET user:42" for input i, printable, at most about 120 bytes. */
static void describe(rcall *rc, size_t i, char *out, size_t cap)
{
    redis_state *st = rc->st;
    fnw_error err;
    fnw_buf_clear(&st->args);
    snprintf(out, cap, "%s", st->conf->name);
    if (fnw_tmpl_argv_render(st->conf->argv, &rc->in[i], &st->args, st->lens, &err) != 0)
        return;
    size_t o = 0, at = 0;
    for (size_t k = 0; k < st->conf->argc && o + 8 < cap; k++) {
        if (k)
            out[o++] = ' ';
        for (size_t b = 0; b < st->lens[k] && o + 8 < cap; b++) {
            unsigned char ch = st->args.p[at + b];
            o += (size_t)snprintf(out + o, cap - o, ch > 0x20 && ch < 0x7f ? "%c" : "\\x%02x", ch);
        }
        at += st->lens[k];
    }
    out[o] = '\0';
    if (at < st->args.len || o + 8 >= cap)
        snprintf(out + (o < cap - 4 ? o : cap - 4), 4, "...");
}

/* Input i's reply into its output; 0, or -1 after failing the call. */
static int one_result(rcall *rc, size_t i, const redisReply *reply)
{
    fnw_arena *a = fnw_call_arena(rc->call);
    fnw_error err;
    fnw_reply r;
    fnw_value row;
    int rc_map = fnw_redisop_map_adapt(reply, a, &r, &err);
    if (rc_map == 0)
        rc_map = fnw_redisop_map(rc->st->conf, &rc->in[i], &r, a, &row, &err);
    if (rc_map == FNW_REDISOP_ROW && fnw_call_emit_value(rc->call, i, &row, &err) != 0)
        rc_map = -1;
    if (rc_map >= 0)
        return 0;
    char what[160];
    describe(rc, i, what, sizeof what);
    abort_call(rc, "redis: %s: %s", what, err.msg);
    return -1;
}

static void on_reply(void *user, const redisReply *reply, const fnw_error *err)
{
    rslot *s = user;
    rcall *rc = s->rc;
    rc->cmds[s->i] = NULL;
    rc->pending--;
    if (err) {
        abort_call(rc, "%s", err->msg);
        return;
    }
    if (reply->type == REDIS_REPLY_ERROR) {
        char what[160];
        if (rc->mget)
            snprintf(what, sizeof what, "MGET of %zu keys", rc->n);
        else
            describe(rc, s->i, what, sizeof what);
        abort_call(rc, "redis %s:%d: %s: %.*s", rc->st->conf->host, rc->st->conf->port, what,
                   (int)(reply->len > 400 ? 400 : reply->len), reply->str ? reply->str : "");
        return;
    }
    if (rc->mget) {
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements != rc->n) {
            abort_call(rc, "redis: MGET of %zu keys did not reply with as many values", rc->n);
            return;
        }
        for (size_t i = 0; i < rc->n; i++)
            if (one_result(rc, i, reply->element[i]) != 0)
                return;
    } else if (one_result(rc, s->i, reply) != 0) {
        return;
    }
    if (rc->pending == 0) {
        fnw_call_set_op_data(rc->call, NULL);
        fnw_call_complete(rc->call);
    }
}

/* ---- sending ------------------------------------------------------------------------ */

static int render(rcall *rc, size_t i, fnw_error *err)
{
    redis_state *st = rc->st;
    fnw_buf_clear(&st->args);
    if (fnw_tmpl_argv_render(st->conf->argv, &rc->in[i], &st->args, st->lens, err) != 0)
        return -1;
    size_t off = 0;
    for (size_t k = 0; k < st->conf->argc; k++) {
        st->argv[k] = (const char *)st->args.p + off;
        off += st->lens[k];
    }
    return 0;
}

/* One command per input, all on one connection. */
static void send_each(rcall *rc)
{
    redis_state *st = rc->st;
    fnw_error err;
    fnw_redis_pin(st->pool);
    for (size_t i = 0; i < rc->n; i++) {
        rc->slots[i] = (rslot){ rc, (uint32_t)i };
        if (render(rc, i, &err) != 0 || fnw_redis_send(st->pool, (int)st->conf->argc, st->argv, st->lens,
                                                       on_reply, &rc->slots[i], &rc->cmds[i], &err) != 0) {
            fnw_redis_unpin(st->pool);
            abort_call(rc, "%s", err.msg);
            return;
        }
        rc->pending++;
    }
    fnw_redis_unpin(st->pool);
}

/* GET in batch mode: one MGET of every input's key. */
static void send_mget(rcall *rc)
{
    redis_state *st = rc->st;
    fnw_arena *a = fnw_call_arena(rc->call);
    const char **argv = fnw_arena_alloc(a, (rc->n + 1) * sizeof *argv);
    size_t *lens = fnw_arena_alloc(a, (rc->n + 1) * sizeof *lens);
    fnw_error err;
    if (!argv || !lens) {
        abort_call(rc, "redis: out of memory for an MGET of %zu keys", rc->n);
        return;
    }
    fnw_buf_clear(&st->args);
    size_t two[2];
    for (size_t i = 0; i < rc->n; i++) {
        size_t start = st->args.len;
        if (fnw_tmpl_argv_render(st->conf->argv, &rc->in[i], &st->args, two, &err) != 0) {
            abort_call(rc, "%s", err.msg);
            return;
        }
        st->args.len = start; /* keep the key only: move it over the command name */
        memmove(st->args.p + start, st->args.p + start + two[0], two[1]);
        st->args.len = start + two[1];
        lens[i + 1] = two[1];
    }
    argv[0] = "MGET";
    lens[0] = 4;
    size_t off = 0;
    for (size_t i = 0; i < rc->n; i++) {
        argv[i + 1] = (const char *)st->args.p + off;
        off += lens[i + 1];
    }
    rc->mget = 1;
    rc->slots[0] = (rslot){ rc, 0 };
    if (fnw_redis_send(st->pool, (int)(rc->n + 1), argv, lens, on_reply, &rc->slots[0], &rc->cmds[0], &err) !=
        0) {
        abort_call(rc, "%s", err.msg);
        return;
    }
    rc->pending = 1;
}

/* ---- the lookup cache ------------------------------------------------------------ */

static int cache_key(redis_state *st);

/* A reply in the cache's form into input 0's output; completes or fails the
 * call. A reply the row cannot use leaves the cache, so a retry asks Redis. */
static void cached_answer(rcall *rc, const uint8_t *flat, size_t len)
{
    fnw_arena *a = fnw_call_arena(rc->call);
    fnw_error err;
    fnw_reply r;
    fnw_value row;
    int rc_map = fnw_redisop_map_unflatten(flat, len, a, &r, &err);
    if (rc_map == 0)
        rc_map = fnw_redisop_map(rc->st->conf, &rc->in[0], &r, a, &row, &err);
    if (rc_map == FNW_REDISOP_ROW && fnw_call_emit_value(rc->call, 0, &row, &err) != 0)
        rc_map = -1;
    if (rc_map >= 0) {
        fnw_call_set_op_data(rc->call, NULL);
        fnw_call_complete(rc->call);
        return;
    }
    if (render(rc, 0, &err) == 0 && cache_key(rc->st) == 0)
        fnw_lookup_cache_drop(rc->st->cache, rc->st->key.p, rc->st->key.len);
    char what[160];
    describe(rc, 0, what, sizeof what);
    abort_call(rc, "redis: %s: %s", what, err.msg);
}

/* Every call waiting on flight f fails with msg. */
static void flight_fail(redis_state *st, fnw_lookup_flight *f, const char *msg)
{
    fnw_lookup_cache_settle(st->cache, f, NULL, 0, 0);
    for (fnw_lookup_waiter *w; (w = fnw_lookup_cache_next(st->cache, f));)
        abort_call(w->user, "%s", msg);
}

static int reply_is_missing(const fnw_redisop_config *p, const redisReply *r)
{
    if (r->type == REDIS_REPLY_NIL)
        return 1;
    if (r->type != REDIS_REPLY_ARRAY)
        return 0;
    if (p->shape == FNW_REDISOP_HGETALL)
        return r->elements == 0;
    if (p->shape != FNW_REDISOP_HMGET)
        return 0;
    for (size_t i = 0; i < r->elements; i++)
        if (r->element[i]->type != REDIS_REPLY_NIL)
            return 0;
    return 1;
}

static void on_flight_reply(void *user, const redisReply *reply, const fnw_error *err)
{
    fnw_lookup_flight *f = user;
    redis_state *st = fnw_lookup_cache_owner(f);
    if (err) {
        flight_fail(st, f, err->msg);
        return;
    }
    fnw_error why;
    if (reply->type == REDIS_REPLY_ERROR) {
        fnw_lookup_cache_settle(st->cache, f, NULL, 0, 0);
        for (fnw_lookup_waiter *w; (w = fnw_lookup_cache_next(st->cache, f));) {
            rcall *rc = w->user;
            char what[160];
            describe(rc, 0, what, sizeof what);
            abort_call(rc, "redis %s:%d: %s: %.*s", st->conf->host, st->conf->port, what,
                       (int)(reply->len > 400 ? 400 : reply->len), reply->str ? reply->str : "");
        }
        return;
    }
    fnw_buf_clear(&st->flat);
    if (fnw_redisop_map_flatten(reply, &st->flat, &why) != 0) {
        char msg[FNW_ERROR_MAX];
        snprintf(msg, sizeof msg, "redis: %.1000s", why.msg);
        flight_fail(st, f, msg);
        return;
    }
    /* the waiters read the answer from a buffer of their own: a call they
     * complete may start another whose reply reuses st->flat later */
    fnw_buf flat = st->flat;
    fnw_buf_init(&st->flat, 0);
    fnw_lookup_cache_settle(st->cache, f, flat.p, flat.len,
                            st->cache_missing || !reply_is_missing(st->conf, reply));
    for (fnw_lookup_waiter *w; (w = fnw_lookup_cache_next(st->cache, f));)
        cached_answer(w->user, flat.p, flat.len);
    if (!st->flat.cap) {
        fnw_buf_clear(&flat);
        st->flat = flat; /* keep the bigger buffer for the next reply */
    } else {
        fnw_buf_free(&flat);
    }
}

/* The key of the command rendered in st->args: each argument's length and bytes. */
static int cache_key(redis_state *st)
{
    fnw_buf_clear(&st->key);
    size_t off = 0;
    for (size_t k = 0; k < st->conf->argc; k++) {
        uint32_t n = (uint32_t)st->lens[k];
        if (fnw_buf_append(&st->key, &n, 4) || fnw_buf_append(&st->key, st->args.p + off, st->lens[k]))
            return -1;
        off += st->lens[k];
    }
    return 0;
}

/* Per element with the cache: a hit answers at once, a key already out
 * waits, a miss sends the command for every call that will wait on it. */
static void cached_invoke(rcall *rc)
{
    redis_state *st = rc->st;
    fnw_error err;
    if (render(rc, 0, &err) != 0) {
        abort_call(rc, "%s", err.msg);
        return;
    }
    if (cache_key(st) != 0) {
        abort_call(rc, "redis: out of memory for the cache key");
        return;
    }
    rc->cached = 1;
    rc->w = (fnw_lookup_waiter){ .user = rc };
    const void *val;
    size_t len;
    int got = fnw_lookup_cache_get(st->cache, st->key.p, st->key.len, &rc->w, &val, &len, &err);
    if (got < 0) {
        abort_call(rc, "redis: %s", err.msg);
        return;
    }
    if (got == FNW_LOOKUP_HIT) {
        cached_answer(rc, val, len);
        return;
    }
    fnw_call_set_op_data(rc->call, rc);
    if (got == FNW_LOOKUP_JOIN)
        return;
    fnw_lookup_flight *f = rc->w.flight;
    fnw_redis_cmd *cmd;
    if (fnw_redis_send(st->pool, (int)st->conf->argc, st->argv, st->lens, on_flight_reply, f, &cmd, &err) !=
        0) {
        flight_fail(st, f, err.msg);
        return;
    }
    fnw_lookup_cache_set_request(f, cmd);
}

static rcall *rcall_new(redis_state *st, fnw_call *call)
{
    fnw_arena *a = fnw_call_arena(call);
    size_t n = fnw_call_size(call);
    rcall *rc = fnw_arena_alloc(a, sizeof *rc);
    if (!rc)
        return NULL;
    *rc = (rcall){ .st = st, .call = call, .n = n };
    rc->in = fnw_arena_alloc(a, n * sizeof *rc->in);
    rc->cmds = fnw_arena_alloc(a, n * sizeof *rc->cmds);
    rc->slots = fnw_arena_alloc(a, n * sizeof *rc->slots);
    if (!rc->in || !rc->cmds || !rc->slots)
        return NULL;
    memset(rc->cmds, 0, n * sizeof *rc->cmds);
    return rc;
}

static void redis_invoke(void *state, fnw_call *call)
{
    redis_state *st = state;
    rcall *rc = rcall_new(st, call);
    if (!rc) {
        fnw_call_fail(call, "redis: out of memory");
        return;
    }
    fnw_error err;
    for (size_t i = 0; i < rc->n; i++)
        if (fnw_call_decode(call, i, &rc->in[i], &err) != 0) {
            fnw_call_fail(call, "redis: %s", err.msg);
            return;
        }
    if (st->cache && rc->n == 1) {
        cached_invoke(rc);
        return;
    }
    fnw_call_set_op_data(call, rc);
    if (st->conf->shape == FNW_REDISOP_GET && rc->n > 1)
        send_mget(rc);
    else
        send_each(rc);
}

static void redis_cancel(void *state, fnw_call *call)
{
    rcall *rc = fnw_call_op_data(call);
    if (!rc)
        return;
    if (rc->cached) {
        fnw_redis_cmd *cmd = fnw_lookup_cache_leave(rc->st->cache, &rc->w);
        if (cmd)
            fnw_redis_cancel(cmd);
    }
    cancel_out(rc);
    fnw_call_set_op_data(call, NULL);
}

const fnw_operation fnw_op_redis = {
    .name = "redis",
    .summary = "enriches each input ROW with a Redis read (GET, HGET, HGETALL, HMGET, ...) rendered from it",
    .output_rule = FNW_OUTPUT_DECLARED,
    .sync = 0,
    .open = redis_open,
    .close = redis_close,
    .invoke = redis_invoke,
    .on_timeout = NULL,
    .cancel = redis_cancel,
};
