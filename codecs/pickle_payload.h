/* codecs/pickle_payload.h — the function payload a PyFlink client writes
 * when the job uses the fnworker Python package (python/fnworker): a Python
 * pickle of one call, fnworker._payload.run_in_fnworker(<OperationSpec
 * bytes>). PyFlink always pickles the function it is given
 * (cloudpickle.dumps), so this is how a PyFlink job carries an
 * OperationSpec.
 *
 * The reader is not an unpickler: it accepts exactly the opcode sequences
 * CPython's pickle and cloudpickle write for that call at protocols 2 to 5
 * (with or without FRAME, with memo opcodes, GLOBAL or STACK_GLOBAL, the
 * bytes as SHORT_BINBYTES/BINBYTES/BINBYTES8 or, at protocol 2, as
 * _codecs.encode(<str>, 'latin1')), checks every length against the bytes
 * left before using it, allocates nothing and runs no code. Any other pickle
 * is refused with a message saying what it holds and how to build a
 * payload fnworker can run. Pure: bytes in, bytes out.
 */
#ifndef FNW_PICKLE_PAYLOAD_H
#define FNW_PICKLE_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"

/* The one function a fnworker payload pickle may reference. */
#define FNW_PICKLE_PAYLOAD_MODULE "fnworker._payload"
#define FNW_PICKLE_PAYLOAD_FUNCTION "run_in_fnworker"

/* Whether p looks like a pickle (protocol 2 or later starts with PROTO, 0x80). */
static inline int fnw_pickle_payload_is_pickle(const uint8_t *p, size_t n)
{
    return n > 0 && p[0] == 0x80;
}

/* Reads the OperationSpec out of a fnworker payload pickle. out must hold n
 * bytes (the spec is never longer than the pickle); on success *out_len is
 * the spec's length and 0 is returned. A pickle of anything else returns -1
 * with err naming what was found (the module.name of its function when one
 * can be read) and how to build the job with the fnworker package. */
int fnw_pickle_payload_read(const uint8_t *p, size_t n, uint8_t *out, size_t *out_len, fnw_error *err);

#endif
