/* runtime/breaker.h — the circuit breaker of one operation: closed, open
 * after N consecutive failed attempts or a failure rate over the last
 * window attempts, open for a cool-down, then half-open with one probe
 * attempt whose result closes or re-opens it. Pure state on times the
 * caller gives (loop time, seconds); the engine asks it before each attempt
 * and tells it each attempt's result (docs/resilience.md). Overloads are
 * not failures here (they are the limiter's).
 */
#ifndef FNW_BREAKER_H
#define FNW_BREAKER_H

#include <stdint.h>

#include "codecs/error.h"
#include "runtime/spec.h"

typedef enum fnw_breaker_state {
    FNW_BREAKER_CLOSED = 0,
    FNW_BREAKER_OPEN = 1,
    FNW_BREAKER_HALF_OPEN = 2,
} fnw_breaker_state;

/* What fnw_breaker_admit answers. */
typedef enum fnw_breaker_verdict {
    FNW_BREAKER_GO,     /* call the service */
    FNW_BREAKER_PROBE,  /* call it: this attempt is the half-open probe */
    FNW_BREAKER_REJECT, /* do not call: the breaker is open (or a probe is out) */
} fnw_breaker_verdict;

typedef struct fnw_breaker {
    fnw_breaker_spec spec;
    fnw_breaker_state state;
    int probe_out;
    int32_t consecutive; /* failed attempts in a row */
    double open_until;   /* loop time the cool-down ends */
    uint8_t *ring;       /* the last window outcomes, 1 = failed */
    int32_t ring_n, ring_pos, ring_failed;
    char why[160]; /* what opened it, for messages */
} fnw_breaker;

/* spec must have passed fnw_spec_validate. */
int fnw_breaker_init(fnw_breaker *b, const fnw_breaker_spec *spec, fnw_error *err);
void fnw_breaker_free(fnw_breaker *b);
/* May an attempt start now? An open breaker whose cool-down has passed
 * turns half-open (*changed = 1) and lets one probe through. */
fnw_breaker_verdict fnw_breaker_admit(fnw_breaker *b, double now, int *changed);
/* An attempt ended: ok (an answer) or failed (an error or a timeout).
 * probe: it was the probe. Returns 1 when the state changed. */
int fnw_breaker_record(fnw_breaker *b, int ok, int probe, double now);
/* The probe was given up without a result (the bundle stopped): the next
 * attempt probes instead. */
void fnw_breaker_probe_lost(fnw_breaker *b);
const char *fnw_breaker_state_name(fnw_breaker_state s);

#endif
