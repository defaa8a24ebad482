/* worker/elements.h — BeamFnData Elements messages read and written by hand.
 *
 * The data plane carries most of the bytes, so it skips protobuf-c: reading
 * walks the wire format and hands out pointers into the received buffer (no
 * allocation, no copy); writing computes the exact size and fills one
 * buffer. Native bundles read Elements.Data (field 1); Elements.Timers
 * (field 2) matter to instructions relayed to PyFlink's own worker, which get
 * every entry byte for byte: so each entry is also handed out as its raw span
 * (field key through its last byte), ready to be copied into another
 * Elements message as it is. Field numbers are those of beam_fn_api.proto:
 * Data{instruction_id 1, transform_id 2, data 3, is_last 4}, Timers{
 * instruction_id 1, transform_id 2, timer_family_id 3, timers 4, is_last 5}.
 * An entry's body must be well-formed protobuf (keys, varints, lengths); a
 * known field with another wire type is skipped as an unknown one, as
 * protobuf's own parsers do.
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
    const uint8_t *raw; /* the whole entry: its field key, length and body */
    size_t raw_len;
} fnw_elem_data;

typedef struct fnw_elem_timers {
    const char *instruction_id;
    size_t instruction_len;
    const char *transform_id;
    size_t transform_len;
    const char *family_id; /* timer_family_id */
    size_t family_len;
    const uint8_t *timers;
    size_t timers_len;
    int is_last;
    const uint8_t *raw; /* the whole entry, as for Data */
    size_t raw_len;
} fnw_elem_timers;

/* What to call per entry; a callback returning < 0 stops the walk. */
typedef struct fnw_elem_visitor {
    int (*data)(void *arg, const fnw_elem_data *d);
    int (*timers)(void *arg, const fnw_elem_timers *t);
} fnw_elem_visitor;

/* Calls v's callbacks for each Data and Timers entry of the Elements message
 * in p[0..n), in message order (pointers into p, nothing copied). Returns -1
 * when a callback refuses an entry, or on malformed input (err says which
 * entry and what: entries before it were handed out). */
int fnw_elements_walk(const uint8_t *p, size_t n, const fnw_elem_visitor *v, void *arg, fnw_error *err);

/* fnw_elements_walk with fn for Data entries; *timers counts the (well-formed)
 * Timers entries. */
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
