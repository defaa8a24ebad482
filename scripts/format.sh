#!/bin/sh
# scripts/format.sh — the C sources in the layout .clang-format describes
# (Debian 12's clang-format 14: the `lint` package group of
# scripts/install-deps.sh; another major version may lay some lines out
# differently).
#   sh scripts/format.sh [PATH...]           rewrite the files that differ, in place (`make format`)
#   sh scripts/format.sh --check [PATH...]   list the files that differ and how many of
#                                            their lines would change; exit 1 if any
#                                            (`make format-check`)
# PATH: files or folders; default the product code: base codecs runtime ops
# worker pool include main.c (tests/, bench/ and examples/ are not checked).
set -eu
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
cd "$ROOT"
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
check=""
if [ "${1:-}" = --check ]; then check=1; shift; fi
[ $# -gt 0 ] || set -- base codecs runtime ops worker pool include main.c
command -v "$CLANG_FORMAT" >/dev/null 2>&1 || {
  echo "format.sh: $CLANG_FORMAT is missing (as root: sh scripts/install-deps.sh lint)" >&2; exit 2; }
files=$(find "$@" -name '*.[ch]' -type f | sort)
[ -n "$files" ] || { echo "format.sh: no .c or .h file under $*" >&2; exit 2; }
tmp=$(mktemp "${TMPDIR:-/tmp}/fnw-format.XXXXXX")
trap 'rm -f "$tmp"' EXIT
n_files=0 n_diff=0 n_lines=0
for f in $files; do
  n_files=$((n_files + 1))
  "$CLANG_FORMAT" --style=file "$f" >"$tmp"
  cmp -s "$f" "$tmp" && continue
  n_diff=$((n_diff + 1))
  if [ -n "$check" ]; then
    lines=$(diff "$f" "$tmp" | grep -c '^<' || true)
    n_lines=$((n_lines + lines))
    echo "$f: $lines lines differ"
  else
    cat "$tmp" >"$f"
    echo "formatted $f"
  fi
done
if [ -n "$check" ]; then
  if [ "$n_diff" -gt 0 ]; then
    echo "format-check: $n_diff of $n_files files differ from .clang-format ($n_lines lines would change;" \
      "make format rewrites them, $("$CLANG_FORMAT" --version | sed 's/.*version \([0-9.]*\).*/clang-format \1/'))"
    exit 1
  fi
  echo "format-check: all $n_files files match .clang-format"
fi
