#!/bin/sh
# Fetches the Java jars the end-to-end suite adds to its jobs (env.add_jars)
# for one PyFlink line, once, from Maven Central into a cache under BUILD:
#   sh scripts/e2e-jars.sh BUILD LINE          (LINE: 2.3 or 1.20)
# The jars are the Maven coordinates in tests/e2e/jars-LINE.txt (today
# flink-sql-avro: the wheels have no Avro format); they land in
# BUILD/e2e/jars/LINE/ and a stamp there holds the list fetched, so a second
# run does nothing. When Maven Central cannot be reached it says so in one
# line and exits 1.
set -eu
BUILD=${1:?usage: e2e-jars.sh BUILD LINE}
LINE=${2:?usage: e2e-jars.sh BUILD LINE}
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
list="$ROOT/tests/e2e/jars-$LINE.txt"
[ -f "$list" ] || { echo "e2e-jars.sh: no jar list for PyFlink line '$LINE' ($list)" >&2; exit 2; }
dir="$BUILD/e2e/jars/$LINE"
stamp="$dir/.stamp"
[ -f "$stamp" ] && cmp -s "$list" "$stamp" && exit 0
command -v mvn >/dev/null || { echo "e2e-jars: mvn not found (install Debian's maven)" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir"
log="$dir/mvn.log"
for coord in $(grep -v '^#' "$list"); do
  echo "e2e-jars: $coord from Maven Central into $dir"
  if ! mvn -B dependency:copy -Dartifact="$coord" -DoutputDirectory="$dir" >>"$log" 2>&1; then
    if grep -qiE 'UnknownHost|Connection refused|Connect timed out|Network is unreachable|Could not transfer' "$log"; then
      echo "e2e-jars: Maven Central (repo.maven.apache.org) cannot be reached, so $coord is missing and the cases that add it fail (details: $log)" >&2
    else
      echo "e2e-jars: mvn could not fetch $coord (details: $log)" >&2
    fi
    exit 1
  fi
done
cp "$list" "$stamp"
