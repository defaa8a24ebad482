/* codecs/pb_nesting.c — a bounded, non-recursive walk over protobuf wire
 * bytes that measures message nesting before protobuf-c unpacks them (see
 * pb_nesting.h for the rules). One pass, each byte read once; the path is
 * kept in a fixed array of FNW_PB_MAX_NESTING frames. */
#include "codecs/pb_nesting.h"

#include <string.h>

#include "codecs/type.h"
#include "org/apache/flink/fn_execution/v1/flink-fn-execution.pb-c.h"

#define TYPE_INFO_DESC org__apache__flink__fn_execution__v1__type_info__descriptor
#define MAX_FIELD_NUMBER 536870911u /* 2^29 - 1 */

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };

/* One message on the path: its descriptor and where its bytes end. */
typedef struct frame {
    const ProtobufCMessageDescriptor *desc;
    const uint8_t *end;
} frame;

typedef struct walk {
    const uint8_t *base; /* offsets in messages count from here */
    const char *outer;   /* the outer message's name, for messages */
    fnw_error *err;
    unsigned depth; /* frames in use */
    unsigned types; /* TypeInfo frames among them */
    frame path[FNW_PB_MAX_NESTING];
} walk;

static int malformed(const walk *w, const uint8_t *at, const char *what)
{
    return fnw_error_set(w->err, "not a valid %s: %s (byte %zu)", w->outer, what, (size_t)(at - w->base));
}

/* The varint at *p, before end; *p moves past it. NULL on success, else
 * what is wrong with it. */
static const char *read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    const uint8_t *q = *p;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (q == end)
            return "a varint runs past the end of its message";
        uint8_t b = *q++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *p = q;
            *v = x;
            return NULL;
        }
    }
    return "a varint is longer than 10 bytes";
}

/* Pushes a message of type desc whose bytes end at end (at: where it starts). */
static int enter(walk *w, const ProtobufCMessageDescriptor *desc, const uint8_t *at, const uint8_t *end)
{
    if (w->depth == FNW_PB_MAX_NESTING)
        return fnw_error_set(w->err, "messages nest deeper than %d levels (byte %zu of the %s)",
                             FNW_PB_MAX_NESTING, (size_t)(at - w->base), w->outer);
    int is_type = desc == &TYPE_INFO_DESC;
    if (is_type && w->types == FNW_TYPE_MAX_DEPTH)
        return fnw_error_set(w->err, "TypeInfo nests deeper than %d levels (byte %zu of the %s)",
                             FNW_TYPE_MAX_DEPTH, (size_t)(at - w->base), w->outer);
    w->types += (unsigned)is_type;
    w->path[w->depth].desc = desc;
    w->path[w->depth].end = end;
    w->depth++;
    return 0;
}

static void leave(walk *w)
{
    w->depth--;
    w->types -= (unsigned)(w->path[w->depth].desc == &TYPE_INFO_DESC);
}

/* A length-delimited field of number num at *p: entered if the message
 * declares it a message field, else stepped over. */
static int length_delimited(walk *w, const frame *f, uint32_t num, const uint8_t **p)
{
    const uint8_t *at = *p;
    uint64_t len;
    const char *why = read_varint(p, f->end, &len);
    if (why)
        return malformed(w, at, why);
    if (len > (uint64_t)(f->end - *p))
        return malformed(w, at, "a length runs past the end of its message");
    const uint8_t *end = *p + len;
    const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(f->desc, num);
    if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE)
        return enter(w, fd->descriptor, *p, end);
    *p = end;
    return 0;
}

/* One field (tag and value) of the message f at *p. */
static int field(walk *w, const frame *f, const uint8_t **p)
{
    const uint8_t *at = *p;
    uint64_t key, skip;
    const char *why = read_varint(p, f->end, &key);
    if (why)
        return malformed(w, at, why);
    uint64_t num = key >> 3;
    if (num == 0 || num > MAX_FIELD_NUMBER)
        return malformed(w, at, "a field number is 0 or above 2^29 - 1");
    switch (key & 7) {
    case WT_VARINT:
        why = read_varint(p, f->end, &skip);
        return why ? malformed(w, *p, why) : 0;
    case WT_LEN:
        return length_delimited(w, f, (uint32_t)num, p);
    case WT_FIXED64:
    case WT_FIXED32:
        skip = (key & 7) == WT_FIXED64 ? 8 : 4;
        if (skip > (uint64_t)(f->end - *p))
            return malformed(w, *p, "a fixed-size field runs past the end of its message");
        *p += skip;
        return 0;
    default:
        return malformed(w, at,
                         (key & 7) == 3 || (key & 7) == 4 ? "groups (wire types 3 and 4) are not supported"
                                                          : "unknown wire type 6 or 7");
    }
}

int fnw_pb_nesting_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                         fnw_error *err)
{
    if (!desc)
        return fnw_error_set(err, "no message type to measure");
    if (len == 0)
        return 0; /* the empty message */
    walk w;
    w.base = data;
    w.outer = desc->short_name;
    w.err = err;
    w.depth = 0;
    w.types = 0;
    if (enter(&w, desc, data, data + len) < 0)
        return -1;
    const uint8_t *p = data;
    while (w.depth) {
        const frame *f = &w.path[w.depth - 1];
        if (p == f->end)
            leave(&w);
        else if (field(&w, f, &p) < 0)
            return -1;
    }
    return 0;
}

int fnw_pb_nesting_step_field(const uint8_t **p, const uint8_t *end, uint32_t *num, int *wt,
                              const uint8_t **body, size_t *body_len)
{
    const uint8_t *q = *p;
    uint64_t tag, n = 0;
    if (read_varint(&q, end, &tag))
        return -1;
    switch (tag & 7) {
    case 0:
        if (read_varint(&q, end, &n))
            return -1;
        n = 0;
        break;
    case 1:
        n = 8;
        break;
    case 2:
        if (read_varint(&q, end, &n))
            return -1;
        break;
    case 5:
        n = 4;
        break;
    default:
        return -1;
    }
    if (n > (uint64_t)(end - q))
        return -1;
    *num = (uint32_t)(tag >> 3);
    *wt = (int)(tag & 7);
    *body = q;
    *body_len = (size_t)n;
    *p = q + n;
    return 0;
}

/* The fields of one message, stepped over without entering any: finds the
 * first length-delimited field num. */
int fnw_pb_nesting_find_top_string(const uint8_t *data, size_t len, uint32_t num, char *out, size_t cap)
{
    const uint8_t *p = data, *end = data + len, *body;
    uint32_t f;
    int wt;
    size_t n;
    while (p < end) {
        if (fnw_pb_nesting_step_field(&p, end, &f, &wt, &body, &n) < 0)
            return 0;
        if (f == num && wt == 2) {
            if (n == 0 || n >= cap || memchr(body, '\0', n))
                return 0;
            memcpy(out, body, n);
            out[n] = '\0';
            return 1;
        }
    }
    return 0;
}
