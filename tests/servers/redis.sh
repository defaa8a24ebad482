#!/bin/sh
# tests/servers/redis.sh — a throwaway redis-server on 127.0.0.1 for tests.
#   redis.sh start DIR [--port P] [--requirepass PW] [--owner PID]
#       starts it (data, log and pid file in DIR), waits until it accepts
#       connections and prints its port; --owner: stop it when PID is gone
#   redis.sh stop DIR      stops it (TERM)
#   redis.sh kill DIR      kills it (KILL), as a crash would
# Exits 77 when redis-server is not installed.
set -eu
. "$(dirname "$0")/common.sh"
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: redis.sh start|stop|kill DIR [options]"
shift 2
case "$cmd" in
  stop) stop_pidfile "$dir/redis.pid"; exit 0 ;;
  kill) stop_pidfile "$dir/redis.pid" KILL; exit 0 ;;
  start) ;;
  *) die "redis.sh: unknown command $cmd" ;;
esac
need redis-server
port=""; pass=""; owner=""
while [ $# -gt 0 ]; do
  case "$1" in
    --port) port=$2; shift 2 ;;
    --requirepass) pass=$2; shift 2 ;;
    --owner) owner=$2; shift 2 ;;
    *) die "redis.sh: unknown option $1" ;;
  esac
done
mkdir -p "$dir"
try=0
while :; do
  p=${port:-$(free_port)}
  {
    echo "bind 127.0.0.1"
    echo "port $p"
    echo "daemonize yes"
    echo "pidfile $dir/redis.pid"
    echo "logfile $dir/redis.log"
    echo "dir $dir"
    echo "save \"\""
    echo "appendonly no"
    [ -n "$pass" ] && echo "requirepass $pass"
  } >"$dir/redis.conf"
  : >"$dir/redis.log"
  redis-server "$dir/redis.conf" </dev/null >/dev/null 2>&1 || true
  i=0
  while [ $i -lt 100 ]; do
    grep -q "Ready to accept connections" "$dir/redis.log" 2>/dev/null && break
    [ -f "$dir/redis.pid" ] && ! alive "$(cat "$dir/redis.pid")" && break
    sleep 0.1; i=$((i + 1))
  done
  if grep -q "Ready to accept connections" "$dir/redis.log"; then
    watchdog "$dir/redis.pid" "$owner"
    echo "$p"
    exit 0
  fi
  stop_pidfile "$dir/redis.pid"
  try=$((try + 1))
  if [ -n "$port" ] || [ $try -ge 5 ]; then
    echo "redis-server did not start on 127.0.0.1:$p; its log:" >&2
    tail -n 5 "$dir/redis.log" >&2
    exit 1
  fi
done
