/* codecs/avro_program.c — schema-compiled walker for AVRO values in Flink's
 * encoding (see avro_program.h for the byte layout). Compilation turns
 * libavro's schema tree (with its named links) into an array of nodes
 * indexed by number; the walk is a small recursive interpreter over that
 * array. */
#include "codecs/avro_program.h"

#include <avro.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/bytes.h"

enum av_op {
    AV_NULL,
    AV_BOOL,
    AV_INT,
    AV_LONG,
    AV_FLOAT,
    AV_DOUBLE,
    AV_BYTES,
    AV_STRING,
    AV_FIXED,
    AV_ENUM,
    AV_RECORD,
    AV_ARRAY,
    AV_MAP,
    AV_UNION,
};

static const char *const av_op_name[] = {
    "null",   "boolean", "int",  "long",   "float", "double", "bytes",
    "string", "fixed",   "enum", "record", "array", "map",    "union",
};

typedef struct av_node {
    uint8_t op;
    uint8_t state; /* compile time: min-size computation 0 todo, 1 busy, 2 done */
    uint32_t a;    /* FIXED size, ENUM symbols, ARRAY/MAP item node, RECORD/UNION first edge */
    uint32_t b;    /* RECORD fields / UNION branches */
    uint32_t min;  /* fewest bytes a datum of this node takes */
} av_node;

struct fnw_avro_program {
    av_node *nodes;
    uint32_t nnodes, capnodes;
    uint32_t *edges;
    uint32_t nedges, capedges;
};

/* ---- compilation ---------------------------------------------------------- */

typedef struct av_named {
    avro_schema_t schema;
    uint32_t node;
} av_named;

typedef struct av_compiler {
    fnw_avro_program *prog;
    av_named *named;
    uint32_t nnamed, capnamed;
    fnw_error *err;
} av_compiler;

#define AV_COMPILE_MAX_DEPTH 256

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int new_node(av_compiler *c, uint8_t op, uint32_t *idx)
{
    fnw_avro_program *prog = c->prog;
    if (grow((void **)&prog->nodes, &prog->capnodes, prog->nnodes + 1, sizeof *prog->nodes) < 0)
        return fnw_error_set(c->err, "out of memory compiling the Avro schema");
    *idx = prog->nnodes++;
    memset(&prog->nodes[*idx], 0, sizeof prog->nodes[*idx]);
    prog->nodes[*idx].op = op;
    return 0;
}

static int new_edges(av_compiler *c, uint32_t n, uint32_t *first)
{
    fnw_avro_program *prog = c->prog;
    if (n > UINT32_MAX - prog->nedges ||
        grow((void **)&prog->edges, &prog->capedges, prog->nedges + n, sizeof *prog->edges) < 0)
        return fnw_error_set(c->err, "out of memory compiling the Avro schema");
    *first = prog->nedges;
    prog->nedges += n;
    return 0;
}

static int remember_named(av_compiler *c, avro_schema_t s, uint32_t node)
{
    if (grow((void **)&c->named, &c->capnamed, c->nnamed + 1, sizeof *c->named) < 0)
        return fnw_error_set(c->err, "out of memory compiling the Avro schema");
    c->named[c->nnamed].schema = s;
    c->named[c->nnamed].node = node;
    c->nnamed++;
    return 0;
}

static int find_named(const av_compiler *c, avro_schema_t s, uint32_t *node)
{
    for (uint32_t i = 0; i < c->nnamed; i++)
        if (c->named[i].schema == s) {
            *node = c->named[i].node;
            return 1;
        }
    return 0;
}

static int compile(av_compiler *c, avro_schema_t s, int depth, uint32_t *out);

static int compile_children(av_compiler *c, uint32_t node, avro_schema_t s, size_t n, int is_record, int depth)
{
    if (n > UINT32_MAX / 2)
        return fnw_error_set(c->err, "Avro schema: too many fields or branches");
    uint32_t first = 0;
    if (new_edges(c, (uint32_t)n, &first) < 0)
        return -1;
    c->prog->nodes[node].a = first;
    c->prog->nodes[node].b = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        avro_schema_t child = is_record ? avro_schema_record_field_get_by_index(s, (int)i)
                                        : avro_schema_union_branch(s, (int)i);
        if (!child)
            return fnw_error_set(c->err, "Avro schema: missing %s %zu", is_record ? "field" : "branch", i);
        uint32_t ci;
        if (compile(c, child, depth + 1, &ci) < 0)
            return -1;
        c->prog->edges[first + i] = ci;
    }
    return 0;
}

/* FIXED (its size) and ENUM (its symbol count): a named node with a number. */
static int compile_sized(av_compiler *c, avro_schema_t s, uint32_t *out)
{
    int is_fixed = avro_typeof(s) == AVRO_FIXED;
    int64_t a = is_fixed ? avro_schema_fixed_size(s) : avro_schema_enum_number_of_symbols(s);
    uint32_t n;
    if (is_fixed && (a < 0 || a > INT32_MAX))
        return fnw_error_set(c->err, "Avro schema: fixed size %lld out of range", (long long)a);
    if (new_node(c, is_fixed ? AV_FIXED : AV_ENUM, &n) < 0 || remember_named(c, s, n) < 0)
        return -1;
    c->prog->nodes[n].a = a > 0 ? (uint32_t)a : 0;
    *out = n;
    return 0;
}

/* ARRAY and MAP: a node naming its item (or value) type's node. */
static int compile_items(av_compiler *c, avro_schema_t s, int depth, uint32_t *out)
{
    int is_array = avro_typeof(s) == AVRO_ARRAY;
    uint32_t n;
    if (new_node(c, is_array ? AV_ARRAY : AV_MAP, &n) < 0)
        return -1;
    *out = n;
    avro_schema_t item = is_array ? avro_schema_array_items(s) : avro_schema_map_values(s);
    if (!item)
        return fnw_error_set(c->err, "Avro schema: %s without item type", is_array ? "array" : "map");
    uint32_t ci;
    if (compile(c, item, depth + 1, &ci) < 0)
        return -1;
    c->prog->nodes[n].a = ci;
    return 0;
}

static int compile(av_compiler *c, avro_schema_t s, int depth, uint32_t *out)
{
    if (depth > AV_COMPILE_MAX_DEPTH)
        return fnw_error_set(c->err, "Avro schema nests deeper than %d levels", AV_COMPILE_MAX_DEPTH);
    if (is_avro_link(s))
        s = avro_schema_link_target(s);
    if (!s)
        return fnw_error_set(c->err, "Avro schema: unresolved named type");
    if (is_avro_named_type(s) && find_named(c, s, out))
        return 0;
    uint32_t n;
    switch (avro_typeof(s)) {
    case AVRO_NULL:
        return new_node(c, AV_NULL, out);
    case AVRO_BOOLEAN:
        return new_node(c, AV_BOOL, out);
    case AVRO_INT32:
        return new_node(c, AV_INT, out);
    case AVRO_INT64:
        return new_node(c, AV_LONG, out);
    case AVRO_FLOAT:
        return new_node(c, AV_FLOAT, out);
    case AVRO_DOUBLE:
        return new_node(c, AV_DOUBLE, out);
    case AVRO_BYTES:
        return new_node(c, AV_BYTES, out);
    case AVRO_STRING:
        return new_node(c, AV_STRING, out);
    case AVRO_FIXED:
    case AVRO_ENUM:
        return compile_sized(c, s, out);
    case AVRO_RECORD:
        if (new_node(c, AV_RECORD, &n) < 0 || remember_named(c, s, n) < 0)
            return -1;
        *out = n;
        return compile_children(c, n, s, avro_schema_record_size(s), 1, depth);
    case AVRO_UNION:
        if (new_node(c, AV_UNION, &n) < 0)
            return -1;
        *out = n;
        return compile_children(c, n, s, avro_schema_union_size(s), 0, depth);
    case AVRO_ARRAY:
    case AVRO_MAP:
        return compile_items(c, s, depth, out);
    default:
        return fnw_error_set(c->err, "Avro schema: unsupported schema type %d", (int)avro_typeof(s));
    }
}

/* Fewest bytes per node. Only records add up children (union branches and
 * array/map items are computed by the caller's loop over all nodes, since a
 * union index and a closing count already cost bytes); a record reached
 * again while its own minimum is being computed can never end. */
static int compute_min(fnw_avro_program *prog, uint32_t idx, fnw_error *err, int depth)
{
    av_node *nd = &prog->nodes[idx];
    if (nd->state == 2)
        return 0;
    if (nd->state == 1 || depth > AV_COMPILE_MAX_DEPTH)
        return fnw_error_set(err, "Avro schema: a record contains itself without a union, array or "
                                  "map in between, so no datum of it can be written");
    nd->state = 1;
    uint32_t min = 0;
    switch (nd->op) {
    case AV_NULL:
        min = 0;
        break;
    case AV_BOOL:
        min = 1;
        break;
    case AV_LONG:
    case AV_DOUBLE:
        min = 8;
        break;
    case AV_FIXED:
        min = nd->a;
        break;
    case AV_ARRAY:
    case AV_MAP:
        min = 1;
        break; /* the closing count 0 */
    case AV_RECORD:
        for (uint32_t i = 0; i < nd->b; i++) {
            uint32_t ci = prog->edges[nd->a + i];
            if (compute_min(prog, ci, err, depth + 1) < 0)
                return -1;
            nd = &prog->nodes[idx];
            uint32_t m = prog->nodes[ci].min;
            min = m > UINT32_MAX - min ? UINT32_MAX : min + m;
        }
        break;
    default:
        min = 4;
        break; /* int, float, enum or union index, bytes or string length */
    }
    nd = &prog->nodes[idx];
    nd->min = min;
    nd->state = 2;
    return 0;
}

fnw_avro_program *fnw_avro_program_new(void *schema, fnw_error *err)
{
    if (!schema) {
        fnw_error_set(err, "Avro schema missing");
        return NULL;
    }
    fnw_avro_program *prog = calloc(1, sizeof *prog);
    if (!prog) {
        fnw_error_set(err, "out of memory compiling the Avro schema");
        return NULL;
    }
    av_compiler c = { .prog = prog, .err = err };
    uint32_t root;
    int rc = compile(&c, (avro_schema_t)schema, 0, &root);
    free(c.named);
    if (rc == 0 && root != 0)
        rc = fnw_error_set(err, "Avro schema: internal error (root node %u)", root);
    if (rc == 0) {
        for (uint32_t i = 0; i < prog->nnodes && rc == 0; i++)
            if (prog->nodes[i].state == 0)
                rc = compute_min(prog, i, err, 0);
    }
    if (rc < 0) {
        fnw_avro_program_free(prog);
        return NULL;
    }
    return prog;
}

void fnw_avro_program_free(fnw_avro_program *prog)
{
    if (!prog)
        return;
    free(prog->nodes);
    free(prog->edges);
    free(prog);
}

uint32_t fnw_avro_program_min_size(const fnw_avro_program *prog)
{
    return prog->nodes[0].min;
}

/* ---- the walk ------------------------------------------------------------- */

typedef struct av_rd {
    const fnw_avro_program *prog;
    const uint8_t *base, *end;
    fnw_error *err;
} av_rd;

__attribute__((format(printf, 4, 5), cold, noinline)) static const uint8_t *av_fail(const av_rd *r,
                                                                                    const uint8_t *at,
                                                                                    uint8_t op,
                                                                                    const char *fmt, ...)
{
    if (!r->err)
        return NULL;
    char msg[FNW_ERROR_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fnw_error_set(r->err, "AVRO %s at offset %td: %s", av_op_name[op], at - r->base, msg);
    return NULL;
}

static inline size_t av_left(const av_rd *r, const uint8_t *p)
{
    return (size_t)(r->end - p);
}

/* n raw bytes. */
static inline const uint8_t *av_take(const uint8_t *p, const av_rd *r, uint8_t op, size_t n)
{
    if (av_left(r, p) < n)
        return av_fail(r, p, op, "needs %zu bytes, %zu left (input truncated)", n, av_left(r, p));
    return p + n;
}

/* A 4-byte big-endian int (an index or a length). */
static inline const uint8_t *av_int32(const uint8_t *p, const av_rd *r, uint8_t op, const char *what,
                                      int32_t *out)
{
    if (av_left(r, p) < 4)
        return av_fail(r, p, op, "needs 4 bytes for the %s, %zu left (input truncated)", what, av_left(r, p));
    *out = (int32_t)fnw_load_be32(p);
    return p + 4;
}

/* A bytes or string body: 4-byte length, then the bytes. */
static const uint8_t *av_sized(const uint8_t *p, const av_rd *r, uint8_t op, const char *what)
{
    const uint8_t *at = p;
    int32_t len = 0;
    if (!(p = av_int32(p, r, op, what, &len)))
        return NULL;
    if (len < 0)
        return av_fail(r, at, op, "negative %s %" PRId32, what, len);
    if ((size_t)len > av_left(r, p))
        return av_fail(r, at, op, "%s %" PRId32 " exceeds the %zu bytes left", what, len, av_left(r, p));
    return p + len;
}

/* An array or map item count: unsigned base-128, low group first, at most
 * 10 bytes, and it must fit in a Java long. */
static const uint8_t *av_count(const uint8_t *p, const av_rd *r, uint8_t op, uint64_t *out)
{
    const uint8_t *at = p;
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (p == r->end)
            return av_fail(r, at, op, "input ends inside an item count");
        uint8_t b = *p++;
        if (i == 9 && b > 1)
            return av_fail(r, at, op, "item count does not fit in 64 bits");
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (v > (uint64_t)INT64_MAX)
                return av_fail(r, at, op, "item count %" PRIu64 " does not fit in a Java long", v);
            *out = v;
            return p;
        }
    }
    return av_fail(r, at, op, "item count longer than 10 bytes"); /* unreachable: a tenth byte ends it */
}

static const uint8_t *av_walk(uint32_t idx, const uint8_t *p, const av_rd *r, int depth);

/* The items of one block (count already read and bounded). */
static const uint8_t *av_items(const av_node *nd, uint64_t count, const uint8_t *p, const av_rd *r, int depth)
{
    int is_map = nd->op == AV_MAP;
    for (uint64_t i = 0; i < count && p; i++) {
        if (is_map && !(p = av_sized(p, r, AV_MAP, "map key length")))
            return NULL;
        p = av_walk(nd->a, p, r, depth + 1);
    }
    return p;
}

/* Blocks until the closing count 0. Every item costs at least per_item
 * bytes, so a count is checked against the bytes left before any item is
 * walked; zero-width items are only counted (capped per block). */
static const uint8_t *av_blocks(const av_node *nd, const uint8_t *p, const av_rd *r, int depth)
{
    const av_node *item = &r->prog->nodes[nd->a];
    uint64_t per_item = (uint64_t)item->min + (nd->op == AV_MAP ? 4 : 0);
    for (;;) {
        const uint8_t *at = p;
        uint64_t count = 0;
        if (!(p = av_count(p, r, nd->op, &count)))
            return NULL;
        if (count == 0)
            return p;
        if (per_item == 0) {
            if (count > FNW_AVRO_MAX_EMPTY_ITEMS)
                return av_fail(r, at, nd->op, "%" PRIu64 " zero-width items in one block (limit %u)", count,
                               FNW_AVRO_MAX_EMPTY_ITEMS);
            continue;
        }
        if (count > av_left(r, p) / per_item)
            return av_fail(r, at, nd->op, "item count %" PRIu64 " exceeds what the %zu bytes left can hold",
                           count, av_left(r, p));
        if (!(p = av_items(nd, count, p, r, depth)))
            return NULL;
    }
}

/* An enum symbol or a union branch: a 4-byte index below n. */
static const uint8_t *av_index(const uint8_t *p, const av_rd *r, uint8_t op, uint32_t n, int32_t *out)
{
    const uint8_t *at = p;
    const char *what = op == AV_ENUM ? "symbol index" : "branch index";
    if (!(p = av_int32(p, r, op, what, out)))
        return NULL;
    if (*out < 0 || (uint32_t)*out >= n)
        return av_fail(r, at, op, "%s %" PRId32 " not in [0, %u)", what, *out, n);
    return p;
}

static const uint8_t *av_walk(uint32_t idx, const uint8_t *p, const av_rd *r, int depth)
{
    const av_node *nd = &r->prog->nodes[idx];
    if (depth > FNW_AVRO_MAX_DEPTH)
        return av_fail(r, p, nd->op, "datum nests deeper than %d levels", FNW_AVRO_MAX_DEPTH);
    int32_t v = 0;
    switch (nd->op) {
    case AV_NULL:
        return p;
    case AV_BOOL:
        return av_take(p, r, nd->op, 1);
    case AV_INT:
    case AV_FLOAT:
        return av_take(p, r, nd->op, 4);
    case AV_LONG:
    case AV_DOUBLE:
        return av_take(p, r, nd->op, 8);
    case AV_FIXED:
        return av_take(p, r, nd->op, nd->a);
    case AV_BYTES:
    case AV_STRING:
        return av_sized(p, r, nd->op, "length");
    case AV_ENUM:
        return av_index(p, r, nd->op, nd->a, &v);
    case AV_UNION:
        if (!(p = av_index(p, r, nd->op, nd->b, &v)))
            return NULL;
        return av_walk(r->prog->edges[nd->a + (uint32_t)v], p, r, depth + 1);
    case AV_RECORD:
        for (uint32_t i = 0; i < nd->b && p; i++)
            p = av_walk(r->prog->edges[nd->a + i], p, r, depth + 1);
        return p;
    case AV_ARRAY:
    case AV_MAP:
        return av_blocks(nd, p, r, depth);
    default:
        return av_fail(r, p, AV_NULL, "corrupt program");
    }
}

const uint8_t *fnw_avro_program_walk(const fnw_avro_program *prog, const uint8_t *p, const uint8_t *end,
                                     const uint8_t *base, fnw_error *err)
{
    av_rd r = { .prog = prog, .base = base, .end = end, .err = err };
    return av_walk(0, p, &r, 0);
}

int fnw_avro_program_skip(const fnw_avro_program *prog, const uint8_t *p, size_t n, size_t *used,
                          fnw_error *err)
{
    const uint8_t *q = fnw_avro_program_walk(prog, p, p + n, p, err);
    if (!q)
        return -1;
    *used = (size_t)(q - p);
    return 0;
}
