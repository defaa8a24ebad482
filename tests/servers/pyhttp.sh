#!/bin/sh
# tests/servers/pyhttp.sh — the Python test HTTP server (http_server.py
# beside this file) on a free 127.0.0.1 port.
#   pyhttp.sh start DIR [--port P] [--owner PID]   waits until it listens,
#                                     prints its port (P: that port, else any)
#   pyhttp.sh stop DIR
#   pyhttp.sh kill DIR                kills it (KILL), as a crash would
# Exits 77 when python3 is not installed.
set -eu
. "$(dirname "$0")/common.sh"
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: pyhttp.sh start|stop DIR [--owner PID]"
shift 2
case "$cmd" in
  stop) stop_pidfile "$dir/py.pid"; exit 0 ;;
  kill) stop_pidfile "$dir/py.pid" KILL; exit 0 ;;
  start) ;;
  *) die "pyhttp.sh: unknown command $cmd" ;;
esac
need python3
owner=""; port=0
while [ $# -gt 0 ]; do
  case "$1" in
    --port) port=$2; shift 2 ;;
    --owner) owner=$2; shift 2 ;;
    *) die "pyhttp.sh: unknown option $1" ;;
  esac
done
mkdir -p "$dir"
make_fixtures "$dir"
rm -f "$dir/py.port"
"$(python_bin)" "$(dirname "$0")/http_server.py" "$dir" "$port" </dev/null >"$dir/py.log" 2>&1 &
echo $! >"$dir/py.pid"
wait_port_file "Python test server" "$dir/py.pid" "$dir/py.port" "$dir/py.log" 200
watchdog "$dir/py.pid" "$owner"
cat "$dir/py.port"
