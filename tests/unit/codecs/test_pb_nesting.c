/* tests/unit/codecs/test_pb_nesting.c — the nesting walk protobuf-c payloads pass
 * before they are unpacked, on hand-built wire bytes: TypeInfo and plain
 * message nesting are accepted at their limits and refused one past them
 * (and 10,000 deep, where protobuf-c itself would exhaust the stack),
 * only fields the schema declares as messages are entered, and truncated
 * or hostile bytes are refused without reading past the input. Whatever
 * protobuf-c can unpack, the walk accepts. */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/wire_build.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/pb_nesting.h"
#include "codecs/type.h"
#include "base/pb.h"

#define DESC(x) (&org__apache__flink__fn_execution__v1__##x##__descriptor)
#define BEAM_DESC(x) (&org__apache__beam__model__fn_execution__v1__##x##__descriptor)

/* ---- wire bytes ------------------------------------------------------------ */

/* TypeInfo ROW<f ROW<f ... INT>>: three messages per level. */
static void deep_row(wire *w, int levels)
{
    front_uint(w, 1, TI_INT);
    for (int i = 1; i < levels; i++) {
        wrap(w, 2);                  /* Field.field_type */
        front_string(w, 1, "f");     /* Field.field_name */
        wrap(w, 1);                  /* RowTypeInfo.fields */
        wrap(w, 3);                  /* TypeInfo.row_type_info; type_name ROW is 0 */
    }
}

/* CoderInfoDescriptor { raw_type { type_info: <what w holds> } } */
static void coder_around(wire *w)
{
    wrap(w, 1);
    wrap(w, 5);
}

static int check(const ProtobufCMessageDescriptor *d, const wire *w, fnw_error *err)
{
    err->msg[0] = '\0';
    return fnw_pb_nesting_check(d, bytes(w), len(w), err);
}

/* protobuf-c can unpack w (only called on bytes the walk accepted, or on
 * small inputs). */
static int unpacks(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t n)
{
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, n, b);
    if (m)
        protobuf_c_message_free_unpacked(m, NULL);
    return m != NULL;
}

#define ASSERT_MSG(err, s) ck_assert_msg(strstr((err).msg, (s)) != NULL, "'%s' lacks '%s'", (err).msg, (s))

/* ---- limits ----------------------------------------------------------------- */

START_TEST(typeinfo_nesting_ok_at_64_refused_at_65)
{
    for (int shape = 0; shape < 2; shape++) {
        for (int levels = FNW_TYPE_MAX_DEPTH - 1; levels <= FNW_TYPE_MAX_DEPTH + 1; levels++) {
            wire w = wire_new(1 << 16);
            if (shape == 0)
                deep_list(&w, levels);
            else
                deep_row(&w, levels);
            coder_around(&w);
            fnw_error err;
            int rc = check(DESC(coder_info_descriptor), &w, &err);
            if (levels <= FNW_TYPE_MAX_DEPTH) {
                ck_assert_msg(rc == 0, "%d levels: %s", levels, err.msg);
                /* ... and the type tree agrees: the same levels convert */
                pb_CoderInfoDescriptor *ci = PBF(coder_info_descriptor__unpack)(NULL, len(&w), bytes(&w));
                ck_assert_ptr_nonnull(ci);
                fnw_type *t = NULL;
                ck_assert_msg(fnw_typeinfo_to_type(ci->raw_type->type_info, &t, &err) == 0, "%s", err.msg);
                ck_assert_int_eq(fnw_type_depth(t), levels);
                fnw_type_free(t);
                PBF(coder_info_descriptor__free_unpacked)(ci, NULL);
            } else {
                ck_assert_int_eq(rc, -1);
                ASSERT_MSG(err, "TypeInfo nests deeper than 64 levels (byte ");
                ASSERT_MSG(err, "of the CoderInfoDescriptor)");
            }
            free(w.buf);
        }
    }
}
END_TEST

/* The crash this walk exists for: protobuf-c recursing 10,000 times. */
START_TEST(ten_thousand_levels_are_refused_in_coders_and_key_types)
{
    wire w = wire_new(1 << 20);
    deep_list(&w, 10000);
    size_t type_len = len(&w);
    coder_around(&w);
    fnw_error err;
    ck_assert_int_eq(check(DESC(coder_info_descriptor), &w, &err), -1);
    ASSERT_MSG(err, "TypeInfo nests deeper than 64 levels");

    /* UserDefinedDataStreamFunction.key_type_info */
    w.start = w.cap - type_len;
    wrap(&w, 5);
    front_uint(&w, 1, 0);   /* PROCESS */
    ck_assert_int_eq(check(DESC(user_defined_data_stream_function), &w, &err), -1);
    ASSERT_MSG(err, "TypeInfo nests deeper than 64 levels");
    ASSERT_MSG(err, "UserDefinedDataStreamFunction");
    free(w.buf);
}
END_TEST

/* Plain nesting of a recursive message that is not a TypeInfo (a Table
 * Schema's FieldType element type): 256 messages pass, 257 do not. */
START_TEST(message_nesting_ok_at_256_refused_at_257)
{
    for (int levels = FNW_PB_MAX_NESTING - 1; levels <= FNW_PB_MAX_NESTING + 1; levels++) {
        wire w = wire_new(1 << 16);
        front_uint(&w, 1, 3);   /* INT */
        for (int i = 1; i < levels; i++)
            wrap(&w, 3);        /* collection_element_type */
        fnw_error err;
        int rc = check(DESC(schema__field_type), &w, &err);
        if (levels <= FNW_PB_MAX_NESTING) {
            ck_assert_msg(rc == 0, "%d levels: %s", levels, err.msg);
            ck_assert(unpacks(DESC(schema__field_type), bytes(&w), len(&w)));
        } else {
            ck_assert_int_eq(rc, -1);
            ASSERT_MSG(err, "messages nest deeper than 256 levels (byte ");
            ASSERT_MSG(err, "of the FieldType)");
        }
        free(w.buf);
    }
}
END_TEST

/* Map entries, oneof members and repeated fields are entered: Triggers
 * nested in a descriptor's windowing strategy, inside a register request. */
START_TEST(descriptors_on_the_control_stream_are_measured)
{
    wire w = wire_new(1 << 20);
    for (int i = 0; i < 5000; i++) {
        if (i)
            wrap(&w, 1);    /* Repeat.subtrigger */
        wrap(&w, 11);       /* Trigger.repeat (empty Repeat at the bottom) */
    }
    wrap(&w, 4);            /* WindowingStrategy.trigger */
    wrap(&w, 2);            /* map entry value */
    front_string(&w, 1, "windowing_strategy");
    wrap(&w, 4);            /* ProcessBundleDescriptor.windowing_strategies */
    front_string(&w, 1, "1-2");
    size_t pbd_start = w.start;
    wrap(&w, 1);            /* RegisterRequest.process_bundle_descriptor */
    wrap(&w, 1000);         /* InstructionRequest.register */
    front_string(&w, 1, "7");
    fnw_error err;
    ck_assert_int_eq(check(BEAM_DESC(instruction_request), &w, &err), -1);
    ASSERT_MSG(err, "messages nest deeper than 256 levels");
    ASSERT_MSG(err, "InstructionRequest");
    /* the refused request's id can still be read, so it can be answered */
    char id[16];
    ck_assert_int_eq(fnw_pb_nesting_find_top_string(bytes(&w), len(&w), 1, id, sizeof id), 1);
    ck_assert_str_eq(id, "7");
    /* the descriptor alone, as GetProcessBundleDescriptor returns it */
    w.start = pbd_start;
    ck_assert_int_eq(check(BEAM_DESC(process_bundle_descriptor), &w, &err), -1);
    ASSERT_MSG(err, "of the ProcessBundleDescriptor)");
    free(w.buf);
}
END_TEST

/* Strings, bytes and unknown fields are not parsed by protobuf-c, so their
 * contents are not entered: a 10,000-deep TypeInfo as a function payload
 * (bytes) or under an unknown field number passes and unpacks. */
START_TEST(only_declared_message_fields_are_entered)
{
    wire w = wire_new(1 << 20);
    deep_list(&w, 10000);
    size_t type_start = w.start;
    wrap(&w, 3);            /* UserDefinedDataStreamFunction.payload (bytes) */
    fnw_error err;
    ck_assert_msg(check(DESC(user_defined_data_stream_function), &w, &err) == 0, "%s", err.msg);
    ck_assert(unpacks(DESC(user_defined_data_stream_function), bytes(&w), len(&w)));
    w.start = type_start;
    wrap(&w, 99);           /* no field 99 in TypeInfo */
    ck_assert_msg(check(DESC(type_info), &w, &err) == 0, "%s", err.msg);
    ck_assert(unpacks(DESC(type_info), bytes(&w), len(&w)));
    free(w.buf);
}
END_TEST

/* ---- malformed and hostile bytes -------------------------------------------- */

static void expect_refused(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t n, const char *want)
{
    fnw_error err = { "" };
    ck_assert_int_eq(fnw_pb_nesting_check(d, b, n, &err), -1);
    ASSERT_MSG(err, want);
    ASSERT_MSG(err, "(byte ");
    ck_assert_msg(!unpacks(d, b, n), "protobuf-c reads bytes the walk refuses (%s)", err.msg);
}

START_TEST(hostile_lengths_and_truncation_are_refused)
{
    const ProtobufCMessageDescriptor *ti = DESC(type_info);
    /* collection_element_type with a length of 2^64 - 1 */
    static const uint8_t huge[] = { 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x08 };
    expect_refused(ti, huge, sizeof huge, "a length runs past the end of its message");
    /* 2^32 + 2: wraps to 2 in 32 bits */
    static const uint8_t wrap32[] = { 0x12, 0x82, 0x80, 0x80, 0x80, 0x10, 0x08, 0x05 };
    expect_refused(ti, wrap32, sizeof wrap32, "a length runs past the end of its message");
    /* an inner length that fits the input but not its enclosing message */
    static const uint8_t inner[] = { 0x12, 0x02, 0x12, 0x05, 0x08, 0x05, 0x08, 0x05, 0x08 };
    expect_refused(ti, inner, sizeof inner, "a length runs past the end of its message");
    /* an 11-byte varint */
    static const uint8_t longv[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
    expect_refused(ti, longv, sizeof longv, "longer than 10 bytes");
    /* cut inside a varint, a tag, a fixed field */
    static const uint8_t cutv[] = { 0x08, 0x80 };
    expect_refused(ti, cutv, sizeof cutv, "a varint runs past the end");
    static const uint8_t cutt[] = { 0x08, 0x05, 0x80 };
    expect_refused(ti, cutt, sizeof cutt, "a varint runs past the end");
    static const uint8_t cutf[] = { 0x09, 1, 2, 3 };
    expect_refused(ti, cutf, sizeof cutf, "a fixed-size field runs past");
    /* groups and wire types 6, 7 */
    static const uint8_t group[] = { 0x0b, 0x0c };
    expect_refused(ti, group, sizeof group, "groups");
    static const uint8_t wt7[] = { 0x0f, 0x00 };
    expect_refused(ti, wt7, sizeof wt7, "unknown wire type");
    /* field number 0 */
    static const uint8_t zero[] = { 0x02, 0x00 };
    expect_refused(ti, zero, sizeof zero, "field number is 0");

    /* every strict prefix of a real descriptor: refused, or a valid message */
    wire w = wire_new(1 << 12);
    deep_row(&w, 6);
    coder_around(&w);
    for (size_t k = 0; k < len(&w); k++) {
        fnw_error err = { "" };
        uint8_t *copy = malloc(k ? k : 1);   /* exactly k bytes: ASan sees any overread */
        memcpy(copy, bytes(&w), k);
        int rc = fnw_pb_nesting_check(DESC(coder_info_descriptor), copy, k, &err);
        if (rc < 0)
            ASSERT_MSG(err, "not a valid CoderInfoDescriptor");
        else
            ck_assert_msg(unpacks(DESC(coder_info_descriptor), copy, k), "prefix %zu passed but does not unpack", k);
        free(copy);
    }
    free(w.buf);
}
END_TEST

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Mutated descriptors: the walk never refuses what protobuf-c reads. */
/* The top-level string reader steps over fields of every wire type, and
 * gives up on anything malformed or too long rather than guessing. */
START_TEST(top_level_string_is_found_past_other_fields)
{
    static const uint8_t after[] = {
        0x08, 0x96, 0x01,                     /* field 1, varint 150 */
        0x11, 1, 2, 3, 4, 5, 6, 7, 8,         /* field 2, fixed64 */
        0x1d, 1, 2, 3, 4,                     /* field 3, fixed32 */
        0x0a, 0x02, 'i', 'd',                 /* field 1, "id" */
    };
    char out[8];
    ck_assert_int_eq(fnw_pb_nesting_find_top_string(after, sizeof after, 1, out, sizeof out), 1);
    ck_assert_str_eq(out, "id");
    ck_assert_int_eq(fnw_pb_nesting_find_top_string(after, sizeof after, 4, out, sizeof out), 0);
    ck_assert_int_eq(fnw_pb_nesting_find_top_string(after, sizeof after - 1, 1, out, sizeof out), 0);  /* cut */
    ck_assert_int_eq(fnw_pb_nesting_find_top_string(after, sizeof after, 1, out, 2), 0);               /* too long */
    static const uint8_t group[] = { 0x0b, 0x0a, 0x01, 'x' };   /* a group before it */
    ck_assert_int_eq(fnw_pb_nesting_find_top_string(group, sizeof group, 1, out, sizeof out), 0);
    static const uint8_t nul[] = { 0x0a, 0x02, 'a', 0 };
    ck_assert_int_eq(fnw_pb_nesting_find_top_string(nul, sizeof nul, 1, out, sizeof out), 0);
    ck_assert_int_eq(fnw_pb_nesting_find_top_string(NULL, 0, 1, out, sizeof out), 0);
}
END_TEST

START_TEST(the_walk_accepts_whatever_protobuf_c_reads)
{
    wire w = wire_new(1 << 12);
    deep_row(&w, 4);
    wrap(&w, 2);
    front_uint(&w, 1, TI_LIST);   /* LIST<ROW<...>> */
    coder_around(&w);
    front_uint(&w, 6, 1);         /* mode MULTIPLE */
    size_t n = len(&w);
    uint8_t *b = malloc(n + 8);
    long readable = 0;
    for (int iter = 0; iter < 100000; iter++) {
        memcpy(b, bytes(&w), n);
        size_t m = n;
        for (uint32_t k = 1 + next_rand() % 3; k; k--) {
            uint32_t r = next_rand();
            if (r & 1)
                b[(r >> 8) % m] = (uint8_t)(r >> 16);
            else
                b[(r >> 8) % m] ^= (uint8_t)(1u << ((r >> 16) & 7));
        }
        if (next_rand() % 4 == 0)
            m = next_rand() % (n + 1);
        fnw_error err = { "" };
        int rc = fnw_pb_nesting_check(DESC(coder_info_descriptor), b, m, &err);
        if (unpacks(DESC(coder_info_descriptor), b, m)) {
            readable++;
            ck_assert_msg(rc == 0, "protobuf-c reads it but the walk says: %s", err.msg);
        }
    }
    ck_assert_int_gt(readable, 1000);
    free(b);
    free(w.buf);
}
END_TEST

START_TEST(empty_input_and_no_type)
{
    fnw_error err;
    ck_assert_int_eq(fnw_pb_nesting_check(DESC(type_info), NULL, 0, &err), 0);
    ck_assert_int_eq(fnw_pb_nesting_check(NULL, (const uint8_t *)"", 0, &err), -1);
    ASSERT_MSG(err, "no message type");
}
END_TEST

/* ---- the messages unpacked without the walk ---------------------------------- */

/* 1 if a message type reachable from d through message fields is on path
 * already (the schema is recursive). Schemas are small: plain recursion. */
static int recursive(const ProtobufCMessageDescriptor *d, const ProtobufCMessageDescriptor **path, int depth)
{
    for (int i = 0; i < depth; i++)
        if (path[i] == d)
            return 1;
    ck_assert_int_lt(depth, 64);
    path[depth] = d;
    for (unsigned f = 0; f < d->n_fields; f++)
        if (d->fields[f].type == PROTOBUF_C_TYPE_MESSAGE &&
            recursive(d->fields[f].descriptor, path, depth + 1))
            return 1;
    return 0;
}

/* plan.c unpacks the first payloads directly: that is safe only while their
 * schemas cannot nest without bound. The walk's own targets can. */
START_TEST(schemas_unpacked_without_the_walk_are_not_recursive)
{
    const ProtobufCMessageDescriptor *path[64];
    ck_assert(!recursive(&org__apache__beam__model__pipeline__v1__par_do_payload__descriptor, path, 0));
    ck_assert(!recursive(BEAM_DESC(remote_grpc_port), path, 0));
    ck_assert(recursive(&fnworker__v1__operation_spec__descriptor, path, 0));   /* output_type; step.c walks it */
    ck_assert(recursive(DESC(coder_info_descriptor), path, 0));
    ck_assert(recursive(DESC(user_defined_data_stream_function), path, 0));
    ck_assert(recursive(BEAM_DESC(instruction_request), path, 0));
    ck_assert(recursive(BEAM_DESC(process_bundle_descriptor), path, 0));
    ck_assert(recursive(BEAM_DESC(get_provision_info_response), path, 0));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pb_nesting");
    TCase *tc = tcase_create("walk");
    tcase_add_test(tc, typeinfo_nesting_ok_at_64_refused_at_65);
    tcase_add_test(tc, ten_thousand_levels_are_refused_in_coders_and_key_types);
    tcase_add_test(tc, message_nesting_ok_at_256_refused_at_257);
    tcase_add_test(tc, descriptors_on_the_control_stream_are_measured);
    tcase_add_test(tc, only_declared_message_fields_are_entered);
    tcase_add_test(tc, hostile_lengths_and_truncation_are_refused);
    tcase_add_test(tc, top_level_string_is_found_past_other_fields);
    tcase_add_test(tc, the_walk_accepts_whatever_protobuf_c_reads);
    tcase_add_test(tc, empty_input_and_no_type);
    tcase_add_test(tc, schemas_unpacked_without_the_walk_are_not_recursive);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
