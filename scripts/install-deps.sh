#!/bin/sh
# Installs the Debian packages a make target needs, by group, once:
#   sh scripts/install-deps.sh build test      (no group: build and test)
#   build     the compiler, gRPC C core, protobuf-c (protoc-c), libev, Avro C,
#             Jansson, hiredis, libcurl, and c-ares and libcrypto for the
#             example plugins, libmicrohttpd for the pool's endpoints:
#             what `make` needs
#   test      Check, the JDK and Debian's grpc-java for the runner harness,
#             protoc, redis-server, nginx-light, python3 with cloudpickle and
#             openssl, curl (the pool tests ask its HTTP endpoints), and
#             grpcio, numpy and protobuf for the KServe test
#             server: the servers the tests start; what `make check` adds
#   valgrind  valgrind (`make valgrind`; `make bench` counts instructions with
#             its callgrind)
#   bench     gnuplot-nox for the plots, redis-server for W12, wrk for W13 (`make bench`)
#   fuzz      clang with libFuzzer and the sanitizer runtimes (`make fuzz`; Debian 12 ships
#             them in libclang-rt-14-dev, which clang does not pull in)
#   lint      clang-format (`make format`, `make format-check`) and cppcheck
#             (`make lint`, in `make check`)
#   image     podman, runc, catatonit and debootstrap (`make image`, the image test)
#   flink     python3-venv and the JDK, for the end-to-end suite's PyFlink
#             virtualenvs (scripts/flink-venv.sh; `make e2e`, `make demo`), and
#             maven, which fetches the suite's Java jars (scripts/e2e-jars.sh)
# On a machine that is not Debian, or as a user who is not root, it prints
# the exact apt-get line and stops, so no target half-builds. The services
# the tests run (redis-server, nginx) are installed without letting their
# packages start system services: the tests start their own.
set -eu
group_build="gcc make pkg-config libgrpc-dev protobuf-c-compiler libprotobuf-c-dev libev-dev
libavro-dev libjansson-dev libhiredis-dev libcurl4-openssl-dev libmicrohttpd-dev ca-certificates
libc-ares-dev libssl-dev"
group_test="check protobuf-compiler default-jdk-headless libgrpc-java libprotobuf-java
protobuf-compiler-grpc-java-plugin libnetty-java libperfmark-java libgoogle-gson-java
libgoogle-common-protos-java libgeronimo-annotation-1.3-spec-java libopencensus-java
libguava-java libjsr305-java liberror-prone-java redis-server redis-tools nginx-light
python3 python3-cloudpickle openssl python3-grpcio python3-numpy python3-protobuf python3-yaml curl"
group_valgrind="valgrind"
group_bench="gnuplot-nox wrk redis-server redis-tools"
group_fuzz="clang libclang-rt-14-dev"
group_lint="clang-format cppcheck"
group_image="podman runc catatonit debootstrap"
group_flink="python3-venv default-jdk-headless procps maven"

[ $# -eq 0 ] && set -- build test
PKGS=""
for g in "$@"; do
  case "$g" in
    build) PKGS="$PKGS $group_build" ;;
    test) PKGS="$PKGS $group_test" ;;
    valgrind) PKGS="$PKGS $group_valgrind" ;;
    bench) PKGS="$PKGS $group_bench" ;;
    fuzz) PKGS="$PKGS $group_fuzz" ;;
    lint) PKGS="$PKGS $group_lint" ;;
    image) PKGS="$PKGS $group_image" ;;
    flink) PKGS="$PKGS $group_flink" ;;
    *) echo "install-deps.sh: unknown group '$g' (build, test, valgrind, bench, fuzz, lint, image, flink)" >&2; exit 2 ;;
  esac
done
what="$*"

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps.sh ($what): not a Debian system, so the packages cannot be checked;" >&2
  echo "  the build needs the equivalents of these Debian packages:" $PKGS >&2
  exit 0
fi
missing=""
for p in $PKGS; do
  case " $missing " in *" $p "*) continue ;; esac
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$st" in *" installed") ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
if [ ! -r /etc/debian_version ] || [ "$(id -u)" != 0 ]; then
  echo "fnworker ($what) needs these Debian packages, which are not installed:" >&2
  echo "  $missing" >&2
  echo "Install them as root, then run make again:" >&2
  echo "  apt-get install -y --no-install-recommends$missing" >&2
  exit 1
fi
n=$(echo $missing | wc -w)
echo "installing $n packages for $what:$missing"
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
