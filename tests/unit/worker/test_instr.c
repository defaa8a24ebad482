/* tests/unit/worker/test_instr.c — the data plane's book of instruction ids: lookup
 * by hash, the early-data bounds (per instruction, in total, in number), the
 * time limits, and tombstones that stay bounded whatever ids arrive. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <stdio.h>
#include <string.h>

#include "worker/instr.h"

/* What the owner saw: every on_drop call, in order. */
typedef struct drops {
    int n;
    char ids[64][32];
    fnw_instr_why why[64];
    fnw_instr_state state[64];
} drops;

static void on_drop(void *user, fnw_instr *e)
{
    drops *d = user;
    if (d->n < 64) {
        snprintf(d->ids[d->n], sizeof d->ids[0], "%s", e->id);
        d->why[d->n] = e->why;
        d->state[d->n] = e->state;
    }
    d->n++;
}

static int marker;   /* stands for "this entry holds data" */

static fnw_instr *early(fnw_instr_book *b, const char *id, double now)
{
    fnw_instr *e = fnw_instr_get(b, id, strlen(id), now);
    ck_assert_ptr_nonnull(e);
    e->data = &marker;
    return e;
}

static fnw_instr_limits small_limits(void)
{
    fnw_instr_limits l;
    fnw_instr_limits_default(&l);
    l.early_bytes = 100;
    l.early_total = 250;
    l.early_count = 4;
    l.early_ttl_s = 10;
    l.tomb_count = 8;
    l.tomb_ttl_s = 60;
    return l;
}

START_TEST(defaults_are_documented_values)
{
    fnw_instr_limits l;
    fnw_instr_limits_default(&l);
    ck_assert_uint_eq(l.early_bytes, 4u << 20);
    ck_assert_uint_eq(l.early_total, 8u << 20);
    ck_assert_uint_eq(l.early_count, 1024);
    ck_assert(l.early_ttl_s == 30);
    ck_assert_uint_eq(l.tomb_count, 4096);
    ck_assert(l.tomb_ttl_s == 120);
    fnw_instr_book b;
    fnw_instr_limits zero = {0};
    ck_assert_int_eq(fnw_instr_init(&b, &zero, NULL, NULL), 0);
    ck_assert_uint_eq(b.lim.early_total, 8u << 20);
    fnw_instr_free(&b, NULL);
}
END_TEST

START_TEST(lookup_by_id_bytes)
{
    fnw_instr_book b;
    ck_assert_int_eq(fnw_instr_init(&b, NULL, NULL, NULL), 0);
    fnw_instr *a = fnw_instr_get(&b, "12", 2, 0);
    fnw_instr *a2 = fnw_instr_get(&b, "123", 2, 0);   /* same two bytes */
    fnw_instr *c = fnw_instr_get(&b, "123", 3, 0);
    fnw_instr *empty = fnw_instr_get(&b, "", 0, 0);
    ck_assert_ptr_eq(a, a2);
    ck_assert_ptr_ne(a, c);
    ck_assert_ptr_ne(empty, a);
    ck_assert_str_eq(a->id, "12");
    ck_assert_str_eq(c->id, "123");
    ck_assert_str_eq(empty->id, "");
    ck_assert_ptr_eq(fnw_instr_find(&b, "123", 3), c);
    ck_assert_ptr_null(fnw_instr_find(&b, "1234", 4));
    ck_assert_int_eq(a->state, FNW_INSTR_EARLY);
    fnw_instr_free(&b, NULL);
}
END_TEST

/* Thousands of live instructions: the table grows and every id is still found. */
START_TEST(table_grows_and_finds_all)
{
    fnw_instr_book b;
    ck_assert_int_eq(fnw_instr_init(&b, NULL, NULL, NULL), 0);
    char id[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(id, sizeof id, "bundle-%d", i);
        ck_assert_ptr_nonnull(fnw_instr_live(&b, id, strlen(id), 0));
    }
    ck_assert_uint_eq(b.count, 20000);
    ck_assert_uint_ge(b.n_buckets, 16384);
    for (int i = 0; i < 20000; i++) {
        snprintf(id, sizeof id, "bundle-%d", i);
        fnw_instr *e = fnw_instr_find(&b, id, strlen(id));
        ck_assert_ptr_nonnull(e);
        ck_assert_str_eq(e->id, id);
        ck_assert_int_eq(e->state, FNW_INSTR_LIVE);
    }
    fnw_instr_free(&b, NULL);
}
END_TEST

START_TEST(going_live_leaves_the_early_bounds)
{
    drops d = {0};
    fnw_instr_limits l = small_limits();
    fnw_instr_book b;
    ck_assert_int_eq(fnw_instr_init(&b, &l, on_drop, &d), 0);
    fnw_instr *e = early(&b, "7", 0);
    ck_assert_int_eq(fnw_instr_charge(&b, e, 80, 0), 0);
    ck_assert_uint_eq(b.early_bytes, 80);
    ck_assert_ptr_eq(fnw_instr_live(&b, "7", 1, 1), e);
    ck_assert_int_eq(e->state, FNW_INSTR_LIVE);
    ck_assert_uint_eq(b.early_bytes, 0);
    ck_assert_uint_eq(e->early_bytes, 0);
    ck_assert_uint_eq(b.early.n, 0);
    /* live data is the owner's to count: no bound applies here */
    ck_assert_int_eq(fnw_instr_charge(&b, e, 1000, 1), 0);
    ck_assert_uint_eq(b.early_bytes, 0);
    /* and it does not expire */
    fnw_instr_expire(&b, 1000);
    ck_assert_int_eq(e->state, FNW_INSTR_LIVE);
    ck_assert_int_eq(d.n, 0);
    fnw_instr_free(&b, NULL);
}
END_TEST

START_TEST(per_instruction_bound_drops_it)
{
    drops d = {0};
    fnw_instr_limits l = small_limits();
    fnw_instr_book b;
    ck_assert_int_eq(fnw_instr_init(&b, &l, on_drop, &d), 0);
    fnw_instr *e = early(&b, "ghost", 0);
    ck_assert_int_eq(fnw_instr_charge(&b, e, 60, 0), 0);
    ck_assert_int_eq(fnw_instr_charge(&b, e, 40, 0), 0);   /* exactly the bound */
    ck_assert_int_eq(fnw_instr_charge(&b, e, 1, 0), -1);
    ck_assert_int_eq(d.n, 1);
    ck_assert_str_eq(d.ids[0], "ghost");
    ck_assert_int_eq(d.why[0], FNW_INSTR_OVER_INSTRUCTION);
    ck_assert_int_eq(d.state[0], FNW_INSTR_EARLY);   /* the owner sees where it was counted */
    ck_assert_int_eq(e->state, FNW_INSTR_DROPPED);
    ck_assert_ptr_null(e->data);
    ck_assert_uint_eq(b.early_bytes, 0);
    ck_assert_uint_eq(b.early.n, 0);
    ck_assert_uint_eq(b.tombs.n, 1);
    /* later data for it finds the tombstone; a process_bundle does not revive it */
    ck_assert_ptr_eq(fnw_instr_get(&b, "ghost", 5, 1), e);
    ck_assert_ptr_eq(fnw_instr_live(&b, "ghost", 5, 1), e);
    ck_assert_int_eq(e->state, FNW_INSTR_DROPPED);
    ck_assert_int_eq(fnw_instr_charge(&b, e, 1, 1), 0);
    ck_assert_uint_eq(b.early_bytes, 0);
    fnw_instr_finish(&b, e, 2);
    ck_assert_int_eq(e->state, FNW_INSTR_DROPPED);
    ck_assert_int_eq(d.n, 1);
    char buf[256];
    ck_assert_ptr_nonnull(strstr(fnw_instr_why_text(&b, e->why, buf, sizeof buf), "100 bytes"));
    fnw_instr_free(&b, NULL);
}
END_TEST

START_TEST(total_bound_gives_up_the_oldest)
{
    drops d = {0};
    fnw_instr_limits l = small_limits();   /* 100 each, 250 in all */
    fnw_instr_book b;
    ck_assert_int_eq(fnw_instr_init(&b, &l, on_drop, &d), 0);
    fnw_instr *a = early(&b, "a", 0), *bb = early(&b, "b", 1), *c = early(&b, "c", 2);
    ck_assert_int_eq(fnw_instr_charge(&b, a, 100, 2), 0);
    ck_assert_int_eq(fnw_instr_charge(&b, bb, 100, 2), 0);
    ck_assert_int_eq(fnw_instr_charge(&b, c, 50, 2), 0);
    ck_assert_uint_eq(b.early_bytes, 250);
    /* c needs 30 more: a, the oldest, goes */
    ck_assert_int_eq(fnw_instr_charge(&b, c, 30, 3), 0);
    ck_assert_int_eq(d.n, 1);
    ck_assert_str_eq(d.ids[0], "a");
    ck_assert_int_eq(d.why[0], FNW_INSTR_OVER_TOTAL);
    ck_assert_int_eq(a->state, FNW_INSTR_DROPPED);
    ck_assert_int_eq(bb->state, FNW_INSTR_EARLY);
    ck_assert_uint_eq(b.early_bytes, 180);
    /* then b, the oldest now, when c needs room again */
    ck_assert_int_eq(fnw_instr_charge(&b, c, 20, 4), 0);
    fnw_instr *e = early(&b, "e", 4);
    ck_assert_int_eq(fnw_instr_charge(&b, e, 60, 4), 0);
    ck_assert_uint_eq(b.early_bytes, 160);
    ck_assert_int_eq(d.n, 2);
    ck_assert_str_eq(d.ids[1], "b");
    /* the oldest asking is not given up for itself: the next oldest goes */
    fnw_instr *f = early(&b, "f", 5);
    ck_assert_int_eq(fnw_instr_charge(&b, f, 90, 5), 0);   /* 250 */
    ck_assert_int_eq(fnw_instr_charge(&b, c, 0, 5), 0);
    fnw_instr_uncharge(&b, c, 30);
    ck_assert_uint_eq(b.early_bytes, 220);
    ck_assert_uint_eq(c->early_bytes, 70);
    ck_assert_int_eq(fnw_instr_charge(&b, c, 30, 6), 0);    /* 250: fits */
    ck_assert_int_eq(fnw_instr_charge(&b, c, 0, 6), 0);
    ck_assert_int_eq(d.n, 2);
    fnw_instr_uncharge(&b, f, 200);   /* never below zero */
    ck_assert_uint_eq(f->early_bytes, 0);
    ck_assert_uint_eq(b.early_bytes, 160);
    ck_assert_int_eq(fnw_instr_charge(&b, f, 95, 7), 0);    /* 255: c, the oldest, goes */
    ck_assert_int_eq(d.n, 3);
    ck_assert_str_eq(d.ids[2], "c");
    ck_assert_int_eq(c->state, FNW_INSTR_DROPPED);
    ck_assert_int_eq(e->state, FNW_INSTR_EARLY);
    ck_assert_uint_eq(b.early_bytes, 155);
    fnw_instr_free(&b, NULL);
}
END_TEST

START_TEST(count_bound_gives_up_the_oldest)
{
    drops d = {0};
    fnw_instr_limits l = small_limits();   /* 4 early instructions */
    fnw_instr_book b;
    ck_assert_int_eq(fnw_instr_init(&b, &l, on_drop, &d), 0);
    char id[16];
    for (int i = 0; i < 6; i++) {
        snprintf(id, sizeof id, "i%d", i);
        early(&b, id, i);
    }
    ck_assert_uint_eq(b.early.n, 4);
    ck_assert_int_eq(d.n, 2);
    ck_assert_str_eq(d.ids[0], "i0");
    ck_assert_str_eq(d.ids[1], "i1");
    ck_assert_int_eq(d.why[1], FNW_INSTR_TOO_MANY);
    ck_assert_int_eq(fnw_instr_find(&b, "i0", 2)->state, FNW_INSTR_DROPPED);
    ck_assert_int_eq(fnw_instr_find(&b, "i5", 2)->state, FNW_INSTR_EARLY);
    /* live instructions do not count against it */
    for (int i = 0; i < 10; i++) {
        snprintf(id, sizeof id, "L%d", i);
        fnw_instr_live(&b, id, strlen(id), 6);
    }
    ck_assert_int_eq(d.n, 2);
    fnw_instr_free(&b, NULL);
}
END_TEST

START_TEST(early_data_expires)
{
    drops d = {0};
    fnw_instr_limits l = small_limits();   /* 10 s */
    fnw_instr_book b;
    ck_assert_int_eq(fnw_instr_init(&b, &l, on_drop, &d), 0);
    fnw_instr *a = early(&b, "a", 100);
    fnw_instr *c = early(&b, "c", 105);
    fnw_instr *none = fnw_instr_get(&b, "nodata", 6, 105);   /* nothing held: no callback */
    fnw_instr_charge(&b, a, 10, 100);
    fnw_instr_expire(&b, 109.9);
    ck_assert_int_eq(d.n, 0);
    fnw_instr_expire(&b, 110);
    ck_assert_int_eq(d.n, 1);
    ck_assert_str_eq(d.ids[0], "a");
    ck_assert_int_eq(d.why[0], FNW_INSTR_EXPIRED);
    ck_assert_int_eq(a->state, FNW_INSTR_DROPPED);
    ck_assert_int_eq(c->state, FNW_INSTR_EARLY);
    ck_assert_uint_eq(b.early_bytes, 0);
    fnw_instr_expire(&b, 115);
    ck_assert_int_eq(d.n, 2);
    ck_assert_int_eq(none->state, FNW_INSTR_DROPPED);
    ck_assert(!fnw_instr_idle(&b));
    /* tombstones go after their own time limit */
    fnw_instr_expire(&b, 110 + 59);
    ck_assert_ptr_nonnull(fnw_instr_find(&b, "a", 1));
    fnw_instr_expire(&b, 110 + 60);
    ck_assert_ptr_null(fnw_instr_find(&b, "a", 1));
    ck_assert_ptr_nonnull(fnw_instr_find(&b, "c", 1));
    fnw_instr_expire(&b, 1000);
    ck_assert_ptr_null(fnw_instr_find(&b, "c", 1));
    ck_assert(fnw_instr_idle(&b));
    ck_assert_uint_eq(b.count, 0);
    fnw_instr_free(&b, NULL);
}
END_TEST

START_TEST(finished_instructions_are_bounded_tombstones)
{
    drops d = {0};
    fnw_instr_limits l = small_limits();   /* 8 tombstones */
    fnw_instr_book b;
    ck_assert_int_eq(fnw_instr_init(&b, &l, on_drop, &d), 0);
    char id[16];
    for (int i = 0; i < 20; i++) {
        snprintf(id, sizeof id, "f%d", i);
        fnw_instr *e = fnw_instr_live(&b, id, strlen(id), i);
        fnw_instr_finish(&b, e, i);
        ck_assert_int_eq(e->state, FNW_INSTR_DONE);
    }
    ck_assert_uint_eq(b.tombs.n, 8);
    ck_assert_uint_eq(b.count, 8);
    ck_assert_ptr_null(fnw_instr_find(&b, "f11", 3));
    ck_assert_int_eq(fnw_instr_find(&b, "f12", 3)->state, FNW_INSTR_DONE);
    ck_assert_int_eq(fnw_instr_find(&b, "f19", 3)->state, FNW_INSTR_DONE);
    /* data for a finished instruction finds DONE, not a new early entry */
    ck_assert_int_eq(fnw_instr_get(&b, "f19", 3, 20)->state, FNW_INSTR_DONE);
    ck_assert_uint_eq(b.early.n, 0);
    /* finishing an early one gives its bytes back */
    fnw_instr *e = early(&b, "x", 21);
    fnw_instr_charge(&b, e, 50, 21);
    e->data = NULL;   /* the owner released it */
    fnw_instr_finish(&b, e, 21);
    ck_assert_uint_eq(b.early_bytes, 0);
    ck_assert_int_eq(e->state, FNW_INSTR_DONE);
    ck_assert_int_eq(d.n, 0);
    fnw_instr_free(&b, NULL);
}
END_TEST

/* 200,000 distinct ids that never start: the book never holds more than the
 * early and tombstone bounds, each arrival costs constant work. */
START_TEST(a_flood_of_unknown_ids_stays_bounded)
{
    drops d = {0};
    fnw_instr_book b;
    ck_assert_int_eq(fnw_instr_init(&b, NULL, on_drop, &d), 0);
    char id[32];
    size_t most = 0;
    for (int i = 0; i < 200000; i++) {
        snprintf(id, sizeof id, "lost-%d", i);
        fnw_instr *e = early(&b, id, i * 1e-5);
        ck_assert_int_eq(fnw_instr_charge(&b, e, 0, i * 1e-5), 0);
        if (b.count > most)
            most = b.count;
    }
    ck_assert_uint_le(most, 1024 + 4096 + 1);
    ck_assert_uint_eq(b.early.n, 1024);
    ck_assert_uint_eq(b.tombs.n, 4096);
    ck_assert_int_eq(d.n, 200000 - 1024);
    ck_assert_uint_le(b.n_buckets, 8192);
    fnw_instr_expire(&b, 1e6);          /* the early ones become tombstones... */
    ck_assert_uint_eq(b.early.n, 0);
    ck_assert_uint_eq(b.count, 1024);
    fnw_instr_expire(&b, 1e6 + 120);    /* ...which go in their turn */
    ck_assert_uint_eq(b.count, 0);
    fnw_instr_free(&b, NULL);
}
END_TEST

static int released;

static void release(void *user, fnw_instr *e)
{
    released++;
}

START_TEST(free_releases_entries_with_data)
{
    fnw_instr_book b;
    ck_assert_int_eq(fnw_instr_init(&b, NULL, NULL, NULL), 0);
    early(&b, "a", 0);
    early(&b, "b", 0);
    fnw_instr_live(&b, "c", 1, 0);
    released = 0;
    fnw_instr_free(&b, release);
    ck_assert_int_eq(released, 2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("instr");
    TCase *t = tcase_create("book");
    tcase_add_test(t, defaults_are_documented_values);
    tcase_add_test(t, lookup_by_id_bytes);
    tcase_add_test(t, table_grows_and_finds_all);
    tcase_add_test(t, going_live_leaves_the_early_bounds);
    tcase_add_test(t, per_instruction_bound_drops_it);
    tcase_add_test(t, total_bound_gives_up_the_oldest);
    tcase_add_test(t, count_bound_gives_up_the_oldest);
    tcase_add_test(t, early_data_expires);
    tcase_add_test(t, finished_instructions_are_bounded_tombstones);
    tcase_add_test(t, a_flood_of_unknown_ids_stays_bounded);
    tcase_add_test(t, free_releases_entries_with_data);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
