/* codecs/ser_field.c — one field of a ROW, found inside an encoded value of
 * the row without decoding it (see ser.h, fnw_ser_field). Compiled once per
 * descriptor: a skip program for each field before it (and for the field
 * itself unless it is the last, whose bytes are simply the rest), so that
 * finding the field per record allocates nothing. */
#include "codecs/ser_internal.h"

#include <stdlib.h>

struct fnw_ser_field {
    const fnw_type *row; /* borrowed */
    uint32_t index;
    size_t mask_bytes;
    size_t n_skip;           /* index, or index + 1 unless the field is the row's last */
    fnw_skip_program **skip; /* skip[i]: field i */
};

fnw_ser_field *fnw_ser_field_new(const fnw_type *row, uint32_t index, fnw_error *err)
{
    if (!row || row->kind != FNW_ROW || index >= row->nchildren) {
        fnw_error_set(err, "field %u of a type that is not a ROW of more than %u fields", index, index);
        return NULL;
    }
    fnw_ser_field *f = calloc(1, sizeof *f);
    int last = index + 1 == row->nchildren;
    if (f) {
        f->n_skip = last ? index : index + 1;
        f->skip = calloc(f->n_skip ? f->n_skip : 1, sizeof *f->skip);
    }
    if (!f || !f->skip) {
        free(f);
        fnw_error_set(err, "out of memory");
        return NULL;
    }
    f->row = row;
    f->index = index;
    f->mask_bytes = FNW_SER_MASK_BYTES(row->nchildren);
    for (size_t i = 0; i < f->n_skip; i++) {
        if (!(f->skip[i] = fnw_skip_program_new(row->children[i], err))) {
            fnw_ser_field_free(f);
            return NULL;
        }
    }
    return f;
}

void fnw_ser_field_free(fnw_ser_field *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_skip; i++)
        fnw_skip_program_free(f->skip[i]);
    free(f->skip);
    free(f);
}

const fnw_type *fnw_ser_field_type(const fnw_ser_field *f)
{
    return f->row->children[f->index];
}

int fnw_ser_field_get(const fnw_ser_field *f, const uint8_t *p, size_t n, const uint8_t **fp, size_t *flen,
                      fnw_error *err)
{
    *fp = NULL;
    *flen = 0;
    if (n < f->mask_bytes)
        return fnw_error_set(err, "ROW of %zu bytes is shorter than its %zu-byte null mask", n, f->mask_bytes);
    const uint8_t *mask = p;
    size_t off = f->mask_bytes;
    for (uint32_t i = 0; i < f->index; i++) {
        if (FNW_SER_IS_NULL_BIT(mask, i))
            continue;
        size_t used;
        if (fnw_skip_program_run(f->skip[i], p + off, n - off, &used, err) < 0)
            return fnw_error_prefix(err, "ROW field %u", i);
        off += used;
    }
    if (FNW_SER_IS_NULL_BIT(mask, f->index))
        return 0;
    size_t len = n - off;
    if (f->index < f->n_skip && fnw_skip_program_run(f->skip[f->index], p + off, n - off, &len, err) < 0)
        return fnw_error_prefix(err, "ROW field %u", f->index);
    *fp = p + off;
    *flen = len;
    return 0;
}
