/* pool/listen.c — listening sockets for the pool's endpoints (see listen.h). */
#include "pool/listen.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int fnw_listen_split(const char *addr, char *host, size_t host_len, char *port, size_t port_len)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || !colon[1])
        return -1;
    const char *h = addr;
    size_t hl = (size_t)(colon - addr);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl == 0 || hl >= host_len || strlen(colon + 1) >= port_len)
        return -1;
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    snprintf(port, port_len, "%s", colon + 1);
    return 0;
}

static void describe(int fd, char *bound, size_t bound_len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char h[NI_MAXHOST], p[NI_MAXSERV];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p, sizeof p, NI_NUMERICHOST | NI_NUMERICSERV) ==
            0)
        snprintf(bound, bound_len, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h, p);
    else
        snprintf(bound, bound_len, "?");
}

int fnw_listen_tcp(const char *addr, char *bound, size_t bound_len, fnw_error *err)
{
    char host[256], port[16];
    if (fnw_listen_split(addr, host, sizeof host, port, sizeof port) < 0)
        return fnw_error_set(err, "'%s' is not host:port", addr);
    struct addrinfo hints = { .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
    struct addrinfo *res;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0)
        return fnw_error_set(err, "cannot resolve %s: %s", addr, gai_strerror(rc));
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1, e = 0;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 64) < 0)
        e = errno;
    freeaddrinfo(res);
    if (e) {
        if (fd >= 0)
            close(fd);
        return fnw_error_set(err, "cannot listen on %s: %s", addr, strerror(e));
    }
    describe(fd, bound, bound_len);
    return fd;
}
