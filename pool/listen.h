/* pool/listen.h — a listening TCP socket from a "host:port" flag value
 * (port 0: the kernel picks one; the bound address is given back so the
 * pool can log it). */
#ifndef FNW_POOL_LISTEN_H
#define FNW_POOL_LISTEN_H

#include <stddef.h>

#include "codecs/error.h"

/* Returns a non-blocking, close-on-exec listening socket, or -1 with err
 * naming the address. bound (bound_len bytes) receives "host:port". */
int fnw_listen_tcp(const char *addr, char *bound, size_t bound_len, fnw_error *err);
/* Splits "host:port" (or "[v6]:port") into host and port; -1 when malformed. */
int fnw_listen_split(const char *addr, char *host, size_t host_len, char *port, size_t port_len);

#endif
