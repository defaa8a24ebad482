#!/bin/sh
# tests/check_exports.sh — every function include/fnworker.h declares is in
# include/fnworker.sym and exported by the worker binary (its dynamic symbol
# table, where a plugin's references resolve), and the list names nothing
# else. The declarations come from the compiler (gcc -aux-info), not from
# reading the header's text.
#   sh tests/check_exports.sh build/fnworker
set -eu
bin=${1:-build/fnworker}
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fnw-exports.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
command -v gcc >/dev/null 2>&1 || { echo "skip: gcc is needed for -aux-info" >&2; exit 0; }
gcc -aux-info "$tmp/aux" -fsyntax-only -I"$root/include" -x c "$root/include/fnworker.h"
grep 'fnworker\.h:' "$tmp/aux" | grep ' extern ' |
  sed -n 's/.*[ *]\(fnw_[a-z0-9_]*\) (.*/\1/p' | sort -u >"$tmp/declared"
sed -n 's/^ *\(fnw_[a-z0-9_]*\);$/\1/p' "$root/include/fnworker.sym" | sort -u >"$tmp/listed"
nm -D --defined-only "$bin" | awk '$2 == "T" { print $3 }' | sort -u >"$tmp/exported"
fail=0
[ -s "$tmp/declared" ] || { echo "check_exports: found no declarations in fnworker.h" >&2; exit 1; }
for f in $(comm -23 "$tmp/declared" "$tmp/listed"); do
  echo "check_exports: $f is declared in include/fnworker.h but missing from include/fnworker.sym" >&2; fail=1
done
for f in $(comm -13 "$tmp/declared" "$tmp/listed"); do
  echo "check_exports: include/fnworker.sym lists $f, which fnworker.h does not declare" >&2; fail=1
done
for f in $(comm -23 "$tmp/declared" "$tmp/exported"); do
  echo "check_exports: $bin does not export $f (nm -D)" >&2; fail=1
done
[ $fail -eq 0 ] && echo "check_exports: $(wc -l <"$tmp/declared") functions of fnworker.h exported by $bin"
exit $fail
