/* tests/fuzz/fuzz_elements.c — fuzz target for the data plane's readers and
 * writer: the hand-rolled BeamFnApi Elements codec (worker/elements.c) and
 * the record framing of an inbox (worker/inbox.c).
 *
 * The input is read as one Elements message, as a Data stream delivers it.
 * Properties checked (abort() on violation):
 *  - reading twice gives the same entries, status and message; a refusal has
 *    a message; every id and data field lies inside the input, and the data
 *    fields of the accepted entries add up to at most the input's length;
 *  - each accepted entry, written back by fnw_elements_put_data into exactly
 *    fnw_elements_data_size() bytes, and by fnw_elements_put_data_head (plus
 *    its data bytes) into exactly fnw_elements_data_head_size() + data_len
 *    bytes, fills its buffer to the byte and reads back as the same entry
 *    (data_len 0 included);
 *  - the entries' data, appended to an inbox chunk by chunk as the data plane
 *    does (is_last ends the stream), yields the same records, in the same
 *    order and with the same final status, as a plain reference reader of
 *    the concatenated bytes;
 *  - fnw_elements_walk (Data and Timers entries, what the relay copies) agrees
 *    with fnw_elements_each: same status and message, the same Data entries
 *    and as many Timers entries as it counted; every entry's raw span lies
 *    inside the input, after the previous one, holds the entry's fields, and
 *    read alone is exactly that one entry again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/elements.h"
#include "worker/inbox_internal.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct entries {
    fnw_elem_data *v;
    size_t n, cap;
} entries;

static int collect(void *arg, const fnw_elem_data *d)
{
    entries *e = arg;
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 8;
        fnw_elem_data *v = realloc(e->v, cap * sizeof *v);
        if (!v)
            return -1;
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = *d;
    return 0;
}

static int same_entry(const fnw_elem_data *a, const fnw_elem_data *b)
{
    return a->instruction_len == b->instruction_len && a->transform_len == b->transform_len &&
           a->data_len == b->data_len && a->is_last == b->is_last &&
           (a->instruction_len == 0 || !memcmp(a->instruction_id, b->instruction_id, a->instruction_len)) &&
           (a->transform_len == 0 || !memcmp(a->transform_id, b->transform_id, a->transform_len)) &&
           (a->data_len == 0 || !memcmp(a->data, b->data, a->data_len));
}

static void check_inside(const uint8_t *in, size_t size, const void *p, size_t n)
{
    if (n == 0)
        return;
    const uint8_t *q = p;
    CHECK(q >= in && n <= size && (size_t)(q - in) <= size - n);
}

/* Reads buf[0..n) and requires exactly one Data entry equal to want. */
static void check_reads_back(const uint8_t *buf, size_t n, const fnw_elem_data *want)
{
    entries e = {0};
    size_t timers = 7;
    fnw_error err;
    CHECK(fnw_elements_each(buf, n, collect, &e, &timers, &err) == 0);
    CHECK(e.n == 1 && timers == 0 && same_entry(&e.v[0], want));
    free(e.v);
}

static void check_writers(const fnw_elem_data *d)
{
    size_t il = d->instruction_len, tl = d->transform_len, dl = d->data_len;
    size_t n = fnw_elements_data_size(il, tl, dl, d->is_last);
    uint8_t *buf = malloc(n);
    CHECK(buf);
    CHECK(fnw_elements_put_data(buf, d->instruction_id, il, d->transform_id, tl, d->data, dl,
                                d->is_last) == buf + n);
    check_reads_back(buf, n, d);
    free(buf);

    size_t hn = fnw_elements_data_head_size(il, tl, dl);
    buf = malloc(hn + dl);
    CHECK(buf);
    CHECK(fnw_elements_put_data_head(buf, d->instruction_id, il, d->transform_id, tl, dl) == buf + hn);
    if (dl)
        memcpy(buf + hn, d->data, dl);
    fnw_elem_data nolast = *d;
    nolast.is_last = 0;
    check_reads_back(buf, hn + dl, &nolast);
    free(buf);
}

/* ---- the inbox against a reference reader of the concatenated stream ---------- */

typedef struct stream {
    uint8_t *s;          /* every byte appended so far */
    size_t arrived;
    size_t pos;          /* the reference reader's position */
    int got_last;
    int bad;
} stream;

/* What the next read must give, from the bytes that arrived. */
static fnw_inbox_status reference_next(stream *st, size_t *off, size_t *len)
{
    if (st->bad)
        return FNW_INBOX_BAD;
    size_t avail = st->arrived - st->pos;
    if (avail == 0)
        return st->got_last ? FNW_INBOX_END : FNW_INBOX_MORE;
    uint64_t v = 0;
    int k = fnw_varint_read(st->s + st->pos, avail, &v);
    if (k < 0 || (k > 0 && v > FNW_INBOX_MAX_RECORD) ||
        (st->got_last && (k == 0 || v > avail - (size_t)k))) {
        st->bad = 1;
        return FNW_INBOX_BAD;
    }
    if (k == 0 || v > avail - (size_t)k)
        return FNW_INBOX_MORE;
    *off = st->pos + (size_t)k;
    *len = (size_t)v;
    st->pos += (size_t)k + (size_t)v;
    return FNW_INBOX_RECORD;
}

static void on_freed(fnw_inbox *ib, size_t held)
{
    (void)ib;
    (void)held;
}

/* Reads everything readable now, comparing with the reference. */
static void drain(fnw_inbox *ib, stream *st)
{
    for (;;) {
        fnw_frame f = {0};
        size_t off = 0, len = 0;
        fnw_inbox_status want = reference_next(st, &off, &len);
        fnw_inbox_status got = fnw_inbox_next(ib, &f);
        CHECK(got == want);
        if (got == FNW_INBOX_BAD)
            CHECK(fnw_inbox_error(ib)[0] != '\0');
        if (got != FNW_INBOX_RECORD)
            return;
        CHECK(f.n == len && (len == 0 || !memcmp(f.p, st->s + off, len)));
    }
}

static void check_framing(const entries *e, size_t total)
{
    fnw_inbox ib;
    memset(&ib, 0, sizeof ib);
    fnw_inbox_reader_init(&ib, on_freed);
    stream st = {0};
    st.s = malloc(total ? total : 1);
    CHECK(st.s);
    for (size_t i = 0; i < e->n; i++) {
        const fnw_elem_data *d = &e->v[i];
        if (d->data_len > 0) {
            CHECK(fnw_inbox_append_copy(&ib, d->data, d->data_len) == 0);
            memcpy(st.s + st.arrived, d->data, d->data_len);
            st.arrived += d->data_len;
        }
        if (d->is_last)
            ib.got_last = st.got_last = 1;
        drain(&ib, &st);
    }
    fnw_inbox_reader_free(&ib);
    free(st.s);
}

/* ---- the walker: Timers entries and raw spans ------------------------------------ */

typedef struct span {
    int timers; /* 0: a Data entry */
    fnw_elem_data d;
    fnw_elem_timers t;
} span;

typedef struct spans {
    span *v;
    size_t n, cap;
} spans;

static span *spans_add(spans *s)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        span *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return NULL;
        s->v = v;
        s->cap = cap;
    }
    span *x = &s->v[s->n++];
    memset(x, 0, sizeof *x);
    return x;
}

static int walk_data(void *arg, const fnw_elem_data *d)
{
    span *x = spans_add(arg);
    if (!x)
        return -1;
    x->d = *d;
    return 0;
}

static int walk_timers(void *arg, const fnw_elem_timers *t)
{
    span *x = spans_add(arg);
    if (!x)
        return -1;
    x->timers = 1;
    x->t = *t;
    return 0;
}

static const fnw_elem_visitor walker = {walk_data, walk_timers};

static void check_in_span(const uint8_t *raw, size_t raw_len, const void *p, size_t n)
{
    check_inside(raw, raw_len, p, n);
}

static int same_timers(const fnw_elem_timers *a, const fnw_elem_timers *b)
{
    return a->instruction_len == b->instruction_len && a->transform_len == b->transform_len &&
           a->family_len == b->family_len && a->timers_len == b->timers_len && a->is_last == b->is_last &&
           a->instruction_id == b->instruction_id && a->transform_id == b->transform_id &&
           a->family_id == b->family_id && a->timers == b->timers;
}

static void check_walk(const uint8_t *data, size_t size, int each_rc, const fnw_error *each_err,
                       const entries *each, size_t each_timers)
{
    spans w = {0};
    fnw_error err;
    int rc = fnw_elements_walk(data, size, &walker, &w, &err);
    CHECK(rc == each_rc);
    if (rc != 0)
        CHECK(strcmp(err.msg, each_err->msg) == 0);
    size_t nd = 0, nt = 0;
    const uint8_t *after = data;
    for (size_t i = 0; i < w.n; i++) {
        const span *x = &w.v[i];
        const uint8_t *raw = x->timers ? x->t.raw : x->d.raw;
        size_t raw_len = x->timers ? x->t.raw_len : x->d.raw_len;
        CHECK(raw_len >= 2 && raw >= after);
        check_inside(data, size, raw, raw_len);
        after = raw + raw_len;
        spans one = {0};
        fnw_error e1;
        CHECK(fnw_elements_walk(raw, raw_len, &walker, &one, &e1) == 0);
        CHECK(one.n == 1 && one.v[0].timers == x->timers);
        if (x->timers) {
            nt++;
            check_in_span(raw, raw_len, x->t.instruction_id, x->t.instruction_len);
            check_in_span(raw, raw_len, x->t.transform_id, x->t.transform_len);
            check_in_span(raw, raw_len, x->t.family_id, x->t.family_len);
            check_in_span(raw, raw_len, x->t.timers, x->t.timers_len);
            CHECK(same_timers(&one.v[0].t, &x->t));
        } else {
            CHECK(nd < each->n && same_entry(&x->d, &each->v[nd]) && x->d.data == each->v[nd].data);
            nd++;
            check_in_span(raw, raw_len, x->d.instruction_id, x->d.instruction_len);
            check_in_span(raw, raw_len, x->d.transform_id, x->d.transform_len);
            check_in_span(raw, raw_len, x->d.data, x->d.data_len);
            CHECK(same_entry(&one.v[0].d, &x->d) && one.v[0].d.data == x->d.data);
        }
        free(one.v);
    }
    CHECK(nd == each->n && nt == each_timers);
    free(w.v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    entries a = {0}, b = {0};
    size_t ta = 0, tb = 0;
    fnw_error ea, eb;
    int ra = fnw_elements_each(data, size, collect, &a, &ta, &ea);
    int rb = fnw_elements_each(data, size, collect, &b, &tb, &eb);
    CHECK(ra == rb);
    if (ra != 0)
        CHECK(ea.msg[0] != '\0' && strcmp(ea.msg, eb.msg) == 0);
    /* entries handed out before a refusal are compared too: the data plane
     * acts on them as they come */
    CHECK(a.n == b.n && ta == tb);
    size_t total = 0;
    for (size_t i = 0; i < a.n; i++) {
        const fnw_elem_data *d = &a.v[i];
        CHECK(same_entry(d, &b.v[i]) && d->instruction_id == b.v[i].instruction_id &&
              d->transform_id == b.v[i].transform_id && d->data == b.v[i].data);
        check_inside(data, size, d->instruction_id, d->instruction_len);
        check_inside(data, size, d->transform_id, d->transform_len);
        check_inside(data, size, d->data, d->data_len);
        total += d->data_len;
        CHECK(total <= size);
        check_writers(d);
    }
    check_framing(&a, total);
    check_walk(data, size, ra, &ea, &a, ta);
    free(a.v);
    free(b.v);
    return 0;
}
