"""Java values for the type cases: build the exact Java objects a Flink
serializer takes (a Short, a Character, a java.util.List, a Long[] ...),
run them through a job as a Java source (StreamExecutionEnvironment.fromData
with the Java TypeInformation), collect the results as Java objects and
compare them in Java, with Row's deep equality (arrays, lists and maps by
content, floats by bits, so NaN equals NaN and -0.0 differs from 0.0).

PyFlink's from_collection cannot make several types (CHAR becomes a String,
LIST an Object[], no top-level nulls, no null map values, no byte[] in a
PRIMITIVE_ARRAY), and py4j turns every boxed value it returns into a Python
number; so a boxed value is made in Java (commons-lang3's ArrayUtils.toObject
of a primitive array, in flink-dist) and moved into its slot with
System.arraycopy, never through Python."""

from pyflink.datastream.data_stream import DataStream
from pyflink.java_gateway import get_gateway


class Box(object):
    """A scalar of a Java primitive kind (byte, short, int, long, float,
    double, boolean, char), boxed in Java."""

    def __init__(self, kind, value):
        self.kind, self.value = kind, value


def b(v): return Box("byte", v)            # noqa: E704
def s(v): return Box("short", v)           # noqa: E704
def i(v): return Box("int", v)             # noqa: E704
def l(v): return Box("long", v)            # noqa: E704,E741
def f(v): return Box("float", v)           # noqa: E704
def d(v): return Box("double", v)          # noqa: E704
def c(v): return Box("char", v)            # noqa: E704
def z(v): return Box("boolean", v)         # noqa: E704


def _jvm():
    return get_gateway().jvm


def prim(kind, values):
    """A Java primitive array (int[], byte[] ...) of values."""
    g = get_gateway()
    if kind == "byte":      # py4j passes bytes as a byte[] (and returns a byte[] as bytes)
        return bytes(v & 0xFF for v in values)
    arr = g.new_array(getattr(g.jvm, kind), len(values))
    for n, v in enumerate(values):
        arr[n] = v
    return arr


def objects(values, cls=None):
    """A Java array (Object[] unless cls is given) holding values: Box,
    str, bool, Python float (a Double), None (null) or a Java object."""
    g = get_gateway()
    jvm = g.jvm
    arr = g.new_array(cls or jvm.java.lang.Object, len(values))
    for n, v in enumerate(values):
        if isinstance(v, Box):
            boxed = jvm.org.apache.commons.lang3.ArrayUtils.toObject(prim(v.kind, [v.value]))
            jvm.java.lang.System.arraycopy(boxed, 0, arr, n, 1)
        elif isinstance(v, int) and not isinstance(v, bool):
            raise TypeError("box Python int %r with jvals.b/s/i/l (its Java type is not known)" % v)
        elif v is not None:
            arr[n] = v
    return arr


def boxed(kind, values):
    """A boxed array (Integer[], Long[] ...) of one kind; None is null."""
    return objects([None if v is None else Box(kind, v) for v in values],
                   getattr(_jvm().java.lang, {"int": "Integer", "char": "Character"}.get(
                       kind, kind.capitalize())))


def jlist(values):
    """A java.util.ArrayList of values (as objects() takes them)."""
    return _jvm().java.util.ArrayList(_jvm().java.util.Arrays.asList(objects(values)))


def invoke(target, cls_name, method, param_types, args):
    """target.method(args) through Java reflection, so that boxed arguments
    (a Box) reach it as the Java type they are made as. cls_name None: the
    method of target's own class (for classes of a jar added to the job,
    which Class.forName does not see)."""
    g = get_gateway()
    jvm = g.jvm
    types = g.new_array(jvm.java.lang.Class, len(param_types))
    for n, t in enumerate(param_types):
        types[n] = jvm.java.lang.Integer.TYPE if t == "int" else jvm.java.lang.Class.forName(t)
    cls = target.getClass() if cls_name is None else jvm.java.lang.Class.forName(cls_name)
    m = cls.getMethod(method, types)
    return m.invoke(target, objects(args))


def jmap(pairs):
    """A java.util.HashMap of (key, value) pairs (as objects() takes them)."""
    m = _jvm().java.util.HashMap()
    for k, v in pairs:
        invoke(m, "java.util.Map", "put", ["java.lang.Object", "java.lang.Object"], [k, v])
    return m


def row(*fields):
    """An org.apache.flink.types.Row of fields (positional)."""
    return _jvm().org.apache.flink.types.Row.of(objects(list(fields)))


def tup(*fields):
    """An org.apache.flink.api.java.tuple.TupleN of fields."""
    t = _jvm().org.apache.flink.api.java.tuple.Tuple.newInstance(len(fields))
    for n, v in enumerate(fields):
        invoke(t, "org.apache.flink.api.java.tuple.Tuple", "setField", ["java.lang.Object", "int"],
               [v, i(n)])
    return t


def source(env, values, type_info):
    """A DataStream of the Java values (a list of what objects() takes) with
    the PyFlink type_info, as a Java source: no Python operator."""
    j_type = type_info.get_java_type_info()
    coll = jlist(values)
    return DataStream(env._j_stream_execution_environment.fromData(coll, j_type))


def collect(ds, expected):
    """Run ds's job and collect up to len(expected) + 1 results as a Java list."""
    jvm = _jvm()
    jvm.org.apache.flink.python.util.PythonConfigUtil.configPythonOperator(
        ds._j_data_stream.getExecutionEnvironment())
    ds._apply_chaining_optimization()
    return ds._j_data_stream.executeAndCollect(len(expected) + 1)


def same(expected, actual):
    """(equal, text of expected, text of actual): Row's deep equality of the
    two Java lists (floats by bits, arrays/lists/maps by content)."""
    jvm = _jvm()
    a, b_ = objects([expected]), objects([actual])
    equal = jvm.org.apache.flink.types.Row.of(a).equals(jvm.org.apache.flink.types.Row.of(b_))
    return equal, jvm.java.util.Arrays.deepToString(a), jvm.java.util.Arrays.deepToString(b_)


def assert_roundtrip(env, values, type_info, expected=None, run=None):
    """values through run(ds) (default: nothing) come back exactly as
    expected (default: values), in order."""
    ds = source(env, values, type_info)
    if run is not None:
        ds = run(ds)
    exp = jlist(values if expected is None else expected)
    try:
        got = collect(ds, values if expected is None else expected)
    except Exception as e:  # py4j's error: keep what Flink says, not the stack
        raise AssertionError("the job failed:\n" + causes(e)) from None
    ok, e, a = same(exp, got)
    assert ok, "results differ:\n expected %s\n got      %s" % (e, a)


def causes(exc):
    """The 'Caused by:' lines of a Java exception (what Flink says went
    wrong, root cause last), or str(exc) for a Python one."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("Caused by:")]
    return "\n".join(lines) if lines else text
