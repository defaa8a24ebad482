#!/bin/sh
# scripts/gen-pickle-const-fixtures.sh — regenerates the real bytes of the
# SQL-literal fixtures in tests/unit/codecs/test_pickle_const.c: compiles
# tests/fixtures/pickle_const/GenPickleConst.java against the jars of the
# PyFlink install (Flink's own planner and razorvine Pickler), runs it, and
# decodes every case with that install's Python the way PyFlink does
# (pyflink/fn_execution/utils/operation_utils.py _parse_constant_value), so
# each line shows the bytes and what a Python UDF would receive.
# With --sql it also runs tests/fixtures/pickle_const/sql_literals.py: a real
# Flink SQL query on a local MiniCluster whose Python function gets SQL
# literals as constants, logging the inputConstant bytes PyFlink's worker
# received (the sql_* cases; ~20 s).
# Not part of `make check` (it needs a JDK and the PyFlink venv).
#
# Usage: sh scripts/gen-pickle-const-fixtures.sh [--sql] [BUILD]   (default: build)
#        FNW_FLINK_VENV=build/flink/1.20/venv ... for the LTS line
# Output: "<name> <hex>  # <python repr>" per case, on stdout, then whether
# every case's bytes match the table in tests/unit/codecs/test_pickle_const.c
# (exit status 1 when one differs or is missing there).
set -eu
SQL=""
if [ "${1:-}" = --sql ]; then SQL=1; shift; fi
BUILD=${1:-build}
VENV=${FNW_FLINK_VENV:-$BUILD/flink/2.3/venv}
PY=$VENV/bin/python
P=$("$PY" -c 'import os, pyflink; print(os.path.dirname(pyflink.__file__))')
OUT=$BUILD/pickle_const
mkdir -p "$OUT/classes"
# The planner jar is nested inside flink-table-planner-loader.
unzip -o -q "$P"/lib/flink-table-planner-loader-*.jar flink-table-planner.jar -d "$OUT"
CP="$OUT/flink-table-planner.jar"
for j in "$P"/opt/flink-python-*.jar "$P"/lib/flink-dist-*.jar "$P"/lib/flink-table-api-java-uber-*.jar \
         "$P"/lib/flink-table-runtime-*.jar "$P"/lib/log4j-*.jar; do
    CP="$CP:$j"
done
javac -nowarn -d "$OUT/classes" -cp "$CP" tests/fixtures/pickle_const/GenPickleConst.java
java -cp "$OUT/classes:$CP" GenPickleConst >"$OUT/fixtures.txt"
if [ -n "$SQL" ]; then
    # Flink starts the Python worker with python.executable: this wrapper
    # puts the logging sitecustomize.py on its PYTHONPATH (and keeps Python
    # warnings out of the output Flink 1.20 reads the runner's path from).
    site=$(cd tests/fixtures/pickle_const/site && pwd)
    pyabs=$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")
    printf '#!/bin/sh\nexport PYTHONWARNINGS=ignore PYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH}\nexec %s "$@"\n' "$site" "$pyabs" \
        >"$OUT/python-wrapper.sh"
    chmod +x "$OUT/python-wrapper.sh"
    rm -f "$OUT/sql-consts.txt"
    PATH=$(dirname "$pyabs"):$PATH "$PY" tests/fixtures/pickle_const/sql_literals.py "$(cd "$OUT" && pwd)/python-wrapper.sh" \
        "$(cd "$OUT" && pwd)/sql-consts.txt" >"$OUT/sql.txt"
    sed 's/  #.*//' "$OUT/sql.txt" >>"$OUT/fixtures.txt"
fi
"$PY" - "$OUT/fixtures.txt" tests/unit/codecs/test_pickle_const.c "$SQL" <<'PYEOF'
import re
import sys
from pyflink.fn_execution.utils.operation_utils import _parse_constant_value
generated = {}
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("#"):
        print(line)
        continue
    name, hexs = line.split()
    try:
        _, v = _parse_constant_value(bytes.fromhex(hexs))
        shown = "%s %r" % (type(v).__name__, v)
    except Exception as e:  # noqa: BLE001 - shown, not hidden
        shown = "ERROR %s" % e
    print("%s %s  # %s" % (name, hexs, shown))
    generated[name] = hexs
# The test's table: { "name", <expectation>, "hex" "hex" ... },
table = {}
for m in re.finditer(r'\{\s*"(\w+)",.*?((?:\s*"[0-9a-f]*")+)\s*\},', open(sys.argv[2]).read(), re.S):
    table[m.group(1)] = "".join(re.findall(r'"([0-9a-f]*)"', m.group(2)))
if not sys.argv[3]:  # without --sql, the sql_* rows are not regenerated
    table = {n: h for n, h in table.items() if not n.startswith("sql_")}
bad = sorted(n for n in generated if table.get(n) != generated[n])
extra = sorted(set(table) - set(generated))
if bad or extra:
    print("differs from %s: %s" % (sys.argv[2], " ".join(bad + extra)))
    sys.exit(1)
print("all %d cases match %s" % (len(generated), sys.argv[2]))
PYEOF
