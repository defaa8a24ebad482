"""Every DataStream type through `identity` on a real Flink: Java values made
in the JVM (jvals), Flink's Java serializers write them to fnworker and read
fnworker's output back, and the results must equal the inputs exactly (Row's
deep equality: floats by bits, arrays, lists and maps by content). Nulls
wherever Flink's wire allows them (ROW fields, BASIC/OBJECT array elements,
MAP values), edge values (min/max, NaN/inf/-0.0, empty strings, unicode with
NUL and astral characters, empty collections) and deep nesting."""

import datetime
import decimal

import pytest
from pyflink.common import Row, Time, Types
from pyflink.common.typeinfo import LocalTimeTypeInfo

import fnworker
from fnworker import Operation
from fnw_e2e import collect
import jvals as J
from jvals import b, c, d, f, i, l, s, z


def identity(t):
    return lambda ds: fnworker.ordered_wait(ds, Operation("identity"), Time.seconds(10), output_type=t)


def jvm():
    from pyflink.java_gateway import get_gateway
    return get_gateway().jvm


def big_int(text):
    return jvm().java.math.BigInteger(text)


def big_dec(text):
    return jvm().java.math.BigDecimal(text)


def local(kind):
    return LocalTimeTypeInfo(getattr(LocalTimeTypeInfo.TimeType, kind))


NAN32 = float("nan")
UNICODE = ["", "a", "é\u0000x", "\U0001F600\u4e2d", "x" * 70000]


def cases():
    """(id, PyFlink type, a function making the Java values), one per type."""
    T = Types
    j = jvm
    return [
        ("STRING", T.STRING(), lambda: UNICODE),
        ("BYTE", T.BYTE(), lambda: [b(-128), b(0), b(127)]),
        ("BOOLEAN", T.BOOLEAN(), lambda: [z(True), z(False)]),
        ("SHORT", T.SHORT(), lambda: [s(-32768), s(0), s(32767)]),
        ("INT", T.INT(), lambda: [i(-2 ** 31), i(0), i(2 ** 31 - 1)]),
        ("LONG", T.LONG(), lambda: [l(-2 ** 63), l(0), l(2 ** 63 - 1)]),
        ("FLOAT", T.FLOAT(), lambda: [f(1.5), f(float("inf")), f(float("-inf")), f(NAN32), f(-0.0),
                                      f(1.401298464324817e-45), f(3.4028234663852886e38)]),
        ("DOUBLE", T.DOUBLE(), lambda: [d(1.5), d(float("inf")), d(float("-inf")), d(float("nan")),
                                        d(-0.0), d(5e-324), d(1.7976931348623157e308)]),
        ("CHAR", T.CHAR(), lambda: [c("a"), c("\u00e9"), c("\u4e2d"), c("\u0000"), c("\uffff")]),
        ("BIG_INT", T.BIG_INT(), lambda: [big_int("0"), big_int(str(2 ** 200)),
                                          big_int(str(-2 ** 200 + 1)), big_int("-1")]),
        ("BIG_DEC", T.BIG_DEC(), lambda: [big_dec("1.5"), big_dec("-123456789012345678901234567890.0001"),
                                          big_dec("0E-30"), big_dec("1E+400")]),
        ("SQL_DATE", T.SQL_DATE(), lambda: [j().java.sql.Date.valueOf("2024-02-29"),
                                            j().java.sql.Date.valueOf("1970-01-01"),
                                            j().java.sql.Date.valueOf("1900-03-01")]),
        ("SQL_TIME", T.SQL_TIME(), lambda: [j().java.sql.Time.valueOf("00:00:00"),
                                            j().java.sql.Time.valueOf("23:59:59")]),
        ("SQL_TIMESTAMP", T.SQL_TIMESTAMP(), lambda: [  # milliseconds: see test_sql_timestamp_*
            j().java.sql.Timestamp.valueOf("2024-02-29 12:30:45.123"),
            j().java.sql.Timestamp.valueOf("1969-12-31 23:59:59.999"),
            j().java.sql.Timestamp.valueOf("1970-01-01 00:00:00")]),
        ("INSTANT", T.INSTANT(), lambda: [j().java.time.Instant.ofEpochSecond(0, 0),
                                          j().java.time.Instant.ofEpochSecond(-1, 999999999),
                                          j().java.time.Instant.ofEpochSecond(253402300799, 123456789)]),
        ("LOCAL_DATE", local("LOCAL_DATE"), lambda: [j().java.time.LocalDate.of(2024, 2, 29),
                                                     j().java.time.LocalDate.of(-5, 1, 1)]),
        ("LOCAL_TIME", local("LOCAL_TIME"), lambda: [j().java.time.LocalTime.of(23, 59, 59, 999999999),
                                                     j().java.time.LocalTime.of(0, 0)]),
        ("LOCAL_DATETIME", local("LOCAL_DATE_TIME"), lambda: [
            j().java.time.LocalDateTime.of(2024, 2, 29, 12, 30, 45, 1),
            j().java.time.LocalDateTime.of(1, 1, 1, 0, 0)]),
        ("PRIMITIVE_ARRAY<INT>", T.PRIMITIVE_ARRAY(T.INT()),
         lambda: [J.prim("int", [1, -2 ** 31, 2 ** 31 - 1]), J.prim("int", [])]),
        ("PRIMITIVE_ARRAY<BYTE>", T.PRIMITIVE_ARRAY(T.BYTE()),
         lambda: [J.prim("byte", [0, -1, 127, -128]), J.prim("byte", [])]),
        ("PRIMITIVE_ARRAY<each>", T.ROW([T.PRIMITIVE_ARRAY(T.BOOLEAN()), T.PRIMITIVE_ARRAY(T.SHORT()),
                                         T.PRIMITIVE_ARRAY(T.LONG()), T.PRIMITIVE_ARRAY(T.FLOAT()),
                                         T.PRIMITIVE_ARRAY(T.DOUBLE()), T.PRIMITIVE_ARRAY(T.CHAR())]),
         lambda: [J.row(J.prim("boolean", [True, False]), J.prim("short", [-32768, 32767]),
                        J.prim("long", [-2 ** 63, 2 ** 63 - 1]), J.prim("float", [NAN32, -0.0]),
                        J.prim("double", [float("inf"), 5e-324]), J.prim("char", ["a", "\u4e2d"])),
                  J.row(None, None, None, None, None, None)]),
        ("BASIC_ARRAY<STRING>", T.BASIC_ARRAY(T.STRING()),
         lambda: [J.objects(["a", None, "", "\u4e2d"], j().java.lang.String),
                  J.objects([], j().java.lang.String)]),
        ("BASIC_ARRAY<INT>", T.BASIC_ARRAY(T.INT()), lambda: [J.boxed("int", [1, None, -1]),
                                                               J.boxed("int", [])]),
        ("BASIC_ARRAY<each>", T.ROW([T.BASIC_ARRAY(T.BOOLEAN()), T.BASIC_ARRAY(T.BYTE()),
                                     T.BASIC_ARRAY(T.SHORT()), T.BASIC_ARRAY(T.LONG()),
                                     T.BASIC_ARRAY(T.FLOAT()), T.BASIC_ARRAY(T.DOUBLE()),
                                     T.BASIC_ARRAY(T.CHAR())]),
         lambda: [J.row(J.boxed("boolean", [True, None]), J.boxed("byte", [None, -128]),
                        J.boxed("short", [1, None]), J.boxed("long", [None, 2 ** 63 - 1]),
                        J.boxed("float", [NAN32, None]), J.boxed("double", [None, -0.0]),
                        J.boxed("char", ["x", None]))]),
        ("OBJECT_ARRAY<ROW>", T.OBJECT_ARRAY(T.ROW([T.INT(), T.STRING()])),
         lambda: [J.objects([J.row(i(1), "a"), None, J.row(None, None)], j().org.apache.flink.types.Row),
                  J.objects([], j().org.apache.flink.types.Row)]),
        ("OBJECT_ARRAY<LIST>", T.OBJECT_ARRAY(T.LIST(T.STRING())),
         lambda: [J.objects([J.jlist(["a"]), J.jlist([]), None], j().java.util.List)]),
        ("LIST<LONG>", T.LIST(T.LONG()), lambda: [J.jlist([l(1), l(-2 ** 63)]), J.jlist([])]),
        ("LIST<ROW>", T.LIST(T.ROW([T.STRING(), T.DOUBLE()])),
         lambda: [J.jlist([J.row("x", d(1.0)), J.row(None, None)]), J.jlist([])]),
        ("MAP<STRING,INT>", T.MAP(T.STRING(), T.INT()),
         lambda: [J.jmap([("a", i(1)), ("b", None), ("", i(-1))]), J.jmap([])]),
        ("MAP<LONG,LIST<STRING>>", T.MAP(T.LONG(), T.LIST(T.STRING())),
         lambda: [J.jmap([(l(1), J.jlist(["x", "y"])), (l(2), J.jlist([])), (l(3), None)])]),
        ("TUPLE", T.TUPLE([T.INT(), T.STRING(), T.DOUBLE()]),
         lambda: [J.tup(i(1), "a", d(0.5)), J.tup(i(-1), "", d(float("nan")))]),
        ("TUPLE<TUPLE>", T.TUPLE([T.TUPLE([T.LONG(), T.BOOLEAN()]), T.LIST(T.INT())]),
         lambda: [J.tup(J.tup(l(7), z(True)), J.jlist([i(1)]))]),
        ("ROW nulls", T.ROW([T.INT(), T.STRING(), T.DOUBLE(), T.LIST(T.INT()), T.MAP(T.STRING(), T.LONG())]),
         lambda: [J.row(None, None, None, None, None), J.row(i(1), "x", d(2.0), J.jlist([i(3)]),
                                                             J.jmap([("k", l(4))]))]),
        ("ROW_NAMED nested", T.ROW_NAMED(["id", "inner"], [T.LONG(), T.ROW_NAMED(
            ["name", "tags", "deeper"], [T.STRING(), T.BASIC_ARRAY(T.STRING()),
                                         T.ROW_NAMED(["x"], [T.TUPLE([T.INT(), T.CHAR()])])])]),
         lambda: [J.row(l(1), J.row("n", J.objects(["t", None], j().java.lang.String),
                                    J.row(J.tup(i(5), c("z"))))),
                  J.row(l(2), J.row(None, None, None)), J.row(None, None)]),
        ("ROW 65 fields", T.ROW([T.INT()] * 65), lambda: [J.row(*[i(n) if n % 2 else None for n in range(65)])]),
        ("deep LIST", deep_list_type(20), lambda: [deep_list(20)]),
        ("PICKLED_BYTE_ARRAY", T.PICKLED_BYTE_ARRAY(), lambda: [pickled({"a": [1, 2]}), pickled(None),
                                                                pickled(b"")]),
    ]


def deep_list_type(n):
    t = Types.INT()
    for _ in range(n):
        t = Types.LIST(t)
    return t


def deep_list(n):
    v = J.jlist([i(42)])
    for _ in range(n - 1):
        v = J.jlist([v, J.jlist([])])
    return v


def pickled(obj):
    import pickle
    return pickle.dumps(obj)


@pytest.mark.parametrize("case", [c_[0] for c_ in cases()])
def test_identity_keeps_type(env, ran_in_fnworker, case):
    name, t, make = next(c_ for c_ in cases() if c_[0] == case)
    J.assert_roundtrip(env, make(), t, run=identity(t))


def test_sql_timestamp_travels_in_milliseconds(env, ran_in_fnworker):
    """Flink's Python path serializes SQL_TIMESTAMP with precision 3
    (PythonTypeUtils.TypeInfoToSerializerConverter: TimestampSerializer(3)),
    so the nanoseconds below the millisecond never reach fnworker; the
    millisecond is floored, before 1970 too."""
    ts = jvm().java.sql.Timestamp.valueOf
    J.assert_roundtrip(env, [ts("2024-02-29 12:30:45.123456789"), ts("1969-12-31 23:59:59.999999999")],
                       Types.SQL_TIMESTAMP(),
                       expected=[ts("2024-02-29 12:30:45.123"), ts("1969-12-31 23:59:59.999")],
                       run=identity(Types.SQL_TIMESTAMP()))


@pytest.mark.smoke
def test_identity_row_of_many_types_from_python(env, ran_in_fnworker):
    """The path a user takes: Python values through from_collection, collected
    back as Python values."""
    T = Types
    t = T.ROW_NAMED(
        ["s", "b", "bo", "sh", "i", "l", "d", "bd", "dt", "tm", "arr", "strs", "m", "tu", "r"],
        [T.STRING(), T.BYTE(), T.BOOLEAN(), T.SHORT(), T.INT(), T.LONG(), T.DOUBLE(), T.BIG_DEC(),
         T.SQL_DATE(), T.SQL_TIME(), T.PRIMITIVE_ARRAY(T.INT()), T.BASIC_ARRAY(T.STRING()),
         T.MAP(T.STRING(), T.INT()), T.TUPLE([T.INT(), T.STRING()]), T.ROW([T.LONG(), T.STRING()])])
    rows = [
        Row("é\u0000\U0001F600", -128, True, -32768, -2 ** 31, -2 ** 63, float("inf"),
            decimal.Decimal("-1234567890.0987654321"), datetime.date(2024, 2, 29),
            datetime.time(23, 59, 59), [1, 2, 3], ["a", None, ""], {"k": 1},
            (7, "t"), Row(2 ** 63 - 1, "")),
        Row("", 127, False, 32767, 2 ** 31 - 1, 2 ** 63 - 1, -0.0, decimal.Decimal("0"),
            datetime.date(1970, 1, 1), datetime.time(0, 0), [], [], {}, (0, ""), Row(None, None)),
        # PyFlink's own Python conversion (no fnworker involved) fails on a null
        # SQL_TIME, PRIMITIVE_ARRAY, BASIC_ARRAY, MAP, TUPLE or ROW field, so those hold values here;
        # test_identity_keeps_type sends nulls of every nullable type as Java values.
        Row(None, None, None, None, None, None, None, None, None, datetime.time(12, 0), [0], ["x"],
            {"": 0}, (1, ""), Row(1, None)),
    ]
    ds = env.from_collection(rows, type_info=t)
    out = collect(identity(t)(ds))
    assert [plain(r) for r in out] == [plain(r) for r in rows]


def plain(v):
    """Rows as tuples (a collected Row carries field names, a made one not)."""
    if isinstance(v, (Row, tuple)):
        return tuple(plain(x) for x in v)
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v
