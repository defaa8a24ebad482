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
# (launcher protocol version 2, see docs/sidecar.md, "The launcher protocol,
# version 2", over bash's /dev/tcp), prints the worker's stdout and stderr as
# they come (so they reach the boot log) and exits with the worker's exit
# code. When Flink kills this script, the connection closes and the pool
# stops the worker. When the worker asks for PyFlink's Python worker (a job's
# Python functions that are not fnworker operations), this script starts it
# here, where Flink's environment has PyFlink, and stops it with the worker
# or when Flink kills this script (docs/sidecar.md, "Python functions in
# pool mode"). In pool mode the
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

# ---- PyFlink's Python worker on the worker's request (protocol version 2) ----
# The worker in the sidecar has no PyFlink; for a job's Python functions
# that are not fnworker operations it asks (SPAWN <n> <relay id>
# <host:port>) for PyFlink's Python worker, which runs here, in Flink's
# environment and working directory. Each child n has a supervisor (a
# background subshell, its parent) that answers SPAWNED <n> <pid>, passes
# its output on (to the boot log as python[<pid>]: <line>, to the pool as
# C <n> <line>), stops it on KILL <n> (SIGTERM, SIGKILL 5 s later) and ends
# with CHILDEXIT <n> <code> after its last line. Only `cat` writes to the
# connection: every other line goes through the fifo $py_dir/events, one
# write of less than 4096 bytes each, so lines never mix. The supervisors
# and the children do not hold the connection, so when this script is
# killed the pool sees it close and stops the worker.
py_dir= py_semi= py_main=$$
py_kids_n=
py_events() {  # (main only) the events fifo and its one reader, cat, made on the first SPAWN
  [ -z "$py_dir" ] || return 0
  py_dir=$(mktemp -d "${TMPDIR:-/tmp}/fnworker-py.XXXXXX") || { py_dir=; return 1; }
  if ! mkfifo "$py_dir/events"; then
    rm -rf "$py_dir"; py_dir=; return 1
  fi
  cat <"$py_dir/events" >&3 &
  exec 4<>"$py_dir/events"
}
py_event() {  # (helpers) a line for the pool; nothing once the launcher is gone
  kill -0 "$py_main" 2>/dev/null || return 0
  printf '%s\n' "$1" 2>/dev/null 1<>"$py_dir/events" || true
}
py_output() {  # N PID < the child's output
  local LC_ALL=C line
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line:0:4000}  # bytes (LC_ALL=C): "C <n> <line>" stays one atomic write
    printf 'python[%s]: %s\n' "$2" "$line"
    py_event "C $1 $line"
  done
}
py_supervise() {  # N ID ENDPOINT, in a background subshell without fds 3 and 4
  set +e
  local n=$1 out="$py_dir/out.$1" child= reader= killer= stopping= trapped= code timer
  trap 'trapped=1; py_stop' TERM
  py_stop() {
    if [ -z "$child" ]; then stopping=1; return 0; fi
    kill -TERM "$child" 2>/dev/null
    if [ -z "$killer" ]; then
      ( sleep 5; kill -KILL "$child" 2>/dev/null ) &
      killer=$!
    fi
  }
  if ! mkfifo "$out"; then
    py_event "SPAWNFAIL $n cannot make a fifo in $py_dir"
    : >"$py_dir/done.$n"
    return 0
  fi
  set -- -m pyflink.fn_execution.beam.beam_boot --id="$2" --provision_endpoint="$3"
  [ -z "$py_semi" ] || set -- "$@" --semi_persist_dir="$py_semi"
  ( unset FNW_POOL_TOKEN; exec "$python" "$@" ) </dev/null >"$out" 2>&1 &
  child=$!
  py_event "SPAWNED $n $child"  # before its output: it cannot write until the reader opens $out
  py_output "$n" "$child" <"$out" &
  reader=$!
  echo "pyflink-udf-runner.sh: started PyFlink's Python worker for fnworker: $python $* (pid $child)" >&2
  [ -z "$stopping" ] || py_stop
  while :; do  # a TERM (KILL from the pool) interrupts wait: wait again
    trapped=
    wait "$child"
    code=$?
    [ -n "$trapped" ] || break
  done
  # its last lines, but no longer than 1 s after its end (a process it
  # left behind may hold the pipe)
  ( sleep 1; kill "$reader" 2>/dev/null ) &
  timer=$!
  while :; do
    trapped=
    wait "$reader"
    [ -n "$trapped" ] || break
  done
  kill "$timer" ${killer:+"$killer"} 2>/dev/null
  echo "pyflink-udf-runner.sh: PyFlink's Python worker (pid $child) ended with code $code" >&2
  : >"$py_dir/done.$n" 2>/dev/null
  py_event "CHILDEXIT $n $code"
}
py_refuse() {  # N REASON (main)
  printf 'SPAWNFAIL %s %s\n' "$1" "$2" >&4
  echo "pyflink-udf-runner.sh: did not start PyFlink's Python worker for fnworker: $2" >&2
}
py_running() {  # (main) the children that have not ended, in py_kids_n
  local n live= IFS=' '
  for n in $py_kids_n; do
    [ -e "$py_dir/done.$n" ] || live="$live $n"
  done
  py_kids_n=$live
}
py_spawn() {  # the rest of a SPAWN line: <n> <relay id> <host:port>
  local rest=$1 n id ep extra host port
  n=${rest%% *}; rest=${rest#"$n"}; rest=${rest# }
  id=${rest%% *}; rest=${rest#"$id"}; rest=${rest# }
  ep=${rest%% *}; extra=${rest#"$ep"}
  case $n in
    ''|0*|*[!0-9]*) echo "pyflink-udf-runner.sh: ignored a malformed SPAWN from the fnworker pool" >&2; return 0 ;;
  esac
  if [ ${#n} -gt 10 ] || [ "$n" -gt 4294967295 ]; then
    echo "pyflink-udf-runner.sh: ignored a malformed SPAWN from the fnworker pool" >&2; return 0
  fi
  py_events || { echo "pyflink-udf-runner.sh: cannot make a fifo under ${TMPDIR:-/tmp}; PyFlink's Python worker cannot start" >&2; return 0; }
  host=${ep%:*} port=${ep##*:}
  case $id in
    ''|*[!A-Za-z0-9._-]*) py_refuse "$n" "the relay id is not [A-Za-z0-9._-]"; return 0 ;;
  esac
  case $host in
    127.0.0.1|localhost|::1|'[::1]') ;;
    *) py_refuse "$n" "the endpoint is not <host>:<port> on loopback (127.0.0.1, localhost or ::1)"; return 0 ;;
  esac
  case $port in
    ''|0*|*[!0-9]*) py_refuse "$n" "the endpoint's port is not a number from 1 to 65535"; return 0 ;;
  esac
  if [ -n "$extra" ] || [ ${#id} -gt 256 ] || [ ${#port} -gt 5 ] || [ "$port" -gt 65535 ]; then
    py_refuse "$n" "malformed SPAWN line"; return 0
  fi
  case " $py_kids_n " in *" $n "*) py_refuse "$n" "child $n was started already"; return 0 ;; esac
  py_running
  set -- $py_kids_n
  if [ $# -ge 2 ]; then
    py_refuse "$n" "2 Python workers of this fnworker still run (at most 2)"; return 0
  fi
  py_supervise "$n" "$id" "$ep" 3>&- 4>&- &
  eval "py_kid_$n=\$!"
  py_kids_n="$py_kids_n $n"
}
py_kill() {  # N (main): the supervisor stops the child
  local pid
  case $1 in ''|*[!0-9]*) return 0 ;; esac
  case " $py_kids_n " in *" $1 "*) ;; *) return 0 ;; esac
  [ ! -e "$py_dir/done.$1" ] || return 0
  eval "pid=\${py_kid_$1:-}"
  [ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null || true
}
py_stop_all() {  # (main, on its way out) each supervisor escalates to SIGKILL itself
  local n IFS=' '  # a trap that interrupts `IFS= read` runs with that IFS
  for n in $py_kids_n; do py_kill "$n"; done
  [ -z "$py_dir" ] || rm -rf "$py_dir"
}

pool_connect() {  # VERSION: connects, sends the request; the first reply line in $reply
  { exec 3<>"/dev/tcp/$host/$port"; } 2>/dev/null ||
    pool_fail "cannot reach the fnworker pool at $addr (FNW_POOL_ADDRESS): is the fnworker sidecar running \`fnworker pool --listen $addr\`?"
  printf 'FNWPOOL %s START\nid=%s\nprovision_endpoint=%s\n%s%s\n' "$1" "$id" "$ep" "$token" "$args" >&3 ||
    pool_fail "the fnworker pool at $addr closed the connection"
  IFS= read -r reply <&3 || reply=
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
      --semi_persist_dir=*) py_semi=${1#*=}; args="${args}arg=$1
" ;;
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
  python=${python:-python}
  trap 'py_stop_all' EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
  pool_connect 2
  case $reply in
    "ERROR unsupported protocol version 2"*)  # a pool of an older release
      exec 3>&-
      echo "pyflink-udf-runner.sh: the fnworker pool at $addr speaks launcher protocol version 1 only: a job's Python functions that are not fnworker operations cannot run" >&2
      pool_connect 1 ;;
  esac
  case $reply in
    "OK "*) ;;
    "ERROR "*) pool_fail "the fnworker pool at $addr did not start worker '$id': ${reply#ERROR }" ;;
    *) pool_fail "the fnworker pool at $addr did not answer the request for worker '$id'" ;;
  esac
  code=
  while IFS= read -r line <&3; do
    case $line in
      "O "*) printf '%s\n' "${line#O }" ;;
      "E "*) printf '%s\n' "${line#E }" >&2 ;;
      "SPAWN "*) py_spawn "${line#SPAWN }" ;;
      "KILL "*) py_kill "${line#KILL }" ;;
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
