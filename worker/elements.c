/* worker/elements.c — hand-rolled Elements codec (see elements.h). */
#include "worker/elements.h"

#include <string.h>

#include "codecs/varint.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* Reads one field header and, for length-delimited fields, its payload.
 * Positions in messages are relative to p (the caller adds context). */
static int read_field(const uint8_t *p, size_t n, size_t *pos, uint32_t *field, int *wt, uint64_t *ival,
                      const uint8_t **bytes, size_t *blen, fnw_error *err)
{
    uint64_t key;
    int k = fnw_varint_read(p + *pos, n - *pos, &key);
    if (k <= 0)
        return fnw_error_set(err, "bad field key at byte %zu", *pos);
    *pos += (size_t)k;
    *field = (uint32_t)(key >> 3);
    *wt = (int)(key & 7);
    switch (*wt) {
    case WT_VARINT:
        k = fnw_varint_read(p + *pos, n - *pos, ival);
        if (k <= 0)
            return fnw_error_set(err, "bad varint at byte %zu", *pos);
        *pos += (size_t)k;
        return 0;
    case WT_I64:
        if (n - *pos < 8)
            return fnw_error_set(err, "truncated fixed64 at byte %zu", *pos);
        *pos += 8;
        return 0;
    case WT_I32:
        if (n - *pos < 4)
            return fnw_error_set(err, "truncated fixed32 at byte %zu", *pos);
        *pos += 4;
        return 0;
    case WT_LEN: {
        uint64_t len;
        k = fnw_varint_read(p + *pos, n - *pos, &len);
        if (k <= 0)
            return fnw_error_set(err, "bad length at byte %zu", *pos);
        *pos += (size_t)k;
        if (len > n - *pos)
            return fnw_error_set(err, "field %u claims %llu bytes, %zu remain", *field,
                                 (unsigned long long)len, n - *pos);
        *bytes = p + *pos;
        *blen = (size_t)len;
        *pos += (size_t)len;
        return 0;
    }
    default:
        return fnw_error_set(err, "unsupported wire type %d at byte %zu", *wt, *pos);
    }
}

static int parse_data(const uint8_t *p, size_t n, fnw_elem_data *d, fnw_error *err)
{
    d->instruction_id = "";
    d->instruction_len = 0;
    d->transform_id = "";
    d->transform_len = 0;
    d->data = NULL;
    d->data_len = 0;
    d->is_last = 0;
    size_t pos = 0;
    while (pos < n) {
        uint32_t field;
        int wt;
        uint64_t iv = 0;
        const uint8_t *b = NULL;
        size_t bl = 0;
        if (read_field(p, n, &pos, &field, &wt, &iv, &b, &bl, err) < 0)
            return -1;
        if (field == 1 && wt == WT_LEN) {
            d->instruction_id = (const char *)b;
            d->instruction_len = bl;
        } else if (field == 2 && wt == WT_LEN) {
            d->transform_id = (const char *)b;
            d->transform_len = bl;
        } else if (field == 3 && wt == WT_LEN) {
            d->data = b;
            d->data_len = bl;
        } else if (field == 4 && wt == WT_VARINT) {
            d->is_last = iv != 0;
        }
    }
    return 0;
}

static int parse_timers(const uint8_t *p, size_t n, fnw_elem_timers *t, fnw_error *err)
{
    memset(t, 0, sizeof *t);
    t->instruction_id = "";
    t->transform_id = "";
    t->family_id = "";
    size_t pos = 0;
    while (pos < n) {
        uint32_t field;
        int wt;
        uint64_t iv = 0;
        const uint8_t *b = NULL;
        size_t bl = 0;
        if (read_field(p, n, &pos, &field, &wt, &iv, &b, &bl, err) < 0)
            return -1;
        if (field == 1 && wt == WT_LEN) {
            t->instruction_id = (const char *)b;
            t->instruction_len = bl;
        } else if (field == 2 && wt == WT_LEN) {
            t->transform_id = (const char *)b;
            t->transform_len = bl;
        } else if (field == 3 && wt == WT_LEN) {
            t->family_id = (const char *)b;
            t->family_len = bl;
        } else if (field == 4 && wt == WT_LEN) {
            t->timers = b;
            t->timers_len = bl;
        } else if (field == 5 && wt == WT_VARINT) {
            t->is_last = iv != 0;
        }
    }
    return 0;
}

int fnw_elements_walk(const uint8_t *p, size_t n, const fnw_elem_visitor *v, void *arg, fnw_error *err)
{
    size_t pos = 0;
    while (pos < n) {
        size_t at = pos;
        uint32_t field;
        int wt;
        uint64_t iv = 0;
        const uint8_t *b = NULL;
        size_t bl = 0;
        if (read_field(p, n, &pos, &field, &wt, &iv, &b, &bl, err) < 0)
            return fnw_error_prefix(err, "Elements");
        if (field == 1 && wt == WT_LEN) {
            fnw_elem_data d;
            if (parse_data(b, bl, &d, err) < 0)
                return fnw_error_prefix(err, "Elements: the Data entry at byte %zu is malformed (%zu bytes)",
                                        at, pos - at);
            d.raw = p + at;
            d.raw_len = pos - at;
            if (v->data(arg, &d) < 0)
                return -1;
        } else if (field == 2 && wt == WT_LEN) {
            fnw_elem_timers t;
            if (parse_timers(b, bl, &t, err) < 0)
                return fnw_error_prefix(err, "Elements: the Timers entry at byte %zu is malformed (%zu bytes)",
                                        at, pos - at);
            t.raw = p + at;
            t.raw_len = pos - at;
            if (v->timers(arg, &t) < 0)
                return -1;
        }
    }
    return 0;
}

typedef struct each_ctx {
    int (*fn)(void *arg, const fnw_elem_data *d);
    void *arg;
    size_t *timers;
} each_ctx;

static int each_data(void *arg, const fnw_elem_data *d)
{
    each_ctx *x = arg;
    return x->fn(x->arg, d);
}

static int each_timers(void *arg, const fnw_elem_timers *t)
{
    (void)t;
    (*((each_ctx *)arg)->timers)++;
    return 0;
}

int fnw_elements_each(const uint8_t *p, size_t n, int (*fn)(void *arg, const fnw_elem_data *d), void *arg,
                      size_t *timers, fnw_error *err)
{
    static const fnw_elem_visitor v = { each_data, each_timers };
    each_ctx x = { fn, arg, timers };
    *timers = 0;
    return fnw_elements_walk(p, n, &v, &x, err);
}

static size_t len_field_size(size_t len)
{
    return 1 + (size_t)fnw_varint_size(len) + len;
}

static size_t data_body_size(size_t il, size_t tl, size_t dl, int is_last)
{
    size_t s = 0;
    if (il)
        s += len_field_size(il);
    if (tl)
        s += len_field_size(tl);
    if (dl)
        s += len_field_size(dl);
    if (is_last)
        s += 2;
    return s;
}

size_t fnw_elements_data_size(size_t il, size_t tl, size_t dl, int is_last)
{
    return len_field_size(data_body_size(il, tl, dl, is_last));
}

static uint8_t *put_len_field(uint8_t *out, uint8_t key, const void *p, size_t n)
{
    *out++ = key;
    out += fnw_varint_write(out, n);
    if (n)
        memcpy(out, p, n);
    return out + n;
}

/* Field 1 header and the two ids of one entry whose body is `body` bytes. */
static uint8_t *put_entry_start(uint8_t *out, const char *iid, size_t il, const char *tid, size_t tl,
                                size_t body)
{
    *out++ = 0x0a;
    out += fnw_varint_write(out, body);
    if (il)
        out = put_len_field(out, 0x0a, iid, il);
    if (tl)
        out = put_len_field(out, 0x12, tid, tl);
    return out;
}

uint8_t *fnw_elements_put_data(uint8_t *out, const char *iid, size_t il, const char *tid, size_t tl,
                               const uint8_t *data, size_t dl, int is_last)
{
    out = put_entry_start(out, iid, il, tid, tl, data_body_size(il, tl, dl, is_last));
    if (dl)
        out = put_len_field(out, 0x1a, data, dl);
    if (is_last) {
        *out++ = 0x20;
        *out++ = 0x01;
    }
    return out;
}

/* The head always carries field 3, even for no data bytes, so its writer
 * need not special-case them: the body is the ids plus the data field. */
static size_t data_head_body_size(size_t il, size_t tl, size_t dl)
{
    return data_body_size(il, tl, 0, 0) + len_field_size(dl);
}

size_t fnw_elements_data_head_size(size_t il, size_t tl, size_t dl)
{
    return len_field_size(data_head_body_size(il, tl, dl)) - dl;
}

uint8_t *fnw_elements_put_data_head(uint8_t *out, const char *iid, size_t il, const char *tid, size_t tl,
                                    size_t dl)
{
    out = put_entry_start(out, iid, il, tid, tl, data_head_body_size(il, tl, dl));
    *out++ = 0x1a;
    out += fnw_varint_write(out, dl);
    return out;
}
