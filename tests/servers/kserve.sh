#!/bin/sh
# tests/servers/kserve.sh — the Python KServe v2 gRPC test model server
# (kserve_server.py beside this file) on a free 127.0.0.1 port.
#   kserve.sh start DIR [--owner PID] [SERVER OPTIONS...]
#                                  waits until it serves, prints its port
#   kserve.sh stop DIR
#   kserve.sh kill DIR             kills it (KILL), as a crash would; start
#                                  it again with --port PORT
#   kserve.sh inject DIR JSON      writes DIR/control.json (fault injection,
#                                  see kserve_server.py), e.g.
#                                  '{"linear": {"unavailable": 2}}'
# Exits 77 when python3, its grpcio or numpy, or protoc is not installed.
set -eu
. "$(dirname "$0")/common.sh"
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: kserve.sh start|stop|kill|inject DIR [...]"
shift 2
case "$cmd" in
  stop) stop_pidfile "$dir/kserve.pid"; exit 0 ;;
  kill) stop_pidfile "$dir/kserve.pid" KILL; exit 0 ;;
  inject)
    printf '%s\n' "${1:-{\}}" >"$dir/control.json.tmp" && mv "$dir/control.json.tmp" "$dir/control.json"
    exit 0 ;;
  start) ;;
  *) die "kserve.sh: unknown command $cmd" ;;
esac
need python3
need protoc
py=$(python_bin)
if ! "$py" -c 'import grpc, numpy, google.protobuf' 2>/dev/null; then
  echo "skip: python3-grpcio, python3-numpy or python3-protobuf is not installed (scripts/install-deps.sh installs them)" >&2
  exit 77
fi
owner=""
if [ "${1:-}" = "--owner" ]; then owner=${2:-}; shift 2; fi
mkdir -p "$dir"
rm -f "$dir/kserve.port" "$dir/stats.json" "$dir/control.json"
here=$(cd "$(dirname "$0")" && pwd)
"$py" "$here/kserve_server.py" "$dir" "$here/../../proto" "$@" </dev/null >"$dir/kserve.log" 2>&1 &
echo $! >"$dir/kserve.pid"
wait_port_file "KServe test server" "$dir/kserve.pid" "$dir/kserve.port" "$dir/kserve.log" 300
watchdog "$dir/kserve.pid" "$owner"
cat "$dir/kserve.port"
