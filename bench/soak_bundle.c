/* bench/soak_bundle.c — one soak bundle (soak_internal.h): its input
 * and its exact-once accounting.
 *
 * Input: records with unique ids (the id is the record's timestamp, which
 * the worker carries into its output row) encoded lazily into a pending
 * byte stream and cut into Data messages at random byte offsets, so one
 * message may hold a few bytes of one record, many whole records, or the
 * middle of a long record. Sizes come in four classes (tiny 1-16 B, small
 * up to 1 KB, medium up to 64 KB, large up to 1 MB), from the bundle's own
 * seeded generator.
 *
 * Accounting: every output's id must belong to the bundle, be one whose
 * bytes were all sent, and come once (the ledger keeps a byte per id). A
 * bundle that succeeded must have output + the worker's emptyResults =
 * records sent, and the worker's recordsIn / recordsOut must agree; a
 * failed bundle's records without output are counted as ended by its error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/records.h"
#include "bench/soak_internal.h"

#define WM_NONE INT64_MIN

int soak_ledger_init(soak_ledger *l, uint64_t cap)
{
    l->cap = cap ? cap : 1;
    l->next_id = 0;
    l->seen = calloc(l->cap, 1);
    return l->seen ? 0 : -1;
}

void soak_ledger_free(soak_ledger *l)
{
    free(l->seen);
    l->seen = NULL;
}

static int ledger_take(soak_ledger *l, uint64_t n, uint64_t *base)
{
    if (l->next_id + n > l->cap) {
        uint64_t cap = (l->next_id + n) * 5 / 4 + 1024;
        uint8_t *p = realloc(l->seen, cap);
        if (!p)
            return -1;
        memset(p + l->cap, 0, cap - l->cap);
        l->seen = p;
        l->cap = cap;
    }
    *base = l->next_id;
    l->next_id += n;
    return 0;
}

static void on_output(void *arg, int64_t ts)
{
    soak_bundle *sb = arg;
    uint64_t id = (uint64_t)ts;
    if (id < sb->base_id || id - sb->base_id >= sb->planned) {
        sb->foreign++;
        return;
    }
    uint8_t *seen = &sb->ledger->seen[id];
    if (*seen) {
        sb->dups++;
        return;
    }
    *seen = 1;
    sb->outs++;
}

uint64_t soak_bundle_sent(const soak_bundle *sb)
{
    return sb->rec_len ? sb->bytes_out / sb->rec_len : 0;
}

static size_t pick_size(soak_rng *g, int *cls)
{
    uint64_t r = soak_range(g, 0, 99);
    if (r < 25) {
        *cls = SOAK_TINY;
        return (size_t)soak_range(g, 1, 16);
    }
    if (r < 50) {
        *cls = SOAK_SMALL;
        return (size_t)soak_range(g, 17, 1024);
    }
    if (r < 85) {
        *cls = SOAK_MEDIUM;
        return (size_t)soak_range(g, 1025, 65536);
    }
    *cls = SOAK_LARGE;
    return (size_t)soak_range(g, 65537, 1000000);
}

/* Encodes records until want bytes are pending or the bundle's are all encoded. */
static int fill(soak_bundle *sb, size_t want)
{
    size_t avail = sb->pend.len - sb->pend_off;
    if (avail >= want || sb->encoded == sb->planned)
        return 0;
    if (sb->pend_off) {
        memmove(sb->pend.p, sb->pend.p + sb->pend_off, avail);
        sb->pend.len = avail;
        sb->pend_off = 0;
    }
    while (sb->pend.len < want && sb->encoded < sb->planned) {
        uint64_t id = sb->base_id + sb->encoded;
        if (bench_record_put(&sb->pend, (int64_t)id, WM_NONE, sb->str_len, id, (int32_t)id) < 0)
            return -1;
        sb->encoded++;
    }
    return 0;
}

static int src_next(void *self, double now, grpc_slice *out, uint64_t *records, double *wake_at)
{
    soak_bundle *sb = self;
    (void)now;
    (void)wake_at;
    int cls;
    size_t want = pick_size(&sb->rng, &cls);
    if (fill(sb, want) < 0)
        return -1;   /* out of memory: end the input; the counts will not match */
    size_t avail = sb->pend.len - sb->pend_off;
    if (avail == 0)
        return -1;
    size_t n = want < avail ? want : avail;
    *out = grpc_slice_from_copied_buffer((const char *)sb->pend.p + sb->pend_off, n);
    sb->pend_off += n;
    uint64_t before = sb->bytes_out / sb->rec_len;
    sb->bytes_out += n;
    *records = sb->bytes_out / sb->rec_len - before;
    if (sb->bytes_out % sb->rec_len) {   /* this message ends inside a record: it spans messages */
        uint64_t cut = sb->bytes_out / sb->rec_len + 1;
        if (cut != sb->last_split) {
            sb->last_split = cut;
            sb->tot->split_records++;
        }
    }
    sb->tot->msgs[cls]++;
    sb->tot->bytes += n;
    return 1;
}

int soak_bundle_init(soak_bundle *sb, const soak_profile *prof, soak_ledger *l, soak_totals *t,
                     uint64_t planned, size_t str_len, uint64_t seed)
{
    memset(sb, 0, sizeof *sb);
    sb->prof = prof;
    sb->ledger = l;
    sb->tot = t;
    sb->rng.s = seed;
    sb->planned = planned;
    sb->str_len = str_len;
    size_t payload = bench_record_payload_len(str_len);
    fnw_buf tmp;
    fnw_buf_init(&tmp, 0);
    if (fnw_buf_put_varint(&tmp, payload) < 0) {
        fnw_buf_free(&tmp);
        return -1;
    }
    sb->rec_len = tmp.len + payload;
    fnw_buf_free(&tmp);
    fnw_buf_init(&sb->pend, 0);
    if (ledger_take(l, planned, &sb->base_id) < 0)
        return -1;
    sb->b.descriptor_id = prof->desc_id;
    sb->b.src.next = src_next;
    sb->b.src.self = sb;
    sb->b.expect_out_len = payload - 8;   /* the output row has no watermark */
    sb->b.on_ts = on_output;
    sb->b.ts_arg = sb;
    sb->b.counters = &sb->ctr;
    sb->in_use = 1;
    return 0;
}

void soak_bundle_free(soak_bundle *sb)
{
    fnw_buf_free(&sb->pend);
    sb->in_use = 0;
}

/* Appends one problem to why (the first few are kept). */
static void note(char *why, size_t n, const char *msg)
{
    size_t k = strlen(why);
    if (k + 3 < n)
        snprintf(why + k, n - k, "%s%s", k ? "; " : "", msg);
}

static void check_ok(soak_bundle *sb, uint64_t sent, char *why, size_t n, int *bad)
{
    const bench_counters *c = &sb->ctr;
    char m[400];
    if (sent != sb->planned) {
        snprintf(m, sizeof m, "succeeded with %llu of %llu records sent", (unsigned long long)sent,
                 (unsigned long long)sb->planned);
        note(why, n, m), (*bad)++;
    }
    if (c->found < 6 || c->records_in != (int64_t)sent || c->records_out != (int64_t)sb->outs ||
        sb->outs + (uint64_t)c->empty_results != sent) {
        snprintf(m, sizeof m, "sent %llu, got %llu distinct outputs; the worker counted recordsIn %lld, "
                 "recordsOut %lld, emptyResults %lld (%d counters found)", (unsigned long long)sent,
                 (unsigned long long)sb->outs, (long long)c->records_in, (long long)c->records_out,
                 (long long)c->empty_results, c->found);
        note(why, n, m), sb->tot->counter_mismatch++, (*bad)++;
    }
    if (c->empty_results && !sb->prof->may_empty) {
        snprintf(m, sizeof m, "%lld empty results from a profile that cannot produce any",
                 (long long)c->empty_results);
        note(why, n, m), (*bad)++;
    }
    if (sb->prof->must_fail && sent > 0) {
        note(why, n, "succeeded although every call should time out"), (*bad)++;
    }
    sb->tot->ok_bundles++;
    sb->tot->zero_bundles += sb->planned == 0;
    sb->tot->empties += (uint64_t)c->empty_results;
    sb->tot->timeouts += (uint64_t)c->timeouts;
    sb->tot->retries += (uint64_t)c->retries;
}

int soak_bundle_account(soak_bundle *sb, int ok, char *why, size_t n)
{
    soak_totals *t = sb->tot;
    uint64_t sent = soak_bundle_sent(sb);
    uint64_t unsent_out = 0;
    for (uint64_t id = sb->base_id + sent; id < sb->base_id + sb->encoded; id++)
        unsent_out += sb->ledger->seen[id];
    why[0] = '\0';
    int bad = 0;
    char m[300];
    t->records_in += sent;
    t->outputs += sb->outs - unsent_out;
    t->duplicates += sb->dups;
    t->foreign += sb->foreign;
    t->unsent_outputs += unsent_out;
    if (sb->dups || sb->foreign || unsent_out) {
        snprintf(m, sizeof m, "%llu duplicate output(s), %llu output(s) with another bundle's or no id, "
                 "%llu output(s) of records not (fully) sent", (unsigned long long)sb->dups,
                 (unsigned long long)sb->foreign, (unsigned long long)unsent_out);
        note(why, n, m), bad++;
    }
    if (ok) {
        check_ok(sb, sent, why, n, &bad);
    } else {
        t->failed_bundles++;
        t->failed_records += sent - (sb->outs - unsent_out);
        if (!sb->prof->may_fail) {
            t->unexpected_fail++;
            note(why, n, "failed, though its profile cannot fail"), bad++;
        }
    }
    return bad ? -1 : 0;
}
