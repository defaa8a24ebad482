#!/bin/sh
# tests/shell/test_runner_script.sh — the Flink launcher script
# (scripts/pyflink-udf-runner.sh) with a stand-in worker: each launch starts
# the boot log afresh (it holds only the latest launch, stdout and stderr),
# with and without a fifo for tee, and a missing worker binary is reported
# in the boot log. Run by `make check`; prints PASS/FAIL lines.
#   sh tests/shell/test_runner_script.sh
set -u
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
SCRIPT="$ROOT/scripts/pyflink-udf-runner.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/fnw-runner-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
failed=0

fail() {
  echo "FAIL $1: $2"
  echo "  boot log:"; sed 's/^/    | /' "$T/boot/flink-python-udf-boot.log" 2>/dev/null
  failed=1
}

# A worker that says who it is on stdout and on stderr.
mkdir -p "$T/boot" "$T/bin"
cat >"$T/bin/fake-worker" <<'FAKE'
#!/bin/sh
echo "fake worker stdout $*"
echo "fake worker stderr $*" >&2
FAKE
chmod +x "$T/bin/fake-worker"
LOG="$T/boot/flink-python-udf-boot.log"

# tee may still be writing when the launch returns: wait for a line.
wait_for() {
  i=0
  while [ $i -lt 100 ]; do
    grep -q "$1" "$LOG" 2>/dev/null && return 0
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}

launch() {  # launch NAME [env assignments...]
  name=$1
  shift
  env BOOT_LOG_DIR="$T/boot" FNWORKER_BIN="${BIN:-$T/bin/fake-worker}" "$@" \
    sh "$SCRIPT" --id="$name" --provision_endpoint=localhost:1 >"$T/out" 2>&1
}

check_fresh() {  # check_fresh CASE [env assignments...]
  case_name=$1
  shift
  launch first "$@"
  if ! wait_for "stderr --id=first"; then fail "$case_name" "the first launch's output is not in the boot log"; return; fi
  launch second "$@"
  if ! wait_for "stdout --id=second" || ! wait_for "stderr --id=second"; then
    fail "$case_name" "the second launch's stdout and stderr are not both in the boot log"; return
  fi
  if grep -q "id=first" "$LOG"; then fail "$case_name" "the boot log still holds the first launch"; return; fi
  echo "PASS $case_name"
}

rm -f "$LOG"
check_fresh boot_log_fresh_per_launch
if ! grep -q "stdout --id=second" "$T/out"; then
  fail boot_log_tee_passes_output "the launch's own stdout does not show the worker's output"
else
  echo "PASS boot_log_tee_passes_output"
fi
rm -f "$LOG"
check_fresh boot_log_fresh_without_fifo TMPDIR="$T/no-such-dir"

BIN="$T/bin/missing" launch third
code=$?
if [ $code -ne 127 ]; then
  fail missing_worker_in_boot_log "exit code $code, expected 127"
elif ! wait_for "fnworker not found at $T/bin/missing"; then
  fail missing_worker_in_boot_log "the boot log does not say the worker is missing"
elif grep -q "id=second" "$LOG"; then
  fail missing_worker_in_boot_log "the boot log still holds the earlier launch"
else
  echo "PASS missing_worker_in_boot_log"
fi

# Two workers of one job on one TaskManager share BOOT_LOG_DIR (one per
# slot, started side by side): the second launch starts the file afresh, and
# from then on both workers' lines follow each other whole. (With tee
# truncating on its own, the first worker kept writing at its old offset,
# over the second's lines and past a hole of NUL bytes: a real TaskManager
# with 2 slots showed it, tests/e2e/test_cluster.py.)
cat >"$T/bin/slow-worker" <<'SLOW'
#!/bin/sh
for k in 1 2 3 4 5 6 7 8; do
  echo "slow worker $1 line $k .............................................................."
  sleep 0.1
done
SLOW
chmod +x "$T/bin/slow-worker"
rm -f "$LOG"
BIN="$T/bin/slow-worker" launch first &
a=$!
wait_for "id=first line 3"
BIN="$T/bin/slow-worker" launch second &
b=$!
wait $a $b
sleep 0.2
bad=$(tr -d '\000' <"$LOG" | grep -c -v '^slow worker --id=[a-z]* line [0-9] \.*$')
nuls=$(tr -d -c '\000' <"$LOG" | wc -c)
if [ "$bad" -ne 0 ] || [ "$nuls" -ne 0 ]; then
  fail boot_log_shared_by_two_workers "$bad broken line(s), $nuls NUL byte(s)"
elif ! grep -q "id=first line 8" "$LOG" || ! grep -q "id=second line 1 " "$LOG"; then
  fail boot_log_shared_by_two_workers "the lines after the second launch are not all there"
else
  echo "PASS boot_log_shared_by_two_workers"
fi

[ $failed -eq 0 ] && echo "runner script: all passed" || echo "runner script: FAILED"
exit $failed
