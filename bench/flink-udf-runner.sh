#!/bin/sh
# bench/flink-udf-runner.sh — the TaskManager's pyflink-udf-runner.sh in
# the W15-W17 rows (copied into build/bench/flink/runner/ by flink_rows.py),
# so that one TaskManager runs PyFlink's own Python worker and fnworker side
# by side. Flink puts the job's `python.executable` into the worker's
# environment as `python` (AbstractPythonEnvironmentManager); a job picks its
# worker with it:
#   python=<this dir>/workers/NAME  the worker there (fnworker, null_worker)
#                                   through fnworker's pyflink-udf-runner.sh
#   python=<this dir>/relay/python  fnworker (workers/fnworker) relaying the
#                                   job's Python functions to PyFlink's own
#                                   worker, which it starts as `$python -m
#                                   ...beam_boot`: relay/python runs the
#                                   venv's Python (W19)
#   anything else                   PyFlink's own bin/pyflink-udf-runner.sh
#                                   (its path in pyflink-bin next to this
#                                   script), which runs $python -m beam_boot
# Every launch is appended to launches.log ("<pid> <worker>") so the bench
# can tell which worker served a job.
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
case "${python:-}" in
  "$here"/relay/python)
    echo "$$ relay" >>"$here/launches.log"
    FNWORKER_BIN=$here/workers/fnworker
    export FNWORKER_BIN
    exec sh "$here/fnworker-udf-runner.sh" "$@" ;;
  "$here"/workers/*)
    echo "$$ $(basename "$python")" >>"$here/launches.log"
    FNWORKER_BIN=$python
    export FNWORKER_BIN
    exec sh "$here/fnworker-udf-runner.sh" "$@" ;;
  *)
    echo "$$ pyflink" >>"$here/launches.log"
    exec bash "$(cat "$here/pyflink-bin")/pyflink-udf-runner.sh" "$@" ;;
esac
