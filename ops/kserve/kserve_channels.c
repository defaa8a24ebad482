/* ops/kserve/kserve_channels.c — the `kserve` operation's channels
 * to the model server: credentials (TLS with an optional CA file), the
 * channel arguments, one connection per channel, round robin between them.
 */
#include <grpc/grpc_security.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kserve/kserve_internal.h"

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

static grpc_channel_credentials *credentials(const fnw_kserve_config *c, fnw_error *err)
{
    if (!c->tls)
        return grpc_insecure_credentials_create();
    char *pem = NULL;
    if (c->tls_ca_file && !(pem = read_file(c->tls_ca_file))) {
        fnw_error_set(err, "option 'tls_ca_file' of operation '%s': cannot read '%.200s'", KSERVE_OP,
                      c->tls_ca_file);
        return NULL;
    }
    grpc_channel_credentials *cr = grpc_ssl_credentials_create(pem, NULL, NULL, NULL);
    free(pem);
    if (!cr)
        fnw_error_set(err, "operation '%s': cannot set up TLS to '%s'", KSERVE_OP, c->target);
    return cr;
}

int fnw_kserve_channels_start(kserve_op *op, fnw_error *err)
{
    grpc_init();
    op->grpc_started = 1;
    grpc_channel_credentials *cr = credentials(&op->cfg, err);
    if (!cr)
        return -1;
    grpc_arg args[5];
    memset(args, 0, sizeof args);
    args[0].type = args[1].type = args[2].type = args[3].type = args[4].type = GRPC_ARG_INTEGER;
    args[0].key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = args[1].value.integer = (int)op->cfg.max_message_bytes;
    /* Separate connections: without it, channels with equal arguments share one subchannel. */
    args[2].key = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
    args[2].value.integer = 1;
    /* Reconnect at most 1 s apart: gRPC's default backoff grows to 120 s, so
     * a model server that restarts after a minute's outage would stay
     * unreached (every retry failing at once) for up to two more. */
    args[3].key = GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS;
    args[3].value.integer = 200;
    args[4].key = GRPC_ARG_MAX_RECONNECT_BACKOFF_MS;
    args[4].value.integer = 1000;
    grpc_channel_args ca = { 5, args };
    for (int i = 0; i < op->cfg.channels; i++) {
        op->channels[i] = grpc_channel_create(op->cfg.target, cr, &ca);
        if (!op->channels[i]) {
            grpc_channel_credentials_release(cr);
            return fnw_error_set(err, "operation '%s': cannot create a gRPC channel to '%s'", KSERVE_OP,
                                 op->cfg.target);
        }
        op->n_channels = i + 1;
    }
    grpc_channel_credentials_release(cr);
    return 0;
}

void fnw_kserve_channels_stop(kserve_op *op)
{
    for (int i = 0; i < op->n_channels; i++)
        grpc_channel_destroy(op->channels[i]);
    op->n_channels = 0;
    if (op->grpc_started)
        grpc_shutdown();
    op->grpc_started = 0;
}

grpc_channel *fnw_kserve_channels_next(kserve_op *op)
{
    return op->channels[op->next_channel++ % (unsigned)op->n_channels];
}
