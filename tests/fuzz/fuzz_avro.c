/* tests/fuzz/fuzz_avro.c — fuzz target for AVRO values as the worker reads
 * them: an AvroTypeInfo schema (JSON) made into an AVRO fnw_type
 * (fnw_type_set_avro_schema: the duplicate-name check of codecs/avro_names.c,
 * libavro's parser, the compiled walker of codecs/avro_program.c), then one
 * datum in Flink's Avro encoding delimited by that walker.
 *
 * Input: a 2-byte big-endian schema length L, L bytes of schema JSON (cut to
 * what is there; the worker reads the schema as a C string, so it ends at a
 * NUL), then the datum bytes.
 *
 * Properties (abort() on violation; LeakSanitizer finds leaks):
 *  1. a schema the duplicate-name check refuses is refused by
 *     fnw_type_set_avro_schema with that same message: libavro, which leaks
 *     on a second definition of a name, never sees it;
 *  2. every refusal carries a non-empty message; the same schema gives the
 *     same answer twice, and equal types;
 *  3. delimiting never over-reads: fnw_avro_program_skip consumes at most the datum
 *     bytes; walking exactly the consumed bytes gives the same length, and
 *     walking one byte fewer fails (the walk needs every byte it consumed);
 *  4. the record paths agree: the type's skip program, the generic skip and
 *     decode give fnw_avro_program_skip's answer; decode's value is the consumed
 *     bytes, and encode writes them back unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/avro_program.h"
#include "codecs/avro_names.h"
#include "codecs/bytes.h"
#include "codecs/ser.h"
#include "codecs/type.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Property 3: the walk depends on the consumed bytes only. */
static void check_delimiting(const fnw_avro_program *pl, const uint8_t *p, size_t n)
{
    size_t used = 0, used2 = 0;
    fnw_error err, err2;
    int rc = fnw_avro_program_skip(pl, p, n, &used, &err);
    CHECK(rc == fnw_avro_program_skip(pl, p, n, &used2, &err2));
    if (rc != 0) {
        CHECK(fuzz_same_message(&err, &err2));
        return;
    }
    CHECK(used <= n && used == used2);
    /* a copy of exactly the consumed bytes, so ASan sees any read past them */
    uint8_t *exact = malloc(used ? used : 1);
    CHECK(exact);
    memcpy(exact, p, used);
    CHECK(fnw_avro_program_skip(pl, exact, used, &used2, &err2) == 0 && used2 == used);
    if (used > 0)
        CHECK(fnw_avro_program_skip(pl, exact, used - 1, &used2, &err2) != 0 && err2.msg[0]);
    free(exact);
}

/* Property 4 for the AVRO type t. */
static void check_record_paths(const fnw_type *t, const uint8_t *p, size_t n)
{
    fnw_error err, err2, err3;
    size_t used = 0, used2 = 0, used3 = 0;
    int rc = fnw_avro_program_skip(t->avro_program, p, n, &used, &err);
    fnw_skip_program *sp = fnw_skip_program_new(t, &err2);
    CHECK(sp);
    int rc2 = fnw_skip_program_run(sp, p, n, &used2, &err2);
    fnw_skip_program_free(sp);
    CHECK(rc2 == rc && (rc != 0 || used2 == used));
    CHECK(fnw_ser_skip_generic(t, p, n, &used2, &err2) == rc && (rc != 0 || used2 == used));
    fnw_value v;
    int rc3 = fnw_ser_decode(t, p, n, NULL, &v, &used3, &err3);
    CHECK(rc3 == rc);
    if (rc != 0) {
        CHECK(err3.msg[0]);
        return;
    }
    CHECK(used3 == used && v.count == used && (used == 0 || v.u.bytes == p));
    fnw_buf out;
    fnw_buf_init(&out, 0);
    CHECK(fnw_ser_encode(t, &v, &out, &err3) == 0);
    CHECK(out.len == used && (used == 0 || memcmp(out.p, p, used) == 0));
    fnw_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t len = fnw_load_be16(data);
    if (len > size - 2)
        len = size - 2;
    char *json = malloc(len + 1);
    CHECK(json);
    memcpy(json, data + 2, len);
    json[len] = '\0';
    const uint8_t *datum = data + 2 + len;
    size_t n = size - 2 - len;

    fnw_error names_err, err, err2;
    int names_rc = fnw_avro_names_check(json, strlen(json), &names_err);
    fnw_type *t = fnw_type_new(FNW_AVRO), *t2 = fnw_type_new(FNW_AVRO);
    CHECK(t && t2);
    int rc = fnw_type_set_avro_schema(t, json, &err);
    CHECK(rc == fnw_type_set_avro_schema(t2, json, &err2));
    if (names_rc != 0 && json[0])
        CHECK(rc != 0 && strcmp(err.msg, names_err.msg) == 0);
    if (rc != 0) {
        CHECK(fuzz_same_message(&err, &err2));
    } else {
        CHECK(fnw_type_equal(t, t2));
        check_delimiting(t->avro_program, datum, n);
        check_record_paths(t, datum, n);
    }
    fnw_type_free(t);
    fnw_type_free(t2);
    free(json);
    return 0;
}
