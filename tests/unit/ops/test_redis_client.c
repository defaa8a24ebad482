/* tests/unit/ops/test_redis_client.c — the Redis pool against a real
 * redis-server on 127.0.0.1 (tests/servers/redis.sh): commands and replies,
 * pipelining, pinning a batch to one connection, AUTH, SELECT, cancel, a server killed mid-pipeline (every
 * pending command gets an error), and reconnecting with backoff once it is
 * back. Skips with one line when redis-server is not installed.
 */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/test_servers.h"

#include "ops/clients/redis.h"

#define PW_VAR "FNW_SECRET_TEST_REDIS_PW"
#define PW "s3cret-pw"

static char plain_dir[128], auth_dir[128];
static int plain_port, auth_port;
static int g_owner;             /* the runner's process: servers go with it */

static void start_redis(char *dir, size_t n, const char *name, const char *extra, int *port)
{
    char out[64], args[128];
    srv_dir(dir, n, name);
    g_owner = (int)getpid();
    snprintf(args, sizeof args, "--owner %d %s", (int)getpid(), extra);
    ck_assert_int_eq(srv_cmd("redis.sh", "start", dir, args, out, sizeof out), 0);
    *port = atoi(out);
    ck_assert_int_gt(*port, 0);
}

static void plain_up(void) { start_redis(plain_dir, sizeof plain_dir, "redis", "", &plain_port); }
static void auth_up(void) { start_redis(auth_dir, sizeof auth_dir, "redis-auth", "--requirepass " PW, &auth_port); }

static void plain_down(void)
{
    srv_cmd("redis.sh", "stop", plain_dir, NULL, NULL, 0);
    srv_rmdir(plain_dir);
}

static void auth_down(void)
{
    srv_cmd("redis.sh", "stop", auth_dir, NULL, NULL, 0);
    srv_rmdir(auth_dir);
}

/* ---- one reply per command ------------------------------------------------ */

typedef struct rep {
    int called;
    int type;                    /* REDIS_REPLY_*, 0 for an error without reply */
    long long integer;
    char str[256];
    size_t len;
    size_t elements;
    char el[8][64];
    int el_nil[8];
    char err[FNW_ERROR_MAX];
} rep;

static void on_rep(void *user, const redisReply *reply, const fnw_error *err)
{
    rep *r = user;
    r->called++;
    ck_assert((reply == NULL) == (err != NULL));
    if (err) {
        snprintf(r->err, sizeof r->err, "%s", err->msg);
        return;
    }
    r->type = reply->type;
    r->integer = reply->integer;
    r->len = reply->len;
    if (reply->str)
        memcpy(r->str, reply->str, reply->len < sizeof r->str ? reply->len : sizeof r->str - 1);
    r->elements = reply->elements;
    for (size_t i = 0; i < reply->elements && i < 8; i++) {
        r->el_nil[i] = reply->element[i]->type == REDIS_REPLY_NIL;
        if (reply->element[i]->str)
            snprintf(r->el[i], sizeof r->el[i], "%s", reply->element[i]->str);
    }
}

typedef struct pool {
    struct ev_loop *loop;
    fnw_redis *r;
    fnw_error err;
} pool;

static void pool_init(pool *p, fnw_redis_config cfg)
{
    p->loop = ev_loop_new(EVFLAG_AUTO);
    p->r = fnw_redis_new(p->loop, &cfg, &p->err);
    ck_assert_msg(p->r != NULL, "%s", p->err.msg);
}

static void pool_free(pool *p)
{
    fnw_redis_free(p->r);
    ev_loop_destroy(p->loop);
}

/* Sends argv (NULL-terminated strings) and runs the loop until the reply. */
static void cmd(pool *p, rep *r, const char *const *argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    memset(r, 0, sizeof *r);
    ck_assert_msg(fnw_redis_send(p->r, argc, argv, NULL, on_rep, r, NULL, &p->err) == 0, "%s", p->err.msg);
    srv_run_until(p->loop, &r->called, 20);
}

#define CMD(p, r, ...) do { static const char *const a_[] = { __VA_ARGS__, NULL }; cmd(p, r, a_); } while (0)

static fnw_redis_config cfg_for(int port)
{
    fnw_redis_config c = { .port = port, .reconnect_min_ms = 20, .reconnect_max_ms = 200 };
    return c;
}

/* ---- tests ------------------------------------------------------------------- */

START_TEST(test_backoff_doubles_to_its_cap)
{
    fnw_redis_config c = { .reconnect_min_ms = 50, .reconnect_max_ms = 400 };
    static const int64_t want[] = { 50, 50, 100, 200, 400, 400, 400 };
    for (unsigned i = 0; i < 7; i++)
        ck_assert_int_eq(fnw_redis_backoff_ms(&c, i), want[i]);
    fnw_redis_config d = { 0 };
    ck_assert_int_eq(fnw_redis_backoff_ms(&d, 1), 100);
    ck_assert_int_eq(fnw_redis_backoff_ms(&d, 100), 5000);
}
END_TEST

START_TEST(test_get_hgetall_mget_binary)
{
    pool p;
    pool_init(&p, cfg_for(plain_port));
    static const char val[] = { 'a', '\0', 'b', '\r', '\n' };
    const char *set[] = { "SET", "bin", val };
    const size_t setlen[] = { 3, 3, sizeof val };
    rep r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(fnw_redis_send(p.r, 3, set, setlen, on_rep, &r, NULL, &p.err), 0);
    srv_run_until(p.loop, &r.called, 20);
    ck_assert_int_eq(r.type, REDIS_REPLY_STATUS);
    CMD(&p, &r, "GET", "bin");
    ck_assert_int_eq(r.type, REDIS_REPLY_STRING);
    ck_assert_uint_eq(r.len, sizeof val);
    ck_assert(memcmp(r.str, val, sizeof val) == 0);

    CMD(&p, &r, "DEL", "h");
    CMD(&p, &r, "HSET", "h", "f1", "v1", "f2", "v2");
    ck_assert_int_eq(r.integer, 2);
    CMD(&p, &r, "HGETALL", "h");
    ck_assert_int_eq(r.type, REDIS_REPLY_ARRAY);
    ck_assert_uint_eq(r.elements, 4);
    ck_assert(strcmp(r.el[0], "f1") == 0 ? strcmp(r.el[1], "v1") == 0 : strcmp(r.el[3], "v1") == 0);

    CMD(&p, &r, "SET", "k1", "one");
    CMD(&p, &r, "MGET", "k1", "no-such-key");
    ck_assert_uint_eq(r.elements, 2);
    ck_assert_str_eq(r.el[0], "one");
    ck_assert_int_eq(r.el_nil[1], 1);

    CMD(&p, &r, "HGETALL", "k1");             /* a Redis error is a reply */
    ck_assert_int_eq(r.type, REDIS_REPLY_ERROR);
    ck_assert_str_eq(r.err, "");
    ck_assert_ptr_nonnull(strstr(r.str, "WRONGTYPE"));
    pool_free(&p);
}
END_TEST

/* 1,000 commands sent before the loop runs: they leave together and their
 * replies come back in order (one connection), or each to its own command
 * (four connections). */
typedef struct seq {
    int n, want, all, out_of_order;
    long long last;
} seq;

static void on_incr(void *user, const redisReply *reply, const fnw_error *err)
{
    seq *s = user;
    ck_assert_ptr_null(err);
    if (reply->integer != s->last + 1)
        s->out_of_order++;
    s->last = reply->integer;
    if (++s->n == s->want)
        s->all = 1;
}

typedef struct match { int n, want, all, bad; } match;
static match g_match;

static void on_get_i(void *user, const redisReply *reply, const fnw_error *err)
{
    char want[32];
    snprintf(want, sizeof want, "value-%d", (int)(intptr_t)user);
    if (err || reply->type != REDIS_REPLY_STRING || strcmp(reply->str, want) != 0)
        g_match.bad++;
    if (++g_match.n == g_match.want)
        g_match.all = 1;
}

START_TEST(test_pipeline_thousand)
{
    pool p;
    pool_init(&p, cfg_for(plain_port));
    rep r;
    CMD(&p, &r, "SET", "ctr", "0");
    seq s = { .want = 1000 };
    for (int i = 0; i < 1000; i++) {
        static const char *const incr[] = { "INCR", "ctr" };
        ck_assert_int_eq(fnw_redis_send(p.r, 2, incr, NULL, on_incr, &s, NULL, &p.err), 0);
    }
    fnw_redis_stats st;
    fnw_redis_stats_get(p.r, &st);
    ck_assert_uint_eq(st.pending, 1000);
    srv_run_until(p.loop, &s.all, 30);
    ck_assert_int_eq(s.out_of_order, 0);
    ck_assert_int_eq(s.last, 1000);
    pool_free(&p);

    fnw_redis_config four = cfg_for(plain_port);
    four.connections = 4;
    pool_init(&p, four);
    for (int i = 0; i < 1000; i++) {
        char k[32], v[32];
        snprintf(k, sizeof k, "key-%d", i);
        snprintf(v, sizeof v, "value-%d", i);
        const char *a[] = { "SET", k, v };
        ck_assert_int_eq(fnw_redis_send(p.r, 3, a, NULL, on_rep, &r, NULL, &p.err), 0);
    }
    g_match = (match){ .want = 1000 };
    for (int i = 0; i < 1000; i++) {
        char k[32];
        snprintf(k, sizeof k, "key-%d", i);
        const char *a[] = { "GET", k };
        ck_assert_int_eq(fnw_redis_send(p.r, 2, a, NULL, on_get_i, (void *)(intptr_t)i, NULL, &p.err), 0);
    }
    srv_run_until(p.loop, &g_match.all, 30);
    ck_assert_int_eq(g_match.bad, 0);
    fnw_redis_stats_get(p.r, &st);
    ck_assert_int_eq(st.up, 4);
    ck_assert_uint_eq(st.pending, 0);
    pool_free(&p);
}
END_TEST

/* Eight CLIENT IDs, pinned or not: the connection ids they report. */
static int distinct_ids(pool *p, int pinned)
{
    rep r[8];
    memset(r, 0, sizeof r);
    static const char *const id[] = { "CLIENT", "ID" };
    if (pinned)
        fnw_redis_pin(p->r);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(fnw_redis_send(p->r, 2, id, NULL, on_rep, &r[i], NULL, &p->err), 0);
    if (pinned)
        fnw_redis_unpin(p->r);
    int distinct = 0;
    for (int i = 0; i < 8; i++) {
        srv_run_until(p->loop, &r[i].called, 20);
        ck_assert_int_eq(r[i].type, REDIS_REPLY_INTEGER);
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= r[j].integer == r[i].integer;
        distinct += !seen;
    }
    return distinct;
}

/* Between pin and unpin every command goes down one connection (a batch);
 * otherwise they go round robin over the four. */
START_TEST(test_pin_one_connection)
{
    fnw_redis_config four = cfg_for(plain_port);
    four.connections = 4;
    pool p;
    pool_init(&p, four);
    rep r[4];
    memset(r, 0, sizeof r);
    static const char *const ping[] = { "PING" };
    for (int i = 0; i < 4; i++)    /* one per connection: all four are ready after the replies */
        ck_assert_int_eq(fnw_redis_send(p.r, 1, ping, NULL, on_rep, &r[i], NULL, &p.err), 0);
    for (int i = 0; i < 4; i++)
        srv_run_until(p.loop, &r[i].called, 20);
    fnw_redis_stats st;
    fnw_redis_stats_get(p.r, &st);
    ck_assert_int_eq(st.up, 4);
    ck_assert_int_eq(distinct_ids(&p, 0), 4);
    ck_assert_int_eq(distinct_ids(&p, 1), 1);
    ck_assert_int_eq(distinct_ids(&p, 0), 4);      /* unpinned again */
    pool_free(&p);
}
END_TEST

START_TEST(test_select)
{
    fnw_redis_config c3 = cfg_for(plain_port);
    c3.db = 3;
    pool a, b;
    pool_init(&a, c3);
    rep r;
    CMD(&a, &r, "SET", "only-in-3", "x");
    ck_assert_int_eq(r.type, REDIS_REPLY_STATUS);
    pool_init(&b, cfg_for(plain_port));
    CMD(&b, &r, "GET", "only-in-3");
    ck_assert_int_eq(r.type, REDIS_REPLY_NIL);
    pool_free(&b);
    pool_init(&b, c3);
    CMD(&b, &r, "GET", "only-in-3");
    ck_assert_str_eq(r.str, "x");
    pool_free(&b);
    pool_free(&a);

    fnw_redis_config bad = cfg_for(plain_port);
    bad.db = 100000;
    pool_init(&a, bad);
    CMD(&a, &r, "PING");
    char want[128];
    snprintf(want, sizeof want, "redis 127.0.0.1:%d: SELECT failed: ERR DB index is out of range", plain_port);
    ck_assert_str_eq(r.err, want);
    pool_free(&a);
}
END_TEST

START_TEST(test_cancel)
{
    pool p;
    pool_init(&p, cfg_for(plain_port));
    rep a, b, last;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    fnw_redis_cmd *ca, *cb;
    static const char *const ping[] = { "PING" };
    ck_assert_int_eq(fnw_redis_send(p.r, 1, ping, NULL, on_rep, &a, &ca, &p.err), 0);
    ck_assert_int_eq(fnw_redis_send(p.r, 1, ping, NULL, on_rep, &b, &cb, &p.err), 0);
    fnw_redis_cancel(ca);
    CMD(&p, &last, "PING");                     /* answered after both */
    ck_assert_int_eq(a.called, 0);
    ck_assert_int_eq(b.called, 1);
    ck_assert_str_eq(b.str, "PONG");
    pool_free(&p);
}
END_TEST

START_TEST(test_auth)
{
    setenv(PW_VAR, PW, 1);
    fnw_redis_config c = cfg_for(auth_port);
    c.password_env = PW_VAR;
    pool p;
    pool_init(&p, c);
    rep r;
    CMD(&p, &r, "PING");
    ck_assert_str_eq(r.str, "PONG");
    pool_free(&p);

    setenv(PW_VAR, "wrong", 1);
    pool_init(&p, c);
    CMD(&p, &r, "PING");
    ck_assert_int_eq(r.type, 0);
    char want[256];
    snprintf(want, sizeof want, "redis 127.0.0.1:%d: AUTH failed: WRONGPASS", auth_port);
    ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "(the password comes from $" PW_VAR ")"));
    ck_assert_ptr_null(strstr(r.err, "wrong"));
    pool_free(&p);

    pool_init(&p, cfg_for(auth_port));       /* no password: Redis says so */
    CMD(&p, &r, "PING");
    ck_assert_int_eq(r.type, REDIS_REPLY_ERROR);
    ck_assert_ptr_nonnull(strstr(r.str, "NOAUTH"));
    pool_free(&p);

    unsetenv(PW_VAR);
    fnw_error err;
    ck_assert_ptr_null(fnw_redis_new(EV_DEFAULT, &c, &err));
    ck_assert_str_eq(err.msg, "option 'password_env' of operation 'redis': environment variable '" PW_VAR
                     "' is not set in the worker");
    c.password_env = "HOME";   /* not one the operator allows (FNW_SECRETS_PREFIX, FNW_SECRETS_ALLOW) */
    ck_assert_ptr_null(fnw_redis_new(EV_DEFAULT, &c, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "'HOME' is not one the operator allows"));
}
END_TEST

START_TEST(test_connect_refused)
{
    int port = srv_closed_port();
    pool p;
    pool_init(&p, cfg_for(port));
    rep r;
    memset(&r, 0, sizeof r);
    static const char *const ping[] = { "PING" };
    char want[128];
    snprintf(want, sizeof want, "redis 127.0.0.1:%d: cannot connect: Connection refused", port);
    /* queued on the connecting connection, unless the refusal was immediate */
    if (fnw_redis_send(p.r, 1, ping, NULL, on_rep, &r, NULL, &p.err) == 0) {
        srv_run_until(p.loop, &r.called, 20);
        ck_assert_str_eq(r.err, want);
    }
    ck_assert_int_eq(fnw_redis_send(p.r, 1, ping, NULL, on_rep, &r, NULL, &p.err), -1);
    snprintf(want, sizeof want, "redis 127.0.0.1:%d: no connection is up (reconnecting; last error: "
             "cannot connect: Connection refused)", port);
    ck_assert_str_eq(p.err.msg, want);
    pool_free(&p);
}
END_TEST

/* A blocked BLPOP holds the 1,000 GETs queued behind it on the one
 * connection; the server is killed; every command that was not cancelled
 * gets an error, the cancelled ones nothing. Then the server comes back on
 * the same port and the pool reconnects, no faster than its backoff. */
typedef struct killed { int n, want, all, errors, cancelled_called; } killed;
static killed g_killed;

static void on_killed(void *user, const redisReply *reply, const fnw_error *err)
{
    if (user)
        g_killed.cancelled_called++;
    if (err && !reply && strstr(err->msg, "connection lost") != NULL)
        g_killed.errors++;
    if (++g_killed.n == g_killed.want)
        g_killed.all = 1;
}

static void kill_server(int port)
{
    ck_assert_int_eq(srv_cmd("redis.sh", "kill", plain_dir, NULL, NULL, 0), 0);
}

static void restart_server(int port)
{
    char args[64], out[32];
    snprintf(args, sizeof args, "--port %d --owner %d", port, g_owner);
    ck_assert_int_eq(srv_cmd("redis.sh", "start", plain_dir, args, out, sizeof out), 0);
    ck_assert_int_eq(atoi(out), port);
}

/* The most attempts a window of `elapsed` seconds can see when attempt k+1
 * comes at least backoff(k+1) after attempt k: one, then as many of the
 * shortest gaps (backoff(2), backoff(3), ...) as fit. */
static uint64_t max_attempts(const fnw_redis_config *c, double elapsed)
{
    double t = 0;
    uint64_t k = 1;
    while ((t += (double)fnw_redis_backoff_ms(c, (unsigned)k + 1) / 1000.0) <= elapsed + 1e-6)
        k++;
    return k;
}

START_TEST(test_server_killed_then_back)
{
    fnw_redis_config c = cfg_for(plain_port);
    c.reconnect_min_ms = 40;
    c.reconnect_max_ms = 320;
    pool p;
    pool_init(&p, c);
    rep r;
    CMD(&p, &r, "PING");
    static const char *const blpop[] = { "BLPOP", "never-pushed", "0" };
    static const char *const get[] = { "GET", "k" };
    g_killed = (killed){ .want = 1 + 1000 - 100 };
    ck_assert_int_eq(fnw_redis_send(p.r, 3, blpop, NULL, on_killed, NULL, NULL, &p.err), 0);
    for (int i = 0; i < 1000; i++) {
        fnw_redis_cmd *h;
        ck_assert_int_eq(fnw_redis_send(p.r, 2, get, NULL, on_killed, i % 10 == 0 ? &g_killed : NULL,
                                        &h, &p.err), 0);
        if (i % 10 == 0)
            fnw_redis_cancel(h);
    }
    ev_run(p.loop, EVRUN_NOWAIT);                /* written out */
    kill_server(plain_port);
    srv_run_until(p.loop, &g_killed.all, 20);
    ck_assert_int_eq(g_killed.errors, 901);
    ck_assert_int_eq(g_killed.cancelled_called, 0);

    /* down: attempts are bounded by the backoff over the loop time spent */
    fnw_redis_stats s0, s1;
    fnw_redis_stats_get(p.r, &s0);
    ck_assert_uint_eq(s0.lost, 1);
    ev_now_update(p.loop);
    double t0 = ev_now(p.loop);
    srv_run_for(p.loop, 0.5);
    ev_now_update(p.loop);
    fnw_redis_stats_get(p.r, &s1);
    uint64_t bound = max_attempts(&c, ev_now(p.loop) - t0 + 0.05);
    ck_assert_msg(s1.connects_started - s0.connects_started <= bound,
                  "%llu attempts in %.3f s, backoff allows %llu",
                  (unsigned long long)(s1.connects_started - s0.connects_started),
                  ev_now(p.loop) - t0, (unsigned long long)bound);

    restart_server(plain_port);
    for (int tries = 0;; tries++) {            /* the caller's retry loop */
        ck_assert_int_lt(tries, 1000);
        memset(&r, 0, sizeof r);
        static const char *const ping[] = { "PING" };
        if (fnw_redis_send(p.r, 1, ping, NULL, on_rep, &r, NULL, &p.err) == 0) {
            srv_run_until(p.loop, &r.called, 20);
            if (r.type == REDIS_REPLY_STATUS)
                break;
        }
        srv_run_for(p.loop, 0.02);
    }
    ck_assert_str_eq(r.str, "PONG");
    fnw_redis_stats_get(p.r, &s1);
    ck_assert_uint_eq(s1.ready, 2);
    ck_assert_int_eq(s1.up, 1);
    pool_free(&p);
}
END_TEST

/* Freeing the pool with commands pending: their callbacks do not run. */
START_TEST(test_free_with_pending)
{
    pool p;
    pool_init(&p, cfg_for(plain_port));
    rep r[10];
    memset(r, 0, sizeof r);
    static const char *const ping[] = { "PING" };
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(fnw_redis_send(p.r, 1, ping, NULL, on_rep, &r[i], NULL, &p.err), 0);
    fnw_redis_free(p.r);
    srv_run_for(p.loop, 0.1);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(r[i].called, 0);
    ev_loop_destroy(p.loop);
}
END_TEST

int main(void)
{
    static const char *const need[] = { "redis-server", NULL };
    if (!srv_have("test_redis_client", need))
        return 0;
    Suite *s = suite_create("redis_client");
    TCase *u = tcase_create("backoff");
    tcase_add_test(u, test_backoff_doubles_to_its_cap);
    suite_add_tcase(s, u);
    TCase *t = tcase_create("plain");
    tcase_add_unchecked_fixture(t, plain_up, plain_down);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_get_hgetall_mget_binary);
    tcase_add_test(t, test_pipeline_thousand);
    tcase_add_test(t, test_select);
    tcase_add_test(t, test_pin_one_connection);
    tcase_add_test(t, test_cancel);
    tcase_add_test(t, test_connect_refused);
    tcase_add_test(t, test_free_with_pending);
    tcase_add_test(t, test_server_killed_then_back);   /* last: it restarts the server */
    suite_add_tcase(s, t);
    TCase *a = tcase_create("auth");
    tcase_add_unchecked_fixture(a, auth_up, auth_down);
    tcase_set_timeout(a, 60);
    tcase_add_test(a, test_auth);
    suite_add_tcase(s, a);
    return fnw_check_run(s);
}
