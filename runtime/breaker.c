/* runtime/breaker.c — the circuit breaker's state machine (breaker.h):
 *
 *   CLOSED --N consecutive failures, or rate over the window--> OPEN
 *   OPEN --cool-down passed, next admit--> HALF_OPEN (one probe)
 *   HALF_OPEN --probe answered--> CLOSED;  --probe failed--> OPEN
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/breaker.h"

int fnw_breaker_init(fnw_breaker *b, const fnw_breaker_spec *spec, fnw_error *err)
{
    b->spec = *spec;
    b->state = FNW_BREAKER_CLOSED;
    b->probe_out = 0;
    b->consecutive = 0;
    b->open_until = 0;
    b->ring_n = b->ring_pos = b->ring_failed = 0;
    b->why[0] = 0;
    b->ring = NULL;
    if (spec->failure_rate > 0 && !(b->ring = calloc((size_t)spec->window, 1)))
        return fnw_error_set(err, "out of memory for the circuit breaker's window of %d attempts",
                             (int)spec->window);
    return 0;
}

void fnw_breaker_free(fnw_breaker *b)
{
    free(b->ring);
    b->ring = NULL;
}

const char *fnw_breaker_state_name(fnw_breaker_state s)
{
    switch (s) {
    case FNW_BREAKER_CLOSED:
        return "closed";
    case FNW_BREAKER_OPEN:
        return "open";
    case FNW_BREAKER_HALF_OPEN:
        return "half-open";
    }
    return "?";
}

static void window_clear(fnw_breaker *b)
{
    b->ring_n = b->ring_pos = b->ring_failed = 0;
}

static void window_add(fnw_breaker *b, int failed)
{
    if (!b->ring)
        return;
    if (b->ring_n == b->spec.window) {
        b->ring_failed -= b->ring[b->ring_pos];
    } else {
        b->ring_n++;
    }
    b->ring[b->ring_pos] = (uint8_t)failed;
    b->ring_failed += failed;
    b->ring_pos = (b->ring_pos + 1) % b->spec.window;
}

static void open_now(fnw_breaker *b, double now)
{
    b->state = FNW_BREAKER_OPEN;
    b->probe_out = 0;
    b->open_until = now + (double)b->spec.cooldown_ms / 1000.;
}

fnw_breaker_verdict fnw_breaker_admit(fnw_breaker *b, double now, int *changed)
{
    *changed = 0;
    switch (b->state) {
    case FNW_BREAKER_CLOSED:
        return FNW_BREAKER_GO;
    case FNW_BREAKER_OPEN:
        if (now < b->open_until)
            return FNW_BREAKER_REJECT;
        b->state = FNW_BREAKER_HALF_OPEN;
        *changed = 1;
        /* fall through */
    case FNW_BREAKER_HALF_OPEN:
        if (b->probe_out)
            return FNW_BREAKER_REJECT;
        b->probe_out = 1;
        return FNW_BREAKER_PROBE;
    }
    return FNW_BREAKER_GO;
}

int fnw_breaker_record(fnw_breaker *b, int ok, int probe, double now)
{
    if (b->state == FNW_BREAKER_HALF_OPEN && probe) {
        b->probe_out = 0;
        if (ok) {
            b->state = FNW_BREAKER_CLOSED;
            b->consecutive = 0;
            window_clear(b);
        } else {
            snprintf(b->why, sizeof b->why, "the probe call failed");
            open_now(b, now);
        }
        return 1;
    }
    if (b->state != FNW_BREAKER_CLOSED)
        return 0; /* an attempt started before the breaker opened */
    b->consecutive = ok ? 0 : b->consecutive + 1;
    window_add(b, !ok);
    if (b->spec.failures > 0 && b->consecutive >= b->spec.failures) {
        snprintf(b->why, sizeof b->why, "%d consecutive failed calls", (int)b->consecutive);
        open_now(b, now);
        return 1;
    }
    if (b->ring && b->ring_n == b->spec.window &&
        (double)b->ring_failed >= b->spec.failure_rate * (double)b->spec.window) {
        snprintf(b->why, sizeof b->why, "%d of the last %d calls failed (failure_rate %g)",
                 (int)b->ring_failed, (int)b->spec.window, b->spec.failure_rate);
        open_now(b, now);
        window_clear(b);
        return 1;
    }
    return 0;
}

void fnw_breaker_probe_lost(fnw_breaker *b)
{
    b->probe_out = 0;
}
