/* ops/builtin_project.c — the `project` operation: each input ROW
 * becomes one output ROW of the fields the `fields` option names
 * (comma-separated input field names, in output order; a name may repeat).
 *
 * It is the built-in that changes a record's type, so it declares no output
 * type rule of its own: the spec gives the type (OperationSpec.output_type,
 * or the operator's output type when project is the last function), and it
 * must be a ROW whose field types are those of the selected input fields
 * (the output field names are free). Synchronous, like identity; a null
 * input gives a null output. Deliberately small: it exists so that chains
 * whose types change between steps can be run and tested.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnworker.h"

#define MAX_FIELDS 1024

typedef struct project_state {
    size_t n;
    uint32_t idx[]; /* input field index of each output field */
} project_state;

static int no_such_field(const fnw_type *in, const char *name, size_t len, fnw_error *err)
{
    char t[384];
    fnw_type_format(in, t, sizeof t);
    return fnw_error_set(err,
                         "option 'fields' of operation 'project' names field '%.*s', which the input "
                         "type %s does not have",
                         (int)len, name, t);
}

/* Parses "a, b,c" into st->idx (st->n counts them). */
static int parse_fields(project_state *st, const char *list, const fnw_type *in, fnw_error *err)
{
    const char *p = list;
    for (;;) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, ",");
        while (len > 0 && p[len - 1] == ' ')
            len--;
        if (len == 0)
            return fnw_error_set(err, "option 'fields' of operation 'project' has an empty field name: '%s'",
                                 list);
        int64_t i = fnw_type_find_field(in, p, len);
        if (i < 0)
            return no_such_field(in, p, len, err);
        if (st->n == MAX_FIELDS)
            return fnw_error_set(err, "option 'fields' of operation 'project' selects more than %d fields",
                                 MAX_FIELDS);
        st->idx[st->n++] = (uint32_t)i;
        p = strchr(p, ',');
        if (!p)
            return 0;
        p++;
    }
}

/* The output type must be ROW<types of the selected fields>. */
static int check_output(const project_state *st, const fnw_type *in, const fnw_type *out, fnw_error *err)
{
    char t[384] = "(none)";
    if (out)
        fnw_type_format(out, t, sizeof t);
    if (!out || fnw_type_kind(out) != FNW_ROW || fnw_type_child_count(out) != st->n)
        return fnw_error_set(err,
                             "operation 'project' selects %zu field(s), so its output type must be a ROW "
                             "of %zu field(s) with their types; the output type is %s",
                             st->n, st->n, t);
    for (size_t k = 0; k < st->n; k++) {
        const fnw_type *want = fnw_type_child(in, st->idx[k]), *got = fnw_type_child(out, k);
        if (fnw_type_equal(want, got))
            continue;
        char a[384], b[384];
        fnw_type_format(want, a, sizeof a);
        fnw_type_format(got, b, sizeof b);
        return fnw_error_set(err,
                             "operation 'project': output field %zu ('%s') has type %s but the field it "
                             "takes, input field '%s', has type %s (output type %s)",
                             k, fnw_type_field_name(out, k), b, fnw_type_field_name(in, st->idx[k]), a, t);
    }
    return 0;
}

static int project_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    static const char *const known[] = { "fields", NULL };
    *state = NULL;
    if (fnw_options_check_known(env->options, known, "project", err) != 0)
        return -1;
    const fnw_type *in = env->input_type;
    const char *list = fnw_options_get(env->options, "fields");
    if (!list)
        return fnw_error_set(err, "operation 'project' needs option 'fields': the input field names to keep, "
                                  "comma-separated");
    if (!in || fnw_type_kind(in) != FNW_ROW)
        return fnw_error_set(err, "operation 'project' takes ROW inputs; the input type is %s",
                             in ? fnw_kind_name(fnw_type_kind(in)) : "(none)");
    project_state *st = calloc(1, sizeof *st + MAX_FIELDS * sizeof st->idx[0]);
    if (!st)
        return fnw_error_set(err, "operation 'project': out of memory");
    if (parse_fields(st, list, in, err) != 0 || check_output(st, in, env->output_type, err) != 0) {
        free(st);
        return -1;
    }
    *state = st;
    return 0;
}

static void project_close(void *state)
{
    free(state);
}

/* Emits the projection of input i; 0, or -1 after failing the call. */
static int project_one(const project_state *st, fnw_call *call, size_t i)
{
    fnw_error err;
    fnw_value in;
    if (fnw_call_decode(call, i, &in, &err) != 0) {
        fnw_call_fail(call, "project: %s", err.msg);
        return -1;
    }
    if (in.is_null) {
        if (fnw_call_emit(call, i, NULL, 0) == 0)
            return 0;
        fnw_call_fail(call, "project: out of memory");
        return -1;
    }
    fnw_value *items = fnw_arena_alloc(fnw_call_arena(call), st->n * sizeof *items);
    if (!items) {
        fnw_call_fail(call, "project: out of memory");
        return -1;
    }
    for (size_t k = 0; k < st->n; k++)
        items[k] = in.u.items[st->idx[k]];
    fnw_value out = fnw_value_row((fnw_row_kind)in.row_kind, items, (uint32_t)st->n);
    if (fnw_call_emit_value(call, i, &out, &err) != 0) {
        fnw_call_fail(call, "project: %s", err.msg);
        return -1;
    }
    return 0;
}

static void project_invoke(void *state, fnw_call *call)
{
    size_t n = fnw_call_size(call);
    for (size_t i = 0; i < n; i++)
        if (project_one(state, call, i) != 0)
            return;
    fnw_call_complete(call);
}

const fnw_operation fnw_op_project = {
    .name = "project",
    .summary = "keeps the input ROW fields named by option 'fields' (output type from the spec)",
    .output_rule = FNW_OUTPUT_DECLARED,
    .sync = 1,
    .open = project_open,
    .close = project_close,
    .invoke = project_invoke,
    .on_timeout = NULL,
    .cancel = NULL,
};
