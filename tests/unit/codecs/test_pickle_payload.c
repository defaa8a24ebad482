/* tests/unit/codecs/test_pickle_payload.c — the reader of fnworker payload pickles:
 * every pickle the fnworker Python package produces through CPython's pickle
 * and cloudpickle at protocols 2 to 5 (generated at test time by
 * python/tests/make_fixtures.py into the build dir) gives back its exact
 * OperationSpec; each one cut short at every byte, or followed by one more
 * byte, is refused; hand-written near misses (other module or function,
 * two arguments, nested calls, huge lengths, other protocols, bad latin1
 * text) are refused with a message saying what was found. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <dirent.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecs/pickle_payload.h"

static char fixture_dir[4096];
static int have_fixtures;

#define B(lit) (const uint8_t *)(lit), sizeof(lit) - 1

/* ---- helpers ----------------------------------------------------------------------- */

static int read_pickle(const uint8_t *p, size_t n, uint8_t **spec, size_t *len, fnw_error *err)
{
    *spec = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(*spec);
    return fnw_pickle_payload_read(p, n, *spec, len, err);
}

static void expect_spec(const uint8_t *p, size_t n, const char *want, size_t want_len)
{
    uint8_t *spec;
    size_t len = 0;
    fnw_error err = {{0}};
    ck_assert_msg(read_pickle(p, n, &spec, &len, &err) == 0, "refused: %s", err.msg);
    ck_assert_uint_eq(len, want_len);
    ck_assert_mem_eq(spec, want, want_len);
    free(spec);
}

/* Refused, and the message contains every one of the NULL-ended parts. */
static void expect_refused(const uint8_t *p, size_t n, ...)
{
    uint8_t *spec;
    size_t len = 0;
    fnw_error err = {{0}};
    ck_assert_int_eq(read_pickle(p, n, &spec, &len, &err), -1);
    free(spec);
    ck_assert_msg(err.msg[0] != 0, "refused without a message");
    va_list ap;
    va_start(ap, n);
    for (const char *part; (part = va_arg(ap, const char *)) != NULL;)
        ck_assert_msg(strstr(err.msg, part) != NULL, "message lacks \"%s\": %s", part, err.msg);
    va_end(ap);
}

static uint8_t *slurp(const char *dir, const char *name, size_t *n)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(size > 0 ? (size_t)size : 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *n = (size_t)size;
    return b;
}

/* Calls fn(name, pickle, n, spec, spec_n) for each generated NAME.pickle with a NAME.spec. */
static int each_fixture(void (*fn)(const char *, const uint8_t *, size_t, const uint8_t *, size_t))
{
    DIR *d = opendir(fixture_dir);
    ck_assert_msg(d != NULL, "no fixture dir %s", fixture_dir);
    int count = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t k = strlen(e->d_name);
        if (k < 8 || strcmp(e->d_name + k - 7, ".pickle") != 0 || strncmp(e->d_name, "refuse-", 7) == 0)
            continue;
        char spec_name[512];
        snprintf(spec_name, sizeof spec_name, "%.*s.spec", (int)(k - 7), e->d_name);
        size_t n, sn;
        uint8_t *p = slurp(fixture_dir, e->d_name, &n), *s = slurp(fixture_dir, spec_name, &sn);
        ck_assert_msg(p && s, "fixture %s without its spec", e->d_name);
        fn(e->d_name, p, n, s, sn);
        free(p);
        free(s);
        count++;
    }
    closedir(d);
    return count;
}

/* ---- pickles the package produced --------------------------------------------------- */

static void reads_back(const char *name, const uint8_t *p, size_t n, const uint8_t *s, size_t sn)
{
    uint8_t *spec;
    size_t len = 0;
    fnw_error err = {{0}};
    ck_assert_msg(read_pickle(p, n, &spec, &len, &err) == 0, "%s refused: %s", name, err.msg);
    ck_assert_msg(len == sn && memcmp(spec, s, sn) == 0, "%s: wrong OperationSpec bytes", name);
    free(spec);
}

START_TEST(generated_pickles_give_their_spec)
{
    if (!have_fixtures)
        return;
    /* 2 specs' worth at least: pickle at 4 protocols x 5 specs, and cloudpickle's when installed */
    ck_assert_int_ge(each_fixture(reads_back), 20);
}
END_TEST

static void cut_and_padded(const char *name, const uint8_t *p, size_t n, const uint8_t *s, size_t sn)
{
    if (n > 4096)
        return;   /* the large spec: cut at the interesting places by the other fixtures */
    uint8_t *buf = malloc(n + 1);
    ck_assert_ptr_nonnull(buf);
    memcpy(buf, p, n);
    for (size_t k = 0; k < n; k++) {
        uint8_t *exact = malloc(k ? k : 1);   /* no slack: ASan sees any read past the cut */
        ck_assert_ptr_nonnull(exact);
        memcpy(exact, p, k);
        uint8_t out[4096];
        size_t len;
        fnw_error err = {{0}};
        ck_assert_msg(fnw_pickle_payload_read(exact, k, out, &len, &err) == -1, "%s cut to %zu bytes was read",
                      name, k);
        free(exact);
    }
    buf[n] = '.';
    expect_refused(buf, n + 1, "after the STOP opcode", "rebuild the job", NULL);
    free(buf);
}

START_TEST(generated_pickles_cut_short_or_padded_are_refused)
{
    if (!have_fixtures)
        return;
    ck_assert_int_ge(each_fixture(cut_and_padded), 20);
}
END_TEST

START_TEST(generated_other_pickles_are_named)
{
    if (!have_fixtures)
        return;
    size_t n;
    uint8_t *p = slurp(fixture_dir, "refuse-builtins-len.pickle", &n);
    ck_assert_ptr_nonnull(p);
    expect_refused(p, n, "Python pickle (protocol 4) of builtins.len", "native operations",
                   "from fnworker import", "docs/pyflink.md", NULL);
    free(p);
    p = slurp(fixture_dir, "refuse-tuple.pickle", &n);
    ck_assert_ptr_nonnull(p);
    expect_refused(p, n, "not in the form the fnworker package writes", "TUPLE1", NULL);
    free(p);
    p = slurp(fixture_dir, "refuse-cloudpickle-function.pickle", &n);
    if (p) {   /* written when cloudpickle is installed */
        expect_refused(p, n, "of cloudpickle.cloudpickle._make_function", "native operations", "docs/pyflink.md", NULL);
        free(p);
    }
}
END_TEST

/* ---- hand-written forms and near misses ---------------------------------------------- */

#define GLOBAL_FN "cfnworker._payload\nrun_in_fnworker\n"
#define STACK_FN "\x8c\x11" "fnworker._payload" "\x94" "\x8c\x0f" "run_in_fnworker" "\x94" "\x93" "\x94"
#define SPEC "\n\x04" "echo"
#define SPEC_BYTES "C\x06" SPEC "\x94"

START_TEST(every_form_of_the_grammar_is_read)
{
    /* protocol 3: GLOBAL, BINBYTES, BINPUT memo */
    expect_spec(B("\x80\x03" GLOBAL_FN "q\x00" "B\x06\x00\x00\x00" SPEC "q\x01" "\x85" "q\x02" "R" "q\x03" "."),
                SPEC, 6);
    /* protocol 4: UNICODE strings, text PUT, LONG_BINPUT, MARK ... TUPLE, BINBYTES8 */
    expect_spec(B("\x80\x04" "Vfnworker._payload\n" "p0\n" "Vrun_in_fnworker\n" "p12\n" "\x93" "r\x02\x00\x00\x00"
                  "(" "\x8e\x06\x00\x00\x00\x00\x00\x00\x00" SPEC "t" "R" "."), SPEC, 6);
    /* protocol 5: FRAMEs anywhere between opcodes, as around a large bytes object */
    expect_spec(B("\x80\x05" "\x95\x26\x00\x00\x00\x00\x00\x00\x00" STACK_FN "C\x06" SPEC
                  "\x95\x05\x00\x00\x00\x00\x00\x00\x00" "\x94" "\x85" "\x94" "R" "."), SPEC, 6);
    /* protocol 2: _codecs.encode(<latin1 text>, 'latin1'), MARK ... TUPLE, SHORT_BINUNICODE */
    expect_spec(B("\x80\x02" GLOBAL_FN "c_codecs\nencode\n" "(" "X\x05\x00\x00\x00" "\xc3\xa9" "\xc2\x80" "a"
                  "\x8c\x06" "latin1" "t" "R" "\x85" "R" "."), "\xe9\x80" "a", 3);
    /* an empty OperationSpec is the OperationSpec's business, not the pickle's */
    expect_spec(B("\x80\x03" GLOBAL_FN "C\x00" "\x85" "R" "."), "", 0);
}
END_TEST

START_TEST(other_functions_are_named)
{
    expect_refused(B("\x80\x02" "cfnworker._payloads\nrun_in_fnworker\n" "C\x06" SPEC "\x85" "R" "."),
                   "Python pickle (protocol 2) of fnworker._payloads.run_in_fnworker", "native operations",
                   "from fnworker import", NULL);
    expect_refused(B("\x80\x04" "\x8c\x11" "fnworker._payload" "\x8c\x03" "run" "\x93" SPEC_BYTES "\x85" "R" "."),
                   "of fnworker._payload.run,", NULL);
    expect_refused(B("\x80\x05" "\x8c\x04" "os\x01x" "\x8c\x06" "system" "\x93" "."), "of os?x.system", NULL);
    /* the old refusal's words stay: a pickle of something else (here no function reference at all) */
    expect_refused(B("\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x08" "builtins" "\x94" "."),
                   "Python pickle (protocol 4)", "does not start with a function reference", "native operations",
                   "docs/pyflink.md", NULL);
    expect_refused(B("\x80\x04" "\x94" STACK_FN SPEC_BYTES "\x85" "R" "."), "function reference", NULL);
}
END_TEST

START_TEST(other_call_shapes_are_refused)
{
    /* two arguments */
    expect_refused(B("\x80\x03" GLOBAL_FN "(" SPEC_BYTES SPEC_BYTES "t" "R" "."), "expected", "TUPLE", NULL);
    expect_refused(B("\x80\x03" GLOBAL_FN SPEC_BYTES SPEC_BYTES "\x86" "R" "."), "TUPLE1", NULL);
    /* no argument */
    expect_refused(B("\x80\x03" GLOBAL_FN ")" "R" "."), "OperationSpec bytes were expected", NULL);
    /* nested calls */
    expect_refused(B("\x80\x03" GLOBAL_FN GLOBAL_FN SPEC_BYTES "\x85" "R" "\x85" "R" "."),
                   "other than _codecs.encode", NULL);
    expect_refused(B("\x80\x04" STACK_FN STACK_FN SPEC_BYTES "\x85" "R" "\x85" "R" "."),
                   "other than _codecs.encode", NULL);
    /* a memo GET, a string, an int where the bytes go */
    expect_refused(B("\x80\x04" STACK_FN "h\x00" "\x85" "R" "."), "opcode 0x68", NULL);
    expect_refused(B("\x80\x04" STACK_FN "\x8c\x01" "x" "\x85" "R" "."), "", NULL);
    expect_refused(B("\x80\x04" STACK_FN "K\x01" "\x85" "R" "."), "opcode 0x4b", NULL);
    /* no REDUCE, no STOP, something after STOP */
    expect_refused(B("\x80\x04" STACK_FN SPEC_BYTES "\x85" "."), "REDUCE", NULL);
    expect_refused(B("\x80\x04" STACK_FN SPEC_BYTES "\x85" "R"), "ends before its STOP", NULL);
    expect_refused(B("\x80\x04" STACK_FN SPEC_BYTES "\x85" "R" "." "."), "1 bytes after the STOP", NULL);
    expect_refused(B("\x80\x04" STACK_FN SPEC_BYTES "\x85" "R" "." "\x95\x00\x00\x00\x00\x00\x00\x00\x00"),
                   "after the STOP", NULL);
}
END_TEST

START_TEST(huge_and_short_lengths_are_refused)
{
    expect_refused(B("\x80\x05" STACK_FN "\x8e\xff\xff\xff\xff\xff\xff\xff\x7f" SPEC "\x85" "R" "."),
                   "only 9 bytes are left", NULL);
    expect_refused(B("\x80\x05" STACK_FN "\x8e\xff\xff\xff\xff\xff\xff\xff\xff" SPEC "\x85" "R" "."),
                   "bytes are left", NULL);
    expect_refused(B("\x80\x03" GLOBAL_FN "B\xff\xff\xff\xff" SPEC "\x85" "R" "."), "bytes are left", NULL);
    expect_refused(B("\x80\x03" GLOBAL_FN "C\xff" SPEC "\x85" "R" "."), "bytes are left", NULL);
    expect_refused(B("\x80\x05" "\x95\xff\xff\xff\xff\xff\xff\xff\xff" STACK_FN SPEC_BYTES "\x85" "R" "."),
                   "bytes are left", NULL);
    expect_refused(B("\x80\x05" "\x8c\xff" "fnworker"), "does not start with a function reference", NULL);
    expect_refused(B("\x80\x05" "X\xff\xff\xff\x7f" "fnworker"), "bytes are left", NULL);
    expect_refused(B("\x80\x03" "cfnworker._payload"), "without its newline", NULL);
    expect_refused(B("\x80\x03" GLOBAL_FN "p12345678901\n"), "PUT", NULL);
    expect_refused(B("\x80\x03" GLOBAL_FN "r\x01\x00"), "memo", NULL);
    expect_refused(B("\x80\x05" "\x95\x01\x00\x00"), "", NULL);
}
END_TEST

START_TEST(other_protocols_and_text_are_refused)
{
    expect_refused(B(""), "not a Python pickle", NULL);
    expect_refused(B("\x80"), "not a Python pickle", NULL);
    expect_refused(B("(lp0\n."), "not a Python pickle", NULL);
    expect_refused(B("\x80\x01" GLOBAL_FN SPEC_BYTES "\x85" "R" "."), "protocol 1", "from fnworker import", NULL);
    expect_refused(B("\x80\x06" STACK_FN SPEC_BYTES "\x85" "R" "."), "protocol 6", NULL);
    /* protocol 2 bytes: only 'latin1', only code points below 256, no protocol-0 text */
    expect_refused(B("\x80\x02" GLOBAL_FN "c_codecs\nencode\n" "X\x01\x00\x00\x00" "a" "X\x05\x00\x00\x00" "utf-8"
                     "\x86" "R" "\x85" "R" "."), "'latin1'", NULL);
    expect_refused(B("\x80\x02" GLOBAL_FN "c_codecs\nencode\n" "X\x02\x00\x00\x00" "\xc4\x80" "X\x06\x00\x00\x00"
                     "latin1" "\x86" "R" "\x85" "R" "."), "not Latin-1", NULL);
    expect_refused(B("\x80\x02" GLOBAL_FN "c_codecs\nencode\n" "X\x01\x00\x00\x00" "\xc3" "X\x06\x00\x00\x00"
                     "latin1" "\x86" "R" "\x85" "R" "."), "not Latin-1", NULL);
    expect_refused(B("\x80\x02" GLOBAL_FN "c_codecs\nencode\n" "Va\n" "X\x06\x00\x00\x00" "latin1" "\x86" "R" "\x85"
                     "R" "."), "UNICODE", NULL);
    expect_refused(B("\x80\x02" GLOBAL_FN "c_codecs\ndecode\n" "X\x01\x00\x00\x00" "a" "X\x06\x00\x00\x00" "latin1"
                     "\x86" "R" "\x85" "R" "."), "other than _codecs.encode", NULL);
}
END_TEST

/* ---- fixtures ------------------------------------------------------------------------ */

/* Writes the package's pickles into <dir of this binary>/pickle_fixtures with
 * python3 (FNW_PYTHON, else /usr/bin/python3); run from the repository root. */
static void make_fixtures(const char *argv0)
{
    char self[4096];
    snprintf(self, sizeof self, "%s", argv0);
    snprintf(fixture_dir, sizeof fixture_dir, "%s/pickle_fixtures", dirname(self));
    const char *py = getenv("FNW_PYTHON") ? getenv("FNW_PYTHON") : "/usr/bin/python3";
    const char *script = "python/tests/make_fixtures.py";
    if (access(py, X_OK) != 0 || access(script, R_OK) != 0) {
        printf("test_pickle_payload: %s or %s missing: skipping the tests on pickles the fnworker package "
               "writes (the hand-written cases still run)\n", py, script);
        return;
    }
    char cmd[12288];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && PYTHONDONTWRITEBYTECODE=1 '%s' %s '%s' >/dev/null",
             fixture_dir, py, script, fixture_dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "test_pickle_payload: generating the fixtures failed: %s\n", cmd);
        exit(1);
    }
    have_fixtures = 1;
}

int main(int argc, char **argv)
{
    (void)argc;
    make_fixtures(argv[0]);
    Suite *s = suite_create("pickle_payload");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, generated_pickles_give_their_spec);
    tcase_add_test(tc, generated_pickles_cut_short_or_padded_are_refused);
    tcase_add_test(tc, generated_other_pickles_are_named);
    tcase_add_test(tc, every_form_of_the_grammar_is_read);
    tcase_add_test(tc, other_functions_are_named);
    tcase_add_test(tc, other_call_shapes_are_refused);
    tcase_add_test(tc, huge_and_short_lengths_are_refused);
    tcase_add_test(tc, other_protocols_and_text_are_refused);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
