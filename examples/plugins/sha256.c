/* examples/plugins/sha256.c — a blocking fnworker plugin: the `sha256_hex`
 * operation writes the SHA-256 of a field of each input row (option
 * `field`, default "text", a STRING or BYTES field) as lowercase hex into a
 * STRING field of the same row (option `output`, default "digest"); a null
 * field gives a null digest. Option `rounds` (default 1) hashes the digest
 * again that many times in all, to make the work as CPU-heavy as wanted.
 *
 * It shows the blocking pattern: the operation sets invoke_blocking, which
 * fnworker runs on its pool threads; it reads and writes the call only
 * through fnw_blocking_*() and shares nothing between calls, so it needs
 * no lock. libcrypto's one-shot EVP_Digest is safe on any thread.
 *
 *   cc -shared -fPIC -I<fnworker>/include -o sha256.so sha256.c -lcrypto
 */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "fnworker.h"

typedef struct sha_state {
    int64_t field, output, rounds;
} sha_state;

static int field_index(const fnw_op_env *env, const char *opt, const char *def, int64_t *idx, fnw_error *err)
{
    const char *name = fnw_options_get(env->options, opt);
    if (!name)
        name = def;
    *idx = fnw_type_find_field(env->input_type, name, strlen(name));
    if (*idx < 0)
        return fnw_error_set(err, "sha256_hex: option '%s': the input row has no field '%s'", opt, name);
    return 0;
}

static int sha_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    static const char *const known[] = { "field", "output", "rounds", NULL };
    *state = NULL;
    if (fnw_options_check_known(env->options, known, "sha256_hex", err) != 0)
        return -1;
    if (!env->input_type || fnw_type_kind(env->input_type) != FNW_ROW)
        return fnw_error_set(err, "sha256_hex takes ROW inputs");
    sha_state *st = calloc(1, sizeof *st);
    if (!st)
        return fnw_error_set(err, "sha256_hex: out of memory");
    if (field_index(env, "field", "text", &st->field, err) != 0 ||
        field_index(env, "output", "digest", &st->output, err) != 0 ||
        fnw_options_int(env->options, "rounds", 1, 1, 1000000, &st->rounds, err) != 0) {
        free(st);
        return -1;
    }
    const fnw_type *ft = fnw_type_child(env->input_type, (size_t)st->field);
    fnw_kind in = fnw_type_kind(ft);
    if (in == FNW_PRIMITIVE_ARRAY && fnw_type_kind(fnw_type_child(ft, 0)) != FNW_BYTE)
        in = FNW_KIND_COUNT;    /* an array of something else than bytes */
    fnw_kind out = fnw_type_kind(fnw_type_child(env->input_type, (size_t)st->output));
    if ((in != FNW_STRING && in != FNW_PRIMITIVE_ARRAY) || out != FNW_STRING) {
        fnw_error_set(err, "sha256_hex: field '%s' must be a STRING or BYTES and output '%s' a STRING",
                      fnw_type_field_name(env->input_type, (size_t)st->field),
                      fnw_type_field_name(env->input_type, (size_t)st->output));
        free(st);
        return -1;
    }
    *state = st;
    return 0;
}

static void sha_close(void *state)
{
    free(state);
}

/* hex of SHA-256(data), hashed `rounds` times in all, into out[65]. */
static int digest_hex(const uint8_t *data, size_t n, int64_t rounds, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!EVP_Digest(data, n, md, &len, EVP_sha256(), NULL))
        return -1;
    for (int64_t r = 1; r < rounds; r++)
        if (!EVP_Digest(md, len, md, &len, EVP_sha256(), NULL))
            return -1;
    static const char hex[] = "0123456789abcdef";
    for (unsigned int i = 0; i < len && i < 32; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[64] = '\0';
    return 0;
}

static int sha_invoke_blocking(void *state, fnw_blocking_call *bc)
{
    sha_state *st = state;
    fnw_error err;
    for (size_t i = 0; i < fnw_blocking_size(bc); i++) {
        fnw_value row;
        if (fnw_blocking_decode(bc, i, &row, &err) != 0)
            return fnw_blocking_fail(bc, "sha256_hex: %s", err.msg);
        if (!row.is_null) {
            const fnw_value *f = &row.u.items[st->field];
            char *hex = fnw_arena_alloc(fnw_blocking_arena(bc), 65);
            if (!hex)
                return fnw_blocking_fail(bc, "sha256_hex: out of memory");
            if (f->is_null)
                row.u.items[st->output] = fnw_value_null(FNW_STRING);
            else if (digest_hex(f->u.bytes, f->count, st->rounds, hex) != 0)
                return fnw_blocking_fail(bc, "sha256_hex: libcrypto failed to hash input %zu", i);
            else
                row.u.items[st->output] = fnw_value_bytes(FNW_STRING, hex, 64);
        }
        if (fnw_blocking_emit_value(bc, i, &row, &err) != 0)
            return fnw_blocking_fail(bc, "sha256_hex: %s", err.msg);
    }
    return 0;
}

static const fnw_operation sha256_hex = {
    .name = "sha256_hex",
    .summary = "SHA-256 of a field, as hex, into another field (blocking, libcrypto)",
    .output_rule = FNW_OUTPUT_SAME_AS_INPUT,
    .open = sha_open,
    .close = sha_close,
    .invoke_blocking = sha_invoke_blocking,
};

static int init(fnw_registry *r, fnw_error *err)
{
    return fnw_registry_add(r, &sha256_hex, err);
}

FNW_PLUGIN_DEFINE("sha256", init);
