/* tests/fuzz/fuzz_typeinfo.c — fuzz target for the TypeInfo a coder of the
 * bundle descriptor carries (Flink's flink-fn-execution.proto TypeInfo),
 * read the way the worker reads it: the nesting check on the wire bytes
 * (codecs/pb_nesting.c), protobuf-c's unpack, then fnw_typeinfo_to_type
 * (codecs/typeinfo.c).
 *
 * Properties (abort() on violation; LeakSanitizer finds leaks):
 *  1. every refusal (nesting check or conversion) carries a non-empty
 *     message, and a refused conversion leaves no type behind;
 *  2. the depth limit holds: bytes that pass the nesting check unpack into
 *     a TypeInfo tree at most FNW_TYPE_MAX_DEPTH deep, and an accepted
 *     type is at most that deep (a 10,000-deep input is refused with a
 *     message before protobuf-c recurses into it);
 *  3. determinism: the same bytes give the same answer, an equal type or
 *     the same message;
 *  4. an accepted type compiles into a skip program, and skipping an empty
 *     input and an input of zeros gives the same answer from the program,
 *     the generic skip and decode (the skip/decode agreement of
 *     fuzz_record.c, here over every type the proto can express).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/pb_nesting.h"
#include "codecs/ser.h"
#include "codecs/type.h"
#include "org/apache/flink/fn_execution/v1/flink-fn-execution.pb-c.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef Org__Apache__Flink__FnExecution__V1__TypeInfo pb_type;
#define PB(x) org__apache__flink__fn_execution__v1__type_info__##x
/* Depth of the unpacked TypeInfo tree (1 for a leaf), counted like
 * fnw_typeinfo_to_type counts; stops counting past limit. */
static int pb_depth(const pb_type *pb, int limit)
{
    if (!pb || limit <= 0)
        return 0;
    int d = 0, m;
    switch (pb->type_info_case) {   /* the oneof's members share storage */
    case ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_COLLECTION_ELEMENT_TYPE:
        d = pb_depth(pb->collection_element_type, limit - 1);
        break;
    case ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_ROW_TYPE_INFO:
        for (size_t i = 0; pb->row_type_info && i < pb->row_type_info->n_fields; i++)
            if (pb->row_type_info->fields[i] &&
                (m = pb_depth(pb->row_type_info->fields[i]->field_type, limit - 1)) > d)
                d = m;
        break;
    case ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_TUPLE_TYPE_INFO:
        for (size_t i = 0; pb->tuple_type_info && i < pb->tuple_type_info->n_field_types; i++)
            if ((m = pb_depth(pb->tuple_type_info->field_types[i], limit - 1)) > d)
                d = m;
        break;
    case ORG__APACHE__FLINK__FN_EXECUTION__V1__TYPE_INFO__TYPE_INFO_MAP_TYPE_INFO:
        if (pb->map_type_info) {
            d = pb_depth(pb->map_type_info->key_type, limit - 1);
            if ((m = pb_depth(pb->map_type_info->value_type, limit - 1)) > d)
                d = m;
        }
        break;
    default:
        break;
    }
    return d + 1;
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
    fnw_skip_program *sp = fnw_skip_program_new(t, &err);
    CHECK(sp);
    check_input(t, sp, NULL, 0);
    check_input(t, sp, zeros, sizeof zeros);
    fnw_skip_program_free(sp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fnw_error err, err2;
    int rc = fnw_pb_nesting_check(&PB(descriptor), data, size, &err);
    CHECK(rc == fnw_pb_nesting_check(&PB(descriptor), data, size, &err2));
    if (rc != 0) {
        CHECK(fuzz_same_message(&err, &err2));
        return 0;
    }
    pb_type *pb = PB(unpack)(NULL, size, data);
    if (!pb)
        return 0;
    CHECK(pb_depth(pb, FNW_TYPE_MAX_DEPTH + 1) <= FNW_TYPE_MAX_DEPTH);
    fnw_type *t = (fnw_type *)1, *t2 = (fnw_type *)1;
    rc = fnw_typeinfo_to_type(pb, &t, &err);
    int rc2 = fnw_typeinfo_to_type(pb, &t2, &err2);
    CHECK(rc == rc2);
    if (rc != 0) {
        CHECK(!t && !t2 && fuzz_same_message(&err, &err2));
    } else {
        CHECK(t && t2 && fnw_type_equal(t, t2));
        check_type(t);
    }
    fnw_type_free(t);
    fnw_type_free(t2);
    PB(free_unpacked)(pb, NULL);
    return 0;
}
