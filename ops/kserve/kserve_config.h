/* ops/kserve/kserve_config.h — the kserve operation's options, read and
 * checked once at open into one struct: where the model server is, which
 * model, the tensor mapping (tensor.h), the request parameters
 * (tensor_params.h), and the transport settings. Everything a job can get
 * wrong fails here, before any call, with a message naming the option.
 *
 * Options: target (required: host:port, [v6addr]:port or unix:PATH),
 * model_name (required), model_version, inputs, outputs, parameters,
 * channels (1..16, default 1), check_metadata (default true),
 * max_message_bytes (1 KiB..1 GiB, default 64 MiB), tls (default false),
 * tls_ca_file (with tls only; readable at open), auth_header_env (the name
 * of an environment variable, set at open, whose value is sent as the
 * 'authorization' metadata; the value is a secret: it never appears in a
 * message), connect_timeout_ms (100..300000, default 5000: how long open
 * waits for the server and the model to be ready).
 */
#ifndef FNW_KSERVE_CONFIG_H
#define FNW_KSERVE_CONFIG_H

#include <stdint.h>

#include "fnworker.h"
#include "ops/kserve/tensor/tensor.h"
#include "ops/kserve/tensor/tensor_params.h"

typedef struct fnw_kserve_config {
    char *target; /* as gRPC takes it: "host:port" or "unix:PATH" */
    char *model_name;
    char *model_version; /* "" = the server's choice */
    fnw_tensor_plan *plan;
    fnw_tensor_params *params;
    int channels;
    int check_metadata;
    int64_t max_message_bytes;
    int tls;
    char *tls_ca_file;          /* NULL = the system's roots */
    char *auth_header;          /* the secret value, or NULL */
    int64_t connect_timeout_ms; /* readiness and metadata at open, at most this long */
} fnw_kserve_config;

/* Reads env->options against env->input_type / output_type; op names the
 * operation in messages. On failure c holds nothing to free. */
int fnw_kserve_config_init(fnw_kserve_config *c, const fnw_op_env *env, const char *op, fnw_error *err);
void fnw_kserve_config_free(fnw_kserve_config *c);

#endif
