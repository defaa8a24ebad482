/* tests/unit/codecs/test_pickle_const.c — the reader of the SQL constants
 * Flink's Table runner passes to Python functions (inputConstant: a type
 * byte and a razorvine pickle). The fixtures are real bytes: Flink 2.3's
 * planner (CommonPythonUtil.convertLiteralToPython on Calcite literals) and
 * PythonBridgeUtils.pickleValue, written by
 * scripts/gen-pickle-const-fixtures.sh (Flink 1.20 writes the same bytes),
 * each shown decoded by PyFlink's own _parse_constant_value there. Every
 * fixture reads as the value and type pickle_const.h promises; each one cut
 * short or padded is refused; hand-made near misses (other opcodes,
 * globals, lengths, type bytes, integers wider than 64 bits) are refused
 * with a message naming what was wrong. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <float.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/arena.h"
#include "codecs/pickle_const.h"
#include "codecs/ser.h"
#include "codecs/type.h"
#include "codecs/type.h"

typedef struct fixture {
    const char *name;
    fnw_kind kind;
    int is_null;
    int64_t i;
    double d;
    const char *text; /* STRING, BIG_DEC, bytes; NULL for char_300 (built below) */
    size_t text_len;
    const char *hex;
} fixture;

#define LONG(v) FNW_LONG, 0, (v), 0, NULL, 0
#define INTK(k, v) k, 0, (v), 0, NULL, 0
#define BOOL(v) FNW_BOOLEAN, 0, (v), 0, NULL, 0
#define DOUBLE(v) FNW_DOUBLE, 0, 0, (v), NULL, 0
#define DEC(s) FNW_BIG_DEC, 0, 0, 0, s, sizeof(s) - 1
#define STR(s) FNW_STRING, 0, 0, 0, s, sizeof(s) - 1
#define BYTES(s) FNW_PRIMITIVE_ARRAY, 0, 0, 0, s, sizeof(s) - 1
#define NUL() FNW_STRING, 1, 0, 0, NULL, 0
#define STR300() FNW_STRING, 0, 0, 0, NULL, 300 /* "abc...xyzabc..." */

/* Regenerate (and compare with this table) with:
 *   sh scripts/gen-pickle-const-fixtures.sh --sql
 * The sql_* cases are the bytes a real Flink SQL query sent for the literal
 * named in tests/fixtures/pickle_const/sql_literals.py; the others come from
 * GenPickleConst.java (the planner's convertLiteralToPython on a Calcite
 * literal, or value_*: PythonBridgeUtils.pickleValue on a Java value). */
static const fixture fixtures[] = {
    { "tinyint_7", LONG(7), "0080024b072e" },
    { "tinyint_min", LONG(-128), "0080024a80ffffff2e" },
    { "smallint_300", LONG(300), "0080024d2c012e" },
    { "smallint_min", LONG(-32768), "0080024a0080ffff2e" },
    { "int_0", LONG(0), "0080024b002e" },
    { "int_255", LONG(255), "0080024bff2e" },
    { "int_256", LONG(256), "0080024d00012e" },
    { "int_65535", LONG(65535), "0080024dffff2e" },
    { "int_65536", LONG(65536), "0080024a000001002e" },
    { "int_neg1", LONG(-1), "0080024affffffff2e" },
    { "int_max", LONG(2147483647), "0080024affffff7f2e" },
    { "int_min", LONG(-2147483647 - 1), "0080024a000000802e" },
    { "bigint_42", LONG(42), "0080024b2a2e" },
    { "bigint_neg5", LONG(-5), "0080024afbffffff2e" },
    { "bigint_2p31", LONG(2147483648LL), "00800249323134373438333634380a2e" },
    { "bigint_neg2p31m1", LONG(-2147483649LL), "008002492d323134373438333634390a2e" },
    { "bigint_1e12", LONG(1000000000000LL), "00800249313030303030303030303030300a2e" },
    { "bigint_max", LONG(INT64_MAX), "00800249393232333337323033363835343737353830370a2e" },
    { "bigint_min", LONG(INT64_MIN), "008002492d393232333337323033363835343737353830380a2e" },
    { "float_1_5", DOUBLE(1.5), "008002473ff80000000000002e" },
    { "float_0_1", DOUBLE((double)0.1f), "008002473fb99999a00000002e" },
    { "double_0_5", DOUBLE(0.5), "008002473fe00000000000002e" },
    { "double_neg_1e300", DOUBLE(-1e300), "00800247fe37e43c8800759c2e" },
    { "decimal_1_50", DEC("1.50"),
      "00800263646563696d616c0a446563696d616c0a5804000000312e35307100855271012e" },
    { "decimal_neg_0_001", DEC("-0.001"),
      "00800263646563696d616c0a446563696d616c0a58060000002d302e3030317100855271012e" },
    { "decimal_1e3", DEC("1E+3"), "00800263646563696d616c0a446563696d616c0a580400000031452b337100855271012e" },
    { "decimal_38", DEC("12345678901234567890123456789012345678"),
      "00800263646563696d616c0a446563696d616c0a58260000003132333435363738393031323334353637383930313233"
      "3435363738393031323334353637387100855271012e" },
    { "bool_true", BOOL(1), "008002882e" },
    { "bool_false", BOOL(0), "008002892e" },
    { "char_abc", STR("abc"), "008002580300000061626371002e" },
    { "char_empty", STR(""), "008002580000000071002e" },
    { "char_utf8", STR("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"),
      "008002580f00000068c3a96c6c6f20e282ac20f09f988071002e" },
    { "char_300", STR300(),
      "008002582c0100006162636465666768696a6b6c6d6e6f707172737475767778797a6162636465666768696a6b6c6d6e"
      "6f707172737475767778797a6162636465666768696a6b6c6d6e6f707172737475767778797a6162636465666768696a"
      "6b6c6d6e6f707172737475767778797a6162636465666768696a6b6c6d6e6f707172737475767778797a616263646566"
      "6768696a6b6c6d6e6f707172737475767778797a6162636465666768696a6b6c6d6e6f707172737475767778797a6162"
      "636465666768696a6b6c6d6e6f707172737475767778797a6162636465666768696a6b6c6d6e6f707172737475767778"
      "797a6162636465666768696a6b6c6d6e6f707172737475767778797a6162636465666768696a6b6c6d6e6f7071727374"
      "75767778797a6162636465666768696a6b6c6d6e71002e" },
    { "varchar_xy", STR("xy"), "0080025802000000787971002e" },
    { "null_int", NUL(), "0080024e2e" },
    { "null_date", NUL(), "0080024e2e" },
    { "date_2024_01_02", INTK(FNW_SQL_DATE, 19724), "0180024d0c4d2e" },
    { "date_1969_12_31", INTK(FNW_SQL_DATE, -1), "0180024affffffff2e" },
    { "time_12_34_56_789", INTK(FNW_SQL_TIME, 45296789), "0280024a952cb3022e" },
    { "time_0", INTK(FNW_SQL_TIME, 0), "0280024b002e" },
    { "timestamp_2024", INTK(FNW_SQL_TIMESTAMP, 1704164645678LL), "03800249313730343136343634353637380a2e" },
    { "timestamp_us", INTK(FNW_SQL_TIMESTAMP, 1704164645678LL), "03800249313730343136343634353637380a2e" },
    { "timestamp_1960", INTK(FNW_SQL_TIMESTAMP, -315619200000LL), "038002492d3331353631393230303030300a2e" },
    { "value_double_nan", DOUBLE(NAN), "008002477ff80000000000002e" },
    { "value_double_negzero", DOUBLE(-0.0), "0080024780000000000000002e" },
    { "value_float_max", DOUBLE((double)FLT_MAX), "0080024747efffffe00000002e" },
    { "value_bytes", BYTES("\x01\x02\xff"),
      "008002635f5f6275696c74696e5f5f0a6279746561727261790a58040000000102c3bf710058070000006c6174696e2d"
      "317101865271022e" },
    { "sql_int_42", LONG(42), "0080024b2a2e" },
    { "sql_int_neg7", LONG(-7), "0080024af9ffffff2e" },
    { "sql_bigint_2p31", LONG(2147483648LL), "00800249323134373438333634380a2e" },
    { "sql_bigint_max", LONG(INT64_MAX), "00800249393232333337323033363835343737353830370a2e" },
    { "sql_tinyint_7", LONG(7), "0080024b072e" },
    { "sql_smallint_300", LONG(300), "0080024d2c012e" },
    { "sql_decimal_0_5", DEC("0.5"),
      "00800263646563696d616c0a446563696d616c0a5803000000302e357100855271012e" },
    { "sql_decimal_1_50", DEC("1.50"),
      "00800263646563696d616c0a446563696d616c0a5804000000312e35307100855271012e" },
    { "sql_decimal_neg_0_001", DEC("-0.001"),
      "00800263646563696d616c0a446563696d616c0a58060000002d302e3030317100855271012e" },
    { "sql_decimal_18", DEC("12345678901234567.5"),
      "00800263646563696d616c0a446563696d616c0a581300000031323334353637383930313233343536372e357100855271012e" },
    { "sql_double_1e3", DOUBLE(1000.0), "00800247408f4000000000002e" },
    { "sql_double_1_5e0", DOUBLE(1.5), "008002473ff80000000000002e" },
    { "sql_float_0_1", DOUBLE((double)0.1f), "008002473fb99999a00000002e" },
    { "sql_char_abc", STR("abc"), "008002580300000061626371002e" },
    { "sql_char_empty", STR(""), "008002580000000071002e" },
    { "sql_char_utf8", STR("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"),
      "008002580f00000068c3a96c6c6f20e282ac20f09f988071002e" },
    { "sql_varchar_xy", STR("xy"), "0080025802000000787971002e" },
    { "sql_bool_true", BOOL(1), "008002882e" },
    { "sql_bool_false", BOOL(0), "008002892e" },
    { "sql_null_int", NUL(), "0080024e2e" },
    { "sql_null_date", NUL(), "0080024e2e" },
    { "sql_date", INTK(FNW_SQL_DATE, 19724), "0180024d0c4d2e" },
    { "sql_time", INTK(FNW_SQL_TIME, 45296789), "0280024a952cb3022e" },
    { "sql_timestamp_3", INTK(FNW_SQL_TIMESTAMP, 1704164645678LL), "03800249313730343136343634353637380a2e" },
    { "sql_timestamp_6", INTK(FNW_SQL_TIMESTAMP, 1704164645678LL), "03800249313730343136343634353637380a2e" },
    { "sql_timestamp_1960", INTK(FNW_SQL_TIMESTAMP, -315619200000LL),
      "038002492d3331353631393230303030300a2e" },
};
#define NFIX (sizeof fixtures / sizeof fixtures[0])

/* ---- helpers ----------------------------------------------------------------------- */

static fnw_arena arena;

static void setup(void)
{
    fnw_arena_init(&arena, 256, 1 << 20);
}

static void teardown(void)
{
    fnw_arena_free(&arena);
}

static size_t unhex(const char *h, uint8_t *out, size_t cap)
{
    size_t n = strlen(h) / 2;
    ck_assert_uint_le(n, cap);
    for (size_t i = 0; i < n; i++) {
        unsigned b;
        ck_assert_int_eq(sscanf(h + 2 * i, "%2x", &b), 1);
        out[i] = (uint8_t)b;
    }
    return n;
}

static const char *expected_text(const fixture *f, char *buf)
{
    if (f->text)
        return f->text;
    for (size_t i = 0; i < f->text_len; i++)
        buf[i] = (char)('a' + i % 26);
    return buf;
}

/* Reads p/n and expects a refusal whose message holds every one of the NULL-ended needles. */
static void expect_refused(const uint8_t *p, size_t n, ...)
{
    fnw_value v = { 0 };
    fnw_type *t = (fnw_type *)1;
    fnw_error err = { { 0 } };
    ck_assert_int_eq(fnw_pickle_const_read(p, n, &arena, &v, &t, &err), -1);
    ck_assert_ptr_null(t);
    ck_assert_msg(strncmp(err.msg, "SQL constant", 12) == 0, "message: %s", err.msg);
    va_list ap;
    va_start(ap, n);
    for (const char *s; (s = va_arg(ap, const char *)) != NULL;)
        ck_assert_msg(strstr(err.msg, s) != NULL, "'%s' not in: %s", s, err.msg);
    va_end(ap);
}

#define B(lit) (const uint8_t *)(lit), sizeof(lit) - 1

/* ---- the real bytes ---------------------------------------------------------------- */

START_TEST(real_constants_read_as_their_value_and_type)
{
    uint8_t buf[1024];
    char text[400];
    for (size_t k = 0; k < NFIX; k++) {
        const fixture *f = &fixtures[k];
        size_t n = unhex(f->hex, buf, sizeof buf);
        fnw_value v = { 0 };
        fnw_type *t = NULL;
        fnw_error err = { { 0 } };
        ck_assert_msg(fnw_pickle_const_read(buf, n, &arena, &v, &t, &err) == 0, "%s: %s", f->name, err.msg);
        ck_assert_ptr_nonnull(t);
        ck_assert_msg(v.kind == f->kind && fnw_type_kind(t) == f->kind, "%s: kind %d", f->name, v.kind);
        ck_assert_msg(v.is_null == f->is_null, "%s: is_null %d", f->name, v.is_null);
        switch (f->kind) {
        case FNW_LONG:
        case FNW_BOOLEAN:
        case FNW_SQL_DATE:
        case FNW_SQL_TIME:
        case FNW_SQL_TIMESTAMP:
            ck_assert_msg(v.u.i == f->i, "%s: %lld", f->name, (long long)v.u.i);
            break;
        case FNW_DOUBLE:
            if (isnan(f->d))
                ck_assert_msg(isnan(v.u.d), "%s: %g", f->name, v.u.d);
            else
                ck_assert_msg(v.u.d == f->d && signbit(v.u.d) == signbit(f->d), "%s: %.17g", f->name, v.u.d);
            break;
        case FNW_STRING:
            if (f->is_null)
                break;
            /* fallthrough */
        case FNW_BIG_DEC:
        case FNW_PRIMITIVE_ARRAY: {
            const char *want = expected_text(f, text);
            ck_assert_msg(v.count == f->text_len && memcmp(v.u.bytes, want, f->text_len) == 0, "%s: %.*s",
                          f->name, (int)v.count, (const char *)v.u.bytes);
            ck_assert_int_eq(v.u.bytes[v.count], 0);
            /* a copy in the arena, not a pointer into the input */
            ck_assert(v.u.bytes < buf || v.u.bytes >= buf + sizeof buf);
            break;
        }
        default:
            ck_abort_msg("%s: unexpected kind", f->name);
        }
        if (f->kind == FNW_PRIMITIVE_ARRAY) {
            ck_assert_uint_eq(fnw_type_child_count(t), 1);
            ck_assert_int_eq(fnw_type_kind(fnw_type_child(t, 0)), FNW_BYTE);
        } else {
            ck_assert_uint_eq(fnw_type_child_count(t), 0);
        }
        fnw_type_free(t);
    }
}
END_TEST

START_TEST(real_constants_cut_short_or_padded_are_refused)
{
    uint8_t buf[1024];
    for (size_t k = 0; k < NFIX; k++) {
        size_t n = unhex(fixtures[k].hex, buf, sizeof buf - 1);
        for (size_t cut = 0; cut < n; cut++)
            expect_refused(buf, cut, NULL);
        buf[n] = '.';
        expect_refused(buf, n + 1, "after the STOP opcode", NULL);
    }
}
END_TEST

START_TEST(null_values_and_types_are_consistent)
{
    /* A NULL literal of any SQL type comes as type byte 0 + None. */
    fnw_value v = { 0 };
    fnw_type *t = NULL;
    fnw_error err = { { 0 } };
    ck_assert_int_eq(fnw_pickle_const_read(B("\x00\x80\x02N."), &arena, &v, &t, &err), 0);
    ck_assert(v.is_null);
    ck_assert_int_eq(v.kind, FNW_STRING);
    ck_assert_int_eq(fnw_type_kind(t), FNW_STRING);
    fnw_type_free(t);
}
END_TEST

/* ---- refusals ---------------------------------------------------------------------- */

START_TEST(type_bytes_and_protocols_are_checked)
{
    expect_refused(B(""), "empty", NULL);
    expect_refused(B("\x04\x80\x02K\x01."), "type byte 4", NULL);
    expect_refused(B("\xff\x80\x02K\x01."), "type byte 255", NULL);
    expect_refused(B("\x00\x80\x03K\x01."), "type byte 0", "protocol 2", NULL);
    expect_refused(B("\x00K\x01."), "protocol 2", NULL);
    /* DATE/TIME/TIMESTAMP carry an int, and in range. */
    expect_refused(B("\x01\x80\x02X\x01\x00\x00\x00xq\x00."), "type byte 1, a DATE", "BINUNICODE",
                   "integer of a DATE", NULL);
    expect_refused(B("\x03\x80\x02N."), "type byte 3, a TIMESTAMP", "NONE", NULL);
    expect_refused(B("\x02\x80\x02J\xff\xff\xff\xff."), "TIME of -1 ms", NULL);
    expect_refused(B("\x02\x80\x02J\x00\x5c\x26\x05."), "TIME of 86400000 ms", NULL);
    expect_refused(B("\x01\x80\x02I2147483648\n."), "DATE of 2147483648 days", NULL);
}
END_TEST

START_TEST(opcodes_razorvine_does_not_write_are_named)
{
    expect_refused(B("\x00\x80\x02\x8a\x01\x05."), "byte 3", "0x8a (LONG1)", NULL);
    expect_refused(B("\x00\x80\x02\x8c\x01x."), "SHORT_BINUNICODE", NULL);
    expect_refused(B("\x00\x80\x02]q\x00."), "EMPTY_LIST", NULL);
    expect_refused(B("\x00\x80\x02\xfe."), "0xfe (an opcode razorvine does not write)", NULL);
    expect_refused(B("\x00\x80\x02K\x01K\x02."), "0x4b (BININT1) where STOP was expected", NULL);
    expect_refused(B("\x00\x80\x02K\x01"), "ends before its STOP", NULL);
    expect_refused(B("\x00\x80\x02\x95\x01\x00\x00\x00\x00\x00\x00\x00K\x01."), "FRAME", NULL);
}
END_TEST

START_TEST(only_decimal_and_bytearray_globals_are_read)
{
    expect_refused(B("\x00\x80\x02"
                     "cos\nsystem\nX\x02\x00\x00\x00lsq\x00\x85Rq\x01."),
                   "GLOBAL os.system", NULL);
    expect_refused(B("\x00\x80\x02"
                     "cdecimal\nDecimalX\x02\x00\x00\x00ls"),
                   "two short lines", NULL);
    /* Decimal with two arguments, with a non-numeric or Python-only text. */
    expect_refused(B("\x00\x80\x02"
                     "cdecimal\nDecimal\nX\x01\x00\x00\x00"
                     "1X\x01\x00\x00\x00"
                     "1\x86R."),
                   "BINUNICODE", "TUPLE1", NULL);
    expect_refused(B("\x00\x80\x02"
                     "cdecimal\nDecimal\nX\x03\x00\x00\x00NaNq\x00\x85Rq\x01."),
                   "Decimal text 'NaN'", NULL);
    expect_refused(B("\x00\x80\x02"
                     "cdecimal\nDecimal\nX\x03\x00\x00\x00"
                     "1e3q\x00\x85Rq\x01."),
                   "Decimal text '1e3'", NULL);
    expect_refused(B("\x00\x80\x02"
                     "cdecimal\nDecimal\nX\x01\x00\x00\x00.q\x00\x85Rq\x01."),
                   "Decimal text '.'", NULL);
    expect_refused(B("\x00\x80\x02"
                     "cdecimal\nDecimal\nX\x01\x00\x00\x00"
                     "1q\x00\x85q\x01."),
                   "where REDUCE was expected", NULL);
    /* bytearray with another encoding, or text beyond Latin-1. */
    expect_refused(B("\x00\x80\x02"
                     "c__builtin__\nbytearray\nX\x01\x00\x00\x00\x01q\x00X\x05\x00\x00\x00"
                     "utf-8q\x01\x86Rq\x02."),
                   "other than 'latin-1'", NULL);
    expect_refused(B("\x00\x80\x02"
                     "c__builtin__\nbytearray\nX\x03\x00\x00\x00\xe2\x82\xacq\x00X\x07\x00\x00\x00"
                     "latin-1q\x01\x86Rq\x02."),
                   "not Latin-1", NULL);
}
END_TEST

START_TEST(lengths_and_text_are_checked)
{
    expect_refused(B("\x00\x80\x02X\xff\xff\xff\xff"
                     "abc."),
                   "BINUNICODE of 4294967295 bytes, but only 4 bytes", NULL);
    expect_refused(B("\x00\x80\x02X\x05\x00\x00\x00"
                     "abc."),
                   "BINUNICODE of 5 bytes, but only 4 bytes", NULL);
    expect_refused(B("\x00\x80\x02X\x02\x00"), "ends inside the 4-byte operand of BINUNICODE", NULL);
    expect_refused(B("\x00\x80\x02X\x02\x00\x00\x00\xc3\x28q\x00."), "not valid UTF-8", NULL);
    expect_refused(B("\x00\x80\x02X\x03\x00\x00\x00\xed\xa0\x80q\x00."), "not valid UTF-8", NULL);
    expect_refused(B("\x00\x80\x02G\x3f\xf0\x00."), "8-byte operand of BINFLOAT", NULL);
    expect_refused(B("\x00\x80\x02X\x01\x00\x00\x00"
                     "aq"),
                   "1-byte operand of BINPUT", NULL);
    expect_refused(B("\x00\x80\x02X\x01\x00\x00\x00"
                     "ar\x00\x00."),
                   "4-byte operand of LONG_BINPUT", NULL);
}
END_TEST

START_TEST(integers_beyond_64_bits_and_odd_int_text_are_refused)
{
    expect_refused(B("\x00\x80\x02I9223372036854775808\n."), "9223372036854775808 is wider than 64 bits",
                   NULL);
    expect_refused(B("\x00\x80\x02I-9223372036854775809\n."), "-9223372036854775809 is wider than 64 bits",
                   NULL);
    expect_refused(B("\x00\x80\x02I99999999999999999999\n."), "wider than 64 bits", NULL);
    expect_refused(B("\x00\x80\x02I123456789012345678901234567890\n."), "wider than 64 bits", NULL);
    /* Python reads these as False/True; Java never writes them. */
    expect_refused(B("\x00\x80\x02I00\n."), "not a decimal integer", NULL);
    expect_refused(B("\x00\x80\x02I01\n."), "not a decimal integer", NULL);
    expect_refused(B("\x00\x80\x02I-0\n."), "not a decimal integer", NULL);
    expect_refused(B("\x00\x80\x02I+5\n."), "not a decimal integer", NULL);
    expect_refused(B("\x00\x80\x02I\n."), "not a decimal integer", NULL);
    expect_refused(B("\x00\x80\x02I12"), "without its newline", NULL);
    /* The edges themselves read. */
    fnw_value v = { 0 };
    fnw_type *t = NULL;
    fnw_error err = { { 0 } };
    ck_assert_int_eq(fnw_pickle_const_read(B("\x00\x80\x02I-9223372036854775808\n."), &arena, &v, &t, &err),
                     0);
    ck_assert(v.u.i == INT64_MIN);
    fnw_type_free(t);
}
END_TEST

START_TEST(an_arena_too_small_is_an_error_not_a_crash)
{
    fnw_arena small;
    fnw_arena_init(&small, 64, 64);
    uint8_t buf[1024];
    size_t n = 0;
    for (size_t k = 0; k < NFIX; k++)
        if (strcmp(fixtures[k].name, "char_300") == 0)
            n = unhex(fixtures[k].hex, buf, sizeof buf);
    ck_assert_uint_gt(n, 300);
    fnw_value v = { 0 };
    fnw_type *t = (fnw_type *)1;
    fnw_error err = { { 0 } };
    ck_assert_int_eq(fnw_pickle_const_read(buf, n, &small, &v, &t, &err), -1);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(err.msg, "no arena memory") != NULL, "%s", err.msg);
    fnw_arena_free(&small);
}
END_TEST

/* A constant converted to the declared type, then encoded: the bytes (hex)
 * a Flink serializer of that type writes, or the message. */
static void convert_to(const fnw_value *v, fnw_type *to, const char *want_hex, const char *want_err)
{
    fnw_arena a;
    fnw_arena_init(&a, 256, 1 << 16);
    fnw_value out;
    fnw_error err = { { 0 } };
    int rc = fnw_pickle_const_convert(v, to, &a, &out, &err);
    fnw_buf b;
    fnw_buf_init(&b, 0);
    if (rc == 0)
        rc = fnw_ser_encode(to, &out, &b, &err);
    if (want_err) {
        ck_assert_int_eq(rc, -1);
        ck_assert_msg(strstr(err.msg, want_err) != NULL, "%s", err.msg);
    } else {
        ck_assert_msg(rc == 0, "%s", err.msg);
        char hex[256] = "";
        for (size_t i = 0; i < b.len && 2 * i + 2 < sizeof hex; i++)
            snprintf(hex + 2 * i, 3, "%02x", b.p[i]);
        ck_assert_str_eq(hex, want_hex);
    }
    fnw_buf_free(&b);
    fnw_arena_free(&a);
    fnw_type_free(to);
}

static fnw_type *typed(fnw_kind k, int32_t precision, int32_t scale)
{
    fnw_type *t = fnw_type_new(k);
    if (precision)
        ck_assert_int_eq(fnw_type_set_precision(t, precision, scale, NULL), 0);
    return t;
}

START_TEST(constants_take_the_declared_argument_type)
{
    fnw_value seven = fnw_value_int(FNW_LONG, 7), big = fnw_value_int(FNW_LONG, 70000);
    convert_to(&seven, typed(FNW_INT, 0, 0), "00000007", NULL);
    convert_to(&seven, typed(FNW_BYTE, 0, 0), "07", NULL);
    convert_to(&big, typed(FNW_SHORT, 0, 0), NULL, "does not fit");
    convert_to(&seven, typed(FNW_DOUBLE, 0, 0), "401c000000000000", NULL);
    /* DECIMAL(5, 2): the text rounded to the scale ("7.00"), length-prefixed */
    convert_to(&seven, typed(FNW_BIG_DEC, 5, 2), "00000004372e3030", NULL);
    fnw_value dec = fnw_value_bytes(FNW_BIG_DEC, "1.255", 5);
    convert_to(&dec, typed(FNW_BIG_DEC, 4, 2), "00000004312e3236", NULL);
    convert_to(&dec, typed(FNW_BIG_DEC, 2, 2), NULL, "does not fit");
    convert_to(&dec, typed(FNW_FLOAT, 0, 0), "3fa0a3d7", NULL);
    /* a NULL literal (read as a null STRING) is a null of any type */
    fnw_value null = fnw_value_null(FNW_STRING);
    fnw_arena a;
    fnw_arena_init(&a, 64, 1024);
    fnw_value out;
    fnw_type *int_type = typed(FNW_INT, 0, 0);
    ck_assert_int_eq(fnw_pickle_const_convert(&null, int_type, &a, &out, NULL), 0);
    ck_assert(out.is_null && out.kind == FNW_INT);
    fnw_type_free(int_type);
    fnw_arena_free(&a);
    /* TIMESTAMP(6): millis then the nanos of the milli (0) */
    fnw_value ts = fnw_value_timestamp(FNW_SQL_TIMESTAMP, 1000, 0);
    convert_to(&ts, typed(FNW_SQL_TIMESTAMP, 6, 0), "00000000000003e800000000", NULL);
    fnw_value text = fnw_value_str("x");
    convert_to(&text, typed(FNW_INT, 0, 0), NULL, "cannot be an argument of type");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pickle_const");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, real_constants_read_as_their_value_and_type);
    tcase_add_test(tc, real_constants_cut_short_or_padded_are_refused);
    tcase_add_test(tc, null_values_and_types_are_consistent);
    tcase_add_test(tc, type_bytes_and_protocols_are_checked);
    tcase_add_test(tc, opcodes_razorvine_does_not_write_are_named);
    tcase_add_test(tc, only_decimal_and_bytearray_globals_are_read);
    tcase_add_test(tc, lengths_and_text_are_checked);
    tcase_add_test(tc, integers_beyond_64_bits_and_odd_int_text_are_refused);
    tcase_add_test(tc, an_arena_too_small_is_an_error_not_a_crash);
    tcase_add_test(tc, constants_take_the_declared_argument_type);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
