#!/bin/sh
# scripts/bench.sh — `make bench`: runs the benchmark driver (build/bench/fnbench,
# see scripts/bench/README.md) against build/fnworker and the null worker, keeps
# the table in build/bench/results.txt next to results.json, and draws the plots
# (gnuplot, Debian package gnuplot-nox) into build/bench/*.png.
#   sh scripts/bench.sh [BUILD_DIR] [fnbench options, e.g. --only W1,W2 --scale 0.1]
set -eu
BUILD=${1:-build}
[ $# -gt 0 ] && shift
OUT="$BUILD/bench"
rc=0
"$OUT/fnbench" --out "$OUT" "$@" >"$OUT/results.txt" || rc=$?
cat "$OUT/results.txt"
if command -v gnuplot >/dev/null 2>&1; then
  gnuplot -e "dir='$OUT'" scripts/bench/plots.gp &&
    echo "plots:" $(ls "$OUT"/throughput.png "$OUT"/latency.png "$OUT"/rss.png 2>/dev/null)
else
  echo "gnuplot is not installed (Debian package gnuplot-nox): no plots" >&2
fi
exit $rc
