#!/bin/sh
# Integration tests: the harness (tests/harness, a stand-in for Flink's JVM
# side) launches the real worker binary for each scenario. The scenarios are
# Java sources under tests/integration/scenarios/, compiled into the harness
# jar by tests/harness/build.sh; IntegrationTests lists and runs them.
#   sh tests/integration/run.sh BUILD [FILTER]
# BUILD is the build dir (holds fnworker and harness/); FILTER keeps scenarios
# whose name contains it. FNW_WRAPPER (e.g. valgrind ...) prefixes the worker.
set -eu
BUILD=${1:-build}
FILTER=${2:-}
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
if [ ! -x "$BUILD/fnworker" ]; then
  echo "integration: worker binary $BUILD/fnworker is missing; build it first (make)" >&2
  exit 1
fi
if [ ! -f "$BUILD/harness/classpath" ]; then
  echo "integration: harness not built; running tests/harness/build.sh $BUILD/harness" >&2
  sh "$ROOT/tests/harness/build.sh" "$BUILD/harness"
fi
CP=$(cat "$BUILD/harness/classpath")
# The harness checks itself first (codec bytes, descriptor shape); quiet unless it fails.
for t in fnworker.harness.types.CodecSelfTest fnworker.harness.HarnessSelfTest; do
  if ! out=$(java -Dfnworker.root="$ROOT" -cp "$CP" "$t" 2>&1); then
    printf '%s\n' "$out" | grep -v '^PASS '
    echo "integration: harness self-test $t failed" >&2
    exit 1
  fi
done
exec java -cp "$CP" fnworker.harness.IntegrationTests \
  --worker "$BUILD/fnworker" --runner-script "$ROOT/scripts/pyflink-udf-runner.sh" ${FILTER:+"$FILTER"}
