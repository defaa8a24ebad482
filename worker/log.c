/* worker/log.c — stderr + Beam Logging stream (see log.h). */
#include "worker/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/pb.h"

#define LOG_BATCH_MAX 1000
#define LOG_FLUSH_S 0.005

struct fnw_log_item {
    fnw_log_item *next;
    fnw_level level;
    int64_t sec;
    int32_t nsec;
    char *message;
    char location[96];
    char *instruction_id;
    char *transform_id;
};

static const char *level_name(fnw_level l)
{
    switch (l) {
    case FNW_LOG_DEBUG:
        return "DEBUG";
    case FNW_LOG_INFO:
        return "INFO";
    case FNW_LOG_WARN:
        return "WARN";
    case FNW_LOG_ERROR:
        return "ERROR";
    }
    return "?";
}

static void log_item_free(fnw_log_item *it)
{
    free(it->message);
    free(it->instruction_id);
    free(it->transform_id);
    free(it);
}

static void log_flush(fnw_logger *lg);

static void log_flush_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    log_flush(w->data);
}

static void log_on_message(void *user, grpc_slice msg)
{ /* LogControl: ignored */
}

static void log_reopen_cb(struct ev_loop *loop, ev_timer *w, int revents);

static void log_on_closed(void *user, grpc_status_code code, const char *details)
{
    fnw_logger *lg = user;
    lg->t->free(lg->stream);
    lg->stream = NULL;
    if (lg->stopping)
        return;
    /* queued now, sent once the stream is back. A real Flink ends the stream
     * with OK at every job's end, just before it closes the control stream:
     * that is no trouble, so it is INFO, and says so without a status. */
    if (code == GRPC_STATUS_OK)
        fnw_log(lg, FNW_LOG_INFO, NULL, NULL, "the runner closed the logging stream; reopening it in 0.5 s");
    else
        fnw_log(lg, FNW_LOG_WARN, NULL, NULL,
                "the logging stream closed (status %d: %s); reopening it in 0.5 s", (int)code, details);
    ev_timer_set(&lg->reopen_timer, 0.5, 0);
    ev_timer_start(lg->loop, &lg->reopen_timer);
}

static void log_open_stream(fnw_logger *lg)
{
    fnw_stream_handler h = { lg, log_on_message, NULL, log_on_closed };
    lg->stream = lg->t->start(lg->t_ctx, &h);
}

static void log_reopen_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    fnw_logger *lg = w->data;
    if (!lg->stopping && !lg->stream) {
        log_open_stream(lg);
        log_flush(lg);
    }
}

void fnw_log_init(fnw_logger *lg, struct ev_loop *loop, fnw_level level)
{
    memset(lg, 0, sizeof *lg);
    lg->loop = loop;
    lg->level = level;
    ev_timer_init(&lg->flush_timer, log_flush_cb, LOG_FLUSH_S, 0);
    lg->flush_timer.data = lg;
    ev_timer_init(&lg->reopen_timer, log_reopen_cb, 0.5, 0);
    lg->reopen_timer.data = lg;
}

/* ---- the gRPC transport: ctx is the logger ---------------------------------- */

static void *grpc_start(void *ctx, const fnw_stream_handler *h)
{
    fnw_logger *lg = ctx;
    return fnw_stream_start(lg->rpc, lg->channel, FNW_METHOD_LOGGING, h, 1);
}

static void grpc_send(void *stream, grpc_slice msg)
{
    fnw_stream_send(stream, msg, NULL, NULL);
}

static void grpc_close_send(void *stream)
{
    fnw_stream_close_send(stream);
}

static void grpc_free(void *stream)
{
    fnw_stream_free(stream);
}

static const fnw_log_transport grpc_transport = { grpc_start, grpc_send, grpc_close_send, grpc_free };

void fnw_log_start(fnw_logger *lg, fnw_rpc *rpc, grpc_channel *ch)
{
    lg->rpc = rpc;
    lg->channel = ch;
    fnw_log_start_on(lg, &grpc_transport, lg);
}

void fnw_log_start_on(fnw_logger *lg, const fnw_log_transport *t, void *ctx)
{
    lg->t = t;
    lg->t_ctx = ctx;
    log_open_stream(lg);
    log_flush(lg);
}

fnw_level fnw_log_get_level(const fnw_logger *lg)
{
    return lg->level;
}

void fnw_log_set_level(fnw_logger *lg, fnw_level level)
{
    lg->level = level;
}

size_t fnw_log_queued(const fnw_logger *lg)
{
    return lg->queued;
}

size_t fnw_log_dropped(const fnw_logger *lg)
{
    return lg->dropped;
}

int fnw_log_streaming(const fnw_logger *lg)
{
    return lg->stream != NULL;
}

static void log_rpc_error(void *user, const char *message)
{
    fnw_log((fnw_logger *)user, FNW_LOG_ERROR, NULL, NULL, "%s", message);
}

fnw_rpc_log_sink fnw_log_rpc_sink(fnw_logger *lg)
{
    fnw_rpc_log_sink sink = { lg, log_rpc_error };
    return sink;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

void fnw_log_at(fnw_logger *lg, const char *file, int line, fnw_level level, const char *instruction_id,
                const char *transform_id, const char *fmt, ...)
{
    if (level < (lg ? lg->level : FNW_LOG_INFO))
        return;
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char ctx[256] = "";
    if (instruction_id || transform_id)
        snprintf(ctx, sizeof ctx, " [%s%s%s%s]", instruction_id ? "instruction " : "",
                 instruction_id ? instruction_id : "", transform_id ? " transform " : "",
                 transform_id ? transform_id : "");
    fprintf(stderr, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ fnworker %s%s %s\n", tm.tm_year + 1900,
            tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
            level_name(level), ctx, msg);
    if (!lg || (lg->stopping && !lg->stream))
        return;
    if (lg->queued >= FNW_LOG_QUEUE_MAX) {
        lg->dropped++;
        return;
    }
    fnw_log_item *it = calloc(1, sizeof *it);
    if (it)
        it->message = strdup(msg);
    if (!it || !it->message) {
        free(it);
        lg->dropped++; /* reported with the next flush */
        return;
    }
    it->level = level;
    it->sec = ts.tv_sec;
    it->nsec = (int32_t)ts.tv_nsec;
    snprintf(it->location, sizeof it->location, "%s:%d", file, line);
    it->instruction_id = dup_or_null(instruction_id);
    it->transform_id = dup_or_null(transform_id);
    if (lg->tail)
        lg->tail->next = it;
    else
        lg->head = it;
    lg->tail = it;
    lg->queued++;
    if (level >= FNW_LOG_ERROR && !lg->flushing)
        log_flush(lg);
    else if (lg->stream && !ev_is_active(&lg->flush_timer))
        ev_timer_start(lg->loop, &lg->flush_timer);
}

/* Sends the entries queued when it starts. Entries logged while it sends
 * (e.g. by a failing send) wait for the flush timer, so a send that keeps
 * failing cannot recurse or loop. */
static void log_flush(fnw_logger *lg)
{
    if (lg->flushing)
        return;
    lg->flushing = 1;
    size_t budget = lg->queued;
    while (lg->stream && lg->head && budget > 0) {
        size_t n = lg->queued < LOG_BATCH_MAX ? lg->queued : LOG_BATCH_MAX;
        if (n > budget)
            n = budget;
        budget -= n;
        pb_LogEntry *entries = calloc(n, sizeof *entries);
        pb_LogEntry **ptrs = calloc(n, sizeof *ptrs);
        Google__Protobuf__Timestamp *stamps = calloc(n, sizeof *stamps);
        fnw_log_item **items = calloc(n, sizeof *items);
        if (!entries || !ptrs || !stamps || !items) {
            free(entries);
            free(ptrs);
            free(stamps);
            free(items);
            break;
        }
        for (size_t i = 0; i < n; i++) {
            fnw_log_item *it = lg->head;
            lg->head = it->next;
            items[i] = it;
            pb_LogEntry init = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__LOG_ENTRY__INIT;
            entries[i] = init;
            Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
            stamps[i] = ts;
            stamps[i].seconds = it->sec;
            stamps[i].nanos = it->nsec;
            entries[i].severity = (Org__Apache__Beam__Model__FnExecution__V1__LogEntry__Severity__Enum)
                                      it->level;
            entries[i].timestamp = &stamps[i];
            entries[i].message = it->message;
            if (it->instruction_id)
                entries[i].instruction_id = it->instruction_id;
            if (it->transform_id)
                entries[i].transform_id = it->transform_id;
            entries[i].log_location = it->location;
            entries[i].thread = "loop";
            ptrs[i] = &entries[i];
        }
        if (!lg->head)
            lg->tail = NULL;
        lg->queued -= n;
        pb_LogEntryList list = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__LOG_ENTRY__LIST__INIT;
        list.n_log_entries = n;
        list.log_entries = ptrs;
        size_t len = protobuf_c_message_get_packed_size(&list.base);
        grpc_slice s = grpc_slice_malloc(len);
        protobuf_c_message_pack(&list.base, GRPC_SLICE_START_PTR(s));
        lg->t->send(lg->stream, s);
        for (size_t i = 0; i < n; i++)
            log_item_free(items[i]);
        free(entries);
        free(ptrs);
        free(stamps);
        free(items);
    }
    lg->flushing = 0;
    if (lg->dropped && lg->stream) {
        size_t d = lg->dropped;
        lg->dropped = 0;
        fnw_log(lg, FNW_LOG_WARN, NULL, NULL, "%zu log entries were dropped (queue full or out of memory)", d);
    }
}

void fnw_log_stop(fnw_logger *lg)
{
    log_flush(lg);
    lg->stopping = 1;
    ev_timer_stop(lg->loop, &lg->flush_timer);
    ev_timer_stop(lg->loop, &lg->reopen_timer);
    if (lg->stream)
        lg->t->close_send(lg->stream);
}

void fnw_log_free(fnw_logger *lg)
{
    ev_timer_stop(lg->loop, &lg->flush_timer);
    ev_timer_stop(lg->loop, &lg->reopen_timer);
    if (lg->stream) {
        lg->t->free(lg->stream);
        lg->stream = NULL;
    }
    fnw_log_item *it = lg->head;
    while (it) {
        fnw_log_item *next = it->next;
        log_item_free(it);
        it = next;
    }
    lg->head = lg->tail = NULL;
    lg->queued = 0;
}
