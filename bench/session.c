/* bench/session.c — worker sessions and verified bundle runs (see
 * session.h). */
#include "bench/session.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/records.h"

#define BOOT_TIMEOUT_S 60.0

/* The chunk keyed (str_len, dim), built once. */
static const bench_chunk *env_chunk(bench_env *env, size_t str_len, int dim)
{
    for (int i = 0; i < env->n_chunks; i++)
        if (env->chunks[i].str_len == str_len && env->chunks[i].dim == dim)
            return &env->chunks[i];
    if (env->n_chunks == BENCH_MAX_CHUNKS)
        return NULL;
    bench_chunk *c = &env->chunks[env->n_chunks];
    c->str_len = str_len;
    c->dim = dim;
    fnw_buf_init(&c->buf, 0);
    int rc = dim ? bench_feature_chunk_build(&c->buf, dim, BENCH_CHUNK_BYTES, &c->records)
                 : bench_chunk_build(&c->buf, str_len, BENCH_CHUNK_BYTES, &c->records);
    if (rc < 0) {
        fnw_buf_free(&c->buf);
        return NULL;
    }
    c->rec_len = c->buf.len / c->records;
    env->n_chunks++;
    return c;
}

const bench_chunk *bench_env_chunk(bench_env *env, size_t str_len)
{
    return env_chunk(env, str_len, 0);
}

const bench_chunk *bench_env_feature_chunk(bench_env *env, int dim)
{
    return dim > 0 ? env_chunk(env, 0, dim) : NULL;
}

void bench_env_free_chunks(bench_env *env)
{
    for (int i = 0; i < env->n_chunks; i++)
        fnw_buf_free(&env->chunks[i].buf);
    env->n_chunks = 0;
}

static void fail(bench_session *s, const char *msg)
{
    if (!s->error[0])
        snprintf(s->error, sizeof s->error, "%s", msg);
}

int bench_session_start(bench_env *env, bench_session *s, int is_null, const char *wrapper,
                        const char *label)
{
    fnw_error err;
    memset(s, 0, sizeof s[0]);
    s->env = env;
    s->is_null = is_null;
    snprintf(s->id, sizeof s->id, "bench-%u-%s", ++env->seq, label);
    char dir[400];
    snprintf(dir, sizeof dir, "%s/logs", env->out_dir);
    mkdir(env->out_dir, 0755);
    mkdir(dir, 0755);
    snprintf(s->log_path, sizeof s->log_path, "%s/%s.log", dir, s->id);
    unlink(s->log_path);
    bench_rig_expect_worker(env->rig, s->id);
    if (bench_proc_spawn(&s->proc, wrapper, is_null ? env->null_bin : env->worker_bin, s->id,
                         bench_rig_url(env->rig), s->log_path, &err) < 0) {
        fail(s, err.msg);
        return -1;
    }
    double end = bench_now() + BOOT_TIMEOUT_S;
    while (!bench_rig_wait_control(env->rig, 0.1)) {
        if (bench_proc_poll(&s->proc) || bench_now() > end) {
            char m[900];
            snprintf(m, sizeof m, "worker %s did not open its Control stream (%s; log %s)", s->id,
                     s->proc.exited ? "it exited" : "timeout", s->log_path);
            fail(s, m);
            bench_session_stop(s, 2);
            return -1;
        }
    }
    return 0;
}

int bench_session_use(bench_session *s, const bench_op *op)
{
    fnw_buf d;
    fnw_buf_init(&d, 0);
    snprintf(s->desc_id, sizeof s->desc_id, "%s-d%u", s->id, ++s->desc_seq);
    int rc = bench_descriptor_build(&d, s->desc_id, bench_rig_url(s->env->rig), op);
    if (rc == 0)
        rc = bench_rig_add_descriptor(s->env->rig, s->desc_id, d.p, d.len);
    fnw_buf_free(&d);
    if (rc < 0)
        fail(s, "could not build a descriptor (out of memory)");
    return rc;
}

int bench_session_stop(bench_session *s, double timeout_s)
{
    bench_rig *r = s->env->rig;
    bench_rig_end_control(r);
    double start = bench_now();
    int sent_term = 0;
    while (!bench_proc_poll(&s->proc)) {
        double waited = bench_now() - start;
        if (waited > timeout_s && !sent_term) {
            bench_proc_signal(&s->proc, SIGTERM);
            sent_term = 1;
        } else if (waited > timeout_s + 5) {
            bench_proc_signal(&s->proc, SIGKILL);
        }
        bench_rig_poll(r, 0.01);
    }
    /* Let the worker's streams wind down before the next session. */
    for (int i = 0; i < 20; i++)
        bench_rig_poll(r, 0.005);
    int code = bench_proc_exit_code(&s->proc);
    char m[700];
    if (sent_term) {
        snprintf(m, sizeof m, "worker %s did not exit within %.0f s of the Control stream closing",
                 s->id, timeout_s);
        fail(s, m);
        return -1;
    }
    if (code != 0) {
        snprintf(m, sizeof m, "worker %s exited with code %d (log %s)", s->id, code, s->log_path);
        fail(s, m);
    }
    if (bench_rig_session_problems(r, m, sizeof m))
        fail(s, m);
    return code;
}

uint64_t bench_session_out_len(const bench_session *s, size_t str_len)
{
    uint64_t in = bench_record_payload_len(str_len);
    return s->is_null ? in : in - 8;
}

int bench_session_bundle(bench_session *s, bench_bundle *b, uint64_t expect_records, double timeout_s)
{
    b->descriptor_id = s->desc_id;
    if (bench_rig_run_bundle(s->env->rig, b, timeout_s) < 0) {
        char m[1200];
        snprintf(m, sizeof m, "%s: %s", s->id, b->error);
        fail(s, m);
        return -1;
    }
    uint64_t want = expect_records ? expect_records : b->sent_records;
    if (b->sent_records != want || b->out.records != want) {
        char m[300];
        snprintf(m, sizeof m, "%s %s: sent %llu records, expected %llu back, got %llu", s->id, b->iid,
                 (unsigned long long)b->sent_records, (unsigned long long)want,
                 (unsigned long long)b->out.records);
        fail(s, m);
        return -1;
    }
    return 0;
}

/* Busy CPU time of the whole machine so far, seconds (from /proc/stat). */
static double machine_busy_s(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return 0;
    unsigned long long v[10] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
    fclose(f);
    if (n < 8)
        return 0;
    /* user nice system idle iowait irq softirq steal: busy = all but idle, iowait */
    unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    return (double)busy / (double)sysconf(_SC_CLK_TCK);
}

/* ---- a chunk source: the same pre-encoded records, again and again -------------- */

typedef struct chunk_src {
    const bench_chunk *chunk;
    uint64_t left;
    double stop_at;
} chunk_src;

static int chunk_next(void *self, double now, grpc_slice *out, uint64_t *records, double *wake_at)
{
    chunk_src *c = self;
    (void)wake_at;
    if (c->left == 0 || (c->stop_at > 0 && now >= c->stop_at))
        return -1;
    uint64_t n = c->left < c->chunk->records ? c->left : c->chunk->records;
    *out = grpc_slice_from_static_buffer(c->chunk->buf.p, (size_t)n * c->chunk->rec_len);
    *records = n;
    c->left -= n;
    return 1;
}

int bench_session_run(bench_session *s, size_t str_len, uint64_t records, uint64_t bundle_records,
                      double stop_after_s, bench_run *out)
{
    bench_feed f = {bench_env_chunk(s->env, str_len), bench_session_out_len(s, str_len), NULL, NULL};
    return bench_session_run_feed(s, &f, records, bundle_records, stop_after_s, out);
}

int bench_session_run_feed(bench_session *s, const bench_feed *f, uint64_t records, uint64_t bundle_records,
                           double stop_after_s, bench_run *out)
{
    memset(out, 0, sizeof *out);
    const bench_chunk *ch = f->chunk;
    if (!ch) {
        fail(s, "could not build the input chunk");
        return -1;
    }
    if (bundle_records == 0)
        bundle_records = records;
    bench_threads th0, th1;
    bench_proc_threads(s->proc.pid, &th0);
    uint64_t w0 = bench_proc_cpu_ns(s->proc.pid), d0 = bench_proc_cpu_ns(getpid());
    double m0 = machine_busy_s();
    double t0 = bench_now();
    uint64_t left = records;
    int rc = 0;
    while (rc == 0 && (left > 0 || (stop_after_s > 0 && out->bundles == 0))) {
        uint64_t n = left < bundle_records ? left : bundle_records;
        chunk_src src = {ch, stop_after_s > 0 ? UINT64_MAX : n, 0};
        bench_bundle b;
        memset(&b, 0, sizeof b);
        b.src.next = chunk_next;
        b.src.self = &src;
        b.expect_out_len = f->out_len;
        b.on_rec = f->on_rec;
        b.rec_arg = f->rec_arg;
        double timeout = 120 + (double)n * 1e-5 + stop_after_s;
        if (stop_after_s > 0)
            src.stop_at = bench_now() + stop_after_s;
        rc = bench_session_bundle(s, &b, 0, timeout);
        out->records += b.sent_records;
        out->out_records += b.out.records;
        out->bytes += b.sent_bytes;
        out->out_msgs += b.out_msgs;
        out->bundles++;
        if (b.t_response > 0 && b.t_last_sent > 0 && b.t_response - b.t_last_sent > out->max_drain_s)
            out->max_drain_s = b.t_response - b.t_last_sent;
        left -= stop_after_s > 0 ? left : n;
    }
    out->seconds = bench_now() - t0;
    out->worker_cpu_s = (double)(bench_proc_cpu_ns(s->proc.pid) - w0) * 1e-9;
    bench_proc_threads(s->proc.pid, &th1);
    out->worker_top_thread_s = bench_threads_max_delta_s(&th0, &th1);
    out->driver_cpu_s = (double)(bench_proc_cpu_ns(getpid()) - d0) * 1e-9;
    double other = machine_busy_s() - m0 - out->worker_cpu_s - out->driver_cpu_s;
    out->other_cores = out->seconds > 0.05 && other > 0 ? other / out->seconds : 0;
    long hwm = bench_proc_status_kb(s->proc.pid, "VmHWM");
    out->worker_peak_rss_mb = hwm > 0 ? (double)hwm / 1024 : 0;
    out->ok = rc == 0;
    return rc;
}
