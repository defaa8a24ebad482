/* runtime/call.c — the call API operations use (operation.h): inputs,
 * scratch memory, decoding, emitting and ending an attempt. Emits are staged
 * on the call's entries until the attempt ends (so a failed attempt that is
 * retried leaves nothing behind); the engine takes over at complete/fail. */
#include <stdarg.h>
#include <stdio.h>

#include "codecs/serializer.h"
#include "runtime/call.h"

size_t fnw_call_size(const fnw_call *c)
{
    return c->n;
}

const fnw_record *fnw_call_input(const fnw_call *c, size_t i)
{
    if (i >= c->n)
        return NULL;
    return c->direct ? c->direct_rec : &c->in[i]->rec;
}

int fnw_call_attempt(const fnw_call *c)
{
    return c->attempt;
}

struct ev_loop *fnw_call_loop(const fnw_call *c)
{
    return c->loop;
}

fnw_arena *fnw_call_arena(fnw_call *c)
{
    return &c->arena;
}

void *fnw_call_op_data(fnw_call *c)
{
    return c->op_data;
}

void fnw_call_set_op_data(fnw_call *c, void *p)
{
    c->op_data = p;
}

int fnw_call_decode(fnw_call *c, size_t i, fnw_value *out, fnw_error *err)
{
    const fnw_record *r = fnw_call_input(c, i);
    if (!r)
        return fnw_error_set(err, "input %zu is out of range: the call has %zu input(s)", i, c->n);
    if (!r->data) {
        out->kind = (uint8_t)c->input_type->kind;
        out->is_null = 1;
        out->row_kind = 0;
        out->count = 0;
        return 0;
    }
    size_t used = 0;
    if (fnw_ser_decode(c->input_type, r->data, r->len, &c->arena, out, &used, err) != 0)
        return -1;
    if (used != r->len)
        return fnw_error_set(err, "input %zu has %zu byte(s) after its value", i, (size_t)r->len - used);
    return 0;
}

static int may_emit(const fnw_call *c, size_t i)
{
    return (c->state == FNW_CALL_RUNNING || c->state == FNW_CALL_TIMING_OUT) && i < c->n;
}

int fnw_call_emit(fnw_call *c, size_t i, const uint8_t *data, size_t len)
{
    if (!may_emit(c, i))
        return -1;
    if (c->direct)
        return fnw_engine_call_emit_direct(c, data, len);
    if (fnw_entry_add_output(c->in[i], data, len) != 0) {
        fnw_engine_call_oom(c);
        return -1;
    }
    c->emitted++;
    return 0;
}

int fnw_call_emit_value(fnw_call *c, size_t i, const fnw_value *v, fnw_error *err)
{
    if (!may_emit(c, i))
        return fnw_error_set(err, "the call has ended (or input %zu is out of range)", i);
    if (v->is_null)
        return fnw_call_emit(c, i, NULL, 0);
    fnw_buf_clear(c->scratch);
    if (fnw_ser_encode(c->output_type, v, c->scratch, err) != 0)
        return -1;
    /* An empty encoding must stay a non-null value. */
    static const uint8_t none[1];
    const uint8_t *p = c->scratch->len ? c->scratch->p : none;
    if (fnw_call_emit(c, i, p, c->scratch->len) != 0)
        return fnw_error_set(err, "out of memory storing an output");
    return 0;
}

void fnw_call_complete(fnw_call *c)
{
    fnw_engine_call_complete(c);
}

void fnw_call_fail(fnw_call *c, const char *fmt, ...)
{
    char msg[FNW_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt ? fmt : "(no message)", ap);
    va_end(ap);
    fnw_engine_call_fail(c, msg);
}
