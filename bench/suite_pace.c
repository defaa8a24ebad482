/* bench/suite_pace.c — paced input for the latency workloads (W8,
 * W14c): a source that hands the driver `per_tick` records every `period`
 * seconds, each carrying in its timestamp field the time it is handed to
 * gRPC, and an output hook that turns each result's timestamp into its
 * latency; plus the percentile helpers the latency rows use.
 */
#include "bench/suite_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int pacer_next(void *self, double now, grpc_slice *out, uint64_t *records, double *wake_at)
{
    suite_pacer *p = self;
    if (now >= p->bundle_end)
        return -1;
    fnw_buf_clear(&p->buf);
    uint64_t n = 0;
    /* Each record carries the time it is handed to gRPC (the latency
     * starts when the driver sends it); the pacing's own lateness is kept. */
    int64_t ts_us = (int64_t)((now - p->t0) * 1e6);
    while (p->t0 + (double)p->tick * p->period <= now) {
        double late = now - (p->t0 + (double)p->tick * p->period);
        p->late_sum += late * p->per_tick;
        p->late_n += (uint64_t)p->per_tick;
        p->late_max = late > p->late_max ? late : p->late_max;
        for (int k = 0; k < p->per_tick; k++, n++, p->seq++)
            p->put(&p->buf, ts_us, p->seq);
        p->tick++;
    }
    if (!n) {
        *wake_at = p->t0 + (double)p->tick * p->period;
        return 0;
    }
    *out = grpc_slice_from_copied_buffer((const char *)p->buf.p, p->buf.len);
    *records = n;
    return 1;
}

static void pacer_ts(void *arg, int64_t ts_us)
{
    suite_pacer *p = arg;
    if (p->n_lat == p->cap_lat) {
        size_t cap = p->cap_lat ? p->cap_lat * 2 : 65536;
        double *l = realloc(p->lat, cap * sizeof *l);
        if (!l)
            return;
        p->lat = l;
        double *t = realloc(p->sent, cap * sizeof *t);
        if (!t)
            return;
        p->sent = t;
        p->cap_lat = cap;
    }
    p->sent[p->n_lat] = (double)ts_us / 1e6;
    p->lat[p->n_lat++] = ((bench_now() - p->t0) * 1e6 - (double)ts_us) / 1000.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void suite_sort(double *v, size_t n)
{
    qsort(v, n, sizeof v[0], cmp_double);
}

double suite_pct(const double *v, size_t n, double q)
{
    if (!n)
        return 0;
    size_t i = (size_t)ceil(q * (double)n) - 1;
    return v[i < n ? i : n - 1];
}

/* p's per_tick, period, put, out_len and on_rec are set by the caller. */
int suite_run_paced(bench_session *ss, double seconds, double bundle_s, suite_pacer *p)
{
    fnw_buf_init(&p->buf, 0);
    p->t0 = bench_now();
    double end = p->t0 + seconds;
    int rc = 0;
    while (rc == 0 && bench_now() < end - 1e-3) {
        bench_bundle b;
        memset(&b, 0, sizeof b);
        p->bundle_end = bench_now() + bundle_s < end ? bench_now() + bundle_s : end;
        b.src.next = pacer_next;
        b.src.self = p;
        b.expect_out_len = p->out_len;
        b.on_ts = pacer_ts;
        b.ts_arg = p;
        b.on_rec = p->on_rec;
        b.rec_arg = p->rec_arg;
        rc = bench_session_bundle(ss, &b, 0, 60 + bundle_s);
    }
    fnw_buf_free(&p->buf);
    return rc;
}

void suite_pacer_free(suite_pacer *p)
{
    free(p->lat);
    free(p->sent);
    p->lat = p->sent = NULL;
    p->n_lat = p->cap_lat = 0;
}
