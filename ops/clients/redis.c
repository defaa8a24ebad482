/* ops/clients/redis.c — the Redis connection pool: connecting (AUTH,
 * SELECT), reconnecting with backoff, dispatching commands and delivering
 * or swallowing their replies (see redis.h for the contract).
 *
 * A connection is in one of three states: waiting (no context, its retry
 * timer running), connecting (a context that is not ready yet: commands may
 * queue on it behind AUTH and SELECT) and ready. hiredis owns each context
 * and frees it after telling us it failed (connect callback with an error)
 * or closed (disconnect callback); before that it runs the callback of every
 * command still pending with a NULL reply, which is where those commands get
 * their error.
 */
#include "ops/clients/redis.h"
#include "codecs/buf.h"
#include "ops/secrets/secret_env.h"
#include "ops/secrets/secret_mask.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/async.h>
#include <hiredis/adapters/libev.h>

#define DEFAULT_PORT 6379
#define DEFAULT_MIN_MS 100
#define DEFAULT_MAX_MS 5000

typedef struct conn {
    fnw_redis *pool;
    redisAsyncContext *ac; /* NULL while waiting */
    int ready;
    int dying;         /* its context is failing: take no new command */
    unsigned failures; /* in a row, for the backoff */
    ev_timer retry;
    char last_error[256];            /* why the last attempt failed, for pending commands */
    size_t reply_bytes;              /* of the reply being parsed, for max_reply_bytes */
    redisReplyObjectFunctions fn;    /* the reader's functions, wrapped to count */
    redisReplyObjectFunctions *orig; /* hiredis's own */
} conn;

struct fnw_redis_cmd {
    conn *c;
    fnw_redis_reply_fn fn; /* NULL once cancelled */
    void *user;
};

struct fnw_redis {
    struct ev_loop *loop;
    fnw_redis_config cfg;
    char *host, *username, *password, *password_env;
    conn *conns;
    int n_conns;
    int next;     /* round robin */
    conn *pinned; /* fnw_redis_pin: every send goes here */
    int stopping;
    fnw_redis_stats stats;
    fnw_buf resp; /* the command being formatted (format_command) */
};

static void start_connect(conn *c);

/* ---- backoff ----------------------------------------------------------- */

int64_t fnw_redis_backoff_ms(const fnw_redis_config *cfg, unsigned failures)
{
    int64_t lo = cfg->reconnect_min_ms > 0 ? cfg->reconnect_min_ms : DEFAULT_MIN_MS;
    int64_t hi = cfg->reconnect_max_ms > 0 ? cfg->reconnect_max_ms : DEFAULT_MAX_MS;
    if (hi < lo)
        hi = lo;
    int64_t d = lo;
    for (unsigned i = 1; i < failures && d < hi; i++)
        d *= 2;
    return d < hi ? d : hi;
}

static void on_retry(struct ev_loop *loop, ev_timer *t, int revents)
{
    start_connect(t->data);
}

/* The context is gone (hiredis frees it after this callback returns). */
static void schedule_retry(conn *c)
{
    fnw_redis *r = c->pool;
    if (c->ready)
        r->stats.up--;
    c->ac = NULL;
    c->ready = 0;
    c->dying = 0;
    if (r->stopping)
        return;
    c->failures++;
    ev_timer_set(&c->retry, (double)fnw_redis_backoff_ms(&r->cfg, c->failures) / 1000.0, 0.);
    ev_timer_start(r->loop, &c->retry);
}

/* ---- connecting -------------------------------------------------------- */

static void became_ready(conn *c)
{
    c->ready = 1;
    c->failures = 0;
    c->last_error[0] = '\0';
    c->pool->stats.ready++;
    c->pool->stats.up++;
}

/* Drops a context that answered AUTH or SELECT with an error. Inside a
 * reply callback hiredis defers the free until the callback returns, then
 * fails the commands queued behind and calls on_disconnect. */
static void setup_failed(conn *c, const redisAsyncContext *ac, const char *what, const redisReply *rep)
{
    fnw_redis *r = c->pool;
    int auth = strcmp(what, "AUTH") == 0 && r->password_env;
    snprintf(c->last_error, sizeof c->last_error, "%s failed: %.*s%s%s%s", what,
             (int)(rep->len > 160 ? 160 : rep->len), rep->str ? rep->str : "",
             auth ? " (the password comes from $" : "", auth ? r->password_env : "", auth ? ")" : "");
    const char *secrets[] = { r->password };
    fnw_secret_mask_str(c->last_error, secrets, 1); /* WRONGPASS may quote what it was sent */
    c->dying = 1;
    redisAsyncFree((redisAsyncContext *)ac);
}

static void on_setup_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    conn *c = ac->data;
    const redisReply *rep = reply;
    const char *what = priv;
    if (!rep || c->pool->stopping)
        return; /* the context is failing; its callbacks say why */
    if (rep->type == REDIS_REPLY_ERROR) {
        setup_failed(c, ac, what, rep);
        return;
    }
    /* SELECT is the last set-up command when there is one */
    if (strcmp(what, "SELECT") == 0 || c->pool->cfg.db <= 0)
        became_ready(c);
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    conn *c = ac->data;
    if (status == REDIS_OK) {
        if (!c->pool->password && c->pool->cfg.db <= 0)
            became_ready(c);
        return;
    }
    snprintf(c->last_error, sizeof c->last_error, "cannot connect: %s", ac->errstr);
    c->dying = 1;
    schedule_retry(c); /* hiredis fails the queued commands next */
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    conn *c = ac->data;
    if (c->ready)
        c->pool->stats.lost++;
    schedule_retry(c);
}

static int send_setup(conn *c)
{
    fnw_redis *r = c->pool;
    if (r->password) {
        const char *argv[3] = { "AUTH", NULL, NULL };
        int argc = 1;
        if (r->username)
            argv[argc++] = r->username;
        argv[argc++] = r->password;
        if (redisAsyncCommandArgv(c->ac, on_setup_reply, "AUTH", argc, argv, NULL) != REDIS_OK)
            return -1;
    }
    if (r->cfg.db > 0) {
        char db[16];
        snprintf(db, sizeof db, "%d", r->cfg.db);
        const char *argv[2] = { "SELECT", db };
        if (redisAsyncCommandArgv(c->ac, on_setup_reply, "SELECT", 2, argv, NULL) != REDIS_OK)
            return -1;
    }
    return 0;
}

/* ---- bounded replies ---------------------------------------------------- */

static void *over_limit(conn *c, const char *what, unsigned long long n, const char *unit)
{
    snprintf(c->last_error, sizeof c->last_error,
             "a reply larger than max_reply_bytes (%zu bytes): %s %llu %s; the "
             "connection is dropped and reconnects",
             c->pool->cfg.max_reply_bytes, what, n, unit);
    return NULL; /* the reader fails, hiredis drops the connection */
}

/* Counts what a reply holds; NULL (an error to hiredis) once it passes the limit. */
static int count(conn *c, const redisReadTask *t, size_t n)
{
    if (!t->parent)
        c->reply_bytes = 0; /* a new reply */
    c->reply_bytes += n + sizeof(redisReply);
    return c->reply_bytes > c->pool->cfg.max_reply_bytes;
}

static void *wrap_string(const redisReadTask *t, char *s, size_t n)
{
    conn *c = t->privdata;
    if (count(c, t, n))
        return over_limit(c, "its values reach", c->reply_bytes, "bytes");
    return c->orig->createString(t, s, n);
}

static void *wrap_array(const redisReadTask *t, int n)
{
    conn *c = t->privdata;
    if (n > 0 && count(c, t, (size_t)n * sizeof(redisReply *)))
        return over_limit(c, "an array announcing", (unsigned long long)n, "elements");
    return c->orig->createArray(t, n);
}

static void *wrap_integer(const redisReadTask *t, long long v)
{
    conn *c = t->privdata;
    if (count(c, t, 0))
        return over_limit(c, "its values reach", c->reply_bytes, "bytes");
    return c->orig->createInteger(t, v);
}

static void *wrap_nil(const redisReadTask *t)
{
    conn *c = t->privdata;
    if (count(c, t, 0))
        return over_limit(c, "its values reach", c->reply_bytes, "bytes");
    return c->orig->createNil(t);
}

/* What waits unparsed in the reader (the beginning of the next value): a
 * bulk header announcing more than the limit, or more than the limit of
 * unparsed bytes, fails before more is read. 0 when it may go on. */
static int unparsed_over(conn *c, const redisReader *rd)
{
    size_t avail = rd->len - rd->pos, max = c->pool->cfg.max_reply_bytes;
    const char *p = rd->buf ? rd->buf + rd->pos : "";
    /* hiredis consumes the type byte first: the bulk's length line is next when
     * the task being read is a bulk string, else the '$' may still be there */
    int bulk = rd->ridx >= 0 && rd->rstack[rd->ridx].type == REDIS_REPLY_STRING;
    if (!bulk && avail > 1 && p[0] == '$') {
        bulk = 1;
        p++;
        avail--;
    }
    if (bulk) {
        unsigned long long n = 0;
        size_t i = 0;
        while (i < avail && i < 24 && p[i] >= '0' && p[i] <= '9')
            n = n * 10 + (unsigned long long)(p[i++] - '0');
        if (i > 0 && n > max) {
            over_limit(c, "a bulk string announcing", n, "bytes");
            return 1;
        }
    }
    if (avail > max + 64) {
        over_limit(c, "a value still arriving after", (unsigned long long)avail, "bytes");
        return 1;
    }
    return 0;
}

/* The read watcher (in place of the adapter's): checks what is buffered
 * before hiredis reads more. */
static void on_readable(struct ev_loop *loop, ev_io *w, int revents)
{
    redisLibevEvents *e = w->data;
    redisAsyncContext *ac = e->context;
    conn *c = ac->data;
    if (unparsed_over(c, ac->c.reader)) {
        c->dying = 1;
        redisAsyncFree(ac); /* pending commands get last_error; on_disconnect reconnects */
        if (c->ac == ac)
            schedule_retry(c);
        return;
    }
    redisAsyncHandleRead(ac);
}

static void bound_replies(conn *c, redisAsyncContext *ac)
{
    redisReader *rd = ac->c.reader;
    c->orig = rd->fn;
    c->fn = (redisReplyObjectFunctions){ wrap_string, wrap_array, wrap_integer, wrap_nil,
                                         c->orig->freeObject };
    rd->fn = &c->fn;
    rd->privdata = c;
    redisLibevEvents *e = ac->ev.data;
    ev_set_cb(&e->rev, on_readable);
}

static void start_connect(conn *c)
{
    fnw_redis *r = c->pool;
    r->stats.connects_started++;
    redisAsyncContext *ac = redisAsyncConnect(r->host, r->cfg.port);
    if (!ac || ac->err) {
        snprintf(c->last_error, sizeof c->last_error, "cannot connect: %s", ac ? ac->errstr : "out of memory");
        if (ac)
            redisAsyncFree(ac);
        schedule_retry(c);
        return;
    }
    ac->data = c;
    c->ac = ac;
    c->dying = 0;
    int attached = redisLibevAttach(r->loop, ac) == REDIS_OK;
    if (attached)
        bound_replies(c, ac);
    if (!attached || send_setup(c) != 0) {
        snprintf(c->last_error, sizeof c->last_error, "cannot set the connection up (out of memory)");
        c->ac = NULL;
        redisAsyncFree(ac);
        schedule_retry(c);
        return;
    }
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
}

/* ---- the pool ---------------------------------------------------------- */

static int copy_config(fnw_redis *r, const fnw_redis_config *cfg, fnw_error *err)
{
    r->cfg = *cfg;
    if (!r->cfg.port)
        r->cfg.port = DEFAULT_PORT;
    if (r->cfg.port < 0 || r->cfg.port > 65535)
        return fnw_error_set(err, "redis: port %d is not between 1 and 65535", r->cfg.port);
    if (r->cfg.connections < 0 || r->cfg.connections > 1024)
        return fnw_error_set(err, "redis: connections must be between 1 and 1024, got %d", r->cfg.connections);
    if (!r->cfg.connections)
        r->cfg.connections = 1;
    if (!r->cfg.max_reply_bytes)
        r->cfg.max_reply_bytes = FNW_REDIS_DEFAULT_MAX_REPLY;
    if (r->cfg.db < 0)
        return fnw_error_set(err, "redis: db must not be negative, got %d", r->cfg.db);
    if (!(r->host = strdup(cfg->host ? cfg->host : "127.0.0.1")) ||
        (cfg->username && !(r->username = strdup(cfg->username))))
        return fnw_error_set(err, "redis: out of memory");
    if (cfg->password_env) {
        const char *pw = fnw_secret_env_get(cfg->password_env, "password_env", "redis", err);
        if (!pw)
            return -1;
        if (!(r->password = strdup(pw)) || !(r->password_env = strdup(cfg->password_env)))
            return fnw_error_set(err, "redis: out of memory");
    }
    r->cfg.host = r->host;
    r->cfg.username = r->username;
    r->cfg.password_env = r->password_env;
    return 0;
}

static void free_strings(fnw_redis *r)
{
    if (r->password) {
        volatile char *p = r->password; /* not left behind in freed memory */
        while (*p)
            *p++ = '\0';
    }
    free(r->password);
    free(r->password_env);
    free(r->username);
    free(r->host);
}

fnw_redis *fnw_redis_new(struct ev_loop *loop, const fnw_redis_config *cfg, fnw_error *err)
{
    fnw_redis *r = calloc(1, sizeof *r);
    if (!r) {
        fnw_error_set(err, "redis: out of memory");
        return NULL;
    }
    r->loop = loop;
    fnw_buf_init(&r->resp, 0);
    int ok = copy_config(r, cfg, err) == 0;
    if (ok && !(r->conns = calloc((size_t)r->cfg.connections, sizeof *r->conns)))
        ok = fnw_error_set(err, "redis: out of memory") == 0;
    if (!ok) {
        free_strings(r);
        free(r);
        return NULL;
    }
    r->n_conns = r->cfg.connections;
    for (int i = 0; i < r->n_conns; i++) {
        conn *c = &r->conns[i];
        c->pool = r;
        ev_init(&c->retry, on_retry);
        c->retry.data = c;
    }
    for (int i = 0; i < r->n_conns; i++)
        start_connect(&r->conns[i]);
    return r;
}

void fnw_redis_free(fnw_redis *r)
{
    if (!r)
        return;
    r->stopping = 1;
    for (int i = 0; i < r->n_conns; i++) {
        conn *c = &r->conns[i];
        ev_timer_stop(r->loop, &c->retry);
        if (c->ac)
            redisAsyncFree(c->ac); /* pending commands are freed, not called */
    }
    free(r->conns);
    free_strings(r);
    fnw_buf_free(&r->resp);
    free(r);
}

void fnw_redis_stats_get(const fnw_redis *r, fnw_redis_stats *out)
{
    *out = r->stats;
}

/* ---- commands ---------------------------------------------------------- */

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    fnw_redis_cmd *cmd = priv;
    conn *c = cmd->c;
    fnw_redis *r = c->pool;
    r->stats.pending--;
    if (!reply)
        c->dying = 1; /* the context is failing: no new commands on it */
    if (cmd->fn && !r->stopping) {
        if (reply) {
            cmd->fn(cmd->user, reply, NULL);
        } else {
            fnw_error e;
            if (c->last_error[0])
                fnw_error_set(&e, "redis %s:%d: %s", r->host, r->cfg.port, c->last_error);
            else
                fnw_error_set(&e, "redis %s:%d: connection lost (%s); the command may or may not have run",
                              r->host, r->cfg.port, ac->err ? ac->errstr : "closed");
            cmd->fn(cmd->user, NULL, &e);
        }
    }
    free(cmd);
}

/* The next connection that can take a command: ready ones first. */
static conn *pick(fnw_redis *r)
{
    if (r->pinned && r->pinned->ac && !r->pinned->dying)
        return r->pinned;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < r->n_conns; k++) {
            conn *c = &r->conns[(r->next + k) % r->n_conns];
            if (c->ac && !c->dying && (c->ready || pass == 1)) {
                r->next = (int)((c - r->conns) + 1) % r->n_conns;
                return c;
            }
        }
    return NULL;
}

/* mark, then n in decimal, then CRLF, at p; returns the end. */
static char *put_count(char *p, char mark, size_t n)
{
    char digits[24];
    int k = 0;
    do {
        digits[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    *p++ = mark;
    while (k)
        *p++ = digits[--k];
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

/* The command in the protocol's form (RESP: "*N", then "$len" and the bytes
 * of each argument) in r->resp, as hiredis's redisFormatCommandArgv writes
 * it, but into one buffer kept for the next command: no sds string built
 * with its printf per command. Returns the length, or 0 out of memory. */
static size_t format_command(fnw_redis *r, int argc, const char *const *argv, const size_t *argvlen)
{
    size_t need = 24;
    for (int i = 0; i < argc; i++)
        need += 26 + (argvlen ? argvlen[i] : strlen(argv[i]));
    fnw_buf_clear(&r->resp);
    if (fnw_buf_reserve(&r->resp, need) != 0)
        return 0;
    char *start = (char *)r->resp.p;
    char *p = put_count(start, '*', (size_t)argc);
    for (int i = 0; i < argc; i++) {
        size_t n = argvlen ? argvlen[i] : strlen(argv[i]);
        p = put_count(p, '$', n);
        memcpy(p, argv[i], n);
        p += n;
        *p++ = '\r';
        *p++ = '\n';
    }
    return (size_t)(p - start);
}

int fnw_redis_send(fnw_redis *r, int argc, const char *const *argv, const size_t *argvlen,
                   fnw_redis_reply_fn fn, void *user, fnw_redis_cmd **out, fnw_error *err)
{
    if (argc < 1)
        return fnw_error_set(err, "redis: a command needs at least its name");
    conn *c = pick(r);
    if (!c) {
        const char *why = r->conns[0].last_error[0] ? r->conns[0].last_error : "connection lost";
        return fnw_error_set(err, "redis %s:%d: no connection is up (reconnecting; last error: %s)", r->host,
                             r->cfg.port, why);
    }
    fnw_redis_cmd *cmd = malloc(sizeof *cmd);
    if (!cmd)
        return fnw_error_set(err, "redis %s:%d: out of memory", r->host, r->cfg.port);
    cmd->c = c;
    cmd->fn = fn;
    cmd->user = user;
    size_t len = format_command(r, argc, argv, argvlen);
    if (!len) {
        free(cmd);
        return fnw_error_set(err, "redis %s:%d: out of memory", r->host, r->cfg.port);
    }
    if (redisAsyncFormattedCommand(c->ac, on_reply, cmd, (const char *)r->resp.p, len) != REDIS_OK) {
        free(cmd);
        return fnw_error_set(err, "redis %s:%d: the connection refused the command (%s)", r->host,
                             r->cfg.port, c->ac->errstr[0] ? c->ac->errstr : "closing or out of memory");
    }
    r->stats.pending++;
    if (out)
        *out = cmd;
    return 0;
}

void fnw_redis_pin(fnw_redis *r)
{
    r->pinned = NULL;
    r->pinned = pick(r);
}

void fnw_redis_unpin(fnw_redis *r)
{
    r->pinned = NULL;
}

void fnw_redis_cancel(fnw_redis_cmd *c)
{
    if (c)
        c->fn = NULL;
}

const char *fnw_redis_secret(const fnw_redis *r)
{
    return r ? r->password : NULL;
}
