#!/bin/sh
# tests/shell/test_cli.sh — the worker's command line as a new user meets
# it, against the real binary: a bad --log-level and a bad --lull-seconds
# exit 2 naming the flag and what it accepts; an unknown flag given instead
# of the required ones is named before the missing id; an endpoint nobody
# listens on ends with "cannot connect to <endpoint>: connection refused"
# and exit 1, not a bare deadline; --help lists --lull-seconds. Then the
# harness's command line (fnworker.harness.Main): --help for the command and
# for the test runner exits 0 with the usage; a missing --input file and a
# line that is not JSON each give one "error:" line and exit 2, before any
# worker starts.
# Run by `make check` (after the build and the harness); prints PASS/FAIL lines.
#   sh tests/shell/test_cli.sh [path/to/fnworker]     (FNW_BUILD: the build dir, default build)
set -u
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
BUILD_DIR=${FNW_BUILD:-$ROOT/build}
BIN=${1:-${FNW_BIN:-$BUILD_DIR/fnworker}}
if [ ! -x "$BIN" ]; then
  echo "FAIL test_cli: no worker binary at $BIN (run make first)"
  exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/fnw-cli-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
failed=0

# expect NAME CODE PATTERN ARGS...: exit code CODE and PATTERN (grep -E) in stdout+stderr
expect() {
  name=$1 code=$2 pattern=$3
  shift 3
  env -u WORKER_ID -u CONTROL_API_SERVICE_DESCRIPTOR "$BIN" "$@" >"$T/out" 2>&1
  got=$?
  if [ "$got" != "$code" ]; then
    echo "FAIL $name: exit $got, expected $code"; sed 's/^/    | /' "$T/out"; failed=1; return
  fi
  if ! grep -Eq -- "$pattern" "$T/out"; then
    echo "FAIL $name: output lacks /$pattern/"; sed 's/^/    | /' "$T/out"; failed=1; return
  fi
  echo "PASS $name"
}

expect bad_log_level 2 "^fnworker: --log-level: 'loud' is not a log level \(debug, info, warn, error" \
  --id=1 --provision_endpoint=localhost:1 --log-level=loud
expect bad_lull_seconds 2 "^fnworker: --lull-seconds: 'soon' is not a number >= 0" \
  --id=1 --provision_endpoint=localhost:1 --lull-seconds=soon
expect unknown_flag_alone 2 "^fnworker: unknown flag --bogus .*; No id provided" --bogus
expect help_lists_lull 0 "--lull-seconds=SECONDS" --help

# A port nobody listens on: bind one, note it, let it go.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null)
if [ -n "$port" ]; then
  expect refused_provision 1 "cannot connect to 127.0.0.1:$port \(the provision endpoint\): connection refused" \
    --id=1 --provision_endpoint=127.0.0.1:$port --connect-timeout=1
  expect refused_control 1 "cannot connect to 127.0.0.1:$port \(the control endpoint\): connecting fails" \
    --id=1 --control_endpoint=127.0.0.1:$port --connect-timeout=1
else
  echo "skipped: refused_provision, refused_control (no python3 to find a free port)"
fi

# ---- the harness's command line ------------------------------------------------
if [ ! -f "$BUILD_DIR/harness/classpath" ]; then
  echo "skipped: harness_* (no $BUILD_DIR/harness/classpath; make harness)"
  exit $failed
fi
CP=$(cat "$BUILD_DIR/harness/classpath")
# hexpect NAME CODE PATTERN LINES ARGS...: like expect, for Main; LINES: the most output lines allowed
hexpect() {
  name=$1 code=$2 pattern=$3 lines=$4
  shift 4
  java -cp "$CP" "$@" >"$T/out" 2>&1
  got=$?
  n=$(wc -l <"$T/out")
  if [ "$got" != "$code" ] || ! grep -Eq -- "$pattern" "$T/out" || [ "$n" -gt "$lines" ]; then
    echo "FAIL $name: exit $got (expected $code), $n lines (at most $lines), /$pattern/ expected"
    sed 's/^/    | /' "$T/out"; failed=1; return
  fi
  echo "PASS $name"
}
hexpect harness_help 0 "^usage: fnworker.harness.Main run" 40 fnworker.harness.Main --help
hexpect harness_run_help 0 "^usage: fnworker.harness.Main run" 40 fnworker.harness.Main run --type INT --help
hexpect harness_tests_help 0 "^usage: fnworker.harness.IntegrationTests" 10 fnworker.harness.IntegrationTests --help
hexpect harness_missing_input 2 "^error: --input $T/none.jsonl: no such file$" 1 \
  fnworker.harness.Main run --worker "$BIN" --type INT --input "$T/none.jsonl"
printf '1\n{"a":\n' >"$T/bad.jsonl"
hexpect harness_malformed_json 2 "^error: $T/bad.jsonl line 2: not JSON \(" 1 \
  fnworker.harness.Main run --worker "$BIN" --type INT --input "$T/bad.jsonl"
printf '1\n"x"\n' >"$T/wrong.jsonl"
hexpect harness_wrong_type 2 "^error: $T/wrong.jsonl line 2: not a value of INT" 1 \
  fnworker.harness.Main run --worker "$BIN" --type INT --input "$T/wrong.jsonl"
exit $failed
