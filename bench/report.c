/* bench/report.c — the table and results.json (see report.h). */
#include "bench/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bench_row *bench_report_add(bench_report *r, const char *id, const char *what)
{
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 32;
        bench_row *rows = realloc(r->rows, (size_t)cap * sizeof *rows);
        if (!rows)
            return NULL;
        r->rows = rows;
        r->cap = cap;
    }
    bench_row *row = &r->rows[r->n++];
    memset(row, 0, sizeof *row);
    snprintf(row->id, sizeof row->id, "%s", id);
    snprintf(row->what, sizeof row->what, "%s", what);
    row->verdict = BENCH_INFO;
    return row;
}

void bench_row_kv(bench_row *row, const char *key, double v)
{
    if (row->n_kv == BENCH_MAX_KV)
        return;
    snprintf(row->kv_key[row->n_kv], sizeof row->kv_key[0], "%s", key);
    row->kv_val[row->n_kv++] = v;
}

void bench_row_note(bench_row *row, const char *fmt, ...)
{
    size_t used = strlen(row->note);
    if (used && used + 2 < sizeof row->note) {
        memcpy(row->note + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row->note + used, sizeof row->note - used, fmt, ap);
    va_end(ap);
}

void bench_row_judge(bench_row *row, int holds, int failed)
{
    row->verdict = failed ? BENCH_FAIL : holds ? BENCH_PASS : BENCH_MISS;
}

void bench_report_free(bench_report *r)
{
    free(r->rows);
    r->rows = NULL;
    r->n = r->cap = 0;
}

int bench_report_failures(const bench_report *r)
{
    int n = 0;
    for (int i = 0; i < r->n; i++)
        n += r->rows[i].verdict == BENCH_FAIL;
    return n;
}

void bench_fmt_rate(char *out, size_t n, double v, const char *unit)
{
    if (v >= 1e6)
        snprintf(out, n, "%.2f M %s", v / 1e6, unit);
    else if (v >= 1e3)
        snprintf(out, n, "%.1f k %s", v / 1e3, unit);
    else
        snprintf(out, n, "%.1f %s", v, unit);
}

static const char *verdict_name(int v)
{
    static const char *const names[] = {"PASS", "MISS", "INFO", "FAIL"};
    return names[v];
}

void bench_report_print(const bench_report *r, double elapsed_s, const char *title)
{
    int pass = 0, miss = 0, fail = 0;
    printf("\n%s\n", title);
    printf("%-6s %-48s %-28s %-16s %-44s %-31s %s\n", "id", "workload", "result", "vs ceiling",
           "worker cost", "target", "verdict");
    for (int i = 0; i < r->n; i++) {
        const bench_row *w = &r->rows[i];
        printf("%-6s %-48s %-28s %-16s %-44s %-31s %s\n", w->id, w->what, w->result, w->vs_ceiling,
               w->worker, w->target[0] ? w->target : "-", verdict_name(w->verdict));
        if (w->note[0])
            printf("      %s\n", w->note);
        pass += w->verdict == BENCH_PASS;
        miss += w->verdict == BENCH_MISS;
        fail += w->verdict == BENCH_FAIL;
    }
    printf("\n%d PASS, %d MISS, %d FAIL (worker misbehaved) in %.0f s\n", pass, miss, fail, elapsed_s);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

int bench_report_json(const bench_report *r, const char *path, const char *machine, double elapsed_s)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\n  \"machine\": ");
    json_str(f, machine);
    fprintf(f, ",\n  \"elapsed_s\": %.1f,\n  \"failures\": %d,\n  \"rows\": [\n", elapsed_s,
            bench_report_failures(r));
    for (int i = 0; i < r->n; i++) {
        const bench_row *w = &r->rows[i];
        fprintf(f, "    {\"id\": ");
        json_str(f, w->id);
        fprintf(f, ", \"workload\": ");
        json_str(f, w->what);
        fprintf(f, ", \"result\": ");
        json_str(f, w->result);
        fprintf(f, ", \"vs_ceiling\": ");
        json_str(f, w->vs_ceiling);
        fprintf(f, ", \"worker_cost\": ");
        json_str(f, w->worker);
        fprintf(f, ", \"target\": ");
        json_str(f, w->target);
        fprintf(f, ", \"verdict\": ");
        json_str(f, verdict_name(w->verdict));
        fprintf(f, ", \"note\": ");
        json_str(f, w->note);
        for (int k = 0; k < w->n_kv; k++) {
            fprintf(f, ", ");
            json_str(f, w->kv_key[k]);
            fprintf(f, ": %.6g", w->kv_val[k]);
        }
        fprintf(f, "}%s\n", i + 1 < r->n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}
