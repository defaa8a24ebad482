/* worker/bundle.c — a running process_bundle instruction (see bundle.h):
 * decode (and, with the plan's input_field, take that field of the row)
 * -> the chain's first step, the chain's last step -> encode. */
#include "worker/bundle.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/row.h"
#include "runtime/chain.h"
#include "runtime/projection.h"
#include "worker/table_plan.h"
#include "worker/lull.h"

enum bundle_state { B_RUNNING, B_FINISHING, B_SENDING_LAST, B_DONE };

/* The last message's completion may arrive after the bundle is gone (it
 * failed or the worker stopped meanwhile): the callback holds this token,
 * which the bundle clears when it is freed. */
typedef struct send_token {
    fnw_bundle *b;
} send_token;

struct fnw_bundle {
    struct ev_loop *loop;
    fnw_logger *log;
    fnw_processor *proc;
    const fnw_plan *plan;
    char *instruction_id;
    fnw_data_conn *conn;
    fnw_inbox *inbox;
    fnw_outbox **outboxes; /* [0] is the main sink */
    size_t n_out;
    fnw_chain *chain;     /* the steps' engines, run as one (runtime/chain.h) */
    fnw_projection *proj; /* instead of chain for a Table operator (runtime/projection.h) */
    int64_t index;        /* records read */
    int state;
    int feeding, again;
    int failed;
    char error[FNW_ERROR_MAX + 256]; /* kept inline: reporting a failure never allocates */
    ev_timer done_timer;             /* reports from a clean stack */
    ev_timer lull_timer;             /* samples progress for --lull-seconds */
    fnw_lull lull;
    send_token *last_send; /* the is_last message in flight */
    fnw_bundle_done_cb done;
    void *user;
};

/* ---- completion -------------------------------------------------------------------- */

/* Each step's figures; a step whose metrics could not be built is logged
 * and left out, the bundle still succeeds. */
static void collect_metrics(fnw_bundle *b, fnw_metric_set *ms)
{
    for (size_t i = 0; i < fnw_processor_steps(b->proc); i++) {
        const fnw_plan_step *st = &b->plan->steps[i];
        if (fnw_metrics_add(ms, st->transform_id, st->op->name, i,
                            fnw_engine_metrics_get(fnw_processor_engine(b->proc, i))) < 0)
            fnw_log(b->log, FNW_LOG_WARN, b->instruction_id, st->transform_id,
                    "out of memory building the metrics of this step; some are missing from "
                    "this bundle's response");
    }
}

static void bundle_done_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    fnw_bundle *b = w->data;
    fnw_metric_set ms;
    fnw_metrics_init(&ms);
    if (!b->failed)
        collect_metrics(b, &ms);
    b->done(b->user, b, b->failed ? b->error : NULL, &ms);
    fnw_metrics_free(&ms);
}

static void bundle_schedule_done(fnw_bundle *b)
{
    b->state = B_DONE;
    ev_timer_stop(b->loop, &b->lull_timer);
    ev_timer_set(&b->done_timer, 0, 0);
    ev_timer_start(b->loop, &b->done_timer);
}

static void bundle_fail(fnw_bundle *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void bundle_fail(fnw_bundle *b, const char *fmt, ...)
{
    if (b->state == B_DONE)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->error, sizeof b->error, fmt, ap);
    va_end(ap);
    b->failed = 1;
    bundle_schedule_done(b);
}

/* ---- output -------------------------------------------------------------------------- */

/* A Table operator's output: the row's bytes as they are. */
static void write_table_output(fnw_bundle *b, const fnw_record *out)
{
    uint8_t *w = fnw_data_outbox_reserve(b->outboxes[0], out->len);
    if (!w && out->len) {
        bundle_fail(b, "out of memory writing output %" PRId64 " of transform '%s'", b->index,
                    b->plan->main_sink_id);
        return;
    }
    if (out->len)
        memcpy(w, out->data, out->len);
}

static void write_output(fnw_bundle *b, const fnw_record *out)
{
    if (b->proj) {
        write_table_output(b, out);
        return;
    }
    size_t size = fnw_row_output_size(out->len, out->data == NULL);
    uint8_t *w = fnw_data_outbox_reserve(b->outboxes[0], size);
    if (!w) {
        bundle_fail(b, "out of memory writing output %" PRId64 " of transform '%s'", b->index,
                    b->plan->main_sink_id);
        return;
    }
    fnw_row_write_output(w, out->timestamp, out->data, out->len);
}

/* The last step's outputs (the chain hands them over directly). */
static void chain_emit(void *user, const fnw_record *out)
{
    fnw_bundle *b = user;
    if (b->state != B_DONE)
        write_output(b, out);
}

static void bundle_kick(fnw_bundle *b);

static void chain_ready(void *user)
{
    bundle_kick(user);
}

static void chain_failed(void *user, const char *message)
{
    bundle_fail(user, "%s", message);
}

static void last_sent(void *arg, int ok)
{
    send_token *tok = arg;
    fnw_bundle *b = tok->b;
    free(tok);
    if (!b)
        return;
    b->last_send = NULL;
    if (b->state == B_DONE)
        return;
    if (!ok) {
        bundle_fail(b, "could not send the results of instruction %s: %s", b->instruction_id,
                    fnw_data_conn_error(b->conn) ? fnw_data_conn_error(b->conn) : "the data stream failed");
        return;
    }
    bundle_schedule_done(b);
}

/* Every step has emitted every input: the last output goes with is_last. */
static void chain_finished(void *user)
{
    fnw_bundle *b = user;
    if (b->state == B_DONE)
        return;
    b->state = B_SENDING_LAST;
    send_token *tok = malloc(sizeof *tok);
    if (!tok) {
        bundle_fail(b, "out of memory finishing instruction %s", b->instruction_id);
        return;
    }
    tok->b = b;
    b->last_send = tok;
    fnw_data_outbox_finish(b->outboxes, b->n_out, last_sent, tok);
}

/* ---- input ------------------------------------------------------------------------------ */

/* The chain, or for a Table operator the projection. */
static int runner_has_space(const fnw_bundle *b)
{
    return b->proj ? fnw_projection_has_space(b->proj) : fnw_chain_has_space(b->chain);
}

static void runner_abort(fnw_bundle *b)
{
    if (b->proj)
        fnw_projection_abort(b->proj);
    else if (b->chain)
        fnw_chain_abort(b->chain);
}

static void start_finish(fnw_bundle *b)
{
    b->state = B_FINISHING;
    if (b->proj)
        fnw_projection_finish(b->proj);
    else
        fnw_chain_finish(b->chain);
}

/* A Table operator's input record: the row's bytes, validated. */
static int push_table_row(fnw_bundle *b, const fnw_frame *f)
{
    fnw_error err;
    size_t used = 0;
    if (fnw_skip_program_run(b->plan->input_skip, f->p, f->n, &used, &err) < 0 || used != f->n) {
        char t[256];
        fnw_type_format(b->plan->input_type, t, sizeof t);
        if (used != f->n && err.msg[0] == 0)
            snprintf(err.msg, sizeof err.msg, "%zu byte(s) left over after the row", f->n - used);
        bundle_fail(b, "transform '%s': cannot decode element %" PRId64 " as %s: %s",
                    b->plan->steps[0].transform_id, b->index, t, err.msg);
        return -1;
    }
    fnw_record rec = { INT64_MIN, INT64_MIN, f->p, (uint32_t)f->n };
    b->index++;
    fnw_projection_push(b->proj, &rec);
    return 0;
}

/* Records per round between checks of the data connection. */
#define PUMP_ROUND 256

static void feed_chain(fnw_bundle *b)
{
    fnw_error err;
    while (b->state == B_RUNNING) {
        if (fnw_data_conn_error(b->conn)) {
            bundle_fail(b, "instruction %s: %s", b->instruction_id, fnw_data_conn_error(b->conn));
            return;
        }
        if (fnw_data_conn_congested(b->conn))
            return;
        for (int k = 0; k < PUMP_ROUND; k++) {
            if (b->state != B_RUNNING || !runner_has_space(b))
                return;
            fnw_frame f;
            fnw_inbox_status r = fnw_inbox_next(b->inbox, &f);
            if (r != FNW_INBOX_RECORD) {
                if (r == FNW_INBOX_BAD)
                    bundle_fail(b, "transform '%s': element %" PRId64 " %s", b->plan->source_id, b->index,
                                fnw_inbox_error(b->inbox));
                else if (r == FNW_INBOX_END)
                    start_finish(b);
                return;
            }
            if (b->proj) {
                if (push_table_row(b, &f) < 0)
                    return;
                continue;
            }
            fnw_input_row row;
            if (fnw_row_split_input(b->plan->input_skip, f.p, f.n, &row, &err) < 0) {
                char t[256];
                fnw_type_format(b->plan->input_type, t, sizeof t);
                bundle_fail(b, "transform '%s': cannot decode element %" PRId64 " as %s: %s",
                            b->plan->steps[0].transform_id, b->index, t, err.msg);
                return;
            }
            if (b->plan->input_field && row.data &&
                fnw_ser_field_get(b->plan->input_field, row.data, row.len, &row.data, &row.len, &err) < 0) {
                bundle_fail(b, "transform '%s': cannot take input_field '%s' of element %" PRId64 ": %s",
                            b->plan->steps[0].transform_id, b->plan->steps[0].input_field, b->index, err.msg);
                return;
            }
            fnw_record rec = { row.timestamp, row.watermark, row.data, (uint32_t)row.len };
            b->index++;
            fnw_chain_push(b->chain, &rec);
        }
    }
}

static void bundle_kick(fnw_bundle *b)
{
    if (b->feeding) {
        b->again = 1;
        return;
    }
    b->feeding = 1;
    do {
        b->again = 0;
        feed_chain(b);
    } while (b->again && b->state == B_RUNNING);
    b->feeding = 0;
}

static void on_input(void *user)
{
    bundle_kick(user);
}

static void on_data_failed(void *user, const char *message)
{
    fnw_bundle *b = user;
    bundle_fail(b, "instruction %s: %s", b->instruction_id, message);
}

/* ---- what is in flight (--lull-seconds, SIGQUIT) ------------------------------------ */

static const char *state_text(int state)
{
    switch (state) {
    case B_RUNNING:
        return "reading input";
    case B_FINISHING:
        return "input ended, waiting for its calls";
    case B_SENDING_LAST:
        return "sending the last output";
    default:
        return "done";
    }
}

/* Grows whenever anything moves: inputs read, each step's inputs, outputs,
 * calls started and settled, the state. */
static uint64_t progress_figure(const fnw_bundle *b)
{
    uint64_t p = (uint64_t)b->index + (uint64_t)b->state;
    for (size_t i = 0; i < fnw_processor_steps(b->proc); i++) {
        const fnw_engine_metrics *m = fnw_engine_metrics_get(fnw_processor_engine(b->proc, i));
        p += (uint64_t)(m->records_in + m->records_out + m->calls + m->retries + m->timeouts + m->failures +
                        m->call_duration_ms.count);
    }
    return p;
}

void fnw_bundle_progress_get(const fnw_bundle *b, fnw_bundle_progress *p)
{
    size_t n = fnw_processor_steps(b->proc);
    p->inputs_read = b->index;
    p->outputs_written = b->proj ? fnw_projection_rows_out(b->proj)
                         : n     ? fnw_engine_metrics_get(fnw_processor_engine(b->proc, n - 1))->records_out
                                 : 0;
    p->state = state_text(b->state);
}

size_t fnw_bundle_describe(const fnw_bundle *b, char *buf, size_t n)
{
    fnw_bundle_progress p;
    fnw_bundle_progress_get(b, &p);
    int len = snprintf(buf, n,
                       "instruction %s (descriptor %s), %s: %" PRId64 " input(s) read, %" PRId64
                       " output(s) written",
                       b->instruction_id, b->plan->descriptor_id, p.state, p.inputs_read, p.outputs_written);
    return len < 0 ? 0 : (size_t)len < n ? (size_t)len : n - 1;
}

static void lull_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    fnw_bundle *b = t->data;
    double idle, now = ev_now(loop);
    if (b->state == B_DONE || !fnw_lull_check(&b->lull, progress_figure(b), now, &idle))
        return;
    char msg[4096];
    size_t len = fnw_bundle_describe(b, msg, sizeof msg);
    for (size_t i = 0; i < fnw_processor_steps(b->proc) && len + 1 < sizeof msg; i++) {
        int k = snprintf(msg + len, sizeof msg - len, "; ");
        len += (size_t)k;
        fnw_engine_describe(fnw_processor_engine(b->proc, i), now, msg + len, sizeof msg - len);
        len += strlen(msg + len);
    }
    fnw_log(b->log, FNW_LOG_WARN, b->instruction_id, NULL, "no progress for %.0f s (--lull-seconds=%g) in %s",
            idle, b->lull.lull_s, msg);
}

void fnw_bundle_watch(fnw_bundle *b, double lull_s)
{
    ev_timer_stop(b->loop, &b->lull_timer);
    if (lull_s <= 0 || b->state == B_DONE)
        return;
    fnw_lull_init(&b->lull, lull_s, progress_figure(b), ev_now(b->loop));
    double every = fnw_lull_interval(lull_s);
    ev_timer_set(&b->lull_timer, every, every);
    ev_timer_start(b->loop, &b->lull_timer);
}

typedef struct dump_ctx {
    const fnw_bundle *b;
    const char *transform_id;
} dump_ctx;

static void dump_call(void *user, const char *line)
{
    dump_ctx *d = user;
    fnw_log(d->b->log, FNW_LOG_INFO, d->b->instruction_id, d->transform_id, "    %s", line);
}

#define DUMP_MAX_CALLS 50

void fnw_bundle_dump(const fnw_bundle *b)
{
    char msg[1024];
    double now = ev_now(b->loop);
    fnw_bundle_describe(b, msg, sizeof msg);
    fnw_log(b->log, FNW_LOG_INFO, b->instruction_id, NULL, "  %s", msg);
    for (size_t i = 0; i < fnw_processor_steps(b->proc); i++) {
        const fnw_engine *e = fnw_processor_engine(b->proc, i);
        dump_ctx d = { b, b->plan->steps[i].transform_id };
        fnw_engine_describe(e, now, msg, sizeof msg);
        fnw_log(b->log, FNW_LOG_INFO, b->instruction_id, d.transform_id, "   step %zu: %s", i + 1, msg);
        size_t calls = fnw_engine_each_call(e, now, DUMP_MAX_CALLS, dump_call, &d);
        if (calls > DUMP_MAX_CALLS)
            fnw_log(b->log, FNW_LOG_INFO, b->instruction_id, d.transform_id, "    ... and %zu more call(s)",
                    calls - DUMP_MAX_CALLS);
    }
}

/* ---- lifecycle --------------------------------------------------------------------------- */

/* A step's engine reports a resilience event (a breaker's state change, a
 * Retry-After pause): one warning line in the worker's log. */
static void chain_log(void *user, const char *line)
{
    fnw_bundle *b = user;
    fnw_log(b->log, FNW_LOG_WARN, b->instruction_id, NULL, "%s", line);
}

fnw_bundle *fnw_bundle_start(struct ev_loop *loop, fnw_logger *log, fnw_data_mgr *data, fnw_processor *proc,
                             const char *instruction_id, fnw_bundle_done_cb done, void *user)
{
    fnw_bundle *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    const fnw_plan *plan = fnw_processor_plan(proc);
    b->loop = loop;
    b->log = log;
    b->proc = proc;
    b->plan = plan;
    b->instruction_id = strdup(instruction_id);
    if (!b->instruction_id) {
        free(b);
        return NULL;
    }
    b->done = done;
    b->user = user;
    ev_timer_init(&b->done_timer, bundle_done_cb, 0, 0);
    b->done_timer.data = b;
    ev_timer_init(&b->lull_timer, lull_cb, 1, 1);
    b->lull_timer.data = b;
    if (plan->table)
        b->proj = fnw_projection_new(&plan->table->desc, fnw_processor_engines(proc));
    else
        b->chain = fnw_chain_new(fnw_processor_engines(proc), fnw_processor_steps(proc));
    b->outboxes = calloc(plan->n_sinks, sizeof *b->outboxes);
    b->conn = fnw_data_connect(data, plan->data_url);
    if ((!b->chain && !b->proj) || !b->outboxes || !b->conn) {
        bundle_fail(b, "out of memory starting instruction %s", instruction_id);
        return b;
    }
    for (size_t i = 0; i < plan->n_sinks; i++) {
        b->outboxes[i] = fnw_data_outbox_new(b->conn, instruction_id, plan->sink_ids[i]);
        if (!b->outboxes[i]) {
            bundle_fail(b, "out of memory starting instruction %s", instruction_id);
            return b;
        }
        b->n_out = i + 1;
    }
    fnw_engine_sink sink = { b, chain_emit, chain_ready, chain_failed, chain_finished, NULL, NULL, NULL, NULL };
    sink.log = chain_log;
    if (b->proj)
        fnw_projection_start(b->proj, &sink, b->instruction_id);
    else
        fnw_chain_start(b->chain, &sink, b->instruction_id);
    fnw_data_listener l = { b, on_input, on_data_failed };
    fnw_error err;
    b->inbox = fnw_inbound_claim(b->conn, instruction_id, plan->source_id, &l, &err);
    if (!b->inbox) {
        bundle_fail(b, "instruction %s, transform '%s': %s", instruction_id, plan->source_id, err.msg);
        return b;
    }
    b->state = B_RUNNING;
    bundle_kick(b);
    return b;
}

const char *fnw_bundle_instruction(const fnw_bundle *b)
{
    return b->instruction_id;
}

fnw_processor *fnw_bundle_processor(const fnw_bundle *b)
{
    return b->proc;
}

void fnw_bundle_stop(fnw_bundle *b)
{
    b->state = B_DONE;
    ev_timer_stop(b->loop, &b->done_timer);
    ev_timer_stop(b->loop, &b->lull_timer);
    runner_abort(b);
}

void fnw_bundle_free(fnw_bundle *b)
{
    if (!b)
        return;
    ev_timer_stop(b->loop, &b->done_timer);
    ev_timer_stop(b->loop, &b->lull_timer);
    if (b->last_send)
        b->last_send->b = NULL;
    if (b->failed)
        runner_abort(b);
    if (b->inbox)
        fnw_inbound_release(b->inbox);
    for (size_t i = 0; i < b->n_out; i++)
        fnw_data_outbox_free(b->outboxes[i]);
    free(b->outboxes);
    fnw_chain_free(b->chain);
    fnw_projection_free(b->proj);
    free(b->instruction_id);
    free(b);
}
