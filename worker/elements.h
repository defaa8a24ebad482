/* worker/elements.h — BeamFnData Elements messages read and written by hand.
 *
 * The data plane carries most of the bytes, so it skips protobuf-c: reading
 * walks the wire format and hands out pointers into the received buffer (no
 * allocation, no copy); writing computes the exact size and fills one
 * buffer. Only Elements.Data (field 1) matters to us; Elements.Timers
 * (field 2) are reported so the caller can reject them. Field numbers are
 * those of beam_fn_api.proto: Data{instruction_id 1, transform_id 2, data 3,
 * is_last 4}.
 */
#ifndef FNW_ELEMENTS_H
#define FNW_ELEMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"

typedef struct fnw_elem_data {
    const char *instruction_id;
    size_t instruction_len;
    const char *transform_id;
    size_t transform_len;
    const uint8_t *data;
    size_t data_len;
    int is_last;
} fnw_elem_data;

/* Calls fn for each Data entry of the Elements message in p[0..n). *timers
 * counts Timers entries. Returns -1 on malformed input (err says where). */
int fnw_elements_each(const uint8_t *p, size_t n, int (*fn)(void *arg, const fnw_elem_data *d), void *arg,
                      size_t *timers, fnw_error *err);

/* Size of one Elements.Data entry (including its field-1 header) and the
 * writer for it; out must have fnw_elements_data_size() bytes. */
size_t fnw_elements_data_size(size_t instruction_len, size_t transform_len, size_t data_len, int is_last);
uint8_t *fnw_elements_put_data(uint8_t *out, const char *instruction_id, size_t instruction_len,
                               const char *transform_id, size_t transform_len, const uint8_t *data,
                               size_t data_len, int is_last);

/* The same entry written without its data bytes, so the data can follow in
 * a slice of its own (no copy): head size, then the head writer. The head
 * always has the data field, also for data_len 0 (an empty bytes field). */
size_t fnw_elements_data_head_size(size_t instruction_len, size_t transform_len, size_t data_len);
uint8_t *fnw_elements_put_data_head(uint8_t *out, const char *instruction_id, size_t instruction_len,
                                    const char *transform_id, size_t transform_len, size_t data_len);

#endif
