/* ops/bind/outrow.h — assembling an operation's output ROW from its
 * input ROW and the fields the operation fills with results.
 *
 * Planned once at open (fnw_outrow_new) from the input type, the output type
 * and the names of the result fields, the layout says for each output field
 * where its value comes from:
 *   - a result field (named in results) is filled by the operation; until
 *     it is, it is null;
 *   - every other output field is copied from the input field of the same
 *     name, which must have the same type (fnw_type_equal, names included).
 * Open fails, naming the operation and the field, when: the input or output
 * type is not a ROW; a result name is not an output field or is given twice;
 * the output type names a field twice; an output field is neither a result
 * nor an input field; or the input field of that name has another type (both
 * types are named). Input fields the output does not have are dropped.
 *
 * Per element (fnw_outrow_assemble) the output row takes the input's row
 * kind, borrows the copied values from the input (no bytes are copied, so
 * the input must outlive the encoding of the output), and gets its item
 * array from the caller's arena: one allocation per element. A null input
 * row gives null copied fields.
 */
#ifndef FNW_OUTROW_H
#define FNW_OUTROW_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/arena.h"
#include "codecs/error.h"
#include "codecs/type.h"
#include "codecs/value.h"

typedef struct fnw_outrow fnw_outrow;

/* in and out are borrowed (they must outlive the layout); op names the
 * operation in messages. NULL with a message on failure. */
fnw_outrow *fnw_outrow_new(const fnw_type *in, const fnw_type *out, const char *const *results,
                           size_t nresults, const char *op, fnw_error *err);
void fnw_outrow_free(fnw_outrow *r);

size_t fnw_outrow_results(const fnw_outrow *r);
/* Output field index of result k (in the order given to fnw_outrow_new). */
uint32_t fnw_outrow_slot(const fnw_outrow *r, size_t k);
/* Type of result k's output field (for fnw_conv_check_type and conversion). */
const fnw_type *fnw_outrow_result_type(const fnw_outrow *r, size_t k);
/* Name of result k's output field. */
const char *fnw_outrow_result_name(const fnw_outrow *r, size_t k);

/* Builds *row for input in: copied fields set, result fields null. The
 * caller then sets row->u.items[fnw_outrow_slot(r, k)] for each result it
 * has. -1 (with a message) when the arena is over its limit or in does not
 * match the input type. */
int fnw_outrow_assemble(const fnw_outrow *r, const fnw_value *in, fnw_arena *a, fnw_value *row,
                        fnw_error *err);

#endif
