#!/bin/sh
# tests/shell/test_pool.sh — `fnworker pool` with the Flink launcher script
# (scripts/pyflink-udf-runner.sh with FNW_POOL_ADDRESS) and a stand-in
# worker: the worker's stdout and stderr reach the boot log and its exit code
# is the launcher's; killing the launcher stops the worker within 2 s; a full
# pool and an unreachable pool fail the launch with the reason on stderr; an
# unsupported protocol version is refused; /healthz and /metrics answer; on
# SIGTERM the pool stops accepting, lets running workers finish within the
# grace period, stops the rest and exits 0. Run by `make check` (after
# `make all`); prints PASS/FAIL lines.
#   sh tests/shell/test_pool.sh [build dir]   (or FNW_BUILD=dir; default build)
set -u
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
BUILD=${1:-${FNW_BUILD:-build}}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
FNW="$BUILD/fnworker"
SCRIPT="$ROOT/scripts/pyflink-udf-runner.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/fnw-pool-test.XXXXXX")
POOLS=""
. "$ROOT/tests/shell/pool_lib.sh"

if [ ! -x "$FNW" ]; then echo "FAIL setup: $FNW not built (make all)"; exit 1; fi
if ! command -v bash >/dev/null 2>&1; then echo "SKIP test_pool.sh: no bash"; exit 0; fi

# The stand-in worker: prints its arguments on stdout and stderr, writes its
# pid to --fake_mark, then sleeps --fake_sleep seconds (as `sleep`, so a
# SIGTERM ends it at once) or exits with --fake_exit.
mkdir -p "$T/bin" "$T/boot"
cat >"$T/bin/fake-worker" <<'FAKE'
#!/bin/sh
sleep_s=0 code=0 mark=
for a; do
  case $a in
    --fake_sleep=*) sleep_s=${a#*=} ;;
    --fake_exit=*) code=${a#*=} ;;
    --fake_mark=*) mark=${a#*=} ;;
  esac
done
echo "fake worker stdout $*"
echo "fake worker stderr $*" >&2
[ -z "$mark" ] || echo $$ >"$mark"
[ "$sleep_s" = 0 ] || exec sleep "$sleep_s"
exit "$code"
FAKE
chmod +x "$T/bin/fake-worker"
LOG="$T/boot/flink-python-udf-boot.log"


# start_pool NAME [flags...]: a pool running the fake worker.
start_pool() {
  name=$1; shift
  pool_start "$name" --worker-bin "$T/bin/fake-worker" --start-timeout 0 \
    --allow-worker-flag=--fake_sleep --allow-worker-flag=--fake_exit --allow-worker-flag=--fake_mark "$@"
}

launch() {  # launch ID [args...]: the launcher against the pool at $ADDR
  id=$1; shift
  env BOOT_LOG_DIR="$T/boot" FNW_POOL_ADDRESS="$ADDR" \
    sh "$SCRIPT" --id="$id" --provision_endpoint=localhost:1 "$@" >"$T/out.$id" 2>"$T/err.$id"
}

http_get() {  # http_get ADDR PATH: prints status line and body
  if command -v curl >/dev/null 2>&1; then
    curl -s -i "http://$1$2"
  else
    bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1##*:}" && printf "GET %s HTTP/1.0\r\n\r\n" "$2" >&3 && cat <&3' _ "$1" "$2"
  fi
}

alive() { kill -0 "$1" 2>/dev/null; }
dead() { ! kill -0 "$1" 2>/dev/null; }

# ---- one pool for the launch cases ----------------------------------------------
if start_pool main --max-workers 2; then
  rm -f "$LOG"
  launch w1 --fake_exit=7 --semi_persist_dir=/tmp
  code=$?
  if [ $code -ne 7 ]; then
    fail exit_code_returned "launcher exit code $code, expected the worker's 7"
  else
    pass exit_code_returned
  fi
  if ! wait_until 100 grep -q "fake worker stdout --id=w1 --provision_endpoint=localhost:1 --fake_exit=7 --semi_persist_dir=/tmp" "$LOG" ||
     ! wait_until 100 grep -q "fake worker stderr --id=w1" "$LOG"; then
    fail output_in_boot_log "the worker's stdout and stderr are not both in the boot log"
    sed 's/^/    | /' "$LOG" 2>/dev/null
  else
    pass output_in_boot_log
  fi

  # Flink kills the launcher: the worker stops within 2 s.
  env FNW_POOL_ADDRESS="$ADDR" sh "$SCRIPT" --id=w2 --provision_endpoint=localhost:1 \
    --fake_sleep=30 --fake_mark="$T/w2.pid" >/dev/null 2>&1 &
  lpid=$!
  if ! wait_until 200 test -s "$T/w2.pid"; then
    fail launcher_killed_stops_worker "the worker did not start"
  else
    wpid=$(cat "$T/w2.pid")
    kill -TERM "$lpid"
    if ! wait_until 40 dead "$wpid"; then
      fail launcher_killed_stops_worker "worker $wpid still runs 2 s after its launcher was killed"
    else
      pass launcher_killed_stops_worker
    fi
  fi
  wait "$lpid" 2>/dev/null

  # Two long workers fill the pool (--max-workers 2); a third launch fails.
  for n in 1 2; do
    env FNW_POOL_ADDRESS="$ADDR" sh "$SCRIPT" --id=full$n --provision_endpoint=localhost:1 \
      --fake_sleep=30 --fake_mark="$T/full$n.pid" >/dev/null 2>&1 &
    eval "fpid$n=\$!"
  done
  if wait_until 200 test -s "$T/full1.pid" && wait_until 200 test -s "$T/full2.pid"; then
    launch w3
    code=$?
    # the launcher's stderr goes to the boot log, which Flink shows
    if [ $code -eq 0 ] || ! wait_until 100 grep -q "the pool is full: 2 workers are running (--max-workers 2)" "$LOG"; then
      fail pool_full_clear_error "exit $code, boot log: $(cat "$LOG")"
    else
      pass pool_full_clear_error
    fi
  else
    fail pool_full_clear_error "the two long workers did not start"
  fi
  out=$(http_get "$HADDR" /metrics)
  if ! printf '%s' "$out" | grep -q "^fnworker_pool_workers_running 2" ||
     ! printf '%s' "$out" | grep -q "^fnworker_pool_requests_rejected_full_total 1" ||
     ! printf '%s' "$out" | grep -q '^fnworker_pool_worker_rss_bytes{worker_id="full1",pid="[0-9]*"} [1-9]'; then
    fail metrics_answer "unexpected /metrics:"; printf '%s\n' "$out" | sed 's/^/    | /'
  else
    pass metrics_answer
  fi
  out=$(http_get "$HADDR" /healthz)
  case $out in
    *"200 OK"*ok*) pass healthz_answers ;;
    *) fail healthz_answers "unexpected /healthz: $out" ;;
  esac
  kill -TERM "$fpid1" "$fpid2"
  wait "$fpid1" "$fpid2" 2>/dev/null

  # A request in a version this pool does not speak.
  reply=$(bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1##*:}" && printf "FNWPOOL 9 START\nid=x\n\n" >&3 && cat <&3' _ "$ADDR")
  case $reply in
    "ERROR unsupported protocol version 9"*) pass unknown_version_refused ;;
    *) fail unknown_version_refused "reply: $reply" ;;
  esac
  kill -TERM "$POOL_PID"
  wait "$POOL_PID"
fi

# ---- an unreachable pool ------------------------------------------------------------
env FNW_POOL_ADDRESS=127.0.0.1:1 sh "$SCRIPT" --id=w4 --provision_endpoint=localhost:1 >"$T/out.w4" 2>"$T/err.w4"
code=$?
if [ $code -eq 0 ] || ! grep -q "cannot reach the fnworker pool at 127.0.0.1:1" "$T/err.w4"; then
  fail pool_unreachable_clear_error "exit $code, stderr: $(cat "$T/err.w4")"
else
  pass pool_unreachable_clear_error
fi

# ---- SIGTERM: drain ---------------------------------------------------------------------
# A worker that ends within the grace period finishes; meanwhile the pool
# takes no new launch and /healthz says draining; then the pool exits 0.
if start_pool drain --grace-period 25; then
  env FNW_POOL_ADDRESS="$ADDR" sh "$SCRIPT" --id=d1 --provision_endpoint=localhost:1 \
    --fake_sleep=1 --fake_mark="$T/d1.pid" >/dev/null 2>&1 &
  lpid=$!
  if wait_until 200 test -s "$T/d1.pid"; then
    kill -TERM "$POOL_PID"
    wait_until 100 grep -q "not accepting new workers" "$T/drain.pool.log"
    launch d2
    c2=$?
    health=$(http_get "$HADDR" /healthz)
    wait "$lpid"
    c1=$?
    wait "$POOL_PID"
    pc=$?
    if [ $c1 -ne 0 ]; then
      fail sigterm_drains "the running worker's launcher exited $c1, expected 0 (it should finish)"
    elif [ $c2 -eq 0 ]; then
      fail sigterm_drains "a launch after SIGTERM succeeded"
    elif [ $pc -ne 0 ]; then
      fail sigterm_drains "the pool exited $pc"
    else
      case $health in
        *503*draining*) pass sigterm_drains ;;
        *) fail sigterm_drains "/healthz while draining: $health" ;;
      esac
    fi
  else
    fail sigterm_drains "the worker did not start"
  fi
fi
# A worker still running when the grace period ends is stopped; exit 0.
if start_pool grace --grace-period 0.3; then
  env FNW_POOL_ADDRESS="$ADDR" sh "$SCRIPT" --id=g1 --provision_endpoint=localhost:1 \
    --fake_sleep=30 --fake_mark="$T/g1.pid" >/dev/null 2>&1 &
  lpid=$!
  if wait_until 200 test -s "$T/g1.pid"; then
    kill -TERM "$POOL_PID"
    wait "$lpid"
    c1=$?
    wait "$POOL_PID"
    pc=$?
    if [ $c1 -ne 143 ] || [ $pc -ne 0 ]; then
      fail grace_period_stops_workers "launcher exit $c1 (expected 143, SIGTERM), pool exit $pc (expected 0)"
    else
      pass grace_period_stops_workers
    fi
  else
    fail grace_period_stops_workers "the worker did not start"
  fi
fi

[ $failed -eq 0 ] && echo "pool: all passed" || echo "pool: FAILED"
exit $failed
