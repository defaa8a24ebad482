/* tests/unit/worker/test_log_level.c — level names and thresholds (Beam's Java and
 * Python spellings), and the level the runner asks for in the provisioned
 * pipeline options: which keys are read, what wins, what is ignored. */
#include <check.h>

#include "tests/unit/check_run.h"
#include <ev.h>
#include <string.h>

#include "worker/log_level.h"
#include "worker/log_options.h"

typedef Google__Protobuf__Value pb_Value;
typedef Google__Protobuf__Struct__FieldsEntry pb_Field;

static int level_of(const char *s)
{
    fnw_level l;
    return fnw_log_level_parse(s, &l) < 0 ? -1 : (int)l;
}

START_TEST(names_in_every_spelling)
{
    ck_assert_int_eq(level_of("debug"), FNW_LOG_DEBUG);
    ck_assert_int_eq(level_of("DEBUG"), FNW_LOG_DEBUG);
    ck_assert_int_eq(level_of("TRACE"), FNW_LOG_DEBUG);
    ck_assert_int_eq(level_of("NOTSET"), FNW_LOG_DEBUG);
    ck_assert_int_eq(level_of("INFO"), FNW_LOG_INFO);
    ck_assert_int_eq(level_of("WARN"), FNW_LOG_WARN);
    ck_assert_int_eq(level_of("WARNING"), FNW_LOG_WARN);
    ck_assert_int_eq(level_of("Error"), FNW_LOG_ERROR);
    ck_assert_int_eq(level_of("CRITICAL"), FNW_LOG_ERROR);
    ck_assert_int_eq(level_of("FATAL"), FNW_LOG_ERROR);
    ck_assert_int_eq(level_of("OFF"), FNW_LOG_ERROR);   /* errors are always logged */
    ck_assert_int_eq(level_of("loud"), -1);
    ck_assert_int_eq(level_of(""), -1);
    ck_assert_str_eq(fnw_log_level_name(FNW_LOG_WARN), "warn");
}
END_TEST

START_TEST(python_numeric_thresholds)
{
    ck_assert_int_eq(level_of("0"), FNW_LOG_DEBUG);
    ck_assert_int_eq(level_of("10"), FNW_LOG_DEBUG);
    ck_assert_int_eq(level_of("15"), FNW_LOG_INFO);     /* drops debug (10), keeps info (20) */
    ck_assert_int_eq(level_of("20"), FNW_LOG_INFO);
    ck_assert_int_eq(level_of("30"), FNW_LOG_WARN);
    ck_assert_int_eq(level_of("40"), FNW_LOG_ERROR);
    ck_assert_int_eq(level_of("50"), FNW_LOG_ERROR);
    ck_assert_int_eq(level_of("-10"), -1);
    ck_assert_int_eq(level_of("1e3"), -1);
    fnw_level l;
    ck_assert_int_eq(fnw_log_level_from_threshold(25.0, &l), 0);
    ck_assert_int_eq(l, FNW_LOG_WARN);
    ck_assert_int_eq(fnw_log_level_from_threshold(-1, &l), -1);
}
END_TEST

/* ---- pipeline options -------------------------------------------------------------- */

typedef struct opts {
    Google__Protobuf__Struct s;
    pb_Field f[4];
    pb_Field *fp[4];
    pb_Value v[4];
} opts;

static void opts_init(opts *o)
{
    Google__Protobuf__Struct s = GOOGLE__PROTOBUF__STRUCT__INIT;
    o->s = s;
    o->s.fields = o->fp;
}

static pb_Value *opts_add(opts *o, const char *key)
{
    size_t i = o->s.n_fields++;
    pb_Field f = GOOGLE__PROTOBUF__STRUCT__FIELDS_ENTRY__INIT;
    pb_Value v = GOOGLE__PROTOBUF__VALUE__INIT;
    o->f[i] = f;
    o->v[i] = v;
    o->f[i].key = (char *)key;
    o->f[i].value = &o->v[i];
    o->fp[i] = &o->f[i];
    return &o->v[i];
}

static void set_string(pb_Value *v, const char *s)
{
    v->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_STRING_VALUE;
    v->string_value = (char *)s;
}

START_TEST(flinks_key_and_value)
{
    opts o;
    opts_init(&o);
    set_string(opts_add(&o, "beam:option:job_name:v1"), "x");
    set_string(opts_add(&o, "beam:option:default_sdk_harness_log_level:v1"), "DEBUG");
    fnw_log_request r;
    fnw_log_options_read(&o.s, &r);
    ck_assert(r.found && r.valid);
    ck_assert_int_eq(r.level, FNW_LOG_DEBUG);
    ck_assert_str_eq(r.key, "beam:option:default_sdk_harness_log_level:v1");
    ck_assert_str_eq(r.text, "DEBUG");
    ck_assert(!r.has_overrides);
}
END_TEST

START_TEST(bare_key_legacy_layout_and_numbers)
{
    opts o;
    opts_init(&o);
    set_string(opts_add(&o, "default_sdk_harness_log_level"), "WARNING");
    fnw_log_request r;
    fnw_log_options_read(&o.s, &r);
    ck_assert(r.found && r.valid && r.level == FNW_LOG_WARN);

    /* {"options": {"default_sdk_harness_log_level": 40}} */
    opts inner, outer;
    opts_init(&inner);
    pb_Value *n = opts_add(&inner, "default_sdk_harness_log_level");
    n->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_NUMBER_VALUE;
    n->number_value = 40;
    opts_init(&outer);
    pb_Value *ov = opts_add(&outer, "options");
    ov->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_STRUCT_VALUE;
    ov->struct_value = &inner.s;
    fnw_log_options_read(&outer.s, &r);
    ck_assert(r.found && r.valid && r.level == FNW_LOG_ERROR);
    ck_assert_str_eq(r.text, "40");

    /* a look-alike key is not the option */
    opts other;
    opts_init(&other);
    set_string(opts_add(&other, "beam:option:default_sdk_harness_log_level_x:v1"), "DEBUG");
    fnw_log_options_read(&other.s, &r);
    ck_assert(!r.found);
    fnw_log_options_read(NULL, &r);
    ck_assert(!r.found && !r.has_overrides);
}
END_TEST

START_TEST(unknown_value_and_overrides)
{
    opts o, ov;
    opts_init(&o);
    set_string(opts_add(&o, "beam:option:default_sdk_harness_log_level:v1"), "LOUD");
    opts_init(&ov);
    set_string(opts_add(&ov, "org.apache.beam"), "WARN");
    set_string(opts_add(&ov, "fnworker"), "DEBUG");
    pb_Value *v = opts_add(&o, "beam:option:sdk_harness_log_level_overrides:v1");
    v->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_STRUCT_VALUE;
    v->struct_value = &ov.s;
    fnw_log_request r;
    fnw_log_options_read(&o.s, &r);
    ck_assert(r.found && !r.valid);
    ck_assert(r.has_overrides);
    ck_assert_int_eq((int)r.n_overrides, 2);
}
END_TEST

START_TEST(apply_honours_the_command_line)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    fnw_logger lg;
    fnw_log_request r;
    memset(&r, 0, sizeof r);
    r.found = r.valid = 1;
    r.level = FNW_LOG_DEBUG;
    strcpy(r.key, "beam:option:default_sdk_harness_log_level:v1");
    strcpy(r.text, "DEBUG");

    fnw_log_init(&lg, loop, FNW_LOG_INFO);
    fnw_log_options_apply(&lg, &r, NULL);
    ck_assert_int_eq(lg.level, FNW_LOG_DEBUG);
    ck_assert_int_eq((int)lg.queued, 1);          /* the debug line saying so */
    fnw_log_free(&lg);

    fnw_log_init(&lg, loop, FNW_LOG_WARN);
    fnw_log_options_apply(&lg, &r, "warn");       /* --log-level=warn wins */
    ck_assert_int_eq(lg.level, FNW_LOG_WARN);
    ck_assert_int_eq((int)lg.queued, 0);
    fnw_log_free(&lg);

    r.valid = 0;                                  /* unreadable: a warning, level kept */
    strcpy(r.text, "LOUD");
    fnw_log_init(&lg, loop, FNW_LOG_INFO);
    fnw_log_options_apply(&lg, &r, NULL);
    ck_assert_int_eq(lg.level, FNW_LOG_INFO);
    ck_assert_int_eq((int)lg.queued, 1);
    fnw_log_free(&lg);
    ev_loop_destroy(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("log_level");
    TCase *tc = tcase_create("levels");
    tcase_add_test(tc, names_in_every_spelling);
    tcase_add_test(tc, python_numeric_thresholds);
    tcase_add_test(tc, flinks_key_and_value);
    tcase_add_test(tc, bare_key_legacy_layout_and_numbers);
    tcase_add_test(tc, unknown_value_and_overrides);
    tcase_add_test(tc, apply_honours_the_command_line);
    suite_add_tcase(s, tc);
    return fnw_check_run(s);
}
