/* tests/unit/ops/test_cache_ops.c — the lookup cache of the `redis` and
 * `http` operations through a real engine, against a real redis-server
 * (tests/servers/redis.sh) and the Python test HTTP server
 * (tests/servers/pyhttp.sh): rows with repeated keys get exactly the right
 * outputs (each its own input fields, the reply of its key) while the
 * service sees one call per distinct key (Redis: INFO commandstats; HTTP:
 * the server's /count), coalesced in flight and kept across bundles;
 * "not found" is asked again unless cache_missing; a failure reaches every
 * call waiting on the same request and is not kept; the cache options are
 * refused in batch mode. Skips (one line) without redis-server or python3. */
#include <check.h>
#include <curl/curl.h>
#include <ev.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/handoff.h"
#include "codecs/arena.h"
#include "codecs/ser.h"
#include "codecs/type.h"
#include "ops/builtins.h"
#include "runtime/counter.h"
#include "runtime/engine.h"
#include "runtime/registry.h"
#include "tests/unit/binding_build.h"
#include "tests/unit/check_run.h"
#include "tests/unit/test_servers.h"

static char redis_dir[128], http_dir[128];
static int redis_port, http_port;

static void servers_up(void)
{
    char out[64], args[64];
    snprintf(args, sizeof args, "--owner %d", (int)getpid());
    srv_dir(redis_dir, sizeof redis_dir, "cache-redis");
    ck_assert_int_eq(srv_cmd("redis.sh", "start", redis_dir, args, out, sizeof out), 0);
    redis_port = atoi(out);
    srv_dir(http_dir, sizeof http_dir, "cache-http");
    ck_assert_int_eq(srv_cmd("pyhttp.sh", "start", http_dir, args, out, sizeof out), 0);
    http_port = atoi(out);
}

static void servers_down(void)
{
    srv_cmd("redis.sh", "stop", redis_dir, NULL, NULL, 0);
    srv_rmdir(redis_dir);
    srv_cmd("pyhttp.sh", "stop", http_dir, NULL, NULL, 0);
    srv_rmdir(http_dir);
}

/* ---- Redis, from the test's side ------------------------------------------------ */

static redisContext *rconn(void)
{
    redisContext *c = redisConnect("127.0.0.1", redis_port);
    ck_assert_msg(c && !c->err, "cannot reach redis on %d", redis_port);
    return c;
}

static void rcmd(const char *fmt, const char *a, const char *b)
{
    redisContext *c = rconn();
    redisReply *r = redisCommand(c, fmt, a, b);
    ck_assert_ptr_nonnull(r);
    freeReplyObject(r);
    redisFree(c);
}

/* calls of command cmd (lower case) since the last CONFIG RESETSTAT */
static long redis_calls(const char *cmd)
{
    redisContext *c = rconn();
    redisReply *r = redisCommand(c, "INFO commandstats");
    ck_assert_ptr_nonnull(r);
    char want[64];
    snprintf(want, sizeof want, "cmdstat_%s:calls=", cmd);
    const char *at = r->str ? strstr(r->str, want) : NULL;
    long n = at ? atol(at + strlen(want)) : 0;
    freeReplyObject(r);
    redisFree(c);
    return n;
}

static void redis_reset(void)
{
    redisContext *c = rconn();
    freeReplyObject(redisCommand(c, "FLUSHALL"));
    freeReplyObject(redisCommand(c, "CONFIG RESETSTAT"));
    redisFree(c);
}

/* ---- HTTP, from the test's side ------------------------------------------------- */

static size_t grab(char *p, size_t size, size_t n, void *user)
{
    char *out = user;
    size_t have = strlen(out), add = size * n;
    if (have + add < 255) {
        memcpy(out + have, p, add);
        out[have + add] = '\0';
    }
    return add;
}

static long http_requests(void)
{
    char url[128], body[256] = "";
    snprintf(url, sizeof url, "http://127.0.0.1:%d/count", http_port);
    CURL *e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, grab);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
    ck_assert_int_eq(curl_easy_perform(e), CURLE_OK);
    curl_easy_cleanup(e);
    const char *at = strstr(body, "\"requests\":");
    ck_assert_ptr_nonnull(at);
    return atol(at + strlen("\"requests\":"));
}

/* ---- the engine ------------------------------------------------------------------ */

typedef struct drv {
    struct ev_loop *loop;
    fnw_registry reg;
    fnw_type *in, *out;
    fnw_engine *e;
    fnw_error err;
    /* a bundle */
    size_t n, next;
    const int32_t *ids;
    int finished, failed;
    char fail_msg[FNW_ERROR_MAX];
    /* outputs: id, name, v */
    size_t n_out;
    int32_t out_id[512];
    char out_name[512][16], out_v[512][32];
    int out_v_null[512];
} drv;

static void drv_init(drv *d)
{
    memset(d, 0, sizeof *d);
    d->loop = ev_loop_new(EVFLAG_AUTO);
    fnw_registry_init(&d->reg);
    fnw_builtins_register(&d->reg);
    d->in = R(2, "id", T(FNW_INT), "name", T(FNW_STRING));
    d->out = R(3, "id", T(FNW_INT), "name", T(FNW_STRING), "v", T(FNW_STRING));
}

static int64_t spec_timeout_ms = 10000;
static fnw_timeout_action spec_on_timeout = FNW_TIMEOUT_FAIL;

static int drv_create(drv *d, const char *op_name, int batched, const char *const *kv)
{
    fnw_option items[32];
    size_t n = 0;
    for (; kv[2 * n]; n++)
        items[n] = (fnw_option){ kv[2 * n], kv[2 * n + 1] };
    fnw_options opts = { n, items };
    const fnw_operation *op = fnw_registry_find(&d->reg, op_name, &d->err);
    ck_assert_ptr_nonnull(op);
    fnw_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.capacity = 64;
    spec.timeout_ms = spec_timeout_ms;
    spec.on_timeout = spec_on_timeout;
    spec.batched = batched;
    spec.batch_size = batched ? 8 : 0;
    fnw_op_env env = { .loop = d->loop, .options = &opts, .input_type = d->in, .output_type = d->out,
                       .transform_id = "t1", .batched = batched, .batch_size = batched ? 8 : 1,
                       .counters = NULL };
    return fnw_engine_new(d->loop, op, &spec, &env, &d->e, &d->err);
}

static void drv_free(drv *d)
{
    if (d->e)
        fnw_engine_free(d->e);
    fnw_type_free(d->in);
    fnw_type_free(d->out);
    fnw_handoff_loop_free(d->loop);
    ev_loop_destroy(d->loop);
}

static void on_emit(void *user, const fnw_record *out)
{
    drv *d = user;
    ck_assert_uint_lt(d->n_out, 512);
    fnw_arena a;
    fnw_arena_init(&a, 4096, 0);
    fnw_value v;
    fnw_error err;
    size_t used;
    ck_assert_msg(fnw_ser_decode(d->out, out->data, out->len, &a, &v, &used, &err) == 0, "%s", err.msg);
    size_t i = d->n_out++;
    d->out_id[i] = (int32_t)v.u.items[0].u.i;
    snprintf(d->out_name[i], sizeof d->out_name[i], "%.*s", (int)v.u.items[1].count,
             (const char *)v.u.items[1].u.bytes);
    d->out_v_null[i] = v.u.items[2].is_null;
    snprintf(d->out_v[i], sizeof d->out_v[i], "%.*s", (int)v.u.items[2].count,
             (const char *)v.u.items[2].u.bytes);
    fnw_arena_free(&a);
}

static void feed(drv *d)
{
    while (!d->failed && d->next < d->n && fnw_engine_has_space(d->e)) {
        size_t i = d->next++;
        char name[16];
        snprintf(name, sizeof name, "n%zu", i);
        fnw_value f[2] = { fnw_value_int(FNW_INT, d->ids[i]), fnw_value_str(name) };
        fnw_value row = fnw_value_row(FNW_INSERT, f, 2);
        fnw_buf b;
        fnw_buf_init(&b, 0);
        fnw_error err;
        ck_assert(fnw_ser_encode(d->in, &row, &b, &err) == 0);
        fnw_record r = { 1000 + (int64_t)i, INT64_MIN, b.p, (uint32_t)b.len };
        fnw_engine_push(d->e, &r);
        fnw_buf_free(&b);
    }
    if (!d->failed && d->next == d->n) {
        d->next++;
        fnw_engine_finish(d->e);
    }
}

static void on_ready(void *user)
{
    feed(user);
}

static void on_failed(void *user, const char *msg)
{
    drv *d = user;
    d->failed = 1;
    snprintf(d->fail_msg, sizeof d->fail_msg, "%s", msg);
    ev_break(d->loop, EVBREAK_ALL);
}

static void on_finished(void *user)
{
    drv *d = user;
    d->finished = 1;
    ev_break(d->loop, EVBREAK_ALL);
}

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* One bundle of n rows with the given ids (row i has name "n<i>"). */
static void bundle(drv *d, const int32_t *ids, size_t n)
{
    d->ids = ids;
    d->n = n;
    d->next = 0;
    d->n_out = 0;
    d->finished = d->failed = 0;
    fnw_engine_sink s = { d, on_emit, on_ready, on_failed, on_finished, NULL, NULL, NULL, NULL };
    fnw_engine_start(d->e, &s, "b");
    feed(d);
    ev_timer g;
    ev_timer_init(&g, guard_cb, 20., 0.);
    ev_timer_start(d->loop, &g);
    if (!d->finished && !d->failed)
        ev_run(d->loop, 0);
    ev_timer_stop(d->loop, &g);
    ck_assert_msg(d->finished || d->failed, "the bundle did not end within 20 s (%zu outputs)", d->n_out);
}

static int64_t counter(drv *d, const char *name)
{
    const fnw_engine_metrics *m = fnw_engine_metrics_get(d->e);
    for (size_t i = 0; i < m->ncounters; i++)
        if (strcmp(m->counters[i].name, name) == 0)
            return fnw_counter_value(&m->counters[i]);
    ck_abort_msg("no counter %s", name);
    return -1;
}

/* ---- the tests ----------------------------------------------------------------------- */

static char addr[32];

START_TEST(test_redis_repeated_keys_one_call_each)
{
    redis_reset();
    for (int k = 0; k < 10; k++) {
        char key[16], val[16];
        snprintf(key, sizeof key, "k:%d", k);
        snprintf(val, sizeof val, "val%d", k);
        rcmd("SET %s %s", key, val);
    }
    long before = redis_calls("get");
    snprintf(addr, sizeof addr, "127.0.0.1:%d", redis_port);
    drv d;
    drv_init(&d);
    const char *kv[] = { "address", addr, "command", "GET k:{id}", "result_field", "v", "cache_max_rows", "100",
                         NULL };
    ck_assert_msg(drv_create(&d, "redis", 0, kv) == 0, "%s", d.err.msg);
    int32_t ids[300];
    for (int i = 0; i < 300; i++)
        ids[i] = (i * 7) % 10 + (i % 50 == 49 ? 20 : 0); /* keys 0..9, and a few missing ones (2x) */
    bundle(&d, ids, 300);
    ck_assert_msg(!d.failed, "%s", d.fail_msg);
    ck_assert_uint_eq(d.n_out, 300);
    for (size_t i = 0; i < 300; i++) {
        char name[16], v[16];
        snprintf(name, sizeof name, "n%zu", i);
        snprintf(v, sizeof v, "val%d", ids[i]);
        ck_assert_int_eq(d.out_id[i], ids[i]);
        ck_assert_str_eq(d.out_name[i], name);
        if (ids[i] >= 20)
            ck_assert(d.out_v_null[i]);
        else
            ck_assert_str_eq(d.out_v[i], v);
    }
    long calls = redis_calls("get") - before;
    /* a missing key is not kept: each of its rows asks, unless it joins a flight */
    long missing_rows = 0;
    for (int i = 0; i < 300; i++)
        missing_rows += ids[i] >= 20;
    ck_assert_int_ge(calls, 10);
    ck_assert_int_le(calls, 10 + missing_rows);
    ck_assert_int_eq(counter(&d, "cache_misses"), calls);
    ck_assert_int_gt(counter(&d, "cache_coalesced"), 0); /* 64 calls start before any reply */
    ck_assert_int_eq(counter(&d, "cache_hits") + counter(&d, "cache_coalesced") + calls, 300);
    ck_assert_int_eq(counter(&d, "cache_stored"), 10);
    /* the next bundle is answered from the cache (kept across bundles), except the missing keys */
    before = redis_calls("get");
    bundle(&d, ids, 300);
    ck_assert_msg(!d.failed, "%s", d.fail_msg);
    ck_assert_uint_eq(d.n_out, 300);
    ck_assert_str_eq(d.out_v[3], "val1");
    calls = redis_calls("get") - before;
    ck_assert_int_ge(calls, 1);
    ck_assert_int_le(calls, missing_rows);
    ck_assert_int_eq(counter(&d, "cache_hits"), 300 - missing_rows);
    drv_free(&d);
}
END_TEST

START_TEST(test_redis_cache_missing_and_ttl)
{
    redis_reset();
    rcmd("SET %s %s", "k:1", "one");
    snprintf(addr, sizeof addr, "127.0.0.1:%d", redis_port);
    drv d;
    drv_init(&d);
    const char *kv[] = { "address", addr, "command", "GET k:{id}", "result_field", "v", "cache_max_rows", "100",
                         "cache_missing", "true", "cache_ttl_ms", "100000", NULL };
    ck_assert_msg(drv_create(&d, "redis", 0, kv) == 0, "%s", d.err.msg);
    int32_t ids[40];
    for (int i = 0; i < 40; i++)
        ids[i] = i % 2 ? 1 : 5; /* k:5 does not exist */
    long before = redis_calls("get");
    bundle(&d, ids, 40);
    ck_assert_msg(!d.failed, "%s", d.fail_msg);
    ck_assert_uint_eq(d.n_out, 40);
    ck_assert(d.out_v_null[0]);
    ck_assert_str_eq(d.out_v[1], "one");
    ck_assert_int_eq(redis_calls("get") - before, 2); /* "not found" kept too */
    /* a changed value is not seen while the entry lives (the TTL bounds staleness) */
    rcmd("SET %s %s", "k:1", "uno");
    bundle(&d, ids, 40);
    ck_assert_str_eq(d.out_v[1], "one");
    ck_assert_int_eq(redis_calls("get") - before, 2);
    drv_free(&d);
}
END_TEST

START_TEST(test_redis_failure_reaches_every_waiter)
{
    redis_reset();
    rcmd("HSET %s f %s", "k:1", "x"); /* GET on a hash: WRONGTYPE */
    snprintf(addr, sizeof addr, "127.0.0.1:%d", redis_port);
    drv d;
    drv_init(&d);
    const char *kv[] = { "address", addr, "command", "GET k:{id}", "result_field", "v", "cache_max_rows", "100",
                         NULL };
    ck_assert_msg(drv_create(&d, "redis", 0, kv) == 0, "%s", d.err.msg);
    int32_t ids[20];
    for (int i = 0; i < 20; i++)
        ids[i] = 1;
    long before = redis_calls("get");
    bundle(&d, ids, 20);
    ck_assert(d.failed);
    ck_assert_msg(strstr(d.fail_msg, "WRONGTYPE") && strstr(d.fail_msg, "GET k:1"), "%s", d.fail_msg);
    ck_assert_int_eq(counter(&d, "cache_stored"), 0); /* never kept */
    long calls = redis_calls("get") - before;
    ck_assert_int_ge(calls, 1);
    ck_assert_int_lt(calls, 20); /* the rows out together shared the one call */
    /* fixed in Redis: the next bundle asks again (the failure was not kept) */
    redis_reset();
    rcmd("SET %s %s", "k:1", "ok");
    bundle(&d, ids, 20);
    ck_assert_msg(!d.failed, "%s", d.fail_msg);
    ck_assert_str_eq(d.out_v[19], "ok");
    drv_free(&d);
}
END_TEST

START_TEST(test_http_repeated_keys_one_request_each)
{
    char url[128];
    drv d;
    /* /headers echoes the path: v gets the request's path, which names the key */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/headers/{id}", http_port);
    drv_init(&d);
    const char *kv2[] = { "url", url, "result.v", "/_path", "cache_max_rows", "100", NULL };
    ck_assert_msg(drv_create(&d, "http", 0, kv2) == 0, "%s", d.err.msg);
    int32_t ids[200];
    for (int i = 0; i < 200; i++)
        ids[i] = (i * 3) % 8;
    long before = http_requests();
    bundle(&d, ids, 200);
    ck_assert_msg(!d.failed, "%s", d.fail_msg);
    ck_assert_uint_eq(d.n_out, 200);
    for (size_t i = 0; i < 200; i++) {
        char name[16], v[32];
        snprintf(name, sizeof name, "n%zu", i);
        snprintf(v, sizeof v, "/headers/%d", ids[i]);
        ck_assert_int_eq(d.out_id[i], ids[i]);
        ck_assert_str_eq(d.out_name[i], name);
        ck_assert_str_eq(d.out_v[i], v);
    }
    ck_assert_int_eq(http_requests() - before, 8); /* one per key (/count itself is not counted) */
    ck_assert_int_eq(counter(&d, "cache_misses"), 8);
    bundle(&d, ids, 200);
    ck_assert_msg(!d.failed, "%s", d.fail_msg);
    ck_assert_int_eq(counter(&d, "cache_hits"), 200);
    ck_assert_int_eq(http_requests() - before, 8);
    drv_free(&d);
}
END_TEST

START_TEST(test_http_failures_not_kept)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/status/{id}", http_port);
    drv d;
    drv_init(&d);
    const char *kv[] = { "url", url, "result.v", "/nothing", "cache_max_rows", "100", NULL };
    ck_assert_msg(drv_create(&d, "http", 0, kv) == 0, "%s", d.err.msg);
    int32_t ids[10];
    for (int i = 0; i < 10; i++)
        ids[i] = 404; /* not found: null result, asked again (no cache_missing) */
    long before = http_requests();
    bundle(&d, ids, 10);
    ck_assert_msg(!d.failed, "%s", d.fail_msg);
    ck_assert_uint_eq(d.n_out, 10);
    ck_assert(d.out_v_null[9]);
    ck_assert_int_eq(counter(&d, "cache_stored"), 0);
    long first = http_requests() - before;
    ck_assert_int_ge(first, 1);
    for (int i = 0; i < 10; i++)
        ids[i] = 400; /* refused: every row's call fails, nothing kept */
    bundle(&d, ids, 10);
    ck_assert(d.failed);
    ck_assert_msg(strstr(d.fail_msg, "HTTP status 400"), "%s", d.fail_msg);
    ck_assert_int_eq(counter(&d, "cache_stored"), 0);
    drv_free(&d);
}
END_TEST

START_TEST(test_http_waiters_time_out_and_leave)
{
    /* 20 rows of one key whose answer takes 3 s, a 300 ms timeout with an
     * empty result: one request is sent, every waiting call times out and
     * leaves, the last one cancels the request, the bundle ends empty */
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/delay?ms={id}", http_port);
    drv d;
    drv_init(&d);
    const char *kv[] = { "url", url, "result.v", "/nothing", "cache_max_rows", "100", NULL };
    spec_timeout_ms = 300;
    spec_on_timeout = FNW_TIMEOUT_EMPTY;
    int rc = drv_create(&d, "http", 0, kv);
    spec_timeout_ms = 10000;
    spec_on_timeout = FNW_TIMEOUT_FAIL;
    ck_assert_msg(rc == 0, "%s", d.err.msg);
    int32_t ids[20];
    for (int i = 0; i < 20; i++)
        ids[i] = 3000;
    long before = http_requests();
    bundle(&d, ids, 20);
    ck_assert_msg(!d.failed, "%s", d.fail_msg);
    ck_assert_uint_eq(d.n_out, 0);
    ck_assert_int_eq(counter(&d, "cache_misses"), 1);
    ck_assert_int_eq(counter(&d, "cache_coalesced"), 19);
    ck_assert_int_eq(counter(&d, "cache_stored"), 0);
    ck_assert_int_eq(fnw_engine_metrics_get(d.e)->timeouts, 20);
    ck_assert_int_le(http_requests() - before, 1);
    /* the instance goes on: a fast key answers */
    for (int i = 0; i < 20; i++)
        ids[i] = 1;
    bundle(&d, ids, 20);
    ck_assert_msg(!d.failed, "%s", d.fail_msg);
    ck_assert_uint_eq(d.n_out, 20);
    ck_assert_int_eq(counter(&d, "cache_misses"), 1);
    drv_free(&d);
}
END_TEST

START_TEST(test_batch_mode_refuses_cache_options)
{
    snprintf(addr, sizeof addr, "127.0.0.1:%d", redis_port);
    drv d;
    drv_init(&d);
    const char *kv[] = { "address", addr, "command", "GET k:{id}", "result_field", "v", "cache_ttl_ms", "5", NULL };
    ck_assert_int_ne(drv_create(&d, "redis", 1, kv), 0);
    ck_assert_msg(strstr(d.err.msg, "'cache_ttl_ms'") && strstr(d.err.msg, "per-element"), "%s", d.err.msg);
    /* per element, an option without cache_max_rows is named too */
    ck_assert_int_ne(drv_create(&d, "redis", 0, kv), 0);
    ck_assert_msg(strstr(d.err.msg, "'cache_ttl_ms' needs option 'cache_max_rows'"), "%s", d.err.msg);
    const char *bad[] = { "address", addr, "command", "GET k:{id}", "result_field", "v", "cache_max_rows", "-1",
                          NULL };
    ck_assert_int_ne(drv_create(&d, "redis", 0, bad), 0);
    ck_assert_msg(strstr(d.err.msg, "cache_max_rows"), "%s", d.err.msg);
    d.e = NULL;
    drv_free(&d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cache_ops");
    TCase *tc = tcase_create("services");
    tcase_add_unchecked_fixture(tc, servers_up, servers_down);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_redis_repeated_keys_one_call_each);
    tcase_add_test(tc, test_redis_cache_missing_and_ttl);
    tcase_add_test(tc, test_redis_failure_reaches_every_waiter);
    tcase_add_test(tc, test_http_repeated_keys_one_request_each);
    tcase_add_test(tc, test_http_failures_not_kept);
    tcase_add_test(tc, test_http_waiters_time_out_and_leave);
    tcase_add_test(tc, test_batch_mode_refuses_cache_options);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    static const char *const need[] = { "redis-server", "python3", NULL };
    if (!srv_have("test_cache_ops", need))
        return 0;
    return fnw_check_run(suite());
}
