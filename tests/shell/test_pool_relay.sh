#!/bin/sh
# tests/shell/test_pool_relay.sh — launcher protocol version 2: PyFlink's
# Python worker for a pool-mode worker, started by the launcher script in
# "the TaskManager's container" (docs/sidecar.md, "Python functions in pool
# mode"). The real `fnworker pool` and the real launcher
# (scripts/pyflink-udf-runner.sh with FNW_POOL_ADDRESS), a stand-in worker
# that speaks the worker's side on its --relay-fd socket as
# worker/relay_child.c does (SPAWN, KILL; it prints every line it gets), and
# a fake `python` (a script that prints its argv, working directory and
# environment, then exits or sleeps as its relay id says). Checks: SPAWN
# runs $python with the argv of Flink's runner script in the launcher's
# environment and working directory (and without the pool token); its output
# reaches the boot log (python[<pid>]: ...) and the worker (C lines); SPAWNED
# and CHILDEXIT with the exit code reach the worker; KILL stops a child
# (SIGTERM) and one that ignores SIGTERM (SIGKILL 5 s later); the pool
# refuses a SPAWN for an endpoint off loopback (SPAWNFAIL) and so does the
# launcher for ids the pool would pass, when it is asked directly; a
# version-1 request starts the worker with --relay=off and says so in the
# boot log; against a pool that speaks only version 1 the launcher asks
# again in version 1; killing the launcher (SIGTERM) stops its Python worker and the
# worker, and so does SIGKILL for the worker. Prints PASS/FAIL lines.
#   sh tests/shell/test_pool_relay.sh [build dir]   (or FNW_BUILD=dir; default build)
set -u
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
BUILD=${1:-${FNW_BUILD:-build}}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
FNW="$BUILD/fnworker"
SCRIPT="$ROOT/scripts/pyflink-udf-runner.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/fnw-pool-relay.XXXXXX")
POOLS=""
. "$ROOT/tests/shell/pool_lib.sh"

if [ ! -x "$FNW" ]; then echo "FAIL setup: $FNW not built (make all)"; exit 1; fi
if ! command -v bash >/dev/null 2>&1; then echo "SKIP test_pool_relay.sh: no bash"; exit 0; fi
mkdir -p "$T/bin" "$T/boot" "$T/wd"

# The fake python: its relay id says what it does: exit<N> exits N,
# sleep sleeps, stubborn ignores SIGTERM and sleeps. It writes its pid to
# $T/py.<id>.pid (the test's eyes in "the TaskManager").
cat >"$T/bin/fake-python" <<'FAKE'
#!/bin/bash
id=
for a; do case $a in --id=*) id=${a#--id=} ;; esac; done
echo "fake python argv: $*"
echo "fake python cwd: $PWD"
echo "fake python env: FNW_TEST_MARK=${FNW_TEST_MARK:-unset} token=${FNW_POOL_TOKEN:-unset}"
echo "fake python stderr line" >&2
echo $$ >"$FNW_TEST_DIR/py.$id.pid"
case $id in
  exit*) n=${id#exit}; exit "${n%%-*}" ;;
  stubborn*) trap '' TERM; echo "ignoring SIGTERM"; while :; do sleep 0.1; done ;;
  sleep*) exec sleep 60 ;;
esac
FAKE
chmod +x "$T/bin/fake-python"

# The stand-in worker: runs the script in $FNW_TEST_DIR/worker.script
# (its name in --fake_plan) line by line: "send LINE" writes LINE on the
# relay socket, "expect PREFIX" reads lines (printing each, "got: LINE")
# until one starts with PREFIX; then it exits 0. Without --relay-fd it
# prints its arguments and exits.
cat >"$T/bin/fake-worker" <<'FAKE'
#!/bin/bash
fd= plan=
for a; do
  case $a in
    --relay-fd=*) fd=${a#--relay-fd=} ;;
    --fake_plan=*) plan=${a#--fake_plan=} ;;
  esac
done
echo "worker argv: $*"
[ -z "$plan" ] || echo $$ >"$FNW_TEST_DIR/worker.$plan.pid"
[ -n "$fd" ] && [ -n "$plan" ] || exit 0
while IFS= read -r step; do
  case $step in
    "send "*) printf '%s\n' "${step#send }" >&"$fd" ;;
    "expect "*)
      want=${step#expect }
      while :; do
        if ! IFS= read -r -t 30 line <&"$fd"; then echo "worker: no '$want' within 30 s"; exit 3; fi
        echo "got: $line"
        case $line in "$want"*) break ;; esac
      done ;;
    "sleep "*) sleep "${step#sleep }" & sp=$!; trap 'kill $sp; exit 143' TERM; wait $sp ;;
  esac
done <"$FNW_TEST_DIR/$plan"
echo "worker: plan $plan done"
FAKE
chmod +x "$T/bin/fake-worker"
export FNW_TEST_DIR="$T"
LOG="$T/boot/flink-python-udf-boot.log"

# launch PLAN [env...]: the launcher for a worker running PLAN
launch() {
  plan=$1; shift
  env BOOT_LOG_DIR="$T/boot" FNW_POOL_ADDRESS="$ADDR" python="$T/bin/fake-python" \
    _PYTHON_WORKING_DIR="$T/wd" FNW_TEST_MARK=from-flink "$@" \
    bash "$SCRIPT" --id="w-$plan" --provision_endpoint=localhost:1 --fake_plan="$plan" \
    --semi_persist_dir=/tmp/semi >"$T/out.$plan" 2>"$T/err.$plan"
}
show_log() { sed 's/^/    | /' "$LOG"; }
alive() { kill -0 "$1" 2>/dev/null; }
dead() { ! kill -0 "$1" 2>/dev/null; }

if ! pool_start relay --worker-bin "$T/bin/fake-worker" --start-timeout 0 \
    --allow-worker-flag=--fake_plan; then
  exit 1
fi

# ---- SPAWN: argv, environment, output, exit code ---------------------------------
cat >"$T/plan1" <<'EOF'
send SPAWN 1 exit3-relay.id_1 127.0.0.1:40123
expect SPAWNED 1
expect CHILDEXIT 1
EOF
launch plan1 FNW_POOL_TOKEN=should-not-reach-python
code=$?
pypid=$(cat "$T/py.exit3-relay.id_1.pid" 2>/dev/null)
if [ $code -ne 0 ] || ! grep -q "worker: plan plan1 done" "$LOG"; then
  fail spawn_runs_python "launcher exit $code"; show_log
else
  pass spawn_runs_python
fi
if grep -qx "got: C 1 fake python argv: -m pyflink.fn_execution.beam.beam_boot --id=exit3-relay.id_1 --provision_endpoint=127.0.0.1:40123 --semi_persist_dir=/tmp/semi" "$LOG" &&
   grep -qx "got: C 1 fake python cwd: $T/wd" "$LOG" &&
   grep -qx "got: C 1 fake python env: FNW_TEST_MARK=from-flink token=unset" "$LOG"; then
  pass python_argv_env_cwd
else
  fail python_argv_env_cwd "the fake python's argv, cwd or environment is not as Flink's runner would give it"; show_log
fi
if [ -n "$pypid" ] && grep -qx "got: SPAWNED 1 $pypid" "$LOG" && grep -qx "got: CHILDEXIT 1 3" "$LOG" &&
   [ "$(grep '^got: ' "$LOG" | head -1)" = "got: SPAWNED 1 $pypid" ]; then
  pass spawned_and_childexit_reach_worker
else
  fail spawned_and_childexit_reach_worker "expected SPAWNED 1 $pypid first, and CHILDEXIT 1 3"; show_log
fi
# the child's lines in the boot log (stdout and stderr), and to the worker,
# all of them before CHILDEXIT
if grep -qx "python\[$pypid\]: fake python stderr line" "$LOG" &&
   grep -qx "got: C 1 fake python stderr line" "$LOG" &&
   [ "$(grep -n '^got: C 1 fake python stderr line' "$LOG" | cut -d: -f1)" -lt "$(grep -n '^got: CHILDEXIT 1' "$LOG" | cut -d: -f1)" ]; then
  pass output_to_boot_log_and_worker
else
  fail output_to_boot_log_and_worker "python[$pypid]: lines or C lines missing, or after CHILDEXIT"; show_log
fi

# ---- KILL: SIGTERM, and SIGKILL 5 s later for a child that ignores it ----------
cat >"$T/plan2" <<'EOF'
send SPAWN 1 sleep-a 127.0.0.1:40123
expect SPAWNED 1
send KILL 1
expect CHILDEXIT 1
send SPAWN 2 stubborn-b localhost:40123
expect C 2 ignoring SIGTERM
send KILL 2
expect CHILDEXIT 2
EOF
start=$(date +%s)
launch plan2
code=$?
took=$(( $(date +%s) - start ))
if [ $code -eq 0 ] && grep -qx "got: CHILDEXIT 1 143" "$LOG" && grep -qx "got: CHILDEXIT 2 137" "$LOG" &&
   [ $took -ge 4 ] && [ $took -le 12 ]; then
  pass kill_stops_python
else
  fail kill_stops_python "launcher exit $code after $took s; expected CHILDEXIT 1 143 (SIGTERM) and CHILDEXIT 2 137 (SIGKILL after 5 s)"; show_log
fi

# ---- what the pool refuses ---------------------------------------------------------
cat >"$T/plan3" <<'EOF'
send SPAWN 1 exit0 10.0.0.1:80
expect SPAWNFAIL 1
send SPAWN 2 a;touch${IFS}/tmp/x 127.0.0.1:80
expect SPAWNFAIL 2
send SPAWN 3 exit0-ok 127.0.0.1:80
expect CHILDEXIT 3
EOF
launch plan3
code=$?
if [ $code -eq 0 ] && grep -q "got: SPAWNFAIL 1 the fnworker pool refused it: SPAWN 1: the endpoint '10.0.0.1:80' is not <host>:<port> on loopback" "$LOG" &&
   grep -q "got: SPAWNFAIL 2 the fnworker pool refused it: SPAWN 2: the relay id holds a byte other than" "$LOG" &&
   grep -qx "got: CHILDEXIT 3 0" "$LOG" && [ ! -e "$T/py.exit0.pid" ]; then
  pass pool_refuses_bad_spawn
else
  fail pool_refuses_bad_spawn "launcher exit $code"; show_log
fi

# ---- the launcher checks SPAWN itself (a pool that let it through) ----------------
# A stand-in pool (python3) that answers OK, sends bad SPAWN lines and
# keeps what comes back.
cat >"$T/fake-pool.py" <<'FAKE'
import socket, sys
d = sys.argv[1]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
open(d + "/fake-pool.port", "w").write(str(s.getsockname()[1]))
c, _ = s.accept()
c.settimeout(10)
f = c.makefile("rwb", buffering=0)
while f.readline() not in (b"\n", b""):
    pass
f.write(b"OK 1\nSPAWN 1 bad$(id) 127.0.0.1:80\nSPAWN 2 ok 10.0.0.1:80\n"
        b"SPAWN 3 ok 127.0.0.1:99999\nSPAWN 4 ok 127.0.0.1:80 extra\nSPAWN 05 ok 127.0.0.1:80\n")
got = []
try:
    for _ in range(4):
        got.append(f.readline().decode())
except OSError:
    pass
open(d + "/fake-pool.got", "w").write("".join(got))
f.write(b"EXIT 0\n")
FAKE
if command -v python3 >/dev/null 2>&1; then
  python3 "$T/fake-pool.py" "$T" &
  spid=$!
  wait_until 100 test -s "$T/fake-pool.port"
  env FNW_POOL_ADDRESS="127.0.0.1:$(cat "$T/fake-pool.port")" python="$T/bin/fake-python" bash "$SCRIPT" --id=x \
    --provision_endpoint=localhost:1 >"$T/out.fake" 2>"$T/err.fake"
  wait "$spid" 2>/dev/null
  got=$(cat "$T/fake-pool.got" 2>/dev/null)
  if printf '%s\n' "$got" | grep -q "^SPAWNFAIL 1 the relay id is not" &&
     printf '%s\n' "$got" | grep -q "^SPAWNFAIL 2 the endpoint is not" &&
     printf '%s\n' "$got" | grep -q "^SPAWNFAIL 3 " && printf '%s\n' "$got" | grep -q "^SPAWNFAIL 4 " &&
     ! ls "$T"/py.*.pid 2>/dev/null | grep -q "py.ok"; then
    pass launcher_refuses_bad_spawn
  else
    fail launcher_refuses_bad_spawn "the launcher answered: $got"; sed 's/^/    | /' "$T/err.fake"
  fi
else
  echo "SKIP launcher_refuses_bad_spawn: no python3"
fi

# ---- a pool of an earlier release: the launcher asks again in version 1 --------------
cat >"$T/old-pool.py" <<'FAKE'
import socket, sys
d = sys.argv[1]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(2)
open(d + "/old-pool.port", "w").write(str(s.getsockname()[1]))
firsts = []
for reply in (b"ERROR unsupported protocol version 2 (this pool speaks version 1; use the launcher "
              b"script of the same fnworker release)\n", b"OK 1\nO old pool worker\nEXIT 0\n"):
    c, _ = s.accept()
    c.settimeout(10)
    f = c.makefile("rwb", buffering=0)
    lines = []
    while True:
        l = f.readline()
        if l in (b"\n", b""):
            break
        lines.append(l)
    firsts.append(lines[0].decode().strip() if lines else "")
    f.write(reply)
    c.close()
open(d + "/old-pool.got", "w").write("\n".join(firsts) + "\n")
FAKE
if command -v python3 >/dev/null 2>&1; then
  python3 "$T/old-pool.py" "$T" &
  spid=$!
  wait_until 100 test -s "$T/old-pool.port"
  env FNW_POOL_ADDRESS="127.0.0.1:$(cat "$T/old-pool.port")" bash "$SCRIPT" --id=old \
    --provision_endpoint=localhost:1 >"$T/out.old" 2>"$T/err.old"
  code=$?
  wait "$spid" 2>/dev/null
  if [ $code -eq 0 ] && [ "$(cat "$T/old-pool.got")" = "FNWPOOL 2 START
FNWPOOL 1 START" ] && grep -q "old pool worker" "$T/out.old" &&
     grep -q "speaks launcher protocol version 1 only: a job's Python functions that are not fnworker operations cannot run" "$T/err.old"; then
    pass older_pool_gets_version1
  else
    fail older_pool_gets_version1 "exit $code, requests: $(cat "$T/old-pool.got" 2>/dev/null), stderr: $(cat "$T/err.old")"
  fi
else
  echo "SKIP older_pool_gets_version1: no python3"
fi

# ---- version 1: relay off, said in the boot log ------------------------------------
reply=$(bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1##*:}" && printf "FNWPOOL 1 START\nid=v1\nprovision_endpoint=localhost:1\n\n" >&3 && cat <&3' _ "$ADDR")
case $reply in
  *"O worker argv: --id=v1 --provision_endpoint=localhost:1 --relay=off"*"E fnworker pool: this launcher speaks launcher protocol version 1, so the worker runs with --relay=off"*"EXIT 0"*)
    pass version1_relay_off ;;
  *"E fnworker pool: this launcher speaks launcher protocol version 1, so the worker runs with --relay=off"*"O worker argv: --id=v1 --provision_endpoint=localhost:1 --relay=off"*"EXIT 0"*)
    pass version1_relay_off ;;
  *) fail version1_relay_off "reply: $reply" ;;
esac

# ---- Flink kills the launcher: its Python worker and the worker stop --------------
cat >"$T/plan5" <<'EOF'
send SPAWN 1 sleep-k 127.0.0.1:40123
expect SPAWNED 1
sleep 60
EOF
env BOOT_LOG_DIR="$T/boot" FNW_POOL_ADDRESS="$ADDR" python="$T/bin/fake-python" \
  bash "$SCRIPT" --id=w-k --provision_endpoint=localhost:1 --fake_plan=plan5 >/dev/null 2>&1 &
lpid=$!
if wait_until 200 test -s "$T/py.sleep-k.pid"; then
  pypid=$(cat "$T/py.sleep-k.pid")
  wait_until 100 grep -q "got: SPAWNED 1" "$LOG"
  kill -TERM "$lpid"
  if ! wait_until 140 dead "$pypid"; then
    fail launcher_killed_stops_python "python $pypid still runs 7 s after its launcher was killed"
  elif ! wait_until 60 dead "$(cat "$T/worker.plan5.pid")"; then
    fail launcher_killed_stops_python "the worker still runs 3 s after its launcher was killed"
  else
    pass launcher_killed_stops_python
  fi
else
  fail launcher_killed_stops_python "the fake python did not start"; show_log
fi
wait "$lpid" 2>/dev/null

# SIGKILL (no trap runs): the connection still closes (only the launcher and
# its one writer, cat, hold it), so the pool stops the worker; the Python
# worker ends once fnworker's relay is gone (here: the test stops it).
cat >"$T/plan6" <<'EOF'
send SPAWN 1 sleep-9 127.0.0.1:40123
expect SPAWNED 1
sleep 60
EOF
env FNW_POOL_ADDRESS="$ADDR" python="$T/bin/fake-python" \
  bash "$SCRIPT" --id=w-9 --provision_endpoint=localhost:1 --fake_plan=plan6 >/dev/null 2>&1 &
lpid=$!
if wait_until 200 test -s "$T/py.sleep-9.pid" && wait_until 100 test -s "$T/worker.plan6.pid"; then
  sleep 0.3
  kill -KILL "$lpid"
  if wait_until 60 dead "$(cat "$T/worker.plan6.pid")"; then
    pass launcher_sigkilled_stops_worker
  else
    fail launcher_sigkilled_stops_worker "the worker still runs 3 s after its launcher was SIGKILLed"
  fi
  kill -TERM "$(cat "$T/py.sleep-9.pid")" 2>/dev/null
else
  fail launcher_sigkilled_stops_worker "the fake python did not start"
fi
wait "$lpid" 2>/dev/null

kill -TERM "$POOL_PID"
wait "$POOL_PID"
[ $failed -eq 0 ] && echo "pool relay: all passed" || echo "pool relay: FAILED"
exit $failed
