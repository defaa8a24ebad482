#!/bin/sh
# The launcher Flink runs for a Python worker when the TaskManager has
# PYFLINK_UDF_RUNNER_DIR set: Beam's ProcessEnvironmentFactory executes
#   $PYFLINK_UDF_RUNNER_DIR/pyflink-udf-runner.sh --id=<id> --provision_endpoint=<host:port>
# Like Flink's own script it tees stdout+stderr to
# $BOOT_LOG_DIR/flink-python-udf-boot.log (when BOOT_LOG_DIR is set),
# starting the file afresh on every launch (Flink puts the file into the
# exception when a worker fails to start, so it must hold this launch only),
# and runs in $_PYTHON_WORKING_DIR (when set); then it execs fnworker with the
# same arguments, so the worker keeps this process id and gets Flink's SIGTERM.
# The worker is $FNWORKER_BIN, or fnworker next to this script. Operation
# plugins come from $FNW_PLUGINS_DIR, or plugins/ next to this script when
# that exists (else the worker looks beside its own executable).
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
bin=${FNWORKER_BIN:-$here/fnworker}
if [ -z "${FNW_PLUGINS_DIR+set}" ] && [ -d "$here/plugins" ]; then
  FNW_PLUGINS_DIR=$here/plugins
  export FNW_PLUGINS_DIR
fi
if [ -n "${BOOT_LOG_DIR:-}" ]; then
  log="$BOOT_LOG_DIR/flink-python-udf-boot.log"
  fifo_dir=$(mktemp -d "${TMPDIR:-/tmp}/fnworker-boot.XXXXXX" 2>/dev/null) || fifo_dir=
  if [ -n "$fifo_dir" ] && mkfifo "$fifo_dir/out" 2>/dev/null; then
    # tee truncates the log, then reads the fifo; this shell (and then the
    # worker, via exec) writes it.
    tee "$log" <"$fifo_dir/out" &
    exec >"$fifo_dir/out" 2>&1
    rm -rf "$fifo_dir"
  else
    # no fifo: the log only (truncated), not the terminal
    [ -z "$fifo_dir" ] || rm -rf "$fifo_dir"
    exec >"$log" 2>&1
  fi
fi
# after the log is set up, so that Flink's exception shows these failures
if [ -n "${_PYTHON_WORKING_DIR:-}" ]; then
  cd "$_PYTHON_WORKING_DIR"
fi
if [ ! -x "$bin" ]; then
  echo "pyflink-udf-runner.sh: fnworker not found at $bin (set FNWORKER_BIN or put fnworker next to this script)" >&2
  exit 127
fi
exec "$bin" "$@"
