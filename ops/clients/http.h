/* ops/clients/http.h — an HTTP client that runs on the worker's libev
 * loop: many requests in flight on one thread, none of them blocking.
 *
 * How it works. One libcurl "multi" handle per client, driven by the loop
 * through libcurl's socket interface: libcurl says which sockets it wants
 * watched (one ev_io each) and when it next needs a tick (one ev_timer);
 * when either fires, the client hands the event to libcurl and then reaps
 * finished transfers. There is no thread per request and no poll/select
 * of our own.
 *
 * What libcurl gives for free, and how it is set up here:
 *   - connection reuse: finished transfers leave their connection in the
 *     multi's cache, and the next request to the same host takes it;
 *   - HTTP/2 when the server offers it over TLS (ALPN), with many requests
 *     multiplexed on one connection (a new request waits for a connection
 *     that is being set up rather than opening another);
 *   - at most max_host_connections connections per host: requests beyond
 *     that queue inside libcurl until a connection is free;
 *   - TLS verified against the system CA store (or ca_file).
 *   - proxies from the environment as libcurl reads them (http_proxy,
 *     https_proxy, HTTPS_PROXY, all_proxy, ALL_PROXY, no_proxy), except that
 *     whether any proxy variable is set is decided once, at fnw_http_new:
 *     when none is, requests go direct without consulting the environment.
 *
 * Completion. Every request started with fnw_http_send() ends in exactly one
 * of two ways: its callback runs once (from the loop, never from inside
 * fnw_http_send), or the caller cancels it with fnw_http_cancel() before
 * that, and then the callback never runs. The callback gets the response
 * even for 4xx/5xx statuses (they are answers, not transport failures); it
 * gets an error when there is no complete response: connect failure,
 * timeout, a body over the size limit, a broken connection.
 *
 * Threading: everything runs on the loop's thread; nothing is locked.
 */
#ifndef FNW_HTTP_H
#define FNW_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "codecs/error.h"

typedef struct fnw_http fnw_http;         /* one client: a multi on one loop */
typedef struct fnw_http_req fnw_http_req; /* one request in flight */

typedef struct fnw_http_config {
    long max_host_connections;  /* per host (host:port); 0 = no limit */
    long max_total_connections; /* over all hosts; 0 = no limit */
    size_t max_response_bytes;  /* default body limit per request; 0 = 64 MiB */
    long connect_timeout_ms;    /* 0 = libcurl's default (300 s) */
    const char *ca_file;        /* PEM file of trusted CAs; NULL = the system store */
} fnw_http_config;

/* One header as "Name: value" (libcurl's form). */
typedef const char *fnw_http_header;

typedef struct fnw_http_request {
    const char *method;             /* "GET", "POST", "PUT", ...; NULL = GET */
    const char *url;                /* http:// or https:// only; copied */
    const fnw_http_header *headers; /* n_headers entries, copied at send */
    size_t n_headers;
    /* The request body, sent as is (set a Content-Type header). With
     * copy_body 0 the bytes are borrowed: they must stay valid and unchanged
     * until the callback runs or the request is cancelled. With copy_body 1
     * the client copies them at send, and the caller may free them at once. */
    const void *body;
    size_t body_len;
    int copy_body;
    long timeout_ms;           /* the whole request, queueing included; 0 = none */
    size_t max_response_bytes; /* 0 = the client's default */
} fnw_http_request;

/* How a request ended. Only FNW_HTTP_DONE carries a response. */
typedef enum fnw_http_outcome {
    FNW_HTTP_DONE = 0,  /* a complete response (any status) */
    FNW_HTTP_TIMEOUT,   /* timeout_ms passed first */
    FNW_HTTP_TOO_LARGE, /* the body passed max_response_bytes */
    FNW_HTTP_CONNECT,   /* could not resolve or connect (also TLS set-up) */
    FNW_HTTP_FAILED,    /* anything else: connection broke, bad response */
} fnw_http_outcome;

/* What the callback sees; every pointer is valid during the callback only. */
typedef struct fnw_http_response {
    fnw_http_outcome outcome;
    long status;      /* HTTP status; 0 when there was no response */
    int http_version; /* 10, 11, 20 (HTTP/1.0, 1.1, 2); 0 when unknown */
    const char *body; /* body_len bytes, NUL-terminated for convenience */
    size_t body_len;
    /* Retry-After in seconds (from delta-seconds or an HTTP date, never
     * negative); -1 when the response has none or it cannot be read. */
    int64_t retry_after_s;
    const char *content_type; /* NULL when absent */
} fnw_http_response;

/* err is NULL for FNW_HTTP_DONE; otherwise it names the method, host:port
 * and path, and what failed. */
typedef void (*fnw_http_done_fn)(void *user, const fnw_http_response *resp, const fnw_error *err);

/* A client on loop. cfg may be NULL (all defaults). Returns NULL and fills
 * err when libcurl cannot be set up. */
fnw_http *fnw_http_new(struct ev_loop *loop, const fnw_http_config *cfg, fnw_error *err);

/* Cancels every request still in flight (their callbacks do not run) and
 * frees the client. Not from inside one of its callbacks. */
void fnw_http_free(fnw_http *h);

/* Starts a request. On success returns 0 and, when out is not NULL, the
 * handle to cancel it with (valid until its callback is called or it is
 * cancelled; a callback must not cancel its own request). Returns -1 and fills err, without calling done,
 * when the request cannot be started (bad URL or method, out of memory). */
int fnw_http_send(fnw_http *h, const fnw_http_request *rq, fnw_http_done_fn done, void *user,
                  fnw_http_req **out, fnw_error *err);

/* Stops a request in flight and frees it; its callback will not run. A
 * callback may cancel other requests of its client. */
void fnw_http_cancel(fnw_http_req *r);

/* Requests started and not yet completed or cancelled. */
size_t fnw_http_in_flight(const fnw_http *h);

#endif
