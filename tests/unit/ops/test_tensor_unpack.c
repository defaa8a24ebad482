/* tests/unit/ops/test_tensor_unpack.c — splitting ModelInfer responses back
 * into rows: raw_output_contents and typed contents give the same values,
 * output rows carry the results and the copied input fields, and hostile
 * responses (wrong dimension 0, short or long raw contents, BYTES lengths
 * past the end, huge shapes and shape products that overflow, missing
 * outputs or raw entries, wrong datatypes, out-of-range values) fail with
 * a message naming the tensor and what is wrong, without reading past the
 * bytes or allocating what the shape claims. */
#include <check.h>
#include <string.h>

#include "ops/kserve/tensor/tensor.h"
#include "tests/unit/check_run.h"
#include "tests/unit/tensor_build.h"

static fnw_type *in_type(void)
{
    return R(2, "id", T(FNW_LONG), "x", T(FNW_FLOAT));
}

/* ROW<id LONG, score DOUBLE, probs BASIC_ARRAY<FLOAT>, label STRING, half PRIMITIVE_ARRAY<BYTE>, count INT> */
static fnw_type *out_type(void)
{
    return R(6, "id", T(FNW_LONG), "score", T(FNW_DOUBLE), "probs", C(FNW_BASIC_ARRAY, T(FNW_FLOAT)), "label",
             T(FNW_STRING), "half", C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)), "count", T(FNW_INT));
}

static const char *OUTS = "s:FP64[1]=score, p=probs, label=label, h:FP16[2]=half, c:INT64=count";

typedef struct fixture {
    fnw_type *in, *out;
    fnw_tensor_plan *p;
    fnw_arena a;
    tb_resp b;
    uint8_t s[16], pr[24], label[15], h[8], c[16];
    fnw_value vals[5 * 2];
} fixture;

static fixture F;

static void setup_with(fnw_type *out, const char *outs)
{
    F.in = in_type();
    F.out = out;
    F.p = tb_plan(F.in, F.out, "x=x", outs);
    fnw_arena_init(&F.a, 0, 0);
    tb_init(&F.b);
}

static void setup(const char *outs)
{
    setup_with(out_type(), outs);
}

static void teardown(void)
{
    fnw_arena_free(&F.a);
    fnw_tensor_plan_free(F.p);
    fnw_type_free(F.in);
    fnw_type_free(F.out);
}

/* The raw response for two rows. */
static void raw_response(void)
{
    double s[2] = { 0.25, -1.5 };
    int64_t c[2] = { 5, -7 };
    memcpy(F.s, s, 16);
    memcpy(F.c, c, 16);
    for (int i = 0; i < 6; i++)
        lef32(F.pr + 4 * i, (float)i / 2);
    memcpy(F.label, "\4\0\0\0spam\3\0\0\0ham", 15);
    memcpy(F.h, "\x00\x3c\x00\x40\x00\xc0\x00\x00", 8);
    tb_add(&F.b, "c", "INT64", 1, (int64_t[]){ 2 }, F.c, 16);   /* order differs from the plan's */
    tb_add(&F.b, "s", "FP64", 2, (int64_t[]){ 2, 1 }, F.s, 16);
    tb_add(&F.b, "p", "FP32", 2, (int64_t[]){ 2, 3 }, F.pr, 24);
    tb_add(&F.b, "label", "BYTES", 1, (int64_t[]){ 2 }, F.label, 15);
    tb_add(&F.b, "h", "FP16", 2, (int64_t[]){ 2, 2 }, F.h, 8);
}

static void expect_values(void)
{
    fnw_error err;
    ck_assert_msg(fnw_tensor_unpack(F.p, &F.b.r, 2, &F.a, F.vals, &err) == 0, "%s", err.msg);
    fnw_value *v = F.vals;   /* v[k * 2 + i]: output k, row i */
    ck_assert(v[0].kind == FNW_DOUBLE && v[0].u.d == 0.25 && v[1].u.d == -1.5);
    ck_assert_int_eq(v[2].kind, FNW_BASIC_ARRAY);
    ck_assert_uint_eq(v[3].count, 3);
    ck_assert(v[3].u.items[0].kind == FNW_FLOAT && v[3].u.items[0].u.f == 1.5f && v[3].u.items[2].u.f == 2.5f);
    ck_assert(v[4].kind == FNW_STRING && v[4].count == 4 && memcmp(v[4].u.bytes, "spam", 4) == 0);
    ck_assert(v[5].count == 3 && memcmp(v[5].u.bytes, "ham", 3) == 0);
    ck_assert(v[7].kind == FNW_PRIMITIVE_ARRAY && v[7].count == 4 && memcmp(v[7].u.bytes, "\x00\xc0\x00\x00", 4) == 0);
    ck_assert(v[8].kind == FNW_INT && v[8].u.i == 5 && v[9].u.i == -7);
}

START_TEST(test_raw_contents)
{
    setup(OUTS);
    raw_response();
    expect_values();
    /* output row 1: id copied from the input, the rest from the tensors */
    fnw_value f[2] = { fnw_value_int(FNW_LONG, 42), fnw_value_float(1) };
    fnw_value in_row = fnw_value_row(FNW_UPDATE_AFTER, f, 2), row;
    fnw_error err;
    ck_assert_msg(fnw_tensor_unpack_row(F.p, &in_row, F.vals, 2, 1, &F.a, &row, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(row.count, 6);
    ck_assert_int_eq(row.row_kind, FNW_UPDATE_AFTER);
    ck_assert_int_eq(row.u.items[0].u.i, 42);
    ck_assert(row.u.items[1].u.d == -1.5);
    ck_assert_uint_eq(row.u.items[2].count, 3);
    ck_assert_uint_eq(row.u.items[3].count, 3);
    ck_assert_int_eq(row.u.items[5].u.i, -7);
    teardown();
}
END_TEST

START_TEST(test_typed_contents)
{
    setup_with(R(5, "id", T(FNW_LONG), "score", T(FNW_DOUBLE), "probs", C(FNW_BASIC_ARRAY, T(FNW_FLOAT)), "label",
                 T(FNW_STRING), "count", T(FNW_INT)),
               "s:FP64[1]=score, p=probs, label=label, c:INT64=count");
    double s[2] = { 0.25, -1.5 };
    float pr[6] = { 0, 0.5f, 1, 1.5f, 2, 2.5f };
    int64_t c[2] = { 5, -7 };
    ProtobufCBinaryData lb[2] = { { 4, (uint8_t *)"spam" }, { 3, (uint8_t *)"ham" } };
    tb_add(&F.b, "s", "FP64", 2, (int64_t[]){ 2, 1 }, NULL, 0)->contents->fp64_contents = s;
    F.b.c[0].n_fp64_contents = 2;
    tb_add(&F.b, "p", "FP32", 2, (int64_t[]){ 2, 3 }, NULL, 0)->contents->fp32_contents = pr;
    F.b.c[1].n_fp32_contents = 6;
    tb_add(&F.b, "label", "BYTES", 1, (int64_t[]){ 2 }, NULL, 0)->contents->bytes_contents = lb;
    F.b.c[2].n_bytes_contents = 2;
    tb_add(&F.b, "c", "INT64", 1, (int64_t[]){ 2 }, NULL, 0)->contents->int64_contents = c;
    F.b.c[3].n_int64_contents = 2;
    fnw_error err;
    ck_assert_msg(fnw_tensor_unpack(F.p, &F.b.r, 2, &F.a, F.vals, &err) == 0, "%s", err.msg);
    fnw_value *v = F.vals;
    ck_assert(v[1].u.d == -1.5 && v[3].u.items[2].u.f == 2.5f);
    ck_assert(v[4].count == 4 && memcmp(v[4].u.bytes, "spam", 4) == 0);
    ck_assert(v[6].u.i == 5 && v[7].u.i == -7);
    /* a count that does not match the shape */
    F.b.c[1].n_fp32_contents = 5;
    ck_assert_int_eq(fnw_tensor_unpack(F.p, &F.b.r, 2, &F.a, F.vals, &err), -1);
    ck_assert_str_eq(err.msg, "output tensor 'p': its contents have 5 FP32 elements but its shape needs 6");
    teardown();
}
END_TEST

static void expect_unpack_error(size_t n, const char *want)
{
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_tensor_unpack(F.p, &F.b.r, n, &F.a, F.vals, &err), -1);
    ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'", err.msg, want);
}

START_TEST(test_hostile_shapes)
{
    setup(OUTS);
    raw_response();
    expect_unpack_error(3, "output tensor 's' has shape [2,1]: dimension 0 is 2 but the batch has 3 rows");
    F.b.shape[1][1] = 2;   /* s: [2,2] where one row's shape is [1] */
    expect_unpack_error(2, "output tensor 's' has shape [2,2]; one row's shape must be [1]");
    F.b.shape[1][1] = 1;
    F.b.t[1].n_shape = 1;
    expect_unpack_error(2, "output tensor 's' has shape [2]: 1 dimensions, expected 2");
    F.b.t[1].n_shape = 2;
    F.b.shape[2][1] = INT64_C(1) << 40;   /* p: [2, 2^40] backed by 24 bytes: refused, not allocated */
    expect_unpack_error(2, "output tensor 'p': raw contents are 24 bytes but 2199023255552 FP32 elements need "
                           "8796093022208");
    F.b.shape[2][1] = INT64_MAX / 2;      /* the product overflows */
    expect_unpack_error(2, "output tensor 'p' has shape [2,4611686018427387903], too large to be real");
    F.b.shape[2][1] = -3;
    expect_unpack_error(2, "output tensor 'p' has shape [2,-3]; one row's shape must be [-1]");
    F.b.shape[2][1] = 3;
    F.b.shape[3][0] = INT64_C(1) << 40;   /* BYTES: a count the bytes cannot hold */
    expect_unpack_error(2, "dimension 0 is 1099511627776 but the batch has 2 rows");
    teardown();
}
END_TEST

START_TEST(test_hostile_contents)
{
    setup(OUTS);
    raw_response();
    F.b.raw[1].len = 15;
    expect_unpack_error(2, "output tensor 's': raw contents are 15 bytes but 2 FP64 elements need 16");
    F.b.raw[1].len = 17;
    expect_unpack_error(2, "output tensor 's': raw contents are 17 bytes but 2 FP64 elements need 16");
    F.b.raw[1].len = 16;
    le32(F.label + 8, 4);   /* "ham" claims 4 bytes */
    expect_unpack_error(2, "output tensor 'label': BYTES element 1 says 4 bytes, past the end of the raw contents");
    le32(F.label + 8, 0xffffffffu);
    expect_unpack_error(2, "BYTES element 1 says 4294967295 bytes, past the end");
    le32(F.label + 8, 2);
    expect_unpack_error(2, "output tensor 'label': raw contents have 1 bytes after its 2 elements");
    le32(F.label + 8, 3);
    F.b.raw[3].len = 10;
    expect_unpack_error(2, "output tensor 'label': raw contents end inside element 1's length");
    F.b.raw[3].len = 15;
    F.b.t[4].datatype = "FP32";
    expect_unpack_error(2, "output tensor 'h' is FP32; the option 'outputs' says FP16");
    F.b.t[4].datatype = "FP16";
    F.b.r.n_raw_output_contents = 4;   /* h has no raw entry */
    expect_unpack_error(2, "output tensor 'h' has no raw contents (the response has 4 for 5 outputs)");
    F.b.r.n_raw_output_contents = 0;   /* typed contents absent */
    expect_unpack_error(2, "output tensor 's': its contents have 0 FP64 elements but its shape needs 2");
    F.b.r.n_raw_output_contents = 5;
    F.b.t[0].name = "other";
    expect_unpack_error(2, "the response has no output tensor 'c' (it has 5 outputs)");
    F.b.t[0].name = "c";
    int64_t big[2] = { INT64_C(1) << 40, 0 };   /* INT64 into an INT field */
    memcpy(F.c, big, 16);
    expect_unpack_error(2, "output tensor 'c', element 0: the INT64 value 1099511627776 does not fit INT");
    teardown();
}
END_TEST

START_TEST(test_typed_ranges)
{
    F.in = in_type();
    F.out = R(3, "id", T(FNW_LONG), "b", T(FNW_BYTE), "u", T(FNW_LONG));
    F.p = tb_plan(F.in, F.out, "x=x", "b:INT8=b, u:UINT64=u");
    fnw_arena_init(&F.a, 0, 0);
    tb_init(&F.b);
    int32_t b[1] = { 300 };
    uint64_t u[1] = { UINT64_MAX };
    tb_add(&F.b, "b", "INT8", 1, (int64_t[]){ 1 }, NULL, 0)->contents->int_contents = b;
    F.b.c[0].n_int_contents = 1;
    tb_add(&F.b, "u", "UINT64", 1, (int64_t[]){ 1 }, NULL, 0)->contents->uint64_contents = u;
    F.b.c[1].n_uint64_contents = 1;
    expect_unpack_error(1, "output tensor 'b': element 0 (300) is out of INT8's range");
    b[0] = -128;
    expect_unpack_error(1, "output tensor 'u', element 0: the UINT64 value 18446744073709551615 does not fit LONG");
    u[0] = 9;
    fnw_error err;
    ck_assert_msg(fnw_tensor_unpack(F.p, &F.b.r, 1, &F.a, F.vals, &err) == 0, "%s", err.msg);
    ck_assert(F.vals[0].kind == FNW_BYTE && F.vals[0].u.i == -128 && F.vals[1].u.i == 9);
    teardown();
}
END_TEST

START_TEST(test_raw_only_and_typed_bytes)
{
    /* FP16 travels only as raw bytes; INT8 typed contents into a raw-bytes field are narrowed */
    setup_with(R(3, "id", T(FNW_LONG), "half", C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE)), "pix",
                 C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE))), "h:FP16[2]=half, q:INT8[2]=pix");
    int32_t q[4] = { 1, -1, 127, -128 };
    tb_add(&F.b, "h", "FP16", 2, (int64_t[]){ 2, 2 }, NULL, 0);
    tb_add(&F.b, "q", "INT8", 2, (int64_t[]){ 2, 2 }, NULL, 0)->contents->int_contents = q;
    F.b.c[1].n_int_contents = 4;
    expect_unpack_error(2, "output tensor 'h' is FP16, which only raw contents carry; the response has none");
    tb_init(&F.b);
    uint8_t h[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, qr[4] = { 1, 0xff, 0x7f, 0x80 };
    tb_add(&F.b, "h", "FP16", 2, (int64_t[]){ 2, 2 }, h, 8);
    tb_add(&F.b, "q", "INT8", 2, (int64_t[]){ 2, 2 }, qr, 4);
    fnw_error err;
    ck_assert_msg(fnw_tensor_unpack(F.p, &F.b.r, 2, &F.a, F.vals, &err) == 0, "%s", err.msg);
    ck_assert(F.vals[1].count == 4 && memcmp(F.vals[1].u.bytes, h + 4, 4) == 0);
    ck_assert(F.vals[3].count == 2 && memcmp(F.vals[3].u.bytes, qr + 2, 2) == 0);
    teardown();
    setup_with(R(2, "id", T(FNW_LONG), "pix", C(FNW_PRIMITIVE_ARRAY, T(FNW_BYTE))), "q:INT8[2]=pix");
    tb_add(&F.b, "q", "INT8", 2, (int64_t[]){ 2, 2 }, NULL, 0)->contents->int_contents = q;
    F.b.c[0].n_int_contents = 4;
    ck_assert_msg(fnw_tensor_unpack(F.p, &F.b.r, 2, &F.a, F.vals, &err) == 0, "%s", err.msg);
    ck_assert(F.vals[0].count == 2 && memcmp(F.vals[0].u.bytes, qr, 2) == 0);
    ck_assert(F.vals[1].count == 2 && memcmp(F.vals[1].u.bytes, qr + 2, 2) == 0);
    teardown();
}
END_TEST

/* protobuf-c leaves the data of empty contents NULL: an empty tensor or an
 * empty BYTES element unpacks to empty values whose bytes are never NULL
 * (found by tests/fuzz/fuzz_kserve_response.c under UBSan). */
START_TEST(test_empty_contents)
{
    setup_with(R(3, "id", T(FNW_LONG), "tags", C(FNW_BASIC_ARRAY, T(FNW_STRING)), "label", T(FNW_STRING)),
               "t:BYTES=tags, label:BYTES=label");
    uint8_t two_empty[8] = { 0 };
    tb_add(&F.b, "t", "BYTES", 2, (int64_t[]){ 2, 0 }, two_empty, 0);
    F.b.raw[0].data = NULL;
    tb_add(&F.b, "label", "BYTES", 1, (int64_t[]){ 2 }, two_empty, 8);
    fnw_error err;
    ck_assert_msg(fnw_tensor_unpack(F.p, &F.b.r, 2, &F.a, F.vals, &err) == 0, "%s", err.msg);
    ck_assert(F.vals[0].count == 0 && F.vals[1].count == 0);
    ck_assert(F.vals[2].count == 0 && F.vals[2].u.bytes != NULL && F.vals[3].count == 0);
    tb_init(&F.b);
    ProtobufCBinaryData none[2] = { { 0, NULL }, { 0, NULL } };
    tb_add(&F.b, "t", "BYTES", 2, (int64_t[]){ 2, 0 }, NULL, 0);
    tb_add(&F.b, "label", "BYTES", 1, (int64_t[]){ 2 }, NULL, 0)->contents->bytes_contents = none;
    F.b.c[1].n_bytes_contents = 2;
    ck_assert_msg(fnw_tensor_unpack(F.p, &F.b.r, 2, &F.a, F.vals, &err) == 0, "%s", err.msg);
    ck_assert(F.vals[2].count == 0 && F.vals[2].u.bytes != NULL);
    ck_assert(F.vals[3].count == 0 && F.vals[3].u.bytes != NULL);
    teardown();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tensor_unpack");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_raw_contents);
    tcase_add_test(tc, test_typed_contents);
    tcase_add_test(tc, test_hostile_shapes);
    tcase_add_test(tc, test_hostile_contents);
    tcase_add_test(tc, test_typed_ranges);
    tcase_add_test(tc, test_raw_only_and_typed_bytes);
    tcase_add_test(tc, test_empty_contents);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
