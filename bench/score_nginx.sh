#!/bin/sh
# bench/score_nginx.sh — W20's model server: a throwaway nginx on 127.0.0.1
# (one worker process, keep-alive) with tests/servers/nginx.sh's no-work
# scoring routes, POST /score (any batch up to 64 rows: 64 scores,
# {"outputs":[{"score":0.5},...]}) and POST /score1 (one score), plus
# GET /status, nginx's stub_status, whose third number on its third line is
# every request the server has handled (the /status requests included): the
# bench reads it before and after a job to count the requests a side sent.
#   score_nginx.sh start DIR [--owner PID]   prints the port
#   score_nginx.sh stop DIR
# Exits 77 when nginx is not installed.
set -eu
servers="$(dirname "$0")/../tests/servers"
. "$servers/common.sh"
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: score_nginx.sh start|stop DIR [--owner PID]"
shift 2
case "$cmd" in
  stop) stop_pidfile "$dir/nginx.pid"; exit 0 ;;
  start) ;;
  *) die "score_nginx.sh: unknown command $cmd" ;;
esac
need nginx
nginx -V 2>&1 | grep -q http_stub_status_module ||
  die "score_nginx.sh: this nginx has no stub_status module (W20 counts requests with it)"
owner=""
[ "${1:-}" = "--owner" ] && owner=${2:-}
mkdir -p "$dir/tmp"
score=$(awk 'BEGIN { printf "{\"outputs\":["; for (i = 0; i < 64; i++) printf "%s{\"score\":%d.5}", (i ? "," : ""), i; printf "]}" }')
try=0
while :; do
  p=$(free_port)
  {
    echo "worker_processes 1;"
    echo "daemon on;"
    echo "pid $dir/nginx.pid;"
    echo "error_log $dir/nginx-error.log warn;"
    [ "$(id -u)" = 0 ] && echo "user root;"
    echo "events { worker_connections 4096; }"
    echo "http {"
    echo "  access_log off;"
    for t in client_body proxy fastcgi uwsgi scgi; do echo "  ${t}_temp_path $dir/tmp/$t;"; done
    echo "  keepalive_timeout 60s; keepalive_requests 1000000;"
    echo "  default_type application/json;"
    echo "  server { listen 127.0.0.1:$p;"
    echo "    location = /score { return 200 '$score'; }"
    echo "    location = /score1 { return 200 '{\"outputs\":[{\"score\":0.5}]}'; }"
    echo "    location = /status { stub_status; } }"
    echo "}"
  } >"$dir/nginx.conf"
  if nginx -p "$dir" -e "$dir/nginx-error.log" -c "$dir/nginx.conf" </dev/null >/dev/null 2>&1; then
    i=0
    while [ ! -s "$dir/nginx.pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    watchdog "$dir/nginx.pid" "$owner"
    echo "$p"
    exit 0
  fi
  try=$((try + 1))
  if [ $try -ge 5 ]; then
    echo "nginx did not start on 127.0.0.1:$p; its log:" >&2
    tail -n 5 "$dir/nginx-error.log" >&2
    exit 1
  fi
done
