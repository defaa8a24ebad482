# fnworker sidecar image: the worker binary and the launcher script, built
# from Debian's packages. Run it next to a TaskManager and point Flink at the
# launcher (see README, "How Flink launches it", the Sidecar paragraph).
FROM debian:bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      gcc make pkg-config libc6-dev libgrpc-dev protobuf-c-compiler libprotobuf-c-dev \
      libev-dev libavro-dev libjansson-dev protobuf-compiler check \
      libhiredis-dev libcurl4-openssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY proto proto
COPY codecs codecs
COPY runtime runtime
COPY worker worker
COPY scripts/pyflink-udf-runner.sh scripts/
RUN make build/fnworker

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      libgrpc29 libprotobuf-c1 libev4 libavro23 libjansson4 \
      libhiredis0.14 libcurl4 libmicrohttpd12 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/fnworker /opt/fnworker/fnworker
COPY --from=build /src/scripts/pyflink-udf-runner.sh /opt/fnworker/pyflink-udf-runner.sh
RUN chmod +x /opt/fnworker/pyflink-udf-runner.sh
# Share /opt/fnworker with the TaskManager (a volume) and set
# PYFLINK_UDF_RUNNER_DIR=/opt/fnworker in the TaskManager's environment.
VOLUME /opt/fnworker
ENTRYPOINT ["/opt/fnworker/fnworker"]
CMD ["--help"]
