/* tests/fuzz/fuzz_redis_reply.c — fuzz target for what a Redis server's
 * bytes become in a row: hiredis's reply reader, the `redis` operation's
 * reply adapter (ops/redis/redisop_map.c), the neutral reply -> typed
 * value conversion (ops/bind/conv_reply.c) for several target
 * types, and the operation's reply -> output row mapping for four plans
 * (GET into one field, HGETALL by name and into a MAP, HMGET by position).
 *
 * Properties (abort() on violation):
 * - the reader gives the same replies whether the bytes arrive at once or in
 *   two pieces (split where the first byte says);
 * - every reply converts or fails with a non-empty message, and the same
 *   reply converts the same way twice (equal values, equal messages);
 * - a Redis string converted to STRING keeps exactly its bytes;
 * - a mapping gives a row, a skip or a non-empty message, deterministically.
 * ASan catches over-reads of the reply's strings and arrays.
 *
 * Inputs announcing an array of more than MAX_ANNOUNCED elements are
 * skipped: hiredis's reader reserves 8 bytes per announced element before
 * any arrives (calloc; virtual memory that is only touched as elements come
 * in), which libFuzzer's malloc limit reports as out-of-memory although no
 * code of ours runs (findings finding-oom-array-*). hiredis 0.14 offers no
 * limit on it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "codecs/arena.h"
#include "codecs/type.h"
#include "codecs/value.h"
#include "ops/bind/conv.h"
#include "ops/redis/redisop_internal.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_REPLIES 8
#define MAX_ANNOUNCED 65536
#define NTYPES 8
#define NPLANS 4

static fnw_type *types[NTYPES];
static fnw_redisop_config *plans[NPLANS];
static fnw_type *plan_in, *plan_out[NPLANS];

static fnw_type *map_of(fnw_kind v)
{
    return fuzz_with(fuzz_with(fuzz_leaf(FNW_MAP), fuzz_leaf(FNW_STRING), NULL), fuzz_leaf(v), NULL);
}

/* ROW<id INT, name STRING, then the result fields named in names (types
 * in kinds), then extra (if any) named extra_name>. */
static fnw_type *out_row(const char *names, fnw_type *extra, const char *extra_name)
{
    static const struct { const char *name; fnw_kind kind; } result[] = {
        { "score", FNW_LONG }, { "ratio", FNW_DOUBLE }, { "ok", FNW_BOOLEAN },
    };
    fnw_type *t = fuzz_with(fuzz_with(fuzz_leaf(FNW_ROW), fuzz_leaf(FNW_INT), "id"), fuzz_leaf(FNW_STRING), "name");
    for (size_t i = 0; i < sizeof result / sizeof result[0]; i++)
        if (strstr(names, result[i].name))
            fuzz_with(t, fuzz_leaf(result[i].kind), result[i].name);
    return extra ? fuzz_with(t, extra, extra_name) : t;
}

static fnw_redisop_config *plan(fnw_type *out, const char *command, const char *result_field)
{
    fnw_option items[2] = { { "command", command }, { "result_field", result_field } };
    fnw_options o = { result_field ? 2 : 1, items };
    fnw_op_env env = { .options = &o, .input_type = plan_in, .output_type = out, .transform_id = "fuzz" };
    fnw_error err;
    fnw_redisop_config *p = fnw_redisop_config_new(&env, &err);
    if (!p) {
        fprintf(stderr, "fuzz_redis_reply: %s\n", err.msg);
        abort();
    }
    return p;
}

static void setup(void)
{
    types[0] = fuzz_leaf(FNW_STRING);
    types[1] = fuzz_leaf(FNW_LONG);
    types[2] = fuzz_leaf(FNW_DOUBLE);
    types[3] = fuzz_leaf(FNW_BOOLEAN);
    types[4] = fuzz_with(fuzz_leaf(FNW_BASIC_ARRAY), fuzz_leaf(FNW_STRING), NULL);
    types[5] = map_of(FNW_STRING);
    types[6] = fuzz_with(fuzz_with(fuzz_leaf(FNW_ROW), fuzz_leaf(FNW_INT), "a"), fuzz_leaf(FNW_FLOAT), "b");
    types[7] = fuzz_with(fuzz_leaf(FNW_LIST), fuzz_with(fuzz_leaf(FNW_PRIMITIVE_ARRAY), fuzz_leaf(FNW_BYTE), NULL), NULL);
    for (int i = 0; i < NTYPES; i++) {
        fnw_error err;
        if (fnw_conv_check_type(types[i], "f", &err) != 0)
            abort();
    }
    plan_in = fuzz_with(fuzz_with(fuzz_leaf(FNW_ROW), fuzz_leaf(FNW_INT), "id"), fuzz_leaf(FNW_STRING), "name");
    plan_out[0] = out_row("score", NULL, NULL);
    plans[0] = plan(plan_out[0], "GET user:{id}", "score");
    plan_out[1] = out_row("score ratio ok", NULL, NULL);
    plans[1] = plan(plan_out[1], "HGETALL user:{id}", NULL);
    plan_out[2] = out_row("score ratio ok", NULL, NULL);
    plans[2] = plan(plan_out[2], "HMGET user:{id} score ratio ok", NULL);
    plan_out[3] = out_row("", map_of(FNW_LONG), "all");
    plans[3] = plan(plan_out[3], "HGETALL user:{id}", "all");
}

/* 1 when two hiredis replies are the same tree. */
static int same_reply(const redisReply *a, const redisReply *b)
{
    if (a->type != b->type || a->integer != b->integer || a->len != b->len || a->elements != b->elements)
        return 0;
    if ((a->str == NULL) != (b->str == NULL) || (a->str && memcmp(a->str, b->str, a->len) != 0))
        return 0;
    for (size_t i = 0; i < a->elements; i++)
        if (!same_reply(a->element[i], b->element[i]))
            return 0;
    return 1;
}

/* Up to MAX_REPLIES replies from data fed in one piece or split at cut;
 * returns how many; *rc_out is the reader's final status. */
static size_t read_replies(const uint8_t *data, size_t size, size_t cut, redisReply **out, int *rc_out)
{
    redisReader *r = redisReaderCreate();
    if (!r)
        abort();
    size_t n = 0;
    int rc = redisReaderFeed(r, (const char *)data, cut);
    if (rc == REDIS_OK && cut < size)
        rc = redisReaderFeed(r, (const char *)data + cut, size - cut);
    while (rc == REDIS_OK && n < MAX_REPLIES) {
        void *reply = NULL;
        rc = redisReaderGetReply(r, &reply);
        if (rc != REDIS_OK || !reply)
            break;
        out[n++] = reply;
    }
    redisReaderFree(r);
    *rc_out = rc;
    return n;
}

static void check_failure(int rc, const fnw_error *e1, const fnw_error *e2)
{
    if (rc != -1 || !fuzz_same_message(e1, e2))
        abort();
}

static void convert_each_type(const fnw_reply *r)
{
    for (int i = 0; i < NTYPES; i++) {
        fnw_arena a1, a2;
        fnw_arena_init(&a1, 4096, 0);
        fnw_arena_init(&a2, 4096, 0);
        fnw_value v1, v2;
        fnw_error e1 = { "" }, e2 = { "" };
        int rc1 = fnw_conv_reply(types[i], r, "f", &a1, &v1, &e1);
        int rc2 = fnw_conv_reply(types[i], r, "f", &a2, &v2, &e2);
        if (rc1 != rc2)
            abort();
        if (rc1 != 0)
            check_failure(rc1, &e1, &e2);
        else if (!fnw_value_equal(types[i], &v1, &v2))
            abort();
        if (rc1 == 0 && i == 0 && r->kind == FNW_REPLY_STRING &&
            (v1.is_null || v1.count != r->len || (r->len && memcmp(v1.u.bytes, r->u.str, r->len) != 0)))
            abort();
        fnw_arena_free(&a1);
        fnw_arena_free(&a2);
    }
}

static void map_each_plan(const fnw_reply *r)
{
    fnw_value f[2] = { fnw_value_int(FNW_INT, 7), fnw_value_str("ann") };
    fnw_value in = fnw_value_row(FNW_INSERT, f, 2);
    for (int i = 0; i < NPLANS; i++) {
        fnw_arena a1, a2;
        fnw_arena_init(&a1, 4096, 0);
        fnw_arena_init(&a2, 4096, 0);
        fnw_value row1, row2;
        fnw_error e1 = { "" }, e2 = { "" };
        int rc1 = fnw_redisop_map(plans[i], &in, r, &a1, &row1, &e1);
        int rc2 = fnw_redisop_map(plans[i], &in, r, &a2, &row2, &e2);
        if (rc1 != rc2)
            abort();
        if (rc1 == FNW_REDISOP_ROW && !fnw_value_equal(plan_out[i], &row1, &row2))
            abort();
        if (rc1 != FNW_REDISOP_ROW && rc1 != FNW_REDISOP_SKIP)
            check_failure(rc1, &e1, &e2);
        fnw_arena_free(&a1);
        fnw_arena_free(&a2);
    }
}

static void use_reply(const redisReply *reply)
{
    fnw_arena a;
    fnw_arena_init(&a, 4096, 0);
    fnw_reply r;
    fnw_error err = { "" };
    if (fnw_redisop_map_adapt(reply, &a, &r, &err) != 0) {
        if (err.msg[0] == '\0')
            abort();
    } else {
        convert_each_type(&r);
        map_each_plan(&r);
    }
    fnw_arena_free(&a);
}

/* 1 when some '*' of data is followed by a count over MAX_ANNOUNCED. */
static int announces_huge_array(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        if (data[i] != '*')
            continue;
        uint64_t n = 0;
        for (size_t j = i + 1; j < size && data[j] >= '0' && data[j] <= '9' && n <= MAX_ANNOUNCED; j++)
            n = n * 10 + (uint64_t)(data[j] - '0');
        if (n > MAX_ANNOUNCED)
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!types[0])
        setup();
    if (announces_huge_array(data, size))
        return 0;
    size_t cut = size ? data[0] % (size + 1) : 0;
    redisReply *whole[MAX_REPLIES], *split[MAX_REPLIES];
    int rc_whole, rc_split;
    size_t n = read_replies(data, size, size, whole, &rc_whole);
    size_t n2 = read_replies(data, size, cut, split, &rc_split);
    if (n != n2 || rc_whole != rc_split)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (!same_reply(whole[i], split[i]))
            abort();
        use_reply(whole[i]);
        freeReplyObject(whole[i]);
        freeReplyObject(split[i]);
    }
    return 0;
}
