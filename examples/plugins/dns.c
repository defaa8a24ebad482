/* examples/plugins/dns.c — an asynchronous fnworker plugin: the `dns_lookup`
 * operation resolves a STRING field of each input row (option `field`,
 * default "host") to its first IPv4 address with c-ares, written into
 * another STRING field of the same row (option `output`, default "ip");
 * null when the name has no address. Option `servers` ("ip[:port],...")
 * sets the DNS servers instead of the system's; `timeout_ms` (default 2000)
 * and `tries` (default 2) bound each query.
 *
 * It shows the asynchronous pattern: invoke starts queries and returns;
 * c-ares's sockets are watched with ev_io watchers and its timeouts with
 * one ev_timer on the call's loop; the answer completes the call from those
 * callbacks. Everything runs on the loop thread, so nothing is locked.
 *
 *   cc -shared -fPIC -I<fnworker>/include -o dns.so dns.c -lcares -lev
 */
#define _DEFAULT_SOURCE     /* fd_set and struct timeval under -std=c11 (ares.h needs them) */
#include <sys/select.h>
#include <sys/time.h>

#include <ares.h>
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <ev.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnworker.h"

#define MAX_SOCKETS 16

typedef struct dns_state dns_state;

typedef struct dns_sock {
    ev_io w;
    dns_state *st;
    int used;
} dns_sock;

struct dns_state {
    struct ev_loop *loop;
    ares_channel channel;
    int64_t field, output;      /* field indexes in the input row */
    dns_sock socks[MAX_SOCKETS];
    ev_timer timer;
    size_t pending;             /* queries c-ares still has */
    struct dns_call *ready;     /* answered, to complete once c-ares has returned */
    int depth;                  /* dispatch() frames on the stack */
    int closed;                 /* close() came inside one: free at the end */
};

/* One call: one query per input; answers kept until the last one. */
typedef struct dns_call {
    dns_state *st;
    fnw_call *call;             /* NULL once cancelled */
    size_t n, pending;
    char (*addr)[INET_ADDRSTRLEN];   /* "" = no address */
    char failure[FNW_ERROR_MAX + 64];
    struct dns_call *next;      /* on the ready list */
} dns_call;

typedef struct dns_query {
    dns_call *dc;
    size_t i;
} dns_query;

/* ---- c-ares on the loop -------------------------------------------------------------- */

static void rearm_timer(dns_state *st)
{
    struct timeval tv;
    ev_timer_stop(st->loop, &st->timer);
    if (st->pending == 0 || !ares_timeout(st->channel, NULL, &tv))
        return;
    ev_timer_set(&st->timer, (double)tv.tv_sec + (double)tv.tv_usec / 1e6, 0.);
    ev_timer_start(st->loop, &st->timer);
}

static void dispatch(dns_state *st);

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    dns_sock *s = w->data;
    dns_state *st = s->st;
    ares_process_fd(st->channel, (revents & EV_READ) ? w->fd : ARES_SOCKET_BAD,
                    (revents & EV_WRITE) ? w->fd : ARES_SOCKET_BAD);
    rearm_timer(st);
    dispatch(st);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    dns_state *st = w->data;
    ares_process_fd(st->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    rearm_timer(st);
    dispatch(st);
}

/* c-ares tells which sockets it wants watched, and for what. */
static void sock_state_cb(void *data, ares_socket_t fd, int readable, int writable)
{
    dns_state *st = data;
    dns_sock *s = NULL, *free_slot = NULL;
    for (int i = 0; i < MAX_SOCKETS; i++) {
        if (st->socks[i].used && st->socks[i].w.fd == fd)
            s = &st->socks[i];
        else if (!st->socks[i].used && !free_slot)
            free_slot = &st->socks[i];
    }
    if (s) {
        ev_io_stop(st->loop, &s->w);
        s->used = 0;
    }
    if (!readable && !writable)
        return;
    if (!s)
        s = free_slot;
    if (!s)
        return;     /* more sockets than slots: c-ares's timeouts still end those queries */
    ev_io_init(&s->w, io_cb, fd, (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0));
    s->w.data = s;
    s->st = st;
    s->used = 1;
    ev_io_start(st->loop, &s->w);
}

/* ---- results ------------------------------------------------------------------------ */

static void free_call(dns_call *dc)
{
    free(dc->addr);
    free(dc);
}

/* Every query of the call has answered: emit each input's row with its address. */
static void finish_call(dns_call *dc)
{
    fnw_call *call = dc->call;
    dns_state *st = dc->st;
    fnw_error err;
    fnw_call_set_op_data(call, NULL);
    for (size_t i = 0; i < dc->n && !dc->failure[0]; i++) {
        fnw_value row;
        if (fnw_call_decode(call, i, &row, &err) != 0) {
            fnw_call_fail(call, "dns_lookup: %s", err.msg);
            goto out;
        }
        if (!row.is_null) {
            const char *a = fnw_arena_strdup(fnw_call_arena(call), dc->addr[i]);
            row.u.items[st->output] = a && a[0] ? fnw_value_str(a) : fnw_value_null(FNW_STRING);
        }
        if (fnw_call_emit_value(call, i, &row, &err) != 0) {
            fnw_call_fail(call, "dns_lookup: %s", err.msg);
            goto out;
        }
    }
    if (dc->failure[0])
        fnw_call_fail(call, "dns_lookup: %s", dc->failure);
    else
        fnw_call_complete(call);
out:
    free_call(dc);
}

/* A query answered (inside c-ares): keep the answer; a call whose queries
 * have all answered waits on the ready list, so the calls are completed
 * only once c-ares has returned (completing may close this operation). */
static void query_cb(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
    dns_query *q = arg;
    dns_call *dc = q->dc;
    size_t i = q->i;
    free(q);
    dc->st->pending--;
    if (dc->call && status == ARES_SUCCESS) {
        struct ares_addrttl ttls[4];
        int n = 4;
        if (ares_parse_a_reply(abuf, alen, NULL, ttls, &n) == ARES_SUCCESS && n > 0)
            inet_ntop(AF_INET, &ttls[0].ipaddr, dc->addr[i], INET_ADDRSTRLEN);
    } else if (dc->call && status != ARES_ENOTFOUND && status != ARES_ENODATA && !dc->failure[0]) {
        snprintf(dc->failure, sizeof dc->failure, "lookup of input %zu failed: %s", i, ares_strerror(status));
    }
    if (--dc->pending > 0)
        return;
    dc->next = dc->st->ready;
    dc->st->ready = dc;
}

static void state_free(dns_state *st)
{
    ares_destroy(st->channel);      /* answers what is still open: cancelled calls only */
    ev_timer_stop(st->loop, &st->timer);
    for (int i = 0; i < MAX_SOCKETS; i++)
        if (st->socks[i].used)
            ev_io_stop(st->loop, &st->socks[i].w);
    while (st->ready) {
        dns_call *dc = st->ready;
        st->ready = dc->next;
        free_call(dc);
    }
    free(st);
}

/* Completes the ready calls (outside c-ares). */
static void dispatch(dns_state *st)
{
    st->depth++;
    while (st->ready && !st->closed) {
        dns_call *dc = st->ready;
        st->ready = dc->next;
        if (dc->call)
            finish_call(dc);
        else
            free_call(dc);
    }
    if (--st->depth == 0 && st->closed)
        state_free(st);
}

/* ---- the operation -------------------------------------------------------------------- */

static int string_field(const fnw_op_env *env, const char *opt, const char *def, int64_t *idx, fnw_error *err)
{
    const char *name = fnw_options_get(env->options, opt);
    if (!name)
        name = def;
    *idx = fnw_type_find_field(env->input_type, name, strlen(name));
    if (*idx < 0)
        return fnw_error_set(err, "dns_lookup: option '%s': the input row has no field '%s'", opt, name);
    if (fnw_type_kind(fnw_type_child(env->input_type, (size_t)*idx)) != FNW_STRING)
        return fnw_error_set(err, "dns_lookup: option '%s': field '%s' must be a STRING", opt, name);
    return 0;
}

static int dns_setup(dns_state *st, const fnw_op_env *env, fnw_error *err)
{
    int64_t timeout_ms, tries;
    if (fnw_options_int(env->options, "timeout_ms", 2000, 1, 600000, &timeout_ms, err) != 0 ||
        fnw_options_int(env->options, "tries", 2, 1, 10, &tries, err) != 0)
        return -1;
    struct ares_options o;
    memset(&o, 0, sizeof o);
    o.sock_state_cb = sock_state_cb;
    o.sock_state_cb_data = st;
    o.timeout = (int)timeout_ms;
    o.tries = (int)tries;
    int rc = ares_init_options(&st->channel, &o, ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES);
    if (rc != ARES_SUCCESS)
        return fnw_error_set(err, "dns_lookup: cannot start c-ares: %s", ares_strerror(rc));
    const char *servers = fnw_options_get(env->options, "servers");
    if (servers && (rc = ares_set_servers_ports_csv(st->channel, servers)) != ARES_SUCCESS) {
        ares_destroy(st->channel);
        return fnw_error_set(err, "dns_lookup: option 'servers': '%s' is not a list of ip[:port] (%s)",
                             servers, ares_strerror(rc));
    }
    return 0;
}

static int dns_open(const fnw_op_env *env, void **state, fnw_error *err)
{
    static const char *const known[] = { "field", "output", "servers", "timeout_ms", "tries", NULL };
    *state = NULL;
    if (fnw_options_check_known(env->options, known, "dns_lookup", err) != 0)
        return -1;
    if (!env->input_type || fnw_type_kind(env->input_type) != FNW_ROW)
        return fnw_error_set(err, "dns_lookup takes ROW inputs");
    dns_state *st = calloc(1, sizeof *st);
    if (!st)
        return fnw_error_set(err, "dns_lookup: out of memory");
    st->loop = env->loop;
    ev_timer_init(&st->timer, timer_cb, 0., 0.);
    st->timer.data = st;
    if (string_field(env, "field", "host", &st->field, err) != 0 ||
        string_field(env, "output", "ip", &st->output, err) != 0 || dns_setup(st, env, err) != 0) {
        free(st);
        return -1;
    }
    *state = st;
    return 0;
}

static void dns_close(void *state)
{
    dns_state *st = state;
    if (st->depth > 0)
        st->closed = 1;             /* inside dispatch(): it frees st when it unwinds */
    else
        state_free(st);
}

/* Starts the query of input i; 0 when none is needed (a null row or host). */
static int start_query(dns_call *dc, size_t i, fnw_error *err)
{
    fnw_value row;
    if (fnw_call_decode(dc->call, i, &row, err) != 0)
        return -1;
    if (row.is_null || row.u.items[dc->st->field].is_null)
        return 0;
    const fnw_value *host = &row.u.items[dc->st->field];
    char *name = fnw_arena_alloc(fnw_call_arena(dc->call), host->count + 1);
    dns_query *q = malloc(sizeof *q);
    if (!name || !q) {
        free(q);
        return fnw_error_set(err, "out of memory");
    }
    memcpy(name, host->u.bytes, host->count);
    name[host->count] = '\0';
    q->dc = dc;
    q->i = i;
    dc->pending++;
    dc->st->pending++;
    ares_query(dc->st->channel, name, ns_c_in, ns_t_a, query_cb, q);
    return 0;
}

static void dns_invoke(void *state, fnw_call *call)
{
    dns_state *st = state;
    fnw_error err;
    dns_call *dc = calloc(1, sizeof *dc);
    size_t n = fnw_call_size(call);
    if (!dc || !(dc->addr = calloc(n, sizeof *dc->addr))) {
        free(dc);
        fnw_call_fail(call, "dns_lookup: out of memory");
        return;
    }
    dc->st = st;
    dc->call = call;
    dc->n = n;
    dc->pending = 1;            /* held while the queries start (an answer may come at once) */
    fnw_call_set_op_data(call, dc);
    for (size_t i = 0; i < n; i++) {
        if (start_query(dc, i, &err) != 0) {
            snprintf(dc->failure, sizeof dc->failure, "input %zu: %s", i, err.msg);
            break;
        }
    }
    rearm_timer(st);
    if (--dc->pending == 0) {
        dc->next = st->ready;
        st->ready = dc;
    }
    dispatch(st);
}

static void dns_cancel(void *state, fnw_call *call)
{
    dns_call *dc = fnw_call_op_data(call);
    if (dc)
        dc->call = NULL;        /* freed when its last query answers */
}

static const fnw_operation dns_lookup = {
    .name = "dns_lookup",
    .summary = "resolves a STRING field of each row to an IPv4 address (c-ares)",
    .output_rule = FNW_OUTPUT_SAME_AS_INPUT,
    .open = dns_open,
    .close = dns_close,
    .invoke = dns_invoke,
    .cancel = dns_cancel,
};

static int init(fnw_registry *r, fnw_error *err)
{
    int rc = ares_library_init(ARES_LIB_INIT_ALL);
    if (rc != ARES_SUCCESS)
        return fnw_error_set(err, "c-ares: %s", ares_strerror(rc));
    return fnw_registry_add(r, &dns_lookup, err);
}

FNW_PLUGIN_DEFINE("dns", init);
