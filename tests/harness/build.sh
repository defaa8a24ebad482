#!/bin/sh
# Builds fnworker's JVM runner harness (a stand-in for Flink's Java side):
# Java from proto/ (protoc + grpc-java plugin; google/protobuf/* come from
# protobuf.jar), then tests/harness/src/**/*.java (the runner side) and the
# integration scenarios in tests/integration/scenarios/**/*.java (same
# package, fnworker.harness), in one javac run.
#   usage: sh tests/harness/build.sh OUTDIR
# Writes OUTDIR/harness.jar and OUTDIR/classpath (the runtime classpath line).
set -eu
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
J=/usr/share/java
PLUGIN=/usr/bin/grpc_java_plugin

JARS="grpc-api grpc-context grpc-core grpc-netty grpc-protobuf grpc-protobuf-lite
grpc-stub protobuf protobuf-util guava gson jsr305 perfmark-api
proto-google-common-protos geronimo-annotation-1.3-spec error_prone_annotations
netty-buffer netty-common netty-codec netty-codec-http netty-codec-http2
netty-codec-socks netty-handler netty-handler-proxy netty-resolver netty-transport
netty-transport-native-unix-common"
CP=""
for j in $JARS; do
  if [ ! -f "$J/$j.jar" ]; then
    echo "harness: missing $J/$j.jar (run scripts/install-deps.sh as root)" >&2
    exit 1
  fi
  CP="$CP${CP:+:}$J/$j.jar"
done
command -v protoc >/dev/null || { echo "harness: protoc not found" >&2; exit 1; }
[ -x "$PLUGIN" ] || { echo "harness: $PLUGIN not found (protobuf-compiler-grpc-java-plugin)" >&2; exit 1; }

rm -rf "$OUT/gen" "$OUT/classes"
mkdir -p "$OUT/gen" "$OUT/classes"
PROTOS=$(cd "$ROOT/proto" && find . -name '*.proto' ! -path './google/*' | sed 's|^\./||' | sort)
[ -n "$PROTOS" ] || { echo "harness: no .proto files under $ROOT/proto" >&2; exit 1; }
# shellcheck disable=SC2086
(cd "$ROOT/proto" && protoc -I. --java_out="$OUT/gen" \
  --plugin=protoc-gen-grpc-java="$PLUGIN" --grpc-java_out="$OUT/gen" $PROTOS)

find "$OUT/gen" "$ROOT/tests/harness/src" "$ROOT/tests/integration/scenarios" -name '*.java' \
  | sort > "$OUT/sources.txt"
javac --release 17 -nowarn -encoding UTF-8 -Xmaxerrs 50 -cp "$CP" -d "$OUT/classes" @"$OUT/sources.txt" 2>"$OUT/javac.log" || {
  cat "$OUT/javac.log" >&2; exit 1; }
grep -v '^Note: ' "$OUT/javac.log" >&2 || true
rm -f "$OUT/harness.jar"
jar cf "$OUT/harness.jar" -C "$OUT/classes" .
echo "$OUT/harness.jar:$CP" > "$OUT/classpath"
# A Java stand-in worker, only for checking the harness without the C worker.
printf '#!/bin/sh\nexec java -Xshare:auto -XX:TieredStopAtLevel=1 -cp "%s" fnworker.harness.fake.FakeWorker "$@"\n' \
  "$OUT/harness.jar:$CP" > "$OUT/fake-fnworker"
chmod +x "$OUT/fake-fnworker"
echo "harness: built $OUT/harness.jar"
