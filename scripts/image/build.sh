#!/bin/sh
# `make image`: builds the sidecar image (Dockerfile) with podman.
#   build.sh BUILD_DIR [IMAGE]      IMAGE defaults to localhost/fnworker:latest
# FROM debian:bookworm-slim resolves locally (--pull=never): when the machine
# has no such image, base.sh makes it from a debootstrap root. The apt steps
# reach the Debian mirror through the host's network. --format docker keeps
# the Dockerfile's HEALTHCHECK (the OCI format has no place for it). The
# label org.opencontainers.image.version is the VERSION file's release.
set -eu
build=$1
image=${2:-localhost/fnworker:latest}
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(CDPATH= cd -- "$here/../.." && pwd)
command -v podman >/dev/null 2>&1 ||
  { echo "make image needs podman (apt-get install podman runc catatonit debootstrap)" >&2; exit 1; }
sh "$here/base.sh" "$build" debian
conf=$(sh "$here/podman-conf.sh" "$build" docker.io/library/debian:bookworm-slim)
[ -z "$conf" ] || export CONTAINERS_CONF="$conf"
version=$(cat "$root/VERSION")
echo "podman build -t $image, version $version (log: $build/image/build.log)"
if ! podman build --pull=never --network=host --format docker -t "$image" --build-arg FNW_VERSION="$version" \
       -f "$root/Dockerfile" "$root" >"$build/image/build.log" 2>&1; then
  tail -n 30 "$build/image/build.log" >&2
  echo "make image: podman build failed (full log: $build/image/build.log)" >&2
  exit 1
fi
size=$(podman image inspect --format '{{.Size}}' "$image")
echo "built $image: $((size / 1000000)) MB"
