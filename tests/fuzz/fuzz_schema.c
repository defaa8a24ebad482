/* tests/fuzz/fuzz_schema.c — fuzz target for Flink's Table row description
 * (flink-fn-execution.proto Schema, Schema.FieldType) as the worker reads
 * a Table coder's type: the nesting check on the wire bytes
 * (codecs/pb_nesting.c), protobuf-c's unpack, then fnw_schema_to_type or
 * fnw_schema_field_type_to_type (codecs/schema.c).
 *
 * Input: byte 0 picks the message (even: a Schema, as a FlattenRow or Row
 * coder carries it; odd: one Schema.FieldType), the rest is its wire
 * bytes. Properties (abort() on violation; LeakSanitizer finds leaks):
 *  1. every refusal carries a non-empty message and leaves no type; the
 *     same bytes give an equal type or the same message twice;
 *  2. an accepted type is within type.h's limits: at most
 *     FNW_TYPE_MAX_DEPTH deep, no ROW with more than FNW_TYPE_MAX_FIELDS
 *     fields, DECIMAL/TIMESTAMP parameters in range; a Schema gives a ROW
 *     with one field per Schema.Field, named as it;
 *  3. an accepted type formats (NUL-terminated, a shorter buffer holds a
 *     prefix of the longer one's text) and clones into an equal type;
 *  4. an accepted type compiles into a skip program, and skipping an empty
 *     input and 64 zero bytes gives the same answer from the program, the
 *     generic skip and decode (as fuzz_typeinfo.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/pb_nesting.h"
#include "codecs/schema.h"
#include "codecs/ser.h"
#include "codecs/type.h"
#include "org/apache/flink/fn_execution/v1/flink-fn-execution.pb-c.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef Org__Apache__Flink__FnExecution__V1__Schema pb_schema;
typedef Org__Apache__Flink__FnExecution__V1__Schema__FieldType pb_field_type;
#define SCHEMA(x) org__apache__flink__fn_execution__v1__schema__##x
#define FIELD_TYPE(x) org__apache__flink__fn_execution__v1__schema__field_type__##x

/* Property 2 below t. */
static void check_limits(const fnw_type *t)
{
    fnw_kind k = fnw_type_kind(t);
    size_t n = fnw_type_child_count(t);
    int32_t p = fnw_type_precision(t), s = fnw_type_scale(t);
    switch (k) {
    case FNW_ROW:
        CHECK(n <= FNW_TYPE_MAX_FIELDS);
        for (size_t i = 0; i < n; i++)
            CHECK(fnw_type_field_name(t, i) != NULL);
        break;
    case FNW_BASIC_ARRAY:
        CHECK(n == 1);
        break;
    case FNW_MAP:
        CHECK(n == 2);
        break;
    case FNW_PRIMITIVE_ARRAY:
        CHECK(n == 1 && fnw_type_kind(fnw_type_child(t, 0)) == FNW_BYTE);
        break;
    case FNW_BIG_DEC:
        CHECK(n == 0 && p >= 1 && p <= FNW_TYPE_MAX_DECIMAL_PRECISION && s >= 0 && s <= p);
        break;
    case FNW_SQL_TIMESTAMP:
    case FNW_LOCAL_ZONED_TIMESTAMP:
        CHECK(n == 0 && p >= 0 && p <= FNW_TYPE_MAX_TIMESTAMP_PRECISION && s == 0);
        break;
    default:
        CHECK(n == 0 && p == 0 && s == 0);
    }
    for (size_t i = 0; i < n; i++)
        check_limits(fnw_type_child(t, i));
}

/* Property 4 on one input: the program, the generic skip and decode agree. */
static void check_input(const fnw_type *t, const fnw_skip_program *sp, const uint8_t *p, size_t n)
{
    size_t used = 0, used2 = 0, used3 = 0;
    fnw_error e1, e2, e3;
    int rc = fnw_skip_program_run(sp, p, n, &used, &e1);
    int rc2 = fnw_ser_skip_generic(t, p, n, &used2, &e2);
    CHECK(rc == rc2);
    if (rc == 0)
        CHECK(used == used2 && used <= n);
    else
        CHECK(fuzz_same_message(&e1, &e2));
    fnw_arena a;
    fnw_value v;
    fnw_arena_init(&a, 1024, 0);
    int rc3 = fnw_ser_decode(t, p, n, &a, &v, &used3, &e3);
    CHECK(a.used_total <= fnw_ser_decode_budget(n));
    if (rc3 == 0)
        CHECK(rc == 0 && used3 == used);
    else
        CHECK(strstr(e3.msg, "arena limit reached") || (rc != 0 && strcmp(e3.msg, e1.msg) == 0));
    fnw_arena_free(&a);
}

static void check_type(const fnw_type *t)
{
    static const uint8_t zeros[64];
    fnw_error err;
    CHECK(fnw_type_depth(t) >= 1 && fnw_type_depth(t) <= FNW_TYPE_MAX_DEPTH);
    check_limits(t);
    char big[4096], small[40];
    size_t n = fnw_type_format(t, big, sizeof big);
    size_t n2 = fnw_type_format(t, small, sizeof small);
    CHECK(n >= 1 && n < sizeof big && big[n] == '\0' && strlen(big) == n);
    CHECK(n2 < sizeof small && small[n2] == '\0' && strncmp(big, small, n2) == 0);
    fnw_type *c = fnw_type_clone(t);
    CHECK(c && fnw_type_equal(c, t));
    fnw_type_free(c);
    fnw_skip_program *sp = fnw_skip_program_new(t, &err);
    CHECK(sp);
    check_input(t, sp, NULL, 0);
    check_input(t, sp, zeros, sizeof zeros);
    fnw_skip_program_free(sp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int is_schema = data[0] % 2 == 0;
    const ProtobufCMessageDescriptor *desc = is_schema ? &SCHEMA(descriptor) : &FIELD_TYPE(descriptor);
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    fnw_error err, err2;
    int rc = fnw_pb_nesting_check(desc, p, n, &err);
    CHECK(rc == fnw_pb_nesting_check(desc, p, n, &err2));
    if (rc != 0) {
        CHECK(fuzz_same_message(&err, &err2));
        return 0;
    }
    ProtobufCMessage *pb = protobuf_c_message_unpack(desc, NULL, n, p);
    if (!pb)
        return 0;
    fnw_type *t = (fnw_type *)1, *t2 = (fnw_type *)1;
    int rc2;
    if (is_schema) {
        rc = fnw_schema_to_type(pb, &t, &err);
        rc2 = fnw_schema_to_type(pb, &t2, &err2);
    } else {
        rc = fnw_schema_field_type_to_type(pb, &t, &err);
        rc2 = fnw_schema_field_type_to_type(pb, &t2, &err2);
    }
    CHECK(rc == rc2);
    if (rc != 0) {
        CHECK(!t && !t2 && fuzz_same_message(&err, &err2));
    } else {
        CHECK(t && t2 && fnw_type_equal(t, t2));
        if (is_schema) {
            const pb_schema *s = (const pb_schema *)pb;
            CHECK(fnw_type_kind(t) == FNW_ROW && fnw_type_child_count(t) == s->n_fields);
            for (size_t i = 0; i < s->n_fields; i++)
                CHECK(!strcmp(fnw_type_field_name(t, i), s->fields[i]->name ? s->fields[i]->name : ""));
        }
        check_type(t);
    }
    fnw_type_free(t);
    fnw_type_free(t2);
    protobuf_c_message_free_unpacked(pb, NULL);
    return 0;
}
