/* codecs/pickle_payload.c — recognises the pickle the fnworker Python
 * package writes as a PyFlink function payload and takes the OperationSpec
 * out of it (see pickle_payload.h). A strict grammar over pickle opcodes:
 *
 *   payload  := PROTO(2..5) global args REDUCE memo STOP <end>
 *   global   := GLOBAL "module\nname\n" memo | str str STACK_GLOBAL memo
 *   args     := bytes TUPLE1 memo | MARK bytes TUPLE memo
 *   bytes    := (SHORT_BINBYTES | BINBYTES | BINBYTES8) memo
 *             | global(_codecs.encode) [MARK] text str('latin1') (TUPLE2 | TUPLE) memo REDUCE memo
 *   str      := (SHORT_BINUNICODE | BINUNICODE | UNICODE) memo
 *   memo     := (PUT | BINPUT | LONG_BINPUT | MEMOIZE)*
 *
 * FRAME may stand before any opcode (CPython writes a large bytes object
 * outside its frames); its length is checked and it is otherwise ignored.
 * Nothing is allocated and no length is used before it is checked against
 * the bytes left. */
#include "codecs/pickle_payload.h"

#include <string.h>

#include "codecs/pickle_cursor.h"

enum {
    OP_PROTO = 0x80,
    OP_FRAME = 0x95,
    OP_STOP = '.',
    OP_MARK = '(',
    OP_GLOBAL = 'c',
    OP_STACK_GLOBAL = 0x93,
    OP_REDUCE = 'R',
    OP_TUPLE = 't',
    OP_TUPLE1 = 0x85,
    OP_TUPLE2 = 0x86,
    OP_SHORT_BINUNICODE = 0x8c,
    OP_BINUNICODE = 'X',
    OP_UNICODE = 'V',
    OP_SHORT_BINBYTES = 'C',
    OP_BINBYTES = 'B',
    OP_BINBYTES8 = 0x8e,
    OP_PUT = 'p',
    OP_BINPUT = 'q',
    OP_LONG_BINPUT = 'r',
    OP_MEMOIZE = 0x94,
};

#define SEE_DOCS "(see docs/pyflink.md, \"Also not supported\")"
#define HOW_TO \
    "fnworker runs native operations, not Python code: build the function with the fnworker " \
    "Python package, e.g. `from fnworker import Operation, ordered_wait` and " \
    "`ordered_wait(ds, Operation(\"echo\"), Time.seconds(5), output_type=...)`, so that the payload " \
    "names a native operation " SEE_DOCS

typedef fnw_pickle_cursor cursor;

/* A string operand: its bytes as written (UNICODE's are raw-unicode-escape). */
typedef struct view {
    const uint8_t *p;
    size_t n;
    int op;
} view;

/* A little-endian length of width bytes after the opcode; the bytes it
 * counts must follow. */
static int take_len(cursor *c, int width, uint64_t *len)
{
    if (fnw_pickle_cursor_left(c) < (size_t)width)
        return fnw_pickle_cursor_stop(c, "the pickle ends inside a %d-byte length", width);
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; i--)
        v = v << 8 | c->p[i];
    c->p += width;
    if (v > fnw_pickle_cursor_left(c))
        return fnw_pickle_cursor_stop(c, "a length of %llu bytes, but only %zu bytes are left",
                                      (unsigned long long)v, fnw_pickle_cursor_left(c));
    *len = v;
    return 0;
}

static int skip_frames(cursor *c)
{
    while (c->p < c->end && *c->p == OP_FRAME) {
        c->p++;
        uint64_t len;
        if (take_len(c, 8, &len) < 0)
            return -1;
    }
    return 0;
}

/* The next opcode (after any FRAME), consumed. */
static int take_op(cursor *c, int *op)
{
    if (skip_frames(c) < 0)
        return -1;
    if (c->p == c->end)
        return fnw_pickle_cursor_stop(c, "the pickle ends before its STOP opcode");
    *op = *c->p++;
    return 0;
}

static int expect_op(cursor *c, int want, const char *name)
{
    int op = 0;
    if (take_op(c, &op) < 0)
        return -1;
    if (op != want) {
        c->p--;
        return fnw_pickle_cursor_stop(c, "opcode 0x%02x where %s was expected", op, name);
    }
    return 0;
}

/* Decimal digits up to a newline: PUT's memo index. */
static int skip_put_index(cursor *c)
{
    for (size_t i = 0; i < fnw_pickle_cursor_left(c) && i <= 10; i++) {
        if (c->p[i] == '\n' && i > 0) {
            c->p += i + 1;
            return 0;
        }
        if (c->p[i] < '0' || c->p[i] > '9')
            break;
    }
    return fnw_pickle_cursor_stop(c, "a PUT without a decimal memo index and newline");
}

/* Memo opcodes after a value: they only name it for later GETs. */
static int skip_memo(cursor *c)
{
    for (;;) {
        if (skip_frames(c) < 0)
            return -1;
        if (c->p == c->end)
            return 0;
        size_t need = *c->p == OP_BINPUT ? 2 : *c->p == OP_LONG_BINPUT ? 5 : *c->p == OP_MEMOIZE ? 1 : 0;
        if (*c->p == OP_PUT) {
            c->p++;
            if (skip_put_index(c) < 0)
                return -1;
            continue;
        }
        if (need == 0)
            return 0;
        if (fnw_pickle_cursor_left(c) < need)
            return fnw_pickle_cursor_stop(c, "the pickle ends inside a memo opcode");
        c->p += need;
    }
}

/* The text up to a newline (GLOBAL's and UNICODE's operands). */
static int take_line(cursor *c, view *v)
{
    const uint8_t *nl = memchr(c->p, '\n', fnw_pickle_cursor_left(c));
    if (!nl)
        return fnw_pickle_cursor_stop(c, "a text operand without its newline");
    v->p = c->p;
    v->n = (size_t)(nl - c->p);
    c->p = nl + 1;
    return 0;
}

static int take_str(cursor *c, view *v)
{
    int op = 0;
    uint64_t len;
    if (take_op(c, &op) < 0)
        return -1;
    v->op = op;
    if (op == OP_UNICODE) {
        if (take_line(c, v) < 0)
            return -1;
        return skip_memo(c);
    }
    if (op != OP_SHORT_BINUNICODE && op != OP_BINUNICODE) {
        c->p--;
        return fnw_pickle_cursor_stop(c, "opcode 0x%02x where a string was expected", op);
    }
    if (take_len(c, op == OP_SHORT_BINUNICODE ? 1 : 4, &len) < 0)
        return -1;
    v->p = c->p;
    v->n = (size_t)len;
    c->p += len;
    return skip_memo(c);
}

static int view_is(const view *v, const char *s)
{
    return v->n == strlen(s) && memcmp(v->p, s, v->n) == 0;
}

/* GLOBAL "module\nname\n" or two strings and STACK_GLOBAL. */
static int take_global(cursor *c, view *mod, view *name)
{
    if (skip_frames(c) < 0)
        return -1;
    if (c->p < c->end && *c->p == OP_GLOBAL) {
        c->p++;
        if (take_line(c, mod) < 0 || take_line(c, name) < 0)
            return -1;
        mod->op = name->op = OP_GLOBAL;
        return skip_memo(c);
    }
    if (take_str(c, mod) < 0 || take_str(c, name) < 0)
        return -1;
    if (expect_op(c, OP_STACK_GLOBAL, "STACK_GLOBAL") < 0)
        return -1;
    return skip_memo(c);
}

/* A tuple of n items was pushed after an optional MARK: its closing opcode. */
static int close_tuple(cursor *c, int marked, int n)
{
    if (marked)
        return expect_op(c, OP_TUPLE, "TUPLE") < 0 ? -1 : skip_memo(c);
    int want = n == 1 ? OP_TUPLE1 : OP_TUPLE2;
    return expect_op(c, want, n == 1 ? "TUPLE1" : "TUPLE2") < 0 ? -1 : skip_memo(c);
}

static int take_mark(cursor *c, int *marked)
{
    if (skip_frames(c) < 0)
        return -1;
    *marked = c->p < c->end && *c->p == OP_MARK;
    c->p += *marked;
    return 0;
}

/* Protocol 2's bytes: _codecs.encode(<text>, 'latin1'). */
static int take_codecs_bytes(cursor *c, view *data)
{
    view mod, name, enc;
    const uint8_t *at = c->p;
    int marked;
    if (take_global(c, &mod, &name) < 0)
        return -1;
    if (!view_is(&mod, "_codecs") || !view_is(&name, "encode")) {
        c->p = at;
        return fnw_pickle_cursor_stop(
            c, "a call of something other than _codecs.encode where the OperationSpec bytes were expected");
    }
    if (take_mark(c, &marked) < 0 || take_str(c, data) < 0)
        return -1;
    if (data->op == OP_UNICODE)
        return fnw_pickle_cursor_stop(c, "the OperationSpec text is a protocol-0 UNICODE string");
    if (take_str(c, &enc) < 0)
        return -1;
    if (!view_is(&enc, "latin1"))
        return fnw_pickle_cursor_stop(c, "_codecs.encode with an encoding other than 'latin1'");
    if (close_tuple(c, marked, 2) < 0)
        return -1;
    return expect_op(c, OP_REDUCE, "REDUCE") < 0 ? -1 : skip_memo(c);
}

/* The call's one argument: the OperationSpec bytes. */
static int take_spec_bytes(cursor *c, view *data)
{
    int op = 0;
    uint64_t len;
    if (skip_frames(c) < 0)
        return -1;
    if (c->p < c->end && (*c->p == OP_GLOBAL || *c->p == OP_SHORT_BINUNICODE || *c->p == OP_BINUNICODE))
        return take_codecs_bytes(c, data);
    if (take_op(c, &op) < 0)
        return -1;
    int width = op == OP_SHORT_BINBYTES ? 1 : op == OP_BINBYTES ? 4 : op == OP_BINBYTES8 ? 8 : 0;
    if (width == 0) {
        c->p--;
        return fnw_pickle_cursor_stop(c, "opcode 0x%02x where the OperationSpec bytes were expected", op);
    }
    if (take_len(c, width, &len) < 0)
        return -1;
    data->p = c->p;
    data->n = (size_t)len;
    data->op = op;
    c->p += len;
    return skip_memo(c);
}

/* args REDUCE memo STOP <end>, after the function reference. */
static int take_call(cursor *c, view *data)
{
    int marked;
    if (take_mark(c, &marked) < 0 || take_spec_bytes(c, data) < 0 || close_tuple(c, marked, 1) < 0)
        return -1;
    if (expect_op(c, OP_REDUCE, "REDUCE") < 0 || skip_memo(c) < 0 || expect_op(c, OP_STOP, "STOP") < 0)
        return -1;
    if (c->p != c->end)
        return fnw_pickle_cursor_stop(c, "%zu bytes after the STOP opcode", fnw_pickle_cursor_left(c));
    return 0;
}

/* The text of protocol 2's bytes: UTF-8 of code points below 256. */
static int latin1_from_utf8(cursor *c, const view *v, uint8_t *out, size_t *out_len)
{
    size_t k = 0;
    for (size_t i = 0; i < v->n; i++) {
        uint8_t b = v->p[i];
        if (b < 0x80) {
            out[k++] = b;
        } else if ((b == 0xc2 || b == 0xc3) && i + 1 < v->n && (v->p[i + 1] & 0xc0) == 0x80) {
            out[k++] = (uint8_t)((b & 0x03) << 6 | (v->p[i + 1] & 0x3f));
            i++;
        } else {
            c->p = v->p + i;
            return fnw_pickle_cursor_stop(c, "the OperationSpec text is not Latin-1 written as UTF-8");
        }
    }
    *out_len = k;
    return 0;
}

/* module.name for a message: printable ASCII only, shortened. */
static void put_name(char *buf, size_t size, const view *mod, const view *name)
{
    size_t k = 0;
    const view *parts[2] = { mod, name };
    for (int j = 0; j < 2; j++) {
        if (j == 1 && k + 1 < size)
            buf[k++] = '.';
        for (size_t i = 0; i < parts[j]->n && i < 80 && k + 1 < size; i++) {
            uint8_t ch = parts[j]->p[i];
            buf[k++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
        }
    }
    buf[k] = 0;
}

int fnw_pickle_payload_read(const uint8_t *p, size_t n, uint8_t *out, size_t *out_len, fnw_error *err)
{
    cursor c = { .start = p, .p = p, .end = p + n };
    if (n < 2 || p[0] != OP_PROTO)
        return fnw_error_set(err, "the function payload is not a Python pickle of protocol 2 or later");
    int proto = p[1];
    if (proto < 2 || proto > 5)
        return fnw_error_set(err,
                             "the function payload is a Python pickle of protocol %d, which no "
                             "fnworker package writes; %s",
                             proto, HOW_TO);
    c.p += 2;
    view mod, name, data;
    if (take_global(&c, &mod, &name) < 0)
        return fnw_error_set(err,
                             "the function payload is a Python pickle (protocol %d) that does not start "
                             "with a function reference (%s); %s",
                             proto, c.why, HOW_TO);
    if (!view_is(&mod, FNW_PICKLE_PAYLOAD_MODULE) || !view_is(&name, FNW_PICKLE_PAYLOAD_FUNCTION)) {
        char found[180];
        put_name(found, sizeof found, &mod, &name);
        return fnw_error_set(err,
                             "the function payload is a Python pickle (protocol %d) of %s, a Python "
                             "function or object; %s",
                             proto, found, HOW_TO);
    }
    if (take_call(&c, &data) < 0)
        return fnw_error_set(err,
                             "the function payload is a Python pickle of " FNW_PICKLE_PAYLOAD_MODULE
                             "." FNW_PICKLE_PAYLOAD_FUNCTION " that is not in the form the fnworker package "
                             "writes (%s); rebuild the job with the fnworker package " SEE_DOCS,
                             c.why);
    if (data.op == OP_SHORT_BINUNICODE || data.op == OP_BINUNICODE) {
        if (latin1_from_utf8(&c, &data, out, out_len) < 0)
            return fnw_error_set(err, "the function payload's OperationSpec is unreadable (%s)", c.why);
    } else {
        memcpy(out, data.p, data.n);
        *out_len = data.n;
    }
    return 0;
}
