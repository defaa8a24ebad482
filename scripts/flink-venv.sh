#!/bin/sh
# Creates the virtualenv of one PyFlink line of the end-to-end suite, once:
#   sh scripts/flink-venv.sh BUILD LINE        (LINE: 2.3 or 1.20)
# It installs tests/e2e/requirements-LINE.txt (the pinned apache-flink, whose
# two wheels are a complete Flink home, plus pytest and the clients the
# comparison jobs use) with Debian's python3 into BUILD/flink/LINE/venv and
# keeps a stamp there (BUILD/flink/LINE/.stamp) holding the requirements it
# installed, so a second run does nothing and a changed pin reinstalls.
# Progress goes to the terminal (one line per package pip collects); when the
# Python package index cannot be reached it says so in one line and exits 1.
set -eu
BUILD=${1:?usage: flink-venv.sh BUILD LINE}
LINE=${2:?usage: flink-venv.sh BUILD LINE}
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
req="$ROOT/tests/e2e/requirements-$LINE.txt"
[ -f "$req" ] || { echo "flink-venv.sh: no pins for PyFlink line '$LINE' ($req)" >&2; exit 2; }
dir="$BUILD/flink/$LINE"
stamp="$dir/.stamp"
if [ -f "$stamp" ] && cmp -s "$req" "$stamp" && [ -x "$dir/venv/bin/python" ]; then
  exit 0
fi
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
pins=$(grep -v '^#' "$req" | tr '\n' ' ')
echo "flink-venv: PyFlink $LINE into $dir/venv ($pins)"
rm -rf "$dir/venv" "$stamp"
mkdir -p "$dir"
"$py" -m venv "$dir/venv" || {
  echo "flink-venv: '$py -m venv' failed: install Debian's python3-venv (sh scripts/install-deps.sh flink)" >&2
  exit 1
}
log="$dir/pip.log"
# pip's "Collecting ..." lines are the progress; the whole log stays in pip.log.
rc=0
"$dir/venv/bin/pip" install --disable-pip-version-check --progress-bar off -r "$req" >"$log" 2>&1 &
pid=$!
tail -n +1 -f "$log" --pid=$pid 2>/dev/null | grep --line-buffered -E '^(Collecting|Successfully installed)' | cut -c1-110 || true
wait $pid || rc=$?
if [ $rc -ne 0 ]; then
  if grep -q 'CERTIFICATE_VERIFY_FAILED' "$log"; then
    echo "flink-venv: the Python package index's TLS certificate is not trusted here (a proxy's CA missing from /etc/ssl/certs? set PIP_CERT); install $pins into $dir/venv by hand (see $log)" >&2
  elif grep -qiE 'NewConnectionError|Could not find a version|Temporary failure in name resolution|Network is unreachable|ConnectTimeout|ReadTimeout' "$log"; then
    echo "flink-venv: the Python package index cannot be reached; install $pins into $dir/venv by hand (see $log)" >&2
  else
    echo "flink-venv: pip failed installing $pins (last lines of $log):" >&2
    tail -n 5 "$log" >&2
  fi
  exit 1
fi
cp "$req" "$stamp"
echo "flink-venv: PyFlink $LINE ready ($dir/venv)"
