/* bench/elements.c — Elements header writer and reader (see
 * elements.h). */
#include "bench/elements.h"

#include <string.h>

#include "bench/pbwire.h"

static size_t put_str(uint8_t *p, uint8_t key, const char *s)
{
    size_t n = strlen(s), k = 0;
    p[k++] = key;
    k += bench_pb_put_varint(p + k, n);
    memcpy(p + k, s, n);
    return k + n;
}

static size_t str_field_size(const char *s)
{
    size_t n = strlen(s);
    return 1 + bench_pb_varint_size(n) + n;
}

size_t bench_elements_data_header(uint8_t *out, const char *instruction_id,
                                  const char *transform_id, size_t data_len)
{
    size_t entry = str_field_size(instruction_id) + str_field_size(transform_id) + 1 +
                   bench_pb_varint_size(data_len) + data_len;
    size_t k = 0;
    out[k++] = 0x0A;                                   /* Elements.data */
    k += bench_pb_put_varint(out + k, entry);
    k += put_str(out + k, 0x0A, instruction_id);       /* Data.instruction_id */
    k += put_str(out + k, 0x12, transform_id);         /* Data.transform_id */
    out[k++] = 0x1A;                                   /* Data.data */
    k += bench_pb_put_varint(out + k, data_len);
    return k;
}

size_t bench_elements_last_entry(uint8_t *out, const char *instruction_id,
                                 const char *transform_id)
{
    size_t entry = str_field_size(instruction_id) + str_field_size(transform_id) + 2;
    size_t k = 0;
    out[k++] = 0x0A;
    k += bench_pb_put_varint(out + k, entry);
    k += put_str(out + k, 0x0A, instruction_id);
    k += put_str(out + k, 0x12, transform_id);
    out[k++] = 0x20;                                   /* Data.is_last */
    out[k++] = 0x01;
    return k;
}

static int parse_data(const uint8_t *p, size_t n, bench_elem_data *d)
{
    memset(d, 0, sizeof *d);
    d->instruction_id = d->transform_id = "";
    bench_pb_reader r;
    bench_pb_field f;
    int rc;
    bench_pb_reader_init(&r, p, n);
    while ((rc = bench_pb_next(&r, &f)) > 0) {
        if (f.field == 1 && f.wire == BENCH_WT_LEN) {
            d->instruction_id = (const char *)f.data;
            d->instruction_len = f.len;
        } else if (f.field == 2 && f.wire == BENCH_WT_LEN) {
            d->transform_id = (const char *)f.data;
            d->transform_len = f.len;
        } else if (f.field == 3 && f.wire == BENCH_WT_LEN) {
            d->data = f.data;
            d->data_len = f.len;
        } else if (f.field == 4 && f.wire == BENCH_WT_VARINT) {
            d->is_last = f.v != 0;
        }
    }
    return rc;
}

int bench_elements_each(const uint8_t *p, size_t n,
                        int (*fn)(void *arg, const bench_elem_data *d), void *arg)
{
    bench_pb_reader r;
    bench_pb_field f;
    int rc;
    bench_pb_reader_init(&r, p, n);
    while ((rc = bench_pb_next(&r, &f)) > 0) {
        if (f.field != 1 || f.wire != BENCH_WT_LEN)
            continue;   /* timers (field 2) never appear in these workloads */
        bench_elem_data d;
        if (parse_data(f.data, f.len, &d) < 0)
            return -1;
        int frc = fn(arg, &d);
        if (frc)
            return frc;
    }
    return rc;
}
