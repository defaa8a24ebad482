#!/bin/sh
# tests/shell/test_version.sh — the release is written once, in the
# top-level VERSION file, and everything that shows it agrees: the worker's
# `fnworker --version` (the Makefile passes -DFNW_VERSION), the Python
# package's fnworker.__version__ (python/fnworker/__init__.py, a copy: a
# package put next to a job has no VERSION file to read), and the image,
# whose build passes it as org.opencontainers.image.version
# (scripts/image/build.sh; tests/image/run.sh checks a built image's label).
# CHANGELOG.md has a section for it.
# Run by `make script-tests`; prints PASS/FAIL lines.
#   sh tests/shell/test_version.sh      (FNW_BUILD: the build dir, default build)
set -u
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
BUILD_DIR=${FNW_BUILD:-$ROOT/build}
BIN=${FNW_BIN:-$BUILD_DIR/fnworker}
PYTHON=${PYTHON:-python3}
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }

version=$(cat "$ROOT/VERSION")
if echo "$version" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$' && [ "$(wc -l <"$ROOT/VERSION")" = 1 ]; then
  pass version_file_is_one_semver_line
else
  fail version_file_is_one_semver_line "VERSION holds '$version' (one line X.Y.Z expected)"
fi

if [ ! -x "$BIN" ]; then
  fail worker_version "no worker binary at $BIN (run make first)"
else
  got=$("$BIN" --version 2>&1)
  [ "$got" = "fnworker $version" ] && pass worker_version ||
    fail worker_version "'fnworker --version' prints '$got', VERSION says $version (rebuild: make)"
fi

got=$(cd "$ROOT/python" && PYTHONDONTWRITEBYTECODE=1 "$PYTHON" -c 'import fnworker; print(fnworker.__version__)' 2>&1)
[ "$got" = "$version" ] && pass python_package_version ||
  fail python_package_version "fnworker.__version__ is '$got', VERSION says $version (edit python/fnworker/__init__.py)"

# The image: its build script passes VERSION as the build argument the
# Dockerfile's version label reads.
if grep -q -- '--build-arg FNW_VERSION="$version"' "$ROOT/scripts/image/build.sh" &&
   grep -q 'version=$(cat "$root/VERSION")' "$ROOT/scripts/image/build.sh" &&
   grep -q 'org.opencontainers.image.version="$FNW_VERSION"' "$ROOT/Dockerfile"; then
  pass image_version_label_from_version_file
else
  fail image_version_label_from_version_file "scripts/image/build.sh and the Dockerfile no longer label the image with VERSION"
fi

# CHANGELOG.md: the version has its section (a release moves Unreleased there).
if grep -Eq "^## \[$(echo "$version" | sed 's/\./\\./g')\]" "$ROOT/CHANGELOG.md" 2>/dev/null; then
  pass changelog_has_the_version
else
  fail changelog_has_the_version "CHANGELOG.md has no '## [$version]' section"
fi
exit $failed
