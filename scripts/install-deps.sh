#!/bin/sh
# Installs what fnworker needs from Debian's packages, once.
# On a machine that is not Debian, or as a user who is not root, it prints the
# package list and stops, so `make demo` and `make check` never half-build.
# The service clients' tests run a real redis-server, nginx and a Python test
# server on 127.0.0.1; their packages are installed here too, without letting
# the packages start their system services (the tests start their own).
set -eu
PKGS="gcc make pkg-config libgrpc-dev protobuf-c-compiler libprotobuf-c-dev libev-dev check
protobuf-compiler libavro-dev libjansson-dev default-jdk-headless libgrpc-java libprotobuf-java
protobuf-compiler-grpc-java-plugin libnetty-java libperfmark-java libgoogle-gson-java
libgoogle-common-protos-java libgeronimo-annotation-1.3-spec-java libopencensus-java
libguava-java libjsr305-java liberror-prone-java valgrind gnuplot-nox wrk
libhiredis-dev libcurl4-openssl-dev ca-certificates redis-server redis-tools nginx-light
python3 openssl python3-cloudpickle libc-ares-dev libssl-dev"
missing=""
if command -v dpkg-query >/dev/null 2>&1; then
  for p in $PKGS; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in *" installed") ;; *) missing="$missing $p" ;; esac
  done
else
  missing=" $(echo $PKGS)"
fi
[ -z "$missing" ] && exit 0
if [ ! -r /etc/debian_version ] || [ "$(id -u)" != 0 ]; then
  echo "fnworker needs these Debian packages, which are not installed:" >&2
  echo "  $missing" >&2
  echo "Install them as root (apt-get install -y$missing) and run make again." >&2
  exit 1
fi
n=$(echo $missing | wc -w)
echo "installing $n packages:$missing"
export DEBIAN_FRONTEND=noninteractive
# redis-server and nginx would start their system services on install; a
# policy-rc.d that refuses (exit 101) keeps them stopped. One that the machine
# already has is left as it is.
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && own_policy=1
  trap 'rm -f "$policy"' EXIT INT TERM
fi
echo "apt-get update ..."
apt-get update -q >/dev/null
echo "apt-get install ..."
# Progress: apt's per-package "Setting up" lines, not its full chatter.
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing 2>&1 | grep -E '^(Setting up|E:|W:)' || true
# The pipeline hides apt's status: check that everything is there now.
still=""
for p in $missing; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$st" in *" installed") ;; *) still="$still $p" ;; esac
done
if [ -n "$still" ]; then
  echo "apt-get could not install:$still" >&2
  exit 1
fi
[ -n "$own_policy" ] && rm -f "$policy"
echo "installed $n packages"
