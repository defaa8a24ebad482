#!/bin/sh
# The launcher Flink runs for a Python worker when the TaskManager has
# PYFLINK_UDF_RUNNER_DIR set: Beam's ProcessEnvironmentFactory executes
#   $PYFLINK_UDF_RUNNER_DIR/pyflink-udf-runner.sh --id=<id> --provision_endpoint=<host:port>
# Like Flink's own script it tees stdout+stderr to
# $BOOT_LOG_DIR/flink-python-udf-boot.log (when BOOT_LOG_DIR is set),
# starting the file afresh on every launch (Flink puts the file into the
# exception when a worker fails to start). Flink gives every worker of a job
# on one TaskManager the same BOOT_LOG_DIR, so workers of other slots write
# the file at the same time: it is truncated once, then written in append
# mode, so their lines follow each other instead of overwriting each other;
# and runs in $_PYTHON_WORKING_DIR (when set); then it execs fnworker with the
# same arguments, so the worker keeps this process id and gets Flink's SIGTERM.
# The worker is $FNWORKER_BIN, or fnworker next to this script. Operation
# plugins come from $FNW_PLUGINS_DIR, or plugins/ next to this script when
# that exists (else the worker looks beside its own executable).
#
# With FNW_POOL_ADDRESS=host:port the worker runs in the fnworker sidecar
# instead: the script asks the `fnworker pool` listening there to start it
# (launcher protocol version 1, see docs/sidecar.md, "The launcher protocol, version 1", over bash's /dev/tcp),
# prints the worker's stdout and stderr as they come (so they reach the boot
# log) and exits with the worker's exit code. When Flink kills this script,
# the connection closes and the pool stops the worker. In pool mode the
# worker uses the sidecar's plugins (it inherits the pool's environment).
# When the pool asks for a token, the script sends the one in the file
# named by FNW_POOL_TOKEN_FILE, else FNW_POOL_TOKEN. Beam's older endpoint
# flags (--logging_endpoint, --artifact_endpoint, --control_endpoint) are
# not sent: the pool refuses them, and the worker reads those endpoints from
# the provision endpoint. Other flags go to the pool, which passes only
# those it allows (--semi_persist_dir, --log-level, and what the operator
# added) and refuses the request for any other.
set -eu
if [ -n "${FNW_POOL_ADDRESS:-}" ] && [ -z "${BASH_VERSION:-}" ] && command -v bash >/dev/null 2>&1; then
  exec bash "$0" "$@"    # /dev/tcp is bash's
fi
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
bin=${FNWORKER_BIN:-$here/fnworker}
if [ -z "${FNW_PLUGINS_DIR+set}" ] && [ -d "$here/plugins" ]; then
  FNW_PLUGINS_DIR=$here/plugins
  export FNW_PLUGINS_DIR
fi
if [ -n "${BOOT_LOG_DIR:-}" ]; then
  log="$BOOT_LOG_DIR/flink-python-udf-boot.log"
  fifo_dir=$(mktemp -d "${TMPDIR:-/tmp}/fnworker-boot.XXXXXX" 2>/dev/null) || fifo_dir=
  if [ -n "$fifo_dir" ] && mkfifo "$fifo_dir/out" 2>/dev/null; then
    # the log starts empty; tee appends what it reads from the fifo, which
    # this shell (and then the worker, via exec) writes.
    : >"$log"
    tee -a "$log" <"$fifo_dir/out" &
    exec >"$fifo_dir/out" 2>&1
    rm -rf "$fifo_dir"
  else
    # no fifo: the log only (truncated), not the terminal
    [ -z "$fifo_dir" ] || rm -rf "$fifo_dir"
    : >"$log"
    exec >>"$log" 2>&1
  fi
fi
# after the log is set up, so that Flink's exception shows these failures
if [ -n "${_PYTHON_WORKING_DIR:-}" ]; then
  cd "$_PYTHON_WORKING_DIR"
  # as Flink's own script: an interpreter shipped in an archive (inside the
  # working directory) may have lost its execute bit; fnworker starts PyFlink's
  # Python worker with it for the job's Python functions
  case "${python:-}" in
    "$_PYTHON_WORKING_DIR"/*|./*) [ -f "$python" ] && chmod +x "$python" 2>/dev/null || true ;;
  esac
fi

# The pool client: request, then relay until EXIT <code>.
pool_fail() {
  echo "pyflink-udf-runner.sh: $*" >&2
  exit 1
}
pool_launch() {
  addr=$FNW_POOL_ADDRESS
  host=${addr%:*}
  port=${addr##*:}
  case $host in \[*\]) host=${host#[}; host=${host%]} ;; esac
  [ -n "$host" ] && [ -n "$port" ] && [ "$host" != "$addr" ] ||
    pool_fail "FNW_POOL_ADDRESS='$addr' is not host:port"
  [ -n "${BASH_VERSION:-}" ] ||
    pool_fail "FNW_POOL_ADDRESS is set but bash is not installed (the pool client needs bash's /dev/tcp)"
  id= ep= args=
  while [ $# -gt 0 ]; do
    case $1 in
      --id=*) id=${1#--id=} ;;
      --id) id=${2:-}; shift ;;
      --provision_endpoint=*) ep=${1#--provision_endpoint=} ;;
      --provision_endpoint) ep=${2:-}; shift ;;
      --logging_endpoint=*|--artifact_endpoint=*|--control_endpoint=*) ;;
      --logging_endpoint|--artifact_endpoint|--control_endpoint) shift ;;
      --*) args="${args}arg=$1
" ;;
      *) pool_fail "unexpected argument '$1' (the pool passes --flags only)" ;;
    esac
    shift
  done
  [ -n "$id" ] || id=${WORKER_ID:-}
  token=
  if [ -n "${FNW_POOL_TOKEN_FILE:-}" ]; then
    token=$(cat -- "$FNW_POOL_TOKEN_FILE" 2>/dev/null) ||
      pool_fail "cannot read the fnworker pool token from $FNW_POOL_TOKEN_FILE (FNW_POOL_TOKEN_FILE)"
  elif [ -n "${FNW_POOL_TOKEN:-}" ]; then
    token=$FNW_POOL_TOKEN
  fi
  case $token in *"
"*) pool_fail "the fnworker pool token holds a line break (FNW_POOL_TOKEN_FILE or FNW_POOL_TOKEN)" ;; esac
  [ -z "$token" ] || token="token=$token
"
  { exec 3<>"/dev/tcp/$host/$port"; } 2>/dev/null ||
    pool_fail "cannot reach the fnworker pool at $addr (FNW_POOL_ADDRESS): is the fnworker sidecar running \`fnworker pool --listen $addr\`?"
  printf 'FNWPOOL 1 START\nid=%s\nprovision_endpoint=%s\n%s%s\n' "$id" "$ep" "$token" "$args" >&3 ||
    pool_fail "the fnworker pool at $addr closed the connection"
  IFS= read -r line <&3 || line=
  case $line in
    "OK "*) ;;
    "ERROR "*) pool_fail "the fnworker pool at $addr did not start worker '$id': ${line#ERROR }" ;;
    *) pool_fail "the fnworker pool at $addr did not answer the request for worker '$id'" ;;
  esac
  code=
  while IFS= read -r line <&3; do
    case $line in
      "O "*) printf '%s\n' "${line#O }" ;;
      "E "*) printf '%s\n' "${line#E }" >&2 ;;
      "EXIT "*) code=${line#EXIT }; break ;;
    esac
  done
  [ -n "$code" ] || pool_fail "lost the connection to the fnworker pool at $addr while worker '$id' ran"
  exit "$code"
}
if [ -n "${FNW_POOL_ADDRESS:-}" ]; then
  pool_launch "$@"
fi
if [ ! -x "$bin" ]; then
  echo "pyflink-udf-runner.sh: fnworker not found at $bin (set FNWORKER_BIN or put fnworker next to this script)" >&2
  exit 127
fi
exec "$bin" "$@"
