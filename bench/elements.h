/* bench/elements.h — BeamFnData Elements messages as the benchmark
 * sends and reads them (beam_fn_api.proto: Elements{repeated Data data = 1},
 * Data{instruction_id 1, transform_id 2, data 3, is_last 4}).
 *
 * Sending costs almost nothing per record: a message is a small header
 * (written here) followed by the record bytes as a separate slice, so a
 * pre-encoded 1 MB chunk goes out many times without being copied or
 * touched. Reading walks the wire format and points into the message.
 */
#ifndef BENCH_ELEMENTS_H
#define BENCH_ELEMENTS_H

#include <stddef.h>
#include <stdint.h>

/* Room for any header written by bench_elements_data_header(). */
#define BENCH_ELEM_HEADER_MAX (32 + 2 * 256)

/* Writes the bytes that precede data_len bytes of records in an Elements
 * message holding one Data{instruction_id, transform_id, data} entry.
 * Returns the header length. Ids must be shorter than 256 bytes. */
size_t bench_elements_data_header(uint8_t *out, const char *instruction_id,
                                  const char *transform_id, size_t data_len);

/* Writes one complete Data{instruction_id, transform_id, is_last: true}
 * entry (as an Elements field 1); it may follow a data entry in the same
 * message (Flink sends the last records and is_last together). */
size_t bench_elements_last_entry(uint8_t *out, const char *instruction_id,
                                 const char *transform_id);

typedef struct bench_elem_data {
    const char *instruction_id; size_t instruction_len;
    const char *transform_id; size_t transform_len;
    const uint8_t *data; size_t data_len;
    int is_last;
} bench_elem_data;

/* Calls fn for every Data entry of the Elements message p[0..n); stops and
 * returns fn's value if it is non-zero. Returns -1 on malformed input. */
int bench_elements_each(const uint8_t *p, size_t n,
                        int (*fn)(void *arg, const bench_elem_data *d), void *arg);

#endif
