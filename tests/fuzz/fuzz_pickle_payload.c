/* tests/fuzz/fuzz_pickle_payload.c — fuzz target for the reader of the
 * PyFlink package's pickle payload (codecs/pickle_payload.c), the first
 * parser a job's bytes reach.
 *
 * Any input must end in a spec or a message, never a crash, an over-read or
 * an allocation; an accepted spec is never longer than the pickle that
 * carried it (the reader writes into a buffer sized from the input), and
 * reading the same bytes twice gives the same answer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/pickle_payload.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *out = malloc(size ? size : 1);
    uint8_t *again = malloc(size ? size : 1);
    if (!out || !again) {
        free(out);
        free(again);
        return 0;
    }
    size_t n = 0, n2 = 0;
    fnw_error err, err2;
    int rc = fnw_pickle_payload_read(data, size, out, &n, &err);
    int rc2 = fnw_pickle_payload_read(data, size, again, &n2, &err2);
    if (rc != rc2)
        abort();
    if (rc == 0 && (n > size || n != n2 || memcmp(out, again, n) != 0))
        abort();
    if (rc != 0 && !fuzz_same_message(&err, &err2))
        abort();
    free(out);
    free(again);
    return 0;
}
