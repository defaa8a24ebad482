#!/bin/sh
# Finds how podman can run containers on this machine, for the image build
# and the image test. Prints the containers.conf to use (CONTAINERS_CONF), or
# nothing when podman's defaults work; exits 1 with the reason on stderr when
# podman cannot run a container here at all.
#   podman-conf.sh BUILD_DIR IMAGE    IMAGE: any local image to probe with
# Two things a sandbox may need, tried in this order:
# - default_ulimits: podman (rootful) raises a container's RLIMIT_NOFILE and
#   RLIMIT_NPROC above the caller's, which needs CAP_SYS_RESOURCE; without it
#   the runtime fails with "setrlimit ...: Operation not permitted". The
#   generated containers.conf pins the limits to the caller's own.
# - runtime runc: crun 1.8 refuses a cgroup v1/v2 hybrid host whose unified
#   hierarchy has a controller ("cgroups in hybrid mode not supported").
# None of this is needed on an ordinary host or in CI with a full podman.
set -eu
mkdir -p "$1/image" && build=$(CDPATH= cd -- "$1" && pwd)
image=$2
command -v podman >/dev/null 2>&1 || { echo "podman is not installed" >&2; exit 1; }
conf="$build/image/containers.conf"
mkdir -p "$build/image"
probe() {
  CONTAINERS_CONF=${1:-/usr/share/containers/containers.conf} podman run --rm --pull=never \
    --network=none --no-healthcheck "$image" true >"$build/image/probe.log" 2>&1
}
if probe ""; then exit 0; fi
limit() { awk -v n="$1" -v f="$2" 'index($0, n) == 1 { $0 = substr($0, length(n) + 1); print $f }' /proc/self/limits; }
nofile="$(limit "Max open files" 1):$(limit "Max open files" 2)"
nproc=$(limit "Max processes" 2)
case "$nproc" in unlimited|"") nproc=4096 ;; *) [ "$nproc" -gt 4096 ] && nproc=4096 ;; esac
for runtime in "" runc; do
  if [ -n "$runtime" ] && ! command -v "$runtime" >/dev/null 2>&1; then continue; fi
  {
    echo "# made by scripts/image/podman-conf.sh: podman's defaults do not run here"
    echo "[containers]"
    echo "default_ulimits = [\"nofile=$nofile\", \"nproc=$nproc:$nproc\"]"
    [ -z "$runtime" ] || printf '[engine]\nruntime = "%s"\n' "$runtime"
  } >"$conf"
  if probe "$conf"; then echo "$conf"; exit 0; fi
done
why=$(grep -v '^time=' "$build/image/probe.log" | tail -n 1)
case "$why" in
  *"hybrid mode"*) why="$why (install runc: apt-get install runc)" ;;
esac
echo "podman cannot run a container here: $why" >&2
exit 1
