"""Flink SQL and the Table API calling fnworker operations (issue 22):
``fnworker.udf`` / ``fnworker.udtf`` functions registered in a
TableEnvironment (streaming mode, parallelism 1, process mode, the session's
runner dir), run on the MiniCluster. Every case checks the exact rows Flink
outputs (row kinds included where they matter) and that the job launched
fnworker. A fnworker function that reached Python would fail the job
(run_in_fnworker raises), so rows coming out at all show it ran natively.
The last cases run plain PyFlink Python functions in SQL: fnworker relays
them to PyFlink's own worker (docs/design/relay.md)."""

import datetime
import json
import os
import re
import sys
import urllib.request
from decimal import Decimal

import pytest
from pyflink.common import Row
from pyflink.table import DataTypes as D
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import call, col
from pyflink.table.udf import udf as python_udf
from pyflink.version import __version__ as PYFLINK_VERSION

import fnworker
import relay_env
from fnworker import Operation
from fnworker._payload import operation_spec_of
from fnw_e2e import ROOT, launches, run_job_script
from services import http_server, kserve_server, redis_client, redis_server, serve  # noqa: F401

IDENTITY = Operation("identity")
PYFLINK_1 = PYFLINK_VERSION.startswith("1.")


@pytest.fixture
def t_env(runner_dir):
    """A fresh streaming TableEnvironment on the session's MiniCluster, parallelism 1."""
    t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t.get_config().set("parallelism.default", "1")
    return t


@pytest.fixture
def native(runner_dir):
    """Cases whose functions are fnworker operations (skipped when PyFlink's own worker runs
    the suite, FNW_E2E_WORKER=pyflink); asserts, after the case, that it launched fnworker."""
    relay_env.skip_unless_relayed(pytest)
    before = launches(runner_dir)
    yield
    assert launches(runner_dir) > before, "the job did not launch fnworker"


def as_tuple(v):
    """A (nested) Row as a tuple of its values. PyFlink 1.20's collect() builds a nested ROW
    value as Row(<list of its fields>) (pyflink/table/utils.py pickled_bytes_to_python_converter),
    2.x as Row(*fields); both give the same tuple here."""
    if isinstance(v, Row):
        vals = list(v)
        if PYFLINK_1 and len(vals) == 1 and isinstance(vals[0], list):
            vals = vals[0]
        return tuple(as_tuple(x) for x in vals)
    return v


def rows(table_result):
    """The rows of a TableResult as tuples of their values (nested ROWs as tuples)."""
    with table_result.collect() as it:
        return [tuple(as_tuple(x) for x in r) for r in it]


def changelog(table_result):
    """The rows of a TableResult as (row kind, values)."""
    with table_result.collect() as it:
        return [(r.get_row_kind().name, tuple(r)) for r in it]


def failure(table_result_fn):
    with pytest.raises(Exception) as e:
        rows(table_result_fn())
    return str(e.value)


def http_requests(server):
    with urllib.request.urlopen(server.url("/count"), timeout=10) as r:
        return json.loads(r.read())["requests"]


# ---- the package as PyFlink hands it to the JVM (no job runs) ----------------------------

def test_package_unit_tests_with_this_pyflink():
    """python/tests/test_table.py (make python-tests runs it with Debian's python3, without
    PyFlink, which skips its PyFlink half) with this PyFlink: each DataType's Schema.FieldType
    as flink_fn_execution_pb2 decodes it, the functions' pickles, the refusals."""
    import subprocess
    p = subprocess.run([sys.executable, "-m", "unittest", "-v", "tests.test_table"],
                       cwd=os.path.join(ROOT, "python"), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    assert p.returncode == 0 and "skipped" not in p.stdout, p.stdout[-3000:]


def test_the_jvm_gets_the_fixed_payload(t_env):
    """The bytes PyFlink gives the JVM's PythonScalarFunction / PythonTableFunction are the
    fixed pickle run_in_fnworker(<OperationSpec>), not a DelegatingScalarFunction."""
    f = fnworker.udf(Operation("echo", delay_ms=1).with_settings(capacity=7), D.BIGINT(),
                     argument_names=["x"])
    j = f._java_user_defined_function()
    assert j.getClass().getName() == "org.apache.flink.table.functions.python.PythonScalarFunction"
    spec = operation_spec_of(bytes(j.getSerializedPythonFunction()))
    assert spec is not None and spec.startswith(b"\n\x04echo")
    assert j.getPythonFunctionKind().toString() == "GENERAL" and j.isDeterministic()
    t = fnworker.udtf(Operation("echo", repeat=2), [D.BIGINT(), D.STRING()])
    jt = t._java_user_defined_function()
    assert jt.getClass().getName() == "org.apache.flink.table.functions.python.PythonTableFunction"
    assert operation_spec_of(bytes(jt.getSerializedPythonFunction())) is not None
    if hasattr(fnworker._table._pyflink_udf(), "UserDefinedAsyncScalarFunctionWrapper"):
        ja = fnworker.udf(IDENTITY, D.INT(), jvm_async=True)._java_user_defined_function()
        assert ja.getClass().getSimpleName() == "PythonAsyncScalarFunction"
        assert operation_spec_of(bytes(ja.getSerializedPythonFunction())) is not None
    else:
        with pytest.raises(ValueError, match="this is PyFlink 1"):
            fnworker.udf(IDENTITY, D.INT(), jvm_async=True)


# ---- every SQL type through an identity function ------------------------------------------

TYPES = [   # (column, type, a value, another value)
    ("ti", D.TINYINT(), -128, 127),
    ("si", D.SMALLINT(), -32768, 7),
    ("i", D.INT(), 2147483647, -1),
    ("bi", D.BIGINT(), -2 ** 63, 2 ** 40),
    ("bo", D.BOOLEAN(), True, False),
    ("fl", D.FLOAT(), 1.5, -0.25),
    ("db", D.DOUBLE(), 2.125, -1e300),
    ("d1", D.DECIMAL(10, 2), Decimal("12345678.91"), Decimal("-0.05")),
    ("d2", D.DECIMAL(38, 18), Decimal("12345678901234567890.123456789012345678"), Decimal("0E-18")),
    ("dt", D.DATE(), datetime.date(2024, 2, 29), datetime.date(1969, 12, 31)),
    ("tm", D.TIME(), datetime.time(12, 34, 56), datetime.time(0, 0, 0)),
    ("ts0", D.TIMESTAMP(0), datetime.datetime(2024, 1, 2, 3, 4, 5), datetime.datetime(1960, 1, 1)),
    ("ts3", D.TIMESTAMP(3), datetime.datetime(2024, 1, 2, 3, 4, 5, 678000),
     datetime.datetime(1969, 12, 31, 23, 59, 59, 999000)),
    ("ts6", D.TIMESTAMP(6), datetime.datetime(2024, 1, 2, 3, 4, 5, 678000),
     datetime.datetime(2262, 4, 11, 23, 47, 16, 854000)),   # (collect keeps ms)
    ("ch", D.CHAR(3), "abc", "x  "),
    ("vc", D.VARCHAR(10), "hé", ""),
    ("s", D.STRING(), "a longer string \u2603", "z"),
    ("bn", D.BINARY(2), bytearray(b"\x00\xff"), bytearray(b"ab")),
    ("vb", D.VARBINARY(8), bytearray(b""), bytearray(b"\x01\x02\x03")),
    ("by", D.BYTES(), bytearray(b"bytes"), bytearray(b"\x00")),
    ("ar", D.ARRAY(D.INT()), [1, 2, 3], []),
    ("as", D.ARRAY(D.STRING()), ["a", "b"], ["c"]),
    # (from_elements cannot hold a null map value: PythonTableUtils; PRECISE below has one)
    ("mp", D.MAP(D.STRING(), D.BIGINT()), {"k": 1, "n": -2}, {}),
    ("rw", D.ROW([D.FIELD("x", D.INT()), D.FIELD("y", D.STRING()),
                  D.FIELD("z", D.ROW([D.FIELD("q", D.DOUBLE())]))]),
     Row(1, "one", Row(0.5)), Row(2, "two", Row(-1.5))),
]


def source(t_env, with_nulls=True):
    schema = D.ROW([D.FIELD("id", D.INT())] + [D.FIELD(c, t) for c, t, _, _ in TYPES])
    data = [tuple([1] + [a for _, _, a, _ in TYPES]), tuple([2] + [b for _, _, _, b in TYPES])]
    if with_nulls:
        data.append(tuple([3] + [None] * len(TYPES)))
    t_env.create_temporary_view("src", t_env.from_elements(data, schema))


@pytest.mark.smoke
def test_identity_of_every_sql_type_one_function_per_column(t_env, native):
    """One identity function per SQL type, all of them in one SELECT: each gives its
    argument back exactly (DECIMAL and TIMESTAMP precisions, CHAR padding, nested ROW,
    ARRAY and MAP with null elements, a row of nulls)."""
    source(t_env)
    for c, t, _, _ in TYPES:
        t_env.create_temporary_function("id_" + c, fnworker.udf(IDENTITY, t))
    sel = ", ".join("id_%s(`%s`), `%s`" % (c, c, c) for c, _, _, _ in TYPES)
    got = rows(t_env.execute_sql("SELECT id, %s FROM src" % sel))
    assert [r[0] for r in got] == [1, 2, 3]
    for r in got:
        values = r[1:]
        assert values[0::2] == values[1::2], r     # f(x) == x, column by column
    assert got[0][1::2] == tuple(as_tuple(a) for _, _, a, _ in TYPES)
    assert got[2][1::2] == (None,) * len(TYPES)


# Values Python's collect() cannot carry (it keeps milliseconds of a TIMESTAMP, and fails on a null
# inside an ARRAY, MAP or ROW: pyflink/table/utils.py pickled_bytes_to_python_converter), compared as
# Flink's own text of them: CAST(f(x) AS STRING) against CAST(x AS STRING).
PRECISE = [("t9", D.TIMESTAMP(9)), ("t6", D.TIMESTAMP(6)), ("t0", D.TIMESTAMP(0)),
           ("d", D.DECIMAL(38, 18)), ("ar", D.ARRAY(D.INT())), ("mp", D.MAP(D.STRING(), D.BIGINT())),
           ("rw", D.ROW([D.FIELD("a", D.INT()), D.FIELD("b", D.STRING())]))]  # (a column of ids)
# Columns computed from a column (a VALUES of literal CASTs would reach the function as constants,
# which carry no precision: Flink splits such a VALUES into one-row branches and folds the CASTs).
PRECISE_VIEW = """CREATE TEMPORARY VIEW p AS SELECT id,
  CASE WHEN id = 1 THEN CAST('2024-01-02 03:04:05.123456789' AS TIMESTAMP(9)) END AS t9,
  CASE WHEN id = 1 THEN CAST('1969-12-31 23:59:59.999999' AS TIMESTAMP(6)) END AS t6,
  CASE WHEN id = 1 THEN CAST('1900-01-01 00:00:01' AS TIMESTAMP(0)) END AS t0,
  CASE WHEN id = 1 THEN CAST('12345678901234567890.123456789012345678' AS DECIMAL(38, 18)) END AS d,
  CASE WHEN id = 1 THEN ARRAY[1, CAST(NULL AS INT), id + 2] END AS ar,
  CASE WHEN id = 1 THEN MAP['k', CAST(NULL AS BIGINT)] END AS mp,
  rw
  FROM ids"""
PRECISE_TEXT = [(1, "2024-01-02 03:04:05.123456789", "1969-12-31 23:59:59.999999", "1900-01-01 00:00:01",
                 "12345678901234567890.123456789012345678", "[1, NULL, 3]", "{k=NULL}", "(NULL, x)"),
                (2, None, None, None, None, None, None, None)]


def test_timestamp_and_decimal_precision_and_nulls_inside_containers(t_env, native):
    """TIMESTAMP(9)/(6)/(0) before and after 1970, DECIMAL(38, 18), an ARRAY, a MAP and a ROW
    holding nulls: identity gives each back exactly, as Flink prints them."""
    t_env.create_temporary_view("ids", t_env.from_elements(
        [(1, Row(None, "x")), (2, None)], D.ROW([D.FIELD("id", D.INT()), D.FIELD(*PRECISE[-1])])))
    t_env.execute_sql(PRECISE_VIEW)
    for c, t in PRECISE:
        t_env.create_temporary_function("id_" + c, fnworker.udf(IDENTITY, t))
    sel = ", ".join("CAST(id_%s(`%s`) AS STRING)" % (c, c) for c, _ in PRECISE)
    assert rows(t_env.execute_sql("SELECT id, %s FROM p" % sel)) == PRECISE_TEXT


def test_identity_of_a_row_of_arguments(t_env, native):
    """A ROW-typed result: the operation's output row is the result. identity over
    ROW<argument names...> gives the arguments back as one ROW column (no row of nulls here:
    collect() cannot carry a null inside a ROW)."""
    source(t_env, with_nulls=False)
    names = [c for c, _, _, _ in TYPES]
    result = D.ROW([D.FIELD(c, t) for c, t, _, _ in TYPES])
    t_env.create_temporary_function("all_of", fnworker.udf(IDENTITY, result, argument_names=names))
    args = ", ".join("`%s`" % c for c in names)
    got = rows(t_env.execute_sql("SELECT id, all_of(%s) FROM src" % args))
    assert got == [(1, tuple(as_tuple(a) for _, _, a, _ in TYPES)),
                   (2, tuple(as_tuple(b) for _, _, _, b in TYPES))]


def constants_job(t_env, lits, extra=(), typed=False):
    """consts(x, <literals>): identity over ROW<x, c0, c1, ...> gives the literals back; extra
    are (SQL, type, value) called one function each (collect() cannot carry a null inside a
    ROW). typed: the functions declare input_types (the literals' types)."""
    names = ["c%d" % i for i in range(len(lits))]
    result = D.ROW([D.FIELD("x", D.INT())] + [D.FIELD(n, t) for n, (_, t, _) in zip(names, lits)])
    types = [D.INT()] + [t for _, t, _ in lits]
    t_env.create_temporary_function("consts", fnworker.udf(
        IDENTITY, result, argument_names=["x"] + names, input_types=types if typed else None))
    sel = ["consts(x, %s)" % ", ".join(l for l, _, _ in lits)]
    for i, (lit, t, _) in enumerate(extra):
        t_env.create_temporary_function("one%d" % i, fnworker.udf(
            IDENTITY, t, input_types=[t] if typed else None))
        sel.append("one%d(%s)" % (i, lit))
    t_env.create_temporary_view("src", t_env.from_elements([(1,), (2,)], D.ROW([D.FIELD("x", D.INT())])))
    got = rows(t_env.execute_sql("SELECT %s FROM src" % ", ".join(sel)))
    assert got == [(tuple([x] + [v for _, _, v in lits]),) + tuple(v for _, _, v in extra)
                   for x in (1, 2)]


def test_constants_typed_from_their_values(t_env, native):
    """Literals as arguments beside a column, without input_types. Flink sends each as an
    inputConstant: a type byte and a pickle of the Java value, without its SQL type
    (PythonBridgeUtils.convertLiteralToPython), so fnworker types them from the value
    (codecs/pickle_const.h): every integer literal BIGINT, FLOAT and DOUBLE DOUBLE,
    CHAR/VARCHAR STRING; the function's result type says so. Each comes back as written.
    (A BINARY literal such as X'00ff' Flink itself refuses when it plans the job:
    convertLiteralToPython knows no BINARY.)"""
    constants_job(t_env, [
        ("CAST(7 AS TINYINT)", D.BIGINT(), 7), ("CAST(-7 AS SMALLINT)", D.BIGINT(), -7),
        ("42", D.BIGINT(), 42), ("9000000000", D.BIGINT(), 9000000000),
        ("TRUE", D.BOOLEAN(), True), ("CAST(1.5 AS FLOAT)", D.DOUBLE(), 1.5),
        ("CAST(2.25 AS DOUBLE)", D.DOUBLE(), 2.25),
        ("'abc'", D.STRING(), "abc"), ("CAST('xy' AS VARCHAR(5))", D.STRING(), "xy"),
        ("'h\u00e9 \u2603'", D.STRING(), "h\u00e9 \u2603"),
        ("DATE '2024-02-29'", D.DATE(), datetime.date(2024, 2, 29)),
        ("TIME '12:34:56'", D.TIME(0), datetime.time(12, 34, 56)),
    ])


def test_constants_of_every_literal_type_with_input_types(t_env, native):
    """With input_types the function declares its arguments' SQL types; fnworker converts each
    literal to its declared type (OperationSpec.argument_types): TINYINT, SMALLINT, INT,
    FLOAT, DECIMAL(p, s), CHAR(n), TIMESTAMP(3), typed NULLs. Each comes back as written."""
    constants_job(t_env, [
        ("CAST(7 AS TINYINT)", D.TINYINT(), 7), ("CAST(-7 AS SMALLINT)", D.SMALLINT(), -7),
        ("42", D.INT(), 42), ("9000000000", D.BIGINT(), 9000000000),
        ("TRUE", D.BOOLEAN(), True), ("CAST(1.5 AS FLOAT)", D.FLOAT(), 1.5),
        ("CAST(2.25 AS DOUBLE)", D.DOUBLE(), 2.25), ("1.25", D.DECIMAL(3, 2), Decimal("1.25")),
        ("'abc'", D.CHAR(3), "abc"), ("CAST('xy' AS VARCHAR(5))", D.VARCHAR(5), "xy"),
        ("DATE '2024-02-29'", D.DATE(), datetime.date(2024, 2, 29)),
        ("TIME '12:34:56'", D.TIME(0), datetime.time(12, 34, 56)),
        ("TIMESTAMP '2024-01-02 03:04:05.678'", D.TIMESTAMP(3),
         datetime.datetime(2024, 1, 2, 3, 4, 5, 678000)),
    ], extra=[("CAST(NULL AS INT)", D.INT(), None), ("CAST(NULL AS DATE)", D.DATE(), None),
              ("CAST(NULL AS DECIMAL(5, 1))", D.DECIMAL(5, 1), None)], typed=True)


# ---- calls: nested, two in one SELECT, in WHERE, from the Table API -------------------------

def doubler(server, mode_batch=False):
    """http /batch doubles numbers: one request per row ({"inputs": [x]})."""
    return Operation("http", method="POST", url=server.url("/batch"), body='{{"inputs": [{x}]}}',
                     **{"result.y": "/outputs/0"})


def ints(t_env, n=4):
    t_env.create_temporary_view("nums", t_env.from_elements(
        [(i, i * 10) for i in range(1, n + 1)], D.ROW([D.FIELD("id", D.INT()), D.FIELD("x", D.BIGINT())])))


def test_nested_calls_and_two_functions_in_one_select(t_env, native, http_server):
    """f(g(x)), g(f(x)) and two functions side by side: dbl over HTTP doubles, ident
    returns its argument; every call's result lands in its own column, in input order."""
    ints(t_env)
    t_env.create_temporary_function("dbl", fnworker.udf(doubler(http_server), D.BIGINT(),
                                                        argument_names=["x"]))
    t_env.create_temporary_function("ident", fnworker.udf(IDENTITY, D.BIGINT()))
    got = rows(t_env.execute_sql(
        "SELECT id, dbl(dbl(x)), ident(dbl(x)), dbl(ident(x)), ident(x), dbl(x) FROM nums"))
    assert got == [(i, 40 * i, 20 * i, 20 * i, 10 * i, 20 * i) for i in range(1, 5)]


@pytest.mark.smoke
def test_function_in_where_and_from_the_table_api(t_env, native):
    """A fnworker function in WHERE (Flink splits the Python call out of the filter), and the
    same function from the Table API: call("ident", col("x")) and the wrapper called directly."""
    ints(t_env)
    t_env.create_temporary_function("ident", fnworker.udf(IDENTITY, D.BIGINT()))
    assert rows(t_env.execute_sql("SELECT id FROM nums WHERE ident(x) > 20")) == [(3,), (4,)]
    ident_int = fnworker.udf(IDENTITY, D.INT())     # id is INT: identity's result type is its argument's
    table = t_env.from_path("nums")
    got = rows(table.select(col("id"), call("ident", col("x")), ident_int(col("id"))).execute())
    assert got == [(i, 10 * i, i) for i in range(1, 5)]


def test_jvm_async_options_fill_only_what_the_spec_leaves_unset(t_env, async_scalar, native):
    """Under jvm_async Flink sends AsyncOptions (table.exec.async-scalar.*): the spec's own
    timeout_ms wins (5 s: calls of 500 ms pass under Flink's 100 ms), and Flink's timeout
    applies to a spec without one (a hanging call fails after 200 ms, fnworker's message)."""
    ints(t_env, 3)
    t_env.get_config().set("table.exec.async-scalar.timeout", "100 ms")
    op = Operation("echo", delay_ms=500).with_settings(timeout_ms=5000)
    t_env.create_temporary_function("slow", fnworker.udf(op, D.BIGINT(), jvm_async=True))
    assert rows(t_env.execute_sql("SELECT id, slow(x) FROM nums")) == [(1, 10), (2, 20), (3, 30)]
    t_env.get_config().set("table.exec.async-scalar.timeout", "200 ms")
    t_env.create_temporary_function("hangs", fnworker.udf(Operation("echo", hang=True), D.BIGINT(),
                                                          jvm_async=True))
    msg = failure(lambda: t_env.execute_sql("SELECT id, hangs(x) FROM nums"))
    assert "operation 'echo' timed out after 200 ms" in msg, msg[-3000:]


JITTER = Operation("echo", jitter_ms=30, seed=7).with_settings(output_mode="UNORDERED", capacity=64)


def test_results_keep_input_order_when_calls_complete_out_of_order(t_env, native):
    """40 calls in flight with random delays, output_mode UNORDERED: Flink's scalar operator
    pairs results with its inputs in order, so each row still gets its own result."""
    ints(t_env, 40)
    t_env.create_temporary_function("slow", fnworker.udf(JITTER, D.BIGINT()))
    assert "PythonCalc(" in t_env.explain_sql("SELECT id, slow(x) FROM nums")
    assert rows(t_env.execute_sql("SELECT id, slow(x) FROM nums")) == [(i, 10 * i) for i in range(1, 41)]


@pytest.fixture
def async_scalar():
    if not hasattr(fnworker._table._pyflink_udf(), "UserDefinedAsyncScalarFunctionWrapper"):
        pytest.skip("PyFlink %s has no async scalar functions (2.3 and later)" % PYFLINK_VERSION)


def test_jvm_async_scalar_operator(t_env, async_scalar, native):
    """jvm_async=True: Flink plans its async scalar operator
    (flink:transform:async_scalar_function:v1, PyFlink 2.x); the same rows."""
    ints(t_env, 40)
    t_env.create_temporary_function("slow", fnworker.udf(JITTER, D.BIGINT(), jvm_async=True))
    assert "PythonAsyncCalc(" in t_env.explain_sql("SELECT id, slow(x) FROM nums")
    assert rows(t_env.execute_sql("SELECT id, slow(x) FROM nums")) == [(i, 10 * i) for i in range(1, 41)]


def test_changelog_input_keeps_row_kinds(t_env, native):
    """A GROUP BY count (an update stream) feeding the function: every row keeps its kind
    (+I, -U, +U), each paired with its own result."""
    t_env.create_temporary_view("words", t_env.from_elements(
        [("a",), ("b",), ("a",), ("a",)], D.ROW([D.FIELD("w", D.STRING())])))
    t_env.create_temporary_function("ident", fnworker.udf(IDENTITY, D.BIGINT()))
    got = changelog(t_env.execute_sql(
        "SELECT w, ident(c) FROM (SELECT w, COUNT(*) AS c FROM words GROUP BY w)"))
    assert got == [("INSERT", ("a", 1)), ("INSERT", ("b", 1)),
                   ("UPDATE_BEFORE", ("a", 1)), ("UPDATE_AFTER", ("a", 2)),
                   ("UPDATE_BEFORE", ("a", 2)), ("UPDATE_AFTER", ("a", 3))]


def test_table_function_emits_rows(t_env, native):
    """fnworker.udtf: echo with repeat 2 emits each argument row twice; LATERAL TABLE (and the
    Table API's join_lateral) joins them to their input row."""
    ints(t_env, 3)
    t_env.create_temporary_function("twice", fnworker.udtf(Operation("echo", repeat=2),
                                                           [D.INT(), D.BIGINT()]))
    got = rows(t_env.execute_sql(
        "SELECT id, a, b FROM nums, LATERAL TABLE(twice(id, x)) AS T(a, b)"))
    assert got == [(i, i, 10 * i) for i in range(1, 4) for _ in range(2)]
    # the Table API: join_lateral
    table = t_env.from_path("nums").join_lateral(call("twice", col("id"), col("x")).alias("a", "b"))
    got = rows(table.select(col("id"), col("a"), col("b")).execute())
    assert got == [(i, i, 10 * i) for i in range(1, 4) for _ in range(2)]
    # a fnworker scalar call as the table function's argument (planned before it)
    t_env.create_temporary_function("ident", fnworker.udf(IDENTITY, D.BIGINT()))
    got = rows(t_env.execute_sql(
        "SELECT id, a, b FROM nums, LATERAL TABLE(twice(id, ident(x))) AS T(a, b)"))
    assert got == [(i, i, 10 * i) for i in range(1, 4) for _ in range(2)]


# ---- services from SQL ------------------------------------------------------------------

def test_redis_lookup_from_sql(t_env, native, redis_server):
    """GET price:{id} as a scalar function: the argument is named id so the command template
    reads it as it reads a DataStream row's field; a miss gives NULL."""
    r = redis_client(redis_server)
    for i in (1, 2, 4):
        r.set("sqlprice:%d" % i, "%d.5" % i)
    ints(t_env)
    price = fnworker.udf(Operation("redis", address=redis_server.address, command="GET sqlprice:{id}",
                                   result_field="price"), D.DOUBLE(), argument_names=["id"])
    t_env.create_temporary_function("price", price)
    got = rows(t_env.execute_sql("SELECT id, price(id) FROM nums"))
    assert got == [(1, 1.5), (2, 2.5), (3, None), (4, 4.5)]


def test_batched_http_scoring_from_sql(t_env, native, http_server):
    """The batch form from SQL: 12 rows, batches of 4, one POST per batch ({"inputs": [...]},
    each row's result at /outputs/{i}); rows in input order."""
    ints(t_env, 12)
    op = Operation("http", method="POST", url=http_server.url("/batch"), body="{x}",
                   batch_body='{"inputs": {items}}', **{"result.y": "/outputs/{i}"})
    op = op.with_settings(mode="BATCH", batch_size=4, batch_timeout_ms=1000, timeout_ms=10000)
    t_env.create_temporary_function("score", fnworker.udf(op, D.BIGINT(), argument_names=["x"]))
    before = http_requests(http_server)
    got = rows(t_env.execute_sql("SELECT id, score(x) FROM nums"))
    assert got == [(i, 20 * i) for i in range(1, 13)]
    assert http_requests(http_server) - before == 3


def test_batched_kserve_scoring_from_sql(t_env, native, kserve_server):
    """The test server's model `linear` over an ARRAY<FLOAT> column, 4 rows per ModelInfer."""
    W = [[1.0, 2.0], [0.0, -1.0], [0.5, 0.0], [3.0, 1.0]]
    data = [(i, [float(i), 0.5, 2.0, -1.0]) for i in range(6)]
    t_env.create_temporary_view("feats", t_env.from_elements(
        data, D.ROW([D.FIELD("id", D.INT()), D.FIELD("features", D.ARRAY(D.FLOAT()))])))
    model = Operation("kserve", target=kserve_server.address, model_name="linear",
                      inputs="x:FP32[4]=features", outputs="y:FP32[2]=scores")
    model = model.with_settings(mode="BATCH", batch_size=4, batch_timeout_ms=1000, timeout_ms=10000)
    t_env.create_temporary_function("score", fnworker.udf(model, D.ARRAY(D.FLOAT()),
                                                          argument_names=["features"]))
    got = rows(t_env.execute_sql("SELECT id, score(features) FROM feats"))
    want = [(i, [sum(x[k] * W[k][j] for k in range(4)) + (0.5, -1.0)[j] for j in range(2)])
            for i, x in data]
    assert [(i, list(s)) for i, s in got] == want


def test_failing_call_fails_the_job_with_fnworkers_message(t_env, native):
    ints(t_env, 2)
    t_env.create_temporary_function("boom", fnworker.udf(
        Operation("echo", fail_every=1, fail_message="sql-call-failed-here"), D.BIGINT()))
    msg = failure(lambda: t_env.execute_sql("SELECT boom(x) FROM nums"))
    assert "sql-call-failed-here" in msg, msg[-3000:]


# ---- fnworker and Python functions in one query ---------------------------------------------

def mixed(t_env, jvm_async=False):
    ints(t_env)
    t_env.create_temporary_function("ident", fnworker.udf(IDENTITY, D.BIGINT(), jvm_async=jvm_async))
    t_env.create_temporary_function("plus_one", python_udf(lambda v: v + 1, result_type=D.BIGINT()))


def test_fnworker_and_python_functions_in_one_projection_fail_clearly(t_env, native):
    """Flink plans ident (fnworker) and plus_one (Python) into one PythonCalc, also from two
    query blocks (its Calc merge rules fuse them, plus_one(ident(x))): fnworker cannot split
    the operator, and the job fails saying so."""
    mixed(t_env)
    for q in ("SELECT id, ident(x), plus_one(x) FROM nums",
              "SELECT id, plus_one(y) FROM (SELECT id, ident(x) AS y FROM nums)"):
        msg = failure(lambda: t_env.execute_sql(q))
        assert "calls both fnworker functions and Python functions" in msg, msg[-3000:]


@pytest.mark.parametrize("query, want", [
    ("SELECT id, ident(x), plus_one(x) FROM nums", [(i, 10 * i, 10 * i + 1) for i in range(1, 5)]),
    ("SELECT id, plus_one(ident(x)) FROM nums", [(i, 10 * i + 1) for i in range(1, 5)]),
    ("SELECT id, ident(plus_one(x)) FROM nums", [(i, 10 * i + 1) for i in range(1, 5)]),
])
def test_jvm_async_functions_mix_with_python_functions(t_env, async_scalar, native, query, want):
    """With jvm_async=True Flink plans the fnworker function into a PythonAsyncCalc of its own,
    apart from the Python function's PythonCalc: side by side and nested either way, fnworker
    runs one operator and relays the other."""
    mixed(t_env, jvm_async=True)
    plan = t_env.explain_sql(query)
    assert "PythonAsyncCalc(" in plan and "PythonCalc(" in plan, plan
    assert rows(t_env.execute_sql(query)) == want


# ---- SQL DDL: CREATE TEMPORARY SYSTEM FUNCTION ... LANGUAGE PYTHON ---------------------------

def test_create_function_language_python_from_a_module(t_env, native, tmp_path, monkeypatch):
    """The function object lives in a module on the path; SQL registers it by name."""
    mod = "fnw_sql_case_%d" % os.getpid()
    (tmp_path / (mod + ".py")).write_text(
        "import fnworker\nfrom pyflink.table import DataTypes\n"
        "ident = fnworker.udf(fnworker.Operation('identity'), DataTypes.BIGINT())\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ints(t_env, 3)
    t_env.execute_sql("CREATE TEMPORARY SYSTEM FUNCTION ident AS '%s.ident' LANGUAGE PYTHON" % mod)
    assert rows(t_env.execute_sql("SELECT id, ident(x) FROM nums")) == [(1, 10), (2, 20), (3, 30)]
    t_env.execute_sql("DROP TEMPORARY SYSTEM FUNCTION ident")


# ---- the docs' example, as written ---------------------------------------------------------

SECTION = "## Flink SQL: one function, batched calls"


def docs_example():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(re.escape(SECTION) + r"\n.*?```python\n(.*?)```", text, re.S)
    assert m, "README.md has no python block after %r" % SECTION
    return m.group(1)


def test_docs_sql_example_as_written(runner_dir, http_server):
    relay_env.skip_unless_relayed(pytest)
    source = docs_example()
    assert '"http://127.0.0.1:8080/batch"' in source
    script = os.path.join(runner_dir, "docs_sql_example_%d.py" % os.getpid())
    with open(script, "w", encoding="utf-8") as f:
        f.write(source.replace('"http://127.0.0.1:8080/batch"', '"%s"' % http_server.url("/batch")))
    before = launches(runner_dir)
    p = run_job_script(script, runner_dir)
    assert p.returncode == 0, p.stdout[-3000:]
    assert launches(runner_dir) > before
    got = re.findall(r"^\| *(\S+) \| *(\S+) \| *(\S+) \|$", p.stdout, re.M)
    assert got[1:] == [("+I", "1", "5.0"), ("+I", "2", "-3.0"), ("+I", "3", "0.5")], p.stdout[-3000:]


# ---- Python functions in SQL under fnworker (the relay) ----------------------------------

@pytest.mark.smoke
def test_python_udf_in_sql_gives_pyflinks_rows(t_env, runner_dir):
    """A plain PyFlink udf in a SQL job: under fnworker (the default) the relay runs it in
    PyFlink's own worker; the rows are PyFlink's (FNW_E2E_WORKER=pyflink checks them against
    PyFlink alone)."""
    before = launches(runner_dir)
    ints(t_env)
    t_env.create_temporary_function("plus_one", python_udf(lambda v: v + 1, result_type=D.BIGINT()))
    got = rows(t_env.execute_sql("SELECT id, plus_one(x) FROM nums WHERE plus_one(id) > 2"))
    assert got == [(2, 21), (3, 31), (4, 41)]
    assert (launches(runner_dir) > before) == relay_env.RELAYED
