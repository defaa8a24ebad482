#!/bin/sh
# tests/shell/test_runner_plugins.sh — where the Flink launcher script
# (scripts/pyflink-udf-runner.sh) tells the worker to find plugins: plugins/
# beside the script when it exists and FNW_PLUGINS_DIR is unset; a set
# FNW_PLUGINS_DIR (even empty) is passed on untouched; with neither, nothing
# is set (the worker then looks beside its own executable). A stand-in
# worker prints what it got. Run by `make check`; prints PASS/FAIL lines.
#   sh tests/shell/test_runner_plugins.sh
set -u
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/fnw-runner-plugins.XXXXXX")
trap 'rm -rf "$T"' EXIT
failed=0
mkdir -p "$T/dir"
cp "$ROOT/scripts/pyflink-udf-runner.sh" "$T/dir/"
cat >"$T/dir/fnworker" <<'FAKE'
#!/bin/sh
echo "plugins=${FNW_PLUGINS_DIR-unset}"
FAKE
chmod +x "$T/dir/fnworker"

expect() {  # expect CASE WANT [env assignments...]
  case_name=$1 want=$2
  shift 2
  got=$(env -u FNW_PLUGINS_DIR -u BOOT_LOG_DIR -u FNWORKER_BIN "$@" sh "$T/dir/pyflink-udf-runner.sh" --id=x 2>&1)
  if [ "$got" = "plugins=$want" ]; then
    echo "PASS $case_name"
  else
    echo "FAIL $case_name: expected plugins=$want, the worker got: $got"
    failed=1
  fi
}

expect no_plugins_dir_sets_nothing unset
mkdir "$T/dir/plugins"
expect plugins_beside_the_script "$T/dir/plugins"
expect env_wins_over_the_script_dir /elsewhere FNW_PLUGINS_DIR=/elsewhere
expect empty_env_is_kept "" FNW_PLUGINS_DIR=

[ $failed -eq 0 ] && echo "runner script plugins: all passed" || echo "runner script plugins: FAILED"
exit $failed
