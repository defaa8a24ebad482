/* codecs/row.c — the runner rows around every DataStream element (see
 * row.h): splitting the input Row(LONG ts, LONG wm, data) without decoding
 * data, and writing the output Row(LONG ts, data) around encoded data.
 * Both run once per record, so they are straight-line code. */
#include "codecs/row.h"

#include "codecs/bytes.h"
#include "codecs/ser.h"

/* One mask byte: 2 row-kind bits, then one bit per field (1 = null). */
#define IN_TS_NULL 0x20
#define IN_WM_NULL 0x10
#define IN_DATA_NULL 0x08
#define OUT_DATA_NULL 0x10

int fnw_row_split_input_full(const fnw_skip_program *data_skip, const uint8_t *p, size_t n,
                             fnw_input_row *out, fnw_error *err)
{
    if (n < 1)
        return fnw_error_set(err, "input row: empty record (expected a mask byte)");
    uint8_t mask = p[0];
    size_t off = 1;
    if (mask & IN_TS_NULL) {
        out->timestamp = INT64_MIN;
    } else {
        if (n - off < 8)
            return fnw_error_set(err, "input row: record of %zu bytes ends inside the timestamp", n);
        out->timestamp = (int64_t)fnw_load_be64(p + off);
        off += 8;
    }
    if (mask & IN_WM_NULL) {
        out->watermark = INT64_MIN;
    } else {
        if (n - off < 8)
            return fnw_error_set(err, "input row: record of %zu bytes ends inside the watermark", n);
        out->watermark = (int64_t)fnw_load_be64(p + off);
        off += 8;
    }
    if (mask & IN_DATA_NULL) {
        out->data = NULL;
        out->len = 0;
    } else {
        size_t used;
        if (fnw_skip_program_run(data_skip, p + off, n - off, &used, err) < 0)
            return fnw_error_prefix(err, "input row data (record byte %zu on)", off);
        out->data = p + off;
        out->len = used;
        off += used;
    }
    if (off != n)
        return fnw_error_set(err,
                             "input row: %zu bytes left over after the data field "
                             "(record of %zu bytes; is the data type right?)",
                             n - off, n);
    return 0;
}

_Static_assert((IN_TS_NULL | IN_WM_NULL | IN_DATA_NULL) == 0x38, "fnw_row_split_input (row.h) tests 0x38");
_Static_assert(OUT_DATA_NULL == 0x10, "fnw_row_write_output (row.h) writes 0x10 for a null data field");

int fnw_row_put_output(fnw_buf *out, int64_t timestamp, const uint8_t *data, size_t len)
{
    size_t total = fnw_row_output_size(len, data == NULL);
    if (fnw_buf_reserve(out, total) < 0)
        return -1;
    fnw_row_write_output(out->p + out->len, timestamp, data, len);
    out->len += total;
    return 0;
}

static int is_long(const fnw_type *t)
{
    return t && t->kind == FNW_LONG;
}

int fnw_row_unwrap_input_type(const fnw_type *raw, const fnw_type **data_type, fnw_error *err)
{
    if (!raw || raw->kind != FNW_ROW || raw->nchildren != 3 || !is_long(raw->children[0]) ||
        !is_long(raw->children[1]) || !raw->children[2]) {
        char buf[256];
        fnw_type_format(raw, buf, sizeof buf);
        return fnw_error_set(err, "input coder type %s is not the runner input row ROW<LONG, LONG, T>", buf);
    }
    *data_type = raw->children[2];
    return 0;
}

int fnw_row_unwrap_output_type(const fnw_type *raw, const fnw_type **data_type, fnw_error *err)
{
    if (!raw || raw->kind != FNW_ROW || raw->nchildren != 2 || !is_long(raw->children[0]) ||
        !raw->children[1]) {
        char buf[256];
        fnw_type_format(raw, buf, sizeof buf);
        return fnw_error_set(err, "output coder type %s is not the runner output row ROW<LONG, T>", buf);
    }
    *data_type = raw->children[1];
    return 0;
}
