/* tests/unit/ops/test_tensor_fuzz.c — the response splitter against many
 * mutated responses (fixed seed, so every run is the same): shapes with
 * odd, negative, zero and huge dimensions, raw contents cut short or padded,
 * BYTES length headers rewritten, raw entries missing, datatypes swapped,
 * typed lists of the wrong length. Every response must either unpack or
 * fail with a message, and never read outside its bytes: the raw contents
 * are heap copies of exactly their length, so `make sanitize` (ASan) and
 * valgrind catch any read past them. Also asserts that the valid response
 * still unpacks after each round, so the mutations are not all rejected by
 * one early check. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kserve/tensor/tensor.h"
#include "tests/unit/check_run.h"
#include "tests/unit/tensor_build.h"

static uint64_t g_seed = 0x9e3779b97f4a7c15u;

static uint32_t rnd(uint32_t n)
{
    g_seed = g_seed * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(g_seed >> 33) % n;
}

static const int64_t DIMS[] = { -1, 0, 1, 2, 3, 4, 5, INT64_C(1) << 31, INT64_C(1) << 40, INT64_MAX, INT64_MIN };

/* The valid answer for 3 rows of: y FP32 [3,2], label BYTES [3], n INT64 [3]. */
static uint8_t Y[24], LABEL[3 * 4 + 6], N[24];

static void valid(tb_resp *b)
{
    tb_init(b);
    for (int i = 0; i < 6; i++)
        lef32(Y + 4 * i, (float)i);
    static const char *s[3] = { "ab", "", "cdef" };
    uint8_t *p = LABEL;
    for (int i = 0; i < 3; i++) {
        le32(p, (uint32_t)strlen(s[i]));
        memcpy(p + 4, s[i], strlen(s[i]));
        p += 4 + strlen(s[i]);
    }
    for (int i = 0; i < 3; i++)
        memcpy(N + 8 * i, &(int64_t){ i * 10 }, 8);
    tb_add(b, "y", "FP32", 2, (int64_t[]){ 3, 2 }, Y, sizeof Y);
    tb_add(b, "label", "BYTES", 1, (int64_t[]){ 3 }, LABEL, sizeof LABEL);
    tb_add(b, "n", "INT64", 1, (int64_t[]){ 3 }, N, sizeof N);
}

/* One mutation of b; raw entries become exact-size heap copies in copies[]. */
static void mutate(tb_resp *b, uint8_t *copies[3])
{
    int k = (int)rnd(3);
    switch (rnd(7)) {
    case 0:
        if (b->t[k].n_shape)
            b->shape[k][rnd((uint32_t)b->t[k].n_shape)] = DIMS[rnd(sizeof DIMS / sizeof *DIMS)];
        break;
    case 1: b->t[k].n_shape = rnd(4); break;
    case 2: b->raw[k].len = rnd((uint32_t)b->raw[k].len + 8); break;
    case 3: le32(LABEL + 4 * rnd(3), rnd(2) ? rnd(64) : 0xfffffff0u); break;
    case 4: b->r.n_raw_output_contents = rnd(4); break;
    case 5: b->t[k].datatype = rnd(2) ? "FP64" : "BYTES"; break;
    default: b->t[k].name = rnd(2) ? "y" : "zz"; break;
    }
    for (int i = 0; i < 3; i++) {
        size_t len = b->raw[i].len;
        copies[i] = malloc(len ? len : 1);
        /* bytes past the original buffer (a padded entry) are zeros */
        const uint8_t *src = i == 0 ? Y : i == 1 ? LABEL : N;
        size_t have = i == 0 ? sizeof Y : i == 1 ? sizeof LABEL : sizeof N;
        memset(copies[i], 0, len ? len : 1);
        memcpy(copies[i], src, len < have ? len : have);
        b->raw[i].data = copies[i];
    }
}

START_TEST(test_mutated_responses)
{
    fnw_type *in = R(1, "id", T(FNW_LONG));
    fnw_type *out = R(4, "id", T(FNW_LONG), "y", C(FNW_LIST, T(FNW_FLOAT)), "label", T(FNW_STRING), "n",
                      T(FNW_INT));
    fnw_tensor_plan *p = tb_plan(in, out, "id=id", "y=y, label:BYTES=label, n:INT64=n");
    fnw_arena a;
    fnw_arena_init(&a, 0, 64u << 20);
    int ok = 0, failed = 0;
    for (int round = 0; round < 3000; round++) {
        tb_resp b;
        valid(&b);
        uint8_t *copies[3];
        int muts = 1 + (int)rnd(3);
        for (int m = 0; m < muts; m++) {
            if (m)
                for (int i = 0; i < 3; i++)
                    free(copies[i]);
            mutate(&b, copies);
        }
        fnw_value vals[9];
        fnw_error err = { "" };
        if (fnw_tensor_unpack(p, &b.r, 3, &a, vals, &err) == 0) {
            ok++;
        } else {
            ck_assert_msg(err.msg[0] != '\0', "round %d failed without a message", round);
            failed++;
        }
        for (int i = 0; i < 3; i++)
            free(copies[i]);
        fnw_arena_reset(&a);
    }
    ck_assert_int_gt(failed, 1000);   /* most mutations break the response ... */
    ck_assert_int_gt(ok, 10);         /* ... some leave it valid (a no-op mutation) */
    tb_resp b;
    valid(&b);
    fnw_value vals[9];
    fnw_error err;
    ck_assert_msg(fnw_tensor_unpack(p, &b.r, 3, &a, vals, &err) == 0, "%s", err.msg);
    ck_assert(vals[5].count == 4 && vals[4].count == 0 && memcmp(vals[5].u.bytes, "cdef", 4) == 0 && vals[8].u.i == 20);
    fnw_arena_free(&a);
    fnw_tensor_plan_free(p);
    fnw_type_free(in);
    fnw_type_free(out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tensor_fuzz");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_mutated_responses);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
