#!/bin/sh
# The demo: 100,000 rows of a nested Row type through the worker's `identity`
# operation in bundles of 25,000, launched the way Flink launches it; every
# row must come back unchanged with its timestamp. The rate it prints is the
# Java harness's, not the worker's: `make bench` measures the worker.
#   sh scripts/demo.sh BUILD          (make demo-harness; make demo is scripts/demo-flink.py)
set -eu
BUILD=${1:-build}
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
if [ ! -x "$BUILD/fnworker" ]; then
  echo "demo: worker binary $BUILD/fnworker is missing; build it first (make)" >&2
  exit 1
fi
[ -f "$BUILD/harness/classpath" ] || sh "$ROOT/tests/harness/build.sh" "$BUILD/harness"
CP=$(cat "$BUILD/harness/classpath")
TYPE='ROW<id:LONG,name:STRING,score:DOUBLE,inner:ROW<tags:LIST<STRING>,n:INT>>'
echo "demo: 100000 rows of $TYPE through identity, bundles of 25000"
java -cp "$CP" fnworker.harness.Main run --worker "$BUILD/fnworker" \
  --type "$TYPE" --generate 100000 --operation identity \
  --bundle-size 25000 --bundle-time-ms 60000 --verify identity --quiet
echo "demo: all 100000 rows came back unchanged"
echo "demo: the rows/s above is bound by the Java harness, which encodes, sends, receives and"
echo "      decodes every row in one JVM; the worker's own rate (millions of rows/s) is what"
echo "      make bench measures, with a C driver (docs/performance.md)"
