#!/bin/sh
# tests/shell/test_make_deps.sh — `make -j2` on a fresh machine: every rule
# that runs the compiler, a linker or a packaged tool must come after the
# install of its package group (build/.deps-<group>), or a parallel make
# starts compiling (build/plugins/dns.so against c-ares) before the packages
# are there. For each target a fresh build tree would build, `make -n`
# (dry run, in an empty BUILD dir) must print the group's install-deps line
# before the first command that compiles, links or runs protoc/javac.
# Run by `make check` (script-tests); prints PASS/FAIL lines.
set -u
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
cd "$ROOT" || exit 1
unset MAKEFLAGS MFLAGS MAKELEVEL   # a dry run of its own, not part of the calling make
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
UNIT=$(ls tests/unit/*/test_*.c | sed 's|tests/unit/\(.*\)\.c|tests/\1|')
FUZZ=$(ls tests/fuzz/fuzz_*.c | sed 's|tests/fuzz/fuzz_\(.*\)\.c|fuzz/replay_\1|')
ALLOC=$(ls tests/alloc/alloc_*.c | grep -v alloc_run.c | sed 's|tests/alloc/\(.*\)\.c|alloc/\1|')
for t in fnworker plugins/dns.so plugins/sha256.so tests/worker/plugins/good_a.so harness/harness.jar $UNIT $FUZZ $ALLOC; do
  target=$T/b/$t
  [ "$t" = plugins ] && target=plugins
  out=$(make -n BUILD="$T/b" "$target" 2>&1) || { echo "FAIL test_make_deps: make -n $t: $(printf '%s' "$out" | tail -n 1)"; fails=$((fails + 1)); continue; }
  first_tool=$(printf '%s\n' "$out" | grep -n -E '^(cc|gcc|clang|\$\(CC\)|ar|protoc|protoc-c|javac|sh tests/harness/build.sh)( |$)' | head -n 1 | cut -d: -f1)
  first_dep=$(printf '%s\n' "$out" | grep -n 'install-deps.sh' | head -n 1 | cut -d: -f1)
  if [ -n "$first_tool" ] && { [ -z "$first_dep" ] || [ "$first_dep" -gt "$first_tool" ]; }; then
    echo "FAIL test_make_deps: $t runs '$(printf '%s\n' "$out" | sed -n "${first_tool}p" | cut -c1-60)...' before installing its packages"
    fails=$((fails + 1))
  fi
done
[ $fails -eq 0 ] && echo "PASS test_make_deps: every compile and link rule comes after its package group's install"
exit $((fails > 0))
