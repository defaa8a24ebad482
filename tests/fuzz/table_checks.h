/* tests/fuzz/table_checks.h — what an accepted Table plan
 * (worker/table_plan.c) must be, shared by fuzz_plan.c (the plan of a whole
 * descriptor) and fuzz_table_plan.c (one Table transform):
 * fuzz_check_table(p) aborts unless p->table has one node per step, the
 * description's nodes are the plan's, the window is at least one row, and
 * each node's arguments match its step's argument row: a column is a field
 * of the input row of that type, a constant is a null or bytes that decode
 * as exactly one value of its type, a nested call names an earlier node (a
 * nested one, no column) whose result has that type; every output column
 * is filled by exactly one node whose result is the column's type (a table
 * function: its last node's result is the output row), and every nested
 * node is called exactly once.
 */
#ifndef FNW_FUZZ_TABLE_CHECKS_H
#define FNW_FUZZ_TABLE_CHECKS_H

#include <stdlib.h>

#include "codecs/arena.h"
#include "codecs/ser.h"
#include "codecs/type.h"
#include "tests/fuzz/fuzz_support.h"
#include "worker/plan.h"
#include "worker/table_plan.h"

/* The result a node gives: its output, or field 0 of it when unwrapped. */
static const fnw_type *node_result(const fnw_plan *p, uint32_t i)
{
    const fnw_plan_step *s = &p->steps[i];
    return p->table->nodes[i].unwrap ? fnw_type_child(s->output_type, 0) : s->output_type;
}

static void check_const(const fnw_type *t, const fnw_proj_arg *a)
{
    if (!a->bytes) {
        CHECK(a->len == 0);
        return;
    }
    fnw_arena ar;
    fnw_value v;
    fnw_error err;
    size_t used = 0;
    fnw_arena_init(&ar, 256, 0);
    CHECK(fnw_ser_decode(t, a->bytes, a->len, &ar, &v, &used, &err) == 0 && used == a->len);
    fnw_arena_free(&ar);
}

static void fuzz_check_table(const fnw_plan *p)
{
    const fnw_table_plan *tp = p->table;
    const fnw_proj_desc *d = &tp->desc;
    CHECK(p->input_raw == p->input_type && p->output_raw == p->output_type && !p->input_field);
    CHECK(d->n_nodes == p->n_steps && d->nodes == tp->nodes && d->window >= 1);
    size_t columns = fnw_type_child_count(p->output_type);
    CHECK(d->n_columns == columns);
    int *filled = calloc(columns + 1, sizeof *filled), *called = calloc(d->n_nodes, sizeof *called);
    CHECK(filled && called);
    for (uint32_t i = 0; i < d->n_nodes; i++) {
        const fnw_proj_node *n = &d->nodes[i];
        const fnw_plan_step *s = &p->steps[i];
        CHECK(n->name && n->name[0] && fnw_type_kind(s->input_type) == FNW_ROW);
        CHECK(n->n_args == fnw_type_child_count(s->input_type) && (n->args || n->n_args == 0));
        const fnw_type *res = node_result(p, i);
        CHECK(res && (!n->unwrap || fnw_type_child_count(s->output_type) == 1));
        for (uint32_t j = 0; j < n->n_args; j++) {
            const fnw_proj_arg *a = &n->args[j];
            const fnw_type *t = fnw_type_child(s->input_type, j);
            switch (a->kind) {
            case FNW_PROJ_FIELD:
                CHECK(a->field && fnw_type_equal_ignoring_names(fnw_ser_field_type(a->field), t));
                break;
            case FNW_PROJ_CONST:
                check_const(t, a);
                break;
            case FNW_PROJ_CALL:
                CHECK(a->node < i && d->nodes[a->node].column == -1);
                CHECK(fnw_type_equal_ignoring_names(node_result(p, a->node), t));
                called[a->node]++;
                break;
            default:
                CHECK(0);
            }
        }
        if (d->table_function) {
            CHECK(n->column == -1);
        } else if (n->column >= 0) {
            CHECK((size_t)n->column < columns);
            filled[n->column]++;
            CHECK(fnw_type_equal_ignoring_names(res, fnw_type_child(p->output_type, (size_t)n->column)));
        }
    }
    for (uint32_t i = 0; i < d->n_nodes; i++) {
        int top = d->table_function ? i + 1 == d->n_nodes : d->nodes[i].column >= 0;
        CHECK(top ? called[i] == 0 : called[i] == 1);
    }
    if (d->table_function)
        CHECK(fnw_type_equal_ignoring_names(node_result(p, d->n_nodes - 1), p->output_type));
    else
        for (size_t c = 0; c < columns; c++)
            CHECK(filled[c] == 1);
    free(filled);
    free(called);
}

#endif
