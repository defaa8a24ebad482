#!/bin/bash
# The sidecar image's entry point (Dockerfile, ENTRYPOINT). Commands:
#   pool [ARGS...]            the pool: fnworker pool ARGS (the default command)
#   install-launcher DIR      copy the launcher (pyflink-udf-runner.sh) into
#                             DIR, a volume shared with the TaskManager (an
#                             initContainer's command), then exit
#   health [HOST:PORT]        exit 0 when GET /healthz on HOST:PORT (default
#                             $FNW_HEALTH_ADDRESS or 127.0.0.1:9464) answers
#                             200; the image's HEALTHCHECK (no curl needed:
#                             bash's /dev/tcp)
#   worker [ARGS...]          one worker, as the launcher would start it
#   anything else             run as a command (e.g. bash), for debugging
set -eu
home=/opt/fnworker

health() {
  local addr=${1:-${FNW_HEALTH_ADDRESS:-127.0.0.1:9464}}
  local host=${addr%:*} port=${addr##*:} status
  host=${host#[}; host=${host%]}
  { exec 3<>"/dev/tcp/$host/$port"; } 2>/dev/null || { echo "health: cannot connect to $addr" >&2; return 1; }
  printf 'GET /healthz HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n' "$addr" >&3
  IFS= read -r -t 5 status <&3 || status=
  exec 3<&-
  case "$status" in
    "HTTP/1."[01]" 200"*) return 0 ;;
    *) echo "health: $addr/healthz answered '${status%$'\r'}'" >&2; return 1 ;;
  esac
}

cmd=${1:-pool}
[ $# -gt 0 ] && shift
case "$cmd" in
  pool) exec "$home/fnworker" pool "$@" ;;
  worker) exec "$home/fnworker" "$@" ;;
  install-launcher)
    [ $# -eq 1 ] || { echo "usage: install-launcher DIR" >&2; exit 2; }
    cp "$home/pyflink-udf-runner.sh" "$1/pyflink-udf-runner.sh.tmp"
    chmod 755 "$1/pyflink-udf-runner.sh.tmp"
    mv -f "$1/pyflink-udf-runner.sh.tmp" "$1/pyflink-udf-runner.sh"
    echo "installed $1/pyflink-udf-runner.sh" ;;
  health) health "$@" ;;
  -*) exec "$home/fnworker" "$cmd" "$@" ;;
  *) exec "$cmd" "$@" ;;
esac
