/* bench/soak.c — the soak: millions of records through the real
 * worker over real gRPC, with randomly chunked Data messages, several
 * bundles at once on several descriptors whose `echo` operations inject
 * failures, retries, empty results and timeouts (soak_plan.c), exact-once
 * accounting of every record (soak_bundle.c), and the worker's RSS and open
 * fds sampled to show they stay flat.
 *
 *   soak [--short] [--records N] [--seed S] [--concurrency K] [--only P1,P2]
 *        [--worker PATH] [--wrapper CMD] [--out DIR] [--verbose]
 *
 * SOAK_RECORDS and SOAK_SEED in the environment are the defaults of
 * --records and --seed. --short: 100,000 records unless --records says
 * otherwise, and the looser resource check that suits a run of seconds.
 * --only: only these profiles (names as the report prints them), to
 * narrow down a finding; --wrapper puts a command in front of the worker
 * (a heap profiler; the resource figures then measure the wrapper).
 * Exit status: 0 when every record was accounted once and resources stayed
 * flat, 1 otherwise, 2 for bad usage.
 */
#include <dirent.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/session.h"
#include "bench/soak_internal.h"

#define MAX_SLOTS 48              /* bundles tracked: running plus failed ones kept for late data */
#define FAILED_GRACE_S 5.0        /* a failed bundle's late outputs are still matched this long */
#define HANG_S 120.0              /* no progress for this long is a hang */
#define FULL_TICK_S 2.0           /* resource samples */
#define SHORT_TICK_S 0.05

typedef struct sample {
    double t;
    long rss_kb;
    int fds;
} sample;

typedef struct soak {
    int is_short, concurrency, verbose;
    const char *only;             /* comma-separated profile names, or NULL for all */
    const char *wrapper;          /* command in front of the worker (e.g. valgrind --tool=massif) */
    uint64_t records, seed;
    bench_env env;
    bench_session sess;
    soak_profile prof[SOAK_MAX_PROFILES];
    int n_prof;
    soak_rng rng;
    soak_ledger ledger;
    soak_totals tot;
    soak_bundle slots[MAX_SLOTS];
    uint64_t assigned;            /* records planned for started bundles, minus what failed ones never sent */
    int running, target;
    sample *samples;
    size_t n_samples, cap_samples;
    double t0, t1, last_progress, next_report;
    uint64_t progress_sig;
    char error[2048];
} soak;

static void fail(soak *k, const char *msg)
{
    size_t n = strlen(k->error);
    if (n + 3 < sizeof k->error)
        snprintf(k->error + n, sizeof k->error - n, "%s%s", n ? "\n  " : "", msg);
}

/* ---- resources ------------------------------------------------------------------------ */

static int count_fds(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void on_tick(void *arg, double now)
{
    soak *k = arg;
    if (k->n_samples == k->cap_samples) {
        size_t cap = k->cap_samples ? k->cap_samples * 2 : 1024;
        sample *p = realloc(k->samples, cap * sizeof *p);
        if (!p)
            return;
        k->samples = p;
        k->cap_samples = cap;
    }
    sample *s = &k->samples[k->n_samples];
    s->t = now;
    s->rss_kb = bench_proc_status_kb(k->sess.proc.pid, "VmRSS");
    s->fds = count_fds(k->sess.proc.pid);
    if (s->rss_kb > 0 && s->fds > 0)
        k->n_samples++;
}

typedef struct window {
    double from, to;
    long rss_kb;      /* max */
    int fds;          /* max */
    int n;
} window;

static void window_of(const soak *k, double from, double to, window *w)
{
    memset(w, 0, sizeof *w);
    w->from = from;
    w->to = to;
    for (size_t i = 0; i < k->n_samples; i++) {
        const sample *s = &k->samples[i];
        if (s->t < from || s->t > to)
            continue;
        w->n++;
        if (s->rss_kb > w->rss_kb)
            w->rss_kb = s->rss_kb;
        if (s->fds > w->fds)
            w->fds = s->fds;
    }
}

/* First vs last window: a minute each when the run is long enough (full
 * soak), else a quarter of it each. Returns 0 when flat. */
static int check_resources(soak *k, window *first, window *last, long *limit_kb, int *limit_fds)
{
    double dur = k->t1 - k->t0;
    double w = !k->is_short && dur >= 150 ? 60 : dur / 4;
    window_of(k, k->t0, k->t0 + w, first);
    window_of(k, k->t1 - w, k->t1, last);
    /* full: 10% + 2 MB, no new fd; short (seconds, a loaded 2-core machine): 50% + 16 MB, no new fd */
    *limit_kb = k->is_short ? first->rss_kb * 3 / 2 + 16384 : first->rss_kb * 11 / 10 + 2048;
    *limit_fds = first->fds;
    char m[300];
    if (first->n == 0 || last->n == 0) {
        snprintf(m, sizeof m, "too few resource samples (%d in the first window, %d in the last)", first->n,
                 last->n);
        fail(k, m);
        return -1;
    }
    int rc = 0;
    if (last->rss_kb > *limit_kb) {
        snprintf(m, sizeof m, "RSS grew: %.1f MB in the first window, %.1f MB in the last (limit %.1f MB)",
                 first->rss_kb / 1024.0, last->rss_kb / 1024.0, *limit_kb / 1024.0);
        fail(k, m);
        rc = -1;
    }
    if (last->fds > *limit_fds) {
        snprintf(m, sizeof m, "open fds grew: %d in the first window, %d in the last", first->fds, last->fds);
        fail(k, m);
        rc = -1;
    }
    return rc;
}

/* ---- bundles ------------------------------------------------------------------------------ */

static size_t pick_str_len(soak_rng *g, uint64_t *cap)
{
    uint64_t r = soak_range(g, 0, 99);
    if (r < 80)
        return (size_t)soak_range(g, 0, 40);
    if (r < 95)
        return (size_t)soak_range(g, 41, 400);
    if (*cap > 200)   /* long records (each spans many messages): at most 4 MB a bundle */
        *cap = 200;
    return (size_t)soak_range(g, 1000, 20000);
}

/* The samples as columns (seconds from the start, RSS MB, fds) for plots. */
static void write_samples(const soak *k)
{
    char path[600];
    snprintf(path, sizeof path, "%s/soak%s-resources.dat", k->env.out_dir, k->is_short ? "-short" : "");
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "# seconds rss_mb fds (seed %llu)\n", (unsigned long long)k->seed);
    for (size_t i = 0; i < k->n_samples; i++)
        fprintf(f, "%.2f %.2f %d\n", k->samples[i].t - k->t0, k->samples[i].rss_kb / 1024.0, k->samples[i].fds);
    fclose(f);
}

/* Starts a bundle of n records (at most what is left) of str_len-byte strings on p's descriptor. */
static int start_bundle(soak *k, soak_profile *p, uint64_t n, size_t str_len)
{
    soak_bundle *sb = NULL;
    for (int i = 0; i < MAX_SLOTS && !sb; i++)
        if (!k->slots[i].in_use)
            sb = &k->slots[i];
    if (!sb)
        return 0;
    if (n > k->records - k->assigned)
        n = k->records - k->assigned;
    if (soak_bundle_init(sb, p, &k->ledger, &k->tot, n, str_len, soak_rand(&k->rng)) < 0) {
        fail(k, "out of memory for a bundle");
        return -1;
    }
    if (bench_rig_start_bundle(k->env.rig, &sb->b) < 0) {
        fail(k, sb->b.error);
        soak_bundle_free(sb);
        return -1;
    }
    k->assigned += n;
    k->running++;
    p->bundles++;
    if (k->running > k->tot.max_running)
        k->tot.max_running = k->running;
    return 0;
}

static int start_one(soak *k)
{
    soak_profile *p = (soak_profile *)soak_pick(k->prof, k->n_prof, &k->rng);
    /* bundles of up to 2,000 records, up to 10,000 in long runs: thousands of bundles */
    uint64_t cap = k->records / 1000 > 2000 ? k->records / 1000 : 2000;
    if (cap > p->max_records)
        cap = p->max_records;
    size_t str_len = pick_str_len(&k->rng, &cap);
    uint64_t n = soak_range(&k->rng, 0, 99) < 2 ? 0 : soak_log_range(&k->rng, 1, cap);
    return start_bundle(k, p, n, str_len);
}

static int account(soak *k, soak_bundle *sb, int ok)
{
    char why[1024], m[1400];
    uint64_t sent = soak_bundle_sent(sb);
    k->assigned -= sb->planned - sent;   /* what a failed bundle never sent goes to later bundles */
    soak_profile *p = (soak_profile *)sb->prof;
    p->records += sent;
    p->failed += !ok;
    int rc = soak_bundle_account(sb, ok, why, sizeof why);
    if (rc < 0) {
        snprintf(m, sizeof m, "%s (%s, %llu records of %zu-byte strings): %s", sb->b.iid, p->name,
                 (unsigned long long)sb->planned, sb->str_len, why);
        fail(k, m);
    }
    if (k->verbose && !ok)
        fprintf(stderr, "soak: %s (%s) failed as allowed: %s\n", sb->b.iid, p->name, sb->b.error);
    soak_bundle_free(sb);
    return rc;
}

/* Looks at every tracked bundle once; -1 on a fatal problem. */
static int reap(soak *k, double now)
{
    int rc = 0;
    for (int i = 0; i < MAX_SLOTS; i++) {
        soak_bundle *sb = &k->slots[i];
        if (!sb->in_use)
            continue;
        if (!sb->ended && bench_rig_bundle_done(&sb->b)) {
            sb->ended = 1;
            sb->t_ended = now;
            k->running--;
            k->last_progress = now;
            if (!sb->b.error[0]) {
                int ok = bench_rig_finish_bundle(k->env.rig, &sb->b) == 0;
                if (!ok)
                    fail(k, sb->b.error), rc = -1;   /* badly framed output */
                rc |= account(k, sb, ok);
                continue;
            }
        }
        if (sb->ended && now - sb->t_ended >= FAILED_GRACE_S) {
            bench_rig_finish_bundle(k->env.rig, &sb->b);
            rc |= account(k, sb, 0);
        }
    }
    return rc;
}

static uint64_t progress_signature(const soak *k)
{
    uint64_t s = 0;
    for (int i = 0; i < MAX_SLOTS; i++)
        if (k->slots[i].in_use)
            s += k->slots[i].b.sent_msgs + k->slots[i].b.out.bytes + (uint64_t)k->slots[i].b.got_response;
    return s;
}

static void describe_hang(soak *k)
{
    char m[400];
    for (int i = 0; i < MAX_SLOTS; i++) {
        const soak_bundle *sb = &k->slots[i];
        if (!sb->in_use || sb->ended)
            continue;
        snprintf(m, sizeof m, "hung: %s (%s): %llu of %llu records sent%s, %llu outputs, response %s, sink is_last %s",
                 sb->b.iid, sb->prof->name, (unsigned long long)soak_bundle_sent(sb),
                 (unsigned long long)sb->planned, sb->b.last_queued ? " and is_last" : "",
                 (unsigned long long)sb->outs, sb->b.got_response ? "yes" : "no",
                 sb->b.got_sink_last ? "yes" : "no");
        fail(k, m);
    }
}

static int tracked(const soak *k)
{
    int n = 0;
    for (int i = 0; i < MAX_SLOTS; i++)
        n += k->slots[i].in_use;
    return n;
}

/* One turn of the loop: poll, account what ended, watch for a hang or a
 * lost worker. -1 when the run cannot go on. */
static int step(soak *k)
{
    bench_rig_poll(k->env.rig, 0.05);
    double now = bench_now();
    int before = k->running;
    reap(k, now);   /* accounting problems are collected; the run goes on */
    if (k->running < before)
        k->target = (int)soak_range(&k->rng, 1, (uint64_t)k->concurrency);
    uint64_t sig = progress_signature(k);
    if (sig != k->progress_sig) {
        k->progress_sig = sig;
        k->last_progress = now;
    }
    if (!bench_rig_control_open(k->env.rig)) {
        fail(k, "the worker's Control stream closed (did it exit? see its log)");
        return -1;
    }
    if (now - k->last_progress > HANG_S) {
        describe_hang(k);
        return -1;
    }
    if (!k->is_short && now >= k->next_report) {
        fprintf(stderr, "soak: %.0f s, %llu of %llu records in, %d bundles running\n", now - k->t0,
                (unsigned long long)k->tot.records_in, (unsigned long long)k->records, k->running);
        k->next_report += 30;
    }
    return 0;
}

/* The full soak starts with every descriptor running `concurrency` bundles
 * at once, each as large as its operation's capacity (400-byte strings):
 * so every processor the run can use exists, and its entries have grown to
 * their steady size, inside the first window. They are ordinary bundles,
 * accounted like the rest. */
static int warm_up(soak *k)
{
    for (int i = 0; i < k->n_prof; i++) {
        soak_profile *p = &k->prof[i];
        if (!p->weight)
            continue;
        for (int j = 0; j < k->concurrency; j++)
            if (start_bundle(k, p, (uint64_t)p->op.capacity, 400) < 0)
                return -1;
        while (k->running > 0)
            if (step(k) < 0)
                return -1;
    }
    return 0;
}

static void run_loop(soak *k)
{
    k->t0 = k->last_progress = bench_now();
    k->next_report = k->t0 + 10;
    on_tick(k, k->t0);
    if (!k->is_short && warm_up(k) < 0)
        return;
    while (k->assigned < k->records || tracked(k)) {
        while (k->assigned < k->records && k->running < k->target && tracked(k) < MAX_SLOTS)
            if (start_one(k) < 0)
                return;
        if (step(k) < 0)
            return;
    }
}

/* ---- setup and report ----------------------------------------------------------------- */

static int setup(soak *k)
{
    fnw_error err;
    k->env.rig = bench_rig_new(k->verbose, &err);
    if (!k->env.rig) {
        fail(k, err.msg);
        return -1;
    }
    if (soak_ledger_init(&k->ledger, k->records + k->records / 8 + 1024) < 0) {
        fail(k, "out of memory for the ledger");
        return -1;
    }
    k->n_prof = soak_profiles(k->prof, SOAK_MAX_PROFILES);
    if (k->only && soak_only(k->prof, k->n_prof, k->only) < 0) {
        fail(k, "--only names no profile");
        return -1;
    }
    if (bench_session_start(&k->env, &k->sess, 0, k->wrapper, "soak") < 0) {
        fail(k, k->sess.error);
        return -1;
    }
    for (int i = 0; i < k->n_prof; i++) {
        if (bench_session_use(&k->sess, &k->prof[i].op) < 0) {
            fail(k, k->sess.error);
            return -1;
        }
        snprintf(k->prof[i].desc_id, sizeof k->prof[i].desc_id, "%s", k->sess.desc_id);
    }
    bench_rig_set_tick(k->env.rig, k->is_short ? SHORT_TICK_S : FULL_TICK_S, on_tick, k);
    k->rng.s = k->seed;
    k->target = k->concurrency;
    return 0;
}

static void print_tables(const soak *k)
{
    const soak_totals *t = &k->tot;
    printf("\n%-20s %8s %7s %11s  %s\n", "profile (echo)", "bundles", "failed", "records", "faults injected");
    for (int i = 0; i < k->n_prof; i++)
        printf("%-20s %8llu %7llu %11llu  %s\n", k->prof[i].name, (unsigned long long)k->prof[i].bundles,
               (unsigned long long)k->prof[i].failed, (unsigned long long)k->prof[i].records, k->prof[i].what);
    printf("\nData messages: %llu tiny (1-16 B), %llu small (<= 1 KB), %llu medium (<= 64 KB), %llu large "
           "(<= 1 MB); %.1f MB; %llu records split across messages; up to %d bundles at once\n",
           (unsigned long long)t->msgs[SOAK_TINY], (unsigned long long)t->msgs[SOAK_SMALL],
           (unsigned long long)t->msgs[SOAK_MEDIUM], (unsigned long long)t->msgs[SOAK_LARGE],
           (double)t->bytes / 1e6, (unsigned long long)t->split_records, t->max_running);
    uint64_t sum = t->outputs + t->empties + t->failed_records;
    printf("\naccounting                                   records\n");
    printf("  records in (all bytes sent)            %12llu\n", (unsigned long long)t->records_in);
    printf("  outputs (own id, once)                 %12llu\n", (unsigned long long)t->outputs);
    printf("  empty results (worker's emptyResults)  %12llu\n", (unsigned long long)t->empties);
    printf("  ended by their bundle's error          %12llu   (%llu failed bundles)\n",
           (unsigned long long)t->failed_records, (unsigned long long)t->failed_bundles);
    printf("  accounted = outputs + empty + failed   %12llu   %s\n", (unsigned long long)sum,
           sum == t->records_in ? "= records in" : "!= records in");
    printf("  duplicates / foreign ids / unsent ids  %llu / %llu / %llu\n", (unsigned long long)t->duplicates,
           (unsigned long long)t->foreign, (unsigned long long)t->unsent_outputs);
    printf("  timeouts (calls) / retries (attempts)  %llu / %llu\n", (unsigned long long)t->timeouts,
           (unsigned long long)t->retries);
    printf("  bundles: %llu succeeded (%llu with no records), %llu failed\n", (unsigned long long)t->ok_bundles,
           (unsigned long long)t->zero_bundles, (unsigned long long)t->failed_bundles);
}

static int finish(soak *k)
{
    k->t1 = bench_now();
    on_tick(k, k->t1);
    bench_rig_set_tick(k->env.rig, 0, NULL, NULL);
    window first, last;
    memset(&first, 0, sizeof first);
    memset(&last, 0, sizeof last);
    long limit_kb = 0;
    int limit_fds = 0;
    if (check_resources(k, &first, &last, &limit_kb, &limit_fds) < 0 && !k->n_samples)
        fail(k, "no resource samples");
    int code = bench_session_stop(&k->sess, 10);
    if (code != 0 || k->sess.error[0])
        fail(k, k->sess.error[0] ? k->sess.error : "the worker did not exit cleanly");
    const soak_totals *t = &k->tot;
    if (t->records_in != k->records && !k->error[0])
        fail(k, "the run ended before every record was sent");
    if (t->outputs + t->empties + t->failed_records != t->records_in)
        fail(k, "outputs + empty results + records of failed bundles != records in");
    print_tables(k);
    write_samples(k);
    double dur = k->t1 - k->t0;
    if (k->n_samples)
        printf("\nworker resources (%zu samples every %g s): first %.0f s: RSS max %.1f MB, fds max %d; "
               "last %.0f s: RSS max %.1f MB, fds max %d (limits %.1f MB, %d fds)\n",
               k->n_samples, k->is_short ? SHORT_TICK_S : FULL_TICK_S, first.to - first.from, first.rss_kb / 1024.0, first.fds,
               last.to - last.from, last.rss_kb / 1024.0, last.fds, limit_kb / 1024.0, limit_fds);
    int ok = !k->error[0];
    if (!ok)
        printf("\nsoak problems:\n  %s\n", k->error);
    printf("\nsoak%s: %s — %llu records in %.1f s (%.0f rec/s), seed %llu, %d bundles at once at most: "
           "%llu outputs + %llu empty + %llu in %llu failed bundles, %llu duplicates; RSS %.1f -> %.1f MB, "
           "fds %d -> %d (replay: SOAK_SEED=%llu)\n",
           k->is_short ? " (short)" : "", ok ? "PASS" : "FAIL", (unsigned long long)t->records_in, dur,
           dur > 0 ? (double)t->records_in / dur : 0, (unsigned long long)k->seed, t->max_running,
           (unsigned long long)t->outputs, (unsigned long long)t->empties, (unsigned long long)t->failed_records,
           (unsigned long long)t->failed_bundles, (unsigned long long)t->duplicates, first.rss_kb / 1024.0,
           last.rss_kb / 1024.0, first.fds, last.fds, (unsigned long long)k->seed);
    return ok ? 0 : 1;
}

static int parse(soak *k, int argc, char **argv)
{
    const char *e = getenv("SOAK_RECORDS");
    long long records = e && *e ? atoll(e) : -1;
    e = getenv("SOAK_SEED");
    k->seed = e && *e ? strtoull(e, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    k->concurrency = 6;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--short"))
            k->is_short = 1;
        else if (!strcmp(a, "--verbose"))
            k->verbose = 1;
        else if (v && !strcmp(a, "--records"))
            records = atoll(v), i++;
        else if (v && !strcmp(a, "--seed"))
            k->seed = strtoull(v, NULL, 10), i++;
        else if (v && !strcmp(a, "--wrapper"))
            k->wrapper = v, i++;
        else if (v && !strcmp(a, "--only"))
            k->only = v, i++;
        else if (v && !strcmp(a, "--concurrency"))
            k->concurrency = atoi(v), i++;
        else if (v && !strcmp(a, "--worker"))
            k->env.worker_bin = v, i++;
        else if (v && !strcmp(a, "--out"))
            k->env.out_dir = v, i++;
        else
            return -1;
    }
    k->records = records >= 0 ? (uint64_t)records : k->is_short ? 100000 : 10000000;
    return k->concurrency >= 1 && k->concurrency <= 32 ? 0 : -1;
}

int main(int argc, char **argv)
{
    static soak k;
    static char self_dir[512], def_worker[600];
    char argv0[512];
    snprintf(argv0, sizeof argv0, "%s", argv[0]);
    snprintf(self_dir, sizeof self_dir, "%s", dirname(argv0));
    snprintf(def_worker, sizeof def_worker, "%s/../fnworker", self_dir);
    k.env.worker_bin = def_worker;
    k.env.out_dir = self_dir;
    if (parse(&k, argc, argv) < 0) {
        fprintf(stderr, "usage: soak [--short] [--records N] [--seed S] [--concurrency K] [--only P1,P2] "
                        "[--worker PATH] [--wrapper CMD] [--out DIR] [--verbose]\n");
        return 2;
    }
    if (access(k.env.worker_bin, X_OK) != 0) {
        fprintf(stderr, "soak: %s is not an executable (run `make all bench-tools`)\n", k.env.worker_bin);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    printf("soak: %llu records, seed %llu (replay: SOAK_SEED=%llu), up to %d bundles at once, worker %s\n",
           (unsigned long long)k.records, (unsigned long long)k.seed, (unsigned long long)k.seed,
           k.concurrency, k.env.worker_bin);
    fflush(stdout);
    int rc = 1;
    if (setup(&k) == 0) {
        run_loop(&k);
        rc = finish(&k);
    } else {
        printf("soak: FAIL — %s\n", k.error);
    }
    soak_ledger_free(&k.ledger);
    free(k.samples);
    if (k.env.rig)
        bench_rig_free(k.env.rig);
    return rc;
}
