/* tests/alloc/alloc_ops.c — allocation failures while the service
 * operations open: `http` in batch mode (templates in the body, a header
 * whose value comes from the environment, a JSON pointer per result field)
 * and per element (GET; fields in URL path, query and a header)
 * and `redis` (HMGET mapped onto the output fields; a pool of two
 * connections to an address where nothing listens: open only starts
 * connecting, the loop never runs here), and the options of `kserve` as
 * its open reads them (kserve_config: target, model, a tensor mapping of
 * two inputs and an output, request parameters, an auth header from the
 * environment; the open itself connects and waits for the model, so it is
 * not run here). Open reads and checks every
 * option, so a failure must end in an error and a state-less result;
 * closing what opened must free everything. */
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/builtins.h"
#include "ops/http/httpop_internal.h"
#include "ops/kserve/kserve_config.h"
#include "runtime/operation.h"
#include "tests/alloc/alloc_run.h"
#include "tests/unit/binding_build.h"

typedef struct fixture {
    struct ev_loop *loop;
    fnw_registry reg;
    const fnw_operation *op;
    fnw_type *in, *out;
    const char *const *kv;   /* key, value, ..., NULL */
    int batched;
    void *state;
    fnw_kserve_config cfg;
    int cfg_ok;
} fixture;

static fixture *fx_new(const char *op, fnw_type *in, fnw_type *out, const char *const *kv, int batched)
{
    fixture *fx = calloc(1, sizeof *fx);
    fnw_error err;
    fx->loop = ev_loop_new(EVFLAG_AUTO);
    fnw_registry_init(&fx->reg);
    fnw_builtins_register(&fx->reg);
    fx->op = fnw_registry_find(&fx->reg, op, &err);
    if (!fx->op) {
        fprintf(stderr, "%s\n", err.msg);
        return NULL;
    }
    fx->in = in;
    fx->out = out;
    fx->kv = kv;
    fx->batched = batched;
    return fx;
}

/* Runs with fx's options in env (items has room for 32). */
static void env_of(fixture *fx, fnw_option *items, fnw_options *o, fnw_op_env *env)
{
    size_t n = 0;
    for (; fx->kv[2 * n]; n++)
        items[n] = (fnw_option){fx->kv[2 * n], fx->kv[2 * n + 1]};
    *o = (fnw_options){n, items};
    *env = (fnw_op_env){.loop = fx->loop, .options = o, .input_type = fx->in, .output_type = fx->out,
                        .transform_id = "t", .batched = fx->batched, .batch_size = fx->batched ? 8 : 1,
                        .timeout_ms = 1000};
}

static int open_run(void *p, fnw_error *err)
{
    fixture *fx = p;
    fnw_option items[32];
    fnw_options o;
    fnw_op_env env;
    env_of(fx, items, &o, &env);
    int rc = fx->op->open(&env, &fx->state, err);
    if (rc < 0 && fx->state)
        return 2;    /* a failed open must leave no state */
    return rc;
}

static int open_verify(void *p)
{
    return ((fixture *)p)->state != NULL;
}

/* Open, and the Authorization header's secret is kept for masking. */
static int http_verify(void *p)
{
    const httpop_state *st = ((fixture *)p)->state;
    return st && st->n_secrets == 1 && st->secrets[0] && !strcmp(st->secrets[0], "k-123");
}

static void open_teardown(void *p)
{
    fixture *fx = p;
    if (fx->state)
        fx->op->close(fx->state);
    if (fx->cfg_ok)
        fnw_kserve_config_free(&fx->cfg);
    fnw_type_free(fx->in);
    fnw_type_free(fx->out);
    ev_loop_destroy(fx->loop);
    free(fx);
}

static fixture *http_new(const char *const *kv, int batched)
{
    setenv("FNW_SECRET_ALLOC_HTTP_KEY", "k-123", 1);
    return fx_new("http", R(2, "id", T(FNW_LONG), "text", T(FNW_STRING)),
                  R(4, "id", T(FNW_LONG), "text", T(FNW_STRING), "vec", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT)),
                    "score", T(FNW_DOUBLE)),
                  kv, batched);
}

static void *http_batch_setup(void)
{
    static const char *const kv[] = {
        "url", "http://127.0.0.1:9/v1/embeddings", "body", "{text}",
        "batch_body", "{\"model\": \"m\", \"input\": {items}}",
        "header.Authorization", "Bearer {env:FNW_SECRET_ALLOC_HTTP_KEY}",
        "result.vec", "/data/{i}/embedding", "result.score", "/data/{i}/score", "on_missing", "fail", NULL,
    };
    return http_new(kv, 1);
}

static void *http_get_setup(void)
{
    static const char *const kv[] = {
        "url", "http://127.0.0.1:9/items/{id}?q={text}", "header.Authorization", "Bearer {env:FNW_SECRET_ALLOC_HTTP_KEY}",
        "header.X-Id", "{id}", "result.vec", "/vec", "result.score", "/meta/score", NULL,
    };
    return http_new(kv, 0);
}

static void *redis_setup(void)
{
    static const char *const kv[] = {
        "command", "HMGET user:{id} city name", "address", "127.0.0.1:1", "pool_size", "2",
        "on_missing", "empty", NULL,
    };
    return fx_new("redis", R(2, "id", T(FNW_INT), "tag", T(FNW_STRING)),
                  R(4, "id", T(FNW_INT), "tag", T(FNW_STRING), "city", T(FNW_STRING), "name", T(FNW_STRING)),
                  kv, 0);
}

static void *kserve_setup(void)
{
    static const char *const kv[] = {
        "target", "127.0.0.1:9", "model_name", "linear", "model_version", "2",
        "inputs", "x:FP32[4]=features,ids:INT64=id", "outputs", "y:FP32[2]=scores",
        "parameters", "priority=3, mode='fast lane'", "auth_header_env", "FNW_SECRET_ALLOC_KSERVE_KEY", NULL,
    };
    setenv("FNW_SECRET_ALLOC_KSERVE_KEY", "Bearer t-1", 1);
    return fx_new("kserve", R(2, "id", T(FNW_LONG), "features", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT))),
                  R(2, "id", T(FNW_LONG), "scores", C(FNW_PRIMITIVE_ARRAY, T(FNW_FLOAT))), kv, 1);
}

static int kserve_run(void *p, fnw_error *err)
{
    fixture *fx = p;
    fnw_option items[32];
    fnw_options o;
    fnw_op_env env;
    env_of(fx, items, &o, &env);
    if (fnw_kserve_config_init(&fx->cfg, &env, "kserve", err) < 0)
        return -1;
    fx->cfg_ok = 1;
    return 0;
}

/* Every option read, the secret kept. */
static int kserve_verify(void *p)
{
    const fnw_kserve_config *c = &((fixture *)p)->cfg;
    return c->target && !strcmp(c->target, "127.0.0.1:9") && c->model_name && !strcmp(c->model_name, "linear") &&
           c->model_version && !strcmp(c->model_version, "2") && c->plan && fnw_tensor_plan_inputs(c->plan) == 2 &&
           fnw_tensor_plan_outputs(c->plan) == 1 && c->params && c->auth_header &&
           !strcmp(c->auth_header, "Bearer t-1");
}

static const alloc_scenario http_batch = {"http_open_batch", http_batch_setup, open_run, http_verify,
                                          open_teardown};
static const alloc_scenario http_get = {"http_open_get", http_get_setup, open_run, http_verify, open_teardown};
static const alloc_scenario kserve = {"kserve_config", kserve_setup, kserve_run, kserve_verify, open_teardown};
static const alloc_scenario redis_open = {"redis_open", redis_setup, open_run, open_verify, open_teardown};

int main(int argc, char **argv)
{
    const alloc_scenario *all[] = {&http_batch, &http_get, &redis_open, &kserve};
    return alloc_main(all, sizeof all / sizeof all[0], argc, argv);
}
