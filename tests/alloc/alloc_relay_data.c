/* tests/alloc/alloc_relay_data.c — allocation failures in the data plane's
 * side of the relay (worker/inbound.c, the unit tests' fake stream):
 *  - relay_held: data (two messages, one kept by reference) and timers held
 *    while the instruction's descriptor is fetched, then fnw_inbound_relay
 *    hands them to the tap, then a message of its entries only;
 *  - relay_mixed: a message mixing a native bundle's entries with a relayed
 *    instruction's is split (the relayed ones copied out);
 *  - relay_timers_held: timers arrive for an expected instruction (held in a
 *    timers inbox of their own), then it is relayed.
 * Either the failure is reported (fnw_inbound_relay's error, the tap's
 * on_failed, the native bundle's on_failed), each saying "out of memory",
 * or the tap got exactly what Flink sent. */
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/alloc/alloc_run.h"
#include "tests/unit/fake_data_io.h"

typedef struct fixture {
    struct ev_loop *loop;
    fnw_data_mgr dm;
    fnw_inbox *native;
    char failure[FNW_ERROR_MAX]; /* on_failed of the tap or of the native bundle */
    uint8_t got[4096];           /* what the tap got, joined */
    size_t got_n;
    uint8_t want[4096]; /* what it must get */
    size_t want_n;
} fixture;

static void tap_elements(void *user, fnw_data_conn *from, grpc_slice elements)
{
    fixture *fx = user;
    size_t n = GRPC_SLICE_LENGTH(elements);
    if (fx->got_n + n <= sizeof fx->got) {
        memcpy(fx->got + fx->got_n, GRPC_SLICE_START_PTR(elements), n);
        fx->got_n += n;
    }
    grpc_slice_unref(elements);
}

static void tap_writable(void *user, fnw_data_conn *c)
{
}

static void tap_failed(void *user, fnw_data_conn *c, const char *msg)
{
    fixture *fx = user;
    if (!fx->failure[0])
        snprintf(fx->failure, sizeof fx->failure, "%s", msg);
}

static void on_input(void *user)
{
}

static void on_failed(void *user, const char *msg)
{
    tap_failed(user, NULL, msg);
}

static void *fx_new(void)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return NULL;
    fx->loop = ev_loop_new(EVFLAG_AUTO);
    fnw_data_config cfg = {0};
    fake_data_init(&fx->dm, fx->loop, &cfg);
    fnw_data_tap tap = {fx, tap_elements, tap_writable, tap_failed};
    fnw_data_set_tap(&fx->dm, &tap);
    if (!fnw_data_connect(&fx->dm, "fake:1") || !fake_last)
        return NULL;
    return fx;
}

/* One message of the given bytes, delivered on the fake stream. */
static void deliver(const uint8_t *p, size_t n)
{
    grpc_slice s = grpc_slice_from_copied_buffer((const char *)p, n);
    fake_last->h.on_message(fake_last->h.user, s);
    grpc_slice_unref(s);
}

static size_t put_data(uint8_t *w, const char *iid, const char *tid, const void *data, size_t n, int last)
{
    return (size_t)(fnw_elements_put_data(w, iid, strlen(iid), tid, strlen(tid), data, n, last) - w);
}

/* A Timers entry by hand: Timers{instruction_id, transform_id,
 * timer_family_id "timer", timers}. */
static size_t put_timers(uint8_t *w, const char *iid, const char *tid, const char *timers)
{
    size_t il = strlen(iid), tl = strlen(tid), xl = strlen(timers);
    size_t body = 2 + il + 2 + tl + 2 + 5 + 2 + xl;
    uint8_t *p = w;
    *p++ = 0x12;
    *p++ = (uint8_t)body;
    *p++ = 0x0a;
    *p++ = (uint8_t)il;
    memcpy(p, iid, il);
    p += il;
    *p++ = 0x12;
    *p++ = (uint8_t)tl;
    memcpy(p, tid, tl);
    p += tl;
    *p++ = 0x1a;
    *p++ = 5;
    memcpy(p, "timer", 5);
    p += 5;
    *p++ = 0x22;
    *p++ = (uint8_t)xl;
    memcpy(p, timers, xl);
    p += xl;
    return (size_t)(p - w);
}

/* The outcome of an armed run: a failure reported says so, else success. */
static int outcome(fixture *fx, fnw_error *err)
{
    if (fx->failure[0])
        return fnw_error_set(err, "%s", fx->failure);
    return 0;
}

static int verify_got(void *p)
{
    fixture *fx = p;
    return fx->got_n == fx->want_n && memcmp(fx->got, fx->want, fx->want_n) == 0;
}

static void fx_free(void *p)
{
    fixture *fx = p;
    if (fx->native)
        fnw_inbound_release(fx->native);
    fnw_data_stop(&fx->dm);
    fnw_data_free(&fx->dm);
    ev_loop_destroy(fx->loop);
    free(fx);
}

/* ---- relay_held ------------------------------------------------------------------------ */

static uint8_t big[600];

static void *held_setup(void)
{
    fixture *fx = fx_new();
    if (!fx || fnw_inbound_expect(&fx->dm, "h1") < 0)
        return NULL;
    uint8_t m[1024];
    memset(big, 3, sizeof big);
    big[0] = 0x7f; /* not read as records: only carried */
    deliver(m, put_data(m, "h1", "in", big, sizeof big, 0)); /* most of its message: by reference */
    size_t n = put_data(m, "h1", "in", "\x01z", 2, 1);
    n += put_timers(m + n, "h1", "in", "\x01t");
    n += put_data(m + n, "h1", "side", "\x01s", 2, 0);
    deliver(m, n);
    return fx;
}

static int held_run(void *p, fnw_error *err)
{
    fixture *fx = p;
    if (fnw_inbound_relay(&fx->dm, "h1", err) < 0)
        return -1;
    uint8_t m[256];
    size_t n = put_timers(m, "h1", "in", "\x02tt");
    n += put_data(m + n, "h1", "side", NULL, 0, 1);
    deliver(m, n);
    /* what the tap must have got: the held data per transform (the newest
     * inbox first: the data plane keeps an instruction's inboxes newest
     * first), the held timers, then the message */
    uint8_t *w = fx->want;
    w = fnw_elements_put_data(w, "h1", 2, "side", 4, (const uint8_t *)"\x01s", 2, 0);
    uint8_t joined[sizeof big + 2];
    memcpy(joined, big, sizeof big);
    memcpy(joined + sizeof big, "\x01z", 2);
    w = fnw_elements_put_data(w, "h1", 2, "in", 2, joined, sizeof joined, 0);
    w = fnw_elements_put_data(w, "h1", 2, "in", 2, NULL, 0, 1); /* is_last in an entry of its own */
    w += put_timers(w, "h1", "in", "\x01t");
    memcpy(w, m, n);
    fx->want_n = (size_t)(w - fx->want) + n;
    return outcome(fx, err);
}

/* ---- relay_mixed ----------------------------------------------------------------------- */

static void *mixed_setup(void)
{
    fixture *fx = fx_new();
    fnw_error err;
    if (!fx || fnw_inbound_expect(&fx->dm, "n1") < 0 || fnw_inbound_expect(&fx->dm, "r1") < 0 ||
        fnw_inbound_relay(&fx->dm, "r1", &err) < 0)
        return NULL;
    fnw_data_listener l = {fx, on_input, on_failed};
    fx->native = fnw_inbound_claim(fx->dm.conns, "n1", "in", &l, &err);
    return fx->native ? fx : NULL;
}

static int mixed_run(void *p, fnw_error *err)
{
    fixture *fx = p;
    uint8_t m[1024];
    size_t n = put_data(m, "n1", "in", "\x01" "a", 2, 0);
    size_t r0 = n;
    n += put_data(m + n, "r1", "t", big, 300, 0);
    n += put_timers(m + n, "r1", "t", "\x01t");
    size_t r1 = n;
    n += put_data(m + n, "n1", "in", "\x01" "b", 2, 1);
    size_t r2 = n;
    n += put_data(m + n, "r1", "t", NULL, 0, 1);
    deliver(m, n);
    memcpy(fx->want, m + r0, r1 - r0);
    memcpy(fx->want + (r1 - r0), m + r2, n - r2);
    fx->want_n = (r1 - r0) + (n - r2);
    return outcome(fx, err);
}

static int mixed_verify(void *p)
{
    fixture *fx = p;
    fnw_frame f;
    return verify_got(p) && fnw_inbox_next(fx->native, &f) == FNW_INBOX_RECORD && f.p[0] == 'a' &&
           fnw_inbox_next(fx->native, &f) == FNW_INBOX_RECORD && f.p[0] == 'b' &&
           fnw_inbox_next(fx->native, &f) == FNW_INBOX_END;
}

/* ---- relay_timers_held ------------------------------------------------------------------- */

static void *timers_setup(void)
{
    fixture *fx = fx_new();
    if (!fx || fnw_inbound_expect(&fx->dm, "t1") < 0)
        return NULL;
    return fx;
}

static int timers_run(void *p, fnw_error *err)
{
    fixture *fx = p;
    uint8_t m[256];
    size_t n = put_timers(m, "t1", "in", "\x01t");
    n += put_timers(m + n, "t1", "in", "\x01u");
    uint8_t pad[64] = {0};
    n += put_data(m + n, "other", "in", pad, sizeof pad, 0); /* so the timers are copied, not referenced */
    deliver(m, n);
    if (fnw_inbound_relay(&fx->dm, "t1", err) < 0)
        return -1;
    fx->want_n = put_timers(fx->want, "t1", "in", "\x01t");
    fx->want_n += put_timers(fx->want + fx->want_n, "t1", "in", "\x01u");
    return outcome(fx, err);
}

static const alloc_scenario held = {"relay_held", held_setup, held_run, verify_got, fx_free};
static const alloc_scenario mixed = {"relay_mixed", mixed_setup, mixed_run, mixed_verify, fx_free};
static const alloc_scenario timers = {"relay_timers_held", timers_setup, timers_run, verify_got, fx_free};

int main(int argc, char **argv)
{
    const alloc_scenario *all[] = {&held, &mixed, &timers};
    return alloc_main(all, sizeof all / sizeof all[0], argc, argv);
}
