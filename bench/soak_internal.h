/* bench/soak_internal.h — internal to the soak (soak.c, soak_plan.c,
 * soak_bundle.c), not an interface: the soak's profiles, its per-bundle state,
 * the run's totals and the functions the three files share. Dependencies
 * run one way: soak.c (flags, the run loop, resources, the report) uses
 * soak_plan.c (profiles, random choices) and soak_bundle.c (a bundle's
 * randomly chunked input, its exact-once accounting); soak_bundle.c uses
 * soak_plan.c's random numbers only.
 */
#ifndef BENCH_SOAK_INTERNAL_H
#define BENCH_SOAK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/buf.h"
#include "bench/descriptor.h"
#include "bench/rig.h"

/* ---- random numbers (soak_plan.c): splitmix64, reproducible from the seed ---- */
typedef struct soak_rng {
    uint64_t s;
} soak_rng;

uint64_t soak_rand(soak_rng *g);
/* Uniform in [lo, hi]. */
uint64_t soak_range(soak_rng *g, uint64_t lo, uint64_t hi);
/* Log-uniform in [lo, hi] (lo >= 1): small values as likely per decade as large ones. */
uint64_t soak_log_range(soak_rng *g, uint64_t lo, uint64_t hi);

/* ---- profiles (soak_plan.c): one descriptor each, on one worker ---- */
typedef struct soak_profile {
    const char *name;
    const char *what;               /* the faults it injects, for the report */
    bench_op op;
    int weight;                     /* how often a bundle picks it */
    uint64_t max_records;           /* cap on its bundles' size */
    int may_fail;                   /* a bundle error is a possible end */
    int must_fail;                  /* a bundle error is the only end (with input) */
    int may_empty;                  /* inputs may end with no output */
    char desc_id[96];
    /* totals */
    uint64_t bundles, failed, records;
} soak_profile;

#define SOAK_MAX_PROFILES 8

int soak_profiles(soak_profile *p, int max);
/* Keeps only the profiles named in the comma-separated list (others get
 * weight 0); -1 when it names none. */
int soak_only(soak_profile *p, int n, const char *names);
const soak_profile *soak_pick(soak_profile *p, int n, soak_rng *g);

/* ---- the run's totals ---- */
enum { SOAK_TINY, SOAK_SMALL, SOAK_MEDIUM, SOAK_LARGE, SOAK_SIZES };

typedef struct soak_totals {
    uint64_t records_in;            /* records whose bytes were all sent */
    uint64_t outputs;               /* outputs carrying a sent record's id, once each */
    uint64_t empties;               /* the worker's emptyResults (succeeded bundles) */
    uint64_t timeouts, retries;     /* calls, from the worker's counters (succeeded bundles) */
    uint64_t failed_bundles, failed_records;   /* records of failed bundles without output */
    uint64_t ok_bundles, zero_bundles;
    uint64_t duplicates, foreign, unsent_outputs, counter_mismatch, unexpected_fail;
    uint64_t msgs[SOAK_SIZES];      /* Data messages by size class */
    uint64_t split_records;         /* records whose bytes span two or more messages */
    uint64_t bytes;
    int max_running;
} soak_totals;

/* Which ids came back: one byte per id, grown as ids are handed out. */
typedef struct soak_ledger {
    uint8_t *seen;
    uint64_t cap, next_id;
} soak_ledger;

/* ---- one bundle (soak_bundle.c) ---- */
typedef struct soak_bundle {
    bench_bundle b;
    bench_counters ctr;
    const soak_profile *prof;
    soak_ledger *ledger;
    soak_totals *tot;
    soak_rng rng;                   /* its chunking */
    uint64_t base_id, planned, encoded;
    size_t str_len, rec_len;
    uint64_t bytes_out;             /* record bytes handed to the rig */
    uint64_t last_split;            /* 1 + index of the last record a message ended inside */
    fnw_buf pend;                   /* encoded, not yet sent */
    size_t pend_off;
    uint64_t outs, dups, foreign;
    double t_ended;
    int in_use, ended;
} soak_bundle;

/* Sets up sb for `planned` records of str_len-byte strings with ids from the
 * ledger; -1 when out of memory. */
int soak_bundle_init(soak_bundle *sb, const soak_profile *prof, soak_ledger *l, soak_totals *t,
                     uint64_t planned, size_t str_len, uint64_t seed);
void soak_bundle_free(soak_bundle *sb);
/* Accounts sb once it ended (ok: the rig reported success): adds to the
 * totals; returns 0, or -1 with why[] saying what broke exact-once. */
int soak_bundle_account(soak_bundle *sb, int ok, char *why, size_t n);
/* Records of sb whose bytes were all sent. */
uint64_t soak_bundle_sent(const soak_bundle *sb);

int soak_ledger_init(soak_ledger *l, uint64_t cap);
void soak_ledger_free(soak_ledger *l);

#endif
