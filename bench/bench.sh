#!/bin/sh
# bench/bench.sh — `make bench`: runs the benchmark driver (build/bench/fnbench,
# see bench/README.md) against build/fnworker and the null worker, keeps
# the table in build/bench/results.txt next to results.json, and draws the plots
# (gnuplot, Debian package gnuplot-nox) into build/bench/*.png.
#   sh bench/bench.sh [BUILD_DIR] [fnbench options, e.g. --only W1,W2 --scale 0.1]
# Then the W15-W20 rows (below).
set -eu
BUILD=${1:-build}
[ $# -gt 0 ] && shift
OUT="$BUILD/bench"
rc=0
"$OUT/fnbench" --out "$OUT" "$@" >"$OUT/results.txt" || rc=$?
cat "$OUT/results.txt"
if command -v gnuplot >/dev/null 2>&1; then
  gnuplot -e "dir='$OUT'" bench/plots.gp &&
    echo "plots:" $(ls "$OUT"/throughput.png "$OUT"/latency.png "$OUT"/rss.png 2>/dev/null)
else
  echo "gnuplot is not installed (Debian package gnuplot-nox): no plots" >&2
fi
# W15-W20: real Flink jobs, fnworker next to PyFlink's own Python worker
# (bench/flink_rows.py, in the PyFlink venv; table also in
# $OUT/flink-results.txt). Skipped with BENCH_FLINK=0, when fnbench was asked
# for a subset (--only), or without the venv (make flink-venvs).
venv_py="$BUILD/flink/${FLINK_LINE:-2.3}/venv/bin/python"
flink_args=""          # fnbench's --smoke and --scale X apply to them too
prev=""
for a in "$@"; do
  [ "$a" = --smoke ] && flink_args="$flink_args --smoke"
  [ "$prev" = --scale ] && flink_args="$flink_args --scale $a"
  prev=$a
done
case " $* " in
  *" --only "*) echo "W15-W20 (Flink rows): skipped (--only)" ;;
  *)
    if [ "${BENCH_FLINK:-1}" = 0 ]; then
      echo "W15-W20 (Flink rows): skipped (BENCH_FLINK=0)"
    elif [ ! -x "$venv_py" ]; then
      echo "W15-W20 (Flink rows): skipped: no PyFlink venv at $venv_py (make flink-venvs)"
    else
      echo
      # shellcheck disable=SC2086
      "$venv_py" bench/flink_rows.py --build "$BUILD" --out "$OUT" $flink_args || rc=1
    fi ;;
esac
exit $rc
