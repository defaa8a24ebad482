# fnworker sidecar image: the worker, the pool that starts one worker per
# launcher request, and the launcher script the TaskManager runs. Built from
# Debian 12 packages; the runtime stage holds the stripped binary and the
# shared libraries it links, and runs as an unprivileged user.
# Commands, ports and the Kubernetes pod template: docs/sidecar.md, "The sidecar image".
FROM debian:bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      gcc make pkg-config libc6-dev binutils libgrpc-dev protobuf-c-compiler libprotobuf-c-dev \
      libev-dev libavro-dev libjansson-dev protobuf-compiler \
      libhiredis-dev libcurl4-openssl-dev libmicrohttpd-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The sources (.dockerignore leaves out the build tree, tests and docs).
COPY . .
RUN make -j"$(nproc)" build/fnworker && strip build/fnworker

FROM debian:bookworm-slim
# The libraries the worker and the pool link (libmicrohttpd: the pool's HTTP
# endpoint), nothing else; the ldd check below fails the build on a missing one.
RUN apt-get update && apt-get install -y --no-install-recommends \
      libgrpc29 libprotobuf-c1 libev4 libavro23 libjansson4 \
      libhiredis0.14 libcurl4 libmicrohttpd12 ca-certificates \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log \
    && groupadd --gid 10001 fnworker \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
         --shell /usr/sbin/nologin fnworker
COPY --from=build /src/build/fnworker /opt/fnworker/fnworker
COPY --from=build /src/scripts/pyflink-udf-runner.sh /opt/fnworker/pyflink-udf-runner.sh
COPY --from=build /src/scripts/image/entrypoint.sh /opt/fnworker/entrypoint
COPY --from=build /src/LICENSE /src/NOTICE /opt/fnworker/
RUN chmod 755 /opt/fnworker/pyflink-udf-runner.sh /opt/fnworker/entrypoint \
    && if ldd /opt/fnworker/fnworker | grep 'not found'; then exit 1; fi
USER 10001:10001
# The pool (launcher requests, loopback: only containers of the same pod
# reach it) and its HTTP endpoint (/healthz, /metrics).
EXPOSE 50000 9464
# Without curl: the entrypoint's probe speaks HTTP over bash's /dev/tcp.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/opt/fnworker/entrypoint", "health"]
# The release, from the VERSION file (scripts/image/build.sh passes it);
# declared last, so a new release reuses every layer above.
ARG FNW_VERSION=unknown
LABEL org.opencontainers.image.title="fnworker" \
      org.opencontainers.image.version="$FNW_VERSION" \
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["/opt/fnworker/entrypoint"]
CMD ["pool", "--listen", "127.0.0.1:50000", "--http-listen", "127.0.0.1:9464"]
