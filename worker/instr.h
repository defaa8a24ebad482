/* worker/instr.h — the data plane's book of instruction ids.
 *
 * Every instruction id the data plane has heard of has one entry, found by
 * hash in constant time, in one of four states:
 *
 *   EARLY    data arrived before the instruction's process_bundle request.
 *            Its bytes are charged against bounds (per instruction, in total,
 *            number of early instructions) and it may wait only so long;
 *            past a bound or the time limit its data is dropped.
 *   LIVE     its process_bundle arrived: a bundle reads, or will read, the
 *            data (the owner counts those bytes against its own limit).
 *   DONE     finished or failed: data that still arrives is dropped.
 *   DROPPED  its early data was given up; a bundle that starts for it must
 *            fail, saying why (see fnw_instr_why_text()).
 *
 * DONE and DROPPED entries are tombstones: kept in arrival order, at most
 * tomb_count of them and for at most tomb_ttl_s, so the book stays bounded
 * whatever ids arrive. Early entries are kept in arrival order too, so the
 * oldest is the one given up first.
 *
 * The entry carries a pointer for the owner's data (the inboxes holding the
 * bytes); when the book gives early data up it calls on_drop so the owner
 * frees that data, then turns the entry into a tombstone. Pure bookkeeping:
 * no I/O and no clock of its own (callers pass the time in seconds).
 */
#ifndef FNW_INSTR_H
#define FNW_INSTR_H

#include <stddef.h>
#include <stdint.h>

typedef enum fnw_instr_state {
    FNW_INSTR_EARLY,
    FNW_INSTR_LIVE,
    FNW_INSTR_DONE,
    FNW_INSTR_DROPPED,
} fnw_instr_state;

/* Why an instruction's early data was dropped. */
typedef enum fnw_instr_why {
    FNW_INSTR_KEPT = 0,
    FNW_INSTR_OVER_INSTRUCTION, /* more than early_bytes for it */
    FNW_INSTR_OVER_TOTAL,       /* more than early_total over all early instructions */
    FNW_INSTR_TOO_MANY,         /* more than early_count early instructions */
    FNW_INSTR_EXPIRED,          /* no process_bundle within early_ttl_s */
    FNW_INSTR_NO_MEMORY,        /* the owner could not hold it */
} fnw_instr_why;

typedef struct fnw_instr {
    struct fnw_instr *hnext;         /* hash chain */
    struct fnw_instr *qprev, *qnext; /* early queue or tombstone queue */
    uint64_t hash;
    fnw_instr_state state;
    fnw_instr_why why;  /* DROPPED: why */
    int queued;         /* in one of the two queues */
    double since;       /* when it entered its queue */
    size_t early_bytes; /* EARLY: bytes charged to the early bounds */
    size_t input_bytes; /* the owner's count of input received (for messages) */
    void *data;         /* the owner's (its inboxes); NULL when none */
    int relayed;        /* the owner's: its entries go to the relay */
    size_t id_len;
    char id[]; /* NUL-terminated */
} fnw_instr;

typedef struct fnw_instr_limits {
    size_t early_bytes; /* per early instruction */
    size_t early_total; /* over all early instructions (>= early_bytes) */
    size_t early_count; /* early instructions at once */
    double early_ttl_s; /* how long early data waits for its process_bundle */
    size_t tomb_count;  /* DONE/DROPPED entries remembered */
    double tomb_ttl_s;  /* and for how long */
} fnw_instr_limits;

typedef struct fnw_instr_queue {
    fnw_instr *head, *tail; /* oldest first */
    size_t n;
} fnw_instr_queue;

/* The owner frees e's data (e->state still tells where it was counted);
 * e->why says why. It may give charged bytes back (fnw_instr_uncharge) but
 * must not otherwise call into the book. */
typedef void (*fnw_instr_drop_cb)(void *user, fnw_instr *e);

typedef struct fnw_instr_book {
    fnw_instr_limits lim;
    fnw_instr **buckets;
    size_t n_buckets; /* a power of two */
    size_t count;     /* entries in the table */
    fnw_instr_queue early, tombs;
    size_t early_bytes; /* charged over all EARLY entries */
    fnw_instr_drop_cb on_drop;
    void *user;
} fnw_instr_book;

/* 4 MiB per instruction, 8 MiB in total, 1024 instructions, 30 s; 4096
 * tombstones for 120 s. */
void fnw_instr_limits_default(fnw_instr_limits *l);

/* -1 when out of memory. Zero limits take the defaults. */
int fnw_instr_init(fnw_instr_book *b, const fnw_instr_limits *lim, fnw_instr_drop_cb on_drop, void *user);
/* Frees every entry; free_data (may be NULL) first runs for each entry that
 * still has data, so the owner can free it. */
void fnw_instr_free(fnw_instr_book *b, void (*free_data)(void *user, fnw_instr *e));

fnw_instr *fnw_instr_find(const fnw_instr_book *b, const char *id, size_t len);

/* The entry for id; a new one is EARLY (the oldest early entry is dropped
 * first when early_count are already waiting). NULL when out of memory. */
fnw_instr *fnw_instr_get(fnw_instr_book *b, const char *id, size_t len, double now);

/* id's process_bundle arrived: a new or EARLY entry becomes LIVE (its early
 * bytes leave the early bounds; the owner now counts them). DONE and DROPPED
 * entries stay as they are. NULL when out of memory. */
fnw_instr *fnw_instr_live(fnw_instr_book *b, const char *id, size_t len, double now);

/* Charges n more held bytes to EARLY e. 0: kept. -1: e went over its bound,
 * was dropped (on_drop ran, e is DROPPED) and the caller drops the n bytes
 * too. Older early entries may be dropped to stay within early_total. Other
 * states: 0, nothing charged. */
int fnw_instr_charge(fnw_instr_book *b, fnw_instr *e, size_t n, double now);
/* Gives back n bytes charged to EARLY e. */
void fnw_instr_uncharge(fnw_instr_book *b, fnw_instr *e, size_t n);

/* Gives EARLY or LIVE e's data up: on_drop runs, e becomes a DROPPED
 * tombstone. Tombstones are left alone. */
void fnw_instr_drop(fnw_instr_book *b, fnw_instr *e, fnw_instr_why why, double now);

/* The instruction is over (the owner has released its data): e becomes a
 * DONE tombstone; a DROPPED one stays DROPPED. */
void fnw_instr_finish(fnw_instr_book *b, fnw_instr *e, double now);

/* Drops early entries older than early_ttl_s and forgets tombstones older
 * than tomb_ttl_s. */
void fnw_instr_expire(fnw_instr_book *b, double now);

/* Nothing is waiting to expire (no early entries, no tombstones). */
int fnw_instr_idle(const fnw_instr_book *b);

/* "more than the early-data bound of 4194304 bytes for one instruction", ... */
const char *fnw_instr_why_text(const fnw_instr_book *b, fnw_instr_why why, char *buf, size_t n);

#endif
