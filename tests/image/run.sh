#!/bin/sh
# The sidecar image, tested for real with podman (`make image-test`).
#   run.sh BUILD_DIR [IMAGE]        IMAGE defaults to localhost/fnworker:latest
# A podman pod plays the Kubernetes pod of deploy/kubernetes/: the image's
# install-launcher command fills a shared directory (the initContainer and
# its emptyDir), the image's default command runs the pool (the sidecar), and
# a TaskManager stand-in holds only a JRE, the launcher from the shared
# directory and the harness (tests/harness) playing Flink: no fnworker
# binary, none of its libraries. A job then runs through launcher, pool and
# worker, and killing the launcher must stop its worker in the sidecar.
#
# When podman cannot run containers here (not installed, or the sandbox does
# not let it) the test prints one line saying why and exits 0 with
# FNW_IMAGE_TEST_OPTIONAL=1 (make check), 1 otherwise (make image-test).
# Notes for sandboxes: without CAP_SYS_RESOURCE, podman needs default_ulimits
# in containers.conf, and crun 1.8 does not run on a hybrid cgroup host;
# scripts/image/podman-conf.sh finds what works and the test uses it.
# The base images are made once and cached (scripts/image/base.sh).
set -eu
BUILD=${1:-build}
IMAGE=${2:-localhost/fnworker:latest}
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
mkdir -p "$BUILD/image" && BUILD=$(CDPATH= cd -- "$BUILD" && pwd)
JRE=localhost/fnworker-test-jre:bookworm
SCALE=${FNW_TIME_SCALE:-1}
POD=fnw-image-test-$$
SHARED=/opt/fnworker-launcher           # the emptyDir's mount path, as in deploy/kubernetes
POOL=127.0.0.1:50000                    # the image's default --listen
work="$BUILD/image/test"
failures=0

skip() {
  echo "image test skipped: $*"
  [ -n "${FNW_IMAGE_TEST_OPTIONAL:-}" ] && exit 0
  exit 1
}
pass() { echo "PASS image_$1"; }
fail() { echo "FAIL image_$1: $2"; failures=$((failures + 1)); }
cleanup() {
  if [ -n "${pod_made:-}" ]; then
    if [ "$failures" -gt 0 ]; then
      echo "--- sidecar log"; podman logs "$POD-sidecar" 2>&1 | tail -n 40 || true
    fi
    podman pod rm -f "$POD" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- can podman run containers here? ---------------------------------------
command -v podman >/dev/null 2>&1 ||
  skip "podman is not installed (apt-get install podman runc catatonit debootstrap)"
command -v catatonit >/dev/null 2>&1 || [ -x /usr/libexec/podman/catatonit ] ||
  skip "podman pods need catatonit (apt-get install catatonit)"
if ! podman image exists docker.io/library/debian:bookworm-slim && ! command -v debootstrap >/dev/null 2>&1; then
  skip "no debian:bookworm-slim image and no debootstrap to make one (apt-get install debootstrap)"
fi
sh "$ROOT/scripts/image/base.sh" "$BUILD" debian
conf=$(sh "$ROOT/scripts/image/podman-conf.sh" "$BUILD" docker.io/library/debian:bookworm-slim 2>"$BUILD/image/why") ||
  skip "$(cat "$BUILD/image/why")"
[ -z "$conf" ] || export CONTAINERS_CONF="$conf"

# ---- the images --------------------------------------------------------------
sh "$ROOT/scripts/image/build.sh" "$BUILD" "$IMAGE"
sh "$ROOT/scripts/image/base.sh" "$BUILD" jre
[ -f "$BUILD/harness/harness.jar" ] || { echo "image test: build the harness first (make harness)" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work/tm" "$work/shared"
# the harness and its jars, mounted read-only into the TaskManager stand-in
classpath=""
for j in $(tr ':' ' ' <"$BUILD/harness/classpath"); do
  cp -L "$j" "$work/tm/" && classpath="$classpath${classpath:+:}/tm/$(basename "$j")"
done
chmod 1777 "$work/shared"   # an emptyDir is world-writable; the image runs as uid 10001
run() { podman run --pull=never --no-healthcheck "$@"; }

label=$(podman image inspect --format '{{index .Config.Labels "org.opencontainers.image.version"}}' "$IMAGE")
[ "$label" = "$(cat "$ROOT/VERSION")" ] && pass version_label ||
  fail version_label "org.opencontainers.image.version is '$label', the VERSION file says $(cat "$ROOT/VERSION")"
got=$(run --rm "$IMAGE" worker --version 2>&1 || true)
[ "$got" = "fnworker $(cat "$ROOT/VERSION")" ] && pass worker_version ||
  fail worker_version "the image's fnworker --version prints '$got'"
uid=$(run --rm --entrypoint id "$IMAGE" -u)
[ "$uid" != 0 ] && pass "non_root_user" || fail non_root_user "the image runs as uid $uid"
cid=$(podman create --pull=never --no-healthcheck "$IMAGE")
podman cp "$cid:/opt/fnworker/fnworker" "$work/fnworker" && podman rm "$cid" >/dev/null
if readelf -S "$work/fnworker" | grep -q '\.symtab'; then
  fail stripped_binary "/opt/fnworker/fnworker has a symbol table"
else
  pass stripped_binary
fi

# ---- the pod: the initContainer, then the TaskManager stand-in ---------------
podman pod create --name "$POD" --network none >/dev/null && pod_made=1
run --rm --pod "$POD" -v "$work/shared:$SHARED" "$IMAGE" install-launcher "$SHARED" >/dev/null
if [ -x "$work/shared/pyflink-udf-runner.sh" ] &&
   cmp -s "$work/shared/pyflink-udf-runner.sh" "$ROOT/scripts/pyflink-udf-runner.sh"; then
  pass install_launcher
else
  fail install_launcher "install-launcher did not copy an executable pyflink-udf-runner.sh into the volume"
fi
run -d --init --pod "$POD" --name "$POD-tm" -v "$work/shared:$SHARED:ro" -v "$work/tm:/tm:ro" \
  -e PYFLINK_UDF_RUNNER_DIR="$SHARED" -e FNW_POOL_ADDRESS="$POOL" "$JRE" sleep infinity >/dev/null
libs=$(podman exec "$POD-tm" sh -c 'ldconfig -p | grep -E "libgrpc|libprotobuf-c|libev\.so|libavro|libjansson"; command -v fnworker' || true)
[ -z "$libs" ] && pass taskmanager_without_fnworker_libraries ||
  fail taskmanager_without_fnworker_libraries "the TaskManager stand-in has: $libs"

# ---- the sidecar: the pool -----------------------------------------------------
if ! run --rm "$IMAGE" pool --help 2>/dev/null | grep -q -- --listen; then
  fail has_pool_mode "'fnworker pool --help' in the image does not list --listen: the image's binary has no pool mode"
  exit 1
fi
run -d --pod "$POD" --name "$POD-sidecar" "$IMAGE" >/dev/null
# the image's HEALTHCHECK command, run the way podman's timer would run it
health=$(podman image inspect --format '{{range $i, $a := .Config.Healthcheck.Test}}{{if $i}}{{$a}} {{end}}{{end}}' "$IMAGE")
healthy=""
i=0
while [ $i -lt $((30 * SCALE)) ]; do
  # shellcheck disable=SC2086
  if podman exec "$POD-sidecar" $health 2>/dev/null; then healthy=1; break; fi
  sleep 1; i=$((i + 1))
done
[ -n "$healthy" ] && pass healthcheck || fail healthcheck "'$health' did not succeed within $((30 * SCALE)) s"
podman exec "$POD-sidecar" /opt/fnworker/entrypoint health 127.0.0.1:1 2>/dev/null &&
  fail healthcheck_refused "the probe succeeds against a port nothing listens on" || pass healthcheck_refused

# ---- a job through launcher, pool and worker -------------------------------------
# harness [-d] ARGS: the harness in the TaskManager stand-in (-d: in the background)
harness() {
  d=""; [ "$1" = -d ] && { d=-d; shift; }
  # shellcheck disable=SC2086
  podman exec $d "$POD-tm" java -cp "$classpath" fnworker.harness.Main run --runner-dir "$SHARED" \
    --type 'ROW<id:LONG,name:STRING,tags:LIST<STRING>>' --quiet "$@"
}
if harness --generate 2000 --verify identity >"$work/job.log" 2>&1; then
  pass job_through_pool
else
  fail job_through_pool "the harness failed: $(tail -n 5 "$work/job.log")"
fi

# ---- killing the launcher stops its worker ------------------------------------------
# workers in the sidecar: fnworker processes other than the pool
workers() { podman exec "$POD-sidecar" bash -c 'for p in /proc/[0-9]*; do
  [ "$(cat "$p/comm" 2>/dev/null)" = fnworker ] || continue
  set -- $(tr "\0" " " <"$p/cmdline" 2>/dev/null)
  [ "${2:-}" = pool ] || echo "${p#/proc/}"; done'; }
# the launcher: the runner script the JVM started (its parent is java)
launcher() { podman exec "$POD-tm" bash -c 'for p in /proc/[0-9]*; do
  c=$(tr "\0" " " <"$p/cmdline" 2>/dev/null) || continue
  case "$c" in *pyflink-udf-runner.sh*) ;; *) continue ;; esac
  pp=$(awk "/^PPid:/ {print \$2}" "$p/status")
  [ "$(cat /proc/$pp/comm 2>/dev/null)" = java ] && echo "${p#/proc/}"; done'; }
# the job's worker exits once the job is done (Flink ends its Control stream)
i=0
while [ $i -lt $((20 * SCALE)) ] && [ -n "$(workers)" ]; do sleep 1; i=$((i + 1)); done
[ -z "$(workers)" ] && pass worker_exits_after_job ||
  fail worker_exits_after_job "worker still running $((20 * SCALE)) s after the job: $(workers)"
harness -d --generate 500000000 >/dev/null
i=0
while [ $i -lt $((60 * SCALE)) ] && { [ -z "$(workers)" ] || [ -z "$(launcher)" ]; }; do
  sleep 1; i=$((i + 1))
done
lpid=$(launcher | head -n 1)
if [ -z "$(workers)" ] || [ -z "$lpid" ]; then
  fail launcher_kill_stops_worker "no running worker (workers: '$(workers)') or launcher ('$lpid') to kill"
else
  podman exec "$POD-tm" bash -c "kill -KILL $lpid"
  i=0
  while [ $i -lt $((20 * SCALE)) ] && [ -n "$(workers)" ]; do sleep 1; i=$((i + 1)); done
  [ -z "$(workers)" ] && pass launcher_kill_stops_worker ||
    fail launcher_kill_stops_worker "worker still running $((20 * SCALE)) s after SIGKILL of launcher $lpid: $(workers)"
fi

[ "$failures" = 0 ] && echo "image test: all passed" && exit 0
echo "image test: $failures failed"
exit 1
