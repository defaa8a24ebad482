#!/bin/sh
# scripts/lint.sh — cppcheck (Debian's; the `lint` package group of
# scripts/install-deps.sh) over the product code (`make lint`, in `make check`).
#   sh scripts/lint.sh [BUILD_DIR]      (default build; needs $BUILD_DIR/gen, the protobuf-c code)
# Checks: cppcheck's default ones (errors: leaks, null and out-of-bounds
# accesses, uninitialised reads, undefined behaviour) plus warning,
# portability and performance, with POSIX's library knowledge; not style.
# One configuration is checked, the one the Makefile builds (_GNU_SOURCE, the
# protobuf-c version macros the generated headers test); system headers are
# not read. Results are cached in $BUILD_DIR/cppcheck.
# A finding is fixed, or suppressed where it is with its reason:
#   /* cppcheck-suppress <id> ; why this is not a defect */   (the line before)
# Exit 1 on any finding, naming file:line, severity and id.
set -eu
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
BUILD=${1:-build}
cd "$ROOT"
command -v cppcheck >/dev/null 2>&1 ||
  { echo "lint.sh: cppcheck is missing (as root: sh scripts/install-deps.sh lint)" >&2; exit 2; }
[ -d "$BUILD/gen" ] || { echo "lint.sh: $BUILD/gen is missing (run make first)" >&2; exit 2; }
mkdir -p "$BUILD/cppcheck"
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -gt 2 ] && jobs=2
out="$BUILD/cppcheck/findings.txt"
rc=0
cppcheck -q -j"$jobs" --cppcheck-build-dir="$BUILD/cppcheck" --error-exitcode=1 \
  --std=c11 --library=posix --enable=warning,portability,performance --inline-suppr \
  -Iinclude -I. -I"$BUILD/gen" -D_GNU_SOURCE -DFNW_VERSION='"lint"' \
  -DPROTOBUF_C_VERSION_NUMBER=1004001 -DPROTOBUF_C_MIN_COMPILER_VERSION=1000000 \
  -DPROTOBUF_C__BEGIN_DECLS= -DPROTOBUF_C__END_DECLS= \
  --template='{file}:{line}: {severity}: {message} [{id}]' \
  base codecs runtime ops worker pool main.c >"$out" 2>&1 || rc=$?
if [ "$rc" -ne 0 ] || [ -s "$out" ]; then
  cat "$out"
  echo "lint: cppcheck found the above (fix it, or suppress it on the line before with its reason: scripts/lint.sh)"
  exit 1
fi
echo "== lint: cppcheck $(cppcheck --version | sed 's/Cppcheck //') found nothing in the product code"
