/* runtime/projection.c — a Table operator's functions run as one: argument
 * rows, nested calls, results joined per row in input order (see
 * projection.h). */
#include "runtime/projection.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/buf.h"

/* Per node, per row in flight. */
enum { R_PUSHED = 1, R_SETTLED = 2, R_NULL = 4 };

typedef struct slot {
    int64_t seq;  /* the row's sequence number; -1 when free */
    fnw_buf data; /* the input row, then the results */
    uint32_t in_len;
    uint32_t tbl_off; /* a table function's rows start here (after the nested results) */
    uint32_t pending; /* nodes not settled yet */
} slot;

typedef struct node_ctx {
    fnw_projection *p;
    uint32_t i;
} node_ctx;

struct fnw_projection {
    const fnw_proj_desc *d;
    fnw_engine **engines;
    node_ctx *ctx;
    fnw_engine_sink sink;
    slot *ring;
    /* ring-major arrays: [slot * n_nodes + node] */
    uint32_t *res_off, *res_len, *nres;
    uint8_t *flags;
    int64_t head, next; /* oldest row in flight; next sequence number */
    uint8_t *node_finished;
    uint32_t n_finished;
    int failed, finishing, flushing, flush_again;
    /* frames of this projection on the stack; a free inside a sink
     * callback waits until they have unwound (free_pending) */
    int depth, free_pending;
    fnw_buf args, out;
    int64_t rows_in, rows_out;
    char label[128];
};

/* ---- helpers ----------------------------------------------------------------------- */

static void really_free(fnw_projection *p);

static void enter(fnw_projection *p)
{
    p->depth++;
}

/* Ends a frame; frees p when a sink callback asked to and this was the last. */
static void leave(fnw_projection *p)
{
    if (--p->depth == 0 && p->free_pending)
        really_free(p);
}

static slot *slot_of(fnw_projection *p, int64_t seq)
{
    if (seq < p->head || seq >= p->next)
        return NULL;
    slot *s = &p->ring[(uint64_t)seq % p->d->window];
    return s->seq == seq ? s : NULL;
}

/* Node i gives a table function's rows: the last node (those before it
 * are the calls it makes for its arguments). */
static int table_node(const fnw_projection *p, uint32_t i)
{
    return p->d->table_function && i == p->d->n_nodes - 1;
}

static size_t at(const fnw_projection *p, int64_t seq, uint32_t node)
{
    return (size_t)((uint64_t)seq % p->d->window) * p->d->n_nodes + node;
}

static void proj_fail(fnw_projection *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void proj_fail(fnw_projection *p, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = 1;
    char msg[FNW_ERROR_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (uint32_t i = 0; i < p->d->n_nodes; i++)
        fnw_engine_abort(p->engines[i]);
    if (p->sink.failed)
        p->sink.failed(p->sink.user, msg);
}

/* The row-kind-and-null-mask bytes of a ROW of n fields (2 + n bits). */
static size_t mask_bytes(uint32_t n)
{
    return ((size_t)n + 2 + 7) / 8;
}

static void mask_set_null(uint8_t *mask, uint32_t field)
{
    uint32_t bit = field + 2;
    mask[bit / 8] |= (uint8_t)(0x80u >> (bit % 8));
}

/* ---- arguments ------------------------------------------------------------------------- */

/* The bytes of argument a of node for the row in s: *bp NULL for a null. */
static int arg_bytes(fnw_projection *p, slot *s, const fnw_proj_arg *a, const uint8_t **bp, size_t *len,
                     fnw_error *err)
{
    switch (a->kind) {
    case FNW_PROJ_FIELD:
        return fnw_ser_field_get(a->field, s->data.p, s->in_len, bp, len, err);
    case FNW_PROJ_CONST:
        *bp = a->bytes;
        *len = a->len;
        return 0;
    case FNW_PROJ_CALL: {
        size_t k = at(p, s->seq, a->node);
        if (p->flags[k] & R_NULL) {
            *bp = NULL;
            *len = 0;
        } else {
            *bp = s->data.p + p->res_off[k];
            *len = p->res_len[k];
        }
        return 0;
    }
    }
    return fnw_error_set(err, "unknown argument kind %d", (int)a->kind);
}

/* Builds node i's argument row for s into p->args. */
static int build_args(fnw_projection *p, slot *s, uint32_t i, fnw_error *err)
{
    const fnw_proj_node *nd = &p->d->nodes[i];
    fnw_buf_clear(&p->args);
    size_t mb = mask_bytes(nd->n_args);
    if (fnw_buf_reserve(&p->args, mb) < 0)
        return fnw_error_set(err, "out of memory");
    memset(p->args.p, 0, mb);
    p->args.len = mb;
    for (uint32_t j = 0; j < nd->n_args; j++) {
        const uint8_t *b;
        size_t len;
        if (arg_bytes(p, s, &nd->args[j], &b, &len, err) < 0)
            return fnw_error_prefix(err, "argument %u", j + 1);
        if (!b)
            mask_set_null(p->args.p, j);
        else if (len && fnw_buf_append(&p->args, b, len) < 0)
            return fnw_error_set(err, "out of memory (argument row of %zu bytes)", p->args.len + len);
    }
    return 0;
}

static int deps_settled(fnw_projection *p, int64_t seq, uint32_t i)
{
    const fnw_proj_node *nd = &p->d->nodes[i];
    for (uint32_t j = 0; j < nd->n_args; j++)
        if (nd->args[j].kind == FNW_PROJ_CALL && !(p->flags[at(p, seq, nd->args[j].node)] & R_SETTLED))
            return 0;
    return 1;
}

static void push_node(fnw_projection *p, slot *s, uint32_t i)
{
    fnw_error err;
    size_t k = at(p, s->seq, i);
    p->flags[k] |= R_PUSHED;
    if (table_node(p, i))
        s->tbl_off = (uint32_t)s->data.len; /* its nested calls' results are all kept by now */
    if (build_args(p, s, i, &err) < 0) {
        proj_fail(p, "%s: cannot build the arguments of row %lld: %s", p->d->nodes[i].name, (long long)s->seq,
                  err.msg);
        return;
    }
    fnw_record rec = { s->seq, INT64_MIN, p->args.p, (uint32_t)p->args.len };
    fnw_engine_push(p->engines[i], &rec);
}

/* Pushes every node of s whose arguments are all there and that has not
 * been pushed. */
static void push_ready_nodes(fnw_projection *p, int64_t seq)
{
    for (uint32_t i = 0; i < p->d->n_nodes && !p->failed; i++) {
        slot *s = slot_of(p, seq); /* a sync node may have completed the row meanwhile */
        if (!s)
            return;
        if (!(p->flags[at(p, seq, i)] & R_PUSHED) && deps_settled(p, seq, i))
            push_node(p, s, i);
    }
}

/* ---- output ------------------------------------------------------------------------------ */

static void emit_bytes(fnw_projection *p, const uint8_t *b, size_t len)
{
    fnw_record out = { INT64_MIN, INT64_MIN, b, (uint32_t)len };
    p->rows_out++;
    if (p->sink.emit)
        p->sink.emit(p->sink.emit_user ? p->sink.emit_user : p->sink.user, &out);
}

/* The scalar output row of s: the column nodes' results. */
static int emit_scalar_row(fnw_projection *p, slot *s)
{
    size_t mb = mask_bytes(p->d->n_columns);
    fnw_buf_clear(&p->out);
    if (fnw_buf_reserve(&p->out, mb) < 0)
        return -1;
    memset(p->out.p, 0, mb);
    p->out.len = mb;
    for (uint32_t c = 0; c < p->d->n_columns; c++) {
        for (uint32_t i = 0; i < p->d->n_nodes; i++) {
            if (p->d->nodes[i].column != (int)c)
                continue;
            size_t k = at(p, s->seq, i);
            if (p->flags[k] & R_NULL)
                mask_set_null(p->out.p, c);
            else if (fnw_buf_append(&p->out, s->data.p + p->res_off[k], p->res_len[k]) < 0)
                return -1;
        }
    }
    emit_bytes(p, p->out.p, p->out.len);
    return 0;
}

/* A table function's rows for s (stored as u32 length + bytes each after
 * the input), then the end message. */
static void emit_table_rows(fnw_projection *p, slot *s)
{
    size_t off = s->tbl_off;
    while (off + 4 <= s->data.len && !p->failed) {
        uint32_t len;
        memcpy(&len, s->data.p + off, 4);
        off += 4;
        emit_bytes(p, s->data.p + off, len);
        off += len;
    }
    static const uint8_t end = 0x00;
    if (!p->failed)
        emit_bytes(p, &end, 1);
}

static void check_finished(fnw_projection *p);

/* Sends every complete row at the head, in order. */
static void flush(fnw_projection *p)
{
    if (p->flushing) {
        p->flush_again = 1;
        return;
    }
    p->flushing = 1;
    int freed = 0;
    do {
        p->flush_again = 0;
        while (!p->failed && p->head < p->next) {
            slot *s = &p->ring[(uint64_t)p->head % p->d->window];
            if (s->pending)
                break;
            if (p->d->table_function)
                emit_table_rows(p, s);
            else if (emit_scalar_row(p, s) < 0)
                proj_fail(p, "out of memory building output row %lld", (long long)s->seq);
            s->seq = -1;
            p->head++;
            freed = 1;
        }
    } while (p->flush_again && !p->failed);
    p->flushing = 0;
    if (p->failed)
        return;
    if (freed && fnw_projection_has_space(p)) {
        if (p->sink.ready)
            p->sink.ready(p->sink.user);
    }
    check_finished(p);
}

/* ---- the nodes' engines --------------------------------------------------------------------- */

static void node_emit_in(fnw_projection *p, node_ctx *c, const fnw_record *out);

static void node_emit(void *user, const fnw_record *out)
{
    node_ctx *c = user;
    fnw_projection *p = c->p;
    if (p->failed)
        return;
    enter(p);
    node_emit_in(p, c, out);
    leave(p);
}

static void node_emit_in(fnw_projection *p, node_ctx *c, const fnw_record *out)
{
    slot *s = slot_of(p, out->timestamp);
    const fnw_proj_node *nd = &p->d->nodes[c->i];
    if (!s) {
        proj_fail(p, "%s: an output for row %lld, which is not in flight", nd->name,
                  (long long)out->timestamp);
        return;
    }
    size_t k = at(p, s->seq, c->i);
    if (table_node(p, c->i)) {
        if (!out->data) {
            proj_fail(p, "%s gave a null for row %lld: a table function's results are rows", nd->name,
                      (long long)s->seq);
            return;
        }
        uint32_t len = out->len;
        if (fnw_buf_append(&s->data, &len, 4) < 0 || fnw_buf_append(&s->data, out->data, len) < 0)
            proj_fail(p, "%s: out of memory keeping the results of row %lld", nd->name, (long long)s->seq);
        p->nres[k]++;
        return;
    }
    if (++p->nres[k] > 1) {
        proj_fail(p,
                  "%s gave %u results for row %lld: a scalar function gives exactly one result per row "
                  "(use fnworker.udtf for a function that gives several)",
                  nd->name, p->nres[k], (long long)s->seq);
        return;
    }
    const uint8_t *b = out->data;
    size_t len = out->len;
    if (b && nd->unwrap) {
        /* ROW<result T>: the mask byte, then T unless its null bit (0x20) is set */
        if (len < 1) {
            proj_fail(p, "%s: an empty output for row %lld", nd->name, (long long)s->seq);
            return;
        }
        if (b[0] & 0x20)
            b = NULL;
        else {
            b++;
            len--;
        }
    }
    if (!b) {
        p->flags[k] |= R_NULL;
        return;
    }
    p->res_off[k] = (uint32_t)s->data.len;
    p->res_len[k] = (uint32_t)len;
    if (s->data.len + len > UINT32_MAX || fnw_buf_append(&s->data, b, len) < 0)
        proj_fail(p, "%s: out of memory keeping the result of row %lld", nd->name, (long long)s->seq);
}

static void node_settled(void *user, const fnw_record *in)
{
    node_ctx *c = user;
    fnw_projection *p = c->p;
    if (p->failed)
        return;
    slot *s = slot_of(p, in->timestamp);
    if (!s)
        return;
    size_t k = at(p, s->seq, c->i);
    if (p->flags[k] & R_SETTLED)
        return;
    p->flags[k] |= R_SETTLED;
    if (!table_node(p, c->i) && p->nres[k] == 0)
        p->flags[k] |= R_NULL; /* an empty result: a null */
    s->pending--;
    enter(p);
    push_ready_nodes(p, s->seq);
    flush(p);
    leave(p);
}

static void node_ready(void *user)
{
    node_ctx *c = user;
    fnw_projection *p = c->p;
    if (!p->failed && fnw_projection_has_space(p) && p->sink.ready) {
        enter(p);
        p->sink.ready(p->sink.user);
        leave(p);
    }
}

static void node_failed(void *user, const char *message)
{
    node_ctx *c = user;
    fnw_projection *p = c->p;
    enter(p);
    proj_fail(p, "%s: %s", p->d->nodes[c->i].name, message); /* which function: they share a transform */
    leave(p);
}

static int takes_from(const fnw_proj_node *nd, uint32_t node)
{
    for (uint32_t j = 0; j < nd->n_args; j++)
        if (nd->args[j].kind == FNW_PROJ_CALL && nd->args[j].node == node)
            return 1;
    return 0;
}

static int takes_results(const fnw_proj_node *nd)
{
    for (uint32_t j = 0; j < nd->n_args; j++)
        if (nd->args[j].kind == FNW_PROJ_CALL)
            return 1;
    return 0;
}

/* Every node whose results node i takes has finished (true for a node that
 * takes none): i may be finished. */
static int deps_finished(const fnw_projection *p, uint32_t i)
{
    const fnw_proj_node *nd = &p->d->nodes[i];
    for (uint32_t j = 0; j < nd->n_args; j++)
        if (nd->args[j].kind == FNW_PROJ_CALL && !p->node_finished[nd->args[j].node])
            return 0;
    return 1;
}

static void node_finished(void *user)
{
    node_ctx *c = user;
    fnw_projection *p = c->p;
    if (p->failed || p->node_finished[c->i])
        return;
    enter(p);
    p->node_finished[c->i] = 1;
    p->n_finished++;
    for (uint32_t i = c->i + 1; i < p->d->n_nodes && !p->failed; i++)
        if (takes_from(&p->d->nodes[i], c->i) && deps_finished(p, i))
            fnw_engine_finish(p->engines[i]);
    check_finished(p);
    leave(p);
}

static void check_finished(fnw_projection *p)
{
    if (p->failed || !p->finishing || p->n_finished < p->d->n_nodes || p->head < p->next)
        return;
    p->finishing = 0; /* once */
    if (p->sink.finished)
        p->sink.finished(p->sink.user);
}

/* ---- the interface ------------------------------------------------------------------------------ */

fnw_projection *fnw_projection_new(const fnw_proj_desc *d, fnw_engine *const *engines)
{
    fnw_projection *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    size_t cells = (size_t)d->window * d->n_nodes;
    p->d = d;
    p->engines = calloc(d->n_nodes, sizeof *p->engines);
    p->ctx = calloc(d->n_nodes, sizeof *p->ctx);
    p->ring = calloc(d->window, sizeof *p->ring);
    p->res_off = calloc(cells, sizeof *p->res_off);
    p->res_len = calloc(cells, sizeof *p->res_len);
    p->nres = calloc(cells, sizeof *p->nres);
    p->flags = calloc(cells, 1);
    p->node_finished = calloc(d->n_nodes, 1);
    if (!p->engines || !p->ctx || !p->ring || !p->res_off || !p->res_len || !p->nres || !p->flags ||
        !p->node_finished) {
        fnw_projection_free(p);
        return NULL;
    }
    for (uint32_t i = 0; i < d->n_nodes; i++) {
        p->engines[i] = engines[i];
        p->ctx[i] = (node_ctx){ p, i };
    }
    for (uint32_t w = 0; w < d->window; w++) {
        p->ring[w].seq = -1;
        fnw_buf_init(&p->ring[w].data, 0);
    }
    fnw_buf_init(&p->args, 0);
    fnw_buf_init(&p->out, 0);
    return p;
}

void fnw_projection_free(fnw_projection *p)
{
    if (!p)
        return;
    if (p->depth > 0) { /* inside a sink callback: once the frames unwind */
        p->free_pending = 1;
        p->failed = 1; /* nothing more happens meanwhile */
        return;
    }
    really_free(p);
}

static void really_free(fnw_projection *p)
{
    if (p->ring)
        for (uint32_t w = 0; w < p->d->window; w++)
            fnw_buf_free(&p->ring[w].data);
    fnw_buf_free(&p->args);
    fnw_buf_free(&p->out);
    free(p->engines);
    free(p->ctx);
    free(p->ring);
    free(p->res_off);
    free(p->res_len);
    free(p->nres);
    free(p->flags);
    free(p->node_finished);
    free(p);
}

void fnw_projection_start(fnw_projection *p, const fnw_engine_sink *sink, const char *bundle_label)
{
    p->sink = *sink;
    p->failed = p->finishing = p->flushing = p->flush_again = 0;
    p->head = p->next = 0;
    p->n_finished = 0;
    p->rows_in = p->rows_out = 0;
    memset(p->node_finished, 0, p->d->n_nodes);
    for (uint32_t w = 0; w < p->d->window; w++)
        p->ring[w].seq = -1;
    snprintf(p->label, sizeof p->label, "%s", bundle_label ? bundle_label : "");
    for (uint32_t i = 0; i < p->d->n_nodes; i++) {
        fnw_engine_sink s = { &p->ctx[i], node_emit,    node_ready, node_failed, node_finished,
                              NULL,       node_settled, NULL,       NULL };
        s.log = sink->log;
        s.log_user = sink->log_user ? sink->log_user : sink->user;
        fnw_engine_start(p->engines[i], &s, p->label);
    }
}

int fnw_projection_has_space(const fnw_projection *p)
{
    if (p->next - p->head >= (int64_t)p->d->window)
        return 0;
    for (uint32_t i = 0; i < p->d->n_nodes; i++)
        if (!fnw_engine_has_space(p->engines[i]))
            return 0;
    return 1;
}

static int push_in(fnw_projection *p, const fnw_record *in);

int fnw_projection_push(fnw_projection *p, const fnw_record *in)
{
    if (p->failed)
        return -1;
    enter(p);
    int rc = push_in(p, in);
    leave(p);
    return rc;
}

static int push_in(fnw_projection *p, const fnw_record *in)
{
    if (p->next - p->head >= (int64_t)p->d->window) {
        proj_fail(p, "row %lld pushed while %u rows are in flight (the most)", (long long)p->next,
                  p->d->window);
        return -1;
    }
    int64_t seq = p->next++;
    slot *s = &p->ring[(uint64_t)seq % p->d->window];
    s->seq = seq;
    s->pending = p->d->n_nodes;
    fnw_buf_clear(&s->data);
    size_t base = at(p, seq, 0);
    memset(p->flags + base, 0, p->d->n_nodes);
    memset(p->nres + base, 0, p->d->n_nodes * sizeof *p->nres);
    if (in->data && in->len && fnw_buf_append(&s->data, in->data, in->len) < 0) {
        proj_fail(p, "out of memory keeping input row %lld (%u bytes)", (long long)seq, in->len);
        return -1;
    }
    s->in_len = in->data ? in->len : 0;
    s->tbl_off = s->in_len;
    p->rows_in++;
    push_ready_nodes(p, seq);
    return p->failed ? -1 : 0;
}

void fnw_projection_finish(fnw_projection *p)
{
    if (p->failed)
        return;
    enter(p);
    p->finishing = 1;
    for (uint32_t i = 0; i < p->d->n_nodes && !p->failed; i++)
        if (!takes_results(&p->d->nodes[i])) /* the others: once what they take has finished */
            fnw_engine_finish(p->engines[i]);
    check_finished(p);
    leave(p);
}

void fnw_projection_abort(fnw_projection *p)
{
    p->failed = 1;
    for (uint32_t i = 0; i < p->d->n_nodes; i++)
        fnw_engine_abort(p->engines[i]);
}

int64_t fnw_projection_rows_in(const fnw_projection *p)
{
    return p->rows_in;
}

int64_t fnw_projection_rows_out(const fnw_projection *p)
{
    return p->rows_out;
}
