#!/bin/sh
# tests/servers/nginx.sh — a throwaway nginx on 127.0.0.1 serving the JSON
# fixtures (GET /json/<k>) with keep-alive, over plain HTTP/1.1 and, when
# openssl is there, over TLS with HTTP/2 offered by ALPN (a self-signed
# certificate for 127.0.0.1, DIR/cert.pem, which clients trust as a CA file).
# POST (or any method) /sink answers {"ok":true} and drops the request body;
# GET /proto answers {"proto":"HTTP/1.1"} or {"proto":"HTTP/2.0"}, the
# protocol of the request. POST /score is a scoring service that does no
# work: whatever batch it gets (up to 64 rows), it answers
# {"outputs":[{"score":0.5},{"score":1.5},...]} (64 scores, i + 0.5), so a
# client reads row i's score at /outputs/i/score; POST /score1 answers
# {"outputs":[{"score":0.5}]}, for a batch of one (the bench's W16).
#   nginx.sh start DIR [--owner PID]   prints "HTTP_PORT HTTPS_PORT" (0: no TLS)
#   nginx.sh stop DIR
# Exits 77 when nginx is not installed.
set -eu
. "$(dirname "$0")/common.sh"
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: nginx.sh start|stop DIR [--owner PID]"
shift 2
case "$cmd" in
  stop) stop_pidfile "$dir/nginx.pid"; exit 0 ;;
  start) ;;
  *) die "nginx.sh: unknown command $cmd" ;;
esac
need nginx
owner=""
[ "${1:-}" = "--owner" ] && owner=${2:-}
mkdir -p "$dir/tmp"
make_fixtures "$dir"
score=$(awk 'BEGIN { printf "{\"outputs\":["; for (i = 0; i < 64; i++) printf "%s{\"score\":%d.5}", (i ? "," : ""), i; printf "]}" }')
tls=0
if command -v openssl >/dev/null 2>&1 &&
   openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" -out "$dir/cert.pem" -days 2 \
     -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1; then
  tls=1
fi
try=0
while :; do
  p=$(free_port); tp=0
  [ $tls = 1 ] && tp=$(free_port)
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
    echo "  keepalive_timeout 60s; keepalive_requests 100000;"
    echo "  types { application/json json; } default_type application/json;"
    echo "  server { listen 127.0.0.1:$p; root $dir/www;"
    echo "    location /json/ { try_files \$uri.json =404; }"
    echo "    location = /sink { return 200 '{\"ok\":true}'; }"
    echo "    location = /score { return 200 '$score'; }"
    echo "    location = /score1 { return 200 '{\"outputs\":[{\"score\":0.5}]}'; }"
    echo "    location = /proto { return 200 '{\"proto\":\"\$server_protocol\"}'; } }"
    if [ $tls = 1 ]; then
      echo "  server { listen 127.0.0.1:$tp ssl http2; root $dir/www;"
      echo "    ssl_certificate $dir/cert.pem; ssl_certificate_key $dir/key.pem;"
      echo "    location /json/ { try_files \$uri.json =404; }"
      echo "    location = /proto { return 200 '{\"proto\":\"\$server_protocol\"}'; } }"
    fi
    echo "}"
  } >"$dir/nginx.conf"
  # with `daemon on` nginx returns once its sockets listen
  if nginx -p "$dir" -e "$dir/nginx-error.log" -c "$dir/nginx.conf" </dev/null >/dev/null 2>&1; then
    i=0
    while [ ! -s "$dir/nginx.pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    watchdog "$dir/nginx.pid" "$owner"
    echo "$p $tp"
    exit 0
  fi
  try=$((try + 1))
  if [ $try -ge 5 ]; then
    echo "nginx did not start on 127.0.0.1:$p; its log:" >&2
    tail -n 5 "$dir/nginx-error.log" >&2
    exit 1
  fi
done
