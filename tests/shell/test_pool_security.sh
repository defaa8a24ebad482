#!/bin/sh
# tests/shell/test_pool_security.sh — the launcher port and the HTTP port of
# `fnworker pool` against hostile clients (issue 19), through the real
# binaries:
# - a start request may carry only allowed worker flags: --plugins-dir (a
#   directory whose plugin has a constructor that leaves a mark), --id,
#   every *_endpoint, --connect-timeout and unknown flags are refused with
#   an ERROR line, and nothing is loaded;
# - with a token (FNW_POOL_TOKEN_FILE), a request without it or with a wrong
#   one is refused; the launcher script sends it; the worker does not
#   inherit it and the pool never prints it;
# - the worker refuses a plugins directory or plugin file that others could
#   have written (group/other-writable, or owned by another user);
# - a worker that does not connect to its runner within --start-timeout is
#   stopped and its slot freed; one that does connect keeps running;
# - connections still sending their request are capped; out of file
#   descriptors, the pool neither spins nor floods its log, and recovers;
# - /healthz stays answered while 70 slow clients dribble headers, a request
#   has a total deadline, and /debug/state signals the workers at most once
#   per interval.
# Run by `make check` (script-tests); prints PASS/FAIL lines.
#   sh tests/shell/test_pool_security.sh [build dir]   (or FNW_BUILD=dir)
set -u
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
BUILD=${1:-${FNW_BUILD:-build}}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
FNW="$BUILD/fnworker"
SCRIPT="$ROOT/scripts/pyflink-udf-runner.sh"
CLIENTS="$ROOT/tests/shell/pool_clients.py"
PY=${PYTHON:-python3}
T=$(mktemp -d "${TMPDIR:-/tmp}/fnw-pool-sec.XXXXXX")
chmod 700 "$T"
POOLS=""
. "$ROOT/tests/shell/pool_lib.sh"

if [ ! -x "$FNW" ]; then echo "FAIL setup: $FNW not built (make all)"; exit 1; fi
if ! command -v bash >/dev/null 2>&1; then echo "SKIP test_pool_security.sh: no bash"; exit 0; fi
CC=${CC:-cc}


# start_pool NAME [flags...]: the real worker unless --worker-bin is given.
start_pool() {
  pool_start "$@"
}
# stop_pool: SIGTERM; the pool must exit 0 with no sanitizer report (build/asan)
stop_pool() {
  kill -TERM "$POOL_PID" 2>/dev/null
  wait "$POOL_PID" 2>/dev/null
  prc=$?
  if grep -q "Sanitizer\|runtime error:" "$plog"; then
    fail "sanitizer_${plog##*/}" "$(grep -m 5 "Sanitizer\|runtime error:\|^    #[0-9]" "$plog")"
  elif [ $prc -ne 0 ]; then
    fail "pool_exit_${plog##*/}" "the pool exited $prc after SIGTERM"
  fi
}

# request ADDR LINES...: sends one raw request (the lines, then the empty
# line) and prints what the pool answers until it closes (at most 5 s).
request() {
  bash -c 'a=$1; shift; exec 3<>"/dev/tcp/${a%:*}/${a##*:}" || exit 1
    { printf "%s\n" "$@"; printf "\n"; } >&3
    timeout 5 head -n 1 <&3' _ "$@"
}

http_get() {  # http_get ADDR PATH: status line and body
  curl -s -i --max-time 5 "http://$1$2"
}

# A plugin whose constructor leaves a mark: it ran code in the worker
# (before any entry-point check).
mkdir -p "$T/evil"
cat >"$T/evil.c" <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void)
{
    const char *p = getenv("FNW_TEST_MARK");
    int fd = open(p ? p : "/dev/null", O_WRONLY | O_CREAT, 0600);
    if (fd >= 0)
        close(fd);
}
C
if ! "$CC" -shared -fPIC -o "$T/evil/evil.so" "$T/evil.c" 2>"$T/cc.err"; then
  echo "FAIL setup: cannot build the test plugin: $(cat "$T/cc.err")"; exit 1
fi
chmod 755 "$T/evil"
chmod 644 "$T/evil/evil.so"
MARK="$T/mark"
export FNW_TEST_MARK="$MARK"

# ---- 1: the worker's flags are the pool's ----------------------------------------------
if start_pool flags --max-workers 2; then
  ok=1
  for arg in "--plugins-dir=$T/evil" "--id=other" "--control_endpoint=127.0.0.1:1" \
             "--logging_endpoint=127.0.0.1:1" "--provision_endpoint=127.0.0.1:2" \
             "--connect-timeout=100000" "--flush-bytes=1" "--help" "--log-level"; do
    rm -f "$MARK"
    reply=$(request "$ADDR" "FNWPOOL 1 START" "id=f1" "provision_endpoint=127.0.0.1:1" "arg=$arg")
    case $reply in
      "ERROR arg ${arg%%=*}"*" is refused"*) ;;
      *) fail refuses_worker_flags "arg=$arg: the pool answered: $(printf '%s' "$reply" | head -3)"; ok=0 ;;
    esac
    sleep 0.2
    if [ -e "$MARK" ]; then fail refuses_worker_flags "arg=$arg: the plugin's constructor ran"; ok=0; fi
  done
  [ $ok -eq 1 ] && pass refuses_worker_flags

  # The launcher script shows the pool's reason (it goes to Flink's boot log).
  rm -f "$MARK"
  env FNW_POOL_ADDRESS="$ADDR" sh "$SCRIPT" --id=f2 --provision_endpoint=127.0.0.1:1 \
    --plugins-dir="$T/evil" >"$T/f2.out" 2>"$T/f2.err"
  code=$?
  if [ $code -eq 0 ] || ! grep -q "did not start worker 'f2': arg --plugins-dir is refused" "$T/f2.err" ||
     [ -e "$MARK" ]; then
    fail launcher_shows_refused_flag "exit $code, stderr: $(cat "$T/f2.err")"
  else
    pass launcher_shows_refused_flag
  fi

  # The flags Flink passes still go through (here to a worker that cannot
  # reach its runner: it starts, and fails on its own).
  reply=$(request "$ADDR" "FNWPOOL 1 START" "id=f3" "provision_endpoint=127.0.0.1:1" \
            "arg=--semi_persist_dir=/tmp" "arg=--log-level=debug")
  case $reply in
    "OK "*) pass allowed_flags_pass ;;
    *) fail allowed_flags_pass "the pool answered: $(printf '%s' "$reply" | head -3)" ;;
  esac
  stop_pool
fi
if timeout 5 "$FNW" pool --listen 127.0.0.1:0 --http-listen off --allow-worker-flag=--plugins-dir \
     >/dev/null 2>"$T/allow.err"; then
  fail operator_cannot_allow_plugins_dir "the pool started"
elif ! grep -q "allow-worker-flag: --plugins-dir can never come from a launcher" "$T/allow.err"; then
  fail operator_cannot_allow_plugins_dir "$(cat "$T/allow.err")"
else
  pass operator_cannot_allow_plugins_dir
fi


# ---- 1: a token, when the operator gives one ----------------------------------------------
TOKEN=tok-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$TOKEN" >"$T/token"
chmod 600 "$T/token"
mkdir -p "$T/bin"
cat >"$T/bin/env-worker" <<'FAKE'
#!/bin/sh
echo "args: $*"
env | grep '^FNW_POOL_TOKEN' | sed 's/^/env: /'
echo "env: end"
FAKE
chmod +x "$T/bin/env-worker"
if FNW_POOL_TOKEN_FILE="$T/token" start_pool token --worker-bin "$T/bin/env-worker"; then
  ok=1
  reply=$(request "$ADDR" "FNWPOOL 1 START" "id=t1" "provision_endpoint=127.0.0.1:1")
  case $reply in
    "ERROR the pool asks for a token and the request has none"*) ;;
    *) fail token_required "without a token: $reply"; ok=0 ;;
  esac
  reply=$(request "$ADDR" "FNWPOOL 1 START" "id=t2" "provision_endpoint=127.0.0.1:1" "token=${TOKEN}x")
  case $reply in
    "ERROR the request's token is wrong"*) ;;
    *) fail token_required "with a wrong token: $reply"; ok=0 ;;
  esac
  reply=$(request "$ADDR" "FNWPOOL 1 START" "id=t3" "provision_endpoint=127.0.0.1:1" "token=tok")
  case $reply in
    "ERROR the request's token is wrong"*) ;;
    *) fail token_required "with a prefix of the token: $reply"; ok=0 ;;
  esac
  [ $ok -eq 1 ] && pass token_required
  env FNW_POOL_ADDRESS="$ADDR" FNW_POOL_TOKEN_FILE="$T/token" sh "$SCRIPT" --id=t4 \
    --provision_endpoint=127.0.0.1:1 >"$T/t4.out" 2>"$T/t4.err"
  code=$?
  if [ $code -ne 0 ] || ! grep -q "^args: --id=t4 --provision_endpoint=127.0.0.1:1 --relay-fd=4$" "$T/t4.out"; then
    fail launcher_sends_token "exit $code, out: $(cat "$T/t4.out") err: $(cat "$T/t4.err")"
  elif grep -q "^env: FNW_POOL_TOKEN" "$T/t4.out" || ! grep -q "^env: end" "$T/t4.out"; then
    fail worker_does_not_inherit_token "the worker's environment: $(cat "$T/t4.out")"
  else
    pass launcher_sends_token
    pass worker_does_not_inherit_token
  fi
  env FNW_POOL_ADDRESS="$ADDR" FNW_POOL_TOKEN=wrong-token-0123456789 sh "$SCRIPT" --id=t5 \
    --provision_endpoint=127.0.0.1:1 >"$T/t5.out" 2>"$T/t5.err"
  code=$?
  if [ $code -eq 0 ] || ! grep -q "did not start worker 't5': the request's token is wrong" "$T/t5.err"; then
    fail launcher_wrong_token_clear_error "exit $code, stderr: $(cat "$T/t5.err")"
  else
    pass launcher_wrong_token_clear_error
  fi
  stop_pool
  if grep -q "$TOKEN" "$T/token.pool.log"; then
    fail token_never_printed "the pool's log holds the token"
  else
    pass token_never_printed
  fi
fi
printf 'short\n' >"$T/short"
if FNW_POOL_TOKEN_FILE="$T/short" timeout 5 "$FNW" pool --listen 127.0.0.1:0 --http-listen off \
     >/dev/null 2>"$T/short.err"; then
  fail short_token_refused "the pool started with a 5-character token"
elif ! grep -q "shorter than 16 characters" "$T/short.err"; then
  fail short_token_refused "$(cat "$T/short.err")"
else
  pass short_token_refused
fi

# ---- 1: plugins others could have written are refused (both modes) ------------------------
# worker_plugins CASE DIR: runs the worker with --plugins-dir=DIR (it would
# then fail to reach its runner); sets WCODE and WERR.
worker_plugins() {
  rm -f "$MARK"
  timeout 10 "$FNW" --id=p --provision_endpoint=127.0.0.1:1 --connect-timeout=0.2 \
    --plugins-dir="$2" >/dev/null 2>"$T/$1.err"
  WCODE=$?
  WERR=$(cat "$T/$1.err")
}
# the test plugin runs its constructor when loaded from a safe directory
worker_plugins safe "$T/evil"
if [ ! -e "$MARK" ]; then
  fail plugin_loaded_from_safe_dir "the constructor did not run (exit $WCODE: $WERR)"
else
  pass plugin_loaded_from_safe_dir
fi
chmod 777 "$T/evil"
worker_plugins dir_writable "$T/evil"
if [ -e "$MARK" ] || [ $WCODE -ne 2 ] || ! printf '%s' "$WERR" | grep -q "plugins directory $T/evil is writable by every user: refused"; then
  fail plugins_dir_writable_refused "exit $WCODE, mark $( [ -e "$MARK" ] && echo made || echo none): $WERR"
else
  pass plugins_dir_writable_refused
fi
chmod 775 "$T/evil"
worker_plugins dir_group "$T/evil"
if [ -e "$MARK" ] || ! printf '%s' "$WERR" | grep -q "writable by its group: refused"; then
  fail plugins_dir_group_writable_refused "exit $WCODE: $WERR"
else
  pass plugins_dir_group_writable_refused
fi
chmod 755 "$T/evil"
chmod 666 "$T/evil/evil.so"
worker_plugins file_writable "$T/evil"
if [ -e "$MARK" ] || ! printf '%s' "$WERR" | grep -q "plugin $T/evil/evil.so is writable by every user: refused"; then
  fail plugin_file_writable_refused "exit $WCODE: $WERR"
else
  pass plugin_file_writable_refused
fi
chmod 644 "$T/evil/evil.so"
if [ "$(id -u)" = 0 ]; then
  chown 65534 "$T/evil/evil.so"
  worker_plugins file_owner "$T/evil"
  if [ -e "$MARK" ] || ! printf '%s' "$WERR" | grep -q "is owned by uid 65534, not by this worker's user"; then
    fail plugin_other_owner_refused "exit $WCODE: $WERR"
  else
    pass plugin_other_owner_refused
  fi
  chown 0 "$T/evil/evil.so"
fi

# ---- 10: a worker that never connects loses its slot ------------------------------------
# The real worker against a runner that is not there (it would retry for 60 s).
DEAD=127.0.0.1:1
if start_pool deadline --max-workers 1 --start-timeout 1; then
  start=$(date +%s)
  env FNW_POOL_ADDRESS="$ADDR" sh "$SCRIPT" --id=d1 --provision_endpoint=$DEAD \
    >"$T/d1.out" 2>"$T/d1.err"
  code=$?
  took=$(( $(date +%s) - start ))
  if [ $took -gt 5 ] || ! grep -q "worker d1 (pid [0-9]*) did not connect to its runner within 1 s of starting (--start-timeout); stopping it" "$T/d1.err"; then
    fail start_timeout_stops_worker "the launcher ended (exit $code) after $took s, stderr: $(tail -3 "$T/d1.err")"
  else
    pass start_timeout_stops_worker
  fi
  # the slot is free again: the next launch is not refused as "full"
  reply=$(request "$ADDR" "FNWPOOL 1 START" "id=d2" "provision_endpoint=$DEAD")
  case $reply in
    "OK "*) pass start_timeout_frees_slot ;;
    *) fail start_timeout_frees_slot "the next launch: $reply" ;;
  esac
  m=$(http_get "$HADDR" /metrics)
  if ! printf '%s' "$m" | grep -q '^fnworker_pool_workers_start_timeouts_total [12]'; then
    fail start_timeouts_counted "$(printf '%s' "$m" | grep start_timeouts)"
  else
    pass start_timeouts_counted
  fi
  stop_pool
fi
# A worker that says it connected (the line "connected" on its stats pipe,
# fd 3) keeps running past the deadline.
cat >"$T/bin/connecting-worker" <<'FAKE'
#!/bin/sh
echo connected >&3
sleep 2
echo "still running"
FAKE
chmod +x "$T/bin/connecting-worker"
if start_pool connected --start-timeout 1 --worker-bin "$T/bin/connecting-worker"; then
  env FNW_POOL_ADDRESS="$ADDR" sh "$SCRIPT" --id=c1 --provision_endpoint=$DEAD \
    >"$T/c1.out" 2>"$T/c1.err"
  code=$?
  if [ $code -ne 0 ] || ! grep -q "still running" "$T/c1.out"; then
    fail connected_worker_keeps_running "exit $code, out: $(cat "$T/c1.out"), err: $(cat "$T/c1.err")"
  else
    pass connected_worker_keeps_running
  fi
  stop_pool
fi

# ---- 8: connections still sending their request are capped -------------------------------
if start_pool cap; then
  out=$("$PY" "$CLIENTS" hold "$ADDR" 100 1.5 &
        sleep 0.7; http_get "$HADDR" /healthz | head -1 >"$T/cap.health"; wait)
  refused=$(printf '%s' "$out" | sed -n 's/.*refused=\([0-9]*\).*/\1/p')
  if [ "${refused:-0}" -lt 30 ] ||
     ! printf '%s' "$out" | grep -q "line=ERROR the pool has 64 connections waiting to send their request (at most 64); try again"; then
    fail pending_connections_capped "$out"
  elif ! grep -q " 200 " "$T/cap.health"; then
    fail pending_connections_capped "/healthz meanwhile: $(cat "$T/cap.health")"
  else
    pass pending_connections_capped
  fi
  n=$(grep -c "refused a launcher connection" "$T/cap.pool.log")
  if [ "$n" -ne 1 ]; then
    fail refusals_logged_once "$n log lines for $refused refusals"
  else
    pass refusals_logged_once
  fi
  stop_pool
fi

# ---- 8: out of file descriptors -----------------------------------------------------------
# cpu_ticks PID: user+system clock ticks the process used so far
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
plog="$T/emfile.pool.log"
sh -c 'ulimit -n 40 && exec "$@"' _ "$FNW" pool --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
  --worker-bin "$T/bin/connecting-worker" 2>"$plog" &
POOL_PID=$!
POOLS="$POOLS $POOL_PID"
if ! wait_until 200 grep -qs ready "$plog"; then
  fail emfile_no_spin "the pool did not start under ulimit -n 40: $(cat "$plog")"
else
  ADDR=$(sed -n 's/.*launcher endpoint on \([0-9.]*:[0-9]*\).*/\1/p' "$plog")
  before=$(cpu_ticks "$POOL_PID")
  "$PY" "$CLIENTS" hold "$ADDR" 60 3 >"$T/emfile.out"
  after=$(cpu_ticks "$POOL_PID")
  lines=$(grep -c "accept" "$plog")
  ticks=$((after - before))
  # 3 s of spinning would be ~300 ticks; a rested listener uses a few
  if [ "$ticks" -gt 50 ] || [ "$lines" -gt 3 ] || [ "$lines" -lt 1 ]; then
    fail emfile_no_spin "$ticks ticks of CPU in 3 s, $lines accept lines: $(grep accept "$plog" | head -3)"
  else
    pass emfile_no_spin; echo "     ($ticks CPU ticks, $lines accept log line(s) in 3 s with 60 clients over the limit)"
  fi
  sleep 1.2
  env FNW_POOL_ADDRESS="$ADDR" sh "$SCRIPT" --id=e1 --provision_endpoint=$DEAD \
    >"$T/e1.out" 2>"$T/e1.err"
  code=$?
  if [ $code -ne 0 ] || ! grep -q "still running" "$T/e1.out"; then
    fail emfile_recovers "a launch after the clients left: exit $code, $(cat "$T/e1.err")"
  else
    pass emfile_recovers
  fi
  stop_pool
fi

# ---- 7: /healthz under slow clients -------------------------------------------------------
if start_pool starve; then
  out=$("$PY" "$CLIENTS" starve "$HADDR" 70 9 127.0.0.2)
  ok=$(printf '%s' "$out" | sed -n 's/.*probes=\([0-9]*\)\/.*/\1/p')
  all=$(printf '%s' "$out" | sed -n 's/.*probes=[0-9]*\/\([0-9]*\).*/\1/p')
  cut=$(printf '%s' "$out" | sed -n 's/.*cut=\([0-9]*\).*/\1/p')
  longest=$(printf '%s' "$out" | sed -n 's/.*longest=\([0-9]*\).*/\1/p')
  if [ -z "$ok" ] || [ "$ok" -ne "$all" ] || [ "$all" -lt 5 ]; then
    fail healthz_not_starved "$out"
  else
    pass healthz_not_starved; echo "     (70 slow clients from 127.0.0.2: $out)"
  fi
  # a request that never ends is cut by its deadline (5 s), however often it sends
  if [ "${cut:-0}" -lt 1 ] || [ "${longest:-99}" -gt 8 ]; then
    fail slow_request_deadline "$out"
  else
    pass slow_request_deadline
  fi
  stop_pool
fi

# ---- 13: /debug/state signals the workers at most once per interval ------------------------
cat >"$T/bin/dump-worker" <<'FAKE'
#!/bin/bash
echo connected >&3
trap 'echo "state dump"' QUIT
for i in $(seq 1 100); do sleep 0.1; done
FAKE
chmod +x "$T/bin/dump-worker"
if start_pool dump --worker-bin "$T/bin/dump-worker"; then
  env FNW_POOL_ADDRESS="$ADDR" sh "$SCRIPT" --id=q1 --provision_endpoint=$DEAD \
    >"$T/q1.out" 2>"$T/q1.err" &
  lpid=$!
  sleep 0.5
  codes=""
  for i in $(seq 1 20); do
    codes="$codes $(curl -s -o /dev/null -w '%{http_code}' "http://$HADDR/debug/state")"
  done
  sleep 0.5
  kill -TERM "$lpid" 2>/dev/null; wait "$lpid" 2>/dev/null
  dumps=$(grep -c "state dump" "$T/q1.out")
  n200=$(printf '%s\n' $codes | grep -c '^200$')
  n429=$(printf '%s\n' $codes | grep -c '^429$')
  if [ "$dumps" -ne 1 ] || [ "$n200" -ne 1 ] || [ "$n429" -ne 19 ]; then
    fail debug_state_rate_limited "$dumps dumps, answers:$codes"
  else
    pass debug_state_rate_limited
  fi
  body=$(curl -s "http://$HADDR/debug/state")
  case $body in
    *"the next one is possible in"*) pass debug_state_says_when ;;
    *) fail debug_state_says_when "$body" ;;
  esac
  stop_pool
fi

[ $failed -eq 0 ] && echo "pool security: all passed" || echo "pool security: FAILED"
exit $failed
