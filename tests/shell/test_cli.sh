#!/bin/sh
# tests/shell/test_cli.sh — the worker's command line as a new user meets
# it, against the real binary: a bad --log-level and a bad --lull-seconds
# exit 2 naming the flag and what it accepts; an unknown flag given instead
# of the required ones is named before the missing id; an endpoint nobody
# listens on ends with "cannot connect to <endpoint>: connection refused"
# and exit 1, not a bare deadline; --help lists --lull-seconds.
# Run by `make check` (after the build); prints PASS/FAIL lines.
#   sh tests/shell/test_cli.sh [path/to/fnworker]
set -u
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
BIN=${1:-${FNW_BIN:-$ROOT/build/fnworker}}
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
exit $failed
