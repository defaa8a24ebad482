#!/bin/sh
# Installs what fnworker needs from Debian's packages, once.
# On a machine that is not Debian, or as a user who is not root, it prints the
# package list and stops, so `make demo` and `make check` never half-build.
set -eu
PKGS="gcc make pkg-config libgrpc-dev protobuf-c-compiler libprotobuf-c-dev libev-dev check
protobuf-compiler libavro-dev libjansson-dev default-jdk-headless libgrpc-java libprotobuf-java
protobuf-compiler-grpc-java-plugin libnetty-java libperfmark-java libgoogle-gson-java
libgoogle-common-protos-java libgeronimo-annotation-1.3-spec-java libopencensus-java
libguava-java libjsr305-java liberror-prone-java valgrind gnuplot-nox python3-cloudpickle"
missing=""
if command -v dpkg-query >/dev/null 2>&1; then
  for p in $PKGS; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in *" installed") ;; *) missing="$missing $p" ;; esac
  done
else
  missing="$PKGS"
fi
[ -z "$missing" ] && exit 0
if [ ! -r /etc/debian_version ] || [ "$(id -u)" != 0 ]; then
  echo "fnworker needs these Debian packages, which are not installed:" >&2
  echo "  $missing" >&2
  echo "Install them as root (apt-get install -y$missing) and run make again." >&2
  exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
