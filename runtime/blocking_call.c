/* runtime/blocking_call.c — a blocking call (blocking_internal.h): making
 * the copy of an attempt on the loop thread, and the functions a blocking
 * operation uses on its pool thread (fnworker.h, "blocking operations").
 * Those touch only the call's own memory and the immutable types, so any
 * number of threads may run them on different calls at once. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/ser.h"
#include "runtime/blocking_internal.h"

/* ---- loop thread -------------------------------------------------------------- */

static int copy_inputs(fnw_blocking_call *bc, fnw_call *call)
{
    bc->in = fnw_arena_alloc(&bc->arena, (bc->n ? bc->n : 1) * sizeof *bc->in);
    if (!bc->in)
        return -1;
    for (size_t i = 0; i < bc->n; i++) {
        const fnw_record *r = fnw_call_input(call, i);
        static const uint8_t empty[1];
        bc->in[i] = *r;
        if (r->data && r->len == 0)
            bc->in[i].data = empty; /* an empty value stays non-null */
        else if (r->data && !(bc->in[i].data = fnw_arena_memdup(&bc->arena, r->data, r->len)))
            return -1;
    }
    return 0;
}

fnw_blocking_call *fnw_blocking_call_new(const void *owner, fnw_call *call, const fnw_type *input_type,
                                         const fnw_type *output_type, void (*run)(fnw_blocking_job *job))
{
    fnw_blocking_call *bc = calloc(1, sizeof *bc);
    if (!bc)
        return NULL;
    bc->job.run = run;
    bc->job.owner = owner;
    bc->call = call;
    atomic_init(&bc->cancelled, 0);
    bc->input_type = input_type;
    bc->output_type = output_type;
    bc->attempt = fnw_call_attempt(call);
    bc->n = fnw_call_size(call);
    fnw_arena_init(&bc->arena, 4096, 0);
    fnw_buf_init(&bc->out, 0);
    fnw_buf_init(&bc->scratch, 0);
    if (copy_inputs(bc, call) != 0) {
        fnw_blocking_call_free(bc);
        return NULL;
    }
    return bc;
}

void fnw_blocking_call_free(fnw_blocking_call *bc)
{
    if (!bc)
        return;
    fnw_arena_free(&bc->arena);
    fnw_buf_free(&bc->out);
    fnw_buf_free(&bc->scratch);
    free(bc);
}

/* ---- pool thread (fnworker.h) ------------------------------------------------------ */

size_t fnw_blocking_size(const fnw_blocking_call *bc)
{
    return bc->n;
}

const fnw_record *fnw_blocking_input(const fnw_blocking_call *bc, size_t i)
{
    return i < bc->n ? &bc->in[i] : NULL;
}

int fnw_blocking_attempt(const fnw_blocking_call *bc)
{
    return bc->attempt;
}

fnw_arena *fnw_blocking_arena(fnw_blocking_call *bc)
{
    return &bc->arena;
}

int fnw_blocking_decode(fnw_blocking_call *bc, size_t i, fnw_value *out, fnw_error *err)
{
    const fnw_record *r = fnw_blocking_input(bc, i);
    if (!r)
        return fnw_error_set(err, "input %zu is out of range: the call has %zu input(s)", i, bc->n);
    if (!r->data) {
        memset(out, 0, sizeof *out);
        out->kind = (uint8_t)fnw_type_kind(bc->input_type);
        out->is_null = 1;
        return 0;
    }
    size_t used = 0;
    if (fnw_ser_decode(bc->input_type, r->data, r->len, &bc->arena, out, &used, err) != 0)
        return -1;
    if (used != r->len)
        return fnw_error_set(err, "input %zu has %zu byte(s) after its value", i, (size_t)r->len - used);
    return 0;
}

static int put_output(fnw_blocking_call *bc, size_t i, const uint8_t *data, size_t len, int is_null)
{
    if (i >= bc->n || len > UINT32_MAX)
        return -1;
    fnw_blocking_out h = { (uint32_t)i, (uint32_t)len, (uint32_t)is_null };
    if (fnw_buf_reserve(&bc->out, sizeof h + len) != 0)
        return -1;
    fnw_buf_append(&bc->out, &h, sizeof h);
    if (len)
        fnw_buf_append(&bc->out, data, len);
    return 0;
}

int fnw_blocking_emit(fnw_blocking_call *bc, size_t i, const uint8_t *data, size_t len)
{
    return put_output(bc, i, data, data ? len : 0, data == NULL);
}

int fnw_blocking_emit_value(fnw_blocking_call *bc, size_t i, const fnw_value *v, fnw_error *err)
{
    if (i >= bc->n)
        return fnw_error_set(err, "input %zu is out of range: the call has %zu input(s)", i, bc->n);
    if (v->is_null)
        return put_output(bc, i, NULL, 0, 1) == 0 ? 0 : fnw_error_set(err, "out of memory storing an output");
    fnw_buf_clear(&bc->scratch);
    if (fnw_ser_encode(bc->output_type, v, &bc->scratch, err) != 0)
        return -1;
    if (put_output(bc, i, bc->scratch.p, bc->scratch.len, 0) != 0)
        return fnw_error_set(err, "out of memory storing an output");
    return 0;
}

int fnw_blocking_fail(fnw_blocking_call *bc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(bc->msg, sizeof bc->msg, fmt ? fmt : "(no message)", ap);
    va_end(ap);
    bc->failed = 1;
    return -1;
}
